//! Stage 7, continuation: whether the interview goes on. Hard stops first (the turn limit, a
//! closing strategy), then saturation from [`MIN_TURN_FOR_SATURATION`] or in the late phase.

use super::Staged;
use crate::domain::Phase;
use crate::graph::metrics::{DEPTH_PLATEAU_TURNS, GRAPH_SATURATED_TURNS, QUALITY_DEGRADED_TURNS};
use crate::graph::node_state::NodeStateTracker;
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{
    ContinuationOutput, GraphUpdateOutput, StateComputationOutput, StrategySelectionOutput,
};
use crate::pipeline::ports::Ports;
use crate::pipeline::runner::TurnRun;

/// Saturation checks start at this turn, or earlier in the late phase (seed 001: "after
/// `MIN_TURN_FOR_SATURATION=5` or late stage").
pub const MIN_TURN_FOR_SATURATION: u32 = 5;
/// A focused node counts as exhausted after this many turns without yield.
pub const NODE_EXHAUSTED_TURNS: u32 = 3;

pub(crate) struct Input<'a> {
    pub turn: u32,
    pub update: &'a GraphUpdateOutput,
    pub computed: &'a StateComputationOutput,
    pub selection: &'a StrategySelectionOutput,
}

impl<'a> Input<'a> {
    pub fn from_turn(run: &'a TurnRun) -> Result<Self, PipelineError> {
        Ok(Self {
            turn: run.turn,
            update: run.ctx.graph_update()?,
            computed: run.ctx.state_computation()?,
            selection: run.ctx.strategy_selection()?,
        })
    }
}

#[allow(
    clippy::unnecessary_wraps,
    reason = "every stage has the signature the runner calls; this one cannot fail"
)]
pub(crate) fn run(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<Staged<'static, ContinuationOutput>, PipelineError> {
    let data = ports.data;
    let selection = input.selection;
    let reason = stop_reason(
        &ports.spec.methodology.phase_boundaries,
        input.turn,
        data.max_turns,
        selection.generates_closing_question,
        &input.computed.saturation_metrics,
        input.update.nodes_added.len(),
        &data.tracker,
    );
    let driven = ports.services.settings.transcript_driven;
    let output = ContinuationOutput {
        should_continue: reason.is_none() || driven,
        focus_concept: selection
            .focus
            .as_ref()
            .map(|f| f.label.clone())
            .unwrap_or_default(),
        reason: reason.unwrap_or_default().to_owned(),
        turns_remaining: data.max_turns.saturating_sub(input.turn),
    };
    let summary = if driven && !output.reason.is_empty() {
        format!(
            "the transcript goes on (the engine would stop: {})",
            output.reason
        )
    } else if output.should_continue {
        format!("continue, {} turns left", output.turns_remaining)
    } else {
        format!("stop: {}", output.reason)
    };
    Ok(Staged::new(output, summary))
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

    #[test]
    fn the_stage_stops_at_the_last_turn_and_names_the_focus() {
        let fx = crate::pipeline::stages::fixture::Fixture::new();
        let update = GraphUpdateOutput {
            nodes_added: Vec::new(),
            edges_added: Vec::new(),
            node_count: 0,
            edge_count: 0,
        };
        let computed =
            crate::pipeline::stages::fixture::computed(3, crate::domain::GraphState::default(), "");
        let selection =
            crate::pipeline::stages::fixture::selection("deepen", Some(("n1", "froths well")));
        let at = |turn| Input {
            turn,
            update: &update,
            computed: &computed,
            selection: &selection,
        };
        let going = run(&at(3), &fx.ports()).unwrap();
        assert!(going.output.should_continue);
        assert_eq!(going.output.turns_remaining, 7);
        assert_eq!(going.output.focus_concept, "froths well");
        assert_eq!(going.summary, "continue, 7 turns left");
        let last = run(&at(10), &fx.ports()).unwrap().output;
        assert!(!last.should_continue);
        assert_eq!(last.reason, "Maximum turns reached");
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
