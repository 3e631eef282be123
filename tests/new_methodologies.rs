//! The shipped `customer_journey_mapping` and `repertory_grid` methodologies end to end, through
//! the real binary: each concept's scripted six-turn interview, the graph it builds in the
//! methodology's own node and edge types, every strategy's question templates, and a modelless
//! (`--provider none`) run of the same answers.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::{Command, Output};

use interviewer::config::{Methodology, NodeBinding};
use interviewer::prompts::check_question;
use interviewer::signals::Catalog;
use serde_json::Value;

/// A shipped methodology with its concept and its scripted interview in `assets/examples`.
struct Case {
    methodology: &'static str,
    concept: &'static str,
    script: &'static str,
    answers: &'static str,
    /// A label of the methodology's kind, to fill `{focus}` in its templates.
    sample_focus: &'static str,
}

const JOURNEY: Case = Case {
    methodology: "customer_journey_mapping",
    concept: "grocery_delivery_journey",
    script: "grocery_journey_script.yaml",
    answers: "grocery_journey_answers.txt",
    sample_focus: "oat milk swapped for soya",
};

const GRID: Case = Case {
    methodology: "repertory_grid",
    concept: "laptop_choice_grid",
    script: "laptop_grid_script.yaml",
    answers: "laptop_grid_answers.txt",
    sample_focus: "trustworthy for work vs a toy",
};

/// Answers in each example file.
const TURNS: usize = 6;
/// One more than the answers, so that the sixth turn falls in the late phase (the final two).
const MAX_TURNS: &str = "7";

/// `interviewer interview --json` on `case`'s concept and answers with the shipped config,
/// its model calls played from `case`'s script or, with `provider` set, from that provider.
fn interview(case: &Case, db: &Path, provider: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_interviewer"));
    cmd.arg("--db")
        .arg(db)
        .arg("--config-dir")
        .arg(Path::new(common::MANIFEST).join("config"))
        .args([
            "interview",
            "--concept",
            case.concept,
            "--max-turns",
            MAX_TURNS,
        ])
        .arg("--answers")
        .arg(common::example(case.answers))
        .arg("--json")
        .env("INTERVIEWER_CACHE_DIR", common::CACHE_ROOT)
        .env_remove("INTERVIEWER_SCRIPT")
        .env_remove("INTERVIEWER_UNDERSTANDING")
        .env_remove("INTERVIEWER_CRASH_AT")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY");
    if let Some(name) = provider {
        cmd.args(["--provider", name]);
    } else {
        cmd.arg("--script").arg(common::example(case.script));
    }
    cmd.output().unwrap()
}

/// The turn results of a run that must have succeeded.
fn turn_results(out: &Output) -> Vec<Value> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn methodology(case: &Case) -> Methodology {
    common::config()
        .methodology(case.methodology, &Catalog)
        .unwrap()
}

/// The example's answers, one per turn.
fn example_answers(case: &Case) -> Vec<String> {
    std::fs::read_to_string(common::example(case.answers))
        .unwrap()
        .split("\n\n")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The scripted interview runs every answer as a turn, asks a question after each that passes
/// the question check, and ends on the sixth with the methodology's closing strategy.
fn scripted_interview_completes(case: &Case) {
    assert_eq!(example_answers(case).len(), TURNS, "{}", case.answers);
    let m = methodology(case);
    let tmp = tempfile::tempdir().unwrap();
    let out = interview(case, &tmp.path().join("i.db"), None);
    let turns = turn_results(&out);
    assert_eq!(turns.len(), TURNS);
    for (i, t) in turns.iter().enumerate() {
        assert_eq!(t["turn_number"], i + 1);
        let question = t["next_question"].as_str().unwrap();
        assert!(
            check_question(question, &[]).is_ok(),
            "turn {}: {question:?}",
            i + 1
        );
        let strategy = t["strategy_selected"].as_str().unwrap();
        assert!(
            m.strategies.iter().any(|s| s.name == strategy),
            "turn {}: {strategy} is not a strategy of {}",
            i + 1,
            case.methodology
        );
    }
    let last = &turns[TURNS - 1];
    assert_eq!(last["should_continue"], false);
    assert_eq!(last["termination_reason"], "Closing strategy selected");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("interview finished: Closing strategy selected"),
        "{stderr}"
    );
}

/// Every node the scripted interview adds has one of the methodology's node types (at least
/// three different ones) and a quote from that turn's answer, and every edge has one of its
/// edge types between node types its ontology permits (at least two such edges).
fn scripted_graph_uses_the_ontology(case: &Case) {
    let m = methodology(case);
    let answers = example_answers(case);
    let tmp = tempfile::tempdir().unwrap();
    let turns = turn_results(&interview(case, &tmp.path().join("i.db"), None));
    let node_types: BTreeSet<&str> = m.ontology.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut type_of: HashMap<String, String> = HashMap::new();
    let mut seen_types = BTreeSet::new();
    for (t, answer) in turns.iter().zip(&answers) {
        for n in t["nodes_added"].as_array().unwrap() {
            let node_type = n["node_type"].as_str().unwrap();
            assert!(node_types.contains(node_type), "{n}");
            let quote = n["source_quote"].as_str().unwrap();
            assert!(answer.contains(quote), "{quote:?} is not in {answer:?}");
            seen_types.insert(node_type.to_owned());
            type_of.insert(n["id"].as_str().unwrap().to_owned(), node_type.to_owned());
        }
    }
    assert!(seen_types.len() >= 3, "{seen_types:?}");
    let mut structural = 0;
    for t in &turns {
        for e in t["edges_added"].as_array().unwrap() {
            let edge_type = e["edge_type"].as_str().unwrap();
            let edge = m
                .ontology
                .edges
                .iter()
                .find(|d| d.name == edge_type)
                .unwrap_or_else(|| panic!("{edge_type} is not an edge type: {e}"));
            let source = &type_of[e["source_node_id"].as_str().unwrap()];
            let target = &type_of[e["target_node_id"].as_str().unwrap()];
            assert!(
                edge.permitted_connections.iter().any(
                    |(from, to)| (from == "*" || from == source) && (to == "*" || to == target)
                ),
                "{edge_type} from {source} to {target}: {e}"
            );
            if edge_type != "revises" {
                structural += 1;
            }
        }
    }
    assert!(structural >= 2, "{structural} edges");
    // The graph the last turn reports agrees.
    let state = &turns[TURNS - 1]["graph_state"];
    for t in state["nodes_by_type"].as_object().unwrap().keys() {
        assert!(node_types.contains(t.as_str()), "{t}");
    }
    assert_eq!(state["edge_count"], structural);
}

/// Every strategy has question templates, and each one, filled with the concept's topic and a
/// focus label of the methodology's kind, passes the question check; so do the opening
/// templates. Node-free strategies do not ask about a focus, and one of them closes.
fn templates_exist_and_pass_the_check(case: &Case) {
    let m = methodology(case);
    let topic = common::config()
        .concept(case.concept)
        .unwrap()
        .context
        .topic;
    assert!(!topic.is_empty());
    let fill = |t: &str| {
        t.replace("{topic}", &topic)
            .replace("{focus}", case.sample_focus)
    };
    assert!(!m.method.opening_templates.is_empty());
    for t in &m.method.opening_templates {
        assert!(!t.contains("{focus}"), "{t}");
        assert!(check_question(&fill(t), &[]).is_ok(), "{t}");
    }
    assert!(m.strategies.len() >= 5, "{} strategies", m.strategies.len());
    for s in &m.strategies {
        assert!(s.question_templates.len() >= 2, "{}", s.name);
        for t in &s.question_templates {
            if s.node_binding == NodeBinding::None {
                assert!(!t.contains("{focus}"), "{}: {t}", s.name);
            }
            let q = fill(t);
            assert!(check_question(&q, &[]).is_ok(), "{}: {q:?}", s.name);
        }
    }
    assert!(
        m.strategies
            .iter()
            .any(|s| s.generates_closing_question && s.node_binding == NodeBinding::None),
        "no closing strategy"
    );
}

/// The same answers with no model at all (offline understanding, template questions) run
/// every turn, or end early on a closing question, and build nodes of the methodology's types.
fn none_provider_run_completes(case: &Case) {
    let m = methodology(case);
    let tmp = tempfile::tempdir().unwrap();
    let turns = turn_results(&interview(case, &tmp.path().join("i.db"), Some("none")));
    let last = turns.last().unwrap();
    assert!(
        turns.len() == TURNS || last["should_continue"] == false,
        "{} turns, and the last one continues",
        turns.len()
    );
    let mut nodes = 0;
    for t in &turns {
        let question = t["next_question"].as_str().unwrap();
        assert!(check_question(question, &[]).is_ok(), "{question:?}");
        for n in t["nodes_added"].as_array().unwrap() {
            let node_type = n["node_type"].as_str().unwrap();
            assert!(m.node_type(node_type).is_some(), "{n}");
            nodes += 1;
        }
    }
    assert!(nodes > 0, "the graph is empty");
}

/// Customer journey mapping: the grocery delivery journey runs its six scripted turns and
/// closes.
#[test]
fn journey_scripted_interview_completes_every_turn() {
    scripted_interview_completes(&JOURNEY);
}

/// Customer journey mapping: the scripted interview's graph is made of stages, touchpoints,
/// feelings and the rest of its ontology, linked only as the ontology permits.
#[test]
fn journey_graph_uses_the_journey_ontology() {
    scripted_graph_uses_the_ontology(&JOURNEY);
}

/// Customer journey mapping: every strategy has templates that pass the question check.
#[test]
fn journey_strategies_have_question_templates() {
    templates_exist_and_pass_the_check(&JOURNEY);
}

/// Customer journey mapping: the grocery answers run with `--provider none`.
#[test]
fn journey_runs_with_no_model() {
    none_provider_run_completes(&JOURNEY);
}

/// Repertory grid: the laptop grid runs its six scripted turns and closes.
#[test]
fn grid_scripted_interview_completes_every_turn() {
    scripted_interview_completes(&GRID);
}

/// Repertory grid: the scripted interview's graph is made of elements, constructs, poles,
/// ratings and laddered constructs, linked only as the ontology permits.
#[test]
fn grid_graph_uses_the_grid_ontology() {
    scripted_graph_uses_the_ontology(&GRID);
}

/// Repertory grid: every strategy has templates that pass the question check.
#[test]
fn grid_strategies_have_question_templates() {
    templates_exist_and_pass_the_check(&GRID);
}

/// Repertory grid: the laptop answers run with `--provider none`.
#[test]
fn grid_runs_with_no_model() {
    none_provider_run_completes(&GRID);
}
