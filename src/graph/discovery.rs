//! Slot discovery for one turn (stage 4.5), the pure part: the one prompt that covers every node
//! type of the turn's new nodes, the strict parse of its reply, and the integration of the
//! proposals (wherever they came from: the LLM's reply or the offline clustering) into a
//! [`SlotUpdate`].
//!
//! The call itself, and the embedding of the proposals, belong to the pipeline's stage: this
//! module does no I/O. A turn that added no nodes has no groups, so the stage makes no call.

use std::collections::HashSet;

use super::canonical::{
    ProposalBatch, SlotContext, SlotProposal, SlotUpdate, integrate_proposals, slot_text,
};
use super::records::{CanonicalSlot, KgNode};
use crate::config::Methodology;
use crate::reply_json::{ContractError, extract_object, quote};

/// Most slots accepted from one reply: the one call covers every type of the turn, each with
/// a handful of new nodes, so more than this is noise.
pub const MAX_SLOTS_PER_REPLY: usize = 32;

/// Why discovery failed; the pipeline reports it as a failed `slot_discovery` stage.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("slot_discovery: the LLM call failed: {0}")]
    Llm(String),
    #[error("slot_discovery: malformed reply: {0}")]
    Contract(#[from] ContractError),
}

/// A turn's new nodes of one type.
pub type TypeGroup<'a> = (String, Vec<&'a KgNode>);

/// Groups a turn's new nodes by type, types in first-seen order. No nodes, no groups (and so
/// no call).
pub fn groups(new_nodes: &[KgNode]) -> Vec<TypeGroup<'_>> {
    let mut by_type: Vec<TypeGroup<'_>> = Vec::new();
    for n in new_nodes {
        match by_type.iter_mut().find(|(t, _)| *t == n.node_type) {
            Some((_, list)) => list.push(n),
            None => by_type.push((n.node_type.clone(), vec![n])),
        }
    }
    by_type
}

/// The one prompt for a turn: a section per node type with its new concepts and the slots of
/// that type already in use (seed 001: one batched call per turn).
pub fn slot_prompt(
    methodology: &Methodology,
    groups: &[TypeGroup<'_>],
    existing: &[CanonicalSlot],
) -> String {
    let mut p = format!(
        "You group the concepts of a qualitative interview ({}) into canonical concepts.          Concepts are grouped by type; a canonical concept never mixes types.\n",
        methodology.method.name
    );
    for (node_type, nodes) in groups {
        let description = methodology
            .node_type(node_type)
            .map(|t| t.description.trim().to_owned())
            .unwrap_or_default();
        p.push_str(&format!(
            "\n## Concepts of type '{node_type}': {description}\n"
        ));
        for n in nodes {
            p.push_str(&format!(
                "- {} (respondent said: \"{}\")\n",
                n.label,
                n.source_quote.trim()
            ));
        }
        let same_type: Vec<&str> = existing
            .iter()
            .filter(|s| s.node_type == *node_type)
            .map(|s| s.slot_name.as_str())
            .collect();
        if !same_type.is_empty() {
            p.push_str(&format!(
                "Canonical concepts of this type already in use (reuse a name when a concept \
                 fits): {}\n",
                same_type.join(", ")
            ));
        }
    }
    p.push_str(
        "\nPropose one canonical concept per distinct idea; paraphrases share one. Name it in \
         snake_case, describe it in one sentence, give its type, and list the concept labels \
         exactly as written above. Reply with one JSON object and nothing else:\n\
         {\"slots\": [{\"slot_name\": \"...\", \"description\": \"...\", \"node_type\": \"...\", \
         \"surface_labels\": [\"...\"]}]}\n",
    );
    p
}

/// The texts to embed for `proposals`, in order (one embedding call for the whole turn).
pub fn proposal_texts(proposals: &[SlotProposal]) -> Vec<String> {
    proposals
        .iter()
        .map(|p| slot_text(&p.slot_name, &p.description))
        .collect()
}

/// Integrates a turn's proposals into `existing`, group by group in order, so a later group
/// sees the slots an earlier one created. `embeddings[i]` embeds [`proposal_texts`]`[i]`. A
/// proposal whose type has no group this turn is ignored and named in `ignored_proposals`.
pub fn integrate_turn(
    existing: &[CanonicalSlot],
    groups: &[TypeGroup<'_>],
    proposals: &[SlotProposal],
    embeddings: &[Vec<f32>],
    ctx: &SlotContext<'_>,
    new_id: &mut dyn FnMut() -> String,
) -> SlotUpdate {
    let mut current: Vec<CanonicalSlot> = existing.to_vec();
    let mut total = SlotUpdate::default();
    let mut mapped: HashSet<String> = ctx.mapped_nodes.clone();
    for (node_type, nodes) in groups {
        let (mine, vectors): (Vec<SlotProposal>, Vec<Vec<f32>>) = proposals
            .iter()
            .zip(embeddings)
            .filter(|(p, _)| p.node_type.eq_ignore_ascii_case(node_type))
            .map(|(p, e)| (p.clone(), e.clone()))
            .unzip();
        let batch = ProposalBatch {
            node_type,
            nodes,
            proposals: &mine,
            embeddings: &vectors,
        };
        let batch_ctx = SlotContext {
            session_id: ctx.session_id,
            turn: ctx.turn,
            mapped_nodes: &mapped,
            thresholds: ctx.thresholds,
        };
        let update = integrate_proposals(&current, &batch, &batch_ctx, new_id);
        mapped.extend(
            update
                .mappings_created
                .iter()
                .map(|m| m.surface_node_id.clone()),
        );
        merge_update(&mut current, &mut total, update);
    }
    total.ignored_proposals.extend(
        proposals
            .iter()
            .filter(|p| {
                !groups
                    .iter()
                    .any(|(t, _)| p.node_type.eq_ignore_ascii_case(t))
            })
            .map(|p| {
                format!(
                    "{} ({}): no new node of that type",
                    p.slot_name, p.node_type
                )
            }),
    );
    total
}

/// Parses a reply, quoting it when it holds no JSON at all.
pub fn proposals_of(reply: &str) -> Result<Vec<SlotProposal>, DiscoveryError> {
    parse_slot_reply(reply).map_err(|e| {
        DiscoveryError::Contract(match e {
            ContractError::NoJson(_) => ContractError::NoJson(quote(reply)),
            other => other,
        })
    })
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
