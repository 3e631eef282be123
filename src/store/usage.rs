//! The `llm_usage` table: one row per LLM call, for cost and latency reporting.
//!
//! Role, provider and outcome are free text here; the LLM layer owns their vocabularies. A cost
//! is `None` when the provider's price is unknown, and totals keep that distinction instead of
//! counting unknown as free.

use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};

use super::StoreError;
use super::codec::{NOW, col, count_col, count_param, query_all};

/// One LLM call as the caller reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmUsage {
    pub session_id: String,
    pub turn: u32,
    pub role: String,
    pub provider: String,
    pub model: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub latency_ms: u64,
    /// 1 for a first-try success, 2 after the one retry.
    pub attempts: u32,
    pub outcome: String,
    pub cost_usd: Option<f64>,
}

/// A stored call: the report plus what the store assigned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmUsageRecord {
    pub id: i64,
    pub created_at: String,
    pub usage: LlmUsage,
}

/// Sums over a session's calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageTotals {
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Sum of the known costs; `None` when no call had a known cost.
    pub cost_usd: Option<f64>,
    pub calls: u64,
    /// Calls whose cost is unknown, so a reader can tell a partial total from a complete one.
    pub unpriced_calls: u64,
}

const COLUMNS: &str = "id, session_id, turn, role, provider, model, tokens_in, tokens_out, \
     latency_ms, attempts, outcome, cost_usd, created_at";

pub(crate) fn insert(conn: &Connection, usage: &LlmUsage) -> Result<i64, StoreError> {
    let context = format!(
        "recording an LLM call ({} via {}) of session {}",
        usage.role, usage.provider, usage.session_id
    );
    conn.prepare_cached(&format!(
        "INSERT INTO llm_usage (session_id, turn, role, provider, model, tokens_in, tokens_out,
             latency_ms, attempts, outcome, cost_usd, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, {NOW}) RETURNING id"
    ))
    .and_then(|mut stmt| {
        stmt.query_row(
            params![
                usage.session_id,
                usage.turn,
                usage.role,
                usage.provider,
                usage.model,
                count_param(usage.tokens_in),
                count_param(usage.tokens_out),
                count_param(usage.latency_ms),
                usage.attempts,
                usage.outcome,
                usage.cost_usd,
            ],
            |row| row.get(0),
        )
    })
    .map_err(|e| StoreError::sqlite(context, e))
}

/// A session's calls in the order they were recorded.
pub(crate) fn all(conn: &Connection, session_id: &str) -> Result<Vec<LlmUsageRecord>, StoreError> {
    query_all(
        conn,
        &format!("SELECT {COLUMNS} FROM llm_usage WHERE session_id = ?1 ORDER BY id"),
        [session_id],
        &format!("reading the LLM usage of session {session_id}"),
        decode,
    )
}

pub(crate) fn totals(conn: &Connection, session_id: &str) -> Result<UsageTotals, StoreError> {
    let rows = query_all(
        conn,
        "SELECT COALESCE(SUM(tokens_in), 0) AS tokens_in,
             COALESCE(SUM(tokens_out), 0) AS tokens_out,
             SUM(cost_usd) AS cost_usd,
             COUNT(*) AS calls,
             COUNT(*) - COUNT(cost_usd) AS unpriced_calls
         FROM llm_usage WHERE session_id = ?1",
        [session_id],
        &format!("totalling the LLM usage of session {session_id}"),
        |row| {
            Ok(UsageTotals {
                tokens_in: count_col(row, "tokens_in")?,
                tokens_out: count_col(row, "tokens_out")?,
                cost_usd: col(row, "cost_usd")?,
                calls: count_col(row, "calls")?,
                unpriced_calls: count_col(row, "unpriced_calls")?,
            })
        },
    )?;
    // An aggregate without GROUP BY always yields exactly one row.
    Ok(rows.into_iter().next().unwrap_or_default())
}

fn decode(row: &Row<'_>) -> Result<LlmUsageRecord, StoreError> {
    Ok(LlmUsageRecord {
        id: col(row, "id")?,
        created_at: col(row, "created_at")?,
        usage: LlmUsage {
            session_id: col(row, "session_id")?,
            turn: col(row, "turn")?,
            role: col(row, "role")?,
            provider: col(row, "provider")?,
            model: col(row, "model")?,
            tokens_in: count_col(row, "tokens_in")?,
            tokens_out: count_col(row, "tokens_out")?,
            latency_ms: count_col(row, "latency_ms")?,
            attempts: col(row, "attempts")?,
            outcome: col(row, "outcome")?,
            cost_usd: col(row, "cost_usd")?,
        },
    })
}
