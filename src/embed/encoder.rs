//! all-MiniLM-L6-v2's BERT encoder on our own kernels (`interviewer-kernels`: [`DenseLayer`],
//! [`layer_norm`], [`gelu`], [`attend`]): candle's `BertModel` arithmetic, in f32 except that
//! the layers' weight matrices are stored as f16.
//!
//! Three things make it several times faster than candle's for what a turn embeds (three or
//! four labels of a few tokens):
//! - **No padding.** The texts' tokens are packed one after another into one matrix: the
//!   layers' products run on every real token once, and attention runs per text. candle pads
//!   each text to the longest and computes the padding too.
//! - **No packing of the weights.** Each product reads each weight row once and multiplies it
//!   with all the tokens while it is in cache. candle's matrix product packs the weight matrix
//!   again on every call, which for fifteen tokens costs more than the arithmetic.
//! - **Half the bytes.** What is left is reading the weights: 42 MB in f32, 21 MB in f16, which
//!   a large last-level cache keeps between calls. The embeddings and layer norms stay f32.
//!
//! Its output agrees with candle's f32 model to a few 10⁻⁴ per dimension, and the similarity
//! decisions the graph takes on the extraction corpus' labels (at the surface and canonical
//! thresholds) are the same: the tests check both.

use std::collections::HashMap;

use candle_transformers::models::bert::{Config, HiddenAct, PositionEmbeddingType};
use interviewer_kernels::{DenseLayer, DenseWeights, attend, f16_bits, gelu, layer_norm};

use super::weights::Raw;

/// Tokens above which a pass is split across two threads, each embedding its own texts: below
/// it, the hand-off costs more than the second core saves.
const PARALLEL_TOKENS: usize = 256;

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    /// Query, key and value projections stacked into one matrix (`3 × hidden` rows).
    qkv: DenseLayer,
    attention_out: DenseLayer,
    attention_norm: Norm,
    up: DenseLayer,
    down: DenseLayer,
    output_norm: Norm,
}

pub(super) struct Encoder {
    /// `[vocab, hidden]`.
    words: Vec<f32>,
    /// `[max_positions, hidden]`.
    positions: Vec<f32>,
    /// The first token type's row: every token is of type 0.
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    eps: f32,
}

/// Takes the named f32 tensors out of the checkpoint, checking their sizes.
struct Take<'a> {
    raw: &'a mut HashMap<String, Raw>,
}

impl Take<'_> {
    fn take(&mut self, name: &str, len: usize) -> Result<Vec<f32>, String> {
        let raw = self
            .raw
            .remove(name)
            .ok_or_else(|| format!("the checkpoint has no tensor {name}"))?;
        let Raw::F32 { values, shape } = raw else {
            return Err(format!("tensor {name} is not f32"));
        };
        if values.len() != len {
            return Err(format!(
                "tensor {name} has shape {shape:?}, not {len} values as config.json says"
            ));
        }
        Ok(values)
    }

    /// A linear layer's weights as f16 bit patterns (one output per row) and its biases.
    fn halves(
        &mut self,
        name: &str,
        rows: usize,
        cols: usize,
    ) -> Result<(Vec<u16>, Vec<f32>), String> {
        let weights = self.take(&format!("{name}.weight"), rows * cols)?;
        Ok((
            f16_bits(&weights),
            self.take(&format!("{name}.bias"), rows)?,
        ))
    }

    fn linear(&mut self, name: &str, rows: usize, cols: usize) -> Result<DenseLayer, String> {
        let (halves, bias) = self.halves(name, rows, cols)?;
        pack(&halves, bias, cols)
    }

    fn norm(&mut self, name: &str, width: usize) -> Result<Norm, String> {
        Ok(Norm {
            gamma: self.take(&format!("{name}.weight"), width)?,
            beta: self.take(&format!("{name}.bias"), width)?,
        })
    }
}

impl Encoder {
    /// The encoder of a BERT checkpoint's tensors (names as sentence-transformers saves them,
    /// with or without a `bert.` prefix). The tensors are moved, not copied.
    pub(super) fn new(mut raw: HashMap<String, Raw>, config: &Config) -> Result<Self, String> {
        if !matches!(config.hidden_act, HiddenAct::Gelu) {
            return Err(format!(
                "hidden_act {:?} is not supported; this encoder runs GELU",
                config.hidden_act
            ));
        }
        if !matches!(
            config.position_embedding_type,
            PositionEmbeddingType::Absolute
        ) {
            return Err("only absolute position embeddings are supported".to_owned());
        }
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if hidden == 0 || heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(format!(
                "hidden_size {hidden} does not split into {heads} heads"
            ));
        }
        let names: Vec<String> = raw.keys().cloned().collect();
        for name in names {
            if let Some(short) = name.strip_prefix("bert.")
                && let Some(tensor) = raw.remove(&name)
            {
                raw.insert(short.to_owned(), tensor);
            }
        }
        let inner = config.intermediate_size;
        let mut take = Take { raw: &mut raw };
        let words = take.take(
            "embeddings.word_embeddings.weight",
            config.vocab_size * hidden,
        )?;
        let positions = take.take(
            "embeddings.position_embeddings.weight",
            config.max_position_embeddings * hidden,
        )?;
        let mut token_type = take.take(
            "embeddings.token_type_embeddings.weight",
            config.type_vocab_size * hidden,
        )?;
        token_type.truncate(hidden);
        let embedding_norm = take.norm("embeddings.LayerNorm", hidden)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let at = format!("encoder.layer.{i}");
            let (mut halves, mut biases) = (Vec::new(), Vec::new());
            for part in ["query", "key", "value"] {
                let (h, b) = take.halves(&format!("{at}.attention.self.{part}"), hidden, hidden)?;
                halves.extend_from_slice(&h);
                biases.extend_from_slice(&b);
            }
            let qkv = pack(&halves, biases, hidden)?;
            layers.push(Layer {
                qkv,
                attention_out: take.linear(
                    &format!("{at}.attention.output.dense"),
                    hidden,
                    hidden,
                )?,
                attention_norm: take.norm(&format!("{at}.attention.output.LayerNorm"), hidden)?,
                up: take.linear(&format!("{at}.intermediate.dense"), inner, hidden)?,
                down: take.linear(&format!("{at}.output.dense"), hidden, inner)?,
                output_norm: take.norm(&format!("{at}.output.LayerNorm"), hidden)?,
            });
        }
        #[allow(clippy::cast_possible_truncation)]
        let eps = config.layer_norm_eps as f32;
        Ok(Self {
            words,
            positions,
            token_type,
            embedding_norm,
            layers,
            hidden,
            heads,
            eps,
        })
    }

    /// Each token sequence's mean-pooled, L2-normalised last hidden state. Sequences longer
    /// than the position table, and token ids outside the vocabulary, are errors.
    pub(super) fn embed(&self, sequences: &[&[u32]]) -> Result<Vec<Vec<f32>>, String> {
        let total: usize = sequences.iter().map(|s| s.len()).sum();
        if total < PARALLEL_TOKENS || sequences.len() < 2 {
            return self.embed_packed(sequences);
        }
        // Two halves of about the same number of tokens, one per thread.
        let mut running = 0;
        let split = sequences
            .iter()
            .position(|s| {
                running += s.len();
                running * 2 >= total
            })
            .map_or(sequences.len(), |i| (i + 1).min(sequences.len() - 1));
        let (first, second) = sequences.split_at(split);
        let (a, b) = std::thread::scope(|scope| {
            let other = scope.spawn(|| self.embed_packed(second));
            let mine = self.embed_packed(first);
            (mine, other.join())
        });
        let mut vectors = a?;
        vectors.extend(b.map_err(|_| "an embedding thread panicked".to_owned())??);
        Ok(vectors)
    }

    /// [`Self::embed`] on this thread: every sequence's tokens packed into one matrix.
    fn embed_packed(&self, sequences: &[&[u32]]) -> Result<Vec<Vec<f32>>, String> {
        let h = self.hidden;
        let tokens: usize = sequences.iter().map(|s| s.len()).sum();
        let mut x = Vec::with_capacity(tokens * h);
        for sequence in sequences {
            for (position, id) in sequence.iter().enumerate() {
                let word = row(&self.words, *id as usize, h)
                    .ok_or_else(|| format!("token id {id} is outside the vocabulary"))?;
                let place = row(&self.positions, position, h).ok_or_else(|| {
                    format!(
                        "a text of {} tokens is longer than the model's {} positions",
                        sequence.len(),
                        self.positions.len() / h
                    )
                })?;
                x.extend(
                    word.iter()
                        .zip(place)
                        .zip(&self.token_type)
                        .map(|((w, p), t)| w + p + t),
                );
            }
        }
        let norm = &self.embedding_norm;
        layer_norm(&mut x, &norm.gamma, &norm.beta, self.eps);
        let mut qkv = vec![0.0; tokens * 3 * h];
        let mut context = vec![0.0; tokens * h];
        let mut projected = vec![0.0; tokens * h];
        let widest = self
            .layers
            .iter()
            .map(|l| l.up.outputs())
            .max()
            .unwrap_or(0);
        let mut inner_buffer = vec![0.0; tokens * widest];
        for layer in &self.layers {
            let fail = |e: interviewer_kernels::ShapeError| e.to_string();
            layer.qkv.forward(&x, &mut qkv).map_err(fail)?;
            let mut start = 0;
            for sequence in sequences {
                let end = start + sequence.len();
                let (Some(from), Some(to)) = (
                    qkv.get(start * 3 * h..end * 3 * h),
                    context.get_mut(start * h..end * h),
                ) else {
                    return Err("a sequence outside the packed tokens".to_owned());
                };
                attend(from, self.heads, h / self.heads, to).map_err(fail)?;
                start = end;
            }
            layer
                .attention_out
                .forward(&context, &mut projected)
                .map_err(fail)?;
            add(&mut x, &projected);
            let norm = &layer.attention_norm;
            layer_norm(&mut x, &norm.gamma, &norm.beta, self.eps);
            let inner = inner_buffer
                .get_mut(..tokens * layer.up.outputs())
                .unwrap_or_default();
            layer.up.forward(&x, inner).map_err(fail)?;
            gelu(inner);
            layer.down.forward(inner, &mut projected).map_err(fail)?;
            add(&mut x, &projected);
            let norm = &layer.output_norm;
            layer_norm(&mut x, &norm.gamma, &norm.beta, self.eps);
        }
        let mut vectors = Vec::with_capacity(sequences.len());
        let mut start = 0;
        for sequence in sequences {
            let end = start + sequence.len();
            let states = x.get(start * h..end * h).unwrap_or_default();
            vectors.push(mean_normalised(states, h));
            start = end;
        }
        Ok(vectors)
    }
}

/// A linear layer of `bias.len()` outputs and `cols` inputs from its f16 weights, row by row.
fn pack(halves: &[u16], bias: Vec<f32>, cols: usize) -> Result<DenseLayer, String> {
    DenseWeights::from_f16(halves, bias.len(), cols)
        .and_then(|weights| DenseLayer::new(weights, bias))
        .map_err(|e| e.to_string())
}

/// Row `index` of a row-major matrix of `width` columns.
fn row(matrix: &[f32], index: usize, width: usize) -> Option<&[f32]> {
    matrix.get(index * width..(index + 1) * width)
}

fn add(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

/// The mean of the rows of `states`, divided by its L2 norm (sentence-transformers' pooling
/// and normalisation; an empty sequence gives zeros).
fn mean_normalised(states: &[f32], width: usize) -> Vec<f32> {
    let mut mean = vec![0.0f32; width];
    let mut count = 0usize;
    for token in states.chunks_exact(width) {
        add(&mut mean, token);
        count += 1;
    }
    #[allow(clippy::cast_precision_loss)]
    let count = count.max(1) as f32;
    for v in &mut mean {
        *v /= count;
    }
    let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    for v in &mut mean {
        *v /= norm;
    }
    mean
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BERT of 1 layer, 4 dimensions in 2 heads, 10 words and 6 positions, as a checkpoint
    /// would hold it (with the `bert.` prefix some checkpoints have).
    fn tiny() -> (HashMap<String, Raw>, Config) {
        let config: Config = serde_json::from_str(
            r#"{"vocab_size": 10, "hidden_size": 4, "num_hidden_layers": 1,
                "num_attention_heads": 2, "intermediate_size": 8, "hidden_act": "gelu",
                "hidden_dropout_prob": 0.1, "max_position_embeddings": 6,
                "type_vocab_size": 2, "initializer_range": 0.02, "layer_norm_eps": 1e-12,
                "pad_token_id": 0, "classifier_dropout": null, "model_type": "bert"}"#,
        )
        .unwrap();
        let mut raw = HashMap::new();
        let mut put = |name: &str, len: usize| {
            let values = (0..len)
                .map(|i| ((i * 7 % 13) as f32 - 6.0) / 10.0)
                .collect();
            raw.insert(
                format!("bert.{name}"),
                Raw::F32 {
                    shape: vec![len],
                    values,
                },
            );
        };
        put("embeddings.word_embeddings.weight", 40);
        put("embeddings.position_embeddings.weight", 24);
        put("embeddings.token_type_embeddings.weight", 8);
        for part in [
            "embeddings.LayerNorm",
            "encoder.layer.0.attention.output.LayerNorm",
            "encoder.layer.0.output.LayerNorm",
        ] {
            put(&format!("{part}.weight"), 4);
            put(&format!("{part}.bias"), 4);
        }
        for (name, rows, cols) in [
            ("attention.self.query", 4, 4),
            ("attention.self.key", 4, 4),
            ("attention.self.value", 4, 4),
            ("attention.output.dense", 4, 4),
            ("intermediate.dense", 8, 4),
            ("output.dense", 4, 8),
        ] {
            put(&format!("encoder.layer.0.{name}.weight"), rows * cols);
            put(&format!("encoder.layer.0.{name}.bias"), rows);
        }
        (raw, config)
    }

    #[test]
    fn a_checkpoint_loads_and_embeds_unit_vectors() {
        let (raw, config) = tiny();
        let encoder = Encoder::new(raw, &config).unwrap();
        let vectors = encoder.embed(&[&[1, 2, 3], &[4], &[]]).unwrap();
        assert_eq!(vectors.len(), 3);
        for v in &vectors[..2] {
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "{v:?}");
        }
        // A text's vector does not depend on the texts packed beside it.
        let alone = encoder.embed(&[&[4]]).unwrap();
        for (a, b) in alone[0].iter().zip(&vectors[1]) {
            assert!((a - b).abs() < 1e-6);
        }
        assert_eq!(vectors[2], [0.0; 4], "an empty text has nothing to pool");
    }

    #[test]
    fn bad_checkpoints_and_inputs_say_what_is_wrong() {
        let (mut raw, config) = tiny();
        raw.remove("bert.encoder.layer.0.output.dense.bias");
        let err = Encoder::new(raw, &config).err().unwrap();
        assert!(err.contains("encoder.layer.0.output.dense.bias"), "{err}");

        let (mut raw, config) = tiny();
        raw.insert(
            "bert.encoder.layer.0.intermediate.dense.weight".to_owned(),
            Raw::F32 {
                shape: vec![3, 4],
                values: vec![0.0; 12],
            },
        );
        let err = Encoder::new(raw, &config).err().unwrap();
        assert!(
            err.contains("intermediate.dense.weight") && err.contains("[3, 4]"),
            "{err}"
        );

        let (raw, mut config) = tiny();
        config.hidden_act = HiddenAct::Relu;
        let err = Encoder::new(raw, &config).err().unwrap();
        assert!(err.contains("hidden_act"), "{err}");

        let (raw, config) = tiny();
        let encoder = Encoder::new(raw, &config).unwrap();
        let err = encoder.embed(&[&[10]]).unwrap_err();
        assert!(err.contains("token id 10"), "{err}");
        let err = encoder.embed(&[&[1; 7]]).unwrap_err();
        assert!(
            err.contains("7 tokens") && err.contains("6 positions"),
            "{err}"
        );
    }
}
