//! Our quantized llama forward pass, with a KV cache that is preallocated and truncatable.
//!
//! candle's `quantized_llama` keeps its cache inside the weights and concatenates onto it at
//! every token, so each generated token copies the whole cache (and `repeat_kv` copies it again
//! per query head group): generation slowed from 52 to 18 tokens/s after a 2,700-token prompt.
//! Here the weights are read-only and shared, and each [`KvCache`] is one allocation of the
//! full context, in 8 bits, that new keys and values are written into in place. A generated token
//! attends with our own kernel that reads the cache where it lies ([`decode`]); a prompt of
//! several tokens uses matrix products over an f32 copy of the cached part, where grouped-query
//! attention folds the query heads of a group into the rows of one product instead of copying
//! keys and values per head.
//!
//! The arithmetic otherwise follows candle's model step for step (quantized matrix products,
//! RMS norm, interleaved rotary embeddings, SiLU-gated MLP). Logits agree with it to the
//! rounding of the 8-bit cache, and greedy decoding picks the same tokens (see the tests). The
//! token embedding stays quantized and only the rows a call needs are dequantized; it doubles
//! as the output matrix when the file ties them, so no weight is held twice.
//!
//! Left out: mixture-of-experts layers and rotary scaling, which the supported models lack.

mod cache;
mod decode;
mod matrix;

use candle_core::quantized::QTensor;
use candle_core::quantized::gguf_file::Content;
use candle_core::{DType, Device, Result, Tensor};

pub(super) use cache::KvCache;
use matrix::Matrix;

/// The shape of a llama model, from its GGUF metadata (checked by the loader).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LlamaShape {
    pub(super) layers: usize,
    pub(super) width: usize,
    pub(super) heads: usize,
    pub(super) kv_heads: usize,
    /// Rotary dimensions per head; must equal the head size.
    pub(super) rope_dim: usize,
    pub(super) rope_base: f32,
    pub(super) eps: f32,
    /// Positions the rotary tables and every KV cache cover.
    pub(super) context: usize,
}

impl LlamaShape {
    pub(super) fn head_dim(&self) -> usize {
        self.width / self.heads.max(1)
    }

    /// KV cache bytes per cached token: 8-bit keys and values of every layer with their f32
    /// steps.
    pub(super) fn kv_bytes_per_token(&self) -> usize {
        let row = self.head_dim()
            + interviewer_kernels::kv_steps_per_row(self.head_dim()) * std::mem::size_of::<f32>();
        self.layers * 2 * self.kv_heads * row
    }
}

/// One transformer block's weights.
struct Layer {
    attn_norm: Tensor,
    wq: Matrix,
    wk: Matrix,
    wv: Matrix,
    wo: Matrix,
    ffn_norm: Tensor,
    gate: Matrix,
    up: Matrix,
    down: Matrix,
}

/// The weights of a llama model; immutable once loaded, so one copy serves every cache.
pub(super) struct LlamaModel {
    shape: LlamaShape,
    /// Token embedding rows, still quantized.
    embedding: Matrix,
    layers: Vec<Layer>,
    norm: Tensor,
    output: Matrix,
    /// Rotary tables, `(context, rope_dim / 2)`.
    cos: Tensor,
    sin: Tensor,
}

impl LlamaModel {
    /// Reads the tensors of a llama GGUF whose metadata gave `shape`.
    pub(super) fn from_gguf<R: std::io::Read + std::io::Seek>(
        shape: LlamaShape,
        content: &Content,
        reader: &mut R,
    ) -> Result<Self> {
        Self::from_tensors(shape, |name| content.tensor(reader, name, &Device::Cpu))
    }

    /// Builds the model from tensors taken by their GGUF names (each asked for once; an error
    /// for `output.weight` means the output matrix is the token embedding).
    pub(super) fn from_tensors(
        shape: LlamaShape,
        mut tensor: impl FnMut(&str) -> Result<QTensor>,
    ) -> Result<Self> {
        if shape.rope_dim != shape.head_dim() {
            candle_core::bail!(
                "rotary dimension {} differs from the head size {}",
                shape.rope_dim,
                shape.head_dim()
            );
        }
        let device = Device::Cpu;
        let embedding = Matrix::new(tensor("token_embd.weight")?)?;
        let norm = tensor("output_norm.weight")?.dequantize(&device)?;
        let output = match tensor("output.weight") {
            Ok(weights) => Matrix::new(weights)?,
            Err(_) => embedding.clone(),
        };
        let mut layers = Vec::with_capacity(shape.layers);
        for index in 0..shape.layers {
            let mut part = |name: &str| tensor(&format!("blk.{index}.{name}.weight"));
            let mut matrix = |name: &str| part(name).and_then(Matrix::new);
            layers.push(Layer {
                wq: matrix("attn_q")?,
                wk: matrix("attn_k")?,
                wv: matrix("attn_v")?,
                wo: matrix("attn_output")?,
                gate: matrix("ffn_gate")?,
                up: matrix("ffn_up")?,
                down: matrix("ffn_down")?,
                attn_norm: part("attn_norm")?.dequantize(&device)?,
                ffn_norm: part("ffn_norm")?.dequantize(&device)?,
            });
        }
        let (cos, sin) = rotary_tables(&shape, &device)?;
        Ok(Self {
            shape,
            embedding,
            layers,
            norm,
            output,
            cos,
            sin,
        })
    }

    /// Weight matrices each of our kernels multiplies (the embedding counted once when the
    /// output shares it).
    pub(super) fn kernel_matrices(&self) -> super::KernelMatrices {
        let layers = self.layers.iter().flat_map(|layer| {
            [
                &layer.wq,
                &layer.wk,
                &layer.wv,
                &layer.wo,
                &layer.gate,
                &layer.up,
                &layer.down,
            ]
        });
        let tied = self.embedding.is_shared_with(&self.output);
        let ends: &[&Matrix] = if tied {
            &[&self.embedding]
        } else {
            &[&self.embedding, &self.output]
        };
        let mut counts = super::KernelMatrices::default();
        for matrix in layers.chain(ends.iter().copied()) {
            if matrix.is_q4_1() {
                counts.q4_1 += 1;
            } else if matrix.is_q8_0() {
                counts.q8_0 += 1;
            }
        }
        counts
    }

    /// Rows of the token embedding: the size of the logits.
    #[cfg(test)]
    pub(super) fn vocab(&self) -> usize {
        self.embedding.rows().unwrap_or(0)
    }

    /// An empty cache for this model, able to hold the whole context.
    pub(super) fn new_cache(&self) -> KvCache {
        KvCache::new(&self.shape)
    }

    /// Runs `ids` after the tokens already in `cache`, appends them to it, and returns the
    /// logits after the last one. On error the cache keeps its previous length.
    pub(super) fn forward(&self, ids: &[u32], cache: &mut KvCache) -> Result<Vec<f32>> {
        let seq = ids.len();
        let pos = cache.len();
        if seq == 0 {
            candle_core::bail!("no tokens to run");
        }
        if pos + seq > cache.capacity() {
            candle_core::bail!(
                "{} cached and {seq} new tokens exceed the context of {}",
                pos,
                cache.capacity()
            );
        }
        let device = Device::Cpu;
        let ids = Tensor::new(ids, &device)?;
        let mut x = self.embedding.embedding(&ids)?;
        let cos = self.cos.narrow(0, pos, seq)?;
        let sin = self.sin.narrow(0, pos, seq)?;
        let mask = (seq > 1)
            .then(|| causal_mask(seq, pos, &device))
            .transpose()?;
        let eps = self.shape.eps;
        for (index, layer) in self.layers.iter().enumerate() {
            let h = candle_nn::ops::rms_norm(&x, &layer.attn_norm, eps)?;
            let attention = Attention {
                shape: &self.shape,
                cos: &cos,
                sin: &sin,
                mask: mask.as_ref(),
                pos,
            };
            x = (attention.run(layer, &h, cache, index)? + x)?;
            let h = candle_nn::ops::rms_norm(&x, &layer.ffn_norm, eps)?;
            let gated =
                (candle_nn::ops::silu(&layer.gate.forward(&h)?)? * layer.up.forward(&h)?)?;
            x = (layer.down.forward(&gated)? + x)?;
        }
        cache.set_len(pos + seq);
        let last = x.narrow(0, seq - 1, 1)?;
        let last = candle_nn::ops::rms_norm(&last, &self.norm, eps)?;
        self.output
            .forward(&last)?
            .flatten_all()?
            .to_dtype(DType::F32)?
            .to_vec1::<f32>()
    }
}

/// One layer's self-attention over the cache, for `seq` new rows at position `pos`.
struct Attention<'a> {
    shape: &'a LlamaShape,
    cos: &'a Tensor,
    sin: &'a Tensor,
    /// Additive causal mask `(seq, pos + seq)`; `None` for a single new token.
    mask: Option<&'a Tensor>,
    pos: usize,
}

impl Attention<'_> {
    /// `h` is `(seq, width)`. Writes the new keys and values into layer `index` of the cache
    /// at `pos` and returns `(seq, width)`.
    fn run(
        &self,
        layer: &Layer,
        hidden: &Tensor,
        cache: &mut KvCache,
        index: usize,
    ) -> Result<Tensor> {
        let shape = self.shape;
        let (seq, _) = hidden.dims2()?;
        let head_dim = shape.head_dim();
        let group = shape.heads / shape.kv_heads;
        // (seq, heads × head_dim) → (1, heads, seq, head_dim), the layout rotary wants.
        let split = |t: Tensor, heads: usize| {
            t.reshape((1, seq, heads, head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let queries = split(layer.wq.forward(hidden)?, shape.heads)?;
        let new_keys = split(layer.wk.forward(hidden)?, shape.kv_heads)?;
        let new_values = split(layer.wv.forward(hidden)?, shape.kv_heads)?;
        let queries = candle_nn::rotary_emb::rope_i(&queries, self.cos, self.sin)?;
        let new_keys = candle_nn::rotary_emb::rope_i(&new_keys, self.cos, self.sin)?;
        cache.write(
            index,
            self.pos,
            &new_keys.squeeze(0)?,
            &new_values.squeeze(0)?,
        )?;
        let total = self.pos + seq;
        if seq == 1 {
            let mixed = self.attend_one(&queries, cache, index, total)?;
            return layer.wo.forward(&mixed);
        }
        let (keys, values) = cache.widened(index, total)?;
        // Query head h reads KV head h / group; the heads of a group are adjacent, so they
        // become extra rows of one product per KV head.
        let queries = queries.reshape((shape.kv_heads, group * seq, head_dim))?;
        let scores = (queries.matmul(&keys.t()?)? / (head_dim as f64).sqrt())?;
        let scores = match self.mask {
            Some(mask) => scores
                .reshape((shape.kv_heads, group, seq, total))?
                .broadcast_add(mask)?
                .reshape((shape.kv_heads, group * seq, total))?,
            None => scores,
        };
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let mixed = weights
            .matmul(&values)?
            .reshape((shape.heads, seq, head_dim))?
            .transpose(0, 1)?
            .reshape((seq, shape.heads * head_dim))?;
        layer.wo.forward(&mixed)
    }
}

impl Attention<'_> {
    /// One new token (`queries` `(1, heads, 1, head_dim)`) against the first `total` positions
    /// of layer `index`, read where they lie in the cache; returns `(1, width)`.
    fn attend_one(
        &self,
        queries: &Tensor,
        cache: &KvCache,
        index: usize,
        total: usize,
    ) -> Result<Tensor> {
        let shape = self.shape;
        let queries = queries.flatten_all()?.to_vec1::<f32>()?;
        let (keys, values) = cache.layer(index)?;
        let layer = interviewer_kernels::CachedLayer {
            keys,
            values,
            capacity: cache.capacity(),
            len: total,
        };
        let heads = interviewer_kernels::HeadLayout {
            queries: shape.heads,
            kv: shape.kv_heads,
            size: shape.head_dim(),
        };
        let mixed = decode::attend(&queries, layer, heads);
        Tensor::from_vec(mixed, (1, shape.width), &Device::Cpu)
    }
}

/// `(seq, pos + seq)`: 0 where a new row may attend, −∞ after its own position.
fn causal_mask(seq: usize, pos: usize, device: &Device) -> Result<Tensor> {
    let total = pos + seq;
    let mask: Vec<f32> = (0..seq)
        .flat_map(|row| {
            (0..total).map(move |col| {
                if col > pos + row {
                    f32::NEG_INFINITY
                } else {
                    0.0
                }
            })
        })
        .collect();
    Tensor::from_vec(mask, (seq, total), device)
}

/// Cosines and sines of every position's rotary angles, `(context, rope_dim / 2)`, computed
/// in f32 the way candle's model does, so the two agree bit for bit.
fn rotary_tables(shape: &LlamaShape, device: &Device) -> Result<(Tensor, Tensor)> {
    let dim = shape.rope_dim;
    let inverse: Vec<f32> = (0..dim)
        .step_by(2)
        .map(|i| 1f32 / shape.rope_base.powf(i as f32 / dim as f32))
        .collect();
    let pairs = inverse.len();
    let inverse = Tensor::from_vec(inverse, (1, pairs), device)?;
    let positions = u32::try_from(shape.context)
        .map_err(|_| candle_core::Error::Msg(format!("context {}", shape.context)))?;
    let angles = Tensor::arange(0, positions, device)?
        .to_dtype(DType::F32)?
        .reshape((shape.context, 1))?
        .matmul(&inverse)?;
    Ok((angles.cos()?, angles.sin()?))
}

#[cfg(test)]
mod tests;
