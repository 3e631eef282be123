//! A researcher's override: regenerate the pending question under a strategy and focus they
//! choose. The override replaces the turn's decision, focus entry and question, is marked as
//! an override everywhere it is recorded, and commits in one transaction with its own
//! checkpoint, like a stage.

use serde_json::{Value, json};

use crate::config::{NodeBinding, Strategy};
use crate::domain::{Phase, SessionState, Speaker};
use crate::graph::node_state::NodeStateTracker;
use crate::pipeline::contracts::{Focus, StrategySelectionOutput};
use crate::pipeline::interview::{Interview, OVERRIDE_CHECKPOINT};
use crate::pipeline::stages::decide::focus_mode_name;
use crate::pipeline::stages::respond::scoring_record;
use crate::pipeline::{Event, EventSink, PipelineError, Stage, TurnError};
use crate::scoring::{ScoredCandidate, select_node};
use crate::store::StoreOps;

impl Interview {
    /// Regenerates the pending question (the one asked at the end of the last completed turn)
    /// with `strategy` and, for node-bound strategies, `node` (a node id; `None` lets the
    /// engine rank nodes for that strategy). Returns the new question.
    pub async fn regenerate(
        &mut self,
        strategy: &str,
        node: Option<&str>,
        events: &EventSink,
    ) -> Result<String, TurnError> {
        let turn = self.world.state.turn_count;
        let fail = |error| TurnError {
            turn,
            stage: Stage::QuestionGeneration,
            error,
        };
        self.regenerate_inner(turn, strategy, node, events)
            .await
            .map_err(fail)
    }

    async fn regenerate_inner(
        &mut self,
        turn: u32,
        strategy_name: &str,
        node: Option<&str>,
        events: &EventSink,
    ) -> Result<String, PipelineError> {
        self.ensure_can_override(turn)?;
        let id = self.world.session_id.clone();
        let run = self.restore_run(turn, String::new()).map_err(|(_, e)| e)?;
        let stage6_extra = run
            .extras
            .get(&Stage::StrategySelection)
            .cloned()
            .unwrap_or(Value::Null);
        let strategy = self.strategy(strategy_name)?;
        let mut tracker = match stage6_extra.get("tracker_before_focus") {
            Some(json) => NodeStateTracker::from_json(json)?,
            None => {
                return Err(PipelineError::State(format!(
                    "turn {turn} has no saved node state to override from"
                )));
            }
        };
        let old = run.ctx.strategy_selection()?.clone();
        let phase = Phase::for_turn(turn, self.world.max_turns);
        let new_selection = override_selection(&old, strategy, node, &tracker, turn, phase)?;
        let focus = new_selection.focus.clone();
        tracker.update_focus(
            focus.as_ref().map(|f| f.node_id.as_str()),
            turn,
            &strategy.name,
        );
        let continuation = run.ctx.continuation()?.clone();
        let (question, call) = self
            .generate_question(&run, &new_selection, !continuation.should_continue, events)
            .await?;
        let previous_question = run
            .ctx
            .question_generation()
            .map(|q| q.question.clone())
            .unwrap_or_default();

        let mut state = self.world.state.clone();
        mark_override(&mut state, turn, focus.as_ref(), &strategy.name);
        let override_record = json!({
            "strategy": strategy.name,
            "focus": focus,
            "question": question,
            "replaced": {
                "strategy": old.strategy,
                "focus": old.focus,
                "question": previous_question,
            },
        });
        let record = scoring_record(
            &id,
            turn,
            phase,
            &new_selection,
            stage6_extra.get("llm_scores"),
            &continuation,
            Some(override_record.clone()),
        );
        let tracker_json = tracker.to_json();
        let usage = self.usage_row(turn, &call);
        self.store.transaction(|tx| {
            tx.replace_utterance_text(&id, turn, Speaker::Interviewer, &question)?;
            tx.replace_scoring(&record)?;
            tx.update_session_state(&id, &state, &tracker_json)?;
            tx.insert_llm_usage(&usage)?;
            tx.put_checkpoint(
                &id,
                turn,
                OVERRIDE_CHECKPOINT,
                &json!({"output": override_record}),
            )
        })?;
        self.world.state = state;
        self.world.tracker = tracker;
        events.emit(Event::Question {
            turn,
            text: question.clone(),
            closing: !continuation.should_continue,
        });
        Ok(question)
    }

    fn ensure_can_override(&self, turn: u32) -> Result<(), PipelineError> {
        if turn == 0 {
            return Err(PipelineError::State(
                "no turn has been completed yet; the opening question has no decision to override"
                    .to_owned(),
            ));
        }
        if !self
            .store
            .checkpoints_for_turn(&self.world.session_id, turn + 1)?
            .is_empty()
        {
            return Err(PipelineError::State(format!(
                "turn {} is already being processed; its question can no longer change",
                turn + 1
            )));
        }
        if self.world.status == crate::store::SessionStatus::Finished {
            return Err(PipelineError::Finished {
                id: self.world.session_id.clone(),
                reason: self.world.termination_reason.clone().unwrap_or_default(),
            });
        }
        Ok(())
    }
}

/// Stage 6's output redone for the researcher's strategy and node: stage-1 entries keep their
/// scores with the selection moved; stage 2 ranks nodes for the new strategy, and an explicit
/// node wins regardless of rank.
fn override_selection(
    old: &StrategySelectionOutput,
    strategy: &Strategy,
    node: Option<&str>,
    tracker: &NodeStateTracker,
    turn: u32,
    phase: Phase,
) -> Result<StrategySelectionOutput, PipelineError> {
    let mut strategies: Vec<ScoredCandidate> = old
        .score_decomposition
        .iter()
        .filter(|c| c.stage() == 1)
        .cloned()
        .collect();
    for c in &mut strategies {
        c.selected = c.strategy == strategy.name;
    }
    let node_signals = if turn <= 1 {
        Vec::new()
    } else {
        old.node_signals.clone()
    };
    let mut selection = select_node(strategy, strategies, &node_signals, Some(phase))?;
    if let Some(wanted) = node {
        if strategy.node_binding == NodeBinding::None {
            return Err(PipelineError::State(format!(
                "strategy '{}' does not target a node; leave the node out",
                strategy.name
            )));
        }
        let key = tracker.tracking_key(wanted).to_owned();
        if tracker.get(&key).is_none() {
            return Err(PipelineError::UnknownNode(wanted.to_owned()));
        }
        for c in &mut selection.nodes {
            c.selected = c.node_id == key;
        }
        selection.node_id = Some(key);
    }
    let focus = selection.node_id.as_deref().map(|key| Focus {
        node_id: key.to_owned(),
        label: tracker
            .get(key)
            .map_or_else(|| key.to_owned(), |s| s.label.clone()),
    });
    Ok(StrategySelectionOutput {
        strategy: strategy.name.clone(),
        focus,
        generates_closing_question: strategy.generates_closing_question,
        focus_mode: focus_mode_name(strategy),
        score_decomposition: selection.decomposition(),
        ..old.clone()
    })
}

/// Rewrites the turn's focus entry and the strategy histories for the override.
fn mark_override(state: &mut SessionState, turn: u32, focus: Option<&Focus>, strategy: &str) {
    if let Some(entry) = state
        .focus_history
        .iter_mut()
        .rev()
        .find(|e| e.turn == turn)
    {
        entry.node_id = focus.map(|f| f.node_id.clone()).unwrap_or_default();
        entry.label = focus.map(|f| f.label.clone()).unwrap_or_default();
        strategy.clone_into(&mut entry.strategy);
        entry.overridden = true;
    }
    state.last_strategy = Some(strategy.to_owned());
    if let Some(last) = state.strategy_history.last_mut() {
        strategy.clone_into(last);
    }
}
