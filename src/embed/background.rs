//! [`BackgroundEmbedder`]: an embedder whose model loads on its own thread.
//!
//! Reading and converting MiniLM's 90 MB of weights takes about 0.3 s, and nothing needs a
//! vector before the respondent has answered the opening question. Starting the load on a
//! thread of its own lets the first question reach the screen while the weights are read; the
//! first [`Embedder::embed`] waits for the load if it is still running. A load that fails is
//! reported by every call, so a turn that needs embeddings fails with the real reason.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;

use super::{EmbedError, Embedder};

type Loaded = Result<Arc<dyn Embedder>, EmbedError>;

/// An embedder being loaded on a background thread; usable at once, ready when loaded.
pub struct BackgroundEmbedder {
    dim: usize,
    name: &'static str,
    loading: Mutex<Option<JoinHandle<Loaded>>>,
    loaded: OnceLock<Loaded>,
}

impl std::fmt::Debug for BackgroundEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundEmbedder")
            .field("name", &self.name)
            .field("dim", &self.dim)
            .field("ready", &self.is_ready())
            .finish_non_exhaustive()
    }
}

impl BackgroundEmbedder {
    /// Starts `load` on a new thread. `dim` and `name` describe what it will return (they are
    /// known before the weights are: `dim` comes from the model's config).
    pub fn spawn<F>(dim: usize, name: &'static str, load: F) -> Result<Self, EmbedError>
    where
        F: FnOnce() -> Loaded + Send + 'static,
    {
        let handle = std::thread::Builder::new()
            .name("embedder-load".to_owned())
            .spawn(load)
            .map_err(|e| EmbedError::Inference(format!("cannot start the model loader: {e}")))?;
        Ok(Self {
            dim,
            name,
            loading: Mutex::new(Some(handle)),
            loaded: OnceLock::new(),
        })
    }

    /// Whether the load has finished (successfully or not); never waits.
    pub fn is_ready(&self) -> bool {
        self.loaded.get().is_some()
            || self
                .loading
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .is_none_or(JoinHandle::is_finished)
    }

    /// The loaded model, waiting for the loader thread the first time.
    pub fn wait(&self) -> Result<&Arc<dyn Embedder>, EmbedError> {
        let loaded = self.loaded.get_or_init(|| {
            let handle = self
                .loading
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            match handle.map(JoinHandle::join) {
                Some(Ok(result)) => result,
                Some(Err(_)) => Err(EmbedError::Inference(format!(
                    "the {} loader thread panicked",
                    self.name
                ))),
                None => Err(EmbedError::Inference(format!(
                    "the {} loader was already collected",
                    self.name
                ))),
            }
        });
        loaded.as_ref().map_err(Clone::clone)
    }
}

impl Embedder for BackgroundEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.wait()?.embed(texts)
    }

    fn name(&self) -> &str {
        self.name
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::embed::HashEmbedder;

    #[test]
    fn embeds_like_the_model_it_loads_once_the_load_is_released() {
        let (release, gate) = mpsc::channel::<()>();
        let embedder = BackgroundEmbedder::spawn(64, "hash", move || {
            gate.recv_timeout(Duration::from_secs(10))
                .map_err(|e| EmbedError::Inference(e.to_string()))?;
            Ok(Arc::new(HashEmbedder::new(64)) as Arc<dyn Embedder>)
        })
        .unwrap();
        assert_eq!(embedder.dim(), 64);
        assert_eq!(embedder.name(), "hash");
        assert!(!embedder.is_ready(), "the load waits for the gate");
        assert!(
            embedder.embed(&[]).unwrap().is_empty(),
            "nothing to embed needs no model"
        );
        release.send(()).unwrap();
        let texts = ["oat milk", "creamy froth"];
        assert_eq!(
            embedder.embed(&texts).unwrap(),
            HashEmbedder::new(64).embed(&texts).unwrap()
        );
        assert!(embedder.is_ready());
    }

    #[test]
    fn a_failed_load_is_reported_by_every_call() {
        let embedder = BackgroundEmbedder::spawn(384, "all-MiniLM-L6-v2", || {
            Err(EmbedError::Load {
                file: PathBuf::from("/models/model.safetensors"),
                reason: "truncated".to_owned(),
            })
        })
        .unwrap();
        for _ in 0..2 {
            let err = embedder.embed(&["price"]).unwrap_err();
            assert_eq!(
                err.to_string(),
                "cannot load /models/model.safetensors: truncated"
            );
        }
    }

    #[test]
    fn a_panicking_loader_is_an_error_not_a_panic() {
        #[allow(clippy::panic)]
        let embedder =
            BackgroundEmbedder::spawn(8, "broken", || panic!("weights on fire")).unwrap();
        let err = embedder.embed(&["price"]).unwrap_err();
        assert!(
            err.to_string().contains("broken loader thread panicked"),
            "{err}"
        );
    }
}
