//! Stage 4.5, slot discovery: canonical slots for the turn's new nodes, their mappings and the
//! canonical edges; empty when `enable_canonical_slots` is off or nothing new was added.
//!
//! Proposals come from one call covering every node type (or, in offline understanding, from
//! embedding clusters), are embedded in one pass, then integrated by the pure functions of
//! `graph::discovery`. By default the runner runs this stage after the question is out (see
//! `PipelineSettings::inline_slot_discovery`).

use std::collections::HashSet;
use std::sync::Arc;

use super::{Effects, Staged, merge_mappings};
use crate::domain::Understanding;
use crate::graph::canonical::{SlotContext, SlotUpdate, aggregate_edges};
use crate::graph::discovery;
use crate::graph::records::KgNode;
use crate::llm::Role;
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{GraphUpdateOutput, SlotDiscoveryOutput, SlotRef};
use crate::pipeline::ids::IdMinter;
use crate::pipeline::ports::{CallRecord, Ports, llm_error};
use crate::pipeline::runner::TurnRun;
use crate::understanding::propose_slots_offline;

pub(crate) struct Input<'a> {
    pub turn: u32,
    pub update: &'a GraphUpdateOutput,
}

impl<'a> Input<'a> {
    pub fn from_turn(run: &'a TurnRun) -> Result<Self, PipelineError> {
        Ok(Self {
            turn: run.turn,
            update: run.ctx.graph_update()?,
        })
    }
}

pub(crate) async fn run(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<Staged<'static, SlotDiscoveryOutput>, PipelineError> {
    let data = ports.data;
    let enabled = ports.services.settings.enable_canonical_slots;
    let added: HashSet<&str> = input
        .update
        .nodes_added
        .iter()
        .map(|n| n.id.as_str())
        .collect();
    if !enabled || added.is_empty() {
        let summary = if enabled {
            "no new nodes"
        } else {
            "disabled (enable_canonical_slots = false)"
        };
        return Ok(Staged::new(SlotDiscoveryOutput::default(), summary));
    }
    let new_nodes: Vec<_> = data
        .nodes
        .iter()
        .filter(|n| added.contains(n.id.as_str()))
        .cloned()
        .collect();
    let (update, calls) = discover(ports, input.turn, &new_nodes).await?;
    let mappings = merge_mappings(&data.mappings, &update.mappings_created);
    let mut edge_ids = IdMinter::new(&data.session_id, input.turn, "canonical_edge");
    let mut new_id = || edge_ids.mint();
    let canonical_edges = aggregate_edges(
        &data.edges,
        &mappings,
        &data.canonical_edges,
        &data.session_id,
        &mut new_id,
    );
    let mut tracker = data.tracker.clone();
    for m in &update.mappings_created {
        tracker.map_to_slot(&m.surface_node_id, &m.canonical_slot_id);
    }
    let output = SlotDiscoveryOutput {
        slots_created: update.slots_created.iter().map(SlotRef::from).collect(),
        slots_updated: update.slots_updated.iter().map(SlotRef::from).collect(),
        mappings_created: update.mappings_created.clone(),
    };
    let summary = format!(
        "{} slots created, {} updated, {} mappings, {} promoted, {} LLM calls",
        output.slots_created.len(),
        output.slots_updated.len(),
        output.mappings_created.len(),
        update.promoted.len(),
        calls.len()
    );
    Ok(Staged {
        effects: Effects {
            slots_created: update.slots_created,
            slots_updated: update.slots_updated,
            mappings: update.mappings_created,
            canonical_edges: Some(canonical_edges),
            tracker: Some(tracker),
            ..Effects::default()
        },
        calls,
        ..Staged::new(output, summary)
    })
}

/// Proposals for the new nodes' groups, embedded and integrated with the existing slots.
async fn discover(
    ports: &Ports<'_>,
    turn: u32,
    new_nodes: &[KgNode],
) -> Result<(SlotUpdate, Vec<CallRecord>), PipelineError> {
    let data = ports.data;
    let methodology = &ports.spec.methodology;
    let groups = discovery::groups(new_nodes);
    let mut calls = Vec::new();
    let proposals = if groups.is_empty() {
        Vec::new()
    } else if ports.spec.understanding == Understanding::Offline {
        groups
            .iter()
            .flat_map(|(node_type, nodes)| {
                propose_slots_offline(
                    node_type,
                    nodes,
                    &data.slots,
                    methodology.thresholds.canonical_similarity_threshold,
                )
            })
            .collect()
    } else {
        let prompt = discovery::slot_prompt(methodology, &groups, &data.slots);
        let schema = Arc::new(crate::prompts::schema::slot_schema(methodology));
        let request = ports
            .services
            .llm
            .request(Role::SlotDiscovery, String::new(), prompt, None, turn)
            .map_err(|e| llm_error(Role::SlotDiscovery, e))?
            .with_schema(schema);
        let (proposals, call) = ports
            .call_and_read(&request, |text| {
                discovery::proposals_of(text).map_err(|e| PipelineError::discovery(e, None))
            })
            .await?;
        calls.push(call);
        proposals
    };
    let texts = discovery::proposal_texts(&proposals);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let embeddings = if refs.is_empty() {
        Vec::new()
    } else {
        ports.services.embedder.embed(&refs)?
    };
    let mapped: HashSet<String> = data
        .mappings
        .iter()
        .map(|m| m.surface_node_id.clone())
        .collect();
    let ctx = SlotContext {
        session_id: &data.session_id,
        turn,
        mapped_nodes: &mapped,
        thresholds: methodology.thresholds,
    };
    let mut slot_ids = IdMinter::new(&data.session_id, turn, "slot");
    let mut new_id = || slot_ids.mint();
    let update = discovery::integrate_turn(
        &data.slots,
        &groups,
        &proposals,
        &embeddings,
        &ctx,
        &mut new_id,
    );
    Ok((update, calls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::contracts::NodeRef;
    use crate::pipeline::stages::fixture::Fixture;

    fn added(fx: &Fixture, ids: &[&str]) -> GraphUpdateOutput {
        GraphUpdateOutput {
            nodes_added: fx
                .data
                .nodes
                .iter()
                .filter(|n| ids.contains(&n.id.as_str()))
                .map(NodeRef::from)
                .collect(),
            edges_added: Vec::new(),
            node_count: 2,
            edge_count: 0,
        }
    }

    #[tokio::test]
    async fn one_call_names_slots_for_the_new_nodes_and_maps_them() {
        let mut fx = Fixture::new();
        let creamy = fx.add_node("creamy texture", "attribute", 1);
        let froth = fx.add_node("froths well", "attribute", 1);
        let staged = discover(&fx, &[&creamy, &froth]).await;
        let names: Vec<&str> = staged
            .output
            .slots_created
            .iter()
            .map(|s| s.slot_name.as_str())
            .collect();
        assert_eq!(names, ["creaminess", "froth_quality"]);
        assert_eq!(staged.calls.len(), 1, "one call for every node type");
        let mapped: Vec<&str> = staged
            .effects
            .mappings
            .iter()
            .map(|m| m.surface_node_id.as_str())
            .collect();
        assert_eq!(mapped, [creamy.as_str(), froth.as_str()]);
        let tracker = staged.effects.tracker.as_ref().unwrap();
        assert!(tracker.slot_of.contains_key(&creamy));
        assert!(staged.effects.canonical_edges.is_some());
    }

    async fn discover(fx: &Fixture, ids: &[&str]) -> Staged<'static, SlotDiscoveryOutput> {
        let update = added(fx, ids);
        run(
            &Input {
                turn: 1,
                update: &update,
            },
            &fx.ports(),
        )
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn nothing_new_or_slots_off_is_an_empty_output_without_a_call() {
        let mut fx = Fixture::new();
        let staged = discover(&fx, &[]).await;
        assert_eq!(staged.summary, "no new nodes");
        assert!(staged.calls.is_empty() && staged.output.slots_created.is_empty());
        let node = fx.add_node("creamy texture", "attribute", 1);
        fx.services.settings.enable_canonical_slots = false;
        let staged = discover(&fx, &[&node]).await;
        assert_eq!(staged.summary, "disabled (enable_canonical_slots = false)");
        assert!(staged.calls.is_empty() && staged.effects.tracker.is_none());
    }
}
