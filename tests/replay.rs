//! `interviewer replay` through the real binary: the stored decisions reproduce under the
//! session's own methodology (the scripted demo and a simulation matrix of two methodologies),
//! and under an edited one every replayed decision is what `interviewer score` computes from
//! that turn's stored signals.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;
use std::process::Output;

use crate::common;

fn cli(db: &Path, args: &[&str]) -> Output {
    common::run_binary(&[db], args)
}

fn ok(out: &Output) -> String {
    common::succeeded(out)
}

fn scripted_demo(db: &Path) {
    let script = common::example("oat_milk_script.yaml");
    let answers = common::example("oat_milk_answers.txt");
    ok(&cli(
        db,
        &[
            "--script",
            script.to_str().unwrap(),
            "interview",
            "--concept",
            "oat_milk",
            "--max-turns",
            "11",
            "--answers",
            answers.to_str().unwrap(),
        ],
    ));
}

fn replay_json(db: &Path, session: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["replay", session, "--format", "json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(&cli(db, &args))).unwrap()
}

/// Every turn's replayed decision equals its stored one.
fn assert_reproduced(replay: &serde_json::Value) {
    let turns = replay["turns"].as_array().unwrap();
    assert!(!turns.is_empty());
    for t in turns {
        assert_eq!(t["stored"], t["replayed"], "turn {}", t["turn"]);
        assert_eq!(t["changed"], false);
    }
    assert_eq!(replay["usage_before"], replay["usage_after"]);
}

/// `replay latest` under the session's own methodology changes nothing, and says so in every
/// format; the session is left as it was.
#[test]
fn the_scripted_demo_replays_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("demo.db");
    scripted_demo(&db);
    let before = ok(&cli(&db, &["export", "latest", "--format", "csv"]));
    let replay = replay_json(&db, "latest", &[]);
    assert_eq!(replay["turns"].as_array().unwrap().len(), 10);
    assert_reproduced(&replay);
    assert!(
        replay["limits"]
            .as_str()
            .unwrap()
            .contains("counterfactual")
    );
    let table = ok(&cli(&db, &["replay", "latest"]));
    assert!(table.contains(": 0 of 10 turns changed"), "{table}");
    assert!(table.contains("counterfactual"), "{table}");
    let csv = ok(&cli(&db, &["replay", "latest", "--format", "csv"]));
    assert!(csv.starts_with("turn,changed,stored_strategy,"), "{csv}");
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.split(',').nth(1) == Some("false"))
    );
    // Nothing was written: the scoring export is byte for byte the same.
    assert_eq!(
        ok(&cli(&db, &["export", "latest", "--format", "csv"])),
        before
    );
}

/// The simulation matrix's sessions (two methodologies) replay unchanged too.
#[test]
fn simulation_matrix_sessions_replay_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("m.db");
    let script = common::example("oat_milk_respondent_script.yaml");
    let out_dir = tmp.path().join("out");
    ok(&cli(
        &db,
        &[
            "--script",
            script.to_str().unwrap(),
            "simulate",
            "--concept",
            "oat_milk",
            "--matrix",
            "personas=cooperative,brief",
            "methodologies=means_end_chain,jobs_to_be_done",
            "--turns",
            "5",
            "--seed",
            "3",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    ));
    let store = interviewer::store::Store::open_read_only(&db).unwrap();
    let sessions = interviewer::store::StoreOps::list_sessions(&store).unwrap();
    assert_eq!(sessions.len(), 4);
    drop(store);
    for s in sessions {
        assert_reproduced(&replay_json(&db, &s.id, &[]));
    }
}

/// With `--set` raising one strategy's weight, every replayed decision is what `interviewer
/// score` computes from the turn's stored signals (as the JSON export holds them) under the
/// same edit; at least one decision changes, and the changed turns name what moved.
#[test]
fn an_edited_weight_replays_as_score_computes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("demo.db");
    scripted_demo(&db);
    let edit = "strategies.reflect.signal_weights.graph.node_count=0.5";
    let replay = replay_json(&db, "latest", &["--set", edit]);
    let turns = replay["turns"].as_array().unwrap();
    assert!(
        turns.iter().any(|t| t["changed"] == true),
        "the edit should change a decision"
    );
    for t in turns.iter().filter(|t| t["changed"] == true) {
        assert!(!t["moved"].as_array().unwrap().is_empty(), "{t}");
    }

    // The same edit, written as a methodology file for `score`.
    let text = std::fs::read_to_string(
        Path::new(common::MANIFEST).join("config/methodologies/means_end_chain.yaml"),
    )
    .unwrap();
    let mut m: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let reflect = m["strategies"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["name"] == "reflect")
        .unwrap();
    reflect["signal_weights"]["graph.node_count"] = serde_json::json!(0.5);
    let edited = tmp.path().join("edited.yaml");
    std::fs::write(&edited, m.to_string()).unwrap();

    let export: serde_json::Value =
        serde_json::from_str(&ok(&cli(&db, &["export", "latest", "--format", "json"]))).unwrap();
    for (t, stored) in turns.iter().zip(export["turns"].as_array().unwrap()) {
        let result = &stored["turn_result"];
        let turn = result["turn_number"].as_u64().unwrap();
        assert_eq!(t["turn"].as_u64().unwrap(), turn);
        let signals = tmp.path().join(format!("signals{turn}.json"));
        std::fs::write(&signals, result["signals"].to_string()).unwrap();
        let mut args = vec![
            "score".to_owned(),
            "-m".to_owned(),
            edited.to_str().unwrap().to_owned(),
            "-s".to_owned(),
            signals.to_str().unwrap().to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
        ];
        // Turn 1 targets no node, as in the pipeline.
        if turn > 1 {
            let nodes = tmp.path().join(format!("nodes{turn}.json"));
            std::fs::write(&nodes, result["node_signals"].to_string()).unwrap();
            args.push("--node-signals".to_owned());
            args.push(nodes.to_str().unwrap().to_owned());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let scored: serde_json::Value = serde_json::from_str(&ok(&cli(&db, &args))).unwrap();
        assert_eq!(
            t["replayed"]["strategy"], scored["selected"]["strategy"],
            "turn {turn}"
        );
        let node = scored["selected"]["node_id"].as_str().unwrap_or_default();
        assert_eq!(
            t["replayed"]["node_id"].as_str().unwrap(),
            node,
            "turn {turn}"
        );
    }
}

/// A `--set` that is not a number, names no strategy, or fails validation is a usage error
/// that says what and where; the session is not touched.
#[test]
fn bad_edits_are_usage_errors_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("demo.db");
    scripted_demo(&db);
    for (edit, says) in [
        (
            "strategies.reflect.signal_weights.graph.node_count=lots",
            "'lots' is not a number",
        ),
        (
            "strategies.nope.signal_weights.graph.node_count=1",
            "no strategy 'nope'",
        ),
        (
            "strategies.reflect.signal_weights.graph.node_cout=1",
            "signal_weights.graph.node_cout",
        ),
    ] {
        let out = cli(&db, &["replay", "latest", "--set", edit]);
        assert_eq!(out.status.code(), Some(2), "{edit}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{edit}: {err}");
    }
}
