//! [`TurnResult`]: what one turn produced (seed 001 "`TurnResult` Output"), computed live from
//! the stage contracts every turn.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::contracts::{Alternative, EdgeRef, ExtractionResult, Focus, NodeRef};
use super::{PipelineError, TurnContext};
use crate::domain::{CanonicalGraphState, GraphState, NodeSignals, SaturationMetrics, Signals};
use crate::scoring::ScoredCandidate;

/// The turn's depth and saturation scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnScoring {
    /// Longest chain in the surface graph.
    pub depth: f64,
    /// `meta.conversation.saturation`.
    pub saturation: f64,
}

/// Surface against canonical graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphComparison {
    pub surface_nodes: u32,
    pub surface_edges: u32,
    pub canonical_concepts: u32,
    pub canonical_edges: u32,
    /// Surface nodes per active canonical concept; 0 when there is none yet.
    pub compression_ratio: f64,
}

/// Everything one turn produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnResult {
    pub turn_number: u32,
    pub extracted: ExtractionResult,
    pub graph_state: GraphState,
    pub scoring: TurnScoring,
    pub strategy_selected: String,
    pub next_question: String,
    pub should_continue: bool,
    pub latency_ms: u64,
    pub signals: Signals,
    pub strategy_alternatives: Vec<Alternative>,
    pub termination_reason: Option<String>,
    pub canonical_graph: Option<CanonicalGraphState>,
    pub graph_comparison: Option<GraphComparison>,
    pub nodes_added: Vec<NodeRef>,
    pub edges_added: Vec<EdgeRef>,
    pub saturation_metrics: SaturationMetrics,
    /// Node signals keyed by node (tracking key), in node creation order.
    pub node_signals: Map<String, Value>,
    pub score_decomposition: Vec<ScoredCandidate>,
    /// The node the next question targets (not in the seed's list; the focus trace needs it).
    pub focus: Option<Focus>,
}

impl TurnResult {
    pub(crate) fn from_run(ctx: &TurnContext, elapsed: Duration) -> Result<Self, PipelineError> {
        let extraction = ctx.extraction()?;
        let update = ctx.graph_update()?;
        let computed = ctx.state_computation()?;
        let selection = ctx.strategy_selection()?;
        let continuation = ctx.continuation()?;
        let question = ctx.question_generation()?;
        let persisted = ctx.scoring_persistence()?;
        let graph = &computed.graph_state;
        let comparison = computed
            .canonical_graph_state
            .as_ref()
            .map(|c| GraphComparison {
                surface_nodes: graph.node_count,
                surface_edges: graph.edge_count,
                canonical_concepts: c.concept_count,
                canonical_edges: c.edge_count,
                compression_ratio: if c.concept_count == 0 {
                    0.0
                } else {
                    f64::from(graph.node_count) / f64::from(c.concept_count)
                },
            });
        Ok(Self {
            turn_number: persisted.turn_number,
            extracted: extraction.extraction.clone(),
            graph_state: graph.clone(),
            scoring: TurnScoring {
                depth: persisted.depth_score,
                saturation: persisted.saturation_score,
            },
            strategy_selected: selection.strategy.clone(),
            next_question: question.question.clone(),
            should_continue: continuation.should_continue,
            latency_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            signals: selection.signals.clone(),
            strategy_alternatives: selection.strategy_alternatives.clone(),
            termination_reason: (!continuation.should_continue)
                .then(|| continuation.reason.clone()),
            canonical_graph: computed.canonical_graph_state.clone(),
            graph_comparison: comparison,
            nodes_added: update.nodes_added.clone(),
            edges_added: update.edges_added.clone(),
            saturation_metrics: computed.saturation_metrics.clone(),
            node_signals: node_signals_map(&selection.node_signals),
            score_decomposition: selection.score_decomposition.clone(),
            focus: selection.focus.clone(),
        })
    }
}

/// Node signals as a JSON object in creation order.
pub(crate) fn node_signals_map(node_signals: &NodeSignals) -> Map<String, Value> {
    node_signals
        .iter()
        .map(|(id, signals)| {
            (
                id.clone(),
                serde_json::to_value(signals).unwrap_or(Value::Null),
            )
        })
        .collect()
}
