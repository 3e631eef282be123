use super::*;

fn mec() -> Methodology {
    crate::config::shipped_methodology("means_end_chain")
}

fn node(id: &str, node_type: &str, mentions: usize) -> KgNode {
    KgNode {
        source_utterance_ids: (0..mentions).map(|i| format!("u{i}")).collect(),
        ..KgNode::fixture(id, id, node_type)
    }
}

fn edge(s: &str, t: &str, edge_type: &str) -> KgEdge {
    KgEdge {
        id: format!("{s}-{t}"),
        session_id: "s".into(),
        source_node_id: s.into(),
        target_node_id: t.into(),
        edge_type: edge_type.into(),
        confidence: 1.0,
        properties: serde_json::json!({}),
        source_utterance_ids: vec![],
        recorded_at: String::new(),
        turn: 1,
    }
}

#[test]
fn counts_depth_and_complete_chains() {
    let nodes = vec![
        node("a", "attribute", 1),
        node("f", "functional_consequence", 1),
        node("p", "psychosocial_consequence", 1),
        node("v", "terminal_value", 1),
        node("a2", "attribute", 1),
        node("lonely", "attribute", 1),
    ];
    let edges = vec![
        edge("a", "f", "leads_to"),
        edge("f", "p", "leads_to"),
        edge("p", "v", "leads_to"),
        edge("a2", "f", "leads_to"),
    ];
    let s = graph_state(&nodes, &edges, &mec(), 3);
    assert_eq!((s.node_count, s.edge_count, s.orphan_count), (6, 4, 1));
    assert_eq!(s.nodes_by_type["attribute"], 3);
    assert_eq!(s.edges_by_type["leads_to"], 4);
    assert_eq!(s.max_depth, 3);
    assert_eq!(s.longest_chain_path, vec!["a", "f", "p", "v"]);
    // depths: a 0, f 1, p 2, v 3, a2 0, lonely 0 → 6 / 6
    assert!((s.avg_depth - 1.0).abs() < 1e-12);
    // a and a2 reach the terminal value, lonely does not: 2 of 3.
    assert!((s.chain_completion_ratio - 2.0 / 3.0).abs() < 1e-12);
    assert!(s.has_complete_chain);
    // The ladders leading on from the attributes: a 3, a2 3, lonely 0 → 6 / 3.
    assert!((s.element_depth - 2.0).abs() < 1e-12);
    assert_eq!(s.turn_count, 3);
}

#[test]
fn cycles_cannot_loop_and_revises_is_not_structure() {
    let nodes = vec![
        node("a", "attribute", 1),
        node("b", "functional_consequence", 1),
        node("c", "psychosocial_consequence", 1),
    ];
    let edges = vec![
        edge("a", "b", "leads_to"),
        edge("b", "a", "leads_to"),
        edge("b", "c", "leads_to"),
        edge("c", "a", "revises"),
    ];
    let s = graph_state(&nodes, &edges, &mec(), 1);
    // {a, b} collapse into one component; the chain is {a,b} → c.
    assert_eq!(s.max_depth, 1);
    assert_eq!(s.edge_count, 4, "revises edges are counted");
    assert!(!s.has_complete_chain);
    assert_eq!(s.chain_completion_ratio, 0.0);
}

#[test]
fn superseded_nodes_leave_the_metrics() {
    let mut old = node("old", "attribute", 1);
    old.superseded_by = Some("new".into());
    let s = graph_state(&[old, node("new", "attribute", 1)], &[], &mec(), 1);
    assert_eq!(s.node_count, 1);
    assert_eq!(s.orphan_count, 1);
    let empty = graph_state(&[], &[], &mec(), 0);
    assert_eq!(
        (
            empty.max_depth,
            empty.avg_depth,
            empty.chain_completion_ratio
        ),
        (0, 0.0, 0.0)
    );
}

#[test]
fn chao1_and_saturation_counters() {
    use ResponseDepth::{Deep, Shallow, Surface};
    // f1 = 2 (mentioned once), f2 = 1: S_chao1 = 4 + 4/2 = 6 → 4/6.
    let nodes = vec![
        node("a", "attribute", 1),
        node("b", "attribute", 1),
        node("c", "attribute", 2),
        node("d", "attribute", 3),
    ];
    assert!((chao1_ratio(&nodes) - 4.0 / 6.0).abs() < 1e-12);
    // No doubletons: S_obs + f1(f1−1)/2 = 2 + 1 = 3.
    assert!((chao1_ratio(&nodes[..2]) - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(chao1_ratio(&[]), 0.0);

    let mut m = SaturationMetrics::default();
    for turn in 1..=5 {
        m = saturation_metrics(&m, &nodes, 0, 0, 2, 2, &[Deep, Surface, Shallow]);
        assert_eq!(m.consecutive_low_info, turn);
        assert_eq!(m.consecutive_shallow, 2);
    }
    assert!(m.is_saturated, "5 zero-yield turns");
    assert_eq!(
        m.consecutive_depth_plateau, 4,
        "first turn raised max depth 0 → 2"
    );
    let grown = saturation_metrics(&m, &nodes, 0, 1, 1, 2, &[]);
    assert_eq!(
        grown.consecutive_depth_plateau, 0,
        "an edge at the same depth is growth: the plateau ends"
    );
    let m = saturation_metrics(&m, &nodes, 3, 0, 4, 3, &[]);
    assert_eq!(
        (
            m.consecutive_low_info,
            m.consecutive_depth_plateau,
            m.prev_max_depth
        ),
        (0, 0, 3)
    );
    assert!((m.new_info_rate - 0.75).abs() < 1e-12);
    assert!(!m.is_saturated);
}

#[test]
fn a_growing_graph_at_a_stable_depth_is_no_plateau() {
    // Ten answers that each add a node beside the deepest chain (widening, not deepening).
    let nodes = vec![node("a", "attribute", 1)];
    let mut m = SaturationMetrics::default();
    for _ in 0..10 {
        m = saturation_metrics(&m, &nodes, 1, 0, 1, 2, &[]);
        assert_eq!(m.consecutive_depth_plateau, 0);
    }
    assert!(!m.is_saturated);
}

#[test]
fn a_turn_that_only_adds_edges_is_not_zero_yield() {
    let nodes = vec![node("a", "attribute", 1), node("b", "attribute", 1)];
    let mut m = SaturationMetrics::default();
    for turn in 1..=4 {
        m = saturation_metrics(&m, &nodes, 0, 0, 0, 1, &[]);
        assert_eq!(m.consecutive_low_info, turn);
    }
    // No new node, one new edge: the graph grew, so the run of zero-yield turns ends.
    let m = saturation_metrics(&m, &nodes, 0, 1, 1, 1, &[]);
    assert_eq!(m.consecutive_low_info, 0);
    assert!(!m.is_saturated);
    // A fifth zero-yield turn after the edge is the first of a new run, not saturation.
    let m = saturation_metrics(&m, &nodes, 0, 0, 0, 1, &[]);
    assert_eq!(m.consecutive_low_info, 1);
}
