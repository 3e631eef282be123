//! [`CachedEmbedder`]: remembers the vectors of texts it has embedded.
//!
//! A session embeds the same texts again and again: slot discovery proposes existing slot
//! names turn after turn ("reuse a name when a concept fits"), and respondents repeat their own
//! phrases. Each repeat costs a model forward pass (milliseconds) without the cache and a hash
//! lookup with it. Misses of one call are embedded together in one batch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{EmbedError, Embedder};

/// Entries kept before the cache starts over; 4,096 vectors of 384 floats are about 6 MiB.
pub const DEFAULT_CAPACITY: usize = 4_096;

/// An embedder with a bounded text → vector cache in front.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    cache: Mutex<HashMap<String, Vec<f32>>>,
    capacity: usize,
}

impl std::fmt::Debug for CachedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedEmbedder")
            .field("inner", &self.inner.name())
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl CachedEmbedder {
    pub fn new(inner: Arc<dyn Embedder>) -> Self {
        Self::with_capacity(inner, DEFAULT_CAPACITY)
    }

    pub fn with_capacity(inner: Arc<dyn Embedder>, capacity: usize) -> Self {
        Self {
            inner,
            cache: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// Texts currently cached.
    pub fn len(&self) -> usize {
        self.cache.lock().map_or(0, |c| c.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Embedder for CachedEmbedder {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let missing: Vec<&str> = {
            let cache = self
                .cache
                .lock()
                .map_err(|_| EmbedError::Inference("embedding cache poisoned".to_owned()))?;
            let mut seen = std::collections::HashSet::new();
            texts
                .iter()
                .copied()
                .filter(|t| !cache.contains_key(*t) && seen.insert(*t))
                .collect()
        };
        let computed = if missing.is_empty() {
            Vec::new()
        } else {
            self.inner.embed(&missing)?
        };
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| EmbedError::Inference("embedding cache poisoned".to_owned()))?;
        if cache.len() + missing.len() > self.capacity {
            // Starting over is simpler than LRU and costs one re-embedding per live text.
            cache.clear();
        }
        let mut fresh: HashMap<&str, Vec<f32>> = missing.iter().copied().zip(computed).collect();
        let mut out = Vec::with_capacity(texts.len());
        for text in texts {
            let vector = match fresh.get(text) {
                Some(v) => v.clone(),
                None => cache.get(*text).cloned().ok_or_else(|| {
                    EmbedError::Inference(format!("no embedding returned for {text:?}"))
                })?,
            };
            out.push(vector);
        }
        for (text, vector) in fresh.drain() {
            cache.insert(text.to_owned(), vector);
        }
        Ok(out)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::embed::HashEmbedder;

    struct Counting {
        inner: HashEmbedder,
        texts: AtomicUsize,
        calls: AtomicUsize,
    }

    impl Embedder for Counting {
        fn dim(&self) -> usize {
            self.inner.dim()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.texts.fetch_add(texts.len(), Ordering::SeqCst);
            self.inner.embed(texts)
        }
        fn name(&self) -> &'static str {
            "counting"
        }
    }

    #[test]
    fn repeats_are_served_from_the_cache_and_misses_batched() {
        let counting = Arc::new(Counting {
            inner: HashEmbedder::default(),
            texts: AtomicUsize::new(0),
            calls: AtomicUsize::new(0),
        });
        let cached = CachedEmbedder::new(counting.clone());
        let direct = HashEmbedder::default();
        let first = cached.embed(&["oat milk", "price", "oat milk"]).unwrap();
        assert_eq!(
            first,
            direct.embed(&["oat milk", "price", "oat milk"]).unwrap()
        );
        assert_eq!(
            counting.texts.load(Ordering::SeqCst),
            2,
            "duplicates embedded once"
        );
        let second = cached.embed(&["price", "froth"]).unwrap();
        assert_eq!(second, direct.embed(&["price", "froth"]).unwrap());
        assert_eq!(counting.texts.load(Ordering::SeqCst), 3);
        assert_eq!(counting.calls.load(Ordering::SeqCst), 2);
        cached.embed(&["price", "oat milk"]).unwrap();
        assert_eq!(
            counting.calls.load(Ordering::SeqCst),
            2,
            "all hits: no model call"
        );
    }

    #[test]
    fn the_cache_stays_bounded() {
        let cached = CachedEmbedder::with_capacity(Arc::new(HashEmbedder::default()), 3);
        for word in ["a", "b", "c", "d", "e"] {
            cached.embed(&[word]).unwrap();
            assert!(cached.len() <= 3);
        }
    }
}
