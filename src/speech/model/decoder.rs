//! Whisper's text decoder with a self-attention cache, for a batch of hypotheses.
//!
//! candle's decoder re-reads every token of the sequence at each step (it caches only the
//! cross-attention keys and values), so a step costs as much as the whole sequence so far,
//! and a prompt or a beam multiplies it. This one keeps each layer's self-attention keys and
//! values: a step feeds only the new token of each hypothesis. The arithmetic is Whisper's
//! (pre-norm residual blocks, keys and queries each scaled by `head_dim^-¼`, GELU MLP) over the
//! same tensors candle's model loads, so the two give the same logits.
//!
//! Cross-attention keys and values are computed once per window ([`Decoder::cross`]) with a
//! batch of one; the hypotheses of a batch are folded into the query length there, so beams
//! share them without copies.

use candle_core::{D, Result, Tensor};
use candle_nn::{LayerNorm, Module, VarBuilder};
use interviewer_kernels::{DenseLayer, DenseWeights, ShapeError, dense};

/// A linear layer laid out once for [`dense`]: f16 weights (exact, since the model file stores
/// f16) multiplied in f32. candle's matrix product packs the weights again on every call,
/// which for the few rows of a decoding step costs more than the arithmetic: on tiny.en a step
/// took about 10 ms in the layers and 12 ms in the vocabulary projection.
struct Packed(DenseLayer);

impl Packed {
    /// The `outputs × inputs` weight under `vb`, and its bias (zeros where the layer has none).
    fn load(inputs: usize, outputs: usize, bias: bool, vb: &VarBuilder) -> Result<Self> {
        let weights = with_values(&vb.get((outputs, inputs), "weight")?, |values| {
            DenseWeights::from_f32(values, outputs, inputs).map_err(kernel)
        })?;
        let bias = if bias {
            vb.get(outputs, "bias")?.to_vec1()?
        } else {
            vec![0.0; outputs]
        };
        DenseLayer::new(weights, bias).map(Self).map_err(kernel)
    }
}

impl Module for Packed {
    /// `(…, inputs)` → `(…, outputs)`.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut dims = x.dims().to_vec();
        let inputs: Vec<f32> = x.flatten_all()?.to_vec1()?;
        let outputs = self.0.outputs();
        let mut out = vec![0.0; inputs.len() / self.0.inputs().max(1) * outputs];
        self.0.forward(&inputs, &mut out).map_err(kernel)?;
        if let Some(last) = dims.last_mut() {
            *last = outputs;
        }
        Tensor::from_vec(out, dims, x.device())
    }
}

/// Calls `f` with the values of an f32 tensor held on the CPU, without copying them (the
/// vocabulary alone is 80 MB of f32 for tiny.en, laid out into 40 MB while loading).
fn with_values<R>(tensor: &Tensor, f: impl FnOnce(&[f32]) -> Result<R>) -> Result<R> {
    let (storage, layout) = tensor.storage_and_layout();
    let values = match (&*storage, layout.contiguous_offsets()) {
        (candle_core::Storage::Cpu(cpu), Some((start, end))) => {
            cpu.as_slice::<f32>()?.get(start..end)
        }
        _ => None,
    };
    if let Some(values) = values {
        f(values)
    } else {
        drop(storage);
        f(&tensor.flatten_all()?.to_vec1()?)
    }
}

#[allow(clippy::needless_pass_by_value)] // the shape of `map_err`'s argument
fn kernel(error: ShapeError) -> candle_core::Error {
    candle_core::Error::Msg(error.to_string())
}

/// One attention's projections.
struct Attention {
    query: Packed,
    key: Packed,
    value: Packed,
    out: Packed,
}

impl Attention {
    fn load(width: usize, vb: &VarBuilder) -> Result<Self> {
        let linear = |name: &str, bias: bool| Packed::load(width, width, bias, &vb.pp(name));
        Ok(Self {
            query: linear("q_proj", true)?,
            key: linear("k_proj", false)?,
            value: linear("v_proj", true)?,
            out: linear("out_proj", true)?,
        })
    }
}

struct Block {
    attention: Attention,
    attention_norm: LayerNorm,
    cross: Attention,
    cross_norm: LayerNorm,
    fc1: Packed,
    fc2: Packed,
    mlp_norm: LayerNorm,
}

fn layer_norm(width: usize, vb: &VarBuilder) -> Result<LayerNorm> {
    Ok(LayerNorm::new(
        vb.get(width, "weight")?,
        vb.get(width, "bias")?,
        1e-5,
    ))
}

impl Block {
    fn load(width: usize, vb: &VarBuilder) -> Result<Self> {
        Ok(Self {
            attention: Attention::load(width, &vb.pp("self_attn"))?,
            attention_norm: layer_norm(width, &vb.pp("self_attn_layer_norm"))?,
            cross: Attention::load(width, &vb.pp("encoder_attn"))?,
            cross_norm: layer_norm(width, &vb.pp("encoder_attn_layer_norm"))?,
            fc1: Packed::load(width, width * 4, true, &vb.pp("fc1"))?,
            fc2: Packed::load(width * 4, width, true, &vb.pp("fc2"))?,
            mlp_norm: layer_norm(width, &vb.pp("final_layer_norm"))?,
        })
    }
}

/// The token embedding, laid out for [`dense`] in one block of rows per core: projecting a
/// step's hidden states onto the vocabulary reads all of it (40 MB of f16 for tiny.en), which
/// one core does at about 5 GB/s on the machines this is measured on, so each core reads its
/// own block (51 864 × 384 with five hypotheses: 7.6 ms on one core, 2.9 ms on two).
struct Vocabulary {
    blocks: Vec<DenseWeights>,
    /// Rows per block (the last may have fewer).
    block_rows: usize,
    /// Zeros for the largest block: the projection has no bias.
    no_bias: Vec<f32>,
    size: usize,
    width: usize,
}

impl Vocabulary {
    /// From `size × width` values, row by row.
    fn new(values: &[f32], width: usize) -> Result<Self> {
        if width == 0 || values.is_empty() || !values.len().is_multiple_of(width) {
            return Err(candle_core::Error::Msg(format!(
                "the token embedding's {} values are not rows of width {width}",
                values.len()
            )));
        }
        let size = values.len() / width;
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let block_rows = size.div_ceil(cores.clamp(1, 8)).max(1);
        let blocks = values
            .chunks(block_rows * width)
            .map(|chunk| DenseWeights::from_f32(chunk, chunk.len() / width, width))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(kernel)?;
        Ok(Self {
            blocks,
            block_rows,
            no_bias: vec![0.0; block_rows],
            size,
            width,
        })
    }

    /// Token `id`'s vector into `out` (`width` values).
    fn row(&self, id: u32, out: &mut [f32]) -> Result<()> {
        let index = usize::try_from(id).unwrap_or(usize::MAX);
        let found = self
            .blocks
            .get(index / self.block_rows)
            .is_some_and(|block| block.row(index % self.block_rows, out));
        if found {
            Ok(())
        } else {
            Err(candle_core::Error::Msg(format!(
                "token {id} is not in the vocabulary of {}",
                self.size
            )))
        }
    }

    /// The logits of each row of `x` (`width` values a row): the blocks in parallel, then one
    /// vector over the whole vocabulary per row.
    fn project(&self, x: &[f32]) -> Result<Vec<Vec<f32>>> {
        use rayon::prelude::*;
        let rows = x.len() / self.width.max(1);
        let parts = self
            .blocks
            .par_iter()
            .map(|block| {
                let mut out = vec![0.0; rows * block.rows()];
                let bias = self.no_bias.get(..block.rows()).unwrap_or_default();
                dense(x, block, bias, &mut out).map_err(kernel)?;
                Ok(out)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((0..rows)
            .map(|row| {
                let mut logits = Vec::with_capacity(self.size);
                for (part, block) in parts.iter().zip(&self.blocks) {
                    let n = block.rows();
                    logits.extend_from_slice(part.get(row * n..(row + 1) * n).unwrap_or_default());
                }
                logits
            })
            .collect())
    }
}

/// The decoder's weights.
pub(super) struct Decoder {
    /// The token embedding (vocabulary × width), which is also the output projection.
    token_embedding: Vocabulary,
    positions: Tensor,
    blocks: Vec<Block>,
    norm: LayerNorm,
    heads: usize,
}

/// Cross-attention keys and values of one window, per layer: `(1, heads, frames, head_dim)`,
/// keys already scaled.
pub(super) struct Cross(Vec<(Tensor, Tensor)>);

/// The self-attention cache of a batch of hypotheses: per layer, keys and values
/// `(batch, heads, tokens, head_dim)`, keys already scaled.
#[derive(Clone, Default)]
pub(super) struct Cache {
    layers: Vec<(Tensor, Tensor)>,
    len: usize,
}

impl Cache {
    /// The cache of the hypotheses at `rows` of this batch, in that order (a row may repeat).
    pub(super) fn select(&self, rows: &[u32]) -> Result<Self> {
        let Some((first, _)) = self.layers.first() else {
            return Ok(self.clone());
        };
        let index = Tensor::new(rows, first.device())?;
        let layers = self
            .layers
            .iter()
            .map(|(k, v)| Ok((k.index_select(&index, 0)?, v.index_select(&index, 0)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            layers,
            len: self.len,
        })
    }
}

impl Decoder {
    /// The decoder of a Whisper model whose tensors `vb` holds under `model.decoder`.
    pub(super) fn load(
        vb: &VarBuilder,
        config: &candle_transformers::models::whisper::Config,
    ) -> Result<Self> {
        let vb = vb.pp("model.decoder");
        let width = config.d_model;
        let blocks = (0..config.decoder_layers)
            .map(|i| Block::load(width, &vb.pp(format!("layers.{i}"))))
            .collect::<Result<Vec<_>>>()?;
        let embedding = vb.get((config.vocab_size, width), "embed_tokens.weight")?;
        Ok(Self {
            token_embedding: with_values(&embedding, |values| Vocabulary::new(values, width))?,
            positions: vb.get(
                (config.max_target_positions, width),
                "embed_positions.weight",
            )?,
            blocks,
            norm: layer_norm(width, &vb.pp("layer_norm"))?,
            heads: config.decoder_attention_heads,
        })
    }

    /// The logits over the vocabulary of each row of `hidden` (`rows × width`).
    pub(super) fn project(&self, hidden: &Tensor) -> Result<Vec<Vec<f32>>> {
        self.token_embedding
            .project(&hidden.flatten_all()?.to_vec1()?)
    }

    /// The embeddings of `tokens` (`batch × new`): `(batch, new, width)`.
    fn embed(&self, tokens: &Tensor) -> Result<Tensor> {
        let (batch, new) = tokens.dims2()?;
        let ids: Vec<u32> = tokens.flatten_all()?.to_vec1()?;
        let width = self.token_embedding.width;
        let mut embedded = vec![0.0; ids.len() * width];
        for (id, row) in ids.iter().zip(embedded.chunks_exact_mut(width)) {
            self.token_embedding.row(*id, row)?;
        }
        Tensor::from_vec(embedded, (batch, new, width), tokens.device())
    }

    /// Positions the decoder can read (prompt, start tokens and text together).
    pub(super) fn context(&self) -> usize {
        self.positions.dim(0).unwrap_or(0)
    }

    fn scale(&self, width: usize) -> f64 {
        ((width / self.heads) as f64).powf(-0.25)
    }

    /// `(batch, tokens, width)` → `(batch, heads, tokens, head_dim)`.
    fn split_heads(&self, x: &Tensor) -> Result<Tensor> {
        let (batch, tokens, width) = x.dims3()?;
        x.reshape((batch, tokens, self.heads, width / self.heads))?
            .transpose(1, 2)?
            .contiguous()
    }

    /// `(batch, heads, tokens, head_dim)` → `(batch, tokens, width)`.
    fn merge_heads(x: &Tensor) -> Result<Tensor> {
        x.transpose(1, 2)?.flatten_from(2)
    }

    /// The cross-attention keys and values of the encoder's output `features` (batch 1).
    pub(super) fn cross(&self, features: &Tensor) -> Result<Cross> {
        let width = features.dim(D::Minus1)?;
        let scale = self.scale(width);
        let layers = self
            .blocks
            .iter()
            .map(|block| {
                let k = (self.split_heads(&block.cross.key.forward(features)?)? * scale)?;
                let v = self.split_heads(&block.cross.value.forward(features)?)?;
                Ok((k.transpose(2, 3)?.contiguous()?, v))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Cross(layers))
    }

    /// Runs `tokens` (`batch × new`, following what `cache` holds) and returns the final hidden
    /// states `(batch, new, width)`; `cache` then holds them too.
    pub(super) fn forward(
        &self,
        tokens: &Tensor,
        cache: &mut Cache,
        cross: &Cross,
    ) -> Result<Tensor> {
        let (batch, new) = tokens.dims2()?;
        let past = cache.len;
        let width = self.token_embedding.width;
        let positions = self.positions.narrow(0, past, new)?;
        let mut stream = self.embed(tokens)?.broadcast_add(&positions)?;
        let scale = self.scale(width);
        let mask = causal_mask(new, past, tokens.device())?;
        let mut layers = Vec::with_capacity(self.blocks.len());
        for (i, block) in self.blocks.iter().enumerate() {
            // Self-attention over the cache and the new tokens.
            let normed = block.attention_norm.forward(&stream)?;
            let queries = (self.split_heads(&block.attention.query.forward(&normed)?)? * scale)?;
            let keys = (self.split_heads(&block.attention.key.forward(&normed)?)? * scale)?;
            let values = self.split_heads(&block.attention.value.forward(&normed)?)?;
            let (keys, values) = match cache.layers.get(i) {
                Some((pk, pv)) => (
                    Tensor::cat(&[pk, &keys], 2)?,
                    Tensor::cat(&[pv, &values], 2)?,
                ),
                None => (keys, values),
            };
            let mut scores = queries.matmul(&keys.transpose(2, 3)?.contiguous()?)?;
            if let Some(mask) = &mask {
                scores = scores.broadcast_add(mask)?;
            }
            let weights = candle_nn::ops::softmax_last_dim(&scores)?;
            let attended = Self::merge_heads(&weights.matmul(&values)?)?;
            stream = (stream + block.attention.out.forward(&attended)?)?;
            layers.push((keys, values));
            // Cross-attention: the batch's queries folded into one sequence over the shared
            // keys and values.
            let (ck, cv) = cross
                .0
                .get(i)
                .ok_or_else(|| candle_core::Error::Msg("cross-attention layer missing".into()))?;
            let normed = block.cross_norm.forward(&stream)?;
            let queries = (self.split_heads(&block.cross.query.forward(&normed)?)? * scale)?;
            let (_, heads, _, head_dim) = queries.dims4()?;
            let queries = queries
                .transpose(0, 1)?
                .reshape((1, heads, batch * new, head_dim))?;
            let weights = candle_nn::ops::softmax_last_dim(&queries.matmul(ck)?)?;
            let attended = weights
                .matmul(cv)?
                .reshape((heads, batch, new, head_dim))?
                .transpose(0, 1)?;
            stream = (&stream + block.cross.out.forward(&Self::merge_heads(&attended)?)?)?;
            // MLP.
            let normed = block
                .fc1
                .forward(&block.mlp_norm.forward(&stream)?)?
                .gelu()?;
            stream = (&stream + block.fc2.forward(&normed)?)?;
        }
        cache.layers = layers;
        cache.len = past + new;
        self.norm.forward(&stream)
    }
}

/// The mask over `past + new` keys for `new` queries: each new token sees the past and the
/// new tokens up to itself. `None` for a single new token (it sees everything).
fn causal_mask(new: usize, past: usize, device: &candle_core::Device) -> Result<Option<Tensor>> {
    if new <= 1 {
        return Ok(None);
    }
    let total = past + new;
    let values: Vec<f32> = (0..new)
        .flat_map(|i| (0..total).map(move |j| if j > past + i { f32::NEG_INFINITY } else { 0.0 }))
        .collect();
    Tensor::from_vec(values, (new, total), device).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device, Shape};
    use candle_transformers::models::whisper::{Config, model::Whisper};

    /// Weights made up from each tensor's name, the same on every request: candle's model and
    /// ours load the same numbers, multiples of 1/1024 that ours holds exactly as f16.
    struct MadeUp;

    impl candle_nn::var_builder::SimpleBackend for MadeUp {
        fn get(
            &self,
            shape: Shape,
            name: &str,
            _: candle_nn::Init,
            dtype: DType,
            device: &Device,
        ) -> Result<Tensor> {
            let mut state = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            }) | 1;
            let values: Vec<f32> = (0..shape.elem_count())
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % 1_024) as f32 / 1_024.0 - 0.5
                })
                .collect();
            Tensor::from_vec(values, shape, device)?.to_dtype(dtype)
        }

        fn get_unchecked(&self, name: &str, _: DType, _: &Device) -> Result<Tensor> {
            Err(candle_core::Error::Msg(format!("{name}: shape needed")))
        }

        fn contains_tensor(&self, _: &str) -> bool {
            true
        }
    }

    fn config() -> Config {
        Config {
            num_mel_bins: 4,
            max_source_positions: 8,
            d_model: 16,
            encoder_attention_heads: 2,
            encoder_layers: 1,
            vocab_size: 40,
            max_target_positions: 24,
            decoder_attention_heads: 2,
            decoder_layers: 2,
            suppress_tokens: Vec::new(),
        }
    }

    /// The last position's hidden state of candle's decoder over the whole of `tokens`.
    fn reference(model: &mut Whisper, tokens: &[u32], features: &Tensor) -> Vec<f32> {
        let input = Tensor::new(tokens, &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let hidden = model.decoder.forward(&input, features, true).unwrap();
        hidden.i((0, tokens.len() - 1)).unwrap().to_vec1().unwrap()
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4)
    }

    use candle_core::IndexOp;

    #[test]
    fn the_cached_decoder_computes_what_candles_decoder_computes() {
        let device = Device::Cpu;
        let vb = VarBuilder::from_backend(Box::new(MadeUp), DType::F32, device.clone());
        let mut model = Whisper::load(&vb, config()).unwrap();
        let ours = Decoder::load(&vb, &config()).unwrap();
        let features = vb.get((1, 8, 16), "features").unwrap();
        let cross = ours.cross(&features).unwrap();
        // A prompt of several tokens at once, then one token per step.
        let mut tokens = vec![3_u32, 9, 1, 30];
        let mut cache = Cache::default();
        let input = Tensor::new(tokens.as_slice(), &device)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let hidden = ours.forward(&input, &mut cache, &cross).unwrap();
        let last: Vec<f32> = hidden.i((0, 3)).unwrap().to_vec1().unwrap();
        assert!(close(&last, &reference(&mut model, &tokens, &features)));
        // The vocabulary projection is candle's.
        let rows = hidden.i(0).unwrap();
        let theirs: Vec<Vec<f32>> = model
            .decoder
            .final_linear(&rows.unsqueeze(0).unwrap())
            .unwrap()
            .squeeze(0)
            .unwrap()
            .to_vec2()
            .unwrap();
        let projected = ours.project(&rows).unwrap();
        assert_eq!(projected.len(), 4);
        assert!(projected.iter().zip(&theirs).all(|(a, b)| close(a, b)));
        for next in [7_u32, 12, 38] {
            tokens.push(next);
            let input = Tensor::new(&[[next]], &device).unwrap();
            let hidden = ours.forward(&input, &mut cache, &cross).unwrap();
            let last: Vec<f32> = hidden.i((0, 0)).unwrap().to_vec1().unwrap();
            assert!(
                close(&last, &reference(&mut model, &tokens, &features)),
                "after {next}"
            );
        }
        // Two hypotheses from the same prefix, each continued by its own token.
        let mut beams = cache.select(&[0, 0]).unwrap();
        let input = Tensor::new(&[[5_u32], [21]], &device).unwrap();
        let hidden = ours.forward(&input, &mut beams, &cross).unwrap();
        for (row, token) in [(0_usize, 5_u32), (1, 21)] {
            let mut sequence = tokens.clone();
            sequence.push(token);
            let got: Vec<f32> = hidden.i((row, 0)).unwrap().to_vec1().unwrap();
            assert!(
                close(&got, &reference(&mut model, &sequence, &features)),
                "beam {row}"
            );
        }
    }

    #[test]
    fn a_model_without_a_token_embedding_is_an_error() {
        let vb = VarBuilder::from_backend(Box::new(MadeUp), DType::F32, Device::Cpu);
        for (d_model, vocab_size) in [(0, 40), (16, 0)] {
            let config = Config {
                d_model,
                vocab_size,
                decoder_layers: 0,
                ..config()
            };
            let error = Decoder::load(&vb, &config).err().unwrap().to_string();
            assert!(error.contains("token embedding"), "{error}");
        }
    }

    #[test]
    fn new_tokens_see_the_past_and_themselves_only() {
        let mask = causal_mask(2, 3, &Device::Cpu).unwrap().unwrap();
        let rows: Vec<Vec<f32>> = mask.to_vec2().unwrap();
        assert_eq!(rows[0], vec![0.0, 0.0, 0.0, 0.0, f32::NEG_INFINITY]);
        assert_eq!(rows[1], vec![0.0; 5]);
        assert!(causal_mask(1, 7, &Device::Cpu).unwrap().is_none());
    }
}
