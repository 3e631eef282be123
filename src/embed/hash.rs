//! [`HashEmbedder`]: a model-free, deterministic [`Embedder`] for tests and offline demos.
//!
//! It captures spelling, not meaning: "car" and "automobile" are unrelated to it. Use it where
//! a test needs stable vectors (identical labels → similarity 1.0, unrelated labels → near 0)
//! without the 90 MB model.

use super::{EmbedError, Embedder, normalize};

/// Dimension of [`HashEmbedder::default`], equal to all-MiniLM-L6-v2's so the double can stand
/// in wherever vectors of the real model's size are expected.
const DEFAULT_DIM: usize = 384;

/// Test double: bag of character trigrams hashed into `dim` signed buckets, L2-normalised.
///
/// Text is lower-cased and padded with one space on each side, so word starts and ends count.
/// Each trigram adds +1 or −1 (chosen by a second hash bit) to one bucket; the signs make
/// collisions cancel on average, which keeps unrelated texts near similarity 0. The hash is
/// FNV-1a, fixed across Rust versions and platforms, so vectors are reproducible. Empty or
/// blank text maps to the first basis vector, so every output still has unit norm.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    /// Always at least 1, so there is a bucket for every trigram.
    dim: usize,
}

impl HashEmbedder {
    /// A hash embedder producing vectors of length `dim` (raised to 1 if zero).
    pub fn new(dim: usize) -> Self {
        Self { dim: dim.max(1) }
    }

    /// Embeds one text; the work behind [`Embedder::embed`].
    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0_f32; self.dim];
        let padded: Vec<char> = format!(" {} ", text.trim().to_lowercase())
            .chars()
            .collect();
        let buckets = u64::try_from(self.dim).unwrap_or(u64::MAX);
        for trigram in padded.windows(3) {
            let hash = fnv1a(trigram);
            let bucket = usize::try_from(hash % buckets).unwrap_or(0);
            let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
            if let Some(slot) = vector.get_mut(bucket) {
                *slot += sign;
            }
        }
        if vector.iter().all(|x| *x == 0.0) {
            // Blank text, or trigrams that cancelled out exactly: keep the unit-norm promise.
            if let Some(first) = vector.first_mut() {
                *first = 1.0;
            }
        }
        normalize(&mut vector);
        vector
    }
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self::new(DEFAULT_DIM)
    }
}

impl Embedder for HashEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|text| self.embed_one(text)).collect())
    }

    fn name(&self) -> &'static str {
        "hash-trigram"
    }
}

/// 64-bit FNV-1a over the UTF-8 bytes of `chars`.
fn fnv1a(chars: &[char]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash = OFFSET;
    let mut buf = [0_u8; 4];
    for c in chars {
        for byte in c.encode_utf8(&mut buf).bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(v: &[f32]) -> f32 {
        v.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    /// Cosine similarity of two outputs: they have unit norm (tested below), so it is their
    /// dot product.
    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn same_text_gives_same_vector_across_instances() {
        let a = HashEmbedder::default().embed(&["Fast car"]).unwrap();
        let b = HashEmbedder::new(384).embed(&["Fast car"]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a[0].len(), 384);
    }

    #[test]
    fn outputs_have_unit_norm_even_for_blank_text() {
        let embedder = HashEmbedder::new(64);
        for v in embedder.embed(&["oat milk", "", "   ", "é🚗"]).unwrap() {
            assert_eq!(v.len(), 64);
            assert!((norm(&v) - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn identical_labels_match_and_unrelated_ones_do_not() {
        let embedder = HashEmbedder::default();
        let v = embedder
            .embed(&["price sensitivity", "Price Sensitivity", "oat milk"])
            .unwrap();
        assert!((cosine(&v[0], &v[1]) - 1.0).abs() < 1e-5);
        assert!(cosine(&v[0], &v[2]).abs() < 0.3);
    }

    #[test]
    fn shared_words_give_partial_similarity() {
        let embedder = HashEmbedder::default();
        let v = embedder.embed(&["fast car", "fast cars"]).unwrap();
        let s = cosine(&v[0], &v[1]);
        assert!(s > 0.5 && s < 1.0, "similarity {s}");
    }

    #[test]
    fn empty_batch_is_empty_and_zero_dim_is_raised() {
        assert!(HashEmbedder::default().embed(&[]).unwrap().is_empty());
        assert_eq!(HashEmbedder::new(0).dim(), 1);
    }
}
