//! Stage 10, scoring persistence: the turn's decision row, the session state at the end of
//! the turn (turn count, velocity, focus history, strategy history, depths, saturation) with
//! the node tracker, and the end of the session when the interview stops.

use serde_json::Value;

use super::{Effects, Staged};
use crate::domain::{FocusEntry, STRATEGY_HISTORY_LEN, SignalValue};
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{
    ContinuationOutput, ScoringPersistenceOutput, StateComputationOutput, StrategySelectionOutput,
};
use crate::pipeline::ports::Ports;
use crate::pipeline::runner::{DecisionRecord, TurnRun};
use crate::store::ScoringRecord;

pub(crate) struct Input<'a> {
    pub turn: u32,
    pub computed: &'a StateComputationOutput,
    pub selection: &'a StrategySelectionOutput,
    pub continuation: &'a ContinuationOutput,
    /// What stage 6 kept beside its output; `None` for a checkpoint written without it.
    pub decision: Option<&'a DecisionRecord>,
}

impl<'a> Input<'a> {
    pub fn from_turn(run: &'a TurnRun) -> Result<Self, PipelineError> {
        Ok(Self {
            turn: run.turn,
            computed: run.ctx.state_computation()?,
            selection: run.ctx.strategy_selection()?,
            continuation: run.ctx.continuation()?,
            decision: run.decision.as_ref(),
        })
    }
}

#[allow(
    clippy::unnecessary_wraps,
    reason = "every stage has the signature the runner calls; this one cannot fail"
)]
pub(crate) fn run<'a>(
    input: &Input<'a>,
    ports: &Ports<'_>,
) -> Result<Staged<'a, ScoringPersistenceOutput>, PipelineError> {
    let data = ports.data;
    let (turn, selection, computed, continuation) = (
        input.turn,
        input.selection,
        input.computed,
        input.continuation,
    );
    let mut state = data.state.clone();
    state.turn_count = turn;
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
    let focus = selection.focus.as_ref();
    state.focus_history.push(FocusEntry {
        turn,
        node_id: focus.map(|f| f.node_id.clone()).unwrap_or_default(),
        label: focus.map(|f| f.label.clone()).unwrap_or_default(),
        strategy: selection.strategy.clone(),
        overridden: false,
    });
    if let Some(depth) = input.decision.and_then(|d| d.response_depth) {
        state.depth_history.push(depth);
    }
    state.saturation = computed.saturation_metrics.clone();
    push_strategy(&mut state.strategy_history, &selection.strategy);
    let saturation_score = match selection.signals.get("meta.conversation.saturation") {
        Some(SignalValue::Number(n)) => *n,
        _ => 0.0,
    };
    let record = scoring_record(
        &data.session_id,
        turn,
        ports.spec.methodology.phase_for(turn, data.max_turns),
        selection,
        input.decision.map(|d| &d.llm_scores),
        continuation,
        None,
    );
    let output = ScoringPersistenceOutput {
        turn_number: turn,
        strategy: selection.strategy.clone(),
        depth_score: f64::from(computed.graph_state.max_depth),
        saturation_score,
        has_methodology_signals: !selection.signals.is_empty(),
    };
    let finish = (!continuation.should_continue).then(|| continuation.reason.clone());
    let summary = match &finish {
        Some(reason) => format!("turn {turn} saved; interview finished: {reason}"),
        None => format!("turn {turn} saved"),
    };
    Ok(Staged {
        effects: Effects {
            scoring: Some(record),
            state: Some(state),
            finish,
            ..Effects::default()
        },
        ..Staged::new(output, summary)
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ResponseDepth;
    use crate::pipeline::stages::fixture::{Fixture, continuation, selection};

    #[test]
    fn the_turn_ends_in_the_session_state_and_a_stop_finishes_it() {
        let mut fx = Fixture::new();
        fx.data.state.turn_count = 3;
        fx.data.state.strategy_history =
            (0..STRATEGY_HISTORY_LEN).map(|i| format!("s{i}")).collect();
        let graph = crate::domain::GraphState {
            node_count: 4,
            max_depth: 2,
            ..crate::domain::GraphState::default()
        };
        let computed = crate::pipeline::stages::fixture::computed(4, graph, "");
        let chosen = selection("deepen", Some(("n1", "froths well")));
        let decision = DecisionRecord {
            response_depth: Some(ResponseDepth::from_score(4)),
            ..DecisionRecord::default()
        };
        let going = continuation(None, 6);
        let input = Input {
            turn: 4,
            computed: &computed,
            selection: &chosen,
            continuation: &going,
            decision: Some(&decision),
        };
        let staged = run(&input, &fx.ports()).unwrap();
        let state = staged.effects.state.as_ref().unwrap();
        assert_eq!(state.turn_count, 4);
        assert_eq!(state.last_strategy.as_deref(), Some("deepen"));
        // The bounded history drops its oldest entry.
        assert_eq!(state.strategy_history.len(), STRATEGY_HISTORY_LEN);
        assert_eq!(
            state.strategy_history.first().map(String::as_str),
            Some("s1")
        );
        assert_eq!(
            state.strategy_history.last().map(String::as_str),
            Some("deepen")
        );
        assert_eq!(state.depth_history, [ResponseDepth::from_score(4)]);
        let entry = state.focus_history.last().unwrap();
        assert_eq!((entry.turn, entry.label.as_str()), (4, "froths well"));
        let record = staged.effects.scoring.as_ref().unwrap();
        assert_eq!(
            (record.turn, record.focus_node_id.as_deref()),
            (4, Some("n1"))
        );
        assert!(staged.effects.finish.is_none());
        assert_eq!(staged.output.depth_score, 2.0);

        let stop = continuation(Some("graph_saturated"), 6);
        let staged = run(
            &Input {
                continuation: &stop,
                ..input
            },
            &fx.ports(),
        )
        .unwrap();
        assert_eq!(staged.effects.finish.as_deref(), Some("graph_saturated"));
        assert_eq!(
            staged.summary,
            "turn 4 saved; interview finished: graph_saturated"
        );
    }
}
