use super::*;

fn node(id: &str, label: &str, node_type: &str, e: &[f32]) -> KgNode {
    KgNode {
        embedding: Some(e.to_vec()),
        ..KgNode::fixture(id, label, node_type)
    }
}

fn proposal(name: &str, node_type: &str, labels: &[&str]) -> SlotProposal {
    SlotProposal {
        slot_name: name.into(),
        description: String::new(),
        node_type: node_type.into(),
        surface_labels: labels.iter().map(|l| (*l).into()).collect(),
    }
}

fn ids() -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("slot{n}")
    }
}

#[test]
fn proposals_create_merge_and_promote() {
    let mapped = HashSet::new();
    let mut next = ids();
    let n1 = node("n1", "tastes creamy", "attribute", &[1.0, 0.0]);
    let turn1_nodes = [&n1];
    let batch1 = ProposalBatch {
        node_type: "attribute",
        nodes: &turn1_nodes,
        proposals: &[proposal("creaminess", "attribute", &["Tastes creamy"])],
        embeddings: &[vec![1.0, 0.0]],
    };
    let u1 = integrate_proposals(
        &[],
        &batch1,
        &SlotContext {
            session_id: "s",
            turn: 1,
            mapped_nodes: &mapped,
            thresholds: crate::config::Thresholds::default(),
        },
        &mut next,
    );
    assert_eq!(u1.slots_created.len(), 1);
    let slot = &u1.slots_created[0];
    assert_eq!(
        (slot.status, slot.support_count, slot.first_seen_turn),
        (SlotStatus::Candidate, 1, 1)
    );
    assert_eq!(u1.mappings_created[0].surface_node_id, "n1");

    // Turn 2: a paraphrase proposal at cosine 0.8 (≥ 0.60) merges and promotes at support 2.
    let n2 = node("n2", "smooth", "attribute", &[0.8, 0.6]);
    let turn2_nodes = [&n2];
    let batch2 = ProposalBatch {
        node_type: "attribute",
        nodes: &turn2_nodes,
        proposals: &[proposal("smoothness", "attribute", &["smooth"])],
        embeddings: &[vec![0.8, 0.6]],
    };
    let u2 = integrate_proposals(
        &u1.slots_created,
        &batch2,
        &SlotContext {
            session_id: "s",
            turn: 2,
            mapped_nodes: &mapped,
            thresholds: crate::config::Thresholds::default(),
        },
        &mut next,
    );
    assert!(u2.slots_created.is_empty());
    let merged = &u2.slots_updated[0];
    assert_eq!(
        (
            merged.id.as_str(),
            merged.status,
            merged.support_count,
            merged.promoted_turn
        ),
        ("slot1", SlotStatus::Active, 2, Some(2))
    );
    assert_eq!(u2.promoted, vec!["slot1"]);
    assert!((u2.mappings_created[0].similarity - 0.8).abs() < 1e-6);
}

/// A candidate attribute slot with one member, embedded at (1, 0).
fn creaminess_candidate() -> CanonicalSlot {
    CanonicalSlot {
        id: "slotA".into(),
        session_id: "s".into(),
        slot_name: "creaminess".into(),
        description: String::new(),
        node_type: "attribute".into(),
        status: SlotStatus::Candidate,
        support_count: 1,
        first_seen_turn: 1,
        promoted_turn: None,
        embedding: Some(vec![1.0, 0.0]),
    }
}

#[test]
fn other_types_and_low_similarity_make_new_slots() {
    let mapped = HashSet::new();
    let mut next = ids();
    let existing = creaminess_candidate();
    let v = node("v", "indulgence", "terminal_value", &[1.0, 0.0]);
    let a = node("a", "froth", "attribute", &[0.5, 0.866]);
    let vs = [&v];
    let as_ = [&a];
    let same_vector_other_type = ProposalBatch {
        node_type: "terminal_value",
        nodes: &vs,
        proposals: &[proposal("indulgence", "terminal_value", &["indulgence"])],
        embeddings: &[vec![1.0, 0.0]],
    };
    let u = integrate_proposals(
        std::slice::from_ref(&existing),
        &same_vector_other_type,
        &SlotContext {
            session_id: "s",
            turn: 2,
            mapped_nodes: &mapped,
            thresholds: crate::config::Thresholds::default(),
        },
        &mut next,
    );
    assert_eq!(u.slots_created.len(), 1);
    // cos = 0.5 < 0.60.
    let dissimilar = ProposalBatch {
        node_type: "attribute",
        nodes: &as_,
        proposals: &[proposal("froth", "attribute", &["froth"])],
        embeddings: &[vec![0.5, 0.866]],
    };
    let u = integrate_proposals(
        std::slice::from_ref(&existing),
        &dissimilar,
        &SlotContext {
            session_id: "s",
            turn: 2,
            mapped_nodes: &mapped,
            thresholds: crate::config::Thresholds::default(),
        },
        &mut next,
    );
    assert_eq!(u.slots_created.len(), 1);
    // A proposal naming no node of the batch is ignored, as is a node mapped before.
    let already: HashSet<String> = ["a".to_owned()].into();
    let u = integrate_proposals(
        &[],
        &dissimilar,
        &SlotContext {
            session_id: "s",
            turn: 2,
            mapped_nodes: &already,
            thresholds: crate::config::Thresholds::default(),
        },
        &mut next,
    );
    assert_eq!(u.ignored_proposals, vec!["froth"]);
}

#[test]
fn surface_edges_aggregate_between_slots() {
    let mapping = |n: &str, s: &str| SlotMapping {
        surface_node_id: n.into(),
        canonical_slot_id: s.into(),
        similarity: 1.0,
        assigned_turn: 1,
    };
    let mappings = [mapping("a1", "A"), mapping("a2", "A"), mapping("b1", "B")];
    let edge = |id: &str, s: &str, t: &str| KgEdge {
        id: id.into(),
        session_id: "s".into(),
        source_node_id: s.into(),
        target_node_id: t.into(),
        edge_type: "leads_to".into(),
        confidence: 1.0,
        properties: serde_json::json!({}),
        source_utterance_ids: vec![],
        recorded_at: String::new(),
        turn: 1,
    };
    let edges = [
        edge("e1", "a1", "b1"),
        edge("e2", "a2", "b1"),
        edge("e3", "a1", "a2"),
        edge("e4", "a1", "unmapped"),
    ];
    let mut next = ids();
    let agg = aggregate_edges(&edges, &mappings, &[], "s", &mut next);
    assert_eq!(agg.len(), 1);
    assert_eq!(
        (agg[0].support_count, agg[0].surface_edge_ids.clone()),
        (2, vec!["e1".to_owned(), "e2".to_owned()])
    );
    // Re-aggregation keeps the id.
    let again = aggregate_edges(&edges, &mappings, &agg, "s", &mut next);
    assert_eq!(again[0].id, agg[0].id);

    let slot = |id: &str, status: SlotStatus, support: u32| CanonicalSlot {
        id: id.into(),
        session_id: "s".into(),
        slot_name: id.into(),
        description: String::new(),
        node_type: "attribute".into(),
        status,
        support_count: support,
        first_seen_turn: 1,
        promoted_turn: None,
        embedding: None,
    };
    let slots = [
        slot("A", SlotStatus::Active, 2),
        slot("B", SlotStatus::Active, 1),
        slot("C", SlotStatus::Active, 3),
        slot("D", SlotStatus::Candidate, 1),
    ];
    let st = canonical_state(&slots, &agg);
    assert_eq!(
        (
            st.concept_count,
            st.edge_count,
            st.orphan_count,
            st.max_depth
        ),
        (3, 1, 1, 1)
    );
    assert!((st.avg_support - 2.0).abs() < 1e-12);
}

/// The methodology's canonical thresholds apply: at a similarity threshold of 0.45 the
/// cosine-0.5 proposal joins the slot, and with `canonical_min_support_nodes: 1` a new slot is
/// active at once; at 3 two members leave it a candidate.
#[test]
fn canonical_thresholds_come_from_the_context() {
    let mapped = HashSet::new();
    let existing = creaminess_candidate();
    let a = node("a", "froth", "attribute", &[0.5, 0.866]);
    let nodes = [&a];
    let batch = ProposalBatch {
        node_type: "attribute",
        nodes: &nodes,
        proposals: &[proposal("froth", "attribute", &["froth"])],
        embeddings: &[vec![0.5, 0.866]],
    };
    let with = |similarity: f32, support: u32, existing: &[CanonicalSlot]| {
        integrate_proposals(
            existing,
            &batch,
            &SlotContext {
                session_id: "s",
                turn: 2,
                mapped_nodes: &mapped,
                thresholds: crate::config::Thresholds {
                    canonical_similarity_threshold: similarity,
                    canonical_min_support_nodes: support,
                    ..crate::config::Thresholds::default()
                },
            },
            &mut ids(),
        )
    };
    let joined = with(0.45, 3, std::slice::from_ref(&existing));
    assert!(joined.slots_created.is_empty());
    assert_eq!(joined.slots_updated[0].support_count, 2);
    assert_eq!(joined.slots_updated[0].status, SlotStatus::Candidate);
    let promoted_alone = with(0.60, 1, &[]);
    assert_eq!(promoted_alone.slots_created[0].status, SlotStatus::Active);
}
