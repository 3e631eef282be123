//! The output contract of every stage (seed 001 "Stage Contracts"), with exactly the fields the
//! seed lists. A contract is what the stage checkpoints and what later stages read.
//!
//! Where the seed names a field without a type, the choice is documented on the field. Node
//! and slot lists carry compact references ([`NodeRef`], [`SlotRef`]) rather than full rows, so
//! checkpoints stay small (no embeddings).

use serde::{Deserialize, Serialize};

use crate::domain::{
    CanonicalGraphState, FocusEntry, GraphState, NodeSignals, SaturationMetrics, Signals,
    VelocityState,
};
use crate::graph::records::{CanonicalSlot, KgEdge, KgNode, SlotMapping};
use crate::graph::surface::{ExtractedConcept, ExtractedRelationship};
use crate::scoring::ScoredCandidate;
use crate::srl::{DiscourseRelation, SrlFrame};

/// One utterance as context loading hands it to prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecentUtterance {
    pub turn: u32,
    pub speaker: crate::domain::Speaker,
    pub text: String,
}

/// Stage 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextLoadingOutput {
    pub methodology: String,
    pub concept_id: String,
    pub concept_name: String,
    /// `turn_count + 1` (seed 000 Path 1).
    pub turn_number: u32,
    /// Interview mode; this engine runs the seed's exploratory mode.
    pub mode: String,
    pub max_turns: u32,
    pub recent_utterances: Vec<RecentUtterance>,
    /// Strategies of the last 5 turns from the store, oldest first (seed 000 Path 4).
    pub strategy_history: Vec<String>,
    pub recent_node_labels: Vec<String>,
    pub velocity: VelocityState,
    pub focus_history: Vec<FocusEntry>,
}

/// Stage 2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UtteranceSavingOutput {
    pub turn_number: u32,
    pub user_utterance_id: String,
    pub user_utterance: String,
}

/// Stage 2.5.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SrlPreprocessingOutput {
    pub discourse_relations: Vec<DiscourseRelation>,
    pub srl_frames: Vec<SrlFrame>,
    pub discourse_count: usize,
    pub frame_count: usize,
    /// How the analysis was made, or why there is none (`disabled by enable_srl = false`).
    /// Added to the seed's fields so an empty output is never mistaken for "nothing found".
    pub status: String,
}

/// A concept as extracted, tied to the utterance it came from (seed 000 Path 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourcedConcept {
    #[serde(flatten)]
    pub concept: ExtractedConcept,
    pub source_utterance_id: String,
}

/// A relationship as extracted, tied to its utterance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourcedRelationship {
    #[serde(flatten)]
    pub relationship: ExtractedRelationship,
    pub source_utterance_id: String,
}

/// The extraction result carried by stage 3.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtractionResult {
    pub concepts: Vec<SourcedConcept>,
    pub relationships: Vec<SourcedRelationship>,
}

/// Stage 3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractionOutput {
    pub extraction: ExtractionResult,
    pub methodology: String,
    /// RFC 3339 time the reply was accepted.
    pub timestamp: String,
    pub concept_count: usize,
    pub relationship_count: usize,
}

/// A node as reported per turn: enough to show and trace it, without its embedding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRef {
    pub id: String,
    pub label: String,
    pub node_type: String,
    pub confidence: f64,
    pub stance: i8,
    pub source_utterance_ids: Vec<String>,
    pub source_quote: String,
    pub turn: u32,
}

impl From<&KgNode> for NodeRef {
    fn from(n: &KgNode) -> Self {
        Self {
            id: n.id.clone(),
            label: n.label.clone(),
            node_type: n.node_type.clone(),
            confidence: n.confidence,
            stance: n.stance,
            source_utterance_ids: n.source_utterance_ids.clone(),
            source_quote: n.source_quote.clone(),
            turn: n.turn,
        }
    }
}

/// An edge as reported per turn, with its endpoint labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EdgeRef {
    pub id: String,
    pub source_node_id: String,
    pub target_node_id: String,
    pub source_label: String,
    pub target_label: String,
    pub edge_type: String,
    pub confidence: f64,
    pub source_utterance_ids: Vec<String>,
    pub turn: u32,
}

impl EdgeRef {
    pub fn new(e: &KgEdge, label_of: impl Fn(&str) -> String) -> Self {
        Self {
            id: e.id.clone(),
            source_label: label_of(&e.source_node_id),
            target_label: label_of(&e.target_node_id),
            source_node_id: e.source_node_id.clone(),
            target_node_id: e.target_node_id.clone(),
            edge_type: e.edge_type.clone(),
            confidence: e.confidence,
            source_utterance_ids: e.source_utterance_ids.clone(),
            turn: e.turn,
        }
    }
}

/// Stage 4.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphUpdateOutput {
    pub nodes_added: Vec<NodeRef>,
    pub edges_added: Vec<EdgeRef>,
    /// Live nodes after the update.
    pub node_count: u32,
    pub edge_count: u32,
}

/// A slot as reported per turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlotRef {
    pub id: String,
    pub slot_name: String,
    pub node_type: String,
    pub status: String,
    pub support_count: u32,
}

impl From<&CanonicalSlot> for SlotRef {
    fn from(s: &CanonicalSlot) -> Self {
        Self {
            id: s.id.clone(),
            slot_name: s.slot_name.clone(),
            node_type: s.node_type.clone(),
            status: s.status.as_str().to_owned(),
            support_count: s.support_count,
        }
    }
}

/// Stage 4.5.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SlotDiscoveryOutput {
    pub slots_created: Vec<SlotRef>,
    pub slots_updated: Vec<SlotRef>,
    pub mappings_created: Vec<SlotMapping>,
}

/// Stage 5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateComputationOutput {
    pub graph_state: GraphState,
    /// Nodes created in this turn.
    pub recent_nodes: Vec<NodeRef>,
    /// RFC 3339; stage 6 refuses a state whose `graph_state.turn_count` is another turn's or
    /// whose `computed_at` precedes this turn's extraction (the seed's freshness check).
    pub computed_at: String,
    pub saturation_metrics: SaturationMetrics,
    /// `None` when canonical slots are disabled.
    pub canonical_graph_state: Option<CanonicalGraphState>,
}

/// The node a question targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Focus {
    pub node_id: String,
    pub label: String,
}

/// One ranked alternative.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alternative {
    pub strategy: String,
    pub score: f64,
}

/// Stage 6.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrategySelectionOutput {
    pub strategy: String,
    /// `None` for node-free strategies and on turn 1 (seed 000 Path 17).
    pub focus: Option<Focus>,
    pub selected_at: String,
    pub signals: Signals,
    pub node_signals: NodeSignals,
    pub strategy_alternatives: Vec<Alternative>,
    pub generates_closing_question: bool,
    pub focus_mode: String,
    /// Stage-1 entries (every strategy) then stage-2 entries (nodes for the winner).
    pub score_decomposition: Vec<ScoredCandidate>,
}

/// Stage 7.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContinuationOutput {
    pub should_continue: bool,
    /// Label of the node the next question targets, empty when none.
    pub focus_concept: String,
    /// Why the interview ends; empty while it continues.
    pub reason: String,
    pub turns_remaining: u32,
}

/// Stage 8.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionGenerationOutput {
    pub question: String,
    pub strategy: String,
    pub focus: Option<Focus>,
    /// Whether a fallback stood in for the model (seed 001): the strategy's template
    /// question replaced the model's replies, which failed the question check twice. `false`
    /// when the model's question was asked, and when there is no model (templates are then
    /// the design, not a fallback). A failed call still fails the stage.
    pub has_llm_fallback: bool,
    /// Where the question came from, in words: `model`, `model, second try`, or
    /// `template (…why…)`.
    #[serde(default)]
    pub question_source: String,
}

/// Stage 9.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseSavingOutput {
    pub turn_number: u32,
    pub system_utterance_id: String,
    pub system_utterance: String,
    pub question_text: String,
}

/// Stage 10.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoringPersistenceOutput {
    pub turn_number: u32,
    pub strategy: String,
    /// The graph's longest chain after this turn.
    pub depth_score: f64,
    /// `meta.conversation.saturation` of this turn.
    pub saturation_score: f64,
    /// Whether the methodology's signal detectors produced values this turn.
    pub has_methodology_signals: bool,
}
