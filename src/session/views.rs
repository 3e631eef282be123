//! What a view of a session needs beyond the pipeline's events: the history of an opened
//! session and a snapshot of its graph, node states, slots and focus trace. The driver builds
//! them on the session's thread (`session/snapshot.rs`), so a view never reads the store.

use serde::Serialize;

use crate::domain::{FocusEntry, LlmScores, Speaker};
use crate::graph::node_state::NodeState;
use crate::graph::records::SlotStatus;
use crate::pipeline::TurnResult;
use crate::store::UsageTotals;

/// A session's past as a view needs it when it opens: the transcript and the last completed
/// turn's result (rebuilt from its checkpoints).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionHistory {
    pub transcript: Vec<TranscriptLine>,
    /// Every completed turn's result, oldest first (a researcher's override applied): the
    /// last is the latest turn, the rest let a view step back through the session.
    pub turns: Vec<TurnResult>,
}

/// One utterance of the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TranscriptLine {
    pub turn: u32,
    pub speaker: Speaker,
    pub text: String,
}

/// The session beyond one turn's result: the whole surface graph with node states and
/// provenance, the canonical slots with their members, the focus trace, the latest rubric
/// rationales and the usage so far. Built off the view's thread, so a view never queries the
/// store itself.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionSnapshot {
    pub session_id: String,
    /// Completed turns.
    pub turn_count: u32,
    pub max_turns: u32,
    /// The termination reason once the interview is over.
    pub finished: Option<String>,
    /// One entry per completed turn, oldest first, overrides marked.
    pub focus_history: Vec<FocusEntry>,
    /// Surface nodes in creation order (superseded ones included and marked).
    pub nodes: Vec<NodeView>,
    pub edges: Vec<EdgeView>,
    /// Canonical slots in discovery order.
    pub slots: Vec<SlotView>,
    /// Rubric scores of the latest completed turn, rationales included.
    pub rubric_scores: LlmScores,
    /// New surface nodes per completed turn: entry `i` is turn `i + 1`.
    pub new_nodes_per_turn: Vec<u32>,
    pub usage: UsageTotals,
}

/// A surface node with its tracked state and where it was said.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeView {
    pub id: String,
    pub label: String,
    pub node_type: String,
    /// The node type's ontology level (0 when the methodology gives none).
    pub level: u32,
    /// Turn that created the node.
    pub turn: u32,
    pub stance: i8,
    pub confidence: f64,
    pub superseded: bool,
    /// The key its state and node signals are stored under (its slot id once mapped).
    pub tracking_key: String,
    pub slot_id: Option<String>,
    /// The respondent's words the concept was extracted from.
    pub source_quote: String,
    /// Every answer that mentioned the concept.
    pub mentions: Vec<TranscriptLine>,
    /// The tracker's state for [`Self::tracking_key`], when it has one.
    pub state: Option<NodeState>,
}

/// A surface edge between two nodes of [`SessionSnapshot::nodes`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EdgeView {
    pub source: String,
    pub target: String,
    pub edge_type: String,
    pub turn: u32,
}

/// A canonical slot with its members.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlotView {
    pub id: String,
    pub name: String,
    pub node_type: String,
    pub status: SlotStatus,
    pub support_count: u32,
    pub first_seen_turn: u32,
    pub promoted_turn: Option<u32>,
    /// Surface node ids mapped to the slot.
    pub members: Vec<String>,
}
