//! One turn's graph update against graphs of 100, 1,000 and 5,000 existing nodes: embed five
//! new labels with the real `MiniLM` model, deduplicate them, resolve their edges and recompute
//! the graph metrics. Before that, the embedder alone: loading it from its resolved directory,
//! one short phrase, and a batch of eight labels. Prints median and p95 per part; asserts
//! nothing (targets live in the README, not in tests).
//!
//! Run with `cargo bench --bench graph_update`; the model resolves as at run time (cache, hub,
//! `PyPI`).

#![allow(
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::too_many_lines
)]

mod support;

use std::time::{Duration, Instant};

use interviewer::config::ConfigDir;
use interviewer::embed::{Embedder, MiniLmEmbedder};
use interviewer::graph::metrics::graph_state;
use interviewer::graph::records::{KgEdge, KgNode};
use interviewer::graph::surface::{
    ExtractedConcept, ExtractedRelationship, TurnExtraction, TurnOrigin, apply_extraction,
};
use support::TYPES;

const WORDS: [&str; 24] = [
    "creamy", "texture", "price", "froth", "coffee", "morning", "health", "planet", "taste", "oat",
    "sweet", "calm", "energy", "family", "habit", "store", "carton", "barista", "budget", "guilt",
    "comfort", "routine", "friends", "label",
];
const ITERATIONS: usize = 30;

fn label(i: usize) -> String {
    let w = |k: usize| WORDS.get((i / k) % WORDS.len()).copied().unwrap_or("x");
    format!("{} {} {} {i}", w(1), w(7), w(53))
}

fn existing_graph(n: usize, embedder: &dyn Embedder) -> (Vec<KgNode>, Vec<KgEdge>) {
    let labels: Vec<String> = (0..n).map(label).collect();
    let mut embeddings = Vec::with_capacity(n);
    for chunk in labels.chunks(64) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        embeddings.extend(embedder.embed(&refs).unwrap_or_default());
    }
    let nodes: Vec<KgNode> = labels
        .iter()
        .zip(embeddings)
        .enumerate()
        .map(|(i, (l, e))| KgNode {
            id: format!("n{i}"),
            session_id: "bench".into(),
            label: l.clone(),
            node_type: TYPES[i % TYPES.len()].into(),
            confidence: 0.9,
            properties: serde_json::json!({}),
            stance: 0,
            source_utterance_ids: vec![format!("u{}", i / 3)],
            source_quote: l.clone(),
            superseded_by: None,
            embedding: Some(e),
            recorded_at: String::new(),
            turn: u32::try_from(i / 3).unwrap_or(0),
        })
        .collect();
    // Ladder edges between consecutive types, about 1.2 per node.
    let edges = (1..n)
        .filter(|i| i % TYPES.len() != 0 || i % 2 == 0)
        .map(|i| KgEdge {
            id: format!("e{i}"),
            session_id: "bench".into(),
            source_node_id: format!("n{}", i - 1),
            target_node_id: format!("n{i}"),
            edge_type: "leads_to".into(),
            confidence: 0.8,
            properties: serde_json::json!({}),
            source_utterance_ids: vec![],
            recorded_at: String::new(),
            turn: 0,
        })
        .collect();
    (nodes, edges)
}

/// The embedder on its own: a reload from the directory it was resolved to (no cache or
/// download work), one short phrase, and a batch of eight labels.
fn embedder_timings(embedder: &MiniLmEmbedder) {
    let started = Instant::now();
    if let Err(e) = MiniLmEmbedder::load(embedder.dir()) {
        return eprintln!(
            "cannot reload the model from {}: {e}",
            embedder.dir().display()
        );
    }
    let reload = started.elapsed();
    let phrase = ["a short concept label"];
    let batch = [
        "fast car", "oat milk", "price", "taste", "cheaper", "healthy", "habit", "brand",
    ];
    // Warm-up: the first call allocates scratch buffers.
    std::hint::black_box(embedder.embed(&phrase).unwrap_or_default());
    let time = |texts: &[&str]| {
        (0..ITERATIONS)
            .map(|_| {
                let t0 = Instant::now();
                std::hint::black_box(embedder.embed(texts).unwrap_or_default());
                t0.elapsed()
            })
            .collect::<Vec<_>>()
    };
    let (one_p50, one_p95) = stats(time(&phrase));
    let (eight_p50, eight_p95) = stats(time(&batch));
    println!(
        "embedder: reload {:.0} ms; one phrase {one_p50:.2}/{one_p95:.2} ms; batch of 8 \
         {eight_p50:.2}/{eight_p95:.2} ms ({:.2} ms each at p50)",
        reload.as_secs_f64() * 1000.0,
        eight_p50 / 8.0
    );
}

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| {
        v.get(((v.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .map_or(0.0, ms)
    };
    (at(0.5), at(0.95))
}

fn main() {
    let methodology = match ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
        .methodology("means_end_chain", &interviewer::signals::Catalog)
    {
        Ok(m) => m,
        Err(e) => return eprintln!("cannot load methodology: {e}"),
    };
    let started = Instant::now();
    let embedder = match MiniLmEmbedder::load_default() {
        Ok(e) => e,
        Err(e) => return eprintln!("graph_update bench needs the MiniLM model: {e}"),
    };
    println!(
        "model load: {:.0} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    embedder_timings(&embedder);
    let new_labels = [
        "velvety mouthfeel",
        "cheaper than dairy",
        "feel less guilty",
        "steady morning energy",
        "care for the planet",
    ];
    let concepts: Vec<ExtractedConcept> = new_labels
        .iter()
        .zip(TYPES)
        .map(|(l, t)| ExtractedConcept {
            label: (*l).into(),
            node_type: t.into(),
            confidence: 0.9,
            stance: 1,
            source_quote: (*l).into(),
        })
        .collect();
    let relationships: Vec<ExtractedRelationship> = new_labels
        .windows(2)
        .map(|w| ExtractedRelationship {
            source: w[0].into(),
            target: w[1].into(),
            edge_type: "leads_to".into(),
            confidence: 0.8,
        })
        .chain([ExtractedRelationship {
            source: label(5),
            target: new_labels[1].into(),
            edge_type: "leads_to".into(),
            confidence: 0.7,
        }])
        .collect();
    println!(
        "{:>6} {:>14} {:>14} {:>14} {:>14}",
        "nodes", "embed p50/p95", "dedup p50/p95", "metrics", "turn total"
    );
    for n in [100, 1_000, 5_000] {
        let (nodes, edges) = existing_graph(n, &embedder);
        let (mut embed_t, mut dedup_t, mut metrics_t, mut total_t) =
            (vec![], vec![], vec![], vec![]);
        for it in 0..ITERATIONS {
            let t0 = Instant::now();
            let vectors = embedder.embed(&new_labels).unwrap_or_default();
            let t1 = Instant::now();
            let embeddings: Vec<Option<Vec<f32>>> = vectors.into_iter().map(Some).collect();
            let mut counter = 0;
            let mut next = || {
                counter += 1;
                format!("new{it}-{counter}")
            };
            let origin = TurnOrigin {
                session_id: "bench",
                turn: 99,
                utterance_id: "u-new",
                recorded_at: "",
            };
            let extraction = TurnExtraction {
                concepts: &concepts,
                embeddings: &embeddings,
                relationships: &relationships,
            };
            let update =
                apply_extraction(&nodes, &edges, &methodology, extraction, &origin, &mut next);
            let t2 = Instant::now();
            let mut all_nodes = nodes.clone();
            all_nodes.extend(update.new_nodes);
            let mut all_edges = edges.clone();
            all_edges.extend(update.new_edges);
            let t2b = Instant::now();
            let state = graph_state(&all_nodes, &all_edges, &methodology, 99);
            let t3 = Instant::now();
            std::hint::black_box(state);
            embed_t.push(t1 - t0);
            dedup_t.push(t2 - t1);
            metrics_t.push(t3 - t2b);
            total_t.push((t1 - t0) + (t2 - t1) + (t3 - t2b));
        }
        let f = |(a, b): (f64, f64)| format!("{a:.2}/{b:.2} ms");
        println!(
            "{n:>6} {:>14} {:>14} {:>14} {:>14}",
            f(stats(embed_t)),
            f(stats(dedup_t)),
            f(stats(metrics_t)),
            f(stats(total_t))
        );
    }
}
