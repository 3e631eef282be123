//! From a `CTranslate2` Whisper `model.bin` to candle's Whisper: the model [`Config`] read off
//! the tensor shapes, and every variable renamed to the name candle's `VarBuilder` asks for.
//!
//! `CTranslate2` fuses projections: self-attention's Q, K and V are one `3d × d` matrix
//! (`…/self_attention/linear_0`), cross-attention's K and V one `2d × d` (`…/attention/
//! linear_1`). They are split by rows here. Whisper's K projection has no bias, so the K third
//! of a fused bias (zeros) is dropped. Layer norms are `gamma`/`beta`. The encoder's stored
//! sinusoidal positions are not used: candle computes the same table itself.
//!
//! The number of attention heads is not in any shape; it is the `num_heads` scalar when the
//! file has one, else `d_model / 64` (every Whisper size uses 64-wide heads).

use std::collections::{BTreeMap, HashMap};

use candle_core::{Device, Tensor};
use candle_transformers::models::whisper::Config;

use super::ct2::{Ct2Model, Values, Variable};

/// Width of one attention head in every Whisper model.
const HEAD_DIM: usize = 64;

/// Bound on the layers looked for: Whisper large has 32 per side.
const MAX_LAYERS: usize = 256;

/// What [`load`] needs that the file lacks or has in the wrong shape.
pub type Problem = String;

/// The configuration and candle-named tensors of a Whisper `model.bin`.
///
/// Consumes the model: each variable moves into its tensor, so the weights are held once.
pub fn load(
    model: Ct2Model,
    device: &Device,
) -> Result<(Config, HashMap<String, Tensor>), Problem> {
    if model.spec != "WhisperSpec" {
        return Err(format!("spec {:?} is not a Whisper model", model.spec));
    }
    let mut variables = model.variables;
    let vars = &mut variables;
    let config = config(vars)?;
    let mut out = HashMap::new();
    let mut put = |name: String, shape: &[usize], values: Vec<f32>| -> Result<(), Problem> {
        let tensor =
            Tensor::from_vec(values, shape, device).map_err(|e| format!("tensor {name}: {e}"))?;
        out.insert(name, tensor);
        Ok(())
    };
    for (side, candle_side, layers) in [
        ("encoder", "model.encoder", config.encoder_layers),
        ("decoder", "model.decoder", config.decoder_layers),
    ] {
        for i in 0..layers {
            let from = format!("{side}/layer_{i}");
            let to = format!("{candle_side}.layers.{i}");
            layer(vars, &from, &to, &mut put)?;
        }
        norm(
            vars,
            &format!("{side}/layer_norm"),
            &format!("{candle_side}.layer_norm"),
            &mut put,
        )?;
    }
    for conv in ["conv1", "conv2"] {
        for part in ["weight", "bias"] {
            let (shape, values) = floats(vars, &format!("encoder/{conv}/{part}"))?;
            put(format!("model.encoder.{conv}.{part}"), &shape, values)?;
        }
    }
    let (shape, values) = floats(vars, "decoder/embeddings/weight")?;
    put(
        "model.decoder.embed_tokens.weight".to_owned(),
        &shape,
        values,
    )?;
    let (shape, values) = floats(vars, "decoder/position_encodings/encodings")?;
    put(
        "model.decoder.embed_positions.weight".to_owned(),
        &shape,
        values,
    )?;
    Ok((config, out))
}

type Put<'a> = dyn FnMut(String, &[usize], Vec<f32>) -> Result<(), Problem> + 'a;

/// One encoder or decoder block.
fn layer(
    vars: &mut BTreeMap<String, Variable>,
    from: &str,
    to: &str,
    put: &mut Put<'_>,
) -> Result<(), Problem> {
    norm(
        vars,
        &format!("{from}/self_attention/layer_norm"),
        &format!("{to}.self_attn_layer_norm"),
        put,
    )?;
    fused(
        vars,
        &format!("{from}/self_attention/linear_0"),
        &format!("{to}.self_attn"),
        &["q_proj", "k_proj", "v_proj"],
        put,
    )?;
    linear(
        vars,
        &format!("{from}/self_attention/linear_1"),
        &format!("{to}.self_attn.out_proj"),
        put,
    )?;
    if vars.contains_key(&format!("{from}/attention/linear_0/weight")) {
        norm(
            vars,
            &format!("{from}/attention/layer_norm"),
            &format!("{to}.encoder_attn_layer_norm"),
            put,
        )?;
        linear(
            vars,
            &format!("{from}/attention/linear_0"),
            &format!("{to}.encoder_attn.q_proj"),
            put,
        )?;
        fused(
            vars,
            &format!("{from}/attention/linear_1"),
            &format!("{to}.encoder_attn"),
            &["k_proj", "v_proj"],
            put,
        )?;
        linear(
            vars,
            &format!("{from}/attention/linear_2"),
            &format!("{to}.encoder_attn.out_proj"),
            put,
        )?;
    }
    norm(
        vars,
        &format!("{from}/ffn/layer_norm"),
        &format!("{to}.final_layer_norm"),
        put,
    )?;
    linear(
        vars,
        &format!("{from}/ffn/linear_0"),
        &format!("{to}.fc1"),
        put,
    )?;
    linear(
        vars,
        &format!("{from}/ffn/linear_1"),
        &format!("{to}.fc2"),
        put,
    )
}

fn norm(
    vars: &mut BTreeMap<String, Variable>,
    from: &str,
    to: &str,
    put: &mut Put<'_>,
) -> Result<(), Problem> {
    for (ct2, candle) in [("gamma", "weight"), ("beta", "bias")] {
        let (shape, values) = floats(vars, &format!("{from}/{ct2}"))?;
        put(format!("{to}.{candle}"), &shape, values)?;
    }
    Ok(())
}

fn linear(
    vars: &mut BTreeMap<String, Variable>,
    from: &str,
    to: &str,
    put: &mut Put<'_>,
) -> Result<(), Problem> {
    for part in ["weight", "bias"] {
        let (shape, values) = floats(vars, &format!("{from}/{part}"))?;
        put(format!("{to}.{part}"), &shape, values)?;
    }
    Ok(())
}

/// Splits a fused projection into `names.len()` equal row blocks; `k_proj` gets no bias.
fn fused(
    vars: &mut BTreeMap<String, Variable>,
    from: &str,
    to: &str,
    names: &[&str],
    put: &mut Put<'_>,
) -> Result<(), Problem> {
    let weight_name = format!("{from}/weight");
    let (shape, weight) = floats(vars, &weight_name)?;
    let &[rows, cols] = shape.as_slice() else {
        return Err(format!(
            "{weight_name} has shape {shape:?}, expected 2 dimensions"
        ));
    };
    let parts = names.len();
    if parts == 0 || rows % parts != 0 {
        return Err(format!(
            "{weight_name} has {rows} rows, not {parts} equal blocks"
        ));
    }
    let block = rows / parts;
    let (_, bias) = floats(vars, &format!("{from}/bias"))?;
    if bias.len() != rows {
        return Err(format!(
            "{from}/bias has {} values for {rows} rows",
            bias.len()
        ));
    }
    for (i, name) in names.iter().enumerate() {
        let w = weight
            .get(i * block * cols..(i + 1) * block * cols)
            .ok_or_else(|| format!("{weight_name} is shorter than its shape"))?;
        put(format!("{to}.{name}.weight"), &[block, cols], w.to_vec())?;
        if *name != "k_proj" {
            let b = bias
                .get(i * block..(i + 1) * block)
                .ok_or_else(|| format!("{from}/bias is shorter than its shape"))?;
            put(format!("{to}.{name}.bias"), &[block], b.to_vec())?;
        }
    }
    Ok(())
}

/// A float variable's shape and values, taken out of the map (each is used once).
fn floats(
    vars: &mut BTreeMap<String, Variable>,
    name: &str,
) -> Result<(Vec<usize>, Vec<f32>), Problem> {
    let var = vars
        .remove(name)
        .ok_or_else(|| format!("variable {name} is missing"))?;
    match var.values {
        Values::Float(values) => Ok((var.shape, values)),
        Values::Int(_) => Err(format!(
            "variable {name} holds integers (an int8-quantized model?); float weights are needed"
        )),
    }
}

fn shape<'a>(vars: &'a BTreeMap<String, Variable>, name: &str) -> Result<&'a [usize], Problem> {
    vars.get(name)
        .map(|var| var.shape.as_slice())
        .ok_or_else(|| format!("variable {name} is missing"))
}

fn layers(vars: &BTreeMap<String, Variable>, side: &str) -> usize {
    (0..MAX_LAYERS)
        .take_while(|i| vars.contains_key(&format!("{side}/layer_{i}/ffn/linear_0/weight")))
        .count()
}

fn heads(vars: &BTreeMap<String, Variable>, side: &str, d_model: usize) -> usize {
    match vars.get(&format!("{side}/num_heads")).map(|v| &v.values) {
        Some(Values::Int(values)) => values
            .first()
            .and_then(|h| usize::try_from(*h).ok())
            .filter(|h| *h > 0 && d_model.is_multiple_of(*h))
            .unwrap_or(d_model / HEAD_DIM),
        _ => d_model / HEAD_DIM,
    }
}

/// The model configuration from the tensor shapes.
fn config(vars: &BTreeMap<String, Variable>) -> Result<Config, Problem> {
    let conv1 = shape(vars, "encoder/conv1/weight")?;
    let &[d_model, num_mel_bins, _] = conv1 else {
        return Err(format!(
            "encoder/conv1/weight has shape {conv1:?}, expected 3 dimensions"
        ));
    };
    let first = |name: &str| -> Result<usize, Problem> {
        shape(vars, name)?
            .first()
            .copied()
            .ok_or_else(|| format!("variable {name} is a scalar"))
    };
    let config = Config {
        num_mel_bins,
        max_source_positions: first("encoder/position_encodings/encodings").unwrap_or(1500),
        d_model,
        encoder_attention_heads: heads(vars, "encoder", d_model),
        encoder_layers: layers(vars, "encoder"),
        vocab_size: first("decoder/embeddings/weight")?,
        max_target_positions: first("decoder/position_encodings/encodings")?,
        decoder_attention_heads: heads(vars, "decoder", d_model),
        decoder_layers: layers(vars, "decoder"),
        suppress_tokens: Vec::new(),
    };
    if config.encoder_layers == 0 || config.decoder_layers == 0 || d_model < HEAD_DIM {
        return Err(format!(
            "not a complete Whisper model: {} encoder and {} decoder layers, width {d_model}",
            config.encoder_layers, config.decoder_layers
        ));
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use candle_core::DType;
    use candle_nn::VarBuilder;
    use candle_transformers::models::whisper::model::Whisper;

    use super::*;
    use crate::speech::ct2;

    /// A complete Whisper of width 64, one layer each side, 8 mels, vocabulary 10.
    fn tiny_model() -> Ct2Model {
        let d = 64u32;
        let mut vars: Vec<(String, Vec<u32>)> = vec![
            ("encoder/conv1/weight".into(), vec![d, 8, 3]),
            ("encoder/conv1/bias".into(), vec![d]),
            ("encoder/conv2/weight".into(), vec![d, d, 3]),
            ("encoder/conv2/bias".into(), vec![d]),
            ("encoder/position_encodings/encodings".into(), vec![16, d]),
            ("decoder/embeddings/weight".into(), vec![10, d]),
            ("decoder/position_encodings/encodings".into(), vec![12, d]),
        ];
        for side in ["encoder", "decoder"] {
            let p = format!("{side}/layer_0");
            for n in ["self_attention/layer_norm", "ffn/layer_norm"] {
                vars.push((format!("{p}/{n}/gamma"), vec![d]));
                vars.push((format!("{p}/{n}/beta"), vec![d]));
            }
            vars.push((
                format!("{p}/self_attention/linear_0/weight"),
                vec![3 * d, d],
            ));
            vars.push((format!("{p}/self_attention/linear_0/bias"), vec![3 * d]));
            vars.push((format!("{p}/self_attention/linear_1/weight"), vec![d, d]));
            vars.push((format!("{p}/self_attention/linear_1/bias"), vec![d]));
            vars.push((format!("{p}/ffn/linear_0/weight"), vec![4 * d, d]));
            vars.push((format!("{p}/ffn/linear_0/bias"), vec![4 * d]));
            vars.push((format!("{p}/ffn/linear_1/weight"), vec![d, 4 * d]));
            vars.push((format!("{p}/ffn/linear_1/bias"), vec![d]));
            vars.push((format!("{side}/layer_norm/gamma"), vec![d]));
            vars.push((format!("{side}/layer_norm/beta"), vec![d]));
        }
        let p = "decoder/layer_0/attention";
        vars.push((format!("{p}/layer_norm/gamma"), vec![d]));
        vars.push((format!("{p}/layer_norm/beta"), vec![d]));
        vars.push((format!("{p}/linear_0/weight"), vec![d, d]));
        vars.push((format!("{p}/linear_0/bias"), vec![d]));
        vars.push((format!("{p}/linear_1/weight"), vec![2 * d, d]));
        vars.push((format!("{p}/linear_1/bias"), vec![2 * d]));
        vars.push((format!("{p}/linear_2/weight"), vec![d, d]));
        vars.push((format!("{p}/linear_2/bias"), vec![d]));
        let listed: Vec<(&str, &[u32], u8, Vec<u8>)> = vars
            .iter()
            .map(|(name, shape)| {
                let n: u32 = shape.iter().product();
                let bytes = (0..n)
                    .flat_map(|i| ((i % 7) as f32 * 0.01).to_le_bytes())
                    .collect();
                (name.as_str(), shape.as_slice(), 0u8, bytes)
            })
            .chain([(
                "decoder/num_heads",
                &[][..],
                2u8,
                2i16.to_le_bytes().to_vec(),
            )])
            .collect();
        let bytes = ct2::write_model(6, &listed, &[]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        std::fs::write(&path, bytes).unwrap();
        ct2::read(&path).unwrap()
    }

    #[test]
    fn a_synthetic_model_maps_onto_candle_s_whisper() {
        let model = tiny_model();
        let (config, tensors) = load(model, &Device::Cpu).unwrap();
        assert_eq!(config.d_model, 64);
        assert_eq!(config.num_mel_bins, 8);
        assert_eq!(config.vocab_size, 10);
        assert_eq!(config.max_target_positions, 12);
        assert_eq!(config.max_source_positions, 16);
        assert_eq!((config.encoder_layers, config.decoder_layers), (1, 1));
        assert_eq!(
            config.encoder_attention_heads, 1,
            "64 / 64 without num_heads"
        );
        assert_eq!(config.decoder_attention_heads, 2, "from decoder/num_heads");
        assert!(!tensors.contains_key("model.encoder.layers.0.self_attn.k_proj.bias"));
        let q = &tensors["model.encoder.layers.0.self_attn.q_proj.weight"];
        assert_eq!(q.dims(), [64, 64]);
        // Rows 64..128 of the fused matrix are K.
        let k = tensors["model.encoder.layers.0.self_attn.k_proj.weight"]
            .to_vec2::<f32>()
            .unwrap();
        assert_eq!(k[0][0], ((64 * 64) % 7) as f32 * 0.01);
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        Whisper::load(&vb, config).unwrap();
    }

    #[test]
    fn a_missing_variable_is_named() {
        let mut model = tiny_model();
        model
            .variables
            .remove("decoder/layer_0/attention/linear_2/bias");
        let err = load(model.clone(), &Device::Cpu).unwrap_err();
        assert_eq!(
            err,
            "variable decoder/layer_0/attention/linear_2/bias is missing"
        );
        model.spec = "TransformerSpec".into();
        assert!(
            load(model.clone(), &Device::Cpu)
                .unwrap_err()
                .contains("not a Whisper model")
        );
    }
}
