//! A simulated session's outcome, read back from the store: size and shape of its graph, how it
//! ended, and what its model calls cost.
//!
//! Everything is computed from stored rows, never from timing, so the same session always gives
//! the same summary, and a session finished in an earlier run summarises like a fresh one.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::config::Methodology;
use crate::graph::metrics::graph_state;
use crate::graph::records::SlotStatus;
use crate::llm::Role;
use crate::store::{SessionStatus, Store, StoreOps, UsageTotals};

use super::SimulationError;

/// One simulated session in numbers: the comparison table's row (kept as JSON in the team
/// database, so it reads back too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub session_id: String,
    pub persona: String,
    pub concept: String,
    pub methodology: String,
    pub seed: u64,
    pub finished: bool,
    /// Completed turns.
    pub turns: u32,
    /// Live surface nodes (superseded ones excluded).
    pub nodes: u32,
    /// Surface edges between live nodes.
    pub edges: u32,
    /// Longest chain, in edges.
    pub max_depth: u32,
    /// Share of level-1 nodes from which a terminal node is reachable, in [0, 1].
    pub chain_completion: f64,
    pub canonical_slots_active: u32,
    /// Live surface nodes mapped to no canonical slot.
    pub unmapped_nodes: u32,
    pub termination_reason: Option<String>,
    /// Every call of the session, the respondent's included.
    pub usage: UsageTotals,
    /// Tokens (in + out) of the respondent's calls alone.
    pub respondent_tokens: u64,
}

impl RunSummary {
    /// Edges per node; 0 for an empty graph.
    pub fn edge_node_ratio(&self) -> f64 {
        if self.nodes == 0 {
            0.0
        } else {
            f64::from(self.edges) / f64::from(self.nodes)
        }
    }

    /// Tokens in and out of every call.
    pub fn total_tokens(&self) -> u64 {
        self.usage.tokens_in + self.usage.tokens_out
    }
}

/// Reads the summary of session `id`, whose graph follows `methodology`'s ontology.
pub fn summarize(
    store: &Store,
    id: &str,
    methodology: &Methodology,
    persona: &str,
    seed: u64,
) -> Result<RunSummary, SimulationError> {
    let session = store
        .get_session(id)?
        .ok_or_else(|| SimulationError::State {
            id: id.to_owned(),
            message: "not in the database".to_owned(),
        })?;
    let nodes = store.nodes(id)?;
    let edges = store.edges(id)?;
    let turns = session.state.turn_count;
    let graph = graph_state(&nodes, &edges, methodology, turns);
    let mapped: HashSet<String> = store
        .mappings(id)?
        .into_iter()
        .map(|m| m.surface_node_id)
        .collect();
    let unmapped = nodes
        .iter()
        .filter(|n| n.superseded_by.is_none() && !mapped.contains(&n.id))
        .count();
    let active_slots = store
        .slots(id)?
        .iter()
        .filter(|s| s.status == SlotStatus::Active)
        .count();
    let respondent_tokens = store
        .llm_usage(id)?
        .iter()
        .filter(|r| r.usage.role == Role::Respondent.as_str())
        .map(|r| r.usage.tokens_in + r.usage.tokens_out)
        .sum();
    Ok(RunSummary {
        session_id: id.to_owned(),
        persona: persona.to_owned(),
        concept: session.concept,
        methodology: session.methodology,
        seed,
        finished: session.status == SessionStatus::Finished,
        turns,
        nodes: graph.node_count,
        edges: graph.edge_count,
        max_depth: graph.max_depth,
        chain_completion: graph.chain_completion_ratio,
        canonical_slots_active: u32::try_from(active_slots).unwrap_or(u32::MAX),
        unmapped_nodes: u32::try_from(unmapped).unwrap_or(u32::MAX),
        termination_reason: session.termination_reason,
        usage: store.usage_totals(id)?,
        respondent_tokens,
    })
}

/// A session's cost: `$` with four decimals, `n/a` when no call had a known price, and a `+`
/// when some calls had none (the total is then a lower bound).
pub fn format_cost(usage: &UsageTotals) -> String {
    match usage.cost_usd {
        None => "n/a".to_owned(),
        Some(cost) if usage.unpriced_calls > 0 => format!("${cost:.4}+"),
        Some(cost) => format!("${cost:.4}"),
    }
}

/// The end-of-run report of one simulation, one `label: value` line each.
pub fn render_summary(s: &RunSummary) -> String {
    let status = if s.finished { "finished" } else { "unfinished" };
    let rows: Vec<(&str, String)> = vec![
        ("session", s.session_id.clone()),
        ("persona", s.persona.clone()),
        ("concept", s.concept.clone()),
        ("methodology", s.methodology.clone()),
        ("seed", s.seed.to_string()),
        ("status", status.to_owned()),
        ("turns", s.turns.to_string()),
        ("nodes", s.nodes.to_string()),
        ("edges", s.edges.to_string()),
        ("edges per node", format!("{:.2}", s.edge_node_ratio())),
        ("max depth", s.max_depth.to_string()),
        (
            "chain completion",
            format!("{:.0}%", s.chain_completion * 100.0),
        ),
        ("canonical slots", s.canonical_slots_active.to_string()),
        ("unmapped nodes", s.unmapped_nodes.to_string()),
        (
            "termination",
            s.termination_reason
                .clone()
                .unwrap_or_else(|| "-".to_owned()),
        ),
        (
            "tokens",
            format!(
                "{} ({} in, {} out; respondent {}) over {} calls",
                s.total_tokens(),
                s.usage.tokens_in,
                s.usage.tokens_out,
                s.respondent_tokens,
                s.usage.calls
            ),
        ),
        ("cost", format_cost(&s.usage)),
    ];
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (k, v) in &rows {
        out.push_str(&format!("{k:<width$}  {v}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> RunSummary {
        RunSummary {
            session_id: "sim-0123456789abcdef".to_owned(),
            persona: "brief".to_owned(),
            concept: "oat_milk".to_owned(),
            methodology: "means_end_chain".to_owned(),
            seed: 7,
            finished: true,
            turns: 6,
            nodes: 8,
            edges: 6,
            max_depth: 3,
            chain_completion: 0.5,
            canonical_slots_active: 2,
            unmapped_nodes: 4,
            termination_reason: Some("Closing strategy selected".to_owned()),
            usage: UsageTotals {
                tokens_in: 1000,
                tokens_out: 200,
                cost_usd: None,
                calls: 30,
                unpriced_calls: 30,
            },
            respondent_tokens: 300,
        }
    }

    #[test]
    fn the_summary_lists_every_figure() {
        let text = render_summary(&sample());
        for line in [
            "session           sim-0123456789abcdef",
            "edges per node    0.75",
            "chain completion  50%",
            "termination       Closing strategy selected",
            "tokens            1200 (1000 in, 200 out; respondent 300) over 30 calls",
            "cost              n/a",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
    }

    #[test]
    fn costs_say_when_they_are_partial_or_unknown() {
        let mut usage = sample().usage;
        assert_eq!(format_cost(&usage), "n/a");
        usage.cost_usd = Some(0.012_34);
        assert_eq!(format_cost(&usage), "$0.0123+");
        usage.unpriced_calls = 0;
        assert_eq!(format_cost(&usage), "$0.0123");
    }

    #[test]
    fn an_empty_graph_has_no_ratio() {
        let s = RunSummary {
            nodes: 0,
            edges: 0,
            ..sample()
        };
        assert_eq!(s.edge_node_ratio(), 0.0);
    }
}
