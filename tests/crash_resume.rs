//! Crash and resume: for every stage and both sides of its commit, the headless interview is
//! aborted in turn 3 with `INTERVIEWER_CRASH_AT`, re-run with `--resume`, and the finished
//! session is compared with an uninterrupted run of the same script. The scripted provider's
//! request log proves no committed LLM result was requested again.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::too_many_lines
)]

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use interviewer::domain::Speaker;
use interviewer::pipeline::Stage;
use interviewer::store::{Store, StoreOps};

const SESSION_TURN: u32 = 3;

struct Run<'a> {
    db: &'a Path,
    answers: &'a Path,
    resume: bool,
    crash: Option<String>,
    log: Option<&'a Path>,
}

fn interviewer(run: &Run<'_>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_interviewer"));
    cmd.arg("--db")
        .arg(run.db)
        .arg("--config-dir")
        .arg(Path::new(common::MANIFEST).join("config"))
        .args(["interview", "--concept", "oat_milk", "--max-turns", "11"])
        .arg("--answers")
        .arg(run.answers)
        .arg("--script")
        .arg(common::example("oat_milk_script.yaml"))
        .env("INTERVIEWER_CACHE_DIR", common::CACHE_ROOT)
        .env_remove("INTERVIEWER_CRASH_AT")
        .env_remove("INTERVIEWER_SCRIPT_LOG");
    if run.resume {
        cmd.args(["--resume", "latest"]);
    }
    if let Some(point) = &run.crash {
        cmd.env("INTERVIEWER_CRASH_AT", point);
    }
    if let Some(log) = run.log {
        cmd.env("INTERVIEWER_SCRIPT_LOG", log);
    }
    cmd.output().unwrap()
}

fn ok(output: &Output) {
    assert!(
        output.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Everything that must come out the same, with random ids replaced by content.
#[derive(Debug, PartialEq)]
pub struct Snapshot {
    utterances: Vec<(u32, Speaker, String)>,
    nodes: Vec<(String, String, u32, Vec<u32>)>,
    edges: Vec<(String, String, String, u32, Vec<u32>)>,
    slots: Vec<(String, String, u32, u32, Option<u32>)>,
    mappings: BTreeSet<(String, String)>,
    focus: Vec<(u32, String, String)>,
    strategies: Vec<String>,
    turn_count: u32,
    reason: Option<String>,
    scoring_turns: Vec<u32>,
}

pub fn snapshot(db: &Path) -> Snapshot {
    let store = Store::open(db).unwrap();
    let id = store.list_sessions().unwrap()[0].id.clone();
    let session = store.get_session(&id).unwrap().unwrap();
    let utterances = store.utterances(&id).unwrap();
    let turn_of: HashMap<String, u32> = utterances.iter().map(|u| (u.id.clone(), u.turn)).collect();
    let nodes = store.nodes(&id).unwrap();
    let label: HashMap<String, String> = nodes
        .iter()
        .map(|n| (n.id.clone(), n.label.clone()))
        .collect();
    let slots = store.slots(&id).unwrap();
    let slot_name: HashMap<String, String> = slots
        .iter()
        .map(|s| (s.id.clone(), s.slot_name.clone()))
        .collect();
    let sources = |ids: &[String]| ids.iter().map(|i| turn_of[i]).collect::<Vec<_>>();
    Snapshot {
        utterances: utterances
            .iter()
            .map(|u| (u.turn, u.speaker, u.text.clone()))
            .collect(),
        nodes: nodes
            .iter()
            .map(|n| {
                (
                    n.label.clone(),
                    n.node_type.clone(),
                    n.turn,
                    sources(&n.source_utterance_ids),
                )
            })
            .collect(),
        edges: store
            .edges(&id)
            .unwrap()
            .iter()
            .map(|e| {
                (
                    label[&e.source_node_id].clone(),
                    label[&e.target_node_id].clone(),
                    e.edge_type.clone(),
                    e.turn,
                    sources(&e.source_utterance_ids),
                )
            })
            .collect(),
        slots: slots
            .iter()
            .map(|s| {
                (
                    s.slot_name.clone(),
                    s.status.as_str().to_owned(),
                    s.support_count,
                    s.first_seen_turn,
                    s.promoted_turn,
                )
            })
            .collect(),
        mappings: store
            .mappings(&id)
            .unwrap()
            .iter()
            .map(|m| {
                (
                    label[&m.surface_node_id].clone(),
                    slot_name[&m.canonical_slot_id].clone(),
                )
            })
            .collect(),
        focus: session
            .state
            .focus_history
            .iter()
            .map(|f| (f.turn, f.label.clone(), f.strategy.clone()))
            .collect(),
        strategies: session.state.strategy_history.clone(),
        turn_count: session.state.turn_count,
        reason: session.termination_reason.clone(),
        scoring_turns: store
            .scoring_history(&id)
            .unwrap()
            .iter()
            .map(|s| s.turn)
            .collect(),
    }
}

/// (role, turn) of every request in a script log.
fn requests(log: &Path) -> Vec<(String, u32)> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["role"].as_str().unwrap().to_owned(),
                u32::try_from(v["turn"].as_u64().unwrap()).unwrap(),
            )
        })
        .collect()
}

/// The stage whose commit holds a role's result.
fn stage_of(role: &str) -> Stage {
    match role {
        "extraction" => Stage::Extraction,
        "slot_discovery" => Stage::SlotDiscovery,
        "signal_scoring" => Stage::StrategySelection,
        "question_generation" => Stage::QuestionGeneration,
        other => panic!("unexpected role {other}"),
    }
}

fn copy_db(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap();
    for suffix in ["-wal", "-shm"] {
        let src = PathBuf::from(format!("{}{suffix}", from.display()));
        if src.exists() {
            std::fs::copy(&src, format!("{}{suffix}", to.display())).unwrap();
        }
    }
}

#[test]
fn every_stage_resumes_after_a_crash_on_either_side_of_its_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let answers = common::example("oat_milk_answers.txt");

    // The uninterrupted reference run.
    let reference_db = tmp.path().join("reference.db");
    ok(&interviewer(&Run {
        db: &reference_db,
        answers: &answers,
        resume: false,
        crash: None,
        log: None,
    }));
    let reference = snapshot(&reference_db);
    assert_eq!(reference.turn_count, 10);

    // A session that has completed turns 1 and 2 (the answers run out), shared by every case.
    let first_two = tmp.path().join("first_two.txt");
    let all = common::answers();
    std::fs::write(&first_two, format!("{}\n\n{}\n", all[0], all[1])).unwrap();
    let base_db = tmp.path().join("base.db");
    ok(&interviewer(&Run {
        db: &base_db,
        answers: &first_two,
        resume: false,
        crash: None,
        log: None,
    }));
    assert_eq!(snapshot(&base_db).turn_count, 2);

    // The order stages commit in by default: slot discovery runs after the question is saved
    // and the turn is scored, while the respondent types (the seeds' order puts it before
    // state computation; `PipelineSettings::inline_slot_discovery`).
    let order: Vec<Stage> = Stage::ALL
        .iter()
        .copied()
        .filter(|s| *s != Stage::SlotDiscovery)
        .chain([Stage::SlotDiscovery])
        .collect();
    let position = |s: &Stage| order.iter().position(|o| o == s).unwrap();
    for &stage in &order {
        for side in ["before", "after"] {
            let case = format!("{}:{side}", stage.name());
            let db = tmp.path().join(format!("{}-{side}.db", stage.name()));
            copy_db(&base_db, &db);
            let crashed = interviewer(&Run {
                db: &db,
                answers: &answers,
                resume: true,
                crash: Some(case.clone()),
                log: None,
            });
            assert!(
                !crashed.status.success(),
                "{case}: the process should have aborted"
            );
            let stderr = String::from_utf8_lossy(&crashed.stderr);
            assert!(stderr.contains("INTERVIEWER_CRASH_AT"), "{case}: {stderr}");

            let committed: BTreeSet<Stage> = {
                let store = Store::open(&db).unwrap();
                let id = store.list_sessions().unwrap()[0].id.clone();
                store
                    .checkpoints_for_turn(&id, SESSION_TURN)
                    .unwrap()
                    .iter()
                    .filter_map(|c| Stage::parse(&c.stage))
                    .collect()
            };
            let expected_committed = order
                .iter()
                .filter(|s| position(s) < position(&stage) || (**s == stage && side == "after"));
            assert!(
                expected_committed.clone().all(|s| committed.contains(s))
                    && committed.len() == expected_committed.count(),
                "{case}: committed {committed:?}"
            );

            // The answer is kept from the first commit on: a crash after context loading
            // resumes with it rather than asking the question again.
            if stage == Stage::ContextLoading && side == "after" {
                let store = Store::open(&db).unwrap();
                let id = store.list_sessions().unwrap()[0].id.clone();
                let interview = interviewer::pipeline::Interview::open(
                    store,
                    &id,
                    common::spec(11),
                    common::services_with(&common::example("oat_milk_script.yaml")),
                )
                .unwrap();
                let pending = interview.pending().unwrap();
                assert!(
                    matches!(
                        &pending,
                        interviewer::pipeline::Pending::Resume { answer: Some(a), .. }
                            if *a == all[SESSION_TURN as usize - 1]
                    ),
                    "{case}: {pending:?}"
                );
            }

            let log = tmp.path().join(format!("{}-{side}.log", stage.name()));
            ok(&interviewer(&Run {
                db: &db,
                answers: &answers,
                resume: true,
                crash: None,
                log: Some(&log),
            }));
            let resumed = snapshot(&db);
            assert_eq!(resumed, reference, "{case}: the resumed session differs");

            let requested = requests(&log);
            assert!(
                requested.iter().any(|(_, t)| *t == 10),
                "{case}: the log shows the rest of the interview"
            );
            for (role, turn) in requested {
                assert!(
                    turn >= SESSION_TURN,
                    "{case}: turn {turn} was finished before the crash, yet {role} was asked again"
                );
                if turn == SESSION_TURN {
                    assert!(
                        !committed.contains(&stage_of(&role)),
                        "{case}: the committed {role} result of turn {turn} was requested again"
                    );
                }
            }
        }
    }
}
