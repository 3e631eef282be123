//! Pipeline overhead per turn: a 50-turn interview against an instant scripted LLM on a real
//! `SQLite` file, so what is measured is everything the engine does around the model calls —
//! prompts, SRL, reply parsing, embedding, dedup, slots, metrics, signals, scoring and twelve
//! commits.
//!
//! Two embedders: the real `MiniLM` model, and a hashing embedder that stands in for "no model
//! inference". Prints p50 / p95 of turns 1–5, 1–30 and 45–50; asserts nothing.
//!
//! Run with `cargo bench --bench pipeline_turn`.

#![allow(
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use interviewer::config::ConfigDir;
use interviewer::embed::{CachedEmbedder, Embedder, HashEmbedder, MiniLmEmbedder, ResolveConfig};
use interviewer::llm::{LlmProvider, LlmRouter, ScriptedProvider};
use interviewer::pipeline::{
    Event, EventSink, Interview, InterviewSpec, PipelineSettings, Services,
};
use interviewer::store::Store;

const TURNS: u32 = 50;
const TYPES: [&str; 5] = [
    "attribute",
    "functional_consequence",
    "psychosocial_consequence",
    "instrumental_value",
    "terminal_value",
];
const WORDS: [&str; 20] = [
    "creamy", "price", "froth", "coffee", "morning", "health", "planet", "taste", "sweet", "calm",
    "energy", "family", "habit", "carton", "barista", "budget", "comfort", "routine", "friends",
    "label",
];

/// Three new concepts a turn, chained up the ladder and linked to the previous turn.
fn script() -> String {
    let mut s = String::from("extraction:\n");
    for turn in 1..=TURNS {
        let t = turn as usize;
        let labels: Vec<String> = (0..3)
            .map(|k| {
                format!(
                    "{} {} {turn}",
                    WORDS[(t + k) % WORDS.len()],
                    WORDS[(t * 7 + k) % WORDS.len()]
                )
            })
            .collect();
        let concepts: Vec<serde_json::Value> = labels
            .iter()
            .enumerate()
            .map(|(k, l)| serde_json::json!({"label": l, "node_type": TYPES[(t + k) % 3], "confidence": 0.9, "stance": 1, "source_quote": l}))
            .collect();
        let mut rels = vec![];
        for k in 0..2 {
            let (a, b) = ((t + k) % 3, (t + k + 1) % 3);
            if b > a {
                rels.push(serde_json::json!({"source": labels[k], "target": labels[k + 1], "edge_type": "leads_to", "confidence": 0.8}));
            }
        }
        let reply = serde_json::json!({"concepts": concepts, "relationships": rels}).to_string();
        let _ = writeln!(
            s,
            "  - turn: {turn}\n    reply: {}",
            serde_json::to_string(&reply).unwrap()
        );
    }
    let scores = serde_json::json!({
        "response_depth": {"score": 4, "rationale": "r"}, "specificity": {"score": 3, "rationale": "r"},
        "certainty": {"score": 3, "rationale": "r"}, "valence": {"score": 3, "rationale": "r"},
        "engagement": {"score": 4, "rationale": "r"}, "intellectual_engagement": {"score": 3, "rationale": "r"}
    })
    .to_string();
    let _ = writeln!(
        s,
        "signal_scoring:\n  - reply: {}",
        serde_json::to_string(&scores).unwrap()
    );
    // Each label proposes the slot named after its first word, so later turns' proposals merge
    // into earlier slots and promote them, as paraphrases do in a real interview.
    s.push_str("slot_discovery:\n");
    for turn in 1..=TURNS {
        let t = turn as usize;
        for node_type in &TYPES[..3] {
            let slots: Vec<serde_json::Value> = (0..3)
                .filter(|k| TYPES[(t + k) % 3] == *node_type)
                .map(|k| {
                    let word = WORDS[(t + k) % WORDS.len()];
                    let label = format!("{word} {} {turn}", WORDS[(t * 7 + k) % WORDS.len()]);
                    serde_json::json!({"slot_name": word, "description": format!("Everything about {word}"), "node_type": node_type, "surface_labels": [label]})
                })
                .collect();
            let reply = serde_json::json!({ "slots": slots }).to_string();
            let _ = writeln!(
                s,
                "  - turn: {turn}\n    contains: \"of type '{node_type}'\"\n    reply: {}",
                serde_json::to_string(&reply).unwrap()
            );
        }
    }
    s.push_str("question_generation:\n  - reply: \"What else matters to you about that?\"\n");
    s
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(name: &str, times: &[Duration]) {
    let mut sorted = times.to_vec();
    sorted.sort();
    println!(
        "  {name:<12} p50 {:>7.2} ms   p95 {:>7.2} ms",
        percentile(&sorted, 0.5).as_secs_f64() * 1e3,
        percentile(&sorted, 0.95).as_secs_f64() * 1e3
    );
}

fn run(label: &str, embedder: Arc<dyn Embedder>, script_path: &Path, dir: &Path, turns: u32) {
    let config = ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"));
    let spec = InterviewSpec {
        methodology: config.methodology("means_end_chain").unwrap(),
        concept: config.concept("oat_milk").unwrap(),
        rubrics: config.rubrics().unwrap(),
        max_turns: TURNS + 10,
    };
    let provider: Arc<dyn LlmProvider> = Arc::new(ScriptedProvider::load(script_path).unwrap());
    let services = Services {
        llm: Arc::new(LlmRouter::single(&provider)),
        embedder,
        settings: PipelineSettings::default(),
    };
    let store = Store::open(dir.join(format!("{}.db", label.replace([',', ' '], "_")))).unwrap();
    let mut interview = Interview::create(store, spec, services, None).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let events = EventSink::new(tx);
    let mut times = Vec::new();
    let mut nodes = 0;
    runtime.block_on(async {
        interview.opening(&events).await.unwrap();
        for turn in 1..=turns {
            let answer = format!("Turn {turn}: I like it because it is creamy, and when I drink it in the morning I feel calm, so I buy it every week.");
            let started = Instant::now();
            let result = interview.answer(&answer, &events).await.unwrap();
            times.push(started.elapsed());
            nodes = result.graph_state.node_count;
            if !result.should_continue {
                println!("  (stopped at turn {turn}: {:?})", result.termination_reason);
                break;
            }
        }
    });
    println!("{label}: {} turns, {nodes} nodes at the end", times.len());
    let mut per_stage: BTreeMap<String, Vec<Duration>> = BTreeMap::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::StageFinished { stage, elapsed, .. } = event {
            per_stage
                .entry(format!("{:>4} {}", stage.number(), stage.name()))
                .or_default()
                .push(elapsed);
        }
    }
    for (stage, times) in &per_stage {
        let mut sorted = times.clone();
        sorted.sort();
        println!(
            "    stage {stage:<26} p50 {:>6.2} ms",
            percentile(&sorted, 0.5).as_secs_f64() * 1e3
        );
    }
    report("turns 1-5", &times[..5.min(times.len())]);
    if times.len() >= 30 {
        report("turns 1-30", &times[..30]);
    }
    if times.len() >= 50 {
        report("turns 45-50", &times[44..50]);
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("bench_script.yaml");
    std::fs::write(&script_path, script()).unwrap();
    let config = ResolveConfig {
        cache_root: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache").into()),
        ..ResolveConfig::from_env(None)
    };
    let started = Instant::now();
    let model: Arc<dyn Embedder> = Arc::new(MiniLmEmbedder::load_with(&config).unwrap());
    println!(
        "MiniLM loaded in {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    // A fresh cache per run, as each run is a new interview process.
    let cached = |m: &Arc<dyn Embedder>| -> Arc<dyn Embedder> {
        Arc::new(CachedEmbedder::new(Arc::clone(m)))
    };
    run("minilm", cached(&model), &script_path, dir.path(), TURNS);
    run(
        "hash",
        Arc::new(HashEmbedder::default()),
        &script_path,
        dir.path(),
        TURNS,
    );
    // Every LLM call takes 300 ms: the turn's wall time shows what the concurrent signal
    // batch and per-type slot discovery save against four calls in a row (1.2 s + overhead).
    let slow = dir.path().join("slow_script.yaml");
    std::fs::write(&slow, format!("latency_ms: 300\n{}", script())).unwrap();
    run("minilm, LLM 300 ms", cached(&model), &slow, dir.path(), 10);
}
