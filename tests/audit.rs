//! The audit trail of scripted interviews: every event type appears, every line parses with
//! `ts`, `event`, `session` and `turn`, a failed and resumed turn is recorded as such, and
//! nothing secret or prompt-like is written.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use interviewer::audit::{AUDIT_DIR, AuditTrail, TOP_ALTERNATIVES};
use interviewer::pipeline::{Event, EventSink, Interview, Pending, Services};
use interviewer::store::Store;
use serde_json::Value;

/// Runs the scripted interview on `db` (resuming a failed turn once) with a trail attached.
async fn run(db: &Path, id: &str, services: Services) -> AuditTrail {
    let store = Store::open(db).unwrap();
    let mut interview = match Interview::open(store, id, common::spec(11), services.clone()) {
        Ok(i) => i,
        Err(_) => Interview::create(
            Store::open(db).unwrap(),
            common::spec(11),
            services,
            Some(id.into()),
        )
        .unwrap(),
    };
    let trail = AuditTrail::for_store(interview.store(), id)
        .unwrap()
        .unwrap();
    let events = EventSink::none().with_observer(trail.clone());
    let answers = common::answers();
    if interview.opening(&events).await.is_err() {
        return trail;
    }
    loop {
        let result = match interview.pending().unwrap() {
            Pending::Answer { turn, .. } => {
                interview.answer(&answers[turn as usize - 1], &events).await
            }
            Pending::Resume { .. } => interview.resume(&events).await,
            Pending::Finished { .. } => break,
            Pending::Opening => panic!("the opening was asked"),
        };
        // Report a failure as the session task does.
        if let Err(e) = result {
            events.emit(Event::TurnFailed {
                turn: e.turn,
                stage: e.stage,
                error: e.error.to_string(),
            });
            break;
        }
    }
    trail
}

fn read(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn is_rfc3339_utc(ts: &str) -> bool {
    let b = ts.as_bytes();
    b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z'
        && ts
            .chars()
            .enumerate()
            .all(|(i, c)| [4, 7, 10, 13, 16, 19, 23].contains(&i) || c.is_ascii_digit())
}

#[tokio::test]
async fn a_scripted_run_records_every_event_type() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let trail = run(&db, "audit-1", common::services()).await;
    trail.flush();
    assert!(trail.error().is_none());
    let path = tmp.path().join(AUDIT_DIR).join("audit-1.jsonl");
    assert_eq!(trail.path(), path);
    let lines = read(&path);

    let mut by_type: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for line in &lines {
        let keys: Vec<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .take(4)
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["ts", "event", "session", "turn"], "{line}");
        assert!(is_rfc3339_utc(line["ts"].as_str().unwrap()), "{line}");
        assert_eq!(line["session"], "audit-1");
        assert!(line["turn"].is_u64());
        by_type
            .entry(line["event"].as_str().unwrap().to_owned())
            .or_default()
            .push(line);
    }
    assert_eq!(
        by_type.keys().map(String::as_str).collect::<Vec<_>>(),
        ["llm_call", "stage", "strategy_decision", "termination"]
    );

    // Twelve stages per turn, in order, each with its timing.
    let stages = &by_type["stage"];
    assert_eq!(stages.len(), 12 * 10);
    for s in stages {
        assert_eq!(s["outcome"], "ok");
        assert!(s["elapsed_ms"].is_u64() && s["summary"].is_string());
        assert!(is_rfc3339_utc(s["started"].as_str().unwrap()));
        assert!(s["started"].as_str().unwrap() <= s["ts"].as_str().unwrap());
    }
    assert_eq!(stages[0]["name"], "context_loading");
    assert_eq!(stages[11]["name"], "scoring_persistence");
    assert_eq!(stages[11]["number"], "10");

    // One call per model use: the opening question (turn 0), then every role of every turn.
    let calls = &by_type["llm_call"];
    assert_eq!(calls[0]["turn"], 0);
    assert_eq!(calls[0]["role"], "question_generation");
    for c in calls {
        for key in [
            "role",
            "provider",
            "model",
            "tokens_in",
            "tokens_out",
            "latency_ms",
            "cost_usd",
            "attempts",
            "retries",
            "outcome",
        ] {
            assert!(c.get(key).is_some(), "{key} missing: {c}");
        }
        assert!(c["cost_usd"].is_null(), "scripted calls have no price");
        assert_eq!(c["outcome"], "ok");
    }
    let roles: std::collections::BTreeSet<&str> =
        calls.iter().map(|c| c["role"].as_str().unwrap()).collect();
    assert!(roles.contains("extraction") && roles.contains("signal_scoring"));

    // A decision per turn, with the winner first among the top alternatives.
    let decisions = &by_type["strategy_decision"];
    assert_eq!(decisions.len(), 10);
    for (i, d) in decisions.iter().enumerate() {
        assert_eq!(d["turn"], i + 1);
        assert_eq!(d["by"], "engine");
        let alternatives = d["alternatives"].as_array().unwrap();
        assert_eq!(alternatives.len(), TOP_ALTERNATIVES);
        assert_eq!(alternatives[0]["strategy"], d["strategy"]);
        assert!(d["phase"].is_string());
    }
    assert!(decisions[0]["focus"].is_null(), "turn 1 targets no node");
    assert!(decisions.iter().any(|d| d["focus"]["label"].is_string()));

    let end = &by_type["termination"];
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["reason"], "Closing strategy selected");
    assert_eq!(end[0]["turn"], 10);

    // Prompts and replies never reach the trail: no answer text appears in it.
    let text = std::fs::read_to_string(&path).unwrap();
    for answer in common::answers() {
        let probe: String = answer.chars().take(40).collect();
        assert!(!text.contains(&probe), "answer text in the trail: {probe}");
    }
}

#[tokio::test]
async fn a_failed_turn_and_its_resumption_are_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let broken = tmp.path().join("broken.yaml");
    let script = std::fs::read_to_string(common::example("oat_milk_script.yaml")).unwrap();
    std::fs::write(
        &broken,
        script.replacen(
            "extraction:\n",
            "extraction:\n  - turn: 2\n    error: timeout\n",
            1,
        ),
    )
    .unwrap();
    let first = run(&db, "audit-2", common::services_with(&broken)).await;
    first.flush();
    drop(first);
    // The same session continues with a working script and appends to the same file.
    let second = run(&db, "audit-2", common::services()).await;
    second.flush();
    let lines = read(second.path());

    let failed: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "stage" && l["outcome"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["turn"], 2);
    assert_eq!(failed[0]["name"], "extraction");
    assert!(!failed[0]["error"].as_str().unwrap().is_empty());
    let failed_call = lines
        .iter()
        .find(|l| l["event"] == "llm_call" && l["outcome"] != "ok")
        .expect("the failed call is recorded");
    assert_eq!(failed_call["role"], "extraction");
    assert!(
        failed_call["outcome"]
            .as_str()
            .unwrap()
            .starts_with("error")
    );

    let resumed: Vec<&str> = lines
        .iter()
        .filter(|l| l["event"] == "stage" && l["outcome"] == "resumed")
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        resumed,
        ["context_loading", "utterance_saving", "srl_preprocessing"],
        "stages before the failure are restored, not re-run"
    );
    assert!(lines.iter().any(|l| l["event"] == "termination"));
    let turn_two_decisions = lines
        .iter()
        .filter(|l| l["event"] == "strategy_decision" && l["turn"] == 2)
        .count();
    assert_eq!(turn_two_decisions, 1);
}
