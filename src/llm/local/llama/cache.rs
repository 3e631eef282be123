//! The KV cache: keys and values of every layer for up to a whole context, in one allocation.
//!
//! The buffer is zero-initialised and large (SmolLM2-135M: 46 KB per token, 189 MB for 4,096
//! positions), so the allocator maps it fresh and the operating system commits pages only as
//! tokens are written: resident memory follows the longest prompt the cache has held, not its
//! capacity. New keys and values are copied into place (`slice_set`); attention reads the first
//! `len` positions through a view. Shortening the cache is setting `len`: positions past it are
//! overwritten by the next tokens.

use candle_core::{DType, Device, IndexOp, Result, Tensor};

use super::LlamaShape;

/// Cached keys and values for one token sequence.
pub(in crate::llm::local) struct KvCache {
    /// `(layers, 2, kv_heads, capacity, head_dim)`: keys then values per layer.
    data: Tensor,
    len: usize,
    capacity: usize,
    /// The highest `len` ever reached: how many positions' pages are resident.
    high_water: usize,
    bytes_per_token: usize,
}

impl KvCache {
    pub(in crate::llm::local) fn new(shape: &LlamaShape) -> Result<Self> {
        let data = Tensor::zeros(
            (
                shape.layers,
                2,
                shape.kv_heads,
                shape.context,
                shape.head_dim(),
            ),
            DType::F32,
            &Device::Cpu,
        )?;
        Ok(Self {
            data,
            len: 0,
            capacity: shape.context,
            high_water: 0,
            bytes_per_token: shape.kv_bytes_per_token(),
        })
    }

    /// Tokens cached.
    pub(in crate::llm::local) fn len(&self) -> usize {
        self.len
    }

    pub(in crate::llm::local) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Keeps only the first `len` tokens (no-op when the cache holds fewer).
    pub(in crate::llm::local) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Memory the cache's written positions occupy.
    pub(in crate::llm::local) fn resident_bytes(&self) -> usize {
        self.high_water.saturating_mul(self.bytes_per_token)
    }

    /// Views of layer `index`'s keys and values, each `(kv_heads, capacity, head_dim)`; they
    /// share the cache's storage, so writing through them fills the cache.
    pub(super) fn layer(&self, index: usize) -> Result<(Tensor, Tensor)> {
        Ok((self.data.i((index, 0))?, self.data.i((index, 1))?))
    }

    /// Records that positions up to `len` now hold keys and values.
    pub(in crate::llm::local) fn set_len(&mut self, len: usize) {
        self.len = len.min(self.capacity);
        self.high_water = self.high_water.max(self.len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> LlamaShape {
        LlamaShape {
            layers: 2,
            width: 8,
            heads: 2,
            kv_heads: 1,
            rope_dim: 4,
            rope_base: 10_000.0,
            eps: 1e-5,
            context: 16,
        }
    }

    #[test]
    fn writes_through_layer_views_land_in_the_cache() {
        let mut cache = KvCache::new(&shape()).unwrap();
        let (keys, values) = cache.layer(1).unwrap();
        assert_eq!(keys.dims(), &[1, 16, 4]);
        let new = Tensor::ones((1, 3, 4), DType::F32, &Device::Cpu).unwrap();
        keys.slice_set(&new, 1, 5).unwrap();
        values.slice_set(&(new * 2.0).unwrap(), 1, 5).unwrap();
        cache.set_len(8);
        let (keys, values) = cache.layer(1).unwrap();
        let row = |t: &Tensor, p: usize| t.i((0, p)).unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(row(&keys, 4), vec![0.0; 4]);
        assert_eq!(row(&keys, 5), vec![1.0; 4]);
        assert_eq!(row(&values, 7), vec![2.0; 4]);
        let (other, _) = cache.layer(0).unwrap();
        assert_eq!(row(&other, 5), vec![0.0; 4], "layer 0 untouched");
    }

    #[test]
    fn truncation_only_shortens_and_memory_follows_the_high_water_mark() {
        let mut cache = KvCache::new(&shape()).unwrap();
        cache.set_len(10);
        cache.truncate(12);
        assert_eq!(cache.len(), 10);
        cache.truncate(4);
        assert_eq!(cache.len(), 4);
        assert_eq!(cache.resident_bytes(), 10 * shape().kv_bytes_per_token());
        cache.set_len(99);
        assert_eq!(cache.len(), 16, "capped at the capacity");
    }
}
