//! Lookups over a [`SessionSnapshot`]'s graph, computed once per snapshot so drawing stays a
//! read: labels by node id and tracking key, nodes grouped by ontology level, and the chains
//! (maximal edge paths from nodes nothing points at) the graph view lists.

use std::collections::HashMap;

use crate::session::views::SessionSnapshot;
use crate::tui::sanitize::clean_line;

/// Most chains kept; a dense graph has exponentially many paths and a screen shows few.
const MAX_CHAINS: usize = 64;

/// Longest chain followed, in nodes (a guard; ontologies have a handful of levels).
const MAX_CHAIN_LEN: usize = 16;

/// `snapshot` as it stood after `turn`: nodes and edges recorded by then, slots first seen by
/// then (active only if promoted by then, their members and support counted among the nodes
/// kept), and the focus trace up to that turn. Node states and rubric rationales exist only
/// for the latest turn, so they are left out of a past one.
pub fn as_of(snapshot: &SessionSnapshot, turn: u32) -> SessionSnapshot {
    let nodes: Vec<_> = snapshot
        .nodes
        .iter()
        .filter(|n| n.turn <= turn)
        .cloned()
        .map(|mut n| {
            n.state = None;
            n.mentions.retain(|m| m.turn <= turn);
            n
        })
        .collect();
    let kept: std::collections::HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    let edges = snapshot
        .edges
        .iter()
        .filter(|e| {
            e.turn <= turn && kept.contains(e.source.as_str()) && kept.contains(e.target.as_str())
        })
        .cloned()
        .collect();
    let slots = snapshot
        .slots
        .iter()
        .filter(|s| s.first_seen_turn <= turn)
        .cloned()
        .map(|mut s| {
            s.members.retain(|m| kept.contains(m.as_str()));
            s.support_count = u32::try_from(s.members.len()).unwrap_or(u32::MAX);
            if s.promoted_turn.is_none_or(|p| p > turn) {
                s.status = crate::graph::records::SlotStatus::Candidate;
                s.promoted_turn = None;
            }
            s
        })
        .collect();
    SessionSnapshot {
        turn_count: turn.min(snapshot.turn_count),
        finished: None,
        focus_history: snapshot
            .focus_history
            .iter()
            .filter(|e| e.turn <= turn)
            .cloned()
            .collect(),
        nodes,
        edges,
        slots,
        rubric_scores: crate::domain::LlmScores::new(),
        new_nodes_per_turn: snapshot
            .new_nodes_per_turn
            .iter()
            .take(usize::try_from(turn).unwrap_or(usize::MAX))
            .copied()
            .collect(),
        ..snapshot.clone()
    }
}

/// Nodes of one ontology level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelGroup {
    pub level: u32,
    pub node_type: String,
    /// Indexes into the snapshot's nodes, in creation order.
    pub nodes: Vec<usize>,
}

/// Derived lookups over one snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphIndex {
    /// Sanitised labels by node id and by tracking key.
    pub labels: HashMap<String, String>,
    /// Node types in level order with their nodes.
    pub levels: Vec<LevelGroup>,
    /// Every node index in the order the graph view lists them (by level, then creation).
    pub order: Vec<usize>,
    /// Maximal paths, longest first, as node indexes.
    pub chains: Vec<Vec<usize>>,
    /// Outgoing edges per node index: `(target index, edge type)`.
    pub outgoing: Vec<Vec<(usize, String)>>,
    /// Incoming edge count per node index.
    pub incoming: Vec<usize>,
}

impl GraphIndex {
    pub fn build(snapshot: &SessionSnapshot) -> Self {
        let index_of: HashMap<&str, usize> = snapshot
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        let mut labels = HashMap::new();
        for n in &snapshot.nodes {
            let label = clean_line(&n.label);
            labels
                .entry(n.tracking_key.clone())
                .or_insert_with(|| label.clone());
            labels.insert(n.id.clone(), label);
        }
        for s in &snapshot.slots {
            labels
                .entry(s.id.clone())
                .or_insert_with(|| clean_line(&s.name));
        }
        let count = snapshot.nodes.len();
        let mut outgoing = vec![Vec::new(); count];
        let mut incoming = vec![0; count];
        for e in &snapshot.edges {
            if let (Some(&s), Some(&t)) = (
                index_of.get(e.source.as_str()),
                index_of.get(e.target.as_str()),
            ) {
                if let Some(out) = outgoing.get_mut(s) {
                    out.push((t, clean_line(&e.edge_type)));
                }
                if let Some(inc) = incoming.get_mut(t) {
                    *inc += 1;
                }
            }
        }
        let levels = levels(snapshot);
        let order = levels
            .iter()
            .flat_map(|g| g.nodes.iter().copied())
            .collect();
        let chains = chains(&outgoing, &incoming);
        Self {
            labels,
            levels,
            order,
            chains,
            outgoing,
            incoming,
        }
    }

    /// The label of a node id, tracking key or slot id, or the id itself.
    pub fn label<'a>(&'a self, id: &'a str) -> &'a str {
        self.labels.get(id).map_or(id, String::as_str)
    }
}

fn levels(snapshot: &SessionSnapshot) -> Vec<LevelGroup> {
    let mut groups: Vec<LevelGroup> = Vec::new();
    for (i, n) in snapshot.nodes.iter().enumerate() {
        match groups.iter_mut().find(|g| g.node_type == n.node_type) {
            Some(g) => g.nodes.push(i),
            None => groups.push(LevelGroup {
                level: n.level,
                node_type: clean_line(&n.node_type),
                nodes: vec![i],
            }),
        }
    }
    // Stable: equal levels keep first-seen order.
    groups.sort_by_key(|g| g.level);
    groups
}

/// Maximal paths starting at nodes without incoming edges; isolated nodes are not chains.
fn chains(outgoing: &[Vec<(usize, String)>], incoming: &[usize]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for start in (0..outgoing.len()).filter(|&i| incoming.get(i) == Some(&0)) {
        if outgoing.get(start).is_none_or(Vec::is_empty) {
            continue;
        }
        let mut path = vec![start];
        walk(outgoing, &mut path, &mut out);
        if out.len() >= MAX_CHAINS {
            break;
        }
    }
    out.truncate(MAX_CHAINS);
    // Stable: equally long chains keep discovery order.
    out.sort_by_key(|c| std::cmp::Reverse(c.len()));
    out
}

fn walk(outgoing: &[Vec<(usize, String)>], path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if out.len() >= MAX_CHAINS {
        return;
    }
    let Some(&last) = path.last() else {
        return;
    };
    let next: Vec<usize> = outgoing
        .get(last)
        .map(|o| {
            o.iter()
                .map(|(t, _)| *t)
                .filter(|t| !path.contains(t))
                .collect()
        })
        .unwrap_or_default();
    if next.is_empty() || path.len() >= MAX_CHAIN_LEN {
        out.push(path.clone());
        return;
    }
    for t in next {
        path.push(t);
        walk(outgoing, path, out);
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(n: usize, list: &[(usize, usize)]) -> (Vec<Vec<(usize, String)>>, Vec<usize>) {
        let mut out = vec![Vec::new(); n];
        let mut inc = vec![0; n];
        for &(s, t) in list {
            out[s].push((t, "leads_to".to_owned()));
            inc[t] += 1;
        }
        (out, inc)
    }

    #[test]
    fn chains_are_maximal_paths_from_sources() {
        // 0 → 2 → 3, 1 → 2, 4 isolated.
        let (out, inc) = edges(5, &[(0, 2), (2, 3), (1, 2)]);
        assert_eq!(chains(&out, &inc), [vec![0, 2, 3], vec![1, 2, 3]]);
    }

    #[test]
    fn cycles_end_a_chain_instead_of_looping() {
        // 0 → 1 → 2 → 1.
        let (out, inc) = edges(3, &[(0, 1), (1, 2), (2, 1)]);
        assert_eq!(chains(&out, &inc), [vec![0, 1, 2]]);
    }
}
