//! The `sessions` table: one row per interview, holding the mutable [`SessionState`] and the
//! node tracker as JSON next to the columns that listing and filtering need.
//!
//! The tracker is stored as the caller's JSON value (it carries its own `schema_version`); this
//! module neither knows nor checks its shape, and hands it back as the stored text, unparsed,
//! so that a damaged tracker is for its reader to judge (the pipeline starts a fresh one, seed
//! 000 Path 8) rather than a reason the whole session cannot be read.

use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};

use super::StoreError;
use super::codec::{NOW, col, exec, json_col, query_all, query_opt, to_json};
use crate::domain::SessionState;

/// Whether an interview can still be driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    Active,
    Finished,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Finished => "finished",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "active" => Some(Self::Active),
            "finished" => Some(Self::Finished),
            _ => None,
        }
    }
}

/// What a new session is created with.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSession {
    pub id: String,
    pub methodology: String,
    pub concept: String,
    pub max_turns: u32,
    /// The initial state (turn count 0); `state.turn_count` is mirrored into a column.
    pub state: SessionState,
}

/// A stored session, in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub id: String,
    pub methodology: String,
    pub concept: String,
    pub max_turns: u32,
    pub status: SessionStatus,
    /// Why the interview ended; `None` while active.
    pub termination_reason: Option<String>,
    /// Why the last turn failed, while it stays failed.
    pub failure: Option<TurnFailure>,
    pub state: SessionState,
    /// The node tracker's persisted JSON text, unparsed (it may be damaged); `None` until the
    /// first turn saves one.
    pub node_tracker: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// Why a session's last turn failed (seed 004's ERROR state: the node, message and time); the
/// next successful turn clears it, and `resume` retries from the failed stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnFailure {
    pub turn: u32,
    /// The stage's number and name, e.g. `3 extraction`.
    pub stage: String,
    pub message: String,
    /// RFC 3339 time of the failure.
    pub at: String,
}

impl TurnFailure {
    /// `failed at stage 3 extraction in turn 2: … — resume retries`, as `sessions`, the start
    /// screen and `resume` say it.
    pub fn describe(&self) -> String {
        format!(
            "failed at stage {} in turn {}: {} — resume retries",
            self.stage, self.turn, self.message
        )
    }
}

/// The status word of a session: `failed` for an active session whose last turn failed, else
/// the stored status.
pub fn status_word(status: SessionStatus, failure: Option<&TurnFailure>) -> &'static str {
    match (status, failure) {
        (SessionStatus::Active, Some(_)) => "failed",
        (s, _) => s.as_str(),
    }
}

/// One line of the session list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: String,
    pub concept: String,
    pub methodology: String,
    /// Completed turns.
    pub turns: u32,
    pub status: SessionStatus,
    /// Why the last turn failed, while it stays failed.
    pub failure: Option<TurnFailure>,
    pub updated_at: String,
}

/// How the ids of simulated sessions start (see `simulate::session_id`); the session list and
/// the start screen mark them.
pub const SIMULATION_ID_PREFIX: &str = "sim-";

impl SessionSummary {
    /// `active`, `finished` or `failed` (see [`status_word`]).
    pub fn status_word(&self) -> &'static str {
        status_word(self.status, self.failure.as_ref())
    }

    /// Whether a synthetic respondent answered this session (`interviewer simulate`).
    pub fn is_simulation(&self) -> bool {
        self.id.starts_with(SIMULATION_ID_PREFIX)
    }
}

/// The shortest start of each id, at least `min` characters, that no other id of `ids`
/// shares: what a user can type to name it (`resume`, `sessions show`, `export`).
pub fn short_ids(ids: &[&str], min: usize) -> Vec<String> {
    ids.iter()
        .map(|id| {
            let chars: Vec<char> = id.chars().collect();
            let mut length = min.min(chars.len());
            while length < chars.len() {
                let prefix: String = chars.iter().take(length).collect();
                let shared = ids
                    .iter()
                    .filter(|other| *other != id && other.starts_with(&prefix))
                    .count();
                if shared == 0 {
                    break;
                }
                length += 1;
            }
            chars.iter().take(length).collect()
        })
        .collect()
}

/// The assignment that marks a session as most recently active (see the schema's `activity`).
const TOUCH: &str = "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), \
     activity = (SELECT COALESCE(MAX(activity), 0) + 1 FROM sessions)";

pub(crate) fn create(conn: &Connection, new: &NewSession) -> Result<(), StoreError> {
    let context = format!("creating session {}", new.id);
    let state = to_json(&new.state, &context)?;
    exec(
        conn,
        &format!(
            "INSERT INTO sessions (id, methodology, concept, max_turns, status, turn_count, state,
                 created_at, updated_at, activity)
             VALUES (?1, ?2, ?3, ?4, 'active', ?5, ?6, {NOW}, {NOW},
                 (SELECT COALESCE(MAX(activity), 0) + 1 FROM sessions))"
        ),
        params![
            new.id,
            new.methodology,
            new.concept,
            new.max_turns,
            new.state.turn_count,
            state
        ],
        &context,
    )?;
    Ok(())
}

pub(crate) fn get(conn: &Connection, id: &str) -> Result<Option<SessionRecord>, StoreError> {
    query_opt(
        conn,
        "SELECT id, methodology, concept, max_turns, status, termination_reason, failure,
             state, node_tracker, created_at, updated_at
         FROM sessions WHERE id = ?1",
        [id],
        &format!("reading session {id}"),
        decode_record,
    )
}

pub(crate) fn list(conn: &Connection) -> Result<Vec<SessionSummary>, StoreError> {
    query_all(
        conn,
        "SELECT id, concept, methodology, turn_count, status, failure, updated_at
         FROM sessions ORDER BY activity DESC",
        [],
        "listing sessions",
        |row| {
            let id: String = col(row, "id")?;
            Ok(SessionSummary {
                status: status_col(row, &id)?,
                failure: failure_col(row, &id)?,
                concept: col(row, "concept")?,
                methodology: col(row, "methodology")?,
                turns: col(row, "turn_count")?,
                updated_at: col(row, "updated_at")?,
                id,
            })
        },
    )
}

pub(crate) fn update_state(
    conn: &Connection,
    id: &str,
    state: &SessionState,
    node_tracker: &(impl Serialize + ?Sized),
) -> Result<(), StoreError> {
    let context = format!("saving the state of session {id}");
    let state_json = to_json(state, &context)?;
    let tracker_json = to_json(node_tracker, &context)?;
    let changed = exec(
        conn,
        &format!(
            "UPDATE sessions SET state = ?2, node_tracker = ?3, turn_count = ?4, failure = NULL,
                 {TOUCH}
             WHERE id = ?1"
        ),
        params![id, state_json, tracker_json, state.turn_count],
        &context,
    )?;
    found(changed, id)
}

/// Saves the node tracker alone (stages 4 and 6 mutate it mid-turn).
pub(crate) fn update_tracker(
    conn: &Connection,
    id: &str,
    node_tracker: &(impl Serialize + ?Sized),
) -> Result<(), StoreError> {
    let context = format!("saving the node tracker of session {id}");
    let tracker_json = to_json(node_tracker, &context)?;
    let changed = exec(
        conn,
        &format!("UPDATE sessions SET node_tracker = ?2, {TOUCH} WHERE id = ?1"),
        params![id, tracker_json],
        &context,
    )?;
    found(changed, id)
}

pub(crate) fn finish(conn: &Connection, id: &str, reason: &str) -> Result<(), StoreError> {
    let changed = exec(
        conn,
        &format!(
            "UPDATE sessions SET status = 'finished', termination_reason = ?2, {TOUCH}
             WHERE id = ?1"
        ),
        params![id, reason],
        &format!("finishing session {id}"),
    )?;
    found(changed, id)
}

/// Records why the session's last turn failed (`None` clears it).
pub(crate) fn set_failure(
    conn: &Connection,
    id: &str,
    failure: Option<&TurnFailure>,
) -> Result<(), StoreError> {
    let context = format!("recording the failure of session {id}");
    let text = failure.map(|f| to_json(f, &context)).transpose()?;
    let changed = exec(
        conn,
        &format!("UPDATE sessions SET failure = ?2, {TOUCH} WHERE id = ?1"),
        params![id, text],
        &context,
    )?;
    found(changed, id)
}

/// Records the simulated respondent (persona id and seed) of session `id`.
pub(crate) fn set_persona(
    conn: &Connection,
    id: &str,
    persona: &str,
    seed: u64,
) -> Result<(), StoreError> {
    let context = format!("recording the persona of session {id}");
    // Seeds are stored as their bit pattern: SQLite integers are signed 64-bit.
    let stored = i64::from_ne_bytes(seed.to_ne_bytes());
    let changed = exec(
        conn,
        "UPDATE sessions SET persona = ?2, persona_seed = ?3 WHERE id = ?1",
        params![id, persona, stored],
        &context,
    )?;
    found(changed, id)
}

/// The simulated respondent of session `id` (persona id and seed), `None` for a person's.
pub(crate) fn persona(conn: &Connection, id: &str) -> Result<Option<(String, u64)>, StoreError> {
    let row: Option<(Option<String>, Option<i64>)> = query_opt(
        conn,
        "SELECT persona, persona_seed FROM sessions WHERE id = ?1",
        params![id],
        &format!("reading the persona of session {id}"),
        |row| Ok((col(row, "persona")?, col(row, "persona_seed")?)),
    )?;
    Ok(match row {
        Some((Some(persona), seed)) => {
            Some((persona, u64::from_ne_bytes(seed.unwrap_or(0).to_ne_bytes())))
        }
        _ => None,
    })
}

/// Marks a session as the most recently active (a new utterance, for instance).
pub(crate) fn touch(conn: &Connection, id: &str) -> Result<(), StoreError> {
    let changed = exec(
        conn,
        &format!("UPDATE sessions SET {TOUCH} WHERE id = ?1"),
        [id],
        &format!("updating the activity of session {id}"),
    )?;
    found(changed, id)
}

pub(crate) fn delete(conn: &Connection, id: &str) -> Result<(), StoreError> {
    let changed = exec(
        conn,
        "DELETE FROM sessions WHERE id = ?1",
        [id],
        &format!("deleting session {id}"),
    )?;
    found(changed, id)
}

fn found(changed: usize, id: &str) -> Result<(), StoreError> {
    if changed == 0 {
        Err(StoreError::not_found("session", id))
    } else {
        Ok(())
    }
}

fn status_col(row: &Row<'_>, id: &str) -> Result<SessionStatus, StoreError> {
    let text: String = col(row, "status")?;
    SessionStatus::parse(&text).ok_or_else(|| {
        StoreError::corrupt(
            format!("sessions.status of session {id}"),
            &format!("unknown status '{text}'"),
        )
    })
}

fn failure_col(row: &Row<'_>, id: &str) -> Result<Option<TurnFailure>, StoreError> {
    let text: Option<String> = col(row, "failure")?;
    text.map(|t| {
        serde_json::from_str(&t)
            .map_err(|e| StoreError::corrupt(format!("sessions.failure of session {id}"), &e))
    })
    .transpose()
}

fn decode_record(row: &Row<'_>) -> Result<SessionRecord, StoreError> {
    let id: String = col(row, "id")?;
    let node_tracker: Option<String> = col(row, "node_tracker")?;
    Ok(SessionRecord {
        methodology: col(row, "methodology")?,
        concept: col(row, "concept")?,
        max_turns: col(row, "max_turns")?,
        status: status_col(row, &id)?,
        termination_reason: col(row, "termination_reason")?,
        failure: failure_col(row, &id)?,
        state: json_col(row, "state", || format!("sessions.state of session {id}"))?,
        node_tracker,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_grow_until_no_other_id_shares_them() {
        let ids = [
            "8f3db03a-f012-4941",
            "8f3db03a-9999-0000",
            "1234abcd-0000",
            "sim-00ff00ff00ff00ff",
            "short",
        ];
        assert_eq!(
            short_ids(&ids, 8),
            ["8f3db03a-f", "8f3db03a-9", "1234abcd", "sim-00ff", "short"]
        );
    }
}
