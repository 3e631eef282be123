//! Slot discovery (stage 4.5) without a model: canonical slots from embedding clusters of one
//! batch of same-type nodes.
//!
//! A node whose embedding is within [`CANONICAL_SIMILARITY_THRESHOLD`] of an existing slot of
//! its type proposes that slot again (same name and description, so the canonical merge finds
//! it). The other nodes are clustered greedily in batch order: each joins the cluster whose
//! centre is nearest if that is within the threshold, else starts its own; a cluster's centre
//! is the normalised mean of its members. Each cluster becomes one [`SlotProposal`] named
//! after the member label closest to the centre (`snake_case`), described by its members.
//! Promotion, mapping and canonical edges are left to `graph::canonical`, as for LLM
//! proposals. Nodes without an embedding each get a slot of their own.

use crate::graph::canonical::SlotProposal;
use crate::graph::records::{CanonicalSlot, KgNode};
use crate::graph::similarity::cosine;

/// Member labels quoted in a slot's description; the rest are counted.
const DESCRIBED_MEMBERS: usize = 3;
/// Longest slot name in characters; labels are short, this only bounds a pasted sentence.
const MAX_SLOT_NAME_CHARS: usize = 48;

/// Stage 4.5 offline: slot proposals for one batch of same-type nodes (the same
/// [`SlotProposal`] values the LLM path parses), from embedding clusters at `threshold` (the
/// methodology's `canonical_similarity_threshold`, 0.60 by default). A node near an existing slot of `node_type` proposes
/// that slot's name; the rest are named after the member label closest to their cluster's
/// centre.
pub fn propose_slots_offline(
    node_type: &str,
    nodes: &[&KgNode],
    existing: &[CanonicalSlot],
    threshold: f32,
) -> Vec<SlotProposal> {
    let same_type: Vec<&CanonicalSlot> = existing
        .iter()
        .filter(|s| s.node_type == node_type && s.embedding.is_some())
        .collect();
    let mut reused: Vec<(&CanonicalSlot, Vec<String>)> = Vec::new();
    let mut clusters: Vec<Cluster<'_>> = Vec::new();
    for node in nodes.iter().filter(|n| n.node_type == node_type) {
        let Some(embedding) = node.embedding.as_deref() else {
            clusters.push(Cluster::alone(node));
            continue;
        };
        if let Some(slot) = nearest_slot(&same_type, embedding, threshold) {
            match reused.iter_mut().find(|(s, _)| s.id == slot.id) {
                Some((_, labels)) => labels.push(node.label.clone()),
                None => reused.push((slot, vec![node.label.clone()])),
            }
            continue;
        }
        let best = clusters
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.centre.as_deref().map(|v| (i, cosine(v, embedding))))
            .filter(|(_, sim)| *sim >= threshold)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match best.and_then(|(i, _)| clusters.get_mut(i)) {
            Some(cluster) => cluster.add(node, embedding),
            None => clusters.push(Cluster::start(node, embedding)),
        }
    }
    let mut proposals: Vec<SlotProposal> = reused
        .into_iter()
        .map(|(slot, labels)| SlotProposal {
            slot_name: slot.slot_name.clone(),
            description: slot.description.clone(),
            node_type: node_type.to_owned(),
            surface_labels: labels,
        })
        .collect();
    proposals.extend(clusters.iter().map(|c| c.proposal(node_type)));
    proposals
}

/// The existing slot nearest `embedding`, if within the threshold.
fn nearest_slot<'s>(
    slots: &[&'s CanonicalSlot],
    embedding: &[f32],
    threshold: f32,
) -> Option<&'s CanonicalSlot> {
    slots
        .iter()
        .filter_map(|s| s.embedding.as_deref().map(|v| (*s, cosine(v, embedding))))
        .filter(|(_, sim)| *sim >= threshold)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(s, _)| s)
}

/// Nodes grouped so far, with the running sum of their embeddings.
struct Cluster<'n> {
    members: Vec<&'n KgNode>,
    sum: Vec<f32>,
    /// Normalised mean of the members' embeddings; `None` for a node without one.
    centre: Option<Vec<f32>>,
}

impl<'n> Cluster<'n> {
    fn alone(node: &'n KgNode) -> Self {
        Self {
            members: vec![node],
            sum: Vec::new(),
            centre: None,
        }
    }

    fn start(node: &'n KgNode, embedding: &[f32]) -> Self {
        let mut cluster = Self {
            members: Vec::new(),
            sum: vec![0.0; embedding.len()],
            centre: None,
        };
        cluster.add(node, embedding);
        cluster
    }

    fn add(&mut self, node: &'n KgNode, embedding: &[f32]) {
        self.members.push(node);
        for (s, x) in self.sum.iter_mut().zip(embedding) {
            *s += x;
        }
        let norm = self.sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        self.centre = (norm > 0.0).then(|| self.sum.iter().map(|x| x / norm).collect());
    }

    /// The member whose embedding is closest to the centre (the first one when none has one).
    fn representative(&self) -> Option<&'n KgNode> {
        let Some(centre) = &self.centre else {
            return self.members.first().copied();
        };
        self.members
            .iter()
            .map(|n| {
                let sim = n.embedding.as_deref().map_or(-1.0, |v| cosine(v, centre));
                (*n, sim)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(n, _)| n)
    }

    fn proposal(&self, node_type: &str) -> SlotProposal {
        let label = self.representative().map_or("", |n| n.label.as_str());
        let labels: Vec<String> = self.members.iter().map(|n| n.label.clone()).collect();
        SlotProposal {
            slot_name: snake_case(label),
            description: describe(node_type, &labels),
            node_type: node_type.to_owned(),
            surface_labels: labels,
        }
    }
}

/// `label` in `snake_case`: lowercase letters and digits, every other run of characters one
/// underscore, bounded by [`MAX_SLOT_NAME_CHARS`]; `concept` when nothing is left.
pub(super) fn snake_case(label: &str) -> String {
    let mut name = String::new();
    for c in label.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('_') {
            name.push('_');
        }
    }
    let mut name: String = name.trim_end_matches('_').to_owned();
    if name.chars().count() > MAX_SLOT_NAME_CHARS {
        let cut: String = name.chars().take(MAX_SLOT_NAME_CHARS).collect();
        cut.trim_end_matches('_').clone_into(&mut name);
    }
    if name.is_empty() {
        "concept".to_owned()
    } else {
        name
    }
}

/// A one-sentence description: the type in words and the first members' labels.
fn describe(node_type: &str, labels: &[String]) -> String {
    let kind = node_type.replace('_', " ");
    let shown: Vec<String> = labels
        .iter()
        .take(DESCRIBED_MEMBERS)
        .map(|l| format!("\"{}\"", l.trim()))
        .collect();
    let more = labels.len().saturating_sub(DESCRIBED_MEMBERS);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "The {kind} the respondent expressed as {}{tail}.",
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::records::SlotStatus;

    fn node(id: &str, label: &str, embedding: Option<Vec<f32>>) -> KgNode {
        let mut n = KgNode::fixture(id, label, "attribute");
        n.embedding = embedding;
        n
    }

    fn slot(name: &str, embedding: Vec<f32>) -> CanonicalSlot {
        CanonicalSlot {
            id: format!("slot-{name}"),
            session_id: "s".into(),
            slot_name: name.into(),
            description: format!("{name} things"),
            node_type: "attribute".into(),
            status: SlotStatus::Candidate,
            support_count: 1,
            first_seen_turn: 1,
            promoted_turn: None,
            embedding: Some(embedding),
        }
    }

    #[test]
    fn clusters_paraphrases_and_names_them_after_the_central_label() {
        let a = node("a", "Creamy texture", Some(vec![1.0, 0.0, 0.0]));
        let b = node("b", "smooth mouthfeel", Some(vec![0.9, 0.3, 0.0]));
        let c = node("c", "rich & creamy!", Some(vec![0.95, 0.1, 0.0]));
        let d = node("d", "price per carton", Some(vec![0.0, 0.0, 1.0]));
        let proposals = propose_slots_offline("attribute", &[&a, &b, &c, &d], &[], 0.60);
        assert_eq!(proposals.len(), 2);
        let first = &proposals[0];
        assert_eq!(
            first.surface_labels,
            ["Creamy texture", "smooth mouthfeel", "rich & creamy!"]
        );
        assert_eq!(first.slot_name, "rich_creamy", "closest to the centre");
        assert_eq!(first.node_type, "attribute");
        assert!(first.description.contains("\"Creamy texture\""));
        assert_eq!(proposals[1].slot_name, "price_per_carton");
        assert_eq!(proposals[1].surface_labels, ["price per carton"]);
    }

    #[test]
    fn a_node_near_an_existing_slot_proposes_that_slot() {
        let existing = [slot("creaminess", vec![1.0, 0.1, 0.0])];
        let a = node("a", "creamy", Some(vec![1.0, 0.0, 0.0]));
        let b = node("b", "so creamy", Some(vec![0.98, 0.05, 0.0]));
        let c = node("c", "cheap", Some(vec![0.0, 1.0, 1.0]));
        let proposals = propose_slots_offline("attribute", &[&a, &b, &c], &existing, 0.60);
        assert_eq!(proposals[0].slot_name, "creaminess");
        assert_eq!(proposals[0].description, "creaminess things");
        assert_eq!(proposals[0].surface_labels, ["creamy", "so creamy"]);
        assert_eq!(proposals[1].slot_name, "cheap");
    }

    #[test]
    fn slots_of_other_types_and_nodes_without_embeddings() {
        let mut other = slot("creaminess", vec![1.0, 0.0]);
        other.node_type = "terminal_value".into();
        let a = node("a", "creamy", Some(vec![1.0, 0.0]));
        let b = node("b", "no vector", None);
        let proposals = propose_slots_offline("attribute", &[&a, &b], &[other], 0.60);
        let names: Vec<&str> = proposals.iter().map(|p| p.slot_name.as_str()).collect();
        assert_eq!(names, ["creamy", "no_vector"]);
        assert!(propose_slots_offline("attribute", &[], &[], 0.60).is_empty());
    }

    #[test]
    fn snake_case_names() {
        assert_eq!(snake_case("Feel less guilty!"), "feel_less_guilty");
        assert_eq!(snake_case("  --  "), "concept");
        assert_eq!(snake_case(&"a".repeat(80)).len(), MAX_SLOT_NAME_CHARS);
    }
}
