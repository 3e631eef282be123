//! [`MiniLmEmbedder`]: all-MiniLM-L6-v2 on the CPU, run by our encoder (`encoder.rs`).
//!
//! The recipe is sentence-transformers' own for this model: BERT's last hidden state, mean
//! pooled over the text's tokens, then L2-normalised. Weights are read into memory rather than
//! memory-mapped, because mapping needs `unsafe` and the crate forbids it; the file is 90 MB.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_transformers::models::bert::Config;
use tokenizers::{Tokenizer, TruncationParams};

use super::encoder::Encoder;

use super::resolve::{ResolveConfig, resolve_model_dir};
use super::{BackgroundEmbedder, EmbedError, Embedder};

/// Longest input in tokens, special tokens included. The model was trained with 256 (its
/// `sentence_bert_config.json`); the shipped tokenizer.json says 128, which would silently cut
/// long answers shorter than the model can read.
const MAX_TOKENS: usize = 256;

/// Texts per forward pass: a pass holds every token's activations (6 KiB each, at the widest
/// layer), so this bounds what embedding a long list costs at once.
const BATCH: usize = 64;

/// Name reported by [`Embedder::name`] and stored next to vectors.
const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// all-MiniLM-L6-v2 sentence embedder (384 dimensions) on the CPU in f32.
///
/// Cheap to share: wrap it in an `Arc` and call [`Embedder::embed`] from blocking threads; the
/// model holds no mutable state.
pub struct MiniLmEmbedder {
    encoder: Encoder,
    /// Without padding: the encoder packs each text's own tokens (the shipped tokenizer pads
    /// every input to 128 tokens).
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
        let tensors = super::weights::read_raw(&weights_path)?;
        let encoder = Encoder::new(tensors, &config).map_err(|e| load_error(&weights_path, e))?;

        Ok(Self {
            encoder,
            tokenizer,
            dim: config.hidden_size,
            dir: dir.to_path_buf(),
        })
    }

    /// Directory the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Each text's token ids, special tokens included.
    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        Ok(encodings.iter().map(|e| e.get_ids().to_vec()).collect())
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
            let ids = self.tokenize(batch)?;
            let sequences: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
            vectors.extend(
                self.encoder
                    .embed(&sequences)
                    .map_err(EmbedError::Inference)?,
            );
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
    tokenizer.with_padding(None);
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
