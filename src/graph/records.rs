//! The records of the dual graph: surface nodes and edges as extracted from answers, and the
//! canonical slots that abstract paraphrases (seed 001 "Dual-Graph Architecture").
//!
//! Timestamps are RFC 3339 strings supplied by the caller; nothing here reads a clock.

use serde::{Deserialize, Serialize};

/// A surface concept, as the respondent put it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgNode {
    /// A name-based `UUIDv5` from the session, the turn and a counter (`pipeline::ids`), so a
    /// stage run again after a crash mints the same ids. The seeds say `UUIDv4`; see the
    /// README's design notes.
    pub id: String,
    pub session_id: String,
    /// The concept in the respondent's own words.
    pub label: String,
    /// An ontology node type of the methodology.
    pub node_type: String,
    /// Extraction confidence in [0, 1].
    pub confidence: f64,
    /// Free-form metadata (a JSON object).
    pub properties: serde_json::Value,
    /// −1 negative, 0 neutral, +1 positive.
    pub stance: i8,
    /// Every utterance that mentioned this concept (provenance; merges append).
    pub source_utterance_ids: Vec<String>,
    /// The respondent's words the concept was extracted from.
    pub source_quote: String,
    /// Set when a `revises` edge replaced this node with a newer one.
    pub superseded_by: Option<String>,
    /// `MiniLM` embedding of the label (384 floats), when computed.
    pub embedding: Option<Vec<f32>>,
    pub recorded_at: String,
    /// Turn that created the node.
    pub turn: u32,
}

#[cfg(test)]
impl KgNode {
    /// A node of session `s` from turn 1 with empty provenance, for unit tests to adjust.
    pub(crate) fn fixture(id: &str, label: &str, node_type: &str) -> Self {
        Self {
            id: id.into(),
            session_id: "s".into(),
            label: label.into(),
            node_type: node_type.into(),
            confidence: 1.0,
            properties: serde_json::json!({}),
            stance: 0,
            source_utterance_ids: Vec::new(),
            source_quote: String::new(),
            superseded_by: None,
            embedding: None,
            recorded_at: String::new(),
            turn: 1,
        }
    }
}

/// A relationship between two surface nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgEdge {
    pub id: String,
    pub session_id: String,
    pub source_node_id: String,
    pub target_node_id: String,
    pub edge_type: String,
    pub confidence: f64,
    pub properties: serde_json::Value,
    pub source_utterance_ids: Vec<String>,
    pub recorded_at: String,
    pub turn: u32,
}

/// Lifecycle of a canonical slot: candidates become active at enough support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SlotStatus {
    Candidate,
    Active,
}

impl SlotStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Candidate => "candidate",
            Self::Active => "active",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "candidate" => Some(Self::Candidate),
            "active" => Some(Self::Active),
            _ => None,
        }
    }
}

/// A stable latent concept abstracted from paraphrased surface nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CanonicalSlot {
    pub id: String,
    pub session_id: String,
    /// LLM-proposed canonical name, e.g. `energy_stability`.
    pub slot_name: String,
    pub description: String,
    /// Same node type as its members (the methodology hierarchy is preserved).
    pub node_type: String,
    pub status: SlotStatus,
    /// Surface nodes mapped to the slot.
    pub support_count: u32,
    pub first_seen_turn: u32,
    pub promoted_turn: Option<u32>,
    pub embedding: Option<Vec<f32>>,
}

/// A surface node's assignment to a slot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlotMapping {
    pub surface_node_id: String,
    pub canonical_slot_id: String,
    /// Cosine similarity between the node and the slot at assignment.
    pub similarity: f64,
    pub assigned_turn: u32,
}

/// Surface edges aggregated between slots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CanonicalEdge {
    pub id: String,
    pub session_id: String,
    pub source_slot_id: String,
    pub target_slot_id: String,
    pub edge_type: String,
    pub support_count: u32,
    pub surface_edge_ids: Vec<String>,
}
