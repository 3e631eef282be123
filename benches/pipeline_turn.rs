//! Pipeline overhead per turn: a 50-turn interview against an instant scripted LLM on a real
//! `SQLite` file, so what is measured is everything the engine does around the model calls —
//! prompts, SRL, reply parsing, embedding, dedup, slots, metrics, signals, scoring and twelve
//! commits.
//!
//! Two embedders: the real `MiniLM` model, and a hashing embedder that stands in for "no model
//! inference". Prints p50 / p95 of turns 1–5, 1–30 and 45–50; asserts nothing. After each run,
//! what the terminal view adds: folding the session's last snapshot into the app's state and
//! drawing the busiest screen (160 × 48) from it, against the 60 Hz frame budget.
//!
//! Run with `cargo bench --bench pipeline_turn`.

#![allow(
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::unwrap_used,
    clippy::expect_used
)]

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use interviewer::config::ConfigDir;
use interviewer::embed::{CachedEmbedder, Embedder, HashEmbedder, MiniLmEmbedder, ResolveConfig};
use interviewer::llm::{LlmProvider, LlmRouter, ScriptedProvider};
use interviewer::pipeline::{
    Event, EventSink, Interview, InterviewSpec, PipelineSettings, Services,
};
use interviewer::session::{Reports, SessionEvent};
use interviewer::signals::Catalog;
use interviewer::store::Store;
use interviewer::tui::{App, FRAME_BUDGET, FixedClock, Mode, SessionInfo, Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use support::{TURNS, percentile, report, script};

fn run(label: &str, embedder: Arc<dyn Embedder>, script_path: &Path, dir: &Path, turns: u32) {
    let config = ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"));
    let spec = InterviewSpec {
        methodology: config.methodology("means_end_chain", &Catalog).unwrap(),
        concept: config.concept("oat_milk").unwrap(),
        rubrics: config.rubrics().unwrap(),
        max_turns: TURNS + 10,
        understanding: interviewer::domain::Understanding::Llm,
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
    let mut totals = Vec::new();
    let mut nodes = 0;
    runtime.block_on(async {
        interview.opening(&events).await.unwrap();
        for turn in 1..=turns {
            let answer = support::answer(turn);
            let started = Instant::now();
            let result = interview.answer(&answer, &events).await.unwrap();
            times.push(started.elapsed());
            // As every driver does while the respondent reads the question and answers: the
            // deferred slot discovery, then the journal copy. Counted in the per-turn total,
            // not in the time to the question.
            interview.discover_deferred_slots(&events).await.unwrap();
            totals.push(started.elapsed());
            interview.flush_journal();
            nodes = result.graph_state.node_count;
            if !result.should_continue {
                println!(
                    "  (stopped at turn {turn}: {:?})",
                    result.termination_reason
                );
                break;
            }
        }
    });
    println!("{label}: {} turns, {nodes} nodes at the end", times.len());
    let all = with_snapshot(&interview, &mut rx);
    // Per stage: p50 over turns 1-30 and over turns 45-50, to see what grows with the graph.
    let mut per_stage: BTreeMap<String, (Vec<Duration>, Vec<Duration>)> = BTreeMap::new();
    for event in &all {
        if let Some(Event::StageFinished {
            turn,
            stage,
            elapsed,
            ..
        }) = event.pipeline()
        {
            let entry = per_stage
                .entry(format!("{:>4} {}", stage.number(), stage.name()))
                .or_default();
            match turn {
                1..=30 => entry.0.push(*elapsed),
                45..=50 => entry.1.push(*elapsed),
                _ => {}
            }
        }
    }
    let p50 = |times: &[Duration]| {
        let mut sorted = times.to_vec();
        sorted.sort();
        if sorted.is_empty() {
            "      -".to_owned()
        } else {
            format!("{:>7.2}", percentile(&sorted, 0.5).as_secs_f64() * 1e3)
        }
    };
    println!("    stage p50 (ms)                   turns 1-30  turns 45-50");
    for (stage, (early, late)) in &per_stage {
        println!("    {stage:<30} {}      {}", p50(early), p50(late));
    }
    report(
        "turns 1-5, answer to question",
        &times[..5.min(times.len())],
    );
    report(
        "turns 1-5, with the deferred slot discovery",
        &totals[..5.min(totals.len())],
    );
    if times.len() >= 30 {
        report("turns 1-30, answer to question", &times[..30]);
        report(
            "turns 1-30, with the deferred slot discovery",
            &totals[..30],
        );
    }
    if times.len() >= 50 {
        report("turns 45-50", &times[44..50]);
    }
    view_timings(SessionInfo::of(&interview), &all);
}

/// The pipeline's events so far, then the snapshot a view receives after the last turn.
fn with_snapshot(
    interview: &Interview,
    pipeline: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
) -> Vec<SessionEvent> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    interviewer::session::publish_snapshot(interview, &Reports::new(tx));
    let mut all: Vec<SessionEvent> = std::iter::from_fn(|| pipeline.try_recv().ok())
        .map(SessionEvent::Pipeline)
        .collect();
    all.extend(std::iter::from_fn(|| rx.try_recv().ok()));
    all
}

/// Folding the last snapshot into an app that has seen the whole interview, and drawing the
/// 160 × 48 screen from it, each 50 times.
fn view_timings(info: SessionInfo, events: &[SessionEvent]) {
    let clock = Arc::new(FixedClock(Instant::now()));
    let mut app = App::new(info, Mode::Respondent, Theme::monochrome(), clock);
    for event in events {
        app.apply(event.clone());
    }
    let Some(snapshot) = events
        .iter()
        .rev()
        .find(|e| matches!(e, SessionEvent::Snapshot(_)))
    else {
        return println!("  view: no snapshot to fold");
    };
    let fold: Vec<Duration> = (0..50)
        .map(|_| {
            let started = Instant::now();
            app.apply(snapshot.clone());
            started.elapsed()
        })
        .collect();
    app.ui.area = Rect::new(0, 0, 160, 48);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    let draw: Vec<Duration> = (0..50)
        .map(|_| {
            let started = Instant::now();
            terminal
                .draw(|frame| frame.render_widget(&app, frame.area()))
                .unwrap();
            started.elapsed()
        })
        .collect();
    println!("  view (frame budget {FRAME_BUDGET:?}):");
    report("fold", &fold);
    report("draw 160x48", &draw);
}

fn main() {
    // `cargo bench --bench pipeline_turn -- hash` runs only the runs whose label contains an
    // argument (cargo adds `--bench`, which is skipped).
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |label: &str| only.is_empty() || only.iter().any(|o| label.contains(o.as_str()));
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("bench_script.yaml");
    std::fs::write(&script_path, script()).unwrap();
    let config = ResolveConfig {
        cache_root: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache").into()),
        ..ResolveConfig::from_env(None)
    };
    // Loaded once, and only when a run needs it.
    let model: std::cell::OnceCell<Arc<dyn Embedder>> = std::cell::OnceCell::new();
    let minilm = || {
        Arc::clone(model.get_or_init(|| {
            let started = Instant::now();
            let model = Arc::new(MiniLmEmbedder::load_with(&config).unwrap());
            println!(
                "MiniLM loaded in {:.0} ms",
                started.elapsed().as_secs_f64() * 1e3
            );
            model
        }))
    };
    // A fresh cache per run, as each run is a new interview process.
    let cached = |m: Arc<dyn Embedder>| -> Arc<dyn Embedder> { Arc::new(CachedEmbedder::new(m)) };
    if wanted("minilm") {
        run("minilm", cached(minilm()), &script_path, dir.path(), TURNS);
    }
    if wanted("hash") {
        run(
            "hash",
            Arc::new(HashEmbedder::default()),
            &script_path,
            dir.path(),
            TURNS,
        );
    }
    // Every LLM call takes 300 ms: the time from answer to question shows what the concurrent
    // signal batch and the deferred slot discovery save against four calls in a row (1.2 s +
    // overhead): two calls (extraction ∥ scoring, then the question) are left on that path.
    let slow = dir.path().join("slow_script.yaml");
    std::fs::write(&slow, format!("latency_ms: 300\n{}", script())).unwrap();
    if wanted("minilm, LLM 300 ms") {
        run(
            "minilm, LLM 300 ms",
            cached(minilm()),
            &slow,
            dir.path(),
            10,
        );
    }
}
