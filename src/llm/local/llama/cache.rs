//! The KV cache: keys and values of every layer for up to a whole context, in one allocation.
//!
//! Keys and values are kept as f16, as llama.cpp keeps them by default. Generating after a long
//! prompt is mostly reading the cache, and at half the bytes SmolLM2-135M generates 43–47
//! rather than about 40 tokens/s after a 2,700-token prompt (the `local_llm` bench); the
//! products themselves run in f32. The price is rounding: logits move by up to about 1.5 of
//! their ±30 range against an f32 cache (see the tests). The buffer holds f16 bit patterns (`u16`), so it is allocated zeroed and large
//! (SmolLM2-135M: 23 KB per token, 94 MB for 4,096 positions) without being written: the
//! operating system commits pages only as tokens are written, and resident memory follows the
//! longest prompt the cache has held, not its capacity. Shortening the cache is setting `len`:
//! positions past it are overwritten by the next tokens.

use candle_core::{Device, Result, Tensor};
use half::f16;
use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};

use super::LlamaShape;

/// Cached keys and values for one token sequence.
pub(in crate::llm::local) struct KvCache {
    /// f16 bits, `(layers, 2, kv_heads, capacity, head_dim)`: keys then values per layer.
    data: Vec<u16>,
    kv_heads: usize,
    head_dim: usize,
    len: usize,
    capacity: usize,
    /// The highest `len` ever reached: how many positions' pages are resident.
    high_water: usize,
    bytes_per_token: usize,
}

impl KvCache {
    pub(in crate::llm::local) fn new(shape: &LlamaShape) -> Self {
        let elements = shape.layers * 2 * shape.kv_heads * shape.context * shape.head_dim();
        Self {
            data: vec![0; elements],
            kv_heads: shape.kv_heads,
            head_dim: shape.head_dim(),
            len: 0,
            capacity: shape.context,
            high_water: 0,
            bytes_per_token: shape.kv_bytes_per_token(),
        }
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

    /// Elements of one layer's keys (or values): `kv_heads × capacity × head_dim`.
    fn block(&self) -> usize {
        self.kv_heads * self.capacity * self.head_dim
    }

    /// Layer `index`'s keys and values as f16 bits, each `(kv_heads, capacity, head_dim)`.
    pub(super) fn layer(&self, index: usize) -> Result<(&[u16], &[u16])> {
        let block = self.block();
        let start = index * 2 * block;
        let keys = self.data.get(start..start + block);
        let values = self.data.get(start + block..start + 2 * block);
        match (keys, values) {
            (Some(keys), Some(values)) => Ok((keys, values)),
            _ => candle_core::bail!("the KV cache has no layer {index}"),
        }
    }

    /// Stores layer `index`'s keys and values for `seq` new positions from `pos`; `keys` and
    /// `values` are `(kv_heads, seq, head_dim)`.
    pub(super) fn write(
        &mut self,
        index: usize,
        pos: usize,
        keys: &Tensor,
        values: &Tensor,
    ) -> Result<()> {
        let (kv_heads, seq, head_dim) = keys.dims3()?;
        if kv_heads != self.kv_heads || head_dim != self.head_dim || pos + seq > self.capacity {
            candle_core::bail!("{seq} positions at {pos} do not fit the KV cache");
        }
        let block = self.block();
        for (part, tensor) in [keys, values].into_iter().enumerate() {
            let numbers = tensor.flatten_all()?.to_vec1::<f32>()?;
            for (head, rows) in numbers.chunks_exact(seq * head_dim).enumerate() {
                let start = (index * 2 + part) * block + (head * self.capacity + pos) * head_dim;
                let Some(target) = self.data.get_mut(start..start + rows.len()) else {
                    candle_core::bail!("the KV cache has no layer {index}");
                };
                target
                    .reinterpret_cast_mut::<f16>()
                    .convert_from_f32_slice(rows);
            }
        }
        Ok(())
    }

    /// Layer `index`'s first `total` keys and values widened to f32, each `(kv_heads, total,
    /// head_dim)`: what the matrix products of a prompt of several tokens read.
    pub(super) fn widened(&self, index: usize, total: usize) -> Result<(Tensor, Tensor)> {
        let (keys, values) = self.layer(index)?;
        let widen = |bits: &[u16]| -> Result<Tensor> {
            let mut wide = vec![0.0f32; self.kv_heads * total * self.head_dim];
            let per_head = self.capacity * self.head_dim;
            for (head, target) in wide.chunks_exact_mut(total * self.head_dim).enumerate() {
                let start = head * per_head;
                let Some(source) = bits.get(start..start + target.len()) else {
                    candle_core::bail!("{total} positions exceed the KV cache");
                };
                source
                    .reinterpret_cast::<f16>()
                    .convert_to_f32_slice(target);
            }
            Tensor::from_vec(wide, (self.kv_heads, total, self.head_dim), &Device::Cpu)
        };
        Ok((widen(keys)?, widen(values)?))
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
    fn writes_land_in_their_layer_and_positions_and_read_back_widened() {
        let mut cache = KvCache::new(&shape());
        let new = Tensor::ones((1, 3, 4), candle_core::DType::F32, &Device::Cpu).unwrap();
        cache
            .write(1, 5, &new, &(new.clone() * 2.5).unwrap())
            .unwrap();
        cache.set_len(8);
        let (keys, values) = cache.widened(1, 8).unwrap();
        let row = |t: &Tensor, p: usize| t.get(0).unwrap().get(p).unwrap().to_vec1::<f32>();
        assert_eq!(row(&keys, 4).unwrap(), vec![0.0; 4]);
        assert_eq!(row(&keys, 5).unwrap(), vec![1.0; 4]);
        assert_eq!(row(&values, 7).unwrap(), vec![2.5; 4]);
        let (other, _) = cache.layer(0).unwrap();
        assert!(other.iter().all(|bits| *bits == 0), "layer 0 untouched");
        let (_, raw_values) = cache.layer(1).unwrap();
        assert_eq!(raw_values[5 * 4], f16::from_f32(2.5).to_bits());
        let wrong = Tensor::ones((1, 12, 4), candle_core::DType::F32, &Device::Cpu).unwrap();
        assert!(
            cache.write(0, 5, &wrong, &wrong).is_err(),
            "past the capacity"
        );
        assert!(cache.layer(2).is_err());
    }

    #[test]
    fn truncation_only_shortens_and_memory_follows_the_high_water_mark() {
        let mut cache = KvCache::new(&shape());
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
