//! Every detector of the five pools, as small pure functions over [`DetectionInput`].
//!
//! Names are the namespaced signal (or detector) names of the catalogue. Signals whose inputs
//! are absent (no LLM batch, canonical slots disabled) are not emitted, so weights on them
//! contribute nothing rather than a made-up value.

use super::input::{Detected, DetectionInput};
use super::registry::Detector;
use super::{llm, meta, node};
use crate::domain::{Phase, ResponseDepth, SignalValue};

macro_rules! detector {
    ($name:literal, [$($dep:literal),*], $f:expr) => {
        Detector { name: $name, depends_on: &[$($dep),*], detect: $f }
    };
}

/// The LLM rubrics that become continuous `llm.*` signals.
const CONTINUOUS_RUBRICS: [&str; 5] = [
    "specificity",
    "certainty",
    "valence",
    "engagement",
    "intellectual_engagement",
];

/// All detectors, in a readable order; the registry orders them by dependency.
pub fn all() -> Vec<Detector> {
    let mut d = graph_detectors();
    d.extend(llm_detectors());
    d.extend(temporal_and_meta_detectors());
    d.extend(node_detectors());
    d.extend(node_history_detectors());
    d
}

fn graph_detectors() -> Vec<Detector> {
    vec![
        detector!("graph.node_count", [], |i, o| o
            .set("graph.node_count", i.graph.node_count)),
        detector!("graph.edge_count", [], |i, o| o
            .set("graph.edge_count", i.graph.edge_count)),
        detector!("graph.orphan_count", [], |i, o| o
            .set("graph.orphan_count", i.graph.orphan_count)),
        detector!("graph.max_depth", [], |i, o| {
            o.set(
                "graph.max_depth",
                (f64::from(i.graph.max_depth) / f64::from(i.depth_divisor.max(1))).min(1.0),
            );
        }),
        detector!("graph.avg_depth", [], |i, o| {
            o.set(
                "graph.avg_depth",
                (i.graph.avg_depth / f64::from(i.depth_divisor.max(1))).clamp(0.0, 1.0),
            );
        }),
        detector!("graph.depth_by_element", [], |i, o| {
            o.set(
                "graph.depth_by_element",
                (i.graph.element_depth / f64::from(i.depth_divisor.max(1))).clamp(0.0, 1.0),
            );
        }),
        detector!("graph.chain_completion", [], |i, o| {
            o.set(
                "graph.chain_completion.ratio",
                i.graph.chain_completion_ratio,
            );
            o.set(
                "graph.chain_completion.has_complete",
                i.graph.has_complete_chain,
            );
        }),
        detector!("graph.turn.top_new_type", [], |i, o| {
            if let Some(t) = node::top_new_type(i.tracker, i.turn_number) {
                o.set("graph.turn.top_new_type", SignalValue::category(t));
            }
        }),
        detector!("graph.canonical_concept_count", [], |i, o| {
            if let Some(c) = i.canonical {
                o.set("graph.canonical_concept_count", c.concept_count);
            }
        }),
        detector!("graph.canonical_edge_density", [], |i, o| {
            if let Some(c) = i.canonical {
                let density = if c.concept_count == 0 {
                    0.0
                } else {
                    f64::from(c.edge_count) / f64::from(c.concept_count)
                };
                o.set("graph.canonical_edge_density", density);
            }
        }),
        detector!(
            "graph.canonical_exhaustion_score",
            ["llm.response_depth"],
            |i, o| {
                // With slots enabled the tracker is keyed by slot, so this is the mean exhaustion of
                // canonical concepts.
                if i.canonical.is_some() {
                    let states: Vec<f64> = i
                        .tracker
                        .states
                        .values()
                        .map(node::exhaustion_score)
                        .collect();
                    let mean = if states.is_empty() {
                        0.0
                    } else {
                        states.iter().sum::<f64>() / states.len() as f64
                    };
                    o.set("graph.canonical_exhaustion_score", mean);
                }
            }
        ),
    ]
}

fn llm_detectors() -> Vec<Detector> {
    let mut d = vec![detector!("llm.response_depth", [], |i, o| {
        if let Some(s) = i.llm.and_then(|l| l.get("response_depth")) {
            o.set(
                "llm.response_depth",
                SignalValue::category(ResponseDepth::from_score(s.score).as_str()),
            );
        }
    })];
    d.push(detector!("llm.specificity", [], |i, o| continuous(i, o, 0)));
    d.push(detector!("llm.certainty", [], |i, o| continuous(i, o, 1)));
    d.push(detector!("llm.valence", [], |i, o| continuous(i, o, 2)));
    d.push(detector!("llm.engagement", [], |i, o| continuous(i, o, 3)));
    d.push(detector!("llm.intellectual_engagement", [], |i, o| {
        continuous(i, o, 4);
    }));
    d.push(detector!(
        "llm.global_response_trend",
        ["llm.response_depth"],
        |i, o| {
            o.set(
                "llm.global_response_trend",
                SignalValue::category(llm::response_trend(i.depth_history)),
            );
        }
    ));
    d
}

fn continuous(i: &DetectionInput<'_>, o: &mut Detected, index: usize) {
    let Some(rubric) = CONTINUOUS_RUBRICS.get(index) else {
        return;
    };
    if let Some(s) = i.llm.and_then(|l| l.get(*rubric)) {
        o.set(&format!("llm.{rubric}"), llm::normalise(s.score));
    }
}

/// Occurrences of the latest strategy among the last five turns, over five.
pub fn strategy_repetition(history: &[String]) -> f64 {
    let Some(last) = history.last() else {
        return 0.0;
    };
    let window = history.iter().rev().take(5);
    window.filter(|s| *s == last).count() as f64 / 5.0
}

/// `temporal.turns_since_strategy_change` in [0, 1] (the seeds name it only; this is the
/// original system's form): the latest strategy's run length over 5, the history's length,
/// and 0 before there are two turns to compare.
pub fn turns_since_strategy_change(history: &[String]) -> f64 {
    if history.len() < 2 {
        return 0.0;
    }
    (f64::from(run_length(history)) / 5.0).min(1.0)
}

/// How many turns in a row the latest strategy has run.
pub fn run_length(history: &[String]) -> u32 {
    let Some(last) = history.last() else { return 0 };
    u32::try_from(history.iter().rev().take_while(|s| *s == last).count()).unwrap_or(u32::MAX)
}

fn temporal_and_meta_detectors() -> Vec<Detector> {
    vec![
        detector!("temporal.strategy_repetition_count", [], |i, o| {
            o.set(
                "temporal.strategy_repetition_count",
                strategy_repetition(i.strategy_history),
            );
        }),
        detector!("temporal.turns_since_strategy_change", [], |i, o| {
            o.set(
                "temporal.turns_since_strategy_change",
                turns_since_strategy_change(i.strategy_history),
            );
        }),
        detector!("meta.interview.phase", [], |i, o| {
            o.set(
                "meta.interview.phase",
                SignalValue::category(i.phases.phase(i.turn_number, i.max_turns).as_str()),
            );
        }),
        detector!("meta.interview.phase_reason", [], |i, o| {
            o.set(
                "meta.interview.phase_reason",
                SignalValue::category(i.phases.reason(i.turn_number, i.max_turns)),
            );
        }),
        detector!("meta.interview.is_late_stage", [], |i, o| {
            o.set(
                "meta.interview.is_late_stage",
                i.phases.phase(i.turn_number, i.max_turns) == Phase::Late,
            );
        }),
        detector!("meta.interview_progress", [], |i, o| {
            o.set(
                "meta.interview_progress",
                (f64::from(i.turn_number) / f64::from(i.max_turns.max(1))).min(1.0),
            );
        }),
        detector!(
            "meta.conversation.saturation",
            ["graph.node_count", "graph.edge_count"],
            |i, o| {
                let v = i.velocity;
                let s = meta::saturation(
                    v.surface_velocity_ewma,
                    v.surface_velocity_peak,
                    i.graph.edge_count,
                    i.graph.node_count,
                    i.turn_number,
                );
                o.set("meta.conversation.saturation", s.score);
            }
        ),
        detector!(
            "meta.canonical.saturation",
            ["graph.canonical_concept_count"],
            |i, o| {
                if let Some(c) = i.canonical {
                    let v = i.velocity;
                    let s = meta::saturation(
                        v.canonical_velocity_ewma,
                        v.canonical_velocity_peak,
                        c.edge_count,
                        c.concept_count,
                        i.turn_number,
                    );
                    o.set("meta.canonical.saturation", s.score);
                }
            }
        ),
    ]
}

/// Exhaustion reads the share of shallow answers the tracker recorded from `llm.response_depth`,
/// so its detectors depend on that one: a methodology weighing exhaustion gets the rubric asked.
fn node_detectors() -> Vec<Detector> {
    vec![
        detector!("graph.node.exhausted", ["llm.response_depth"], |i, o| {
            per_node(i, o, "graph.node.exhausted", |s| {
                node::is_exhausted(s).into()
            });
        }),
        detector!(
            "graph.node.exhaustion_score",
            ["llm.response_depth"],
            |i, o| per_node(i, o, "graph.node.exhaustion_score", |s| {
                node::exhaustion_score(s).into()
            })
        ),
        detector!("graph.node.yield_stagnation", [], |i, o| per_node(
            i,
            o,
            "graph.node.yield_stagnation",
            |s| node::yield_stagnation(s).into()
        )),
        detector!("graph.node.focus_streak", [], |i, o| {
            per_node(i, o, "graph.node.focus_streak", |s| {
                SignalValue::category(node::level(s.current_focus_streak))
            });
        }),
        detector!("graph.node.recency_score", [], |i, o| per_node(
            i,
            o,
            "graph.node.recency_score",
            |s| node::recency_score(s).into()
        )),
        detector!("graph.node.is_current_focus", [], |i, o| {
            for (key, _) in tracked(i) {
                o.set_node(
                    key,
                    "graph.node.is_current_focus",
                    i.tracker.previous_focus.as_deref() == Some(key.as_str()),
                );
            }
        }),
        detector!("graph.node.is_orphan", [], |i, o| per_node(
            i,
            o,
            "graph.node.is_orphan",
            |s| s.is_orphan().into()
        )),
        detector!("graph.node.edge_count", [], |i, o| {
            per_node(i, o, "graph.node.edge_count", |s| {
                (s.edge_count_incoming + s.edge_count_outgoing).into()
            });
        }),
        detector!("graph.node.has_outgoing", [], |i, o| per_node(
            i,
            o,
            "graph.node.has_outgoing",
            |s| (s.edge_count_outgoing > 0).into()
        )),
        detector!(
            "meta.node.opportunity",
            [
                "graph.node.exhausted",
                "graph.node.focus_streak",
                "llm.response_depth"
            ],
            |i, o| {
                let depth = match o.global.get("llm.response_depth") {
                    Some(SignalValue::Category(c)) => Some(c.clone()),
                    _ => None,
                };
                for (key, state) in tracked(i) {
                    let exhausted = matches!(
                        o.node(key, "graph.node.exhausted"),
                        Some(SignalValue::Bool(true))
                    );
                    let streak = match o.node(key, "graph.node.focus_streak") {
                        Some(SignalValue::Category(c)) => c.clone(),
                        _ => String::new(),
                    };
                    o.set_node(
                        key,
                        "meta.node.opportunity",
                        SignalValue::category(node::opportunity(
                            exhausted,
                            &streak,
                            depth.as_deref(),
                            // Stage 4 sets a node's yield counter to 0 when this answer
                            // added to it; detection runs before the counters tick.
                            state.turns_since_last_yield == 0,
                        )),
                    );
                }
            }
        ),
        detector!("technique.node.strategy_repetition", [], |i, o| {
            per_node(i, o, "technique.node.strategy_repetition", |s| {
                SignalValue::category(node::repetition_level(s.consecutive_same_strategy))
            });
        }),
    ]
}

/// Node signals from the tracker's history of each node: focus count, age and place on the
/// ladder.
fn node_history_detectors() -> Vec<Detector> {
    vec![
        detector!("graph.node.focus_count", [], |i, o| {
            per_node(i, o, "graph.node.focus_count", |s| {
                SignalValue::category(node::focus_count_level(s.focus_count))
            });
        }),
        detector!("graph.node.novelty", [], |i, o| {
            per_node(i, o, "graph.node.novelty", |s| {
                SignalValue::category(node::novelty(s, i.turn_number))
            });
        }),
        detector!("graph.node.is_mentioned", [], |i, o| {
            for (key, state) in tracked(i) {
                let asked = i.tracker.previous_focus.as_deref() == Some(key.as_str());
                o.set_node(
                    key,
                    "graph.node.is_mentioned",
                    !asked && node::is_mentioned(state, i.turn_number),
                );
            }
        }),
        detector!("graph.node.is_new", [], |i, o| {
            per_node(i, o, "graph.node.is_new", |s| {
                node::is_new(s, i.turn_number).into()
            });
        }),
        detector!("graph.node.level", [], |i, o| {
            let (lowest, highest) = i.levels;
            per_node(i, o, "graph.node.level", |s| {
                node::level_position(s, lowest, highest).into()
            });
        }),
        detector!("graph.node.type", [], |i, o| {
            per_node(i, o, "graph.node.type", |s| {
                SignalValue::category(s.node_type.as_str())
            });
        }),
        detector!("graph.node.is_terminal", [], |i, o| {
            per_node(i, o, "graph.node.is_terminal", |s| s.is_terminal.into());
        }),
        detector!("graph.node.canonical_novelty", [], |i, o| {
            // With slots on, nodes are tracked per slot, so a tracked key's first turn is its
            // slot's, and a key that is no slot's is a node no slot holds yet (the original's
            // `orphan`); without slots there is no canonical novelty to report.
            if i.canonical.is_some() {
                let slots: std::collections::BTreeSet<&str> =
                    i.tracker.slot_of.values().map(String::as_str).collect();
                for (key, s) in tracked(i) {
                    let value = if !slots.contains(key.as_str()) {
                        "orphan"
                    } else if s.created_at_turn >= i.turn_number {
                        "new"
                    } else {
                        "confirming"
                    };
                    o.set_node(
                        key,
                        "graph.node.canonical_novelty",
                        SignalValue::category(value),
                    );
                }
            }
        }),
    ]
}

fn tracked<'a>(
    i: &DetectionInput<'a>,
) -> impl Iterator<Item = (&'a String, &'a crate::graph::node_state::NodeState)> {
    i.tracker.states.iter()
}

fn per_node(
    i: &DetectionInput<'_>,
    o: &mut Detected,
    name: &str,
    f: impl Fn(&crate::graph::node_state::NodeState) -> SignalValue,
) {
    for (key, state) in tracked(i) {
        o.set_node(key, name, f(state));
    }
}
