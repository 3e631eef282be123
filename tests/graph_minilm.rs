//! The surface and canonical graph driven by the real all-MiniLM-L6-v2 model (fetched through
//! the normal resolution chain into `target/test-cache` on first use).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::too_many_lines
)]

use std::collections::HashSet;
use std::sync::OnceLock;

use interviewer::config::{ConfigDir, Methodology};
use interviewer::embed::{Embedder, MiniLmEmbedder, ResolveConfig};
use interviewer::graph::canonical::{
    ProposalBatch, SlotContext, SlotProposal, aggregate_edges, canonical_state,
    integrate_proposals, slot_text,
};
use interviewer::graph::records::{KgEdge, KgNode, SlotStatus};
use interviewer::graph::similarity::cosine;
use interviewer::graph::surface::{
    ExtractedConcept, ExtractedRelationship, Resolution, SurfaceUpdate, TurnExtraction, TurnOrigin,
    apply_extraction,
};

const CACHE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache");

fn model() -> &'static MiniLmEmbedder {
    static MODEL: OnceLock<MiniLmEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| {
        let config = ResolveConfig {
            cache_root: Some(CACHE_ROOT.into()),
            ..ResolveConfig::from_env(None)
        };
        MiniLmEmbedder::load_with(&config).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn mec() -> Methodology {
    ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
        .methodology("means_end_chain", &interviewer::signals::Catalog)
        .unwrap()
}

fn concept(label: &str, node_type: &str) -> ExtractedConcept {
    ExtractedConcept {
        label: label.into(),
        node_type: node_type.into(),
        confidence: 0.9,
        stance: 0,
        source_quote: label.into(),
    }
}

fn rel(source: &str, target: &str) -> ExtractedRelationship {
    ExtractedRelationship {
        source: source.into(),
        target: target.into(),
        edge_type: "leads_to".into(),
        confidence: 0.8,
    }
}

struct Session {
    nodes: Vec<KgNode>,
    edges: Vec<KgEdge>,
    next: u32,
}

impl Session {
    fn turn(
        &mut self,
        turn: u32,
        concepts: &[ExtractedConcept],
        rels: &[ExtractedRelationship],
    ) -> SurfaceUpdate {
        let labels: Vec<&str> = concepts.iter().map(|c| c.label.as_str()).collect();
        let embeddings: Vec<Option<Vec<f32>>> = model()
            .embed(&labels)
            .unwrap()
            .into_iter()
            .map(Some)
            .collect();
        let utterance = format!("u{turn}");
        let origin = TurnOrigin {
            session_id: "s",
            turn,
            utterance_id: &utterance,
            recorded_at: "",
        };
        let mut counter = self.next;
        let mut new_id = || {
            counter += 1;
            format!("id{counter}")
        };
        let extraction = TurnExtraction {
            concepts,
            embeddings: &embeddings,
            relationships: rels,
        };
        let update = apply_extraction(
            &self.nodes,
            &self.edges,
            &mec(),
            extraction,
            &origin,
            &mut new_id,
        );
        self.next = counter;
        for n in &update.updated_nodes {
            if let Some(slot) = self.nodes.iter_mut().find(|o| o.id == n.id) {
                *slot = n.clone();
            }
        }
        self.nodes.extend(update.new_nodes.iter().cloned());
        self.edges.extend(update.new_edges.iter().cloned());
        update
    }
}

#[test]
fn paraphrases_merge_types_do_not_and_edges_cross_turns() {
    let mut s = Session {
        nodes: vec![],
        edges: vec![],
        next: 0,
    };
    let t1 = s.turn(
        1,
        &[
            concept("oat milk", "attribute"),
            concept("too expensive", "attribute"),
        ],
        &[],
    );
    assert_eq!(t1.new_nodes.len(), 2);

    let concepts = [
        // 0.91 with "oat milk", same type: merges at ≥ 0.80.
        concept("oat-based milk", "attribute"),
        // 0.86 with "too expensive" but another type: a new node.
        concept("costs too much", "functional_consequence"),
    ];
    let rels = [
        // "too expensive" was said in turn 1: the edge resolves across turns.
        rel("too expensive", "costs too much"),
        // functional → attribute is not in the ladder's permitted connections.
        rel("costs too much", "oat milk"),
    ];
    let t2 = s.turn(2, &concepts, &rels);
    match &t2.resolutions[0] {
        Resolution::Semantic {
            node_id,
            similarity,
        } => {
            assert_eq!(node_id, &t1.new_nodes[0].id);
            assert!(*similarity >= 0.80, "{similarity}");
        }
        other => panic!("expected a semantic merge, got {other:?}"),
    }
    assert!(matches!(t2.resolutions[1], Resolution::New { .. }));
    let sim = cosine(
        t1.new_nodes[1].embedding.as_ref().unwrap(),
        t2.new_nodes[0].embedding.as_ref().unwrap(),
    );
    assert!(
        sim >= 0.80,
        "the pair is similar enough to merge were the types equal: {sim}"
    );
    assert_eq!(t2.new_edges.len(), 1);
    assert_eq!(t2.new_edges[0].source_node_id, t1.new_nodes[1].id);
    assert_eq!(t2.rejected_edges.len(), 1);
    assert_eq!(
        t2.rejected_edges[0].reason,
        "'leads_to' is not permitted from functional_consequence to attribute"
    );
    assert_eq!(s.nodes[0].source_utterance_ids, vec!["u1", "u2"]);
}

#[test]
fn slots_promote_on_second_supporting_node_and_edges_aggregate() {
    let mut s = Session {
        nodes: vec![],
        edges: vec![],
        next: 0,
    };
    let t1 = s.turn(
        1,
        &[
            concept("low price", "attribute"),
            concept("saves money", "functional_consequence"),
        ],
        &[rel("low price", "saves money")],
    );
    // 0.75 < 0.80: two surface nodes, one latent concept.
    let t2 = s.turn(
        2,
        &[
            concept("cheap", "attribute"),
            concept("spend less", "functional_consequence"),
        ],
        &[rel("cheap", "spend less")],
    );
    assert_eq!(t2.new_nodes.len(), 2, "{:?}", t2.resolutions);

    let mapped: HashSet<String> = HashSet::new();
    let mut slots = Vec::new();
    let mut mappings = Vec::new();
    let mut ids = 0;
    let mut new_id = || {
        ids += 1;
        format!("slot{ids}")
    };
    let proposals_by_turn = [
        (
            1,
            &t1.new_nodes,
            [
                ("affordability", "paying a low price", "low price"),
                ("saving_money", "keeping spending down", "saves money"),
            ],
        ),
        (
            2,
            &t2.new_nodes,
            [
                ("affordable_price", "a price that is easy to pay", "cheap"),
                ("spending_less", "keeping costs down", "spend less"),
            ],
        ),
    ];
    for (turn, nodes, proposals) in proposals_by_turn {
        for (node, (name, description, label)) in nodes.iter().zip(proposals) {
            let proposal = SlotProposal {
                slot_name: name.into(),
                description: description.into(),
                node_type: node.node_type.clone(),
                surface_labels: vec![label.into()],
            };
            let text = slot_text(name, description);
            let embeddings = model().embed(&[text.as_str()]).unwrap();
            let batch_nodes = [node];
            let batch = ProposalBatch {
                node_type: &node.node_type,
                nodes: &batch_nodes,
                proposals: std::slice::from_ref(&proposal),
                embeddings: &embeddings,
            };
            let ctx = SlotContext {
                session_id: "s",
                turn,
                mapped_nodes: &mapped,
                thresholds: interviewer::config::Thresholds::default(),
            };
            let update = integrate_proposals(&slots, &batch, &ctx, &mut new_id);
            for changed in update.slots_updated {
                if let Some(old) = slots
                    .iter_mut()
                    .find(|o: &&mut interviewer::graph::records::CanonicalSlot| o.id == changed.id)
                {
                    *old = changed;
                }
            }
            slots.extend(update.slots_created);
            mappings.extend(update.mappings_created);
        }
        if turn == 1 {
            assert!(slots.iter().all(|s| s.status == SlotStatus::Candidate));
        }
    }
    assert_eq!(
        slots.len(),
        2,
        "turn-2 proposals merge into turn-1 slots (≥ 0.60): {slots:#?}"
    );
    for slot in &slots {
        assert_eq!(
            (slot.status, slot.support_count, slot.promoted_turn),
            (SlotStatus::Active, 2, Some(2)),
            "{}",
            slot.slot_name
        );
    }
    let canonical_edges =
        aggregate_edges(&s.edges, &mappings, &[], "s", &mut || "cedge".to_owned());
    assert_eq!(canonical_edges.len(), 1);
    assert_eq!(canonical_edges[0].support_count, 2);
    let state = canonical_state(&slots, &canonical_edges);
    assert_eq!(
        (
            state.concept_count,
            state.edge_count,
            state.orphan_count,
            state.max_depth
        ),
        (2, 1, 0, 1)
    );
}
