//! The pipeline end to end: a 10-turn scripted interview on a temporary database, malformed
//! LLM replies in every contract, respondent input bounds, and a researcher's override.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::too_many_lines
)]

use crate::common;

use std::collections::HashSet;

use interviewer::domain::Speaker;
use interviewer::graph::records::SlotStatus;
use interviewer::pipeline::{
    Event, EventSink, Interview, MAX_ANSWER_CHARS, Pending, PipelineError, Stage, TurnResult,
};
use interviewer::store::{SessionStatus, Store, StoreOps};
use tokio::sync::mpsc::unbounded_channel;

async fn run_all(
    interview: &mut Interview,
    answers: &[String],
    events: &EventSink,
) -> Vec<TurnResult> {
    interview.opening(events).await.unwrap();
    let mut results = Vec::new();
    for answer in answers {
        match interview.pending().unwrap() {
            Pending::Answer { .. } => results.push(interview.answer(answer, events).await.unwrap()),
            Pending::Finished { .. } => break,
            other => panic!("unexpected pending state {other:?}"),
        }
    }
    results
}

#[tokio::test]
async fn a_ten_turn_scripted_interview() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("interviews.db");
    let mut interview = Interview::create(
        Store::open(&db).unwrap(),
        common::spec(11),
        common::services(),
        Some("e2e".to_owned()),
    )
    .unwrap();
    let (tx, mut rx) = unbounded_channel();
    let events = EventSink::new(tx);
    let answers = common::answers();
    assert_eq!(answers.len(), 10);
    let results = run_all(&mut interview, &answers, &events).await;

    // Turn numbering: 1..=10. Turn 10 is in the late phase of an 11-turn interview, where the
    // closing strategy wins and ends it with a closing question.
    let turns: Vec<u32> = results.iter().map(|r| r.turn_number).collect();
    assert_eq!(turns, (1..=10).collect::<Vec<_>>());
    assert!(results[..9].iter().all(|r| r.should_continue));
    let last = results.last().unwrap();
    assert!(!last.should_continue);
    assert_eq!(last.strategy_selected, "validate_outcome");
    assert_eq!(
        last.termination_reason.as_deref(),
        Some("Closing strategy selected")
    );
    assert!(
        last.next_question.starts_with("Thank you"),
        "{}",
        last.next_question
    );

    let store = interview.store();
    let session = store.get_session("e2e").unwrap().unwrap();
    assert_eq!(session.status, SessionStatus::Finished);
    assert_eq!(
        session.termination_reason.as_deref(),
        Some("Closing strategy selected")
    );
    assert_eq!(session.state.turn_count, 10);

    // Utterances: the opening question, then an answer and a question per turn, in order.
    let utterances = store.utterances("e2e").unwrap();
    assert_eq!(utterances.len(), 21);
    assert_eq!(
        (utterances[0].turn, utterances[0].speaker),
        (0, Speaker::Interviewer)
    );
    for turn in 1..=10u32 {
        let answer = &utterances[(2 * turn - 1) as usize];
        let question = &utterances[(2 * turn) as usize];
        assert_eq!((answer.turn, answer.speaker), (turn, Speaker::Respondent));
        assert_eq!(
            (question.turn, question.speaker),
            (turn, Speaker::Interviewer)
        );
        assert_eq!(question.text, results[(turn - 1) as usize].next_question);
    }
    let answer_turn: std::collections::HashMap<&str, u32> = utterances
        .iter()
        .filter(|u| u.speaker == Speaker::Respondent)
        .map(|u| (u.id.as_str(), u.turn))
        .collect();

    // Provenance and dedup: "creamy texture" was said in turns 1, 2 and 8 and is one node.
    let nodes = store.nodes("e2e").unwrap();
    let creamy: Vec<_> = nodes
        .iter()
        .filter(|n| n.label == "creamy texture")
        .collect();
    assert_eq!(creamy.len(), 1, "exact duplicates merge");
    let creamy = creamy[0];
    let creamy_turns: Vec<u32> = creamy
        .source_utterance_ids
        .iter()
        .map(|id| answer_turn[id.as_str()])
        .collect();
    assert_eq!(creamy_turns, [1, 2, 8]);
    for node in &nodes {
        assert_eq!(
            answer_turn[node.source_utterance_ids[0].as_str()],
            node.turn,
            "{} is traced to the answer that created it",
            node.label
        );
    }
    assert_eq!(nodes.len(), 13);
    assert_eq!(
        results[7].nodes_added.len(),
        0,
        "turn 8 only repeats a concept"
    );

    // Cross-turn edges: turn 2 links a turn-1 node; turn 3 links a turn-2 node.
    let edges = store.edges("e2e").unwrap();
    let by_id = |id: &str| nodes.iter().find(|n| n.id == id).unwrap();
    let cross: Vec<(String, String, u32)> = edges
        .iter()
        .filter(|e| by_id(&e.source_node_id).turn < e.turn)
        .map(|e| {
            (
                by_id(&e.source_node_id).label.clone(),
                by_id(&e.target_node_id).label.clone(),
                e.turn,
            )
        })
        .collect();
    assert!(
        cross.contains(&(
            "creamy texture".into(),
            "coffee feels like a treat".into(),
            2
        )),
        "{cross:?}"
    );
    assert!(
        cross.contains(&(
            "good mood in the morning".into(),
            "being patient with family".into(),
            3
        )),
        "{cross:?}"
    );
    assert_eq!(edges.len(), 8);
    for e in &edges {
        assert!(answer_turn.contains_key(e.source_utterance_ids[0].as_str()));
    }

    // Slots: the two creaminess paraphrases promote their slot in turn 3.
    let slots = store.slots("e2e").unwrap();
    let creaminess = slots.iter().find(|s| s.slot_name == "creaminess").unwrap();
    assert_eq!(creaminess.status, SlotStatus::Active);
    assert_eq!(creaminess.support_count, 2);
    assert_eq!(creaminess.promoted_turn, Some(3));
    let froth = slots
        .iter()
        .find(|s| s.slot_name == "froth_quality")
        .unwrap();
    assert_eq!(froth.status, SlotStatus::Candidate);
    assert!(results[2].canonical_graph.as_ref().unwrap().concept_count >= 1);

    // Focus history: one entry per turn, turn 1 empty.
    let focus = &session.state.focus_history;
    assert_eq!(
        focus.iter().map(|f| f.turn).collect::<Vec<_>>(),
        (1..=10).collect::<Vec<_>>()
    );
    assert_eq!(
        (focus[0].node_id.as_str(), focus[0].label.as_str()),
        ("", "")
    );
    assert!(
        focus[1..].iter().any(|f| !f.node_id.is_empty()),
        "later turns target nodes"
    );
    for (entry, result) in focus.iter().zip(&results) {
        assert_eq!(entry.strategy, result.strategy_selected);
        assert_eq!(
            entry.node_id,
            result
                .focus
                .as_ref()
                .map(|f| f.node_id.clone())
                .unwrap_or_default()
        );
    }

    // Strategy history: the store's last 5 and the state's deque agree with the turns.
    let strategies: Vec<String> = results
        .iter()
        .map(|r| r.strategy_selected.clone())
        .collect();
    assert_eq!(store.recent_strategies("e2e", 5).unwrap(), strategies[5..]);
    assert_eq!(session.state.strategy_history, strategies);

    // Score decomposition every turn: all 7 strategies ranked, one selected, plus node entries
    // from turn 2 on for node-bound winners.
    let methodology = common::spec(11).methodology;
    for r in &results {
        let stage1: Vec<_> = r
            .score_decomposition
            .iter()
            .filter(|c| c.stage() == 1)
            .collect();
        assert_eq!(
            stage1.len(),
            methodology.strategies.len(),
            "turn {}",
            r.turn_number
        );
        assert_eq!(stage1.iter().filter(|c| c.selected).count(), 1);
        assert!(stage1.iter().all(|c| !c.signal_contributions.is_empty()));
        assert!(!r.signals.is_empty());
        assert_eq!(r.strategy_alternatives.len(), methodology.strategies.len());
    }
    assert!(
        results[0]
            .score_decomposition
            .iter()
            .all(|c| c.stage() == 1),
        "turn 1 has no node stage"
    );

    // Scoring rows and usage: one decision per turn; every LLM call recorded.
    assert_eq!(store.scoring_history("e2e").unwrap().len(), 10);
    let usage = store.llm_usage("e2e").unwrap();
    let calls = |role: &str| usage.iter().filter(|u| u.usage.role == role).count();
    assert_eq!(calls("extraction"), 10);
    assert_eq!(calls("signal_scoring"), 10);
    assert_eq!(calls("question_generation"), 11);
    assert!(calls("slot_discovery") >= 7);

    // Events: every stage of every turn started and finished, question text streamed.
    let mut finished = HashSet::new();
    let mut deltas = 0;
    while let Ok(e) = rx.try_recv() {
        match e {
            Event::StageFinished {
                turn,
                stage,
                resumed,
                ..
            } => {
                assert!(!resumed);
                finished.insert((turn, stage));
            }
            Event::QuestionDelta { .. } => deltas += 1,
            _ => {}
        }
    }
    assert_eq!(finished.len(), 10 * Stage::ALL.len());
    assert!(deltas >= 11);
}

#[tokio::test]
async fn respondent_input_is_bounded_and_cleaned() {
    let tmp = tempfile::tempdir().unwrap();
    let mut interview = Interview::create(
        Store::open(tmp.path().join("i.db")).unwrap(),
        common::spec(10),
        common::services(),
        Some("bounds".to_owned()),
    )
    .unwrap();
    let events = EventSink::none();
    interview.opening(&events).await.unwrap();

    let err = interview.answer(" \n\t ", &events).await.unwrap_err();
    assert!(matches!(err.error, PipelineError::EmptyAnswer));
    assert!(err.to_string().contains("empty"), "{err}");
    let long = "word ".repeat(MAX_ANSWER_CHARS);
    let err = interview.answer(&long, &events).await.unwrap_err();
    assert!(matches!(err.error, PipelineError::AnswerTooLong { .. }));
    assert!(err.to_string().contains("5000"), "{err}");
    // Nothing was written by the refused answers.
    assert!(
        interview
            .store()
            .checkpoints_for_turn("bounds", 1)
            .unwrap()
            .is_empty()
    );

    let answer =
        "I switched to oat milk\u{0}\u{1b}[2J because it's so creamy.\r\nIt froths really well.";
    interview.answer(answer, &events).await.unwrap();
    let saved = interview
        .store()
        .utterance("bounds", 1, Speaker::Respondent)
        .unwrap()
        .unwrap();
    assert_eq!(
        saved.text,
        "I switched to oat milk[2J because it's so creamy.\nIt froths really well."
    );
}

/// A script identical to the shared one except that `role`'s first matching rule for turn 1
/// answers `bad` first and its usual reply on the next attempt.
fn script_with_bad_first_reply(dir: &std::path::Path, role: &str, bad: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(common::example("oat_milk_script.yaml")).unwrap();
    let mut script: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let rules = script[role].as_array_mut().unwrap();
    let index = rules
        .iter()
        .position(|r| {
            r.get("turn").is_none_or(|t| t == 1)
                && r.get("contains").is_none_or(|c| c == "of type 'attribute'")
        })
        .unwrap();
    let mut failing = rules[index].clone();
    let good = failing["reply"].take();
    let map = failing.as_object_mut().unwrap();
    map.remove("reply");
    map.insert("turn".into(), 1.into());
    map.insert("replies".into(), serde_json::json!([bad, good]));
    rules.insert(0, failing);
    let path = dir.join(format!("{role}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&script).unwrap()).unwrap();
    path
}

async fn next_event(
    feed: &mut interviewer::session::SessionFeed,
    wanted: impl Fn(&Event) -> bool,
) -> Event {
    loop {
        let e = tokio::time::timeout(std::time::Duration::from_secs(60), feed.next())
            .await
            .expect("no event within 60 s")
            .expect("the session task stopped");
        if let interviewer::session::SessionEvent::Pipeline(e) = e
            && wanted(&e)
        {
            return e;
        }
    }
}

#[tokio::test]
async fn a_malformed_reply_fails_the_turn_in_its_stage_and_retry_recovers() {
    use interviewer::session::{Command, spawn};
    let cases = [
        (
            "extraction",
            r#"{"concepts": [{"label": "oat", "node_type": "flavour", "confidence": 1, "stance": 0, "source_quote": ""}], "relationships": []}"#,
            Stage::Extraction,
            "concepts[0].node_type",
        ),
        (
            "slot_discovery",
            "I would group these by texture.",
            Stage::SlotDiscovery,
            "slot_discovery",
        ),
        (
            "signal_scoring",
            r#"{"response_depth": {"score": 9, "rationale": "x"}}"#,
            Stage::StrategySelection,
            "response_depth",
        ),
    ];
    for (role, bad, stage, mention) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("i.db");
        let script = script_with_bad_first_reply(tmp.path(), role, bad);
        let interview = Interview::create(
            Store::open(&db).unwrap(),
            common::spec(11),
            common::services_with(&script),
            Some("bad".to_owned()),
        )
        .unwrap();
        let mut handle = spawn(interview).unwrap();
        next_event(&mut handle.feed, |e| {
            matches!(e, Event::Question { turn: 0, .. })
        })
        .await;
        let answer = common::answers()[0].clone();
        handle
            .commands
            .try_send(Command::Answer(answer.clone()))
            .unwrap();
        let failed = next_event(&mut handle.feed, |e| {
            matches!(e, Event::TurnFailed { .. } | Event::TurnCompleted(_))
        })
        .await;
        let Event::TurnFailed {
            turn,
            stage: failed_stage,
            error,
        } = failed
        else {
            panic!("{role}: the malformed reply was accepted");
        };
        assert_eq!((turn, failed_stage), (1, stage), "{role}: {error}");
        assert!(error.contains(mention), "{role}: {error}");

        // The answer is kept, and nothing of the failed stage was committed.
        let reader = Store::open(&db).unwrap();
        let saved = reader
            .utterance("bad", 1, Speaker::Respondent)
            .unwrap()
            .unwrap();
        assert_eq!(saved.text, answer);
        let committed: Vec<String> = reader
            .checkpoints_for_turn("bad", 1)
            .unwrap()
            .into_iter()
            .map(|c| c.stage)
            .collect();
        assert!(
            !committed.contains(&stage.name().to_owned()),
            "{role}: {committed:?}"
        );
        // The rejected reply still cost its tokens: its usage row is there, marked rejected.
        let usage = reader.llm_usage("bad").unwrap();
        let rejected: Vec<_> = usage
            .iter()
            .map(|record| &record.usage)
            .filter(|u| u.role == role && u.outcome.starts_with("rejected: "))
            .collect();
        assert_eq!(rejected.len(), 1, "{role}: {usage:?}");
        assert!(
            rejected[0].tokens_in > 0 && rejected[0].tokens_out > 0,
            "{role}: {usage:?}"
        );
        assert!(
            rejected[0].outcome.contains(mention),
            "{role}: {}",
            rejected[0].outcome
        );

        handle.commands.try_send(Command::Retry).unwrap();
        let done = next_event(&mut handle.feed, |e| {
            matches!(e, Event::TurnFailed { .. } | Event::TurnCompleted(_))
        })
        .await;
        let Event::TurnCompleted(result) = done else {
            panic!("{role}: retry failed: {done:?}");
        };
        assert_eq!(result.turn_number, 1);
        assert_eq!(
            reader.utterances("bad").unwrap().len(),
            3,
            "{role}: one answer, two questions"
        );
        handle.shutdown();
    }
}

#[tokio::test]
async fn a_researcher_can_regenerate_the_pending_question() {
    let tmp = tempfile::tempdir().unwrap();
    let mut interview = Interview::create(
        Store::open(tmp.path().join("i.db")).unwrap(),
        common::spec(11),
        common::services(),
        Some("override".to_owned()),
    )
    .unwrap();
    let events = EventSink::none();
    let answers = common::answers();
    interview.opening(&events).await.unwrap();
    interview.answer(&answers[0], &events).await.unwrap();
    let second = interview.answer(&answers[1], &events).await.unwrap();
    let engine_choice = second.strategy_selected.clone();
    let target = second
        .node_signals
        .keys()
        .find(|k| second.focus.as_ref().is_none_or(|f| &f.node_id != *k))
        .unwrap()
        .clone();
    let strategy = if engine_choice == "deepen" {
        "clarify"
    } else {
        "deepen"
    };

    let err = interview
        .regenerate("no_such_strategy", None, &events)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("deepen"),
        "lists the known strategies: {err}"
    );
    let err = interview
        .regenerate(strategy, Some("no-such-node"), &events)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no-such-node"), "{err}");

    let question = interview
        .regenerate(strategy, Some(&target), &events)
        .await
        .unwrap();
    let store = interview.store();
    assert_eq!(
        store
            .utterance("override", 2, Speaker::Interviewer)
            .unwrap()
            .unwrap()
            .text,
        question
    );
    let state = store.get_session("override").unwrap().unwrap().state;
    let entry = state.focus_history.last().unwrap();
    assert_eq!(
        (entry.turn, entry.strategy.as_str(), entry.node_id.as_str()),
        (2, strategy, target.as_str())
    );
    assert!(entry.overridden);
    assert_eq!(state.strategy_history.last().unwrap(), strategy);
    let decision = store.scoring_history("override").unwrap().pop().unwrap();
    assert_eq!(decision.strategy, strategy);
    assert_eq!(
        decision.payload["override"]["replaced"]["strategy"],
        engine_choice.as_str()
    );
    assert!(
        store
            .checkpoint("override", 2, "question_override")
            .unwrap()
            .is_some()
    );

    // The next turn carries on from the overridden decision.
    let third = interview.answer(&answers[2], &events).await.unwrap();
    assert_eq!(third.turn_number, 3);
    assert_eq!(
        interview.store().recent_strategies("override", 2).unwrap(),
        [strategy.to_owned(), third.strategy_selected.clone()]
    );
}

#[tokio::test]
async fn disabled_optional_stages_produce_empty_contracts() {
    let tmp = tempfile::tempdir().unwrap();
    let mut services = common::services();
    services.settings.enable_srl = false;
    services.settings.enable_canonical_slots = false;
    let mut interview = Interview::create(
        Store::open(tmp.path().join("i.db")).unwrap(),
        common::spec(11),
        services,
        Some("lean".to_owned()),
    )
    .unwrap();
    let events = EventSink::none();
    let answers = common::answers();
    let results = run_all(&mut interview, &answers[..3], &events).await;
    assert_eq!(results.len(), 3);
    let store = interview.store();
    for turn in 1..=3 {
        let srl = store
            .checkpoint("lean", turn, "srl_preprocessing")
            .unwrap()
            .unwrap();
        assert_eq!(srl.output["output"]["frame_count"], 0);
        assert_eq!(srl.output["output"]["discourse_count"], 0);
        assert!(
            srl.output["output"]["status"]
                .as_str()
                .unwrap()
                .contains("enable_srl")
        );
        let slots = store
            .checkpoint("lean", turn, "slot_discovery")
            .unwrap()
            .unwrap();
        assert_eq!(
            slots.output["output"]["slots_created"],
            serde_json::json!([])
        );
    }
    assert!(store.slots("lean").unwrap().is_empty());
    assert!(
        results
            .iter()
            .all(|r| r.canonical_graph.is_none() && r.graph_comparison.is_none())
    );
    let usage = store.llm_usage("lean").unwrap();
    assert!(usage.iter().all(|u| u.usage.role != "slot_discovery"));
    assert_eq!(results[0].nodes_added.len(), 3);
}

#[tokio::test]
async fn srl_hints_reach_the_checkpoint_when_enabled() {
    let tmp = tempfile::tempdir().unwrap();
    let mut interview = Interview::create(
        Store::open(tmp.path().join("i.db")).unwrap(),
        common::spec(11),
        common::services(),
        Some("srl".to_owned()),
    )
    .unwrap();
    let events = EventSink::none();
    run_all(&mut interview, &common::answers()[..1], &events).await;
    let srl = interview
        .store()
        .checkpoint("srl", 1, "srl_preprocessing")
        .unwrap()
        .unwrap();
    let out = &srl.output["output"];
    assert!(out["discourse_count"].as_u64().unwrap() >= 1, "{out}");
    assert!(out["frame_count"].as_u64().unwrap() >= 1, "{out}");
    let relations = out["discourse_relations"].to_string();
    assert!(relations.contains("because"), "{relations}");
}

/// Where each event of a stage or question sits in the stream, for ordering checks.
fn position(events: &[Event], wanted: impl Fn(&Event) -> bool) -> usize {
    events
        .iter()
        .position(wanted)
        .unwrap_or_else(|| panic!("event not found in {} events", events.len()))
}

#[tokio::test]
async fn slot_discovery_runs_after_the_question_and_before_the_next_state() {
    let tmp = tempfile::tempdir().unwrap();
    let mut services = common::services();
    services.settings.inline_slot_discovery = false;
    let mut interview = Interview::create(
        Store::open(tmp.path().join("i.db")).unwrap(),
        common::spec(11),
        services,
        Some("deferred".to_owned()),
    )
    .unwrap();
    let (tx, mut rx) = unbounded_channel();
    let events = EventSink::new(tx);
    let answers = common::answers();
    interview.opening(&events).await.unwrap();
    // Turn 1, then its deferred discovery as a driver runs it while the respondent types.
    interview.answer(&answers[0], &events).await.unwrap();
    interview.discover_deferred_slots(&events).await.unwrap();
    // Turn 2 without the driver's call: turn 3 runs turn 2's discovery itself before its state.
    interview.answer(&answers[1], &events).await.unwrap();
    interview.answer(&answers[2], &events).await.unwrap();
    drop(events);
    let mut seen = Vec::new();
    while let Ok(e) = rx.try_recv() {
        seen.push(e);
    }
    let slots_done = |turn: u32| move |e: &Event| matches!(e, Event::StageFinished { turn: t, stage: Stage::SlotDiscovery, .. } if *t == turn);
    let question =
        |turn: u32| move |e: &Event| matches!(e, Event::Question { turn: t, .. } if *t == turn);
    let state_of = |turn: u32| move |e: &Event| matches!(e, Event::StageStarted { turn: t, stage: Stage::StateComputation } if *t == turn);
    for turn in 1..=2 {
        let slots = position(&seen, slots_done(turn));
        assert!(
            position(&seen, question(turn)) < slots,
            "turn {turn}: slots after the question"
        );
        assert!(
            slots < position(&seen, state_of(turn + 1)),
            "turn {turn}: slots before turn {}'s state",
            turn + 1
        );
    }
    // One slot-discovery call per turn that added nodes, never two.
    let calls: Vec<u32> = seen
        .iter()
        .filter_map(|e| match e {
            Event::LlmCall { turn, role, .. } if role.as_str() == "slot_discovery" => Some(*turn),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![1, 2],
        "turn 3's discovery waits for the next answer"
    );
    // Turn 1's slots are in the store under turn 1.
    let store = interview.store();
    let checkpoints = store.checkpoints_for_turn("deferred", 1).unwrap();
    assert!(
        checkpoints
            .iter()
            .any(|c| c.stage == Stage::SlotDiscovery.name())
    );
    assert!(!store.slots("deferred").unwrap().is_empty());
}

/// A question reply that fails the question check is asked for once more; when that fails
/// too, the strategy's template question is asked, and the stage output and a warning say so.
#[tokio::test]
async fn a_bad_question_is_asked_again_then_replaced_by_a_template() {
    for (replies, source) in [
        (
            vec![
                "## Strategy: - Ask your respondent to explain",
                "What do you like most about it?",
            ],
            "model, second try",
        ),
        (
            vec![
                "   ",
                "- Why This Strategy Was Selected: - graph.chain_completion.has_complete.true: weight 0.6",
            ],
            "template (the model's questions failed the check",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(common::example("oat_milk_script.yaml")).unwrap();
        let mut script: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        script["question_generation"]
            .as_array_mut()
            .unwrap()
            .insert(0, serde_json::json!({"turn": 1, "replies": replies}));
        let path = tmp.path().join("script.json");
        std::fs::write(&path, script.to_string()).unwrap();
        let mut interview = Interview::create(
            Store::open(tmp.path().join("i.db")).unwrap(),
            common::spec(11),
            common::services_with(&path),
            Some("q".to_owned()),
        )
        .unwrap();
        let (tx, mut rx) = unbounded_channel();
        let events = EventSink::new(tx);
        interview.opening(&events).await.unwrap();
        let result = interview
            .answer(&common::answers()[0], &events)
            .await
            .unwrap();
        assert!(
            interviewer::prompts::check_question(&result.next_question, &[]).is_ok(),
            "{}",
            result.next_question
        );
        let checkpoint = interview
            .store()
            .checkpoint("q", 1, Stage::QuestionGeneration.name())
            .unwrap()
            .unwrap();
        let recorded = checkpoint.output["output"]["question_source"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(recorded.starts_with(source), "{recorded}");
        // True only when the template replaced the model's refused questions.
        let fallback = checkpoint.output["output"]["has_llm_fallback"]
            .as_bool()
            .unwrap();
        assert_eq!(fallback, source.starts_with("template"), "{source}");
        drop(events);
        let mut warned = false;
        while let Ok(e) = rx.try_recv() {
            warned |= matches!(e, Event::Warning { ref message } if message.contains("template question"));
        }
        assert_eq!(warned, fallback);
    }
}

/// Seed 000 Path 8: a stored node tracker that cannot be read is replaced by a fresh one with
/// a warning; the session still opens, and its next turn completes and saves a readable one.
#[tokio::test]
async fn an_unreadable_node_tracker_is_replaced_with_a_warning() {
    use interviewer::graph::node_state::NodeStateTracker;
    use interviewer::session::{Command, spawn};
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let services = common::services();
    let answers = common::answers();
    {
        let mut interview = Interview::create(
            Store::open(&db).unwrap(),
            common::spec(11),
            services.clone(),
            Some("t".to_owned()),
        )
        .unwrap();
        let (tx, _rx) = unbounded_channel();
        let results = run_all(&mut interview, &answers[..1], &EventSink::new(tx)).await;
        assert_eq!(results.len(), 1);
    }
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE sessions SET node_tracker = '{\"schema_version\": 1, \"states\": {' \
             WHERE id = 't'",
            [],
        )
        .unwrap();

    let interview =
        Interview::open(Store::open(&db).unwrap(), "t", common::spec(11), services).unwrap();
    let mut handle = spawn(interview).unwrap();
    let warning = next_event(
        &mut handle.feed,
        |e| matches!(e, Event::Warning { message } if message.contains("node tracker")),
    )
    .await;
    let Event::Warning { message } = warning else {
        unreachable!()
    };
    assert!(message.contains("could not be read"), "{message}");
    assert!(message.contains("not JSON"), "{message}");
    next_event(&mut handle.feed, |e| {
        matches!(e, Event::Question { turn: 1, .. })
    })
    .await;
    handle
        .commands
        .try_send(Command::Answer(answers[1].clone()))
        .unwrap();
    let done = next_event(&mut handle.feed, |e| {
        matches!(e, Event::TurnFailed { .. } | Event::TurnCompleted(_))
    })
    .await;
    let Event::TurnCompleted(result) = done else {
        panic!("turn 2 failed: {done:?}");
    };
    assert_eq!(result.turn_number, 2);
    handle.shutdown();
    let stored = Store::open(&db).unwrap().get_session("t").unwrap().unwrap();
    let tracker =
        NodeStateTracker::from_json_text(stored.node_tracker.as_deref().unwrap()).unwrap();
    assert!(tracker.iter_in_creation_order().count() > 0);
}

/// Seed 001 stage 6 "Validates: Graph state freshness via `computed_at` timestamp": a turn
/// resumed at stage 6 with a stage-5 checkpoint older than its extraction fails in stage 6
/// with the typed error, and scores nothing.
#[tokio::test]
async fn strategy_selection_refuses_a_graph_state_older_than_the_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let script = script_with_bad_first_reply(
        tmp.path(),
        "signal_scoring",
        r#"{"response_depth": {"score": 9, "rationale": "x"}}"#,
    );
    let services = common::services_with(&script);
    let (tx, _rx) = unbounded_channel();
    let events = EventSink::new(tx);
    {
        let mut interview = Interview::create(
            Store::open(&db).unwrap(),
            common::spec(11),
            services.clone(),
            Some("stale".to_owned()),
        )
        .unwrap();
        interview.opening(&events).await.unwrap();
        let failed = interview
            .answer(&common::answers()[0], &events)
            .await
            .unwrap_err();
        assert_eq!(failed.stage, Stage::StrategySelection, "{failed}");
    }
    let changed = rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE stage_checkpoints \
             SET output = json_set(output, '$.output.computed_at', '2000-01-01T00:00:00.000Z') \
             WHERE session_id = 'stale' AND turn = 1 AND stage = 'state_computation'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);

    let mut interview = Interview::open(
        Store::open(&db).unwrap(),
        "stale",
        common::spec(11),
        services,
    )
    .unwrap();
    assert!(matches!(
        interview.pending().unwrap(),
        Pending::Resume { turn: 1, .. }
    ));
    let failed = interview.resume(&events).await.unwrap_err();
    assert_eq!(failed.stage, Stage::StrategySelection, "{failed}");
    assert!(
        matches!(
            &failed.error,
            PipelineError::StaleGraphState { turn: 1, reason }
                if reason.contains("before this turn's extraction")
        ),
        "{failed}"
    );
    let committed: Vec<String> = interview
        .store()
        .checkpoints_for_turn("stale", 1)
        .unwrap()
        .into_iter()
        .map(|c| c.stage)
        .collect();
    assert!(!committed.contains(&"strategy_selection".to_owned()));
}

/// A provider that plays a script and keeps every request it was sent.
struct Recording {
    inner: interviewer::llm::ScriptedProvider,
    seen: std::sync::Mutex<Vec<interviewer::llm::LlmRequest>>,
}

impl interviewer::llm::LlmProvider for Recording {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn complete<'a>(
        &'a self,
        request: &'a interviewer::llm::LlmRequest,
    ) -> futures::future::BoxFuture<
        'a,
        Result<interviewer::llm::LlmResponse, interviewer::llm::LlmError>,
    > {
        self.seen.lock().unwrap().push(request.clone());
        self.inner.complete(request)
    }
}

/// Seed 001 "YAML Configuration Flow": the methodology's `signals:` section decides which
/// global detectors run and which rubrics the scoring call asks for. Listing two `llm.*`
/// rubrics and one graph signal sends only those two rubrics, and computes (and reports) only
/// the listed global signals and the phase scoring needs; node signals still run.
#[tokio::test]
async fn the_methodology_signals_section_decides_what_is_computed_and_asked() {
    use interviewer::llm::{LlmProvider, LlmRouter, Role, ScriptedProvider};
    use std::sync::Arc;
    let tmp = tempfile::tempdir().unwrap();
    let mut spec = common::spec(11);
    spec.methodology.signals = [
        ("graph".to_owned(), vec!["graph.node_count".to_owned()]),
        (
            "llm".to_owned(),
            vec!["llm.engagement".to_owned(), "llm.certainty".to_owned()],
        ),
    ]
    .into_iter()
    .collect();
    let provider = Arc::new(Recording {
        inner: ScriptedProvider::load(&common::example("oat_milk_script.yaml")).unwrap(),
        seen: std::sync::Mutex::new(Vec::new()),
    });
    let mut services = common::services();
    services.llm = Arc::new(LlmRouter::single(
        &(Arc::clone(&provider) as Arc<dyn LlmProvider>),
    ));
    let mut interview = Interview::create(
        Store::open(tmp.path().join("i.db")).unwrap(),
        spec,
        services,
        Some("listed".to_owned()),
    )
    .unwrap();
    let (tx, _rx) = unbounded_channel();
    let events = EventSink::new(tx);
    interview.opening(&events).await.unwrap();
    let mut results = Vec::new();
    for answer in common::answers().iter().take(3) {
        results.push(interview.answer(answer, &events).await.unwrap());
    }
    let scoring: Vec<String> = provider
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.role == Role::SignalScoring)
        .map(|r| r.user.clone())
        .collect();
    assert_eq!(scoring.len(), 3);
    for prompt in &scoring {
        assert!(prompt.contains("\nengagement: "), "{prompt}");
        assert!(prompt.contains("\ncertainty: "), "{prompt}");
        for absent in [
            "response_depth",
            "specificity",
            "valence",
            "intellectual_engagement",
        ] {
            assert!(!prompt.contains(absent), "{absent} asked: {prompt}");
        }
    }
    for r in &results {
        let names: HashSet<&str> = r.signals.keys().map(String::as_str).collect();
        let expected: HashSet<&str> = [
            "graph.node_count",
            "llm.engagement",
            "llm.certainty",
            "meta.interview.phase",
        ]
        .into_iter()
        .collect();
        assert_eq!(names, expected, "turn {}", r.turn_number);
        if r.turn_number > 1 {
            // Node signals come from their own service, outside the section (seed 001), and
            // run on what there is: no rubric was asked for them.
            assert!(!r.node_signals.is_empty(), "turn {}", r.turn_number);
        }
    }
}

/// Seed 004's ERROR state: a turn that fails in a stage leaves the session `failed` with the
/// stage, message and time, for `sessions`, the start screen and `resume` to show; reopening
/// says so, and the successful retry clears it.
#[tokio::test]
async fn a_failed_turn_is_stored_as_failed_until_a_retry_succeeds() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let bad = r#"{"concepts": [{"label": "oat", "node_type": "flavour", "confidence": 1, "stance": 0, "source_quote": ""}], "relationships": []}"#;
    let script = script_with_bad_first_reply(tmp.path(), "extraction", bad);
    // One provider for both opens: its replies (bad, then good) go on where they were.
    let services = common::services_with(&script);
    let (tx, _rx) = unbounded_channel();
    let events = EventSink::new(tx);
    {
        let mut interview = Interview::create(
            Store::open(&db).unwrap(),
            common::spec(11),
            services.clone(),
            Some("err".to_owned()),
        )
        .unwrap();
        interview.opening(&events).await.unwrap();
        let error = interview
            .answer(&common::answers()[0], &events)
            .await
            .unwrap_err();
        assert_eq!(error.stage, Stage::Extraction);
    }
    let store = Store::open(&db).unwrap();
    let listed = store.list_sessions().unwrap();
    assert_eq!(listed[0].status_word(), "failed");
    let failure = store.get_session("err").unwrap().unwrap().failure.unwrap();
    assert_eq!((failure.turn, failure.stage.as_str()), (1, "3 extraction"));
    assert!(
        failure.message.contains("concepts[0].node_type"),
        "{failure:?}"
    );
    assert!(!failure.at.is_empty());
    assert!(
        failure
            .describe()
            .starts_with("failed at stage 3 extraction in turn 1: ")
            && failure.describe().ends_with("— resume retries"),
        "{}",
        failure.describe()
    );
    drop(store);

    let mut interview =
        Interview::open(Store::open(&db).unwrap(), "err", common::spec(11), services).unwrap();
    assert!(
        interview
            .load_warnings()
            .iter()
            .any(|w| w.contains("failed at stage 3 extraction")),
        "{:?}",
        interview.load_warnings()
    );
    // The scripted provider's second extraction reply is the good one.
    interview.resume(&events).await.unwrap();
    let record = interview.store().get_session("err").unwrap().unwrap();
    assert_eq!(record.failure, None);
    assert_eq!(
        interview.store().list_sessions().unwrap()[0].status_word(),
        "active"
    );
}
