//! Stages 8 (question generation), 9 (response saving) and 10 (scoring persistence).

use serde_json::Value;

use crate::config::{FocusMode, Strategy};
use crate::domain::{FocusEntry, STRATEGY_HISTORY_LEN, SignalValue, Speaker};
use crate::llm::Role;
use crate::pipeline::context::StageOutput;
use crate::pipeline::contracts::{
    Focus, QuestionGenerationOutput, RecentUtterance, ResponseSavingOutput,
    ScoringPersistenceOutput, StrategySelectionOutput,
};
use crate::pipeline::interview::AskedQuestion;
use crate::pipeline::interview::{Interview, TurnRun};
use crate::pipeline::{EventSink, PipelineError};
use crate::prompts::{
    FollowUpInput, Line, QuestionFocus, SUMMARY_CONCEPTS, TemplateInput, compact_follow_up_prompt,
    conversation_window, follow_up_prompt, render_template,
};
use crate::store::{ScoringRecord, SessionStatus, StoreOps};

impl Interview {
    /// Stage 8: the next question, streamed, under the selected strategy (a closing question
    /// when the interview ends).
    pub(crate) async fn question_generation(
        &mut self,
        run: &mut TurnRun,
        events: &EventSink,
    ) -> Result<String, PipelineError> {
        let selection = run.ctx.strategy_selection()?.clone();
        let closing = !run.ctx.continuation()?.should_continue;
        let asked = self
            .generate_question(run, &selection, closing, events)
            .await?;
        let output = QuestionGenerationOutput {
            question: asked.text.clone(),
            strategy: selection.strategy.clone(),
            focus: selection.focus.clone(),
            has_llm_fallback: asked.replaced_model,
            question_source: asked.source.clone(),
        };
        let summary = format!(
            "{} chars, {}, {}",
            asked.text.chars().count(),
            selection.strategy,
            asked.source
        );
        self.commit(run, output, None, &asked.calls, |_| Ok(()))?;
        Ok(summary)
    }

    /// Builds the follow-up prompt for `selection` and asks the question model; the strategy's
    /// template question stands in when there is no model or its replies fail the check.
    pub(crate) async fn generate_question(
        &self,
        run: &TurnRun,
        selection: &StrategySelectionOutput,
        closing: bool,
        events: &EventSink,
    ) -> Result<AskedQuestion, PipelineError> {
        let loaded = run.ctx.context_loading()?;
        let answer = &run.ctx.utterance_saving()?.user_utterance;
        let computed = run.ctx.state_computation()?;
        let conversation = window(
            &loaded.recent_utterances,
            run.turn,
            answer,
            self.services.settings.window_chars,
        );
        let strategy = self.strategy(&selection.strategy)?;
        let raised = raised_concepts(
            self.world
                .nodes
                .iter()
                .filter(|n| n.superseded_by.is_none())
                .map(|n| n.label.as_str()),
        );
        let focus = question_focus(strategy, selection.focus.as_ref(), &raised);
        let template = || {
            render_template(&TemplateInput {
                templates: &strategy.question_templates,
                focus: focus.node_label(),
                topic: self.spec.concept.topic(),
                turn: run.turn,
                session_seed: &self.spec.concept.id,
            })
        };
        if self.services.llm.is_modelless(Role::QuestionGeneration) {
            return Ok(AskedQuestion::template(template(), None));
        }
        let winner = selection
            .score_decomposition
            .iter()
            .find(|c| c.stage() == 1 && c.strategy == selection.strategy);
        let input = FollowUpInput {
            methodology: &self.spec.methodology,
            concept: &self.spec.concept,
            strategy,
            focus,
            conversation: &conversation,
            graph: &computed.graph_state,
            signals: &selection.signals,
            winner,
            closing,
        };
        let prompt = if self.small_question_model() {
            compact_follow_up_prompt(&input)
        } else {
            follow_up_prompt(&input)
        };
        let request = self.question_request(prompt, run.turn)?;
        self.checked_question(&request, run.turn, template, events)
            .await
    }

    /// Stage 9: the question, saved before it is shown (a session waiting for its respondent
    /// is always at a clean checkpoint).
    pub(crate) fn response_saving(&mut self, run: &mut TurnRun) -> Result<String, PipelineError> {
        let question = run.ctx.question_generation()?.question.clone();
        let output = ResponseSavingOutput {
            turn_number: run.turn,
            system_utterance_id: crate::pipeline::ids::single(
                &self.world.session_id,
                run.turn,
                "question",
            ),
            system_utterance: question.clone(),
            question_text: question.clone(),
        };
        let utterance_id = output.system_utterance_id.clone();
        let id = self.world.session_id.clone();
        let turn = run.turn;
        let summary = format!("question saved as {utterance_id}");
        self.commit(run, output, None, &[], |tx| {
            tx.insert_utterance_with_id(&utterance_id, &id, turn, Speaker::Interviewer, &question)
                .map(drop)
        })?;
        Ok(summary)
    }

    /// Stage 10: the decision row, the session state (turn count, velocity, focus history,
    /// strategy history, depths, saturation), the node tracker, and the end of the session
    /// when the interview stops.
    pub(crate) fn scoring_persistence(
        &mut self,
        run: &mut TurnRun,
    ) -> Result<String, PipelineError> {
        let selection = run.ctx.strategy_selection()?;
        let computed = run.ctx.state_computation()?;
        let continuation = run.ctx.continuation()?;
        let decision = run.decision.as_ref();
        let depth = decision.and_then(|d| d.response_depth);
        let mut state = self.world.state.clone();
        state.turn_count = run.turn;
        state.last_strategy = Some(selection.strategy.clone());
        let canonical_nodes = computed
            .canonical_graph_state
            .as_ref()
            .map_or(0, |c| c.concept_count);
        state.velocity = crate::signals::meta::update_velocity(
            &state.velocity,
            computed.graph_state.node_count,
            canonical_nodes,
        );
        state.focus_history.push(FocusEntry {
            turn: run.turn,
            node_id: selection
                .focus
                .as_ref()
                .map(|f| f.node_id.clone())
                .unwrap_or_default(),
            label: selection
                .focus
                .as_ref()
                .map(|f| f.label.clone())
                .unwrap_or_default(),
            strategy: selection.strategy.clone(),
            overridden: false,
        });
        if let Some(depth) = depth {
            state.depth_history.push(depth);
        }
        state.saturation = computed.saturation_metrics.clone();
        push_strategy(&mut state.strategy_history, &selection.strategy);
        let saturation_score = match selection.signals.get("meta.conversation.saturation") {
            Some(SignalValue::Number(n)) => *n,
            _ => 0.0,
        };
        let record = scoring_record(
            &self.world.session_id,
            run.turn,
            self.spec
                .methodology
                .phase_for(run.turn, self.world.max_turns),
            selection,
            decision.map(|d| &d.llm_scores),
            continuation,
            None,
        );
        let output = ScoringPersistenceOutput {
            turn_number: run.turn,
            strategy: selection.strategy.clone(),
            depth_score: f64::from(computed.graph_state.max_depth),
            saturation_score,
            has_methodology_signals: !selection.signals.is_empty(),
        };
        let finish = (!continuation.should_continue).then(|| continuation.reason.clone());
        let summary = match &finish {
            Some(reason) => format!("turn {} saved; interview finished: {reason}", run.turn),
            None => format!("turn {} saved", run.turn),
        };
        let id = self.world.session_id.clone();
        let tracker_json = self.world.tracker.to_json();
        // The record borrows this turn's stage outputs, so the output is filed after the
        // transaction rather than by `commit`.
        self.persist(run.turn, &output, None, &[], |tx| {
            tx.insert_scoring(&record)?;
            tx.update_session_state(&id, &state, &tracker_json)?;
            if let Some(reason) = &finish {
                tx.finish_session(&id, reason)?;
            }
            Ok(())
        })?;
        output.store(&mut run.ctx);
        self.world.state = state;
        if let Some(reason) = finish {
            self.world.status = SessionStatus::Finished;
            self.world.termination_reason = Some(reason);
        }
        Ok(summary)
    }
}

/// A turn's decision row: focus, signals, decomposition, LLM scores, continuation, and the
/// researcher's override when there was one.
pub(crate) fn scoring_record<'a>(
    session_id: &str,
    turn: u32,
    phase: crate::domain::Phase,
    selection: &'a StrategySelectionOutput,
    llm_scores: Option<&'a crate::domain::LlmScores>,
    continuation: &'a crate::pipeline::contracts::ContinuationOutput,
    override_record: Option<Value>,
) -> ScoringRecord<ScoringPayload<'a>> {
    ScoringRecord {
        session_id: session_id.to_owned(),
        turn,
        strategy: selection.strategy.clone(),
        focus_node_id: selection.focus.as_ref().map(|f| f.node_id.clone()),
        phase,
        payload: ScoringPayload {
            focus: selection.focus.as_ref(),
            signals: &selection.signals,
            node_signals: NodeSignalsObject(&selection.node_signals),
            strategy_alternatives: &selection.strategy_alternatives,
            score_decomposition: &selection.score_decomposition,
            llm_scores,
            continuation,
            override_record,
        },
    }
}

/// A turn's decision as the scoring history stores it, borrowed from the stage outputs and
/// serialised straight to text (building it as a `Value` first cost a tenth of a turn).
#[derive(Debug, serde::Serialize)]
pub(crate) struct ScoringPayload<'a> {
    focus: Option<&'a crate::pipeline::contracts::Focus>,
    signals: &'a crate::domain::Signals,
    node_signals: NodeSignalsObject<'a>,
    strategy_alternatives: &'a [crate::pipeline::contracts::Alternative],
    score_decomposition: &'a [crate::scoring::ScoredCandidate],
    llm_scores: Option<&'a crate::domain::LlmScores>,
    continuation: &'a crate::pipeline::contracts::ContinuationOutput,
    #[serde(rename = "override", skip_serializing_if = "Option::is_none")]
    override_record: Option<Value>,
}

/// Node signals written as a JSON object keyed by node id, in creation order (the shape of
/// [`crate::pipeline::result::node_signals_map`]), without building it.
#[derive(Debug)]
pub(crate) struct NodeSignalsObject<'a>(pub &'a crate::domain::NodeSignals);

impl serde::Serialize for NodeSignalsObject<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(id, signals)| (id, signals)))
    }
}

/// Appends to the bounded strategy history (oldest dropped first).
pub(crate) fn push_strategy(history: &mut Vec<String>, strategy: &str) {
    history.push(strategy.to_owned());
    if history.len() > STRATEGY_HISTORY_LEN {
        let excess = history.len() - STRATEGY_HISTORY_LEN;
        history.drain(..excess);
    }
}

/// The conversation window for the question prompt: recent utterances before this turn plus
/// this turn's answer.
pub(crate) fn window(
    recent: &[RecentUtterance],
    turn: u32,
    answer: &str,
    max_chars: usize,
) -> String {
    let mut lines: Vec<Line<'_>> = recent
        .iter()
        .filter(|u| u.turn < turn)
        .map(|u| Line {
            speaker: u.speaker,
            text: &u.text,
        })
        .collect();
    lines.push(Line {
        speaker: Speaker::Respondent,
        text: answer,
    });
    conversation_window(&lines, max_chars)
}

/// Labels of the live concepts in the order they were raised, without repeats (the last
/// [`SUMMARY_CONCEPTS`]): what `recent_node` and `summary` focus on.
fn raised_concepts<'n>(live_labels: impl IntoIterator<Item = &'n str>) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for label in live_labels {
        let label = label.trim();
        if label.is_empty() {
            continue;
        }
        labels.retain(|l| !l.eq_ignore_ascii_case(label));
        labels.push(label.to_owned());
    }
    let skip = labels.len().saturating_sub(SUMMARY_CONCEPTS);
    labels.split_off(skip)
}

/// What the question is about: the node stage 2 chose; otherwise what the strategy's
/// `focus_mode` asks for: the concept raised last (`recent_node`), everything raised so far
/// (`summary`), or the topic (`topic`, and any mode before a concept exists).
fn question_focus<'a>(
    strategy: &Strategy,
    chosen: Option<&'a Focus>,
    raised: &'a [String],
) -> QuestionFocus<'a> {
    if let Some(focus) = chosen {
        return QuestionFocus::Node(&focus.label);
    }
    match (&strategy.focus_mode, raised.last()) {
        (FocusMode::RecentNode, Some(last)) => QuestionFocus::Node(last),
        (FocusMode::Summary, Some(_)) => QuestionFocus::Summary(raised),
        _ => QuestionFocus::Topic,
    }
}

#[cfg(test)]
mod focus_tests {
    use super::*;

    fn strategy(mode: &str) -> Strategy {
        serde_saphyr::from_str(&format!(
            "name: s\nnode_binding: none\nfocus_mode: {mode}\nsignal_weights: {{}}\n"
        ))
        .unwrap()
    }

    #[test]
    fn each_focus_mode_gives_its_own_focus_on_a_node_free_turn() {
        let live = [
            "froths well",
            "kinder to the planet",
            "Froths well",
            " ",
            "being a good parent",
        ];
        let raised = raised_concepts(live);
        assert_eq!(
            raised,
            ["kinder to the planet", "Froths well", "being a good parent"]
        );
        assert_eq!(
            question_focus(&strategy("recent_node"), None, &raised),
            QuestionFocus::Node("being a good parent")
        );
        assert_eq!(
            question_focus(&strategy("summary"), None, &raised),
            QuestionFocus::Summary(&raised)
        );
        assert_eq!(
            question_focus(&strategy("topic"), None, &raised),
            QuestionFocus::Topic
        );
        // Before any concept, every mode asks about the topic.
        for mode in ["recent_node", "summary", "topic"] {
            assert_eq!(
                question_focus(&strategy(mode), None, &[]),
                QuestionFocus::Topic
            );
        }
        // A node chosen by stage 2 is the focus whatever the mode.
        let chosen = Focus {
            node_id: "n1".to_owned(),
            label: "froths well".to_owned(),
        };
        assert_eq!(
            question_focus(&strategy("summary"), Some(&chosen), &raised),
            QuestionFocus::Node("froths well")
        );
    }
}
