//! `interviewer import` at study scale, as a researcher runs it: 40 transcripts of 20
//! exchanges each, imported with offline understanding (no LLM; the real `MiniLM` model), then
//! `analyze` over them. Target (issue: import and coach): the import in ≤ 60 s and the
//! analysis in ≤ 2 s on 2 cores.
//!
//! The transcripts are built from the development corpora's questions and answers (never the
//! held-out one): each respondent turn joins two corpus answers, paired differently in every
//! transcript, so no two answers are the same text and the embedding cache gets no free hits
//! on whole answers, while concepts recur across respondents as they do in a real study.
//!
//! Run with `cargo bench --bench import` (`IMPORT_BENCH_DB=PATH` keeps the database). Prints
//! the times; asserts nothing.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::fmt::Write as _;
use std::process::Command;
use std::time::Instant;

use interviewer::embed::{ResolveConfig, resolve_model_dir};

const TRANSCRIPTS: usize = 40;
const EXCHANGES: usize = 20;

#[derive(serde::Deserialize)]
struct Corpus {
    answers: Vec<Entry>,
}

#[derive(serde::Deserialize)]
struct Entry {
    question: String,
    answer: String,
}

fn corpus() -> Vec<Entry> {
    let mut all = Vec::new();
    for name in ["extraction.yaml", "development_more.yaml"] {
        let path = format!("{}/tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let corpus: Corpus = serde_saphyr::from_str(&text).unwrap();
        all.extend(corpus.answers);
    }
    all
}

/// Transcript `t` as plain text with `Interviewer:`/`Respondent:` labels and times.
fn transcript(t: usize, corpus: &[Entry]) -> String {
    let n = corpus.len();
    let mut text = format!("Study interview {t}\n\n");
    let mut seconds = 0;
    for e in 0..EXCHANGES {
        let a = (t * EXCHANGES + e) % n;
        let b = (a * 7 + t + 1) % n;
        let clock = |s: u32| format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
        let _ = writeln!(
            text,
            "[{}] Interviewer: {}",
            clock(seconds),
            corpus[a].question
        );
        seconds += 8;
        let _ = writeln!(
            text,
            "[{}] Respondent: {} {}",
            clock(seconds),
            corpus[a].answer.trim(),
            corpus[b].answer.trim()
        );
        seconds += 40;
    }
    let _ = writeln!(text, "[{}] Interviewer: Thank you, that's all.", {
        let s = seconds;
        format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    });
    text
}

fn main() {
    let model_dir = resolve_model_dir(&ResolveConfig::from_env(None))
        .unwrap()
        .dir;
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus();
    let mut files = Vec::new();
    for t in 0..TRANSCRIPTS {
        let path = dir.path().join(format!("interview{t:02}.txt"));
        std::fs::write(&path, transcript(t, &corpus)).unwrap();
        files.push(path);
    }
    std::fs::write(dir.path().join("no-settings.yaml"), "{}\n").unwrap();
    // `IMPORT_BENCH_DB=PATH` keeps the study database (to profile `analyze` on it).
    let db = std::env::var_os("IMPORT_BENCH_DB")
        .map_or_else(|| dir.path().join("study.db"), std::path::PathBuf::from);
    let _ = std::fs::remove_file(&db);
    let run = |args: &[&str]| {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_interviewer"))
            .arg("--db")
            .arg(&db)
            .arg("--config-dir")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
            .args(["--provider", "none"])
            .args(args)
            .env("INTERVIEWER_EMBED_MODEL_DIR", &model_dir)
            .env("INTERVIEWER_LOG_DIR", dir.path().join("logs"))
            .env(
                "INTERVIEWER_LLM_CONFIG",
                dir.path().join("no-settings.yaml"),
            )
            .output()
            .unwrap();
        let elapsed = started.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (elapsed, String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let mut args = vec!["import", "--concept", "oat_milk"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let (import, out) = run(&args);
    let summary = out.lines().last().unwrap_or_default().to_owned();
    let (analyze, report) = run(&["analyze", "--concept", "oat_milk"]);
    let header = report.lines().nth(2).unwrap_or_default().to_owned();
    println!(
        "import: {TRANSCRIPTS} transcripts × {EXCHANGES} exchanges in {:.1} s ({:.0} ms an \
         answer; {summary})",
        import.as_secs_f64(),
        import.as_secs_f64() * 1000.0 / (TRANSCRIPTS * EXCHANGES) as f64
    );
    println!("analyze: {:.2} s ({header})", analyze.as_secs_f64());
}
