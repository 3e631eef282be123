//! Per-turn records of the pipeline: the `scoring_history` decision of each turn and the
//! `stage_checkpoints` that make an interrupted turn resumable.
//!
//! Payloads and stage outputs are opaque JSON here: their shapes belong to the scoring and
//! pipeline modules, which own the types and their versioning.

use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StoreError;
use super::codec::{NOW, col, exec, json_col, query_all, query_opt, to_json};
use crate::domain::Phase;

/// The decision of one turn. Read back with a [`Value`] payload; written with any
/// serialisable one (the pipeline borrows its stage outputs rather than copy them into a
/// `Value`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoringRecord<P = Value> {
    pub session_id: String,
    pub turn: u32,
    pub strategy: String,
    /// `None` for node-free strategies and empty graphs.
    pub focus_node_id: Option<String>,
    pub phase: Phase,
    /// The full decision (signals, alternatives, score decomposition) as the pipeline wrote it.
    pub payload: P,
}

/// One stage's saved output contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub session_id: String,
    pub turn: u32,
    pub stage: String,
    pub output: Value,
    pub created_at: String,
}

/// Inserts a turn's decision; a second decision for the same turn is refused.
pub(crate) fn insert<P: Serialize>(
    conn: &Connection,
    record: &ScoringRecord<P>,
) -> Result<(), StoreError> {
    write(conn, record, "INSERT")
}

/// Replaces a turn's decision (a researcher's override of the pending question).
pub(crate) fn replace<P: Serialize>(
    conn: &Connection,
    record: &ScoringRecord<P>,
) -> Result<(), StoreError> {
    write(conn, record, "INSERT OR REPLACE")
}

fn write<P: Serialize>(
    conn: &Connection,
    record: &ScoringRecord<P>,
    verb: &str,
) -> Result<(), StoreError> {
    let context = format!(
        "saving the scoring of turn {} in session {}",
        record.turn, record.session_id
    );
    let payload = to_json(&record.payload, &context)?;
    exec(
        conn,
        &format!(
            "{verb} INTO scoring_history
                 (session_id, turn, strategy, focus_node_id, phase, payload, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, {NOW})"
        ),
        params![
            record.session_id,
            record.turn,
            record.strategy,
            record.focus_node_id,
            record.phase.as_str(),
            payload
        ],
        &context,
    )?;
    Ok(())
}

pub(crate) fn history(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<ScoringRecord>, StoreError> {
    query_all(
        conn,
        "SELECT session_id, turn, strategy, focus_node_id, phase, payload
         FROM scoring_history WHERE session_id = ?1 ORDER BY turn",
        [session_id],
        &format!("reading the scoring history of session {session_id}"),
        decode_scoring,
    )
}

/// The strategies of the last `limit` turns, oldest first.
pub(crate) fn recent_strategies(
    conn: &Connection,
    session_id: &str,
    limit: u32,
) -> Result<Vec<String>, StoreError> {
    query_all(
        conn,
        "SELECT strategy FROM (
             SELECT strategy, turn FROM scoring_history WHERE session_id = ?1
             ORDER BY turn DESC LIMIT ?2
         ) ORDER BY turn",
        params![session_id, limit],
        &format!("reading the recent strategies of session {session_id}"),
        |row| col(row, "strategy"),
    )
}

/// Saves a stage's output; saving the same stage of the same turn again replaces it (a retried
/// stage supersedes its failed attempt) and keeps its place in the turn's order.
pub(crate) fn put_checkpoint<T: Serialize + ?Sized>(
    conn: &Connection,
    session_id: &str,
    turn: u32,
    stage: &str,
    output: &T,
) -> Result<(), StoreError> {
    let context = format!("saving the {stage} checkpoint of turn {turn} in session {session_id}");
    let output = to_json(output, &context)?;
    exec(
        conn,
        &format!(
            "INSERT INTO stage_checkpoints (session_id, turn, stage, output, created_at)
             VALUES (?1, ?2, ?3, ?4, {NOW})
             ON CONFLICT (session_id, turn, stage) DO UPDATE SET
                 output = excluded.output, created_at = excluded.created_at"
        ),
        params![session_id, turn, stage, output],
        &context,
    )?;
    Ok(())
}

pub(crate) fn checkpoint(
    conn: &Connection,
    session_id: &str,
    turn: u32,
    stage: &str,
) -> Result<Option<Checkpoint>, StoreError> {
    query_opt(
        conn,
        "SELECT session_id, turn, stage, output, created_at FROM stage_checkpoints
         WHERE session_id = ?1 AND turn = ?2 AND stage = ?3",
        params![session_id, turn, stage],
        &format!("reading the {stage} checkpoint of turn {turn} in session {session_id}"),
        decode_checkpoint,
    )
}

/// The names of the stages a turn has checkpointed, in save order, without reading their
/// outputs: what deciding whether a stage still has to run needs.
pub(crate) fn checkpointed_stages(
    conn: &Connection,
    session_id: &str,
    turn: u32,
) -> Result<Vec<String>, StoreError> {
    query_all(
        conn,
        "SELECT stage FROM stage_checkpoints WHERE session_id = ?1 AND turn = ?2 ORDER BY rowid",
        params![session_id, turn],
        &format!("reading the checkpointed stages of turn {turn} in session {session_id}"),
        |row| col(row, "stage"),
    )
}

/// Every checkpoint of a turn, in the order the stages first saved them.
pub(crate) fn checkpoints_for_turn(
    conn: &Connection,
    session_id: &str,
    turn: u32,
) -> Result<Vec<Checkpoint>, StoreError> {
    query_all(
        conn,
        "SELECT session_id, turn, stage, output, created_at FROM stage_checkpoints
         WHERE session_id = ?1 AND turn = ?2 ORDER BY rowid",
        params![session_id, turn],
        &format!("reading the checkpoints of turn {turn} in session {session_id}"),
        decode_checkpoint,
    )
}

fn decode_scoring(row: &Row<'_>) -> Result<ScoringRecord, StoreError> {
    let session_id: String = col(row, "session_id")?;
    let turn: u32 = col(row, "turn")?;
    let what = |column: &str| format!("scoring_history.{column} of turn {turn} in {session_id}");
    let phase: String = col(row, "phase")?;
    let phase = Phase::parse(&phase)
        .ok_or_else(|| StoreError::corrupt(what("phase"), &format!("unknown phase '{phase}'")))?;
    Ok(ScoringRecord {
        strategy: col(row, "strategy")?,
        focus_node_id: col(row, "focus_node_id")?,
        phase,
        payload: json_col(row, "payload", || what("payload"))?,
        turn,
        session_id: session_id.clone(),
    })
}

fn decode_checkpoint(row: &Row<'_>) -> Result<Checkpoint, StoreError> {
    let session_id: String = col(row, "session_id")?;
    let turn: u32 = col(row, "turn")?;
    let stage: String = col(row, "stage")?;
    let output = json_col(row, "output", || {
        format!("stage_checkpoints.output of {stage}, turn {turn} in {session_id}")
    })?;
    Ok(Checkpoint {
        created_at: col(row, "created_at")?,
        session_id,
        turn,
        stage,
        output,
    })
}
