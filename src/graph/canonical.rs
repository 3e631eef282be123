//! The canonical graph (seed 000 Path 10, seed 001 "Canonical Graph State"): slots proposed by
//! the LLM for a turn's new nodes, merged by embedding similarity, promoted by support, and
//! surface edges aggregated between slots.
//!
//! Pure: the LLM's proposals and all embeddings come in as values; the LLM call and the writes
//! belong to the pipeline.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::records::{CanonicalEdge, CanonicalSlot, KgEdge, KgNode, SlotMapping, SlotStatus};
use super::similarity::cosine;
use crate::config::Thresholds;
use crate::domain::CanonicalGraphState;

/// One slot the LLM proposes for a batch of nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlotProposal {
    pub slot_name: String,
    pub description: String,
    pub node_type: String,
    /// Labels of the batch's nodes that belong to the slot.
    pub surface_labels: Vec<String>,
}

/// The text embedded to compare a proposal or slot: its name (underscores as spaces) and
/// description.
pub fn slot_text(slot_name: &str, description: &str) -> String {
    let name = slot_name.replace('_', " ");
    if description.trim().is_empty() {
        name
    } else {
        format!("{name}: {}", description.trim())
    }
}

/// What slot discovery changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SlotUpdate {
    pub slots_created: Vec<CanonicalSlot>,
    pub slots_updated: Vec<CanonicalSlot>,
    pub mappings_created: Vec<SlotMapping>,
    /// Slot ids promoted to active this turn.
    pub promoted: Vec<String>,
    /// Proposals that named no node of their batch, or a type other than the batch's.
    pub ignored_proposals: Vec<String>,
}

/// Where new slots come from, and which nodes already belong to a slot.
pub struct SlotContext<'a> {
    pub session_id: &'a str,
    pub turn: u32,
    /// Surface node ids mapped in earlier turns; they are never remapped.
    pub mapped_nodes: &'a HashSet<String>,
    /// `canonical_similarity_threshold`: a proposal joins an existing slot of its type at this
    /// similarity; `canonical_min_support_nodes`: a candidate with this many members becomes
    /// active (seed 001: 0.60 and 2).
    pub thresholds: Thresholds,
}

/// One type's group: the node type, its new nodes, and the proposals with their embeddings
/// (`embeddings[i]` embeds [`slot_text`] of `proposals[i]`).
pub struct ProposalBatch<'a> {
    pub node_type: &'a str,
    pub nodes: &'a [&'a KgNode],
    pub proposals: &'a [SlotProposal],
    pub embeddings: &'a [Vec<f32>],
}

/// Integrates one batch's proposals into the slots. Nodes carry their own embeddings. A node
/// maps to at most one slot: the first proposal naming it wins.
pub fn integrate_proposals(
    existing: &[CanonicalSlot],
    batch: &ProposalBatch<'_>,
    ctx: &SlotContext<'_>,
    new_id: &mut dyn FnMut() -> String,
) -> SlotUpdate {
    let ProposalBatch {
        node_type: batch_type,
        nodes: batch,
        proposals,
        embeddings: proposal_embeddings,
    } = *batch;
    let mut slots: Vec<CanonicalSlot> = existing.to_vec();
    let existing_count = slots.len();
    let mut touched: HashSet<usize> = HashSet::new();
    let mut update = SlotUpdate::default();
    let mut taken: HashSet<String> = ctx.mapped_nodes.clone();
    for (p, embedding) in proposals.iter().zip(proposal_embeddings) {
        let members: Vec<&KgNode> = batch
            .iter()
            .filter(|n| {
                p.surface_labels
                    .iter()
                    .any(|l| l.trim().eq_ignore_ascii_case(n.label.trim()))
            })
            .filter(|n| !taken.contains(&n.id))
            .copied()
            .collect();
        if p.node_type != batch_type || members.is_empty() {
            update.ignored_proposals.push(p.slot_name.clone());
            continue;
        }
        let best = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.node_type == batch_type)
            .filter_map(|(i, s)| s.embedding.as_ref().map(|e| (i, cosine(embedding, e))))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .filter(|(_, sim)| *sim >= ctx.thresholds.canonical_similarity_threshold);
        let index = if let Some((i, _)) = best {
            i
        } else {
            slots.push(CanonicalSlot {
                id: new_id(),
                session_id: ctx.session_id.to_owned(),
                slot_name: p.slot_name.trim().to_owned(),
                description: p.description.trim().to_owned(),
                node_type: batch_type.to_owned(),
                status: SlotStatus::Candidate,
                support_count: 0,
                first_seen_turn: ctx.turn,
                promoted_turn: None,
                embedding: Some(embedding.clone()),
            });
            slots.len() - 1
        };
        touched.insert(index);
        let Some(slot) = slots.get_mut(index) else {
            continue;
        };
        for n in members {
            taken.insert(n.id.clone());
            let similarity = n
                .embedding
                .as_ref()
                .zip(slot.embedding.as_ref())
                .map_or(0.0, |(a, b)| f64::from(cosine(a, b)));
            update.mappings_created.push(SlotMapping {
                surface_node_id: n.id.clone(),
                canonical_slot_id: slot.id.clone(),
                similarity,
                assigned_turn: ctx.turn,
            });
            slot.support_count += 1;
        }
        if slot.status == SlotStatus::Candidate
            && slot.support_count >= ctx.thresholds.canonical_min_support_nodes
        {
            slot.status = SlotStatus::Active;
            slot.promoted_turn = Some(ctx.turn);
            update.promoted.push(slot.id.clone());
        }
    }
    for (i, slot) in slots.into_iter().enumerate() {
        if i >= existing_count {
            update.slots_created.push(slot);
        } else if touched.contains(&i) {
            update.slots_updated.push(slot);
        }
    }
    update
}

/// Aggregates surface edges between mapped nodes into canonical edges, keyed by
/// (source slot, target slot, type). Existing canonical edges keep their ids; edges whose two
/// ends map to the same slot are internal to the concept and not aggregated.
pub fn aggregate_edges(
    surface_edges: &[KgEdge],
    mappings: &[SlotMapping],
    existing: &[CanonicalEdge],
    session_id: &str,
    new_id: &mut dyn FnMut() -> String,
) -> Vec<CanonicalEdge> {
    let slot_of: HashMap<&str, &str> = mappings
        .iter()
        .map(|m| (m.surface_node_id.as_str(), m.canonical_slot_id.as_str()))
        .collect();
    let mut grouped: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
    for e in surface_edges {
        let (Some(s), Some(t)) = (
            slot_of.get(e.source_node_id.as_str()),
            slot_of.get(e.target_node_id.as_str()),
        ) else {
            continue;
        };
        if s == t {
            continue;
        }
        grouped
            .entry(((*s).to_owned(), (*t).to_owned(), e.edge_type.clone()))
            .or_default()
            .push(e.id.clone());
    }
    grouped
        .into_iter()
        .map(
            |((source_slot_id, target_slot_id, edge_type), surface_edge_ids)| {
                let id = existing
                    .iter()
                    .find(|c| {
                        c.source_slot_id == source_slot_id
                            && c.target_slot_id == target_slot_id
                            && c.edge_type == edge_type
                    })
                    .map_or_else(&mut *new_id, |c| c.id.clone());
                CanonicalEdge {
                    id,
                    session_id: session_id.to_owned(),
                    source_slot_id,
                    target_slot_id,
                    edge_type,
                    support_count: u32::try_from(surface_edge_ids.len()).unwrap_or(u32::MAX),
                    surface_edge_ids,
                }
            },
        )
        .collect()
}

/// Canonical graph aggregates over active slots only.
pub fn canonical_state(slots: &[CanonicalSlot], edges: &[CanonicalEdge]) -> CanonicalGraphState {
    let active: Vec<&CanonicalSlot> = slots
        .iter()
        .filter(|s| s.status == SlotStatus::Active)
        .collect();
    let active_ids: HashSet<&str> = active.iter().map(|s| s.id.as_str()).collect();
    let active_edges: Vec<&CanonicalEdge> = edges
        .iter()
        .filter(|e| {
            active_ids.contains(e.source_slot_id.as_str())
                && active_ids.contains(e.target_slot_id.as_str())
        })
        .collect();
    let connected: HashSet<&str> = active_edges
        .iter()
        .flat_map(|e| [e.source_slot_id.as_str(), e.target_slot_id.as_str()])
        .collect();
    let mut g: petgraph::graph::DiGraph<(), ()> = petgraph::graph::DiGraph::new();
    let index: HashMap<&str, petgraph::graph::NodeIndex> = active
        .iter()
        .map(|s| (s.id.as_str(), g.add_node(())))
        .collect();
    for e in &active_edges {
        if let (Some(&a), Some(&b)) = (
            index.get(e.source_slot_id.as_str()),
            index.get(e.target_slot_id.as_str()),
        ) {
            g.add_edge(a, b, ());
        }
    }
    let support: u32 = active.iter().map(|s| s.support_count).sum();
    CanonicalGraphState {
        concept_count: u32::try_from(active.len()).unwrap_or(u32::MAX),
        edge_count: u32::try_from(active_edges.len()).unwrap_or(u32::MAX),
        orphan_count: u32::try_from(
            active
                .iter()
                .filter(|s| !connected.contains(s.id.as_str()))
                .count(),
        )
        .unwrap_or(u32::MAX),
        max_depth: super::metrics::longest_path(&g),
        avg_support: if active.is_empty() {
            0.0
        } else {
            f64::from(support) / active.len() as f64
        },
    }
}

#[cfg(test)]
mod tests;
