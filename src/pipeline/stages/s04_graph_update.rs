//! Stage 4, graph update: the extraction merged into the surface graph by three-step dedup
//! (exact label, then embedding similarity), cross-turn edges, tracker registration, edge
//! counts and the previous focus's yield (seed 000 Paths 3, 12, 13, 19).

use std::collections::HashSet;

use super::{Effects, Staged};
use crate::config::Methodology;
use crate::graph::node_state::{NodeRegistration, NodeStateTracker};
use crate::graph::records::KgNode;
use crate::graph::surface::{
    ExtractedConcept, Resolution, SurfaceUpdate, TurnExtraction, TurnOrigin, apply_extraction, norm,
};
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{
    EdgeRef, ExtractionOutput, GraphUpdateOutput, NodeRef, UtteranceSavingOutput,
};
use crate::pipeline::ids::IdMinter;
use crate::pipeline::ports::Ports;
use crate::pipeline::runner::TurnRun;
use crate::pipeline::session_data::SessionData;
use crate::time::now_rfc3339;

pub(crate) struct Input<'a> {
    pub turn: u32,
    pub saved: &'a UtteranceSavingOutput,
    pub extraction: &'a ExtractionOutput,
}

impl<'a> Input<'a> {
    pub fn from_turn(run: &'a TurnRun) -> Result<Self, PipelineError> {
        Ok(Self {
            turn: run.turn,
            saved: run.ctx.utterance_saving()?,
            extraction: run.ctx.extraction()?,
        })
    }
}

pub(crate) fn run(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<Staged<'static, GraphUpdateOutput>, PipelineError> {
    let data = ports.data;
    let methodology = &ports.spec.methodology;
    let extraction = &input.extraction.extraction;
    let concepts: Vec<_> = extraction
        .concepts
        .iter()
        .map(|c| c.concept.clone())
        .collect();
    let relationships: Vec<_> = extraction
        .relationships
        .iter()
        .map(|r| r.relationship.clone())
        .collect();
    let embeddings = embed_unmatched(ports, &concepts)?;
    let recorded_at = now_rfc3339();
    let origin = TurnOrigin {
        session_id: &data.session_id,
        turn: input.turn,
        utterance_id: &input.saved.user_utterance_id,
        recorded_at: &recorded_at,
    };
    let mut surface_ids = IdMinter::new(&data.session_id, input.turn, "surface");
    let mut new_id = || surface_ids.mint();
    let update = apply_extraction(
        &data.nodes,
        &data.edges,
        methodology,
        TurnExtraction {
            concepts: &concepts,
            embeddings: &embeddings,
            relationships: &relationships,
        },
        &origin,
        &mut new_id,
    );
    let mut tracker = data.tracker.clone();
    track_update(&mut tracker, methodology, &update, input.turn);
    let output = output_of(data, &update);
    let summary = describe_update(&update);
    Ok(Staged {
        effects: Effects {
            nodes_created: update.new_nodes,
            nodes_updated: update.updated_nodes,
            edges_created: update.new_edges,
            edges_updated: update.updated_edges,
            tracker: Some(tracker),
            ..Effects::default()
        },
        ..Staged::new(output, summary)
    })
}

/// The contract of an update: what it added and the graph's size after it.
fn output_of(data: &SessionData, update: &SurfaceUpdate) -> GraphUpdateOutput {
    let live_after = data.live_nodes().count() + update.new_nodes.len()
        - newly_superseded(&data.nodes, &update.updated_nodes);
    let label_of = |id: &str| {
        update
            .new_nodes
            .iter()
            .find(|n| n.id == id)
            .map_or_else(|| data.label_of(id), |n| n.label.clone())
    };
    GraphUpdateOutput {
        nodes_added: update.new_nodes.iter().map(NodeRef::from).collect(),
        edges_added: update
            .new_edges
            .iter()
            .map(|e| EdgeRef::new(e, label_of))
            .collect(),
        node_count: u32::try_from(live_after).unwrap_or(u32::MAX),
        edge_count: u32::try_from(data.edges.len() + update.new_edges.len()).unwrap_or(u32::MAX),
    }
}

/// Embeddings for the concepts that need one: a label and node type that exactly match a
/// live node merge without the semantic step, so they are not embedded (one batch for the
/// rest).
fn embed_unmatched(
    ports: &Ports<'_>,
    concepts: &[ExtractedConcept],
) -> Result<Vec<Option<Vec<f32>>>, PipelineError> {
    let known: HashSet<(String, &str)> = ports
        .data
        .live_nodes()
        .map(|n| (norm(&n.label), n.node_type.as_str()))
        .collect();
    let is_known = |c: &ExtractedConcept| known.contains(&(norm(&c.label), c.node_type.as_str()));
    let wanted: Vec<&str> = concepts
        .iter()
        .filter(|c| !is_known(c))
        .map(|c| c.label.as_str())
        .collect();
    let mut computed = if wanted.is_empty() {
        Vec::new()
    } else {
        ports.services.embedder.embed(&wanted)?
    }
    .into_iter();
    Ok(concepts
        .iter()
        .map(|c| if is_known(c) { None } else { computed.next() })
        .collect())
}

/// Registers new nodes, counts new edges and credits the previous focus with the turn's yield
/// (seed 000 Path 19, stage 4).
fn track_update(
    tracker: &mut NodeStateTracker,
    methodology: &Methodology,
    update: &SurfaceUpdate,
    turn: u32,
) {
    for node in &update.new_nodes {
        let node_type = methodology.node_type(&node.node_type);
        let level = node_type.map_or(0, |t| t.level);
        tracker.register_node(
            &NodeRegistration {
                node_id: &node.id,
                label: &node.label,
                node_type: &node.node_type,
                depth: level,
                level,
                is_terminal: node_type.is_some_and(|t| t.terminal),
            },
            turn,
        );
    }
    for resolution in &update.resolutions {
        if let Resolution::Exact { node_id } | Resolution::Semantic { node_id, .. } = resolution {
            tracker.record_mention(node_id, turn);
        }
    }
    for edge in &update.new_edges {
        tracker.update_edge_counts(&edge.source_node_id, 1, 0, Some(&edge.target_node_id));
        tracker.update_edge_counts(&edge.target_node_id, 0, 1, Some(&edge.source_node_id));
    }
    if let Some(previous) = tracker.previous_focus.clone() {
        tracker.record_yield(&previous, turn, update.changes);
    }
}

/// How many of `updated` were live before and are superseded now.
fn newly_superseded(before: &[KgNode], updated: &[KgNode]) -> usize {
    updated
        .iter()
        .filter(|n| {
            n.superseded_by.is_some()
                && before
                    .iter()
                    .any(|old| old.id == n.id && old.superseded_by.is_none())
        })
        .count()
}

fn describe_update(update: &SurfaceUpdate) -> String {
    let mut summary = format!(
        "+{} nodes ({} merged), +{} edges",
        update.new_nodes.len(),
        update.updated_nodes.len(),
        update.new_edges.len()
    );
    if !update.rejected_edges.is_empty() {
        let reasons: Vec<String> = update
            .rejected_edges
            .iter()
            .map(|r| format!("{} -{}-> {}: {}", r.source, r.edge_type, r.target, r.reason))
            .collect();
        summary.push_str(&format!(", rejected: {}", reasons.join("; ")));
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::surface::ExtractedRelationship;
    use crate::pipeline::contracts::{ExtractionResult, SourcedConcept, SourcedRelationship};
    use crate::pipeline::stages::fixture::Fixture;

    fn concept(label: &str, node_type: &str) -> SourcedConcept {
        SourcedConcept {
            concept: ExtractedConcept {
                label: label.to_owned(),
                node_type: node_type.to_owned(),
                confidence: 0.9,
                stance: 1,
                source_quote: label.to_owned(),
            },
            source_utterance_id: "answer".to_owned(),
        }
    }

    #[test]
    fn a_known_label_merges_and_a_new_one_is_added_with_its_edge() {
        let mut fx = Fixture::new();
        let known = fx.add_node("froths well", "attribute", 1);
        let (_, saved, _) = fx.opening_stages(2, "It froths well, so my mornings feel calm.");
        let extraction = ExtractionOutput {
            extraction: ExtractionResult {
                concepts: vec![
                    concept("Froths well", "attribute"),
                    concept("calm mornings", "psychosocial_consequence"),
                ],
                relationships: vec![SourcedRelationship {
                    relationship: ExtractedRelationship {
                        source: "froths well".to_owned(),
                        target: "calm mornings".to_owned(),
                        edge_type: "leads_to".to_owned(),
                        confidence: 0.8,
                    },
                    source_utterance_id: "answer".to_owned(),
                }],
            },
            methodology: "means_end_chain".to_owned(),
            timestamp: now_rfc3339(),
            concept_count: 2,
            relationship_count: 1,
        };
        let input = Input {
            turn: 2,
            saved: &saved,
            extraction: &extraction,
        };
        let staged = run(&input, &fx.ports()).unwrap();
        let (out, effects) = (&staged.output, &staged.effects);
        assert_eq!(out.nodes_added.len(), 1);
        assert_eq!(out.nodes_added[0].label, "calm mornings");
        assert_eq!(effects.nodes_updated.len(), 1);
        assert_eq!(effects.nodes_updated[0].id, known);
        assert_eq!((out.node_count, out.edge_count), (2, 1));
        assert_eq!(out.edges_added[0].source_label, "froths well");
        assert_eq!(out.edges_added[0].target_label, "calm mornings");
        let tracker = effects.tracker.as_ref().unwrap();
        assert!(
            tracker.get(&out.nodes_added[0].id).is_some(),
            "the new node is tracked"
        );
        // The exact match needed no embedding; the new concept got one.
        assert!(effects.nodes_created[0].embedding.is_some());
        // Nothing is written here: the session in memory is as it was.
        assert_eq!(fx.data.nodes.len(), 1);
    }
}
