//! Whole-session reads of the per-turn records, for exports: every checkpoint and decision of
//! a session (with `serde_json`'s `float_roundtrip` feature, floats read back bit-exactly), and
//! each turn's span of checkpoint commit times.

use rusqlite::{Connection, params};

use super::codec::{col, json_col, query_all};
use super::{Checkpoint, ScoringRecord, StoreError};
use crate::domain::Phase;

/// Every stage checkpoint of a session, by turn and then in the order the stages saved them.
pub(crate) fn session_checkpoints(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<Checkpoint>, StoreError> {
    query_all(
        conn,
        "SELECT session_id, turn, stage, output, created_at FROM stage_checkpoints
         WHERE session_id = ?1 ORDER BY turn, rowid",
        params![session_id],
        &format!("reading the checkpoints of session {session_id}"),
        |row| {
            let turn: u32 = col(row, "turn")?;
            let stage: String = col(row, "stage")?;
            let output = json_col(row, "output", || {
                format!("stage_checkpoints.output of {stage}, turn {turn} in {session_id}")
            })?;
            Ok(Checkpoint {
                session_id: session_id.to_owned(),
                created_at: col(row, "created_at")?,
                turn,
                stage,
                output,
            })
        },
    )
}

/// Every decision of a session, by turn, with exact payload numbers.
pub(crate) fn scoring_history(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<ScoringRecord>, StoreError> {
    query_all(
        conn,
        "SELECT turn, strategy, focus_node_id, phase, payload
         FROM scoring_history WHERE session_id = ?1 ORDER BY turn",
        params![session_id],
        &format!("reading the scoring history of session {session_id}"),
        |row| {
            let turn: u32 = col(row, "turn")?;
            let what =
                |column: &str| format!("scoring_history.{column} of turn {turn} in {session_id}");
            let phase: String = col(row, "phase")?;
            let phase = Phase::parse(&phase).ok_or_else(|| {
                StoreError::corrupt(what("phase"), &format!("unknown phase '{phase}'"))
            })?;
            Ok(ScoringRecord {
                session_id: session_id.to_owned(),
                turn,
                strategy: col(row, "strategy")?,
                focus_node_id: col(row, "focus_node_id")?,
                phase,
                payload: json_col(row, "payload", || what("payload"))?,
            })
        },
    )
}

/// Milliseconds between the first and the last checkpoint commit of each turn, by turn.
pub(crate) fn turn_spans(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<(u32, u64)>, StoreError> {
    query_all(
        conn,
        "SELECT turn, CAST(round((julianday(MAX(created_at)) - julianday(MIN(created_at)))
                 * 86400000.0) AS INTEGER) AS span_ms
         FROM stage_checkpoints WHERE session_id = ?1 GROUP BY turn ORDER BY turn",
        params![session_id],
        &format!("reading the turn timings of session {session_id}"),
        |row| {
            let span: i64 = col(row, "span_ms")?;
            Ok((col(row, "turn")?, u64::try_from(span).unwrap_or(0)))
        },
    )
}
