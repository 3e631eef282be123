//! [`MiniLmEmbedder`]: all-MiniLM-L6-v2 run by candle on the CPU.
//!
//! The recipe is sentence-transformers' own for this model: BERT's last hidden state, mean
//! pooled over the attention mask, then L2-normalised. Weights are read into memory rather than
//! memory-mapped, because mapping needs `unsafe` and the crate forbids it; the file is 90 MB.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::resolve::{ResolveConfig, resolve_model_dir};
use super::{BackgroundEmbedder, EmbedError, Embedder};

/// Longest input in tokens, special tokens included. The model was trained with 256 (its
/// `sentence_bert_config.json`); the shipped tokenizer.json says 128, which would silently cut
/// long answers shorter than the model can read.
const MAX_TOKENS: usize = 256;

/// Texts per forward pass. A pass holds activations for every text at the longest one's
/// length (12 heads × length² attention scores each), so one pass over everything a turn
/// embeds at once (the node types' examples, say) raised resident memory by 70 MB for a moment.
const BATCH: usize = 16;

/// Name reported by [`Embedder::name`] and stored next to vectors.
const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// all-MiniLM-L6-v2 sentence embedder (384 dimensions) on the CPU in f32.
///
/// Cheap to share: wrap it in an `Arc` and call [`Embedder::embed`] from blocking threads; the
/// model holds no mutable state.
pub struct MiniLmEmbedder {
    model: BertModel,
    /// Padding is `BatchLongest`: the shipped tokenizer pads every input to 128 tokens, which
    /// makes short labels about 27× slower for identical results.
    tokenizer: Tokenizer,
    /// `hidden_size` from config.json.
    dim: usize,
    /// Where the files were loaded from, for logs and error messages.
    dir: PathBuf,
}

impl fmt::Debug for MiniLmEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MiniLmEmbedder")
            .field("dim", &self.dim)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl MiniLmEmbedder {
    /// Resolves the model through the whole source chain (see
    /// [`resolve_model_dir`]) with settings from the environment, then loads it.
    ///
    /// May download about 90 MB on first use and report progress on stderr.
    pub fn load_default() -> Result<Self, EmbedError> {
        Self::load_with(&ResolveConfig::from_env(None))
    }

    /// Resolves the model with explicit settings (see [`resolve_model_dir`]), then loads it.
    ///
    /// For callers that must not depend on process environment, such as tests choosing their
    /// own cache root.
    pub fn load_with(config: &ResolveConfig) -> Result<Self, EmbedError> {
        let resolved = resolve_model_dir(config)?;
        Self::load(&resolved.dir)
    }

    /// Resolves the model like [`Self::load_default`] (a download, if one is needed, happens
    /// here), reads its config, and loads the weights on a background thread: the returned
    /// embedder is usable at once and its first call waits for the load.
    pub fn spawn_default() -> Result<BackgroundEmbedder, EmbedError> {
        let dir = resolve_model_dir(&ResolveConfig::from_env(None))?.dir;
        let dim = read_config(&dir)?.hidden_size;
        BackgroundEmbedder::spawn(dim, MODEL_NAME, move || {
            Ok(Arc::new(Self::load(&dir)?) as Arc<dyn Embedder>)
        })
    }

    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let config = read_config(dir)?;

        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer = load_tokenizer(&tokenizer_path)?;

        let weights_path = dir.join("model.safetensors");
        // Tensor by tensor, so the weights are never held twice (see `weights`).
        let tensors = super::weights::read_tensors(&weights_path)?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let model = BertModel::load(vb, &config).map_err(|e| load_error(&weights_path, e))?;

        Ok(Self {
            model,
            tokenizer,
            dim: config.hidden_size,
            dir: dir.to_path_buf(),
        })
    }

    /// Directory the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Tokenizes the batch into `(input_ids, attention_mask)`, both `[batch, longest]` u32.
    fn tokenize(&self, texts: &[&str]) -> Result<(Tensor, Tensor), EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        let width = encodings.first().map_or(0, tokenizers::Encoding::len);
        let mut ids = Vec::with_capacity(texts.len() * width);
        let mut mask = Vec::with_capacity(texts.len() * width);
        for encoding in &encodings {
            if encoding.len() != width {
                return Err(EmbedError::Tokenize(format!(
                    "padding produced rows of {} and {width} tokens",
                    encoding.len()
                )));
            }
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let shape = (encodings.len(), width);
        let ids = Tensor::from_vec(ids, shape, &Device::Cpu).map_err(inference_error)?;
        let mask = Tensor::from_vec(mask, shape, &Device::Cpu).map_err(inference_error)?;
        Ok((ids, mask))
    }

    /// Forward pass, mean pooling over real tokens, L2 normalisation: `[batch, dim]` f32.
    fn pooled(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let type_ids = ids.zeros_like()?;
        let hidden = self.model.forward(ids, &type_ids, Some(mask))?;
        // [batch, len, 1]: zero for padding, so padded positions add nothing to the sum.
        let weights = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&weights)?.sum(1)?;
        let counts = weights.sum(1)?.clamp(1e-9_f32, f32::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12_f32, f32::MAX)?;
        mean.broadcast_div(&norms)
    }
}

impl Embedder for MiniLmEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            let (ids, mask) = self.tokenize(batch)?;
            let pooled = self.pooled(&ids, &mask).map_err(inference_error)?;
            vectors.extend(pooled.to_vec2::<f32>().map_err(inference_error)?);
        }
        Ok(vectors)
    }

    fn name(&self) -> &'static str {
        MODEL_NAME
    }
}

/// Reads and parses `config.json` in `dir`.
fn read_config(dir: &Path) -> Result<Config, EmbedError> {
    let path = dir.join("config.json");
    let text = std::fs::read_to_string(&path).map_err(|e| load_error(&path, e))?;
    serde_json::from_str(&text).map_err(|e| load_error(&path, e))
}

/// Reads tokenizer.json and replaces its fixed 128-token padding and truncation with ours.
fn load_tokenizer(path: &Path) -> Result<Tokenizer, EmbedError> {
    let mut tokenizer = Tokenizer::from_file(path).map_err(|e| load_error(path, e))?;
    // Keep the file's pad token and id; only the strategy changes.
    let padding = PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..tokenizer.get_padding().cloned().unwrap_or_default()
    };
    tokenizer.with_padding(Some(padding));
    let truncation = TruncationParams {
        max_length: MAX_TOKENS,
        ..tokenizer.get_truncation().cloned().unwrap_or_default()
    };
    tokenizer
        .with_truncation(Some(truncation))
        .map_err(|e| load_error(path, e))?;
    Ok(tokenizer)
}

fn load_error(file: &Path, reason: impl fmt::Display) -> EmbedError {
    EmbedError::Load {
        file: file.to_path_buf(),
        reason: reason.to_string(),
    }
}

#[allow(clippy::needless_pass_by_value)] // used as `map_err(inference_error)`
fn inference_error(err: candle_core::Error) -> EmbedError {
    EmbedError::Inference(err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_directory_is_a_load_error_naming_config_json() {
        let err = MiniLmEmbedder::load(Path::new("/nonexistent/interviewer-model")).unwrap_err();
        match err {
            EmbedError::Load { file, .. } => assert!(file.ends_with("config.json")),
            other => panic!("unexpected error {other}"),
        }
    }

    #[test]
    fn corrupt_config_is_a_load_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), "{ not json").unwrap();
        let err = MiniLmEmbedder::load(dir.path()).unwrap_err();
        assert!(err.to_string().contains("config.json"), "{err}");
    }
}
