//! `interviewer interview` from the outside: JSON lines, exit codes, and what it says when it
//! cannot go on.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

fn interview(db: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Output {
    let answers = common::example("oat_milk_answers.txt");
    let mut all = vec![
        "interview",
        "--concept",
        "oat_milk",
        "--max-turns",
        "11",
        "--answers",
        answers.to_str().unwrap(),
    ];
    all.extend_from_slice(extra);
    common::run_binary_with(&[db], &all, envs)
}

fn script() -> String {
    common::example("oat_milk_script.yaml")
        .display()
        .to_string()
}

#[test]
fn json_mode_prints_one_turn_result_per_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = interview(
        &tmp.path().join("i.db"),
        &["--json", "--script", &script()],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let turns: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(turns.len(), 10);
    for (i, t) in turns.iter().enumerate() {
        assert_eq!(t["turn_number"], i + 1);
        for key in [
            "extracted",
            "graph_state",
            "scoring",
            "strategy_selected",
            "next_question",
            "should_continue",
            "latency_ms",
            "signals",
            "strategy_alternatives",
            "termination_reason",
            "canonical_graph",
            "graph_comparison",
            "nodes_added",
            "edges_added",
            "saturation_metrics",
            "node_signals",
            "score_decomposition",
        ] {
            assert!(t.get(key).is_some(), "turn {}: {key} missing", i + 1);
        }
    }
    assert_eq!(turns[9]["termination_reason"], "Closing strategy selected");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("interview finished: Closing strategy selected"),
        "{stderr}"
    );
}

#[test]
fn a_missing_provider_or_bad_setting_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    // The scripted provider named without a script.
    let out = interview(&db, &["--provider", "scripted"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--script"));
    // A hosted provider without its key: the message names the role, the variable and where
    // the provider was chosen, and never a key.
    let out = interview(
        &db,
        &[],
        &[
            ("LLM_EXTRACTION_PROVIDER", "anthropic"),
            ("ANTHROPIC_API_KEY", ""),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ANTHROPIC_API_KEY") && stderr.contains("env LLM_EXTRACTION_PROVIDER"),
        "{stderr}"
    );
    let out = interview(&db, &["--provider", "gemini"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown provider 'gemini'"));
    let out = interview(
        &db,
        &["--script", &script()],
        &[("LLM_EXTRACTION_TIMEOUT", "soon")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("LLM_EXTRACTION_TIMEOUT='soon'"));
    let out = interview(
        &db,
        &["--script", &script(), "--resume", "no-such-session"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-session"));
}

#[test]
fn a_failing_model_exits_3_and_the_session_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let broken = tmp.path().join("broken.yaml");
    let text = std::fs::read_to_string(script()).unwrap();
    std::fs::write(
        &broken,
        text.replacen(
            "extraction:\n",
            "extraction:\n  - turn: 2\n    error: timeout\n",
            1,
        ),
    )
    .unwrap();
    let out = interview(&db, &["--script", broken.to_str().unwrap()], &[]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("turn 2 failed in stage 3 (extraction)"),
        "{stderr}"
    );
    assert!(stderr.contains("--resume"), "{stderr}");
    // With a working script the same command continues from turn 2 to the end.
    let out = interview(&db, &["--script", &script(), "--resume", "latest"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("[turn 2 "), "{stdout}");
    assert!(stdout.contains("[turn 10 "), "{stdout}");
}

#[test]
fn the_log_has_a_span_per_stage_per_turn_with_its_elapsed_time() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    let out = interview(
        &tmp.path().join("i.db"),
        &["--json", "--script", &script()],
        &[
            ("INTERVIEWER_LOG", "interviewer=info"),
            ("INTERVIEWER_LOG_DIR", logs.to_str().unwrap()),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut text = String::new();
    for entry in std::fs::read_dir(&logs).unwrap() {
        text.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    let closed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("stage{") && l.contains(" close "))
        .collect();
    for turn in 1..=10 {
        for stage in interviewer::pipeline::Stage::ALL {
            let needle = format!("turn={turn} stage=\"{}\" elapsed_ms=", stage.name());
            let lines: Vec<&&str> = closed.iter().filter(|l| l.contains(&needle)).collect();
            assert_eq!(lines.len(), 1, "turn {turn}, {}: {lines:?}", stage.name());
            assert!(lines[0].contains("outcome=\"ok"), "{}", lines[0]);
        }
        assert!(
            text.lines().any(|l| l.contains("turn{session=")
                && l.contains(&format!(" turn={turn} elapsed_ms="))
                && l.contains(" close ")),
            "no closed span of turn {turn}"
        );
    }
}

#[test]
fn the_none_provider_interviews_from_templates_and_reproducibly() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("json.db");
    let out = crate::embedded_default::run_headless(&db, "none", true, crate::common::CACHE_ROOT);
    crate::embedded_default::check_run(&db, &out);
    // The questions, run after run, byte for byte.
    let first = crate::embedded_default::run_headless(
        &tmp.path().join("a.db"),
        "none",
        false,
        crate::common::CACHE_ROOT,
    );
    let second = crate::embedded_default::run_headless(
        &tmp.path().join("b.db"),
        "none",
        false,
        crate::common::CACHE_ROOT,
    );
    assert!(first.status.success() && second.status.success());
    let strip_latency = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                // `[turn 3 · deepen → x · +2 nodes +1 edges · 48 ms] question`: the time varies.
                match (l.rfind(" · "), l.find("] ")) {
                    (Some(a), Some(b)) if a < b => format!("{}{}", &l[..a], &l[b..]),
                    _ => l.to_owned(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip_latency(&first), strip_latency(&second));
    assert_eq!(
        crate::crash_resume::snapshot(&tmp.path().join("a.db")),
        crate::crash_resume::snapshot(&tmp.path().join("b.db"))
    );
}

/// A program that answers each question as it appears (a pipe, not a file read to its end)
/// sees the opening question before it has written anything, and each turn's result after
/// its answer.
#[test]
fn answers_on_stdin_are_asked_for_one_question_at_a_time() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::Duration;

    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_interviewer"))
        .arg("--db")
        .arg(tmp.path().join("pipe.db"))
        .arg("--config-dir")
        .arg(Path::new(common::MANIFEST).join("config"))
        .args(["interview", "--provider", "none", "--concept", "oat_milk"])
        .args(["--max-turns", "5", "--answers", "-"])
        .env("INTERVIEWER_CACHE_DIR", common::CACHE_ROOT)
        .env_remove("INTERVIEWER_SCRIPT")
        .env_remove("INTERVIEWER_CRASH_AT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    // Nothing has been written yet: a driver that waited for stdin before showing the question
    // would never print it. The bound only keeps a broken build from hanging the suite.
    let opening = rx.recv_timeout(Duration::from_secs(300));
    let Ok(opening) = opening else {
        let _ = child.kill();
        panic!("no opening question before any answer was written");
    };
    assert!(opening.starts_with("[turn 0] "), "{opening}");
    stdin
        .write_all(b"I switched to oat milk because it froths well in my latte.\n\n")
        .unwrap();
    stdin.flush().unwrap();
    let first = rx.recv_timeout(Duration::from_secs(300)).unwrap();
    assert!(first.starts_with("[turn 1 "), "{first}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// `interviewer --db DB ARGS…` with the shipped config and stdin, stdout and stderr not a
/// terminal.
fn bare(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_interviewer"))
        .arg("--db")
        .arg(db)
        .arg("--config-dir")
        .arg(Path::new(common::MANIFEST).join("config"))
        .args(args)
        .env("INTERVIEWER_CACHE_DIR", common::CACHE_ROOT)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn nothing_is_stored_by_a_command_that_cannot_run() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    // The terminal app without a terminal: refused before a session exists.
    for args in [
        &["new", "--concept", "oat_milk"][..],
        &["resume", "latest"],
        &[],
    ] {
        let out = bare(&db, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("needs a terminal on standard input and output")
                && stderr.contains("interviewer interview --answers"),
            "{stderr}"
        );
    }
    assert!(!db.exists(), "no database was created");
    // Resuming from a database that does not exist.
    let out = bare(
        &db,
        &[
            "interview",
            "--resume",
            "latest",
            "--provider",
            "none",
            "--answers",
            "-",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no database at"), "{stderr}");
    assert!(!db.exists(), "no database was created");
}

#[test]
fn a_methodology_path_that_is_not_a_file_says_what_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let folder = tmp.path().join("methods.yaml");
    std::fs::create_dir(&folder).unwrap();
    let fifo = tmp.path().join("pipe.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let missing = tmp.path().join("missing.yaml");
    for (path, says) in [
        (folder.as_path(), "is a folder, not a methodology file"),
        (
            fifo.as_path(),
            "is a named pipe (FIFO), not a methodology file",
        ),
        (
            Path::new("/dev/null"),
            "is a device, not a methodology file",
        ),
        (missing.as_path(), "No such file or directory"),
    ] {
        let out = bare(
            &db,
            &[
                "interview",
                "--concept",
                "oat_milk",
                "--provider",
                "none",
                "--answers",
                "-",
                "--methodology",
                path.to_str().unwrap(),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&path.display().to_string()) && stderr.contains(says),
            "{stderr}"
        );
    }
}

/// Mistakes that need no model are reported before the models load: with the local model
/// not cached and no way to fetch it, a folder passed as the methodology, an unknown concept
/// and a resume from a missing database each fail with their own message, and nothing is
/// fetched.
#[test]
fn input_mistakes_are_reported_before_any_model_is_fetched() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let folder = tmp.path().join("methods.yaml");
    std::fs::create_dir(&folder).unwrap();
    let empty_cache = tmp.path().join("cache");
    let folder_arg = folder.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--concept", "oat_milk", "--methodology", folder_arg],
            "is a folder, not a methodology file",
        ),
        (vec!["--concept", "no_such_concept"], "no_such_concept"),
        (vec!["--resume", "latest"], "no database at"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_interviewer"))
            .arg("--db")
            .arg(&db)
            .arg("--config-dir")
            .arg(Path::new(common::MANIFEST).join("config"))
            .args(["interview", "--provider", "local", "--answers", "-"])
            .args(&args)
            .env("INTERVIEWER_CACHE_DIR", &empty_cache)
            .env("INTERVIEWER_PYTHON", "/bin/false")
            .env("HF_HUB_OFFLINE", "1")
            .env_remove("INTERVIEWER_SCRIPT")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("fetching") && !stderr.contains("local model"),
            "{args:?}: {stderr}"
        );
    }
    assert!(!db.exists(), "no database was created");
}

/// Seen in a live interview: after the first answer (no node chosen yet, so the question
/// quotes the concept raised last), a struggle was asked about as a thing to get right ("How
/// would you know that 'start nodding at the wheel' had been done well?"). The quoted concept's
/// stance picks the phrasings there too.
#[test]
fn a_struggle_quoted_after_the_first_answer_is_not_asked_about_as_a_goal() {
    let tmp = tempfile::tempdir().unwrap();
    let answers = tmp.path().join("answers.txt");
    std::fs::write(
        &answers,
        "I'd just come off a night shift and had to drive home on the motorway. I stopped at \
         the drive-through and got a large americano, because if I don't I start nodding at \
         the wheel around junction twelve.\n",
    )
    .unwrap();
    let out = common::run_binary(
        &[&tmp.path().join("s.db")],
        &[
            "interview",
            "--concept",
            "coffee_jtbd",
            "--provider",
            "none",
            "--answers",
            answers.to_str().unwrap(),
            "--json",
        ],
    );
    let turns: Vec<serde_json::Value> = common::succeeded(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first = &turns[0];
    let question = first["next_question"].as_str().unwrap().to_lowercase();
    let struggle = first["nodes_added"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["node_type"] == "pain_point")
        .filter_map(|n| n["label"].as_str())
        .find(|l| question.contains(&l.to_lowercase()));
    assert!(
        struggle.is_some(),
        "the question quotes no struggle: {question}"
    );
    for presuming in [
        "done well",
        "goes well",
        "trying to achieve with",
        "taken care of",
    ] {
        assert!(!question.contains(presuming), "{question}");
    }
}
