//! Stage 5, state computation: fresh graph metrics, saturation counters and the canonical
//! state, for the turn's signals.

use super::Staged;
use crate::graph::canonical::canonical_state;
use crate::graph::metrics::{graph_state, saturation_metrics};
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{
    ExtractionOutput, GraphUpdateOutput, NodeRef, StateComputationOutput,
};
use crate::pipeline::ports::Ports;
use crate::pipeline::runner::TurnRun;
use crate::time::now_rfc3339;

pub(crate) struct Input<'a> {
    pub turn: u32,
    pub extraction: &'a ExtractionOutput,
    pub update: &'a GraphUpdateOutput,
}

impl<'a> Input<'a> {
    pub fn from_turn(run: &'a TurnRun) -> Result<Self, PipelineError> {
        Ok(Self {
            turn: run.turn,
            extraction: run.ctx.extraction()?,
            update: run.ctx.graph_update()?,
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
) -> Result<Staged<'static, StateComputationOutput>, PipelineError> {
    let data = ports.data;
    let turn = input.turn;
    let mut graph = graph_state(&data.nodes, &data.edges, &ports.spec.methodology, turn);
    graph.turn_count = turn;
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let saturation = saturation_metrics(
        &data.state.saturation,
        &data.nodes,
        count(input.update.nodes_added.len()),
        count(input.update.edges_added.len()),
        count(input.extraction.concept_count),
        graph.max_depth,
        &data.state.depth_history,
    );
    let canonical = ports
        .services
        .settings
        .enable_canonical_slots
        .then(|| canonical_state(&data.slots, &data.canonical_edges));
    let recent_nodes = data
        .nodes
        .iter()
        .filter(|n| n.turn == turn)
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
    Ok(Staged::new(output, summary))
}
