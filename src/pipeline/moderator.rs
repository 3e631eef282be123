//! A researcher's override (moderator mode): regenerate the pending question under a strategy
//! and focus they choose, or replace its text with their own edit. A regeneration replaces the
//! turn's decision, focus entry and question; an edit replaces only the text. Either is marked
//! as an override everywhere it is recorded and commits in one transaction with its own
//! checkpoint, like a stage.

use serde_json::json;

use crate::config::{NodeBinding, Strategy};
use crate::domain::{Phase, SessionState, Speaker};
use crate::graph::node_state::NodeStateTracker;
use crate::pipeline::contracts::{Focus, StrategySelectionOutput};
use crate::pipeline::interview::{Interview, OVERRIDE_CHECKPOINT};
use crate::pipeline::ports::usage_row;
use crate::pipeline::stages::s06_strategy_selection::focus_mode_name;
use crate::pipeline::stages::s08_question_generation as s08;
use crate::pipeline::stages::s10_scoring_persistence::scoring_record;
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
        let turn = self.data.state.turn_count;
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
        let id = self.data.session_id.clone();
        let run = self.restore_run(turn, String::new()).map_err(|(_, e)| e)?;
        let strategy = self.ports(events).strategy(strategy_name)?.clone();
        let saved = run
            .decision
            .as_ref()
            .and_then(|d| d.tracker_before_focus.as_ref());
        let mut tracker = match saved {
            Some(json) => NodeStateTracker::from_json(json)?,
            None => {
                return Err(PipelineError::State(format!(
                    "turn {turn} has no saved node state to override from"
                )));
            }
        };
        let old = run.ctx.strategy_selection()?.clone();
        let phase = self.spec.methodology.phase_for(turn, self.data.max_turns);
        let new_selection = override_selection(&old, &strategy, node, &tracker, turn, phase)?;
        let focus = new_selection.focus.clone();
        tracker.update_focus(
            focus.as_ref().map(|f| f.node_id.as_str()),
            turn,
            &strategy.name,
        );
        let continuation = run.ctx.continuation()?.clone();
        let input = s08::Input {
            selection: &new_selection,
            closing: !continuation.should_continue,
            ..s08::Input::from_turn(&run)?
        };
        let asked = s08::ask(&input, &self.ports(events)).await?;
        let question = asked.text;
        let previous_question = run
            .ctx
            .question_generation()
            .map(|q| q.question.clone())
            .unwrap_or_default();

        let mut state = self.data.state.clone();
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
            run.decision.as_ref().map(|d| &d.llm_scores),
            &continuation,
            Some(override_record.clone()),
        );
        let tracker_json = tracker.to_json();
        let usage: Vec<_> = asked
            .calls
            .iter()
            .map(|c| usage_row(&id, &self.services.llm, turn, c))
            .collect();
        self.store.transaction(|tx| {
            tx.replace_utterance_text(&id, turn, Speaker::Interviewer, &question)?;
            tx.replace_scoring(&record)?;
            tx.update_session_state(&id, &state, &tracker_json)?;
            for row in &usage {
                tx.insert_llm_usage(row)?;
            }
            tx.put_checkpoint(
                &id,
                turn,
                OVERRIDE_CHECKPOINT,
                &json!({"output": override_record}),
            )
        })?;
        self.data.state = state;
        self.data.tracker = tracker;
        events.emit(Event::Overridden {
            turn,
            strategy: new_selection.strategy.clone(),
            focus: new_selection.focus.clone(),
            score_decomposition: Some(new_selection.score_decomposition.clone()),
            edited: false,
        });
        events.emit(Event::Question {
            turn,
            text: question.clone(),
            closing: !continuation.should_continue,
        });
        Ok(question)
    }

    /// Replaces the pending question's text with a researcher's edit (moderator mode) and
    /// returns the cleaned text. The turn's decision stays; the utterance, the scoring record
    /// and the focus trace mark the edit as an override, committed in one transaction with its
    /// own checkpoint. The opening question (turn 0) can be edited too.
    pub fn edit_question(&mut self, text: &str, events: &EventSink) -> Result<String, TurnError> {
        let turn = self.data.state.turn_count;
        self.edit_inner(turn, text, events)
            .map_err(|error| TurnError {
                turn,
                stage: Stage::QuestionGeneration,
                error,
            })
    }

    fn edit_inner(
        &mut self,
        turn: u32,
        text: &str,
        events: &EventSink,
    ) -> Result<String, PipelineError> {
        self.ensure_question_open(turn)?;
        let question = clean_question(text)?;
        let id = self.data.session_id.clone();
        let previous = self.question_of(turn)?;
        let mut state = self.data.state.clone();
        let entry = state
            .focus_history
            .iter()
            .rev()
            .find(|e| e.turn == turn)
            .cloned();
        let focus = entry.as_ref().and_then(|e| {
            (!e.node_id.is_empty()).then(|| Focus {
                node_id: e.node_id.clone(),
                label: e.label.clone(),
            })
        });
        let strategy = entry
            .as_ref()
            .map(|e| e.strategy.clone())
            .unwrap_or_default();
        if let Some(e) = entry {
            mark_override(&mut state, turn, focus.as_ref(), &e.strategy);
        }
        let override_record = json!({
            "edited": true,
            "strategy": strategy,
            "focus": focus,
            "question": question,
            "replaced": {"question": previous},
        });
        let record = if turn == 0 {
            None
        } else {
            self.store
                .scoring_history(&id)?
                .into_iter()
                .find(|r| r.turn == turn)
                .map(|mut r| {
                    if let Some(map) = r.payload.as_object_mut() {
                        map.insert("override".to_owned(), override_record.clone());
                    }
                    r
                })
        };
        let tracker_json = self.data.tracker.to_json();
        self.store.transaction(|tx| {
            tx.replace_utterance_text(&id, turn, Speaker::Interviewer, &question)?;
            if let Some(record) = &record {
                tx.replace_scoring(record)?;
            }
            if turn > 0 {
                tx.update_session_state(&id, &state, &tracker_json)?;
            }
            tx.put_checkpoint(
                &id,
                turn,
                OVERRIDE_CHECKPOINT,
                &json!({"output": override_record}),
            )
        })?;
        self.data.state = state;
        events.emit(Event::Overridden {
            turn,
            strategy,
            focus,
            score_decomposition: None,
            edited: true,
        });
        events.emit(Event::Question {
            turn,
            text: question.clone(),
            closing: false,
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
        self.ensure_question_open(turn)
    }

    /// The question of `turn` may still change: the next turn has not started and the
    /// interview is not over.
    fn ensure_question_open(&self, turn: u32) -> Result<(), PipelineError> {
        if !self
            .store
            .checkpoints_for_turn(&self.data.session_id, turn + 1)?
            .is_empty()
        {
            return Err(PipelineError::State(format!(
                "turn {} is already being processed; its question can no longer change",
                turn + 1
            )));
        }
        if self.data.status == crate::store::SessionStatus::Finished {
            return Err(PipelineError::Finished {
                id: self.data.session_id.clone(),
                reason: self.data.termination_reason.clone().unwrap_or_default(),
            });
        }
        Ok(())
    }
}

/// Longest question a researcher may write, in characters.
///
/// Generous for a spoken question while keeping a pasted document out of the transcript and
/// the prompts built from it.
pub(crate) const MAX_EDITED_QUESTION_CHARS: usize = 2_000;

/// A researcher's question text as it will be saved: control characters other than newlines
/// removed, surrounding whitespace trimmed, not empty and not over the limit.
fn clean_question(text: &str) -> Result<String, PipelineError> {
    let cleaned: String = text
        .chars()
        .map(|c| if c == '\r' || c == '\t' { ' ' } else { c })
        .filter(|c| !c.is_control() || *c == '\n')
        .collect();
    let cleaned = cleaned.trim().to_owned();
    if cleaned.is_empty() {
        return Err(PipelineError::State(
            "the edited question is empty; type a question or keep the proposed one".to_owned(),
        ));
    }
    let chars = cleaned.chars().count();
    if chars > MAX_EDITED_QUESTION_CHARS {
        return Err(PipelineError::State(format!(
            "the edited question is {chars} characters long; the limit is \
             {MAX_EDITED_QUESTION_CHARS}"
        )));
    }
    Ok(cleaned)
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
