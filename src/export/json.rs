//! The `json` export: the whole session in one document (see the module doc of
//! [`super`] for which keys hold wall-clock values).

use std::io::{self, Write};

use serde_json::{Map, Value, json};

use super::data::{SessionData, TurnRecord, usage_by};

/// Identifies the document; bumped when a key changes meaning or disappears.
pub const FORMAT_VERSION: u32 = 1;

pub(crate) fn write(data: &SessionData, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &document(data)).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// The export as a JSON value.
pub(crate) fn document(data: &SessionData) -> Value {
    let s = &data.session;
    json!({
        "format": "interviewer-session-export",
        "format_version": FORMAT_VERSION,
        "session": {
            "id": s.id,
            "concept": s.concept,
            "methodology": s.methodology,
            "max_turns": s.max_turns,
            "status": s.status,
            "termination_reason": s.termination_reason,
            "turn_count": s.state.turn_count,
            "created_at": s.created_at,
            "updated_at": s.updated_at,
            "imported": data.import,
        },
        "config": {
            "concept_id": s.concept,
            "concept_name": s.state.concept_name,
            "methodology": s.methodology,
            "max_turns": s.max_turns,
        },
        "turns": data.turns.iter().map(turn).collect::<Vec<_>>(),
        "focus_tracing": s.state.focus_history,
        "utterances": data.utterances.iter().map(|u| {
            let mut row = json!({
                "id": u.id,
                "turn": u.turn,
                "speaker": u.speaker,
                "text": u.text,
                "created_at": u.created_at,
            });
            // A spoken answer says how it was heard.
            if let (Some(speech), Some(map)) = (data.speech.get(&u.id), row.as_object_mut()) {
                map.insert("speech".to_owned(), json!(speech));
            }
            row
        }).collect::<Vec<_>>(),
        "graph": {
            "nodes": data.nodes.iter().map(without_embedding).collect::<Vec<_>>(),
            "edges": data.edges,
        },
        "canonical_graph": {
            "slots": data.slots.iter().map(without_embedding).collect::<Vec<_>>(),
            "mappings": data.mappings,
            "edges": data.canonical_edges,
        },
        "llm_usage": usage(data),
    })
}

fn turn(record: &TurnRecord) -> Value {
    json!({
        "turn": record.turn,
        "phase": record.phase,
        "turn_result": record.result,
        "llm_scores": record.llm_scores,
        "override": record.question_override,
    })
}

/// A record's JSON without its embedding (384 floats that no export reader needs).
fn without_embedding(record: &impl serde::Serialize) -> Value {
    let mut value = serde_json::to_value(record).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.shift_remove("embedding");
    }
    value
}

fn usage(data: &SessionData) -> Value {
    let by_role: Map<String, Value> = usage_by(&data.usage, |c| c.usage.role.clone())
        .into_iter()
        .map(|(role, totals)| (role, json!(totals)))
        .collect();
    let by_turn: Vec<Value> = usage_by(&data.usage, |c| c.usage.turn)
        .into_iter()
        .map(|(turn, totals)| {
            let mut value = json!(totals);
            if let Some(map) = value.as_object_mut() {
                map.shift_insert(0, "turn".to_owned(), json!(turn));
            }
            value
        })
        .collect();
    let calls: Vec<Value> = data
        .usage
        .iter()
        .map(|c| {
            let u = &c.usage;
            json!({
                "turn": u.turn,
                "role": u.role,
                "provider": u.provider,
                "model": u.model,
                "tokens_in": u.tokens_in,
                "tokens_out": u.tokens_out,
                "attempts": u.attempts,
                "outcome": u.outcome,
                "cost_usd": u.cost_usd,
                "latency_ms": u.latency_ms,
                "created_at": c.created_at,
            })
        })
        .collect();
    json!({
        "totals": data.usage_totals,
        "by_role": by_role,
        "by_turn": by_turn,
        "calls": calls,
    })
}
