//! The graph the three graph formats draw: nodes and edges with typed attributes, built once
//! from the surface graph or the canonical graph.
//!
//! Surface nodes carry their type, level and provenance (creation turn, source utterances,
//! the quote, the slot they map to, what superseded them); canonical slots carry theirs (the
//! surface nodes mapped to them, support, first and promotion turns). Superseded nodes and
//! `revises` edges are kept and marked, so the export shows the whole history.

use std::collections::HashMap;

use super::data::SessionData;

/// The type of an attribute, as `GraphML` declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    String,
    Int,
    Double,
    Boolean,
}

impl Kind {
    pub(crate) fn graphml(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Int => "int",
            Self::Double => "double",
            Self::Boolean => "boolean",
        }
    }
}

/// One attribute value; `None` attributes are left out of the output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Attr {
    Str(String),
    Int(i64),
    Double(f64),
    Bool(bool),
    None,
}

impl Attr {
    /// The value as text (floats in their shortest exact form), `None` when absent.
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Self::Str(s) => Some(s.clone()),
            Self::Int(i) => Some(i.to_string()),
            Self::Double(d) => Some(super::float(*d)),
            Self::Bool(b) => Some(b.to_string()),
            Self::None => None,
        }
    }
}

/// An element of the graph with attribute values in the order of the view's keys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Element {
    pub id: String,
    pub label: String,
    /// The node type (nodes) or edge type (edges).
    pub kind: String,
    pub attrs: Vec<Attr>,
    /// For edges: `(source id, target id)`.
    pub ends: Option<(String, String)>,
    /// A superseded node (drawn dashed).
    pub faded: bool,
}

/// A graph ready to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct View {
    /// `surface` or `canonical`.
    pub name: &'static str,
    /// What the graph is of, for titles: `oat_milk (means_end_chain), session …`.
    pub title: String,
    pub node_keys: &'static [(&'static str, Kind)],
    pub edge_keys: &'static [(&'static str, Kind)],
    pub nodes: Vec<Element>,
    pub edges: Vec<Element>,
}

/// Attribute keys of surface nodes.
const SURFACE_NODE_KEYS: &[(&str, Kind)] = &[
    ("label", Kind::String),
    ("node_type", Kind::String),
    ("level", Kind::Int),
    ("confidence", Kind::Double),
    ("stance", Kind::Int),
    ("turn", Kind::Int),
    ("source_utterance_ids", Kind::String),
    ("source_quote", Kind::String),
    ("canonical_slot_id", Kind::String),
    ("superseded_by", Kind::String),
    ("superseded", Kind::Boolean),
];

/// Attribute keys of surface edges.
const SURFACE_EDGE_KEYS: &[(&str, Kind)] = &[
    ("edge_type", Kind::String),
    ("confidence", Kind::Double),
    ("turn", Kind::Int),
    ("source_utterance_ids", Kind::String),
];

/// Attribute keys of canonical slots.
const CANONICAL_NODE_KEYS: &[(&str, Kind)] = &[
    ("label", Kind::String),
    ("node_type", Kind::String),
    ("level", Kind::Int),
    ("description", Kind::String),
    ("status", Kind::String),
    ("support_count", Kind::Int),
    ("first_seen_turn", Kind::Int),
    ("promoted_turn", Kind::Int),
    ("surface_node_ids", Kind::String),
];

/// Attribute keys of canonical edges.
const CANONICAL_EDGE_KEYS: &[(&str, Kind)] = &[
    ("edge_type", Kind::String),
    ("support_count", Kind::Int),
    ("surface_edge_ids", Kind::String),
];

fn title(data: &SessionData, what: &str) -> String {
    let s = &data.session;
    format!(
        "{what} graph of session {} ({}, {})",
        s.id, s.concept, s.methodology
    )
}

fn level(data: &SessionData, node_type: &str) -> Attr {
    data.level(node_type)
        .map_or(Attr::None, |l| Attr::Int(i64::from(l)))
}

/// Provenance lists are space-separated ids (ids never contain spaces).
fn ids(list: &[String]) -> Attr {
    Attr::Str(list.join(" "))
}

/// The surface graph: every node and edge in creation order.
pub(crate) fn surface(data: &SessionData) -> View {
    let slot_of: HashMap<&str, &str> = data
        .mappings
        .iter()
        .map(|m| (m.surface_node_id.as_str(), m.canonical_slot_id.as_str()))
        .collect();
    let nodes = data
        .nodes
        .iter()
        .map(|n| Element {
            id: n.id.clone(),
            label: n.label.clone(),
            kind: n.node_type.clone(),
            attrs: vec![
                Attr::Str(n.label.clone()),
                Attr::Str(n.node_type.clone()),
                level(data, &n.node_type),
                Attr::Double(n.confidence),
                Attr::Int(i64::from(n.stance)),
                Attr::Int(i64::from(n.turn)),
                ids(&n.source_utterance_ids),
                Attr::Str(n.source_quote.clone()),
                slot_of
                    .get(n.id.as_str())
                    .map_or(Attr::None, |s| Attr::Str((*s).to_owned())),
                n.superseded_by.clone().map_or(Attr::None, Attr::Str),
                Attr::Bool(n.superseded_by.is_some()),
            ],
            ends: None,
            faded: n.superseded_by.is_some(),
        })
        .collect();
    let edges = data
        .edges
        .iter()
        .map(|e| Element {
            id: e.id.clone(),
            label: e.edge_type.clone(),
            kind: e.edge_type.clone(),
            attrs: vec![
                Attr::Str(e.edge_type.clone()),
                Attr::Double(e.confidence),
                Attr::Int(i64::from(e.turn)),
                ids(&e.source_utterance_ids),
            ],
            ends: Some((e.source_node_id.clone(), e.target_node_id.clone())),
            faded: false,
        })
        .collect();
    View {
        name: "surface",
        title: title(data, "Surface"),
        node_keys: SURFACE_NODE_KEYS,
        edge_keys: SURFACE_EDGE_KEYS,
        nodes,
        edges,
    }
}

/// The canonical graph: every slot (candidates included, with their status) and edge.
pub(crate) fn canonical(data: &SessionData) -> View {
    let mut members: HashMap<&str, Vec<String>> = HashMap::new();
    for m in &data.mappings {
        members
            .entry(m.canonical_slot_id.as_str())
            .or_default()
            .push(m.surface_node_id.clone());
    }
    let nodes = data
        .slots
        .iter()
        .map(|s| Element {
            id: s.id.clone(),
            label: s.slot_name.clone(),
            kind: s.node_type.clone(),
            attrs: vec![
                Attr::Str(s.slot_name.clone()),
                Attr::Str(s.node_type.clone()),
                level(data, &s.node_type),
                Attr::Str(s.description.clone()),
                Attr::Str(s.status.as_str().to_owned()),
                Attr::Int(i64::from(s.support_count)),
                Attr::Int(i64::from(s.first_seen_turn)),
                s.promoted_turn
                    .map_or(Attr::None, |t| Attr::Int(i64::from(t))),
                ids(members.get(s.id.as_str()).map_or(&[][..], Vec::as_slice)),
            ],
            ends: None,
            faded: false,
        })
        .collect();
    let edges = data
        .canonical_edges
        .iter()
        .map(|e| Element {
            id: e.id.clone(),
            label: e.edge_type.clone(),
            kind: e.edge_type.clone(),
            attrs: vec![
                Attr::Str(e.edge_type.clone()),
                Attr::Int(i64::from(e.support_count)),
                ids(&e.surface_edge_ids),
            ],
            ends: Some((e.source_slot_id.clone(), e.target_slot_id.clone())),
            faded: false,
        })
        .collect();
    View {
        name: "canonical",
        title: title(data, "Canonical"),
        node_keys: CANONICAL_NODE_KEYS,
        edge_keys: CANONICAL_EDGE_KEYS,
        nodes,
        edges,
    }
}
