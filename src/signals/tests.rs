//! Detection over a small, fully specified interview state: every catalogue signal appears,
//! with the value its formula gives.

// One walkthrough test reads best as one long sequence of assertions.
#![allow(clippy::too_many_lines, clippy::many_single_char_names)]

use super::catalog::{SIGNALS, Scope};
use super::*;
use crate::domain::{
    CanonicalGraphState, GraphState, LlmScores, ResponseDepth, RubricScore, SignalValue,
    VelocityState,
};
use crate::graph::node_state::{GraphChangeSummary, NodeRegistration, NodeStateTracker};

fn reg(id: &str, level: u32) -> NodeRegistration<'_> {
    NodeRegistration {
        node_id: id,
        label: id,
        node_type: "attribute",
        depth: 0,
        level,
        is_terminal: false,
    }
}

/// Three turns: A created and focused in turn 1, A yields in turn 2 (B created), turn 3 asks
/// about A again with a surface answer and A yields nothing.
fn tracker() -> NodeStateTracker {
    let mut t = NodeStateTracker::new();
    t.register_node(&reg("A", 1), 1);
    t.update_focus(Some("A"), 1, "deepen");
    t.register_node(&reg("B", 2), 2);
    t.update_edge_counts("A", 1, 0, Some("B"));
    t.update_edge_counts("B", 0, 1, Some("A"));
    t.record_yield(
        "A",
        2,
        GraphChangeSummary {
            nodes_added: 1,
            edges_added: 1,
            nodes_modified: 0,
        },
    );
    t.append_response_signal("A", "deep");
    t.update_focus(Some("A"), 2, "deepen");
    t.register_node(&reg("C", 1), 3);
    t.append_response_signal("A", "surface");
    t
}

fn scores(depth: u8, rest: u8) -> LlmScores {
    crate::config::REQUIRED_RUBRICS
        .iter()
        .map(|n| {
            (
                (*n).to_owned(),
                RubricScore {
                    score: if *n == "response_depth" { depth } else { rest },
                    rationale: String::new(),
                },
            )
        })
        .collect()
}

/// Turn `turn` of a 10-turn interview with nothing but `tracker`: an empty graph, no rubric
/// scores, history or velocity, no slots.
fn bare_input(tracker: &NodeStateTracker, turn: u32) -> DetectionInput<'_> {
    static GRAPH: std::sync::LazyLock<GraphState> = std::sync::LazyLock::new(GraphState::default);
    static VELOCITY: std::sync::LazyLock<VelocityState> =
        std::sync::LazyLock::new(VelocityState::default);
    DetectionInput {
        turn_number: turn,
        max_turns: 10,
        graph: &GRAPH,
        canonical: None,
        llm: None,
        depth_history: &[],
        strategy_history: &[],
        velocity: &VELOCITY,
        tracker,
        depth_divisor: 4,
        levels: (1, 5),
        phases: crate::domain::PhaseBoundaries::default(),
    }
}

fn n(v: Option<&SignalValue>) -> f64 {
    match v {
        Some(SignalValue::Number(x)) => *x,
        other => panic!("not a number: {other:?}"),
    }
}

#[test]
fn every_signal_is_detected_with_its_formula() {
    let t = tracker();
    let graph = GraphState {
        node_count: 3,
        edge_count: 1,
        orphan_count: 1,
        max_depth: 1,
        avg_depth: 0.5,
        element_depth: 1.5,
        chain_completion_ratio: 0.5,
        has_complete_chain: true,
        ..GraphState::default()
    };
    let canonical = CanonicalGraphState {
        concept_count: 2,
        edge_count: 1,
        orphan_count: 0,
        max_depth: 1,
        avg_support: 1.5,
    };
    let llm = scores(1, 4);
    let velocity = VelocityState {
        surface_velocity_ewma: 1.0,
        surface_velocity_peak: 2.0,
        canonical_velocity_ewma: 0.0,
        canonical_velocity_peak: 1.0,
        ..VelocityState::default()
    };
    let history = [
        "deepen".to_owned(),
        "explore".to_owned(),
        "deepen".to_owned(),
        "deepen".to_owned(),
    ];
    let depths = [
        ResponseDepth::Deep,
        ResponseDepth::Deep,
        ResponseDepth::Surface,
    ];
    let input = DetectionInput {
        turn_number: 3,
        max_turns: 10,
        graph: &graph,
        canonical: Some(&canonical),
        llm: Some(&llm),
        depth_history: &depths,
        strategy_history: &history,
        velocity: &velocity,
        tracker: &t,
        depth_divisor: 4,
        levels: (1, 5),
        phases: crate::domain::PhaseBoundaries::default(),
    };
    let d = Registry::standard().detect(&input, None);
    for spec in SIGNALS {
        match spec.scope {
            Scope::Global => assert!(d.global.contains_key(spec.name), "missing {}", spec.name),
            Scope::Node => assert!(d.node("A", spec.name).is_some(), "missing {}", spec.name),
        }
    }
    let g = |k: &str| d.global.get(k);
    assert_eq!(n(g("graph.max_depth")), 0.25, "1 / span 4");
    assert_eq!(n(g("graph.avg_depth")), 0.125);
    assert_eq!(
        n(g("graph.depth_by_element")),
        0.375,
        "1.5 edges on from the elements / 4"
    );
    assert_eq!(
        g("graph.chain_completion.has_complete"),
        Some(&SignalValue::Bool(true))
    );
    assert_eq!(n(g("graph.canonical_edge_density")), 0.5);
    assert_eq!(
        g("llm.response_depth"),
        Some(&SignalValue::category("surface"))
    );
    assert_eq!(n(g("llm.certainty")), 0.75);
    assert_eq!(
        g("llm.global_response_trend"),
        Some(&SignalValue::category("stable"))
    );
    assert_eq!(
        n(g("temporal.strategy_repetition_count")),
        0.6,
        "3 of the last 5 (4 known) are deepen"
    );
    assert_eq!(
        n(g("temporal.turns_since_strategy_change")),
        0.4,
        "a run of 2 ÷ 5"
    );
    assert_eq!(
        g("meta.interview.phase_reason"),
        Some(&SignalValue::category("mid_window"))
    );
    assert_eq!(
        g("meta.interview.is_late_stage"),
        Some(&SignalValue::Bool(false))
    );
    assert_eq!(n(g("meta.interview_progress")), 0.3);
    assert_eq!(
        g("meta.interview.phase"),
        Some(&SignalValue::category("mid"))
    );
    // 0.6 × (1 − 1/2) + 0.25 × min(1/3 / 2, 1) + 0.15 × 3/15
    let expected = 0.6 * 0.5 + 0.25 * (1.0 / 3.0 / 2.0) + 0.15 * 0.2;
    assert!((n(g("meta.conversation.saturation")) - expected).abs() < 1e-12);
    // Canonical: decay 1, density 0.5/2, floor 0.2.
    assert!((n(g("meta.canonical.saturation")) - (0.6 + 0.25 * 0.25 + 0.15 * 0.2)).abs() < 1e-12);

    // Node A after turn 2's update_focus: focus 2, streak 2, tsly 1, depths [deep, surface].
    let a = |k: &str| d.node("A", k);
    assert_eq!(
        a("graph.node.exhausted"),
        Some(&SignalValue::Bool(false)),
        "tsly 1 < 2"
    );
    assert!((n(a("graph.node.exhaustion_score")) - (0.04 + 0.12 + 0.15)).abs() < 1e-12);
    assert_eq!(
        a("graph.node.focus_streak"),
        Some(&SignalValue::category("medium"))
    );
    assert_eq!(
        a("graph.node.is_current_focus"),
        Some(&SignalValue::Bool(true))
    );
    assert_eq!(a("graph.node.has_outgoing"), Some(&SignalValue::Bool(true)));
    assert_eq!(n(a("graph.node.recency_score")), 1.0);
    assert_eq!(
        a("meta.node.opportunity"),
        Some(&SignalValue::category("fresh")),
        "answer was surface"
    );
    assert_eq!(
        a("technique.node.strategy_repetition"),
        Some(&SignalValue::category("low")),
        "2 in a row is low in the original's bins (1–2)"
    );
    assert_eq!(
        a("graph.node.focus_count"),
        Some(&SignalValue::category("low")),
        "focused twice: low (1–2)"
    );
    assert_eq!(
        a("graph.node.novelty"),
        Some(&SignalValue::category("high")),
        "created in turn 1, age 2: 0.6 is high"
    );
    assert_eq!(a("graph.node.is_new"), Some(&SignalValue::Bool(false)));
    assert_eq!(n(a("graph.node.level")), 0.0, "level 1 of 1–5");
    assert_eq!(n(d.node("B", "graph.node.level")), 0.25, "level 2 of 1–5");
    assert_eq!(a("graph.node.is_terminal"), Some(&SignalValue::Bool(false)));
    assert_eq!(
        a("graph.node.type"),
        Some(&SignalValue::category("attribute")),
        "the type the node was registered with"
    );
    assert_eq!(
        a("graph.node.canonical_novelty"),
        Some(&SignalValue::category("orphan")),
        "no slot holds A"
    );
    let c = |k: &str| d.node("C", k);
    assert_eq!(
        c("graph.node.is_new"),
        Some(&SignalValue::Bool(true)),
        "created this turn"
    );
    assert_eq!(
        c("graph.node.focus_count"),
        Some(&SignalValue::category("none"))
    );
    assert_eq!(c("graph.node.is_orphan"), Some(&SignalValue::Bool(true)));
    assert_eq!(n(c("graph.node.exhaustion_score")), 0.0, "never focused");
    assert_eq!(
        c("graph.node.focus_streak"),
        Some(&SignalValue::category("none"))
    );
    // Creation order survives into stage-2 input.
    let order: Vec<String> = d.node_signals(&t).into_iter().map(|(k, _)| k).collect();
    assert_eq!(order, ["A", "B", "C"]);
}

/// `graph.node.canonical_novelty` with slots: a node whose slot was first seen this turn is
/// `new`, one whose slot is older `confirming`, one no slot holds yet `orphan`.
#[test]
fn canonical_novelty_is_new_confirming_or_orphan() {
    let mut t = NodeStateTracker::new();
    t.register_node(&reg("old", 1), 1);
    t.map_to_slot("old", "slot-old");
    t.register_node(&reg("fresh", 1), 4);
    t.map_to_slot("fresh", "slot-fresh");
    t.register_node(&reg("loose", 1), 4);
    let canonical = CanonicalGraphState::default();
    let input = DetectionInput {
        canonical: Some(&canonical),
        ..bare_input(&t, 4)
    };
    let d = Registry::standard().detect(&input, None);
    let at = |key: &str| d.node(key, "graph.node.canonical_novelty");
    assert_eq!(at("slot-old"), Some(&SignalValue::category("confirming")));
    assert_eq!(at("slot-fresh"), Some(&SignalValue::category("new")));
    assert_eq!(at("loose"), Some(&SignalValue::category("orphan")));
}

/// `graph.node.is_mentioned`: a concept the answer named again (merged into it, or a
/// paraphrase mapped to its slot) is mentioned in that turn only; a new concept is new, not
/// mentioned; and the concept the question was about is answered, not come back to.
#[test]
fn a_concept_named_again_is_mentioned_unless_it_was_asked_about() {
    let mut t = NodeStateTracker::new();
    t.register_node(&reg("creamy", 1), 1);
    t.register_node(&reg("asked", 2), 1);
    t.register_node(&reg("quiet", 1), 1);
    t.register_node(&reg("slot-speed", 1), 1);
    t.update_focus(Some("asked"), 1, "deepen");
    // Turn 3's answer: "creamy" again, the asked-about concept again, a paraphrase of the
    // slot, and something new.
    t.record_mention("creamy", 3);
    t.record_mention("asked", 3);
    t.register_node(&reg("fast", 1), 3);
    t.map_to_slot("fast", "slot-speed");
    t.register_node(&reg("fresh", 1), 3);
    let mentioned = |t: &NodeStateTracker, turn: u32, key: &str| {
        let d = Registry::standard().detect(&bare_input(t, turn), None);
        d.node(key, "graph.node.is_mentioned").cloned()
    };
    let yes = Some(SignalValue::Bool(true));
    let no = Some(SignalValue::Bool(false));
    assert_eq!(mentioned(&t, 3, "creamy"), yes);
    assert_eq!(
        mentioned(&t, 3, "slot-speed"),
        yes,
        "a paraphrase folded in"
    );
    assert_eq!(mentioned(&t, 3, "asked"), no, "the question was about it");
    assert_eq!(mentioned(&t, 3, "fresh"), no, "new, not said again");
    assert_eq!(mentioned(&t, 3, "quiet"), no);
    assert_eq!(
        mentioned(&t, 4, "creamy"),
        no,
        "only in the turn that said it"
    );
}

#[test]
fn absent_inputs_emit_nothing_rather_than_guesses() {
    let t = NodeStateTracker::new();
    let input = bare_input(&t, 1);
    let d = Registry::standard().detect(&input, None);
    for absent in [
        "llm.response_depth",
        "llm.engagement",
        "meta.canonical.saturation",
        "graph.canonical_concept_count",
    ] {
        assert!(!d.global.contains_key(absent), "{absent} should be absent");
    }
    assert!(d.nodes.is_empty());
    assert_eq!(
        d.global.get("temporal.strategy_repetition_count"),
        Some(&SignalValue::Number(0.0))
    );
}

#[test]
fn a_plan_runs_only_what_the_methodology_needs() {
    let t = tracker();
    let graph = GraphState::default();
    let velocity = VelocityState::default();
    let llm = scores(5, 3);
    let input = DetectionInput {
        turn_number: 2,
        max_turns: 10,
        graph: &graph,
        canonical: None,
        llm: Some(&llm),
        depth_history: &[],
        strategy_history: &[],
        velocity: &velocity,
        tracker: &t,
        depth_divisor: 4,
        levels: (1, 5),
        phases: crate::domain::PhaseBoundaries::default(),
    };
    let r = Registry::standard();
    let plan = r.plan(["meta.node.opportunity.probe_deeper"]);
    let d = r.detect(&input, Some(&plan));
    assert_eq!(
        d.node("A", "meta.node.opportunity"),
        Some(&SignalValue::category("probe_deeper")),
        "deep answer, streak 2"
    );
    assert!(!d.global.contains_key("graph.node_count"));
}

/// `temporal.turns_since_strategy_change` is the run length over 5, in [0, 1], and 0 before a
/// change could have happened.
#[test]
fn turns_since_strategy_change_is_a_unit_share_of_five() {
    use super::detectors::turns_since_strategy_change as t;
    let h = |xs: &[&str]| xs.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(t(&h(&[])), 0.0);
    assert_eq!(t(&h(&["a"])), 0.0);
    assert_eq!(t(&h(&["a", "b"])), 0.2);
    assert_eq!(t(&h(&["a", "b", "b"])), 0.4);
    assert_eq!(t(&h(&["b"; 7])), 1.0);
}
