//! What the session task reports beyond the pipeline's events: the history of an opened session
//! and a snapshot of its graph after every command. Both are read here, on the session's
//! thread, from the interview's memory and its store, so a view never queries the store.
//!
//! A snapshot is a view aid: when it cannot be built (a store read fails) the failure is logged
//! and the view keeps its previous snapshot; the interview itself is not affected.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;

use super::SessionEvent;
use super::driver::Reports;
use super::views::{EdgeView, NodeView, SessionHistory, SessionSnapshot, SlotView, TranscriptLine};
use crate::domain::{LlmScores, Speaker};
use crate::pipeline::{Interview, PipelineError, Stage, TurnResult};
use crate::store::ScoringRecord;
use crate::store::{SessionStatus, StoreOps};

/// Sends a [`SessionSnapshot`] of `interview`, or logs why there is none.
pub fn publish(interview: &Interview, reports: &Reports) {
    match snapshot(interview) {
        Ok(s) => reports.send(SessionEvent::Snapshot(std::sync::Arc::new(s))),
        Err(e) => tracing::warn!(session = interview.session_id(), "no snapshot: {e}"),
    }
}

/// The session's transcript and its last completed turn, for a view opening on it.
pub fn history(interview: &Interview) -> SessionHistory {
    let transcript = match interview.store().utterances(interview.session_id()) {
        Ok(u) => u
            .into_iter()
            .map(|u| TranscriptLine {
                turn: u.turn,
                speaker: u.speaker,
                text: u.text,
            })
            .collect(),
        Err(e) => {
            tracing::warn!(session = interview.session_id(), "no transcript: {e}");
            Vec::new()
        }
    };
    // Read once, not once per turn.
    let records = interview
        .store()
        .scoring_history(interview.session_id())
        .unwrap_or_else(|e| {
            tracing::warn!(session = interview.session_id(), "no scoring history: {e}");
            Vec::new()
        });
    let mut turns = Vec::new();
    for turn in 1..=interview.turn_count() {
        match turn_result(interview, turn, &records) {
            Ok(r) => turns.push(r),
            Err(e) => {
                tracing::warn!(
                    session = interview.session_id(),
                    turn,
                    "no turn result: {e}"
                );
            }
        }
    }
    SessionHistory { transcript, turns }
}

/// A completed turn's result rebuilt from its checkpoints, with a researcher's override (kept
/// in the turn's scoring record) applied.
fn turn_result(
    interview: &Interview,
    turn: u32,
    records: &[ScoringRecord],
) -> Result<TurnResult, PipelineError> {
    let run = interview
        .restore_run(turn, String::new())
        .map_err(|(_, e)| e)?;
    let mut result = TurnResult::from_run(&run.ctx, Duration::ZERO)?;
    if let Some(record) = records.iter().find(|r| r.turn == turn) {
        result.strategy_selected.clone_from(&record.strategy);
        if let Some(focus) = record.payload.get("focus") {
            result.focus = serde_json::from_value(focus.clone()).unwrap_or(None);
        }
        if let Some(Ok(decomposition)) = record
            .payload
            .get("score_decomposition")
            .map(|d| serde_json::from_value(d.clone()))
        {
            result.score_decomposition = decomposition;
        }
    }
    if let Ok(question) = interview.question_of(turn) {
        result.next_question = question;
    }
    Ok(result)
}

/// The graph, node states, slots, focus trace, latest rubric scores and usage of `interview`.
fn snapshot(interview: &Interview) -> Result<SessionSnapshot, PipelineError> {
    let data = &interview.data;
    let id = interview.session_id();
    let store = interview.store();
    let answers: HashMap<String, (u32, String)> = store
        .utterances(id)?
        .into_iter()
        .filter(|u| u.speaker == Speaker::Respondent)
        .map(|u| (u.id, (u.turn, u.text)))
        .collect();
    let slot_of: HashMap<&str, &str> = data
        .mappings
        .iter()
        .map(|m| (m.surface_node_id.as_str(), m.canonical_slot_id.as_str()))
        .collect();
    let methodology = &interview.spec().methodology;
    let nodes = data
        .nodes
        .iter()
        .map(|n| {
            let key = data.tracker.tracking_key(&n.id).to_owned();
            NodeView {
                id: n.id.clone(),
                label: n.label.clone(),
                node_type: n.node_type.clone(),
                level: methodology.node_type(&n.node_type).map_or(0, |t| t.level),
                turn: n.turn,
                stance: n.stance,
                confidence: n.confidence,
                superseded: n.superseded_by.is_some(),
                state: data.tracker.states.get(&key).cloned(),
                tracking_key: key,
                slot_id: slot_of.get(n.id.as_str()).map(|s| (*s).to_owned()),
                source_quote: n.source_quote.clone(),
                mentions: n
                    .source_utterance_ids
                    .iter()
                    .filter_map(|u| answers.get(u))
                    .map(|(turn, text)| TranscriptLine {
                        turn: *turn,
                        speaker: Speaker::Respondent,
                        text: text.clone(),
                    })
                    .collect(),
            }
        })
        .collect();
    let edges = data
        .edges
        .iter()
        .map(|e| EdgeView {
            source: e.source_node_id.clone(),
            target: e.target_node_id.clone(),
            edge_type: e.edge_type.clone(),
            turn: e.turn,
        })
        .collect();
    let slots = data
        .slots
        .iter()
        .map(|s| SlotView {
            id: s.id.clone(),
            name: s.slot_name.clone(),
            node_type: s.node_type.clone(),
            status: s.status,
            support_count: s.support_count,
            first_seen_turn: s.first_seen_turn,
            promoted_turn: s.promoted_turn,
            members: data
                .mappings
                .iter()
                .filter(|m| m.canonical_slot_id == s.id)
                .map(|m| m.surface_node_id.clone())
                .collect(),
        })
        .collect();
    let turn_count = data.state.turn_count;
    let new_nodes_per_turn = (1..=turn_count)
        .map(|t| {
            let n = data.nodes.iter().filter(|n| n.turn == t).count();
            u32::try_from(n).unwrap_or(u32::MAX)
        })
        .collect();
    Ok(SessionSnapshot {
        session_id: id.to_owned(),
        turn_count,
        max_turns: data.max_turns,
        finished: (data.status == SessionStatus::Finished)
            .then(|| data.termination_reason.clone().unwrap_or_default()),
        focus_history: data.state.focus_history.clone(),
        nodes,
        edges,
        slots,
        rubric_scores: rubric_scores(interview, turn_count),
        new_nodes_per_turn,
        usage: store.usage_totals(id)?,
    })
}

/// The rubric scores (with rationales) the LLM signal batch gave the answer of `turn`.
fn rubric_scores(interview: &Interview, turn: u32) -> LlmScores {
    if turn == 0 {
        return LlmScores::new();
    }
    let checkpoint = interview.store().checkpoint(
        interview.session_id(),
        turn,
        Stage::StrategySelection.name(),
    );
    match checkpoint {
        Ok(Some(c)) => c
            .output
            .get("extra")
            .and_then(|e| e.get("llm_scores"))
            .cloned()
            .and_then(|v: Value| serde_json::from_value(v).ok())
            .unwrap_or_default(),
        Ok(None) => LlmScores::new(),
        Err(e) => {
            tracing::warn!(turn, "no rubric scores: {e}");
            LlmScores::new()
        }
    }
}
