//! Loading a GGUF: metadata checks, requantizing slow formats, the tokenizer, and the two
//! supported architectures behind one forward call.
//!
//! Llama models run on our own forward pass (`llama`) with a KV cache per role kept by the
//! prefix pool (`prefix`); qwen2 models run on candle's `quantized_qwen2`, whose cache lives
//! inside the weights and is cleared at the start of every call (no prefix reuse).
//!
//! Loaders index and divide by metadata values, so a corrupt or foreign GGUF could panic while
//! loading; [`load`] checks every value and tensor they read first, runs them under
//! `catch_unwind` as a last guard, and finishes with a one-token forward pass so shape
//! mismatches show up at load, as a [`LocalError::Load`].
//!
//! candle 0.11 has SIMD kernels for `Q4_0`, `Q8_0` and the K-quants but not for `Q4_1`, `Q5_0`,
//! `Q5_1` or `Q8_1` (the shipped SmolLM2-135M is `Q4_1`: about 21 tokens/s instead of 55 here).
//! Our llama model multiplies `Q4_1` with a kernel of its own (`interviewer_kernels`), as the
//! file stores it; the other slow formats, and every slow format for qwen2 models (candle's
//! loader), are requantized to `Q8_0` in memory.

use std::collections::HashMap;
use std::io::{BufReader, Cursor, Read, Seek};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use candle_core::quantized::ggml_file::qtensor_from_ggml;
use candle_core::quantized::gguf_file::{self, Content, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_qwen2 as qwen2;

use super::LocalError;
use super::llama::{LlamaModel, LlamaShape};
use super::prefix::{KvPool, Slot};
use super::tokenizer::TextTokenizer;
use crate::llm::Role;

/// Longest context we allow for llama models: the rotary tables and every KV cache are sized
/// to it (a cache's memory is committed only as it fills), and interview prompts stay well
/// below it.
pub(super) const LLAMA_MAX_CONTEXT: usize = 4096;
/// Largest plausible layer count; anything above is a corrupt header, not a model.
const MAX_LAYERS: usize = 512;

/// The supported architectures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Architecture {
    Llama,
    Qwen2,
}

impl Architecture {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Llama => "llama",
            Self::Qwen2 => "qwen2",
        }
    }
}

/// Model weights of either architecture.
pub(super) enum Weights {
    Llama(LlamaModel),
    Qwen2(qwen2::ModelWeights),
}

/// The model state of one call: where its prompt continues from and how to run more tokens.
pub(super) enum Working<'a> {
    /// Our llama model over the role's cache, already truncated to the reusable prefix.
    Llama {
        model: &'a LlamaModel,
        slot: &'a mut Slot,
    },
    /// candle's qwen2 with its cache cleared, and the next position.
    Qwen2 {
        model: &'a mut qwen2::ModelWeights,
        pos: usize,
    },
}

impl Weights {
    /// The state for a call of `role` with `prompt`: a llama call continues from the role's
    /// cache, a qwen2 call from scratch.
    pub(super) fn start<'a>(
        &'a mut self,
        pool: &'a mut KvPool,
        role: Role,
        prompt: &[u32],
    ) -> Result<Working<'a>, LocalError> {
        match self {
            Self::Llama(model) => {
                let model: &LlamaModel = model;
                let slot = pool.acquire(role, prompt, || model.new_cache())?;
                Ok(Working::Llama { model, slot })
            }
            Self::Qwen2(model) => {
                model.clear_kv_cache();
                Ok(Working::Qwen2 { model, pos: 0 })
            }
        }
    }
}

impl Working<'_> {
    /// Tokens already run (the reused prefix, then everything fed since).
    pub(super) fn position(&self) -> usize {
        match self {
            Self::Llama { slot, .. } => slot.cache.len(),
            Self::Qwen2 { pos, .. } => *pos,
        }
    }

    /// Runs `ids` after what the call has run so far and returns the logits after the last
    /// one.
    pub(super) fn forward(&mut self, ids: &[u32]) -> Result<Vec<f32>, LocalError> {
        let inference = |e: candle_core::Error| LocalError::Inference(e.to_string());
        match self {
            Self::Llama { model, slot } => {
                let logits = model.forward(ids, &mut slot.cache).map_err(inference)?;
                slot.tokens.extend_from_slice(ids);
                Ok(logits)
            }
            Self::Qwen2 { model, pos } => {
                let input = Tensor::new(ids, &Device::Cpu)
                    .and_then(|t| t.unsqueeze(0))
                    .map_err(inference)?;
                let logits = model.forward(&input, *pos).map_err(inference)?;
                *pos += ids.len();
                logits
                    .squeeze(0)
                    .and_then(|t| t.to_dtype(candle_core::DType::F32))
                    .and_then(|t| t.to_vec1::<f32>())
                    .map_err(inference)
            }
        }
    }
}

/// What the GGUF says about the model, read before its tensors.
#[derive(Debug, Clone)]
pub(super) struct GgufFacts {
    pub(super) architecture: Architecture,
    /// Longest prompt plus reply, in tokens.
    pub(super) context: usize,
    /// Rows of the token embedding: the size of the logits.
    pub(super) vocab_rows: usize,
    /// The llama model's shape (`None` for qwen2).
    pub(super) llama: Option<LlamaShape>,
    pub(super) chat_template: Option<String>,
    pub(super) add_bos: bool,
    pub(super) bos: Option<u32>,
    pub(super) eos: Option<u32>,
    /// The most common weight format, e.g. `Q4_1`.
    pub(super) quantization: String,
}

/// A loaded model with its tokenizer.
pub(super) struct Loaded {
    pub(super) weights: Weights,
    pub(super) tokenizer: TextTokenizer,
    pub(super) facts: GgufFacts,
    /// Tensors requantized to `Q8_0` at load.
    pub(super) requantized: usize,
    /// Weight matrices our kernels multiply.
    pub(super) our_kernels: super::KernelMatrices,
}

/// Loads the GGUF at `path`; the tokenizer comes from `tokenizer` when given, else from a
/// `tokenizer.json` beside the GGUF, else from the GGUF's metadata.
pub(super) fn load(path: &Path, tokenizer: Option<&Path>) -> Result<Loaded, LocalError> {
    let fail = |reason: String| LocalError::Load {
        file: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut reader = BufReader::new(file);
    let content =
        Content::read(&mut reader).map_err(|e| fail(format!("not a readable GGUF file: {e}")))?;
    let facts = read_facts(path, &content)?;
    let sibling = path.with_file_name("tokenizer.json");
    let tokenizer = match tokenizer {
        Some(file) => TextTokenizer::from_file(file)?,
        None if sibling.is_file() => TextTokenizer::from_file(&sibling)?,
        None => TextTokenizer::from_gguf(&content)?,
    };
    if tokenizer.vocab_size() > facts.vocab_rows {
        return Err(fail(format!(
            "the tokenizer has {} tokens but the model embeds only {}; they do not belong together",
            tokenizer.vocab_size(),
            facts.vocab_rows
        )));
    }
    let ours = facts.llama.is_some();
    let slow = content
        .tensor_infos
        .values()
        .filter(|info| needs_requantizing(info, ours))
        .count();
    let (weights, requantized) = if let (true, Some(shape)) = (slow > 0, facts.llama) {
        // Our model takes the requantized tensors as they are: no second copy in a GGUF.
        let (mut tensors, count) = requantized_tensors(&content, &mut reader, true)
            .map_err(|e| fail(format!("requantizing: {e}")))?;
        let take = |name: &str| {
            tensors
                .remove(name)
                .ok_or_else(|| candle_core::Error::Msg(format!("no tensor {name}")))
        };
        let built = guarded(|| LlamaModel::from_tensors(shape, take).map(Weights::Llama));
        (built.map_err(fail)?, count)
    } else if slow > 0 {
        let (content, mut memory, count) =
            requantize(&content, &mut reader).map_err(|e| fail(format!("requantizing: {e}")))?;
        (build(path, &facts, content, &mut memory)?, count)
    } else {
        (build(path, &facts, content, &mut reader)?, 0)
    };
    let our_kernels = match &weights {
        Weights::Llama(model) => model.kernel_matrices(),
        Weights::Qwen2(_) => super::KernelMatrices::default(),
    };
    let mut loaded = Loaded {
        weights,
        tokenizer,
        facts,
        requantized,
        our_kernels,
    };
    smoke_test(&mut loaded).map_err(|e| fail(format!("test forward pass failed: {e}")))?;
    Ok(loaded)
}

/// Reads the model's tensors, turning a loader panic into an error.
fn build<R: Read + Seek>(
    path: &Path,
    facts: &GgufFacts,
    content: Content,
    reader: &mut R,
) -> Result<Weights, LocalError> {
    let device = Device::Cpu;
    guarded(|| match facts.llama {
        Some(shape) => LlamaModel::from_gguf(shape, &content, reader).map(Weights::Llama),
        None => qwen2::ModelWeights::from_gguf(content, reader, &device).map(Weights::Qwen2),
    })
    .map_err(|reason| LocalError::Load {
        file: path.to_path_buf(),
        reason,
    })
}

/// Runs a model constructor, turning its error or panic into the reason a load failed.
fn guarded(construct: impl FnOnce() -> candle_core::Result<Weights>) -> Result<Weights, String> {
    match catch_unwind(AssertUnwindSafe(construct)) {
        Ok(Ok(weights)) => Ok(weights),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the model loader panicked on this file".to_owned()),
    }
}

/// One token through the model, in a cache of its own that is dropped afterwards.
fn smoke_test(loaded: &mut Loaded) -> Result<(), LocalError> {
    let token = loaded.facts.bos.unwrap_or(0);
    let vocab = loaded.facts.vocab_rows;
    let mut pool = KvPool::new(0);
    let mut working = loaded
        .weights
        .start(&mut pool, Role::Respondent, &[token])?;
    let logits = catch_unwind(AssertUnwindSafe(|| working.forward(&[token])))
        .map_err(|_| LocalError::Inference("the forward pass panicked".to_owned()))??;
    if logits.len() == vocab {
        Ok(())
    } else {
        Err(LocalError::Inference(format!(
            "{} logits for a vocabulary of {vocab}",
            logits.len()
        )))
    }
}

/// Formats without a SIMD kernel in candle 0.11 (nor, for `Q4_1`, in our llama model when
/// `ours` says it is the one reading them), for weight matrices `Q8_0` can hold (rows of a
/// multiple of 32 values).
fn needs_requantizing(info: &gguf_file::TensorInfo, ours: bool) -> bool {
    let slow = match info.ggml_dtype {
        GgmlDType::Q4_1 => !ours,
        GgmlDType::Q5_0 | GgmlDType::Q5_1 | GgmlDType::Q8_1 => true,
        _ => false,
    };
    let dims = info.shape.dims();
    slow && dims.len() == 2 && dims.last().is_some_and(|n| n % 32 == 0)
}

/// Reads every tensor, requantizes the slow ones to `Q8_0`, and writes an in-memory GGUF: what
/// candle's own loaders read (our llama model takes the tensors without it, so the weights are
/// not held twice while loading).
pub(super) fn requantize<R: Read + Seek>(
    content: &Content,
    reader: &mut R,
) -> candle_core::Result<(Content, Cursor<Vec<u8>>, usize)> {
    let (tensors, count) = requantized_tensors(content, reader, false)?;
    let mut tensors: Vec<(&str, QTensor)> = tensors
        .into_iter()
        .filter_map(|(name, tensor)| {
            let (key, _) = content.tensor_infos.get_key_value(&name)?;
            Some((key.as_str(), tensor))
        })
        .collect();
    tensors.sort_by(|a, b| a.0.cmp(b.0));
    // The writer aligns tensor data to 32 bytes; a different alignment in the copied metadata
    // would make the reader look for tensors in the wrong place.
    let metadata: Vec<(&str, &Value)> = content
        .metadata
        .iter()
        .filter(|(key, _)| key.as_str() != "general.alignment")
        .map(|(key, value)| (key.as_str(), value))
        .collect();
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    let mut memory = Cursor::new(Vec::new());
    gguf_file::write(&mut memory, &metadata, &refs)?;
    drop(tensors);
    memory.set_position(0);
    let content = Content::read(&mut memory)?;
    Ok((content, memory, count))
}

/// Every tensor of the file by name, the slow ones (for our llama model when `ours`)
/// requantized to `Q8_0`, and how many were.
fn requantized_tensors<R: Read + Seek>(
    content: &Content,
    reader: &mut R,
    ours: bool,
) -> candle_core::Result<(HashMap<String, QTensor>, usize)> {
    let device = Device::Cpu;
    let mut tensors = HashMap::with_capacity(content.tensor_infos.len());
    let mut count = 0;
    for (name, info) in &content.tensor_infos {
        let tensor = content.tensor(reader, name, &device)?;
        let tensor = if needs_requantizing(info, ours) {
            count += 1;
            to_q8_0(&tensor, &device)?
        } else {
            tensor
        };
        tensors.insert(name.clone(), tensor);
    }
    Ok((tensors, count))
}

/// A weight matrix requantized to `Q8_0` a band of rows at a time, so that its f32 copy stays
/// small: the token embedding alone is 113 MB in f32, which made loading the resident peak.
fn to_q8_0(matrix: &QTensor, device: &Device) -> candle_core::Result<QTensor> {
    const BAND_ROWS: usize = 1024;
    let (rows, columns) = matrix.shape().dims2()?;
    let raw = matrix.data()?;
    let row_bytes = raw.len() / rows.max(1);
    if row_bytes == 0 || row_bytes * rows != raw.len() {
        candle_core::bail!("{} bytes do not hold {rows} rows", raw.len());
    }
    let mut requantized = Vec::with_capacity(rows * columns / 32 * 34);
    for band in raw.chunks(BAND_ROWS * row_bytes) {
        let dims = vec![band.len() / row_bytes, columns];
        let part = qtensor_from_ggml(matrix.dtype(), band, dims, device)?;
        let part = QTensor::quantize(&part.dequantize(device)?, GgmlDType::Q8_0)?;
        requantized.extend_from_slice(&part.data()?);
    }
    qtensor_from_ggml(GgmlDType::Q8_0, &requantized, vec![rows, columns], device)
}

/// Checks the metadata and tensors candle's loader reads, and collects the facts we need.
pub(super) fn read_facts(path: &Path, content: &Content) -> Result<GgufFacts, LocalError> {
    let meta = Meta {
        path: path.to_path_buf(),
        content,
    };
    let arch = meta.string("general.architecture")?;
    let architecture = match arch.as_str() {
        "llama" => Architecture::Llama,
        "qwen2" => Architecture::Qwen2,
        _ => {
            return Err(LocalError::UnsupportedArchitecture {
                file: path.to_path_buf(),
                architecture: arch,
            });
        }
    };
    let p = architecture.name();
    let heads = meta.positive(&format!("{p}.attention.head_count"))?;
    let kv_heads = meta.positive(&format!("{p}.attention.head_count_kv"))?;
    let layers = meta.positive(&format!("{p}.block_count"))?;
    let width = meta.positive(&format!("{p}.embedding_length"))?;
    let eps = meta.float(&format!("{p}.attention.layer_norm_rms_epsilon"))?;
    if heads % kv_heads != 0 || width % heads != 0 || layers > MAX_LAYERS {
        return Err(meta.invalid(format!(
            "inconsistent shape: {heads} heads, {kv_heads} KV heads, width {width}, {layers} layers"
        )));
    }
    let llama = match architecture {
        Architecture::Llama => Some(LlamaShape {
            layers,
            width,
            heads,
            kv_heads,
            rope_dim: 0,
            rope_base: 10_000.0,
            eps,
            context: LLAMA_MAX_CONTEXT,
        }),
        Architecture::Qwen2 => None,
    }
    .map(|shape| llama_shape(&meta, shape))
    .transpose()?;
    let context_len = match &llama {
        Some(shape) => shape.context,
        None => meta.positive("qwen2.context_length")?,
    };
    let vocab_rows = meta.check_tensors(architecture, layers, width)?;
    let token = |key: &str| meta.integer(key).and_then(|n| u32::try_from(n).ok());
    Ok(GgufFacts {
        architecture,
        context: context_len,
        vocab_rows,
        llama,
        chat_template: meta.string("tokenizer.chat_template").ok(),
        add_bos: content
            .metadata
            .get("tokenizer.ggml.add_bos_token")
            .and_then(|v| v.to_bool().ok())
            .unwrap_or(false),
        bos: token("tokenizer.ggml.bos_token_id"),
        eos: token("tokenizer.ggml.eos_token_id"),
        quantization: dominant_format(content),
    })
}

/// `base` (counts from the header) completed with the llama-specific keys: the rotary
/// dimension (the whole head), its frequency base, and the context (capped at
/// [`LLAMA_MAX_CONTEXT`]). Mixture-of-experts files are refused.
fn llama_shape(meta: &Meta<'_>, base: LlamaShape) -> Result<LlamaShape, LocalError> {
    let head_dim = base.head_dim();
    let rope_dim = meta.positive("llama.rope.dimension_count")?;
    if rope_dim != head_dim {
        return Err(meta.invalid(format!(
            "rope dimension {rope_dim} differs from the head size {head_dim}; partial rotary \
             embeddings are not supported"
        )));
    }
    let experts = meta.integer("llama.expert_count").unwrap_or(0);
    if experts > 1 {
        return Err(meta.invalid(format!(
            "a mixture of {experts} experts; only dense llama models are supported"
        )));
    }
    let rope_base = match meta.content.metadata.get("llama.rope.freq_base") {
        Some(value) => value
            .to_f32()
            .ok()
            .filter(|b| b.is_finite() && *b > 1.0)
            .ok_or_else(|| meta.invalid(format!("llama.rope.freq_base is {value:?}")))?,
        None => base.rope_base,
    };
    let declared = meta.integer("llama.context_length").unwrap_or(u64::MAX);
    let context = usize::try_from(declared).map_or(LLAMA_MAX_CONTEXT, |c| c.min(LLAMA_MAX_CONTEXT));
    Ok(LlamaShape {
        rope_dim,
        rope_base,
        context: context.max(1),
        ..base
    })
}

/// The weight format of most 2-D tensors.
fn dominant_format(content: &Content) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for info in content.tensor_infos.values() {
        if info.shape.dims().len() != 2 {
            continue;
        }
        let name = format!("{:?}", info.ggml_dtype);
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    counts
        .into_iter()
        .max_by_key(|(_, c)| *c)
        .map_or_else(|| "unknown".to_owned(), |(name, _)| name)
}

/// Typed access to GGUF metadata with errors naming the file and key.
struct Meta<'a> {
    path: PathBuf,
    content: &'a Content,
}

impl Meta<'_> {
    fn invalid(&self, reason: String) -> LocalError {
        LocalError::Load {
            file: self.path.clone(),
            reason,
        }
    }

    fn get(&self, key: &str) -> Result<&Value, LocalError> {
        self.content
            .metadata
            .get(key)
            .ok_or_else(|| self.invalid(format!("metadata key '{key}' is missing")))
    }

    fn string(&self, key: &str) -> Result<String, LocalError> {
        self.get(key)?
            .to_string()
            .cloned()
            .map_err(|_| self.invalid(format!("metadata key '{key}' is not a string")))
    }

    fn integer(&self, key: &str) -> Option<u64> {
        match self.content.metadata.get(key)? {
            Value::U8(n) => Some(u64::from(*n)),
            Value::U16(n) => Some(u64::from(*n)),
            Value::U32(n) => Some(u64::from(*n)),
            Value::U64(n) => Some(*n),
            Value::I8(n) => u64::try_from(*n).ok(),
            Value::I16(n) => u64::try_from(*n).ok(),
            Value::I32(n) => u64::try_from(*n).ok(),
            Value::I64(n) => u64::try_from(*n).ok(),
            _ => None,
        }
    }

    /// A positive `u32` value (candle reads these keys as `u32`).
    fn positive(&self, key: &str) -> Result<usize, LocalError> {
        match self.get(key)? {
            Value::U32(n) if *n > 0 => Ok(*n as usize),
            other => Err(self.invalid(format!(
                "metadata key '{key}' must be a positive u32, got {other:?}"
            ))),
        }
    }

    fn float(&self, key: &str) -> Result<f32, LocalError> {
        self.get(key)?
            .to_f32()
            .map_err(|_| self.invalid(format!("metadata key '{key}' is not an f32")))
    }

    /// Every tensor the loader reads exists; returns the vocabulary size (embedding rows).
    fn check_tensors(
        &self,
        architecture: Architecture,
        layers: usize,
        width: usize,
    ) -> Result<usize, LocalError> {
        let infos = &self.content.tensor_infos;
        let embedding = infos
            .get("token_embd.weight")
            .ok_or_else(|| self.invalid("tensor 'token_embd.weight' is missing".to_owned()))?;
        let vocab = match embedding.shape.dims() {
            [rows, cols] if *cols == width && *rows > 0 => *rows,
            dims => {
                return Err(self.invalid(format!(
                    "token_embd.weight has shape {dims:?}, expected [vocabulary, {width}]"
                )));
            }
        };
        let mut names = vec!["output_norm.weight".to_owned()];
        for layer in 0..layers {
            let mut parts = vec![
                "attn_q.weight",
                "attn_k.weight",
                "attn_v.weight",
                "attn_output.weight",
                "attn_norm.weight",
                "ffn_norm.weight",
            ];
            if architecture == Architecture::Qwen2 {
                parts.extend(["attn_q.bias", "attn_k.bias", "attn_v.bias"]);
            }
            parts.extend(["ffn_gate.weight", "ffn_down.weight", "ffn_up.weight"]);
            names.extend(parts.iter().map(|part| format!("blk.{layer}.{part}")));
        }
        match names.iter().find(|name| !infos.contains_key(name.as_str())) {
            Some(missing) => Err(self.invalid(format!("tensor '{missing}' is missing"))),
            None => Ok(vocab),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requantizing_in_bands_gives_the_bytes_of_requantizing_at_once() {
        let device = Device::Cpu;
        // 2,500 rows: two whole bands and a part band.
        let values: Vec<f32> = (0..2_500 * 64)
            .map(|i| ((i * 7_919) % 1_000) as f32 / 250.0 - 2.0)
            .collect();
        let matrix = Tensor::from_vec(values, (2_500, 64), &device).unwrap();
        let q4 = QTensor::quantize(&matrix, GgmlDType::Q4_1).unwrap();
        let banded = to_q8_0(&q4, &device).unwrap();
        let whole = QTensor::quantize(&q4.dequantize(&device).unwrap(), GgmlDType::Q8_0).unwrap();
        assert_eq!(banded.dtype(), GgmlDType::Q8_0);
        assert_eq!(banded.shape(), whole.shape());
        assert_eq!(banded.data().unwrap(), whole.data().unwrap());
    }
}
