//! The real binary from a cold start, as a researcher runs it: `interviewer interview` with an
//! instant scripted LLM and the real `MiniLM` model, answers typed on stdin.
//!
//! Per run it records when the opening question is printed, when turn 1's result is (the
//! model load included: the answer is sent as soon as the question appears), and the
//! process's resident memory (`VmRSS`, and the peak `VmHWM`) after turn 30. Prints the median
//! and range of five runs; asserts nothing.
//!
//! Run with `cargo bench --bench startup` (Linux: reads `/proc/PID/status`).

mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use interviewer::embed::{ResolveConfig, resolve_model_dir};
use support::{ChildLines, script, status_kib};

const RUNS: usize = 5;
const TURNS: u32 = 30;

struct Run {
    first_question: Duration,
    first_turn: Duration,
    rss_kib: u64,
    peak_kib: u64,
    turns: u32,
}

fn answer(turn: u32) -> String {
    format!("{}\n\n", support::answer(turn))
}

fn one_run(dir: &std::path::Path, model_dir: &std::path::Path, n: usize) -> Result<Run, String> {
    let script_path = dir.join("script.yaml");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_interviewer"))
        .args(["interview", "--concept", "oat_milk", "--answers", "-"])
        .args(["--max-turns", &(TURNS + 10).to_string()])
        .arg("--script")
        .arg(&script_path)
        .arg("--db")
        .arg(dir.join(format!("run{n}.db")))
        .arg("--config-dir")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
        .env("INTERVIEWER_EMBED_MODEL_DIR", model_dir)
        .env("INTERVIEWER_LOG_DIR", dir.join("logs"))
        .env("INTERVIEWER_LLM_CONFIG", dir.join("no-settings.yaml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start interviewer: {e}"))?;
    let pid = child.id();
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = ChildLines::new(child.stdout.take().ok_or("no stdout")?);
    let mut next_line = || lines.next_line();
    let opening = next_line()?;
    let first_question = started.elapsed();
    if !opening.starts_with("[turn 0]") {
        return Err(format!("expected the opening question, got {opening:?}"));
    }
    // The scripted interview runs 45 turns before its depth plateau, so these 30 never meet
    // an end note; a changed script fails the check below with what it printed instead.
    let mut first_turn = Duration::ZERO;
    let mut turns = 0;
    for turn in 1..=TURNS {
        stdin
            .write_all(answer(turn).as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| e.to_string())?;
        let line = next_line()?;
        if !line.starts_with(&format!("[turn {turn} ")) {
            return Err(format!("expected turn {turn}'s result, got {line:?}"));
        }
        if turn == 1 {
            first_turn = started.elapsed();
        }
        turns = turn;
    }
    let rss_kib = status_kib(pid, "VmRSS:")?;
    let peak_kib = status_kib(pid, "VmHWM:")?;
    drop(stdin);
    child.wait().map_err(|e| e.to_string())?;
    Ok(Run {
        first_question,
        first_turn,
        rss_kib,
        peak_kib,
        turns,
    })
}

fn summary(name: &str, mut values: Vec<f64>, unit: &str) {
    values.sort_by(f64::total_cmp);
    let median = values.get(values.len() / 2).copied().unwrap_or_default();
    println!(
        "  {name:<38} median {median:>8.3} {unit}   range {:.3}–{:.3}",
        values.first().copied().unwrap_or_default(),
        values.last().copied().unwrap_or_default()
    );
}

fn main() -> Result<(), String> {
    let config = ResolveConfig {
        cache_root: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache").into()),
        ..ResolveConfig::from_env(None)
    };
    let model_dir = resolve_model_dir(&config).map_err(|e| e.to_string())?.dir;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("script.yaml"), script()).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("no-settings.yaml"), "{}\n").map_err(|e| e.to_string())?;

    let mut runs = Vec::new();
    for n in 0..RUNS {
        runs.push(one_run(dir.path(), &model_dir, n)?);
    }
    let turns = runs.iter().map(|r| r.turns).min().unwrap_or_default();
    println!("interviewer interview, scripted instant LLM, MiniLM, {RUNS} runs of {turns} turns:");
    summary(
        "opening question printed",
        runs.iter()
            .map(|r| r.first_question.as_secs_f64())
            .collect(),
        "s",
    );
    summary(
        "turn 1 printed (model load included)",
        runs.iter().map(|r| r.first_turn.as_secs_f64()).collect(),
        "s",
    );
    let mib = |kib: u64| kib as f64 / 1024.0;
    summary(
        &format!("resident after turn {turns} (VmRSS)"),
        runs.iter().map(|r| mib(r.rss_kib)).collect(),
        "MiB",
    );
    summary(
        "peak resident (VmHWM)",
        runs.iter().map(|r| mib(r.peak_kib)).collect(),
        "MiB",
    );
    Ok(())
}
