//! Graph metrics for [`GraphState`] (seed 001 "Graph State Metrics") and the saturation
//! metrics of stage 5.
//!
//! Depth is defined on the condensation of the graph (each strongly connected component
//! collapsed to one vertex), so cycles such as "quality → trust → quality" cannot make a chain
//! infinitely long: a node's depth is the longest path, in edges, from any source to its
//! component. `revises` edges and superseded nodes take no part in structure metrics.

use std::collections::{BTreeMap, HashMap};

use petgraph::algo::{condensation, toposort};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{Dfs, Reversed};

use super::records::{KgEdge, KgNode};
use crate::config::Methodology;
pub use crate::domain::SaturationMetrics;
use crate::domain::{GraphState, ResponseDepth};

/// Zero-yield turns (no new node and no new edge) after which the graph counts as saturated
/// (seed 001: "5+ consecutive turns with zero yield (no new nodes/edges)").
pub const GRAPH_SATURATED_TURNS: u32 = 5;
/// Consecutive shallow answers after which quality counts as degraded (≥ 6).
pub const QUALITY_DEGRADED_TURNS: u32 = 6;
/// Consecutive zero-yield turns at the same maximum depth after which depth has plateaued
/// (≥ 6).
pub const DEPTH_PLATEAU_TURNS: u32 = 6;

/// Computes the surface graph's state from its live nodes and edges.
pub fn graph_state(
    nodes: &[KgNode],
    edges: &[KgEdge],
    methodology: &Methodology,
    turn_count: u32,
) -> GraphState {
    let live: Vec<&KgNode> = nodes.iter().filter(|n| n.superseded_by.is_none()).collect();
    let mut g: DiGraph<usize, ()> = DiGraph::with_capacity(live.len(), edges.len());
    let mut index: HashMap<&str, NodeIndex> = HashMap::with_capacity(live.len());
    for (i, n) in live.iter().enumerate() {
        index.insert(n.id.as_str(), g.add_node(i));
    }
    let mut state = GraphState {
        turn_count,
        ..GraphState::default()
    };
    let mut degree = vec![0u32; live.len()];
    for e in edges {
        let (Some(&s), Some(&t)) = (
            index.get(e.source_node_id.as_str()),
            index.get(e.target_node_id.as_str()),
        ) else {
            continue;
        };
        *state.edges_by_type.entry(e.edge_type.clone()).or_default() += 1;
        state.edge_count += 1;
        for ix in [s, t] {
            if let Some(d) = degree.get_mut(ix.index()) {
                *d += 1;
            }
        }
        if e.edge_type != "revises" {
            g.add_edge(s, t, ());
        }
    }
    state.node_count = u32::try_from(live.len()).unwrap_or(u32::MAX);
    for n in &live {
        *state.nodes_by_type.entry(n.node_type.clone()).or_default() += 1;
    }
    state.orphan_count =
        u32::try_from(degree.iter().filter(|d| **d == 0).count()).unwrap_or(u32::MAX);
    let depths = depths(&g);
    state.max_depth = depths.max;
    state.avg_depth = if live.is_empty() {
        0.0
    } else {
        f64::from(depths.per_node.iter().sum::<u32>()) / live.len() as f64
    };
    state.longest_chain_path = depths
        .path
        .iter()
        .filter_map(|i| live.get(*i).map(|n| n.id.clone()))
        .collect();
    state.element_depth = element_depth(&g, &live, methodology);
    let (ratio, complete) = chain_completion(&g, &live, methodology);
    state.chain_completion_ratio = ratio;
    state.has_complete_chain = complete;
    state
}

/// Longest chain, in edges, of any directed graph (cycles collapsed as in [`graph_state`]).
pub fn longest_path<N, E>(g: &DiGraph<N, E>) -> u32 {
    depths(&g.map(|i, _| i.index(), |_, _| ())).max
}

struct Depths {
    max: u32,
    per_node: Vec<u32>,
    /// Indices (into the live node list) along one longest chain, source first.
    path: Vec<usize>,
}

fn depths(g: &DiGraph<usize, ()>) -> Depths {
    let condensed = condensation(g.clone(), true);
    let order = toposort(&condensed, None).unwrap_or_default();
    let mut depth = vec![0u32; condensed.node_count()];
    let mut parent: Vec<Option<NodeIndex>> = vec![None; condensed.node_count()];
    for &c in &order {
        let d = depth.get(c.index()).copied().unwrap_or(0);
        for next in condensed.neighbors(c) {
            if let Some(nd) = depth.get_mut(next.index())
                && d + 1 > *nd
            {
                *nd = d + 1;
                if let Some(p) = parent.get_mut(next.index()) {
                    *p = Some(c);
                }
            }
        }
    }
    let mut per_node = vec![0u32; g.node_count()];
    for c in condensed.node_indices() {
        for &member in condensed.node_weight(c).into_iter().flatten() {
            if let Some(slot) = per_node.get_mut(member) {
                *slot = depth.get(c.index()).copied().unwrap_or(0);
            }
        }
    }
    let deepest = condensed.node_indices().max_by_key(|c| {
        (
            depth.get(c.index()).copied().unwrap_or(0),
            std::cmp::Reverse(c.index()),
        )
    });
    let mut path = Vec::new();
    let mut cursor = deepest;
    while let Some(c) = cursor {
        if let Some(&first) = condensed.node_weight(c).and_then(|m| m.iter().min()) {
            path.push(first);
        }
        cursor = parent.get(c.index()).copied().flatten();
    }
    path.reverse();
    let max = deepest
        .and_then(|c| depth.get(c.index()).copied())
        .unwrap_or(0);
    Depths {
        max,
        per_node,
        path,
    }
}

/// Mean length, in edges, of the longest chain leading on from each lowest-level node; 0 when
/// there is none. Measured on the reversed graph, where the chain leading on from a node is
/// the chain leading to it.
fn element_depth(g: &DiGraph<usize, ()>, live: &[&KgNode], m: &Methodology) -> f64 {
    let lowest = m.ontology.nodes.iter().map(|n| n.level).min().unwrap_or(1);
    let mut reversed = g.clone();
    reversed.reverse();
    let onward = depths(&reversed).per_node;
    let reached: Vec<u32> = live
        .iter()
        .enumerate()
        .filter(|(_, n)| m.node_type(&n.node_type).is_some_and(|t| t.level == lowest))
        .map(|(i, _)| onward.get(i).copied().unwrap_or(0))
        .collect();
    if reached.is_empty() {
        0.0
    } else {
        f64::from(reached.iter().sum::<u32>()) / reached.len() as f64
    }
}

/// Share of lowest-level nodes from which a terminal-type node is reachable, and whether any is.
fn chain_completion(g: &DiGraph<usize, ()>, live: &[&KgNode], m: &Methodology) -> (f64, bool) {
    let lowest = m.ontology.nodes.iter().map(|n| n.level).min().unwrap_or(1);
    let is_terminal = |n: &KgNode| m.node_type(&n.node_type).is_some_and(|t| t.terminal);
    let is_start = |n: &KgNode| m.node_type(&n.node_type).is_some_and(|t| t.level == lowest);
    // One reverse search from all terminal nodes marks everything that reaches a terminal.
    let reversed = Reversed(g);
    let mut reaches = vec![false; g.node_count()];
    for ix in g.node_indices() {
        let terminal = g
            .node_weight(ix)
            .and_then(|i| live.get(*i))
            .is_some_and(|n| is_terminal(n));
        if terminal && !reaches.get(ix.index()).copied().unwrap_or(true) {
            let mut dfs = Dfs::new(reversed, ix);
            while let Some(v) = dfs.next(reversed) {
                if let Some(r) = reaches.get_mut(v.index()) {
                    *r = true;
                }
            }
        }
    }
    let starts: Vec<NodeIndex> = g
        .node_indices()
        .filter(|ix| {
            g.node_weight(*ix)
                .and_then(|i| live.get(*i))
                .is_some_and(|n| is_start(n))
        })
        .collect();
    if starts.is_empty() {
        return (0.0, false);
    }
    // A start node that is itself terminal is no chain: it must reach a terminal through edges.
    let complete = starts
        .iter()
        .filter(|ix| {
            g.neighbors(**ix)
                .any(|n| reaches.get(n.index()).copied().unwrap_or(false))
        })
        .count();
    (complete as f64 / starts.len() as f64, complete > 0)
}

/// Stage 5's update of the saturation metrics.
///
/// `depth_history` holds the depths of earlier answers (this turn's arrives in stage 6), so
/// `consecutive_shallow` is the trailing run of surface/shallow answers so far. A turn is
/// zero-yield for `consecutive_low_info` only when it added no node and no edge: an answer
/// that only links known concepts still grows the graph.
pub fn saturation_metrics(
    prev: &SaturationMetrics,
    nodes: &[KgNode],
    nodes_added: u32,
    edges_added: u32,
    concepts_extracted: u32,
    max_depth: u32,
    depth_history: &[ResponseDepth],
) -> SaturationMetrics {
    let consecutive_low_info = if nodes_added == 0 && edges_added == 0 {
        prev.consecutive_low_info + 1
    } else {
        0
    };
    let consecutive_shallow = u32::try_from(
        depth_history
            .iter()
            .rev()
            .take_while(|d| **d <= ResponseDepth::Shallow)
            .count(),
    )
    .unwrap_or(u32::MAX);
    // The original system's rule (seed 001: "6+ turns at same max_depth (only during
    // zero-yield turns)"): a stable maximum depth while the graph grows is widening, not
    // stagnation, so only a turn that added no node and no edge extends the plateau, and any
    // growth ends it.
    let zero_yield = nodes_added == 0 && edges_added == 0;
    let consecutive_depth_plateau = if zero_yield && max_depth <= prev.prev_max_depth {
        prev.consecutive_depth_plateau + 1
    } else {
        0
    };
    let new_info_rate = if concepts_extracted == 0 {
        0.0
    } else {
        f64::from(nodes_added) / f64::from(concepts_extracted)
    };
    let is_saturated = consecutive_low_info >= GRAPH_SATURATED_TURNS
        || consecutive_shallow >= QUALITY_DEGRADED_TURNS
        || consecutive_depth_plateau >= DEPTH_PLATEAU_TURNS;
    SaturationMetrics {
        chao1_ratio: chao1_ratio(nodes),
        new_info_rate,
        consecutive_low_info,
        consecutive_shallow,
        consecutive_depth_plateau,
        prev_max_depth: max_depth.max(prev.prev_max_depth),
        is_saturated,
    }
}

/// `S_obs / S_chao1` with mention counts as abundances: `S_chao1 = S_obs + f1² / (2 f2)`,
/// or the bias-corrected `S_obs + f1 (f1 − 1) / 2` when no concept was mentioned twice.
pub fn chao1_ratio(nodes: &[KgNode]) -> f64 {
    let live = nodes.iter().filter(|n| n.superseded_by.is_none());
    let mut counts: BTreeMap<usize, u32> = BTreeMap::new();
    let mut observed = 0u32;
    for n in live {
        observed += 1;
        *counts.entry(n.source_utterance_ids.len()).or_default() += 1;
    }
    if observed == 0 {
        return 0.0;
    }
    let f1 = f64::from(counts.get(&1).copied().unwrap_or(0));
    let f2 = f64::from(counts.get(&2).copied().unwrap_or(0));
    let s_obs = f64::from(observed);
    let estimate = if f2 > 0.0 {
        s_obs + f1 * f1 / (2.0 * f2)
    } else {
        s_obs + f1 * (f1 - 1.0).max(0.0) / 2.0
    };
    (s_obs / estimate).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests;
