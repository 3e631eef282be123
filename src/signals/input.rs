//! What detectors read ([`DetectionInput`]) and what they write ([`Detected`]).

use std::collections::BTreeMap;

use crate::domain::{
    CanonicalGraphState, GraphState, LlmScores, NodeSignals, ResponseDepth, SignalValue, Signals,
    VelocityState,
};
use crate::graph::node_state::NodeStateTracker;

/// Everything a turn's signal detection may look at. All values; no I/O behind them.
#[derive(Debug, Clone, Copy)]
pub struct DetectionInput<'a> {
    /// The turn being processed, 1-based.
    pub turn_number: u32,
    pub max_turns: u32,
    pub graph: &'a GraphState,
    /// `None` when canonical slots are disabled; canonical signals are then absent.
    pub canonical: Option<&'a CanonicalGraphState>,
    /// The LLM batch's rubric scores; `None` when the batch did not run.
    pub llm: Option<&'a LlmScores>,
    /// Response depth of every answer so far in the session, this turn's included, oldest first.
    pub depth_history: &'a [ResponseDepth],
    /// Strategies of earlier turns, oldest first (the store's recent window).
    pub strategy_history: &'a [String],
    /// Velocity state as loaded at turn start (seed 000 Path 16: signals read the stored EWMA).
    pub velocity: &'a VelocityState,
    pub tracker: &'a NodeStateTracker,
    /// What the depth signals are divided by to lie in [0, 1]: the ontology's ladder span in
    /// edges, or its number of node types (the methodology's `depth_normalisation`).
    pub depth_divisor: u32,
    /// Where the phases change (the methodology's `phase_boundaries`).
    pub phases: crate::domain::PhaseBoundaries,
    /// The lowest and highest ontology level of the methodology's node types, which
    /// `graph.node.level` places each node between.
    pub levels: (u32, u32),
}

/// Accumulated detector outputs: global signals and per-node signals by tracking key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Detected {
    pub global: Signals,
    pub nodes: BTreeMap<String, Signals>,
}

impl Detected {
    pub fn set(&mut self, name: &str, value: impl Into<SignalValue>) {
        self.global.insert(name.to_owned(), value.into());
    }

    pub fn set_node(&mut self, node: &str, name: &str, value: impl Into<SignalValue>) {
        self.nodes
            .entry(node.to_owned())
            .or_default()
            .insert(name.to_owned(), value.into());
    }

    pub fn node(&self, node: &str, name: &str) -> Option<&SignalValue> {
        self.nodes.get(node).and_then(|s| s.get(name))
    }

    /// Node signals in the tracker's creation order, the order stage 2 breaks ties by.
    pub fn node_signals(&self, tracker: &NodeStateTracker) -> NodeSignals {
        let mut out: NodeSignals = Vec::with_capacity(self.nodes.len());
        for key in &tracker.order {
            if let Some(s) = self.nodes.get(key) {
                out.push((key.clone(), s.clone()));
            }
        }
        for (key, s) in &self.nodes {
            if !tracker.order.contains(key) {
                out.push((key.clone(), s.clone()));
            }
        }
        out
    }
}
