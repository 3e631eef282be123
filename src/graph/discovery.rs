//! Slot discovery for one turn (stage 4.5): the prompt, the strict parse of the LLM's reply, and
//! the loop over node-type batches that turns replies into a [`SlotUpdate`].
//!
//! The LLM is reached through a caller-supplied `ask` function (the pipeline passes its
//! slot-discovery role; tests pass a script), and embeddings through an [`Embedder`]. A turn
//! that added no nodes makes no call at all.

use std::collections::HashSet;
use std::future::Future;

use super::canonical::{
    ProposalBatch, SlotContext, SlotProposal, SlotUpdate, batches, integrate_proposals, slot_text,
};
use super::model::{CanonicalSlot, KgNode};
use crate::config::Methodology;
use crate::contract::{ContractError, extract_object, quote};
use crate::embed::Embedder;

/// Most slots accepted from one reply; a batch holds at most eight nodes, so more is noise.
pub const MAX_SLOTS_PER_REPLY: usize = 16;

/// Why discovery failed; the pipeline reports it as a failed `slot_discovery` stage.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("slot_discovery: the LLM call failed: {0}")]
    Llm(String),
    #[error("slot_discovery: malformed reply: {0}")]
    Contract(#[from] ContractError),
    #[error("slot_discovery: embedding failed: {0}")]
    Embed(#[from] crate::embed::EmbedError),
}

/// The prompt for one batch of same-type nodes.
pub fn slot_prompt(
    methodology: &Methodology,
    node_type: &str,
    nodes: &[&KgNode],
    existing: &[CanonicalSlot],
) -> String {
    let description = methodology
        .node_type(node_type)
        .map(|t| t.description.trim().to_owned())
        .unwrap_or_default();
    let mut p = format!(
        "You group the concepts of a qualitative interview ({}) into canonical concepts.\n\n\
         All concepts below are of type '{node_type}': {description}\n\nConcepts:\n",
        methodology.method.name
    );
    for n in nodes {
        p.push_str(&format!(
            "- {} (respondent said: \"{}\")\n",
            n.label,
            n.source_quote.trim()
        ));
    }
    let same_type: Vec<&str> = existing
        .iter()
        .filter(|s| s.node_type == node_type)
        .map(|s| s.slot_name.as_str())
        .collect();
    if !same_type.is_empty() {
        p.push_str(&format!(
            "\nCanonical concepts already in use (reuse a name when a concept fits): {}\n",
            same_type.join(", ")
        ));
    }
    p.push_str(&format!(
        "\nPropose one canonical concept per distinct idea; paraphrases share one. Name it in \
         snake_case, describe it in one sentence, and list the concept labels exactly as written \
         above. Reply with one JSON object and nothing else:\n\
         {{\"slots\": [{{\"slot_name\": \"...\", \"description\": \"...\", \"node_type\": \"{node_type}\", \
         \"surface_labels\": [\"...\"]}}]}}\n"
    ));
    p
}

/// Parses and validates a slot-discovery reply.
pub fn parse_slot_reply(reply: &str) -> Result<Vec<SlotProposal>, ContractError> {
    let map = extract_object(reply)?;
    let slots = map.get("slots").ok_or_else(|| {
        ContractError::invalid("slots", "missing", &serde_json::Value::Object(map.clone()))
    })?;
    let list = slots
        .as_array()
        .ok_or_else(|| ContractError::invalid("slots", "must be an array", slots))?;
    if list.len() > MAX_SLOTS_PER_REPLY {
        return Err(ContractError::Invalid {
            field: "slots".into(),
            reason: format!("more than {MAX_SLOTS_PER_REPLY} slots"),
            found: list.len().to_string(),
        });
    }
    list.iter()
        .enumerate()
        .map(|(i, v)| parse_slot(i, v))
        .collect()
}

fn parse_slot(i: usize, v: &serde_json::Value) -> Result<SlotProposal, ContractError> {
    let field = |name: &str| format!("slots[{i}].{name}");
    let text = |name: &str| -> Result<String, ContractError> {
        let value = v.get(name).unwrap_or(&serde_json::Value::Null);
        value
            .as_str()
            .map(|s| s.trim().to_owned())
            .ok_or_else(|| ContractError::invalid(field(name), "must be a string", value))
    };
    let slot_name = text("slot_name")?;
    if slot_name.is_empty() {
        return Err(ContractError::invalid(
            field("slot_name"),
            "must not be empty",
            v,
        ));
    }
    let labels_value = v.get("surface_labels").unwrap_or(&serde_json::Value::Null);
    let labels = labels_value.as_array().ok_or_else(|| {
        ContractError::invalid(
            field("surface_labels"),
            "must be an array of strings",
            labels_value,
        )
    })?;
    let surface_labels = labels
        .iter()
        .map(|l| {
            l.as_str().map(str::to_owned).ok_or_else(|| {
                ContractError::invalid(field("surface_labels"), "must be an array of strings", l)
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SlotProposal {
        slot_name: slot_name.to_lowercase().replace([' ', '-'], "_"),
        description: v
            .get("description")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_owned(),
        node_type: text("node_type")?,
        surface_labels,
    })
}

/// Runs discovery over a turn's new nodes: one `ask` per batch (none when no nodes were
/// added), proposals embedded in one batch per reply, merged into `slots` in batch order.
///
/// The first batch of every node type is asked at once, so a turn that adds several types
/// waits for one model round trip rather than one per type: those prompts only list slots of
/// their own type, which no other type's batch can change. Further batches of a type (more
/// than [`MAX_NODES_PER_CALL`](super::canonical::MAX_NODES_PER_CALL) new nodes) are asked
/// afterwards, one at a time, so they see the slots the earlier batches created.
pub async fn discover_slots<F, Fut>(
    methodology: &Methodology,
    slots: &[CanonicalSlot],
    new_nodes: &[KgNode],
    ctx: &SlotContext<'_>,
    embedder: &dyn Embedder,
    new_id: &mut dyn FnMut() -> String,
    mut ask: F,
) -> Result<SlotUpdate, DiscoveryError>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    let mut current: Vec<CanonicalSlot> = slots.to_vec();
    let mut total = SlotUpdate::default();
    let mut mapped: HashSet<String> = ctx.mapped_nodes.clone();
    let all = batches(new_nodes);
    let (first, rest): (Vec<_>, Vec<_>) = all
        .iter()
        .enumerate()
        .partition(|(i, (t, _))| all.iter().position(|(other, _)| other == t) == Some(*i));
    let asked: Vec<Fut> = first
        .iter()
        .map(|(_, (node_type, nodes))| ask(slot_prompt(methodology, node_type, nodes, &current)))
        .collect();
    let replies = futures::future::join_all(asked).await;
    // Parse every first-round reply, then embed all their proposals in one model call.
    let mut parsed: Vec<(Batch<'_>, Vec<SlotProposal>)> = Vec::with_capacity(first.len());
    for ((_, (node_type, nodes)), reply) in first.iter().zip(replies) {
        let reply = reply.map_err(DiscoveryError::Llm)?;
        parsed.push((Batch { node_type, nodes }, proposals_of(&reply)?));
    }
    let texts: Vec<String> = parsed
        .iter()
        .flat_map(|(_, proposals)| {
            proposals
                .iter()
                .map(|p| slot_text(&p.slot_name, &p.description))
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut embeddings = embedder.embed(&refs)?.into_iter();
    let mut state = Running {
        current: &mut current,
        total: &mut total,
        mapped: &mut mapped,
    };
    for (batch, proposals) in &parsed {
        let batch_embeddings: Vec<Vec<f32>> = embeddings.by_ref().take(proposals.len()).collect();
        integrate_batch(batch, proposals, &batch_embeddings, ctx, new_id, &mut state);
    }
    for (_, (node_type, nodes)) in rest {
        let reply = ask(slot_prompt(methodology, node_type, nodes, state.current))
            .await
            .map_err(DiscoveryError::Llm)?;
        let proposals = proposals_of(&reply)?;
        let texts: Vec<String> = proposals
            .iter()
            .map(|p| slot_text(&p.slot_name, &p.description))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let batch_embeddings = embedder.embed(&refs)?;
        let batch = Batch { node_type, nodes };
        integrate_batch(
            &batch,
            &proposals,
            &batch_embeddings,
            ctx,
            new_id,
            &mut state,
        );
    }
    Ok(total)
}

struct Batch<'a> {
    node_type: &'a str,
    nodes: &'a [&'a KgNode],
}

/// The slots, mapped nodes and running total that successive batches update.
struct Running<'a> {
    current: &'a mut Vec<CanonicalSlot>,
    total: &'a mut SlotUpdate,
    mapped: &'a mut HashSet<String>,
}

/// Parses a reply, quoting it when it holds no JSON at all.
fn proposals_of(reply: &str) -> Result<Vec<SlotProposal>, DiscoveryError> {
    parse_slot_reply(reply).map_err(|e| {
        DiscoveryError::Contract(match e {
            ContractError::NoJson(_) => ContractError::NoJson(quote(reply)),
            other => other,
        })
    })
}

/// Merges one batch's proposals (with their embeddings) into the running state.
fn integrate_batch(
    batch: &Batch<'_>,
    proposals: &[SlotProposal],
    embeddings: &[Vec<f32>],
    ctx: &SlotContext<'_>,
    new_id: &mut dyn FnMut() -> String,
    state: &mut Running<'_>,
) {
    let proposal_batch = ProposalBatch {
        node_type: batch.node_type,
        nodes: batch.nodes,
        proposals,
        embeddings,
    };
    let batch_ctx = SlotContext {
        session_id: ctx.session_id,
        turn: ctx.turn,
        mapped_nodes: state.mapped,
    };
    let update = integrate_proposals(state.current, &proposal_batch, &batch_ctx, new_id);
    state.mapped.extend(
        update
            .mappings_created
            .iter()
            .map(|m| m.surface_node_id.clone()),
    );
    merge_update(state.current, state.total, update);
}

/// Folds one batch's update into the running slot list and the turn's total.
fn merge_update(current: &mut Vec<CanonicalSlot>, total: &mut SlotUpdate, update: SlotUpdate) {
    for slot in update.slots_updated {
        if let Some(old) = current.iter_mut().find(|s| s.id == slot.id) {
            *old = slot.clone();
        }
        match total.slots_created.iter_mut().find(|s| s.id == slot.id) {
            Some(created) => *created = slot,
            None => match total.slots_updated.iter_mut().find(|s| s.id == slot.id) {
                Some(existing) => *existing = slot,
                None => total.slots_updated.push(slot),
            },
        }
    }
    current.extend(update.slots_created.iter().cloned());
    total.slots_created.extend(update.slots_created);
    total.mappings_created.extend(update.mappings_created);
    total.promoted.extend(update.promoted);
    total.ignored_proposals.extend(update.ignored_proposals);
}

#[cfg(test)]
mod tests;
