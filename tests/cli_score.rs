//! `interviewer score`: the Path 18 decomposition reproduced through the real binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::process::Command;

use serde_json::Value;

fn score(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_interviewer"))
        .arg("score")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run interviewer");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const PATH18: [&str; 10] = [
    "--methodology",
    "tests/fixtures/valid/seed_style.yaml",
    "--signals",
    "tests/fixtures/valid/path18_signals.json",
    "--node-signals",
    "tests/fixtures/valid/path18_nodes.json",
    "--turn",
    "5",
    "--max-turns",
    "10",
];

fn close(v: &Value, expected: f64) {
    let got = v.as_f64().unwrap_or(f64::NAN);
    assert!((got - expected).abs() < 1e-9, "{got} != {expected}");
}

#[test]
fn json_decomposition_matches_path18() {
    let (code, out, err) = score(&PATH18);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["phase"], "mid");
    assert_eq!(v["selected"]["strategy"], "deepen");
    assert_eq!(v["selected"]["node_id"], "abc-123-def");
    let deepen = &v["strategies"][0];
    assert_eq!(deepen["strategy"], "deepen");
    assert_eq!(deepen["node_id"], "");
    close(&deepen["base_score"], 1.5);
    close(&deepen["phase_multiplier"], 1.3);
    close(&deepen["phase_bonus"], 0.2);
    close(&deepen["final_score"], 2.15);
    assert_eq!(deepen["rank"], 1);
    assert_eq!(deepen["selected"], true);
    let c = &deepen["signal_contributions"];
    assert_eq!(c[0]["name"], "llm.response_depth.low");
    assert_eq!(c[0]["value"], true);
    close(&c[0]["contribution"], 0.8);
    assert_eq!(c[1]["name"], "llm.engagement.high");
    close(&c[1]["contribution"], 0.7);
    // reflect: 0.25 × 0.7 = 0.175, explore: has_complete.false is false → 0.
    assert_eq!(v["strategies"][1]["strategy"], "reflect");
    close(&v["strategies"][1]["final_score"], 0.175);
    assert_eq!(v["strategies"].as_array().unwrap().len(), 3);
    let node = &v["nodes"][0];
    assert_eq!(node["node_id"], "abc-123-def");
    assert_eq!(
        node["signal_contributions"][0]["name"],
        "graph.node.exhaustion_score.low"
    );
    close(&node["final_score"], 1.0);
    close(&node["phase_multiplier"], 1.0);
    close(&v["nodes"][1]["final_score"], 0.0);
}

#[test]
fn table_shows_the_formula() {
    let mut args = PATH18.to_vec();
    args.extend(["--format", "table"]);
    let (code, out, err) = score(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("phase: mid"), "{out}");
    assert!(
        out.contains("deepen") && out.contains("1.5 × 1.3 + 0.2 = 2.15"),
        "{out}"
    );
    assert!(out.contains("Stage 2: nodes for deepen"), "{out}");
    assert!(out.contains("selected: deepen on abc-123-def"), "{out}");
}

#[test]
fn phase_comes_from_signals_without_turn() {
    let dir = tempfile::tempdir().unwrap();
    let signals = dir.path().join("s.json");
    std::fs::write(
        &signals,
        r#"{"meta.interview.phase": "early", "graph.max_depth": 1.0}"#,
    )
    .unwrap();
    let (code, out, err) = score(&[
        "-m",
        "tests/fixtures/valid/seed_style.yaml",
        "-s",
        signals.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["phase"], "early");
    // early: explore × 1.5 + 0.2 = 0.2; reflect 0.7 × 1 = 0.7 wins; node-free → no node.
    assert_eq!(v["selected"]["strategy"], "reflect");
    assert_eq!(v["selected"]["node_id"], Value::Null);
    assert_eq!(v["nodes"], serde_json::json!([]));
}

#[test]
fn every_shipped_methodology_scores() {
    let dir = tempfile::tempdir().unwrap();
    let signals = dir.path().join("s.json");
    std::fs::write(
        &signals,
        r#"{"llm.response_depth": "moderate", "llm.engagement": 0.5, "graph.max_depth": 0.2}"#,
    )
    .unwrap();
    let nodes = dir.path().join("n.json");
    std::fs::write(
        &nodes,
        r#"{"n1": {"graph.node.exhaustion_score": 0.0, "meta.node.opportunity": "fresh"}}"#,
    )
    .unwrap();
    for m in ["means_end_chain", "jobs_to_be_done", "critical_incident"] {
        let (code, out, err) = score(&[
            "-m",
            m,
            "-s",
            signals.to_str().unwrap(),
            "--node-signals",
            nodes.to_str().unwrap(),
            "--turn",
            "4",
            "--max-turns",
            "12",
        ]);
        assert_eq!(code, 0, "{m}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["phase"], "mid", "{m}");
        assert!(v["strategies"].as_array().unwrap().len() >= 5, "{m}");
        assert!(v["selected"]["strategy"].is_string(), "{m}");
    }
}

#[test]
fn bad_inputs_are_reported_not_panicked() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"llm.engagement": [1, 2]}"#).unwrap();
    let (code, _, err) = score(&[
        "-m",
        "tests/fixtures/valid/seed_style.yaml",
        "-s",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("'llm.engagement': a signal value must be a boolean, number or string"),
        "{err}"
    );
    std::fs::write(&bad, "{not json").unwrap();
    let (code, _, err) = score(&[
        "-m",
        "tests/fixtures/valid/seed_style.yaml",
        "-s",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("not valid JSON"), "{err}");
    let (code, _, err) = score(&["-m", "no_such_methodology", "-s", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no methodology named 'no_such_methodology'"),
        "{err}"
    );
    std::fs::write(&bad, r#"{"meta.interview.phase": "halftime"}"#).unwrap();
    let (code, _, err) = score(&[
        "-m",
        "tests/fixtures/valid/seed_style.yaml",
        "-s",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("must be early, mid or late, found 'halftime'"),
        "{err}"
    );
}
