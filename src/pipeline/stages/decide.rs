//! Stages 5 (state computation), 6 (strategy selection) and 7 (continuation).

use crate::domain::{Phase, ResponseDepth, SignalValue};
use crate::graph::canonical::canonical_state;
use crate::graph::metrics::{
    DEPTH_PLATEAU_TURNS, GRAPH_SATURATED_TURNS, QUALITY_DEGRADED_TURNS, graph_state,
    saturation_metrics,
};
use crate::graph::node_state::NodeStateTracker;
use crate::llm::Role;
use crate::pipeline::contracts::{
    Alternative, ContinuationOutput, Focus, NodeRef, StateComputationOutput,
    StrategySelectionOutput,
};
use crate::pipeline::interview::{
    CallRecord, DecisionRecord, Interview, Scoring, TurnRun, llm_error,
};
use crate::pipeline::{EventSink, PipelineError};
use crate::scoring::{self, Selection};
use crate::signals::DetectionInput;
use crate::store::StoreOps;
use crate::time::{is_rfc3339_millis, now_rfc3339};

/// Saturation checks start at this turn, or earlier in the late phase (seed 001: "after
/// `MIN_TURN_FOR_SATURATION=5` or late stage").
pub const MIN_TURN_FOR_SATURATION: u32 = 5;
/// A focused node counts as exhausted after this many turns without yield.
pub const NODE_EXHAUSTED_TURNS: u32 = 3;

impl Interview {
    /// Stage 5: fresh graph metrics, saturation counters and the canonical state.
    pub(crate) fn state_computation(&mut self, run: &mut TurnRun) -> Result<String, PipelineError> {
        let mut graph = graph_state(
            &self.world.nodes,
            &self.world.edges,
            &self.spec.methodology,
            run.turn,
        );
        graph.turn_count = run.turn;
        let update = run.ctx.graph_update()?;
        let extracted = run.ctx.extraction()?.concept_count;
        let saturation = saturation_metrics(
            &self.world.state.saturation,
            &self.world.nodes,
            u32::try_from(update.nodes_added.len()).unwrap_or(u32::MAX),
            u32::try_from(update.edges_added.len()).unwrap_or(u32::MAX),
            u32::try_from(extracted).unwrap_or(u32::MAX),
            graph.max_depth,
            &self.world.state.depth_history,
        );
        let canonical = self
            .services
            .settings
            .enable_canonical_slots
            .then(|| canonical_state(&self.world.slots, &self.world.canonical_edges));
        let recent_nodes = self
            .world
            .nodes
            .iter()
            .filter(|n| n.turn == run.turn)
            .map(NodeRef::from)
            .collect();
        let summary = format!(
            "{} nodes, {} edges, depth {}, {} zero-yield turns{}",
            graph.node_count,
            graph.edge_count,
            graph.max_depth,
            saturation.consecutive_low_info,
            canonical
                .as_ref()
                .map(|c| format!(", {} canonical concepts", c.concept_count))
                .unwrap_or_default()
        );
        let output = StateComputationOutput {
            graph_state: graph,
            recent_nodes,
            computed_at: now_rfc3339(),
            saturation_metrics: saturation,
            canonical_graph_state: canonical,
        };
        self.commit(run, output, None, &[], |_| Ok(()))?;
        Ok(summary)
    }

    /// Stage 6: awaits the LLM signal batch, records the answer's depth on the previous focus,
    /// detects every signal, selects strategy then node, and moves the focus.
    pub(crate) async fn strategy_selection(
        &mut self,
        run: &mut TurnRun,
        events: &EventSink,
    ) -> Result<String, PipelineError> {
        check_graph_state_is_current(
            run.ctx.state_computation()?,
            run.turn,
            &run.ctx.extraction()?.timestamp,
        )?;
        let (scores, call) = self.await_scores(run, events).await?;
        // No depth when the methodology does not ask for the `response_depth` rubric: nothing
        // is recorded on the previous focus or in the depth history then.
        let depth = scores
            .get("response_depth")
            .map(|s| ResponseDepth::from_score(s.score));

        let loaded = run.ctx.context_loading()?;
        let computed = run.ctx.state_computation()?;
        let mut tracker = self.world.tracker.clone();
        if let (Some(previous), Some(depth)) = (tracker.previous_focus.clone(), depth) {
            tracker.append_response_signal(&previous, depth.as_str());
        }
        let before_focus = tracker.to_json();
        let mut depth_history = self.world.state.depth_history.clone();
        depth_history.extend(depth);
        let phases = self.spec.methodology.phase_boundaries;
        let phase = phases.phase(run.turn, self.world.max_turns);
        let input = DetectionInput {
            turn_number: run.turn,
            max_turns: self.world.max_turns,
            graph: &computed.graph_state,
            canonical: computed.canonical_graph_state.as_ref(),
            llm: Some(&scores),
            depth_history: &depth_history,
            strategy_history: &loaded.strategy_history,
            velocity: &self.world.state.velocity,
            tracker: &tracker,
            depth_divisor: self.spec.methodology.depth_divisor(),
            phases,
        };
        let detected = self.registry.detect(&input, self.signal_plan.as_deref());
        let mut signals = detected.global.clone();
        signals
            .entry("meta.interview.phase".to_owned())
            .or_insert_with(|| SignalValue::category(phase.as_str()));
        let node_signals = detected.node_signals(&tracker);
        // Turn 1 targets no node: the question it answers was asked of an empty graph
        // (seed 000 Path 17), so node selection starts with turn 2.
        let selectable = if run.turn <= 1 {
            Vec::new()
        } else {
            node_signals.clone()
        };
        let selection =
            scoring::select(&self.spec.methodology, &signals, &selectable, Some(phase))?;
        let focus = focus_of(&selection, &tracker);
        tracker.update_focus(
            focus.as_ref().map(|f| f.node_id.as_str()),
            run.turn,
            &selection.strategy,
        );
        let strategy = self.strategy(&selection.strategy)?;
        let output = StrategySelectionOutput {
            strategy: selection.strategy.clone(),
            focus: focus.clone(),
            selected_at: now_rfc3339(),
            signals,
            node_signals,
            strategy_alternatives: alternatives(&selection),
            generates_closing_question: strategy.generates_closing_question,
            focus_mode: focus_mode_name(strategy),
            score_decomposition: selection.decomposition(),
        };
        let summary = format!(
            "{} → {} (depth {}, phase {})",
            output.strategy,
            focus.as_ref().map_or("no node", |f| f.label.as_str()),
            depth.map_or("not scored", ResponseDepth::as_str),
            phase
        );
        let record = DecisionRecord {
            llm_scores: scores,
            response_depth: depth,
            tracker_before_focus: Some(before_focus),
        };
        let extra = serde_json::to_value(&record)
            .map_err(|e| PipelineError::State(format!("cannot keep the decision data: {e}")))?;
        let id = self.world.session_id.clone();
        let tracker_json = tracker.persisted();
        let calls: Vec<CallRecord> = call.into_iter().collect();
        self.commit(run, output, Some(&extra), &calls, |tx| {
            tx.update_tracker(&id, &tracker_json)
        })?;
        self.world.tracker = tracker;
        run.decision = Some(record);
        Ok(summary)
    }

    /// Awaits the LLM signal batch and checks its reply against the rubrics.
    async fn await_scores(
        &self,
        run: &mut TurnRun,
        events: &EventSink,
    ) -> Result<(crate::domain::LlmScores, Option<CallRecord>), PipelineError> {
        let scoring = run.scoring.take().ok_or_else(|| {
            PipelineError::State("the LLM signal batch was never started".to_owned())
        })?;
        let mut task = match scoring {
            Scoring::Ready(scores) => return Ok((scores, None)),
            Scoring::Call(task) => task,
        };
        let request = task.1.clone();
        let response = match (&mut task.0).await {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => {
                self.record_failed_call(run.turn, &request, &e, events);
                return Err(llm_error(Role::SignalScoring, e));
            }
            Err(join) => {
                return Err(PipelineError::State(format!(
                    "the LLM signal batch stopped: {join}"
                )));
            }
        };
        let names: Vec<&str> = self.spec.rubrics.iter().map(|r| r.name.as_str()).collect();
        let (scores, call) = self.read_reply(&request, response, events, |text| {
            crate::signals::llm::parse_batch_reply(text, &names).map_err(|source| {
                PipelineError::Contract {
                    role: Role::SignalScoring,
                    source,
                }
            })
        })?;
        Ok((scores, Some(call)))
    }

    /// Stage 7: hard stops, then saturation from [`MIN_TURN_FOR_SATURATION`] or in the late
    /// phase.
    pub(crate) fn continuation(&mut self, run: &mut TurnRun) -> Result<String, PipelineError> {
        let selection = run.ctx.strategy_selection()?;
        let computed = run.ctx.state_computation()?;
        let added = run.ctx.graph_update()?.nodes_added.len();
        let reason = stop_reason(
            &self.spec.methodology.phase_boundaries,
            run.turn,
            self.world.max_turns,
            selection.generates_closing_question,
            &computed.saturation_metrics,
            added,
            &self.world.tracker,
        );
        let output = ContinuationOutput {
            should_continue: reason.is_none(),
            focus_concept: selection
                .focus
                .as_ref()
                .map(|f| f.label.clone())
                .unwrap_or_default(),
            reason: reason.unwrap_or_default().to_owned(),
            turns_remaining: self.world.max_turns.saturating_sub(run.turn),
        };
        let summary = if output.should_continue {
            format!("continue, {} turns left", output.turns_remaining)
        } else {
            format!("stop: {}", output.reason)
        };
        self.commit(run, output, None, &[], |_| Ok(()))?;
        Ok(summary)
    }
}

/// Stage 6's freshness check (seed 001: "Validates: Graph state freshness via `computed_at`
/// timestamp"): the graph state to score must be stage 5's for `turn`, computed no earlier
/// than this turn's extraction (`extracted_at`), so the graph update of this answer is in it.
pub(crate) fn check_graph_state_is_current(
    computed: &StateComputationOutput,
    turn: u32,
    extracted_at: &str,
) -> Result<(), PipelineError> {
    let stale = |reason: String| Err(PipelineError::StaleGraphState { turn, reason });
    if computed.graph_state.turn_count != turn {
        return stale(format!(
            "it was computed for turn {}",
            computed.graph_state.turn_count
        ));
    }
    let at = computed.computed_at.as_str();
    if !is_rfc3339_millis(at) {
        return stale(format!("computed_at '{at}' is not an RFC 3339 UTC time"));
    }
    // Both times come from the same clock and format, so text order is time order.
    if is_rfc3339_millis(extracted_at) && at < extracted_at {
        return stale(format!(
            "it was computed at {at}, before this turn's extraction at {extracted_at}"
        ));
    }
    Ok(())
}

/// Why the interview ends after this turn, if it does (seed 001 "Termination Reasons").
pub(crate) fn stop_reason(
    phases: &crate::domain::PhaseBoundaries,
    turn: u32,
    max_turns: u32,
    closing_strategy: bool,
    saturation: &crate::domain::SaturationMetrics,
    nodes_added: usize,
    tracker: &NodeStateTracker,
) -> Option<&'static str> {
    if turn >= max_turns {
        return Some("Maximum turns reached");
    }
    if closing_strategy {
        return Some("Closing strategy selected");
    }
    // A short interview reaches its late phase before turn 5; the seed checks saturation there.
    if turn < MIN_TURN_FOR_SATURATION && phases.phase(turn, max_turns) != Phase::Late {
        return None;
    }
    if saturation.consecutive_low_info >= GRAPH_SATURATED_TURNS {
        return Some("graph_saturated");
    }
    if saturation.consecutive_shallow >= QUALITY_DEGRADED_TURNS {
        return Some("quality_degraded");
    }
    if nodes_added == 0 && saturation.consecutive_depth_plateau >= DEPTH_PLATEAU_TURNS {
        return Some("depth_plateau");
    }
    // A turn that added nodes is not exhausted, whatever the per-node counters say: yields are
    // credited only to the previous focus, so after node-free strategies every node's counter
    // runs up while the graph is still growing.
    let explored: Vec<_> = tracker
        .iter_in_creation_order()
        .filter(|s| s.focus_count > 0)
        .collect();
    if nodes_added == 0
        && !explored.is_empty()
        && explored
            .iter()
            .all(|s| s.turns_since_last_yield >= NODE_EXHAUSTED_TURNS)
    {
        return Some("all_nodes_exhausted");
    }
    // The seed's generic "saturated" fallback is not used: every condition `is_saturated`
    // combines is checked above with its own reason, the depth plateau only on a zero-yield
    // turn as the seed says.
    None
}

/// The selected node as a focus: its tracking key and label.
pub(crate) fn focus_of(selection: &Selection, tracker: &NodeStateTracker) -> Option<Focus> {
    let key = selection.node_id.as_deref()?;
    let label = tracker
        .get(key)
        .map_or_else(|| key.to_owned(), |s| s.label.clone());
    Some(Focus {
        node_id: key.to_owned(),
        label,
    })
}

pub(crate) fn alternatives(selection: &Selection) -> Vec<Alternative> {
    selection
        .alternatives
        .iter()
        .map(|(strategy, score)| Alternative {
            strategy: strategy.clone(),
            score: *score,
        })
        .collect()
}

pub(crate) fn focus_mode_name(strategy: &crate::config::Strategy) -> String {
    serde_json::to_value(&strategy.focus_mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{:?}", strategy.focus_mode).to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{PhaseBoundaries, SaturationMetrics};
    use crate::graph::node_state::NodeRegistration;

    fn tracker_with_focus(turns_since_yield: u32) -> NodeStateTracker {
        let mut t = NodeStateTracker::new();
        t.register_node(
            &NodeRegistration {
                node_id: "a",
                label: "creamy texture",
                node_type: "attribute",
                depth: 1,
                level: 1,
                is_terminal: false,
            },
            1,
        );
        for turn in 0..turns_since_yield {
            t.update_focus(Some("a"), turn + 2, "deepen");
        }
        t
    }

    fn computed(turn: u32, at: &str) -> StateComputationOutput {
        StateComputationOutput {
            graph_state: crate::domain::GraphState {
                turn_count: turn,
                ..crate::domain::GraphState::default()
            },
            recent_nodes: Vec::new(),
            computed_at: at.to_owned(),
            saturation_metrics: SaturationMetrics::default(),
            canonical_graph_state: None,
        }
    }

    #[test]
    fn stage_six_scores_only_this_turns_graph_state() {
        let extracted = "2026-11-22T09:15:02.120Z";
        let fresh = computed(3, "2026-11-22T09:15:02.480Z");
        assert!(check_graph_state_is_current(&fresh, 3, extracted).is_ok());
        // Computed in the same millisecond as the extraction still counts as after it.
        assert!(check_graph_state_is_current(&computed(3, extracted), 3, extracted).is_ok());
        let reason =
            |c: &StateComputationOutput| match check_graph_state_is_current(c, 3, extracted) {
                Err(PipelineError::StaleGraphState { turn: 3, reason }) => reason,
                other => panic!("expected a stale graph state, got {other:?}"),
            };
        assert_eq!(
            reason(&computed(2, "2026-11-22T09:15:02.480Z")),
            "it was computed for turn 2"
        );
        assert_eq!(
            reason(&computed(3, "2026-11-22T09:15:01.999Z")),
            "it was computed at 2026-11-22T09:15:01.999Z, before this turn's extraction at \
             2026-11-22T09:15:02.120Z"
        );
        assert_eq!(
            reason(&computed(3, "")),
            "computed_at '' is not an RFC 3339 UTC time"
        );
    }

    #[test]
    fn hard_stops_come_first() {
        let quiet = SaturationMetrics::default();
        let t = NodeStateTracker::new();
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 10, 10, false, &quiet, 3, &t),
            Some("Maximum turns reached")
        );
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 3, 10, true, &quiet, 3, &t),
            Some("Closing strategy selected")
        );
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 3, 10, false, &quiet, 3, &t),
            None
        );
    }

    #[test]
    fn saturation_is_checked_from_turn_five_with_the_seed_thresholds() {
        let t = NodeStateTracker::new();
        let low = SaturationMetrics {
            consecutive_low_info: 5,
            ..SaturationMetrics::default()
        };
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 4, 20, false, &low, 0, &t),
            None
        );
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 5, 20, false, &low, 0, &t),
            Some("graph_saturated")
        );
        let shallow = SaturationMetrics {
            consecutive_shallow: 6,
            ..SaturationMetrics::default()
        };
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 7, 20, false, &shallow, 2, &t),
            Some("quality_degraded")
        );
        let plateau = SaturationMetrics {
            consecutive_depth_plateau: 6,
            ..SaturationMetrics::default()
        };
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 7, 20, false, &plateau, 2, &t),
            None
        );
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 7, 20, false, &plateau, 0, &t),
            Some("depth_plateau")
        );
    }

    #[test]
    fn saturation_is_checked_before_turn_five_in_the_late_phase() {
        // Before turn 5 the counters cannot reach 5 or 6, so the check that can fire is
        // exhaustion: a node focused since turn 2 has gone 3 turns without yield by turn 4.
        let quiet = SaturationMetrics::default();
        let stale = tracker_with_focus(3);
        // The final two turns are late: turn 4 of 5 is, turn 4 of 20 is not.
        assert_eq!(Phase::for_turn(4, 5), Phase::Late);
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 4, 5, false, &quiet, 0, &stale),
            Some("all_nodes_exhausted")
        );
        assert_eq!(Phase::for_turn(4, 20), Phase::Mid);
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 4, 20, false, &quiet, 0, &stale),
            None
        );
    }

    #[test]
    fn exhaustion_needs_every_explored_node_stale_and_a_barren_turn() {
        let quiet = SaturationMetrics::default();
        let stale = tracker_with_focus(3);
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 6, 20, false, &quiet, 0, &stale),
            Some("all_nodes_exhausted")
        );
        assert_eq!(
            stop_reason(&PhaseBoundaries::default(), 6, 20, false, &quiet, 1, &stale),
            None
        );
        assert_eq!(
            stop_reason(
                &PhaseBoundaries::default(),
                6,
                20,
                false,
                &quiet,
                0,
                &tracker_with_focus(2)
            ),
            None
        );
    }
}
