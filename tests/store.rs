//! The storage layer through its public API, on real `SQLite` files in temporary directories:
//! migrations and file permissions, a round trip of every table, atomicity of failed writes,
//! the session driving lock (across handles and across processes), refusal of newer files, and
//! the async handle.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::float_cmp
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use interviewer::domain::{
    FocusEntry, Phase, ResponseDepth, SaturationMetrics, SessionState, VelocityState,
};
use interviewer::graph::records::{
    CanonicalEdge, CanonicalSlot, KgEdge, KgNode, SlotMapping, SlotStatus,
};
use interviewer::store::{
    AsyncStore, LlmUsage, NewSession, SCHEMA_VERSION, ScoringRecord, SessionStatus, Speaker, Store,
    StoreError, StoreOps, UsageTotals,
};
use serde_json::json;
use tempfile::TempDir;

const TABLES: [&str; 11] = [
    "sessions",
    "utterances",
    "utterance_speech",
    "kg_nodes",
    "kg_edges",
    "canonical_slots",
    "surface_to_slot_mapping",
    "canonical_edges",
    "scoring_history",
    "stage_checkpoints",
    "llm_usage",
];

fn temp_store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("interviewer.db")).unwrap();
    (dir, store)
}

fn state(turn_count: u32) -> SessionState {
    SessionState {
        methodology: "means_end_chain".into(),
        concept_id: "oat_milk".into(),
        concept_name: "Oat milk".into(),
        turn_count,
        last_strategy: (turn_count > 0).then(|| "deepen".to_owned()),
        velocity: VelocityState {
            surface_velocity_ewma: 1.25,
            surface_velocity_peak: 3.0,
            prev_surface_node_count: 7,
            canonical_velocity_ewma: 0.5,
            canonical_velocity_peak: 1.0,
            prev_canonical_node_count: 2,
        },
        focus_history: vec![FocusEntry {
            turn: 1,
            node_id: String::new(),
            label: String::new(),
            strategy: "explore".into(),
            overridden: false,
        }],
        depth_history: vec![ResponseDepth::Shallow, ResponseDepth::Deep],
        saturation: SaturationMetrics {
            consecutive_low_info: 2,
            ..SaturationMetrics::default()
        },
        strategy_history: vec!["explore".into()],
        understanding: interviewer::domain::Understanding::Offline,
    }
}

fn create(store: &impl StoreOps, id: &str) {
    store
        .create_session(&NewSession {
            id: id.into(),
            methodology: "means_end_chain".into(),
            concept: "oat_milk".into(),
            max_turns: 10,
            state: state(0),
        })
        .unwrap();
}

fn node(session: &str, id: &str, turn: u32) -> KgNode {
    KgNode {
        id: id.into(),
        session_id: session.into(),
        label: format!("label of {id}"),
        node_type: "attribute".into(),
        confidence: 0.875,
        properties: json!({}),
        stance: 0,
        source_utterance_ids: vec![],
        source_quote: String::new(),
        superseded_by: None,
        embedding: None,
        recorded_at: "2025-01-01T00:00:00Z".into(),
        turn,
    }
}

fn edge(session: &str, id: &str, from: &str, to: &str) -> KgEdge {
    KgEdge {
        id: id.into(),
        session_id: session.into(),
        source_node_id: from.into(),
        target_node_id: to.into(),
        edge_type: "leads_to".into(),
        confidence: 0.5,
        properties: json!({"note": "x"}),
        source_utterance_ids: vec!["u1".into()],
        recorded_at: "2025-01-01T00:00:01Z".into(),
        turn: 1,
    }
}

fn slot(session: &str, id: &str, status: SlotStatus, promoted: Option<u32>) -> CanonicalSlot {
    CanonicalSlot {
        id: id.into(),
        session_id: session.into(),
        slot_name: format!("{id}_name"),
        description: "a latent concept".into(),
        node_type: "attribute".into(),
        status,
        support_count: 2,
        first_seen_turn: 1,
        promoted_turn: promoted,
        embedding: None,
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

fn count(conn: &rusqlite::Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

// --- opening and migrations -------------------------------------------------------------------

#[test]
fn migrates_an_empty_file_to_the_latest_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/deeper/interviewer.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.path(), Some(path.as_path()));

    let conn = raw(&path);
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    for table in TABLES {
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1, "table {table} exists");
    }
    drop((conn, store));
    // Reopening an up-to-date file is a no-op.
    assert_eq!(
        Store::open(&path).unwrap().schema_version().unwrap(),
        SCHEMA_VERSION
    );
}

/// Version 2 adds `sessions.failure` (seed 004's ERROR state), version 3 a simulated session's
/// persona, version 4 the table of how spoken answers were heard, version 5 the table of
/// imported transcripts. A database written before them (version 1: no such columns) is upgraded in place on
/// open, keeps its sessions, and records and clears failures and personas like a new one.
#[test]
fn a_version_1_database_gains_the_failure_and_persona_columns_in_place() {
    let (dir, store) = temp_store();
    create(&store, "old");
    drop(store);
    let path = dir.path().join("interviewer.db");
    {
        let conn = raw(&path);
        conn.execute_batch(
            "ALTER TABLE sessions DROP COLUMN failure; ALTER TABLE sessions DROP COLUMN persona;
             ALTER TABLE sessions DROP COLUMN persona_seed; DROP TABLE utterance_speech;
             DROP TABLE imports; PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let old = store.get_session("old").unwrap().unwrap();
    assert_eq!(old.failure, None);
    let failure = interviewer::store::TurnFailure {
        turn: 1,
        stage: "3 extraction".into(),
        message: "extraction call failed".into(),
        at: "2026-01-01T00:00:00Z".into(),
    };
    store.set_session_failure("old", Some(&failure)).unwrap();
    assert_eq!(store.list_sessions().unwrap()[0].status_word(), "failed");
    store
        .update_session_state("old", &state(1), &serde_json::json!({}))
        .unwrap();
    let cleared = store.get_session("old").unwrap().unwrap();
    assert_eq!((cleared.failure, cleared.state.turn_count), (None, 1));
    assert_eq!(store.list_sessions().unwrap()[0].status_word(), "active");
    assert_eq!(store.session_persona("old").unwrap(), None);
    store.set_session_persona("old", "brief", u64::MAX).unwrap();
    assert_eq!(
        store.session_persona("old").unwrap(),
        Some(("brief".to_owned(), u64::MAX)),
        "a seed above i64::MAX survives the signed column"
    );
    assert!(store.set_session_persona("missing", "brief", 1).is_err());
    // Version 4's table of how spoken answers were heard is there, empty.
    assert!(store.utterance_speech("old").unwrap().is_empty());
}

#[cfg(unix)]
#[test]
fn a_new_database_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, store) = temp_store();
    create(&store, "s1");
    let mode = std::fs::metadata(dir.path().join("interviewer.db"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_file_from_a_newer_build_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    {
        let conn = raw(&path);
        conn.execute_batch("CREATE TABLE t (x INTEGER); PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    match &err {
        StoreError::NewerSchema {
            found,
            supported,
            path: p,
        } => {
            assert_eq!(*found, 99);
            assert_eq!(*supported, SCHEMA_VERSION);
            assert_eq!(p, &path);
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    assert!(err.to_string().contains("schema version 99"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "byte-identical");
    assert!(!dir.path().join("future.db-wal").exists());
}

#[test]
fn a_file_that_is_not_a_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    std::fs::write(
        &path,
        b"this is not sqlite, just text that is long enough to matter",
    )
    .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Sqlite { .. }), "{err:?}");
}

// --- round trips --------------------------------------------------------------------------------

#[test]
fn sessions_round_trip() {
    let (_dir, store) = temp_store();
    create(&store, "s1");
    let fresh = store.get_session("s1").unwrap().unwrap();
    assert_eq!(fresh.id, "s1");
    assert_eq!(fresh.methodology, "means_end_chain");
    assert_eq!(fresh.concept, "oat_milk");
    assert_eq!(fresh.max_turns, 10);
    assert_eq!(fresh.status, SessionStatus::Active);
    assert_eq!(fresh.termination_reason, None);
    assert_eq!(fresh.state, state(0));
    assert_eq!(fresh.node_tracker, None);
    assert!(fresh.created_at.ends_with('Z') && fresh.created_at.contains('T'));

    let tracker = json!({"schema_version": 1, "states": {"n1": {"focus_count": 2}}});
    store
        .update_session_state("s1", &state(3), &tracker)
        .unwrap();
    store.finish_session("s1", "max_turns_reached").unwrap();
    let done = store.get_session("s1").unwrap().unwrap();
    assert_eq!(done.state, state(3));
    let stored: serde_json::Value =
        serde_json::from_str(done.node_tracker.as_deref().unwrap()).unwrap();
    assert_eq!(stored, tracker);
    assert_eq!(done.status, SessionStatus::Finished);
    assert_eq!(
        done.termination_reason.as_deref(),
        Some("max_turns_reached")
    );
    assert_eq!(done.created_at, fresh.created_at);
    assert!(done.updated_at >= fresh.updated_at);

    let listed = store.list_sessions().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].turns, 3);
    assert_eq!(listed[0].status, SessionStatus::Finished);

    assert!(store.get_session("nope").unwrap().is_none());
    let err = store
        .update_session_state("nope", &state(1), &tracker)
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NotFound {
                what: "session",
                ..
            }
        ),
        "{err}"
    );
    assert!(matches!(
        store.finish_session("nope", "x"),
        Err(StoreError::NotFound { .. })
    ));
    assert!(
        store
            .create_session(&NewSession {
                id: "s1".into(),
                methodology: "m".into(),
                concept: "c".into(),
                max_turns: 1,
                state: state(0),
            })
            .is_err()
    );
}

#[test]
fn list_sessions_orders_by_last_activity() {
    let (_dir, store) = temp_store();
    for id in ["a", "b", "c"] {
        create(&store, id);
    }
    let order = |store: &Store| -> Vec<String> {
        store
            .list_sessions()
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect()
    };
    assert_eq!(order(&store), ["c", "b", "a"]);
    store
        .insert_utterance("a", 1, Speaker::Respondent, "hi")
        .unwrap();
    assert_eq!(order(&store), ["a", "c", "b"]);
    store
        .update_session_state("b", &state(1), &json!({}))
        .unwrap();
    assert_eq!(order(&store), ["b", "a", "c"]);
    store.finish_session("c", "done").unwrap();
    assert_eq!(order(&store), ["c", "b", "a"]);
}

#[test]
fn utterances_round_trip() {
    let (_dir, store) = temp_store();
    create(&store, "s1");
    let q = store
        .insert_utterance("s1", 1, Speaker::Interviewer, "Why oat milk?")
        .unwrap();
    let a = store
        .insert_utterance("s1", 1, Speaker::Respondent, "It's creamy.")
        .unwrap();
    let q2 = store
        .insert_utterance("s1", 2, Speaker::Interviewer, "Why creamy?")
        .unwrap();
    let parsed = uuid::Uuid::parse_str(&a.id).unwrap();
    assert_eq!(parsed.get_version_num(), 4);
    assert_ne!(q.id, a.id);

    assert_eq!(
        store.utterances("s1").unwrap(),
        [q.clone(), a.clone(), q2.clone()]
    );
    assert_eq!(
        store.utterance("s1", 1, Speaker::Respondent).unwrap(),
        Some(a.clone())
    );
    assert_eq!(store.utterance("s1", 2, Speaker::Respondent).unwrap(), None);
    assert_eq!(store.recent_utterances("s1", 2).unwrap(), [a, q2]);

    let dup = store
        .insert_utterance("s1", 1, Speaker::Respondent, "again")
        .unwrap_err();
    assert!(dup.to_string().contains("turn 1"), "{dup}");
    assert_eq!(store.utterances("s1").unwrap().len(), 3);
    assert!(
        store
            .insert_utterance("missing", 1, Speaker::Respondent, "x")
            .is_err(),
        "foreign key to sessions"
    );
}

#[test]
fn nodes_round_trip_with_bit_exact_embeddings() {
    let (_dir, store) = temp_store();
    create(&store, "s1");
    let embedding = vec![
        0.1_f32,
        -0.0,
        f32::MIN_POSITIVE,
        f32::from_bits(1), // smallest subnormal
        f32::MAX,
        f32::INFINITY,
        f32::from_bits(0x7fc0_beef), // NaN with a payload
    ];
    let full = KgNode {
        properties: json!({"intensity": 0.7, "tags": ["a", "b"], "nested": {"k": null}}),
        stance: -1,
        source_utterance_ids: vec!["u1".into(), "u2".into()],
        source_quote: "it's \"creamy\", I guess".into(),
        superseded_by: Some("n2".into()),
        embedding: Some(embedding.clone()),
        ..node("s1", "n1", 1)
    };
    let plain = KgNode {
        stance: 1,
        ..node("s1", "n2", 2)
    };
    // n1 names n2 as its successor before n2 is written: the deferred key allows it.
    store.upsert_nodes(&[full.clone(), plain.clone()]).unwrap();

    let got = store.nodes("s1").unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(bits(got[0].embedding.as_deref().unwrap()), bits(&embedding));
    let without_embedding = |n: &KgNode| KgNode {
        embedding: None,
        ..n.clone()
    };
    assert_eq!(without_embedding(&got[0]), without_embedding(&full));
    assert_eq!(got[1], plain);

    // An update keeps the creation turn and the creation order.
    let updated = KgNode {
        label: "renamed".into(),
        turn: 9,
        embedding: None,
        superseded_by: None,
        ..full.clone()
    };
    store.upsert_nodes(&[updated, node("s1", "n0", 1)]).unwrap();
    let got = store.nodes("s1").unwrap();
    let ids: Vec<&str> = got.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["n1", "n0", "n2"]);
    assert_eq!(got[0].label, "renamed");
    assert_eq!(got[0].turn, 1);
    assert_eq!(got[0].embedding, None);
    assert!(store.nodes("other").unwrap().is_empty());
}

#[test]
fn edges_round_trip() {
    let (_dir, store) = temp_store();
    create(&store, "s1");
    store
        .upsert_nodes(&[node("s1", "a", 1), node("s1", "b", 1)])
        .unwrap();
    let e1 = edge("s1", "e1", "a", "b");
    let e2 = KgEdge {
        turn: 2,
        properties: json!({}),
        source_utterance_ids: vec![],
        ..edge("s1", "e2", "b", "a")
    };
    store.insert_edges(&[e2.clone(), e1.clone()]).unwrap();
    assert_eq!(store.edges("s1").unwrap(), [e1.clone(), e2]);
    assert!(store.insert_edges(&[e1]).is_err(), "edges are insert-only");
}

#[test]
fn canonical_graph_round_trip() {
    let (_dir, store) = temp_store();
    create(&store, "s1");
    store
        .upsert_nodes(&[node("s1", "a", 1), node("s1", "b", 1)])
        .unwrap();
    let emb = vec![0.25_f32, -1.5, f32::from_bits(0x8000_0001)];
    let active = CanonicalSlot {
        embedding: Some(emb.clone()),
        ..slot("s1", "x", SlotStatus::Active, Some(2))
    };
    let candidate = slot("s1", "y", SlotStatus::Candidate, None);
    store
        .upsert_slots(&[active.clone(), candidate.clone()])
        .unwrap();
    let got = store.slots("s1").unwrap();
    assert_eq!(got, [active.clone(), candidate.clone()]);
    assert_eq!(bits(got[0].embedding.as_deref().unwrap()), bits(&emb));

    let promoted = CanonicalSlot {
        status: SlotStatus::Active,
        promoted_turn: Some(3),
        support_count: 3,
        ..candidate
    };
    store.upsert_slots(std::slice::from_ref(&promoted)).unwrap();
    assert_eq!(store.slots("s1").unwrap(), [active, promoted]);

    let ma = SlotMapping {
        surface_node_id: "a".into(),
        canonical_slot_id: "x".into(),
        similarity: 0.8125,
        assigned_turn: 1,
    };
    let mb = SlotMapping {
        surface_node_id: "b".into(),
        canonical_slot_id: "y".into(),
        similarity: 0.6,
        assigned_turn: 2,
    };
    store.upsert_mappings(&[ma.clone(), mb.clone()]).unwrap();
    assert_eq!(store.mappings("s1").unwrap(), [ma.clone(), mb.clone()]);
    let moved = SlotMapping {
        canonical_slot_id: "x".into(),
        similarity: 0.9,
        ..mb
    };
    store.upsert_mappings(std::slice::from_ref(&moved)).unwrap();
    assert_eq!(store.mappings("s1").unwrap(), [ma, moved]);

    let ce = CanonicalEdge {
        id: "ce1".into(),
        session_id: "s1".into(),
        source_slot_id: "x".into(),
        target_slot_id: "y".into(),
        edge_type: "leads_to".into(),
        support_count: 1,
        surface_edge_ids: vec!["e1".into()],
    };
    store
        .upsert_canonical_edges(std::slice::from_ref(&ce))
        .unwrap();
    assert_eq!(
        store.canonical_edges("s1").unwrap(),
        std::slice::from_ref(&ce)
    );
    let grown = CanonicalEdge {
        support_count: 2,
        surface_edge_ids: vec!["e1".into(), "e7".into()],
        ..ce
    };
    store
        .upsert_canonical_edges(std::slice::from_ref(&grown))
        .unwrap();
    assert_eq!(store.canonical_edges("s1").unwrap(), [grown]);
}

#[test]
fn scoring_history_round_trip_and_recent_strategies() {
    let (_dir, store) = temp_store();
    create(&store, "s1");
    let strategies = [
        "explore",
        "deepen",
        "clarify",
        "deepen",
        "laddering",
        "reflect",
        "close",
    ];
    for (turn, strategy) in (1..).zip(strategies) {
        store
            .insert_scoring(&ScoringRecord {
                session_id: "s1".into(),
                turn,
                strategy: strategy.into(),
                focus_node_id: (turn > 1).then(|| format!("n{turn}")),
                phase: Phase::for_turn(turn, 7),
                payload: json!({"turn": turn, "scores": [1.5, -0.25]}),
            })
            .unwrap();
    }
    assert_eq!(
        store.recent_strategies("s1", 5).unwrap(),
        ["clarify", "deepen", "laddering", "reflect", "close"]
    );
    assert_eq!(store.recent_strategies("s1", 50).unwrap().len(), 7);
    assert!(store.recent_strategies("other", 5).unwrap().is_empty());

    let history = store.scoring_history("s1").unwrap();
    assert_eq!(history.len(), 7);
    assert_eq!(history[0].focus_node_id, None);
    assert_eq!(history[0].phase, Phase::Early);
    assert_eq!(history[6].focus_node_id.as_deref(), Some("n7"));
    assert_eq!(history[6].phase, Phase::Late);
    assert_eq!(
        history[6].payload,
        json!({"turn": 7, "scores": [1.5, -0.25]})
    );

    assert!(
        store.insert_scoring(&history[0]).is_err(),
        "one decision per turn"
    );
}

#[test]
fn checkpoints_round_trip() {
    let (_dir, store) = temp_store();
    create(&store, "s1");
    store
        .put_checkpoint("s1", 3, "context_loading", &json!({"turn_number": 3}))
        .unwrap();
    store
        .put_checkpoint("s1", 3, "utterance_saving", &json!({"id": "u"}))
        .unwrap();
    store
        .put_checkpoint("s1", 4, "context_loading", &json!(null))
        .unwrap();
    // A retried stage replaces its output but keeps its place.
    store
        .put_checkpoint(
            "s1",
            3,
            "context_loading",
            &json!({"turn_number": 3, "retry": true}),
        )
        .unwrap();

    let one = store
        .checkpoint("s1", 3, "context_loading")
        .unwrap()
        .unwrap();
    assert_eq!(one.output, json!({"turn_number": 3, "retry": true}));
    assert_eq!((one.session_id.as_str(), one.turn), ("s1", 3));
    assert!(store.checkpoint("s1", 3, "extraction").unwrap().is_none());

    let turn: Vec<String> = store
        .checkpoints_for_turn("s1", 3)
        .unwrap()
        .into_iter()
        .map(|c| c.stage)
        .collect();
    assert_eq!(turn, ["context_loading", "utterance_saving"]);
    assert_eq!(
        store.checkpoints_for_turn("s1", 4).unwrap()[0].output,
        json!(null)
    );
}

#[test]
fn llm_usage_round_trip_and_totals() {
    let (_dir, store) = temp_store();
    create(&store, "s1");
    assert_eq!(store.usage_totals("s1").unwrap(), UsageTotals::default());

    let priced = LlmUsage {
        session_id: "s1".into(),
        turn: 1,
        role: "extraction".into(),
        provider: "anthropic".into(),
        model: "claude".into(),
        tokens_in: 1200,
        tokens_out: 300,
        latency_ms: 850,
        attempts: 2,
        outcome: "ok".into(),
        cost_usd: Some(0.0125),
    };
    let unpriced = LlmUsage {
        role: "question_generation".into(),
        provider: "local".into(),
        tokens_in: 100,
        tokens_out: 40,
        attempts: 1,
        outcome: "timeout".into(),
        cost_usd: None,
        ..priced.clone()
    };
    let id1 = store.insert_llm_usage(&priced).unwrap();
    let id2 = store.insert_llm_usage(&unpriced).unwrap();
    assert!(id2 > id1);

    let rows = store.llm_usage("s1").unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0].id, &rows[0].usage), (id1, &priced));
    assert_eq!((rows[1].id, &rows[1].usage), (id2, &unpriced));
    assert!(!rows[0].created_at.is_empty());

    let totals = store.usage_totals("s1").unwrap();
    assert_eq!(
        totals,
        UsageTotals {
            tokens_in: 1300,
            tokens_out: 340,
            cost_usd: Some(0.0125),
            calls: 2,
            unpriced_calls: 1,
        }
    );
    store.insert_llm_usage(&priced).unwrap();
    assert_eq!(store.usage_totals("s1").unwrap().cost_usd, Some(0.025));
}

// --- atomicity ----------------------------------------------------------------------------------

#[test]
fn a_multi_row_write_that_fails_midway_writes_nothing() {
    let (_dir, store) = temp_store();
    create(&store, "s1");
    store
        .upsert_nodes(&[node("s1", "a", 1), node("s1", "b", 1)])
        .unwrap();

    let err = store
        .insert_edges(&[edge("s1", "e1", "a", "b"), edge("s1", "e2", "a", "ghost")])
        .unwrap_err();
    assert!(err.to_string().contains("e2"), "{err}");
    assert!(store.edges("s1").unwrap().is_empty());

    let bad_stance = KgNode {
        stance: 2,
        ..node("s1", "d", 1)
    };
    assert!(
        store
            .upsert_nodes(&[node("s1", "c", 1), bad_stance])
            .is_err()
    );
    assert_eq!(store.nodes("s1").unwrap().len(), 2);

    // A dangling successor is caught at commit and rolls the batch back too.
    let dangling = KgNode {
        superseded_by: Some("ghost".into()),
        ..node("s1", "e", 1)
    };
    assert!(store.upsert_nodes(&[node("s1", "f", 1), dangling]).is_err());
    assert_eq!(store.nodes("s1").unwrap().len(), 2);

    // The store is still usable: no transaction was left open.
    store.upsert_nodes(&[node("s1", "g", 2)]).unwrap();
    assert_eq!(store.nodes("s1").unwrap().len(), 3);
}

#[test]
fn a_transaction_commits_side_effects_and_checkpoint_together() {
    let (_dir, mut store) = temp_store();
    create(&store, "s1");
    let turn = store
        .transaction(|tx| {
            tx.upsert_nodes(&[node("s1", "a", 1), node("s1", "b", 1)])?;
            tx.insert_edges(&[edge("s1", "e1", "a", "b")])?;
            tx.put_checkpoint("s1", 1, "graph_update", &json!({"nodes_added": 2}))?;
            // Reads inside the transaction see its own writes.
            Ok(tx.nodes("s1")?.len())
        })
        .unwrap();
    assert_eq!(turn, 2);
    assert_eq!(store.edges("s1").unwrap().len(), 1);
    assert!(store.checkpoint("s1", 1, "graph_update").unwrap().is_some());
}

#[test]
fn a_failed_transaction_writes_nothing() {
    let (_dir, mut store) = temp_store();
    create(&store, "s1");
    let err = store
        .transaction(|tx| {
            tx.upsert_nodes(&[node("s1", "a", 1)])?;
            tx.put_checkpoint("s1", 1, "graph_update", &json!({}))?;
            tx.insert_edges(&[edge("s1", "e1", "a", "ghost")])?;
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::Sqlite { .. }), "{err}");
    assert!(store.nodes("s1").unwrap().is_empty());
    assert!(store.checkpoint("s1", 1, "graph_update").unwrap().is_none());

    // A batch that fails inside a transaction is undone alone when the caller recovers.
    store
        .transaction(|tx| {
            tx.upsert_nodes(&[node("s1", "a", 1)])?;
            let failed = tx.insert_edges(&[edge("s1", "e1", "a", "a"), edge("s1", "e2", "a", "x")]);
            assert!(failed.is_err());
            tx.put_checkpoint("s1", 1, "graph_update", &json!({"edges": 0}))
        })
        .unwrap();
    assert_eq!(store.nodes("s1").unwrap().len(), 1);
    assert!(store.edges("s1").unwrap().is_empty());
}

#[test]
fn deleting_a_session_cascades_to_every_table() {
    let (dir, store) = temp_store();
    create(&store, "s1");
    create(&store, "keep");
    for session in ["s1", "keep"] {
        let n = |id: &str| node(session, &format!("{session}-{id}"), 1);
        let said = store
            .insert_utterance(session, 1, Speaker::Respondent, "x")
            .unwrap();
        store
            .insert_utterance_speech(
                &said.id,
                &interviewer::domain::AnswerSpeech {
                    model: "whisper-tiny.en".into(),
                    duration_seconds: 2.5,
                    mean_logprob: -0.3,
                    audio_file: None,
                },
            )
            .unwrap();
        store.upsert_nodes(&[n("a"), n("b")]).unwrap();
        store
            .insert_edges(&[edge(
                session,
                &format!("{session}-e"),
                &format!("{session}-a"),
                &format!("{session}-b"),
            )])
            .unwrap();
        let sx = format!("{session}-x");
        store
            .upsert_slots(&[slot(session, &sx, SlotStatus::Active, Some(1))])
            .unwrap();
        store
            .upsert_mappings(&[SlotMapping {
                surface_node_id: format!("{session}-a"),
                canonical_slot_id: sx.clone(),
                similarity: 1.0,
                assigned_turn: 1,
            }])
            .unwrap();
        store
            .upsert_canonical_edges(&[CanonicalEdge {
                id: format!("{session}-ce"),
                session_id: session.into(),
                source_slot_id: sx.clone(),
                target_slot_id: sx,
                edge_type: "t".into(),
                support_count: 1,
                surface_edge_ids: vec![],
            }])
            .unwrap();
        store
            .insert_scoring(&ScoringRecord {
                session_id: session.into(),
                turn: 1,
                strategy: "explore".into(),
                focus_node_id: None,
                phase: Phase::Early,
                payload: json!({}),
            })
            .unwrap();
        store
            .put_checkpoint(session, 1, "context_loading", &json!({}))
            .unwrap();
        store
            .insert_llm_usage(&LlmUsage {
                session_id: session.into(),
                turn: 1,
                role: "extraction".into(),
                provider: "scripted".into(),
                model: "m".into(),
                tokens_in: 1,
                tokens_out: 1,
                latency_ms: 1,
                attempts: 1,
                outcome: "ok".into(),
                cost_usd: None,
            })
            .unwrap();
    }

    store.delete_session("s1").unwrap();
    let conn = raw(&dir.path().join("interviewer.db"));
    let expected = |table: &str| match table {
        "kg_nodes" => 2,
        _ => 1,
    };
    for table in TABLES {
        assert_eq!(
            count(&conn, table),
            expected(table),
            "{table} keeps only 'keep'"
        );
    }
    assert!(store.get_session("s1").unwrap().is_none());
    assert_eq!(store.list_sessions().unwrap().len(), 1);
    assert!(matches!(
        store.delete_session("s1"),
        Err(StoreError::NotFound { .. })
    ));
}

// --- the session lock ---------------------------------------------------------------------------

#[test]
fn a_second_handle_cannot_lock_a_locked_session() {
    let (dir, first) = temp_store();
    create(&first, "s1");
    let second = Store::open(dir.path().join("interviewer.db")).unwrap();

    let lock = first.lock_session("s1").unwrap();
    assert_eq!(lock.session_id(), "s1");
    let err = second.lock_session("s1").unwrap_err();
    assert!(matches!(&err, StoreError::SessionInUse { session_id } if session_id == "s1"));
    assert_eq!(
        err.to_string(),
        "session s1 is in use by another interviewer process"
    );
    // Reading never needs the lock, and other sessions stay free.
    assert_eq!(second.get_session("s1").unwrap().unwrap().id, "s1");
    drop(second.lock_session("s2").unwrap());

    drop(lock);
    let relocked = second.lock_session("s1").unwrap();
    assert!(first.lock_session("s1").is_err());
    drop(relocked);
}

#[test]
fn an_in_memory_store_locks_sessions_in_process() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.path(), None);
    let lock = store.lock_session("s1").unwrap();
    assert!(matches!(
        store.lock_session("s1"),
        Err(StoreError::SessionInUse { .. })
    ));
    drop(lock);
    drop(store.lock_session("s1").unwrap());
}

/// Set in the child process: the database path whose session `s1` the child locks.
const CHILD_DB_ENV: &str = "INTERVIEWER_STORE_TEST_LOCK_DB";

/// Not a test of its own: run by `a_session_locked_by_another_process_is_refused` in a child
/// process, where it takes the lock, announces it and holds it until told to stop.
#[test]
fn child_holds_session_lock() {
    let Ok(db) = std::env::var(CHILD_DB_ENV) else {
        return;
    };
    let db = PathBuf::from(db);
    let store = Store::open(&db).unwrap();
    let _lock = store.lock_session("s1").unwrap();
    std::fs::write(db.with_extension("ready"), b"locked").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !db.with_extension("release").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The child test's full name in this test binary (its module path without the crate).
fn child_test_name() -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::child_holds_session_lock"),
        None => "child_holds_session_lock".to_owned(),
    }
}

#[test]
fn a_session_locked_by_another_process_is_refused() {
    let (dir, store) = temp_store();
    create(&store, "s1");
    let db = dir.path().join("interviewer.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &child_test_name(), "--test-threads=1"])
        .env(CHILD_DB_ENV, &db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    let deadline = Instant::now() + Duration::from_secs(30);
    while !db.with_extension("ready").exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("child exited before locking: {status}");
        }
        assert!(Instant::now() < deadline, "child never took the lock");
        std::thread::sleep(Duration::from_millis(10));
    }
    let refused = store.lock_session("s1");
    assert!(
        matches!(refused, Err(StoreError::SessionInUse { .. })),
        "{refused:?}"
    );
    assert!(
        store.get_session("s1").unwrap().is_some(),
        "reads need no lock"
    );

    std::fs::write(db.with_extension("release"), b"").unwrap();
    assert!(child.wait().unwrap().success());
    drop(store.lock_session("s1").unwrap());
}

#[test]
fn a_killed_process_releases_its_lock() {
    let (dir, store) = temp_store();
    let db = dir.path().join("interviewer.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &child_test_name(), "--test-threads=1"])
        .env(CHILD_DB_ENV, &db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !db.with_extension("ready").exists() {
        assert!(child.try_wait().unwrap().is_none(), "child exited early");
        assert!(Instant::now() < deadline, "child never took the lock");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(store.lock_session("s1").is_err());
    child.kill().unwrap();
    child.wait().unwrap();
    drop(store.lock_session("s1").unwrap());
}

// --- the async handle ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_from_many_tasks_all_complete() {
    let dir = tempfile::tempdir().unwrap();
    let store = AsyncStore::open(dir.path().join("interviewer.db"))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("s{i}");
            let created = id.clone();
            store
                .call(move |s| {
                    create(s, &created);
                    Ok(())
                })
                .await?;
            for turn in 1..=5 {
                let id = id.clone();
                store
                    .call(move |s| s.insert_utterance(&id, turn, Speaker::Respondent, "answer"))
                    .await?;
            }
            let id2 = id.clone();
            store.call(move |s| s.utterances(&id2)).await
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap().unwrap().len(), 5);
    }
    let sessions = store.call(|s| s.list_sessions()).await.unwrap();
    assert_eq!(sessions.len(), 16);
}

#[tokio::test(flavor = "current_thread")]
async fn a_slow_call_does_not_block_the_runtime() {
    let store = AsyncStore::spawn(Store::open_in_memory().unwrap()).unwrap();
    let ticks = Arc::new(AtomicU32::new(0));
    let ticker = {
        let ticks = Arc::clone(&ticks);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                ticks.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // The closure blocks its (database) thread; the single runtime thread must stay free.
    store
        .call(|_| {
            std::thread::sleep(Duration::from_millis(400));
            Ok(())
        })
        .await
        .unwrap();
    ticker.abort();
    let n = ticks.load(Ordering::Relaxed);
    assert!(n >= 10, "the ticker ticked {n} times while the call ran");
}

#[tokio::test]
async fn async_open_reports_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    raw(&path)
        .execute_batch("PRAGMA user_version = 7;")
        .unwrap();
    let err = AsyncStore::open(&path).await.unwrap_err();
    assert!(
        matches!(err, StoreError::NewerSchema { found: 7, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn the_store_thread_ends_with_the_last_handle() {
    let store = AsyncStore::spawn(Store::open_in_memory().unwrap()).unwrap();
    let other = store.clone();
    drop(store);
    // A surviving clone keeps the thread alive; locks taken through it work as usual.
    let lock = other.call(|s| s.lock_session("s1")).await.unwrap();
    assert!(matches!(
        other.call(|s| s.lock_session("s1")).await,
        Err(StoreError::SessionInUse { .. })
    ));
    drop(lock);
    drop(other);
}
