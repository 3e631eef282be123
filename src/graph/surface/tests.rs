use super::*;

fn mec() -> Methodology {
    crate::config::shipped_methodology("means_end_chain")
}

fn ids() -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("id{n}")
    }
}

fn origin(turn: u32, utterance: &str) -> TurnOrigin<'_> {
    TurnOrigin {
        session_id: "s",
        turn,
        utterance_id: utterance,
        recorded_at: "2026-01-01T00:00:00Z",
    }
}

fn concept(label: &str, node_type: &str) -> ExtractedConcept {
    ExtractedConcept {
        label: label.into(),
        node_type: node_type.into(),
        confidence: 0.9,
        stance: 0,
        source_quote: format!("I said {label}"),
    }
}

fn rel(source: &str, target: &str, edge_type: &str) -> ExtractedRelationship {
    ExtractedRelationship {
        source: source.into(),
        target: target.into(),
        edge_type: edge_type.into(),
        confidence: 0.8,
    }
}

/// Unit vector at `angle` radians in the plane: cosine between two is cos(Δangle).
#[allow(clippy::unnecessary_wraps)] // embeddings are optional per concept
fn v(angle: f32) -> Option<Vec<f32>> {
    Some(vec![angle.cos(), angle.sin(), 0.0])
}

fn run(
    nodes: &[KgNode],
    edges: &[KgEdge],
    concepts: &[ExtractedConcept],
    embeddings: &[Option<Vec<f32>>],
    rels: &[ExtractedRelationship],
    turn: u32,
    next: &mut dyn FnMut() -> String,
) -> SurfaceUpdate {
    let utterance = format!("u{turn}");
    let extraction = TurnExtraction {
        concepts,
        embeddings,
        relationships: rels,
    };
    apply_extraction(
        nodes,
        edges,
        &mec(),
        extraction,
        &origin(turn, &utterance),
        next,
    )
}

#[test]
fn exact_label_match_merges_case_insensitively_and_keeps_original_words() {
    let mut next = ids();
    let t1 = run(
        &[],
        &[],
        &[concept("Creamy texture", "attribute")],
        &[v(0.0)],
        &[],
        1,
        &mut next,
    );
    assert_eq!(t1.new_nodes.len(), 1);
    let t2 = run(
        &t1.new_nodes,
        &[],
        &[concept("  creamy TEXTURE ", "attribute")],
        &[v(1.5)],
        &[],
        2,
        &mut next,
    );
    assert!(t2.new_nodes.is_empty());
    assert_eq!(
        t2.resolutions,
        vec![Resolution::Exact {
            node_id: "id1".into()
        }]
    );
    let merged = &t2.updated_nodes[0];
    assert_eq!(merged.source_utterance_ids, vec!["u1", "u2"]);
    assert_eq!(merged.label, "Creamy texture");
    assert_eq!(merged.source_quote, "I said Creamy texture");
    assert_eq!(
        merged.properties.get("aliases"),
        None,
        "a case variant is the same label"
    );
    assert_eq!(
        t2.changes,
        GraphChangeSummary {
            nodes_added: 0,
            edges_added: 0,
            nodes_modified: 1
        }
    );
}

#[test]
fn semantic_match_needs_same_type_and_threshold() {
    let mut next = ids();
    let t1 = run(
        &[],
        &[],
        &[concept("creamy texture", "attribute")],
        &[v(0.0)],
        &[],
        1,
        &mut next,
    );
    // cos(0.6) ≈ 0.825 ≥ 0.80: merges.
    let t2 = run(
        &t1.new_nodes,
        &[],
        &[concept("smooth mouthfeel", "attribute")],
        &[v(0.6)],
        &[],
        2,
        &mut next,
    );
    assert!(
        matches!(&t2.resolutions[0], Resolution::Semantic { node_id, similarity } if node_id == "id1" && *similarity > 0.8)
    );
    assert_eq!(
        t2.updated_nodes[0].properties["aliases"],
        serde_json::json!(["smooth mouthfeel"])
    );
    // cos(0.7) ≈ 0.765 < 0.80: new node.
    let t3 = run(
        &t1.new_nodes,
        &[],
        &[concept("thick body", "attribute")],
        &[v(0.7)],
        &[],
        2,
        &mut next,
    );
    assert!(matches!(t3.resolutions[0], Resolution::New { .. }));
    // Identical vector but another node type: never merges.
    let t4 = run(
        &t1.new_nodes,
        &[],
        &[concept(
            "creaminess feels luxurious",
            "psychosocial_consequence",
        )],
        &[v(0.0)],
        &[],
        2,
        &mut next,
    );
    assert!(matches!(t4.resolutions[0], Resolution::New { .. }));
}

#[test]
fn duplicates_within_one_turn_collapse() {
    let mut next = ids();
    let u = run(
        &[],
        &[],
        &[
            concept("oat milk", "attribute"),
            concept("Oat Milk", "attribute"),
        ],
        &[v(0.0), v(0.0)],
        &[],
        1,
        &mut next,
    );
    assert_eq!(u.new_nodes.len(), 1);
    assert_eq!(u.resolutions[1].node_id(), u.new_nodes[0].id);
}

#[test]
fn relationships_resolve_against_earlier_turns_and_ontology() {
    let mut next = ids();
    let t1 = run(
        &[],
        &[],
        &[concept("creamy texture", "attribute")],
        &[v(0.0)],
        &[],
        1,
        &mut next,
    );
    let concepts = [
        concept("feels indulgent", "psychosocial_consequence"),
        concept("personal pleasure", "terminal_value"),
    ];
    let rels = [
        rel("creamy texture", "feels indulgent", "leads_to"),
        rel("personal pleasure", "creamy texture", "leads_to"),
        rel("creamy texture", "ghost", "leads_to"),
        rel("creamy texture", "feels indulgent", "teleports_to"),
    ];
    let t2 = run(
        &t1.new_nodes,
        &[],
        &concepts,
        &[v(1.0), v(2.0)],
        &rels,
        2,
        &mut next,
    );
    assert_eq!(t2.new_edges.len(), 1, "{:?}", t2.rejected_edges);
    let e = &t2.new_edges[0];
    assert_eq!(
        (e.source_node_id.as_str(), e.edge_type.as_str(), e.turn),
        ("id1", "leads_to", 2)
    );
    assert_eq!(e.source_utterance_ids, vec!["u2"]);
    let reasons: Vec<&str> = t2
        .rejected_edges
        .iter()
        .map(|r| r.reason.as_str())
        .collect();
    assert_eq!(
        reasons,
        [
            "'leads_to' is not permitted from terminal_value to attribute",
            "target 'ghost' matches no concept of this session",
            "edge type 'teleports_to' is not in the means_end_chain ontology",
        ]
    );
}

#[test]
fn restated_edges_gain_provenance_not_duplicates() {
    let mut next = ids();
    let concepts = [
        concept("creamy texture", "attribute"),
        concept("feels indulgent", "psychosocial_consequence"),
    ];
    let rels = [rel("creamy texture", "feels indulgent", "leads_to")];
    let t1 = run(&[], &[], &concepts, &[v(0.0), v(1.0)], &rels, 1, &mut next);
    let t2 = run(
        &t1.new_nodes,
        &t1.new_edges,
        &concepts,
        &[v(0.0), v(1.0)],
        &rels,
        2,
        &mut next,
    );
    assert!(t2.new_edges.is_empty());
    assert_eq!(t2.updated_edges[0].source_utterance_ids, vec!["u1", "u2"]);
}

#[test]
fn revises_supersedes_the_older_node() {
    let mut next = ids();
    let t1 = run(
        &[],
        &[],
        &[concept("cheap", "attribute")],
        &[v(0.0)],
        &[],
        1,
        &mut next,
    );
    let t2 = run(
        &t1.new_nodes,
        &[],
        &[concept("actually pricey", "attribute")],
        &[v(1.5)],
        &[rel("actually pricey", "cheap", "revises")],
        2,
        &mut next,
    );
    assert_eq!(t2.new_edges.len(), 1);
    let old = t2.updated_nodes.iter().find(|n| n.id == "id1").unwrap();
    assert_eq!(
        old.superseded_by.as_deref(),
        Some(t2.new_nodes[0].id.as_str())
    );
    // A superseded node no longer absorbs new mentions.
    let mut nodes = t1.new_nodes.clone();
    nodes[0].superseded_by = Some("x".into());
    let t3 = run(
        &nodes,
        &[],
        &[concept("cheap", "attribute")],
        &[v(0.0)],
        &[],
        3,
        &mut next,
    );
    assert_eq!(t3.new_nodes.len(), 1);
}

#[test]
fn exact_label_of_another_node_type_stays_a_separate_node() {
    let mut next = ids();
    let t1 = run(
        &[],
        &[],
        &[concept("price", "attribute")],
        &[v(0.0)],
        &[],
        1,
        &mut next,
    );
    // Same label, same vector, other type: neither step 1 nor step 2 merges it.
    let t2 = run(
        &t1.new_nodes,
        &[],
        &[concept("Price", "functional_consequence")],
        &[v(0.0)],
        &[],
        2,
        &mut next,
    );
    assert!(
        matches!(t2.resolutions[0], Resolution::New { .. }),
        "{:?}",
        t2.resolutions
    );
    assert_eq!(t2.new_nodes.len(), 1);
    assert_eq!(t2.new_nodes[0].node_type, "functional_consequence");
    assert!(t2.updated_nodes.is_empty());
    // Within one turn too, and a later mention of each type merges into its own node.
    let both = [
        concept("price", "attribute"),
        concept("price", "functional_consequence"),
    ];
    let t3 = run(&[], &[], &both, &[v(0.0), v(0.0)], &[], 1, &mut next);
    assert_eq!(t3.new_nodes.len(), 2);
    let t4 = run(&t3.new_nodes, &[], &both, &[None, None], &[], 2, &mut next);
    assert!(t4.new_nodes.is_empty());
    assert!(matches!(
        (&t4.resolutions[0], &t4.resolutions[1]),
        (Resolution::Exact { node_id: a }, Resolution::Exact { node_id: b })
            if *a == t3.new_nodes[0].id && *b == t3.new_nodes[1].id
    ));
}

#[test]
fn a_label_naming_two_types_resolves_edges_to_the_permitted_pair() {
    let mut next = ids();
    let concepts = [
        concept("quality", "attribute"),
        concept("quality", "terminal_value"),
        concept("feels safe", "psychosocial_consequence"),
    ];
    // Only attribute → psychosocial and psychosocial → terminal_value are permitted.
    let rels = [
        rel("quality", "feels safe", "leads_to"),
        rel("feels safe", "quality", "leads_to"),
    ];
    let u = run(
        &[],
        &[],
        &concepts,
        &[v(0.0), v(0.0), v(1.5)],
        &rels,
        1,
        &mut next,
    );
    assert_eq!(u.new_nodes.len(), 3);
    assert!(u.rejected_edges.is_empty(), "{:?}", u.rejected_edges);
    let id_of = |t: &str| {
        u.new_nodes
            .iter()
            .find(|n| n.node_type == t)
            .map(|n| n.id.clone())
            .unwrap()
    };
    let ends: Vec<(String, String)> = u
        .new_edges
        .iter()
        .map(|e| (e.source_node_id.clone(), e.target_node_id.clone()))
        .collect();
    assert_eq!(
        ends,
        [
            (id_of("attribute"), id_of("psychosocial_consequence")),
            (id_of("psychosocial_consequence"), id_of("terminal_value")),
        ]
    );
}

/// The methodology's `thresholds.surface_similarity_threshold` moves the merge point: at 0.90
/// the pair that merges at the seed's 0.80 (cosine ≈ 0.825) stays two nodes, and at 0.70 the
/// pair at ≈ 0.765 merges.
#[test]
fn the_surface_threshold_comes_from_the_methodology() {
    let merged = |threshold: f32, angle: f32| {
        let mut m = mec();
        m.thresholds.surface_similarity_threshold = threshold;
        let mut next = ids();
        let utterance = "u1".to_owned();
        let first = [concept("creamy texture", "attribute")];
        let t1 = apply_extraction(
            &[],
            &[],
            &m,
            TurnExtraction {
                concepts: &first,
                embeddings: &[v(0.0)],
                relationships: &[],
            },
            &origin(1, &utterance),
            &mut next,
        );
        let second = [concept("smooth mouthfeel", "attribute")];
        let t2 = apply_extraction(
            &t1.new_nodes,
            &[],
            &m,
            TurnExtraction {
                concepts: &second,
                embeddings: &[v(angle)],
                relationships: &[],
            },
            &origin(2, &utterance),
            &mut next,
        );
        matches!(t2.resolutions[0], Resolution::Semantic { .. })
    };
    assert!(merged(0.80, 0.6));
    assert!(!merged(0.90, 0.6));
    assert!(!merged(0.80, 0.7));
    assert!(merged(0.70, 0.7));
}
