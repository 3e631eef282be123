//! The README's embedded default, headless: the shipped `oat_milk` concept answered from the
//! example file with offline understanding, and questions from the local model (`local`) or
//! from templates only (`none`). Shared by the `local_llm` binary (the real model) and the
//! integration binary (`none`).

use std::path::Path;
use std::process::{Command, Output};

use interviewer::prompts::check_question;
use interviewer::store::{Store, StoreOps};

/// Answers with at least this many words count as substantive.
const SUBSTANTIVE_WORDS: usize = 10;

pub fn run_headless(db: &Path, provider: &str, json: bool, cache_root: &str) -> Output {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_interviewer"));
    cmd.arg("--db")
        .arg(db)
        .arg("--config-dir")
        .arg(manifest.join("config"))
        .args(["interview", "--provider", provider, "--concept", "oat_milk"])
        .args(["--max-turns", "11", "--answers"])
        .arg(manifest.join("assets/examples/oat_milk_answers.txt"))
        .env("INTERVIEWER_CACHE_DIR", cache_root)
        .env_remove("INTERVIEWER_SCRIPT")
        .env_remove("INTERVIEWER_UNDERSTANDING")
        .env_remove("INTERVIEWER_CRASH_AT")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY");
    if json {
        cmd.arg("--json");
    }
    cmd.output().unwrap()
}

/// Everything the issue asks of an embedded-default run, checked on its JSON lines and its
/// database, including at least one `leads_to` edge per two substantive answers.
#[allow(clippy::too_many_lines)]
pub fn check_run(db: &Path, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    let turns: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Every turn completes: one per answer until the interview ends itself.
    let last = turns.last().unwrap();
    assert!(
        turns.len() == 10 || last["should_continue"] == false,
        "{} turns, and the last one continues: {stderr}",
        turns.len()
    );
    assert!(turns.len() >= 5, "only {} turns: {stderr}", turns.len());

    let store = Store::open(db).unwrap();
    let session = store.list_sessions().unwrap()[0].id.clone();
    let utterances = store.utterances(&session).unwrap();
    let methodology =
        interviewer::config::ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
            .methodology("means_end_chain", &interviewer::signals::Catalog)
            .unwrap();
    let type_names: Vec<String> = methodology
        .ontology
        .nodes
        .iter()
        .map(|n| n.name.to_lowercase())
        .collect();

    // Every question passes the check, the opening one included.
    let questions: Vec<&str> = utterances
        .iter()
        .filter(|u| u.speaker == interviewer::domain::Speaker::Interviewer)
        .map(|u| u.text.as_str())
        .collect();
    assert_eq!(
        questions.len(),
        turns.len() + 1,
        "the opening question and one per turn"
    );
    for q in &questions {
        assert!(
            check_question(q, &[]).is_ok(),
            "question fails the check: {q:?}"
        );
    }

    // Labels are real concepts, quotes are the respondent's words.
    let nodes = store.nodes(&session).unwrap();
    assert!(!nodes.is_empty(), "the graph is empty");
    let squash = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    for n in &nodes {
        let label = n.label.trim().to_lowercase();
        assert!(
            label != "..." && !label.is_empty(),
            "placeholder label {:?}",
            n.label
        );
        assert!(
            !type_names.contains(&label.replace(' ', "_")),
            "a type name as a label: {:?}",
            n.label
        );
        let answers: Vec<String> = utterances
            .iter()
            .filter(|u| n.source_utterance_ids.contains(&u.id))
            .map(|u| squash(&u.text))
            .collect();
        assert!(
            answers.iter().any(|a| a.contains(&squash(&n.source_quote))),
            "quote {:?} of {:?} is in none of its answers",
            n.source_quote,
            n.label
        );
    }

    // Causal links: at least one `leads_to` edge per two substantive answers.
    let substantive = utterances
        .iter()
        .filter(|u| u.speaker == interviewer::domain::Speaker::Respondent)
        .filter(|u| u.text.split_whitespace().count() >= SUBSTANTIVE_WORDS)
        .count();
    let leads_to = store
        .edges(&session)
        .unwrap()
        .iter()
        .filter(|e| e.edge_type == "leads_to")
        .count();
    println!("{leads_to} leads_to edges for {substantive} substantive answers");
    assert!(
        leads_to * 2 >= substantive,
        "{leads_to} leads_to edges for {substantive} substantive answers"
    );

    // Rubric signals follow the answer: turn 2 (rich, causal) and turn 7 ("Not sure. I just
    // like it.") differ.
    let rubric = |turn: &serde_json::Value| {
        let signals = turn["signals"].as_object().unwrap();
        signals
            .iter()
            .filter(|(k, _)| k.starts_with("llm."))
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
    };
    assert_ne!(
        rubric(&turns[1]),
        rubric(&turns[6]),
        "rubric signals ignore the answer"
    );
}
