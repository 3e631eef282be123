//! Applying one turn's extraction to the surface graph: three-step deduplication (seed 000
//! Path 12), cross-turn edge resolution (Path 13), ontology checks, and `revises` supersession.
//!
//! Pure: embeddings arrive precomputed (one batch per turn, by the caller), ids and timestamps
//! come from the caller, and the result lists what to write rather than writing it.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::node_state::GraphChangeSummary;
use super::records::{KgEdge, KgNode};
use super::similarity::cosine;
use crate::config::Methodology;

/// One concept as the extraction contract returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedConcept {
    pub label: String,
    pub node_type: String,
    pub confidence: f64,
    /// −1, 0 or +1.
    pub stance: i8,
    pub source_quote: String,
}

/// One relationship as the extraction contract returns it; endpoints are labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedRelationship {
    pub source: String,
    pub target: String,
    pub edge_type: String,
    pub confidence: f64,
}

/// Where this turn's writes come from.
#[derive(Debug, Clone)]
pub struct TurnOrigin<'a> {
    pub session_id: &'a str,
    pub turn: u32,
    pub utterance_id: &'a str,
    pub recorded_at: &'a str,
}

/// How each extracted concept was resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resolution {
    /// Same label (case-insensitive, trimmed) and node type as an existing node: seed 000
    /// Path 12 merges only nodes of the same type, so "price" as an attribute and "price" as a
    /// pain point stay two nodes.
    Exact { node_id: String },
    /// Same node type and cosine ≥ threshold.
    Semantic { node_id: String, similarity: f32 },
    /// A new node.
    New { node_id: String },
}

impl Resolution {
    pub fn node_id(&self) -> &str {
        match self {
            Self::Exact { node_id } | Self::Semantic { node_id, .. } | Self::New { node_id } => {
                node_id
            }
        }
    }
}

/// A relationship that was not written, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RejectedEdge {
    pub source: String,
    pub target: String,
    pub edge_type: String,
    pub reason: String,
}

/// Everything a turn changes in the surface graph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SurfaceUpdate {
    /// One entry per extracted concept, in extraction order.
    pub resolutions: Vec<Resolution>,
    pub new_nodes: Vec<KgNode>,
    /// Existing nodes changed by a merge (provenance appended) or a supersession.
    pub updated_nodes: Vec<KgNode>,
    pub new_edges: Vec<KgEdge>,
    /// Existing edges that gained provenance because the turn restated them.
    pub updated_edges: Vec<KgEdge>,
    pub rejected_edges: Vec<RejectedEdge>,
    pub changes: GraphChangeSummary,
}

/// The form labels are compared in for the exact-match step (trimmed, lower-case).
pub fn norm(label: &str) -> String {
    label.trim().to_lowercase()
}

/// One turn's extraction with the embeddings of its concept labels.
#[derive(Debug, Clone, Copy)]
pub struct TurnExtraction<'a> {
    pub concepts: &'a [ExtractedConcept],
    /// `embeddings[i]` embeds `concepts[i].label`; `None` disables the semantic step for it.
    pub embeddings: &'a [Option<Vec<f32>>],
    pub relationships: &'a [ExtractedRelationship],
}

/// Applies a turn's concepts and relationships to the session graph. `new_id` mints ids for
/// new nodes and edges.
pub fn apply_extraction(
    existing_nodes: &[KgNode],
    existing_edges: &[KgEdge],
    methodology: &Methodology,
    extraction: TurnExtraction<'_>,
    origin: &TurnOrigin<'_>,
    new_id: &mut dyn FnMut() -> String,
) -> SurfaceUpdate {
    let TurnExtraction {
        concepts,
        embeddings,
        relationships,
    } = extraction;
    let mut work = Working::new(
        existing_nodes,
        existing_edges,
        methodology.thresholds.surface_similarity_threshold,
    );
    let mut update = SurfaceUpdate::default();
    for (i, concept) in concepts.iter().enumerate() {
        let embedding = embeddings.get(i).cloned().flatten();
        let resolution = work.resolve_concept(concept, embedding, origin, new_id);
        update.resolutions.push(resolution);
    }
    // Labels as extracted also resolve to the nodes they merged into; one label may name
    // nodes of several types, in extraction order.
    let mut aliases: HashMap<String, Vec<String>> = HashMap::new();
    for (c, r) in concepts.iter().zip(&update.resolutions) {
        let ids = aliases.entry(norm(&c.label)).or_default();
        if !ids.iter().any(|id| id == r.node_id()) {
            ids.push(r.node_id().to_owned());
        }
    }
    for rel in relationships {
        if let Err(reason) = work.add_edge(rel, &aliases, methodology, origin, new_id) {
            update.rejected_edges.push(RejectedEdge {
                source: rel.source.clone(),
                target: rel.target.clone(),
                edge_type: rel.edge_type.clone(),
                reason,
            });
        }
    }
    work.finish(update)
}

/// Records as a turn sees them: the session's existing ones borrowed, the ones the turn
/// changes cloned on first write, and the new ones appended. Indices run over existing records
/// first, then new ones, so creation order is index order.
struct Layer<'a, T: Clone> {
    base: &'a [T],
    changed: BTreeMap<usize, T>,
    added: Vec<T>,
}

impl<'a, T: Clone> Layer<'a, T> {
    fn new(base: &'a [T]) -> Self {
        Self {
            base,
            changed: BTreeMap::new(),
            added: Vec::new(),
        }
    }

    fn get(&self, i: usize) -> Option<&T> {
        match i.checked_sub(self.base.len()) {
            None => self.changed.get(&i).or_else(|| self.base.get(i)),
            Some(k) => self.added.get(k),
        }
    }

    /// Mutable access; an existing record is cloned into `changed` the first time.
    fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        match i.checked_sub(self.base.len()) {
            None => {
                let base = self.base;
                let original = base.get(i)?;
                Some(self.changed.entry(i).or_insert_with(|| original.clone()))
            }
            Some(k) => self.added.get_mut(k),
        }
    }

    fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        (0..self.base.len() + self.added.len()).filter_map(|i| self.get(i).map(|t| (i, t)))
    }

    fn push(&mut self, item: T) {
        self.added.push(item);
    }

    /// `(changed existing records in creation order, new records)`.
    fn into_parts(self) -> (Vec<T>, Vec<T>) {
        (self.changed.into_values().collect(), self.added)
    }
}

/// The graph as it evolves during one turn.
struct Working<'a> {
    nodes: Layer<'a, KgNode>,
    edges: Layer<'a, KgEdge>,
    /// Cosine similarity at which a new concept merges into a same-type node.
    threshold: f32,
}

impl<'a> Working<'a> {
    fn new(nodes: &'a [KgNode], edges: &'a [KgEdge], threshold: f32) -> Self {
        Self {
            nodes: Layer::new(nodes),
            edges: Layer::new(edges),
            threshold,
        }
    }

    fn live(&self) -> impl Iterator<Item = (usize, &KgNode)> {
        self.nodes.iter().filter(|(_, n)| n.superseded_by.is_none())
    }

    fn resolve_concept(
        &mut self,
        c: &ExtractedConcept,
        embedding: Option<Vec<f32>>,
        origin: &TurnOrigin<'_>,
        new_id: &mut dyn FnMut() -> String,
    ) -> Resolution {
        let key = norm(&c.label);
        let exact = self
            .live()
            .find(|(_, n)| norm(&n.label) == key && n.node_type == c.node_type)
            .map(|(i, _)| i);
        if let Some(i) = exact {
            self.merge_into(i, c, origin);
            return Resolution::Exact {
                node_id: self.id_at(i),
            };
        }
        if let Some(e) = &embedding {
            let best = self
                .live()
                .filter(|(_, n)| n.node_type == c.node_type)
                .filter_map(|(i, n)| n.embedding.as_ref().map(|ne| (i, cosine(e, ne))))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((i, similarity)) = best.filter(|(_, s)| *s >= self.threshold) {
                self.merge_into(i, c, origin);
                return Resolution::Semantic {
                    node_id: self.id_at(i),
                    similarity,
                };
            }
        }
        let node = KgNode {
            id: new_id(),
            session_id: origin.session_id.to_owned(),
            label: c.label.trim().to_owned(),
            node_type: c.node_type.clone(),
            confidence: c.confidence.clamp(0.0, 1.0),
            properties: serde_json::json!({}),
            stance: c.stance.clamp(-1, 1),
            source_utterance_ids: vec![origin.utterance_id.to_owned()],
            source_quote: c.source_quote.clone(),
            superseded_by: None,
            embedding,
            recorded_at: origin.recorded_at.to_owned(),
            turn: origin.turn,
        };
        let node_id = node.id.clone();
        self.nodes.push(node);
        Resolution::New { node_id }
    }

    fn id_at(&self, i: usize) -> String {
        self.nodes.get(i).map(|n| n.id.clone()).unwrap_or_default()
    }

    /// Adds provenance to a node. The node keeps its first label and quote, the respondent's
    /// original words; other phrasings are kept as `aliases`.
    fn merge_into(&mut self, i: usize, c: &ExtractedConcept, origin: &TurnOrigin<'_>) {
        let Some(node) = self.nodes.get_mut(i) else {
            return;
        };
        if !node
            .source_utterance_ids
            .iter()
            .any(|u| u == origin.utterance_id)
        {
            node.source_utterance_ids
                .push(origin.utterance_id.to_owned());
        }
        let label = c.label.trim();
        if norm(label) != norm(&node.label)
            && let Some(props) = node.properties.as_object_mut()
        {
            let aliases = props
                .entry("aliases")
                .or_insert_with(|| serde_json::json!([]));
            if let Some(list) = aliases.as_array_mut()
                && !list.iter().any(|a| a.as_str() == Some(label))
            {
                list.push(serde_json::Value::String(label.to_owned()));
            }
        }
    }

    /// The nodes a relationship's endpoint label may name, best first: the nodes this turn's
    /// concepts of that label resolved to, then the session's other live nodes of that label
    /// (cross-turn resolution; a label may name nodes of several types).
    fn candidates(&self, label: &str, aliases: &HashMap<String, Vec<String>>) -> Vec<usize> {
        let key = norm(label);
        let mut found: Vec<usize> = aliases
            .get(&key)
            .into_iter()
            .flatten()
            .filter_map(|id| self.nodes.iter().find(|(_, n)| &n.id == id).map(|(i, _)| i))
            .collect();
        for (i, n) in self.live() {
            if norm(&n.label) == key && !found.contains(&i) {
                found.push(i);
            }
        }
        found
    }

    /// The endpoints of `rel`: the first candidate pair the ontology permits, else the best
    /// pair (which the caller then rejects with its reason).
    fn endpoints(
        &self,
        rel: &ExtractedRelationship,
        aliases: &HashMap<String, Vec<String>>,
        methodology: &Methodology,
    ) -> Result<(usize, usize), String> {
        let sources = self.candidates(&rel.source, aliases);
        let targets = self.candidates(&rel.target, aliases);
        let (Some(&s0), Some(&t0)) = (sources.first(), targets.first()) else {
            return Err(if sources.is_empty() {
                format!("source '{}' matches no concept of this session", rel.source)
            } else {
                format!("target '{}' matches no concept of this session", rel.target)
            });
        };
        let permitted = |s: usize, t: usize| match (self.nodes.get(s), self.nodes.get(t)) {
            (Some(a), Some(b)) => {
                s != t && methodology.permits(&rel.edge_type, &a.node_type, &b.node_type)
            }
            _ => false,
        };
        Ok(sources
            .iter()
            .flat_map(|&s| targets.iter().map(move |&t| (s, t)))
            .find(|&(s, t)| permitted(s, t))
            .unwrap_or((s0, t0)))
    }

    fn add_edge(
        &mut self,
        rel: &ExtractedRelationship,
        aliases: &HashMap<String, Vec<String>>,
        methodology: &Methodology,
        origin: &TurnOrigin<'_>,
        new_id: &mut dyn FnMut() -> String,
    ) -> Result<(), String> {
        let m = methodology;
        let (si, ti) = self.endpoints(rel, aliases, m)?;
        let (Some(source), Some(target)) = (self.nodes.get(si), self.nodes.get(ti)) else {
            return Err("endpoint vanished".to_owned());
        };
        if source.id == target.id {
            return Err(format!("'{}' cannot relate to itself", rel.source));
        }
        if !m.ontology.edges.iter().any(|e| e.name == rel.edge_type) {
            return Err(format!(
                "edge type '{}' is not in the {} ontology",
                rel.edge_type, m.method.name
            ));
        }
        if !m.permits(&rel.edge_type, &source.node_type, &target.node_type) {
            return Err(format!(
                "'{}' is not permitted from {} to {}",
                rel.edge_type, source.node_type, target.node_type
            ));
        }
        let (source_id, target_id) = (source.id.clone(), target.id.clone());
        let duplicate = self.edges.iter().find(|(_, e)| {
            e.source_node_id == source_id
                && e.target_node_id == target_id
                && e.edge_type == rel.edge_type
        });
        if let Some((i, e)) = duplicate {
            let restated_elsewhere = !e
                .source_utterance_ids
                .iter()
                .any(|u| u == origin.utterance_id);
            if restated_elsewhere && let Some(e) = self.edges.get_mut(i) {
                e.source_utterance_ids.push(origin.utterance_id.to_owned());
            }
            return Ok(());
        }
        if rel.edge_type == "revises" {
            self.supersede(si, ti);
        }
        self.edges.push(KgEdge {
            id: new_id(),
            session_id: origin.session_id.to_owned(),
            source_node_id: source_id,
            target_node_id: target_id,
            edge_type: rel.edge_type.clone(),
            confidence: rel.confidence.clamp(0.0, 1.0),
            properties: serde_json::json!({}),
            source_utterance_ids: vec![origin.utterance_id.to_owned()],
            recorded_at: origin.recorded_at.to_owned(),
            turn: origin.turn,
        });
        Ok(())
    }

    /// `revises` marks the older of its two endpoints as superseded by the newer one.
    fn supersede(&mut self, a: usize, b: usize) {
        let (older, newer) = if a < b { (a, b) } else { (b, a) };
        let newer_id = self.id_at(newer);
        if let Some(node) = self.nodes.get_mut(older) {
            node.superseded_by = Some(newer_id);
        }
    }

    fn finish(self, mut update: SurfaceUpdate) -> SurfaceUpdate {
        let (updated_nodes, new_nodes) = self.nodes.into_parts();
        let (updated_edges, new_edges) = self.edges.into_parts();
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        update.changes = GraphChangeSummary {
            nodes_added: count(new_nodes.len()),
            edges_added: count(new_edges.len()),
            nodes_modified: count(updated_nodes.len()),
        };
        update.new_nodes = new_nodes;
        update.updated_nodes = updated_nodes;
        update.new_edges = new_edges;
        update.updated_edges = updated_edges;
        update
    }
}

#[cfg(test)]
mod tests;
