//! Versioned migrations: `PRAGMA user_version` counts the applied steps of [`MIGRATIONS`].
//!
//! Each step runs in its own `BEGIN IMMEDIATE` transaction together with the version bump, so a
//! crash mid-migration leaves the file at the previous version and two processes opening a new
//! file at once cannot both apply a step. Steps are append-only: never edit a released step,
//! add a new one.

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

/// The schema version this build writes and the newest it can read.
pub const SCHEMA_VERSION: i64 = 5;

/// Ordered migration steps; step `i` takes the file from version `i` to `i + 1`.
const MIGRATIONS: [&str; 5] = [V1, V2, V3, V4, V5];

/// Version 5: sessions imported from a transcript file (`interviewer import`), by the file's
/// content hash, with who interviewed and answered, how much each said and, as JSON, the
/// transcript's time of each utterance; deleted with the session.
const V5: &str = "CREATE TABLE imports (
    content_hash        TEXT PRIMARY KEY NOT NULL,
    session_id          TEXT NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE,
    file                TEXT NOT NULL,
    format              TEXT NOT NULL,
    interviewer         TEXT NOT NULL,
    respondent          TEXT NOT NULL,
    interviewer_words   INTEGER NOT NULL CHECK (interviewer_words >= 0),
    respondent_words    INTEGER NOT NULL CHECK (respondent_words >= 0),
    interviewer_seconds REAL,
    respondent_seconds  REAL,
    cue_times           TEXT,
    complete            INTEGER NOT NULL CHECK (complete IN (0, 1)),
    imported_at         TEXT NOT NULL
) STRICT;";

/// Version 4: how a spoken answer was heard (speech model, audio length, mean token
/// log-probability, the kept audio file), one row per answer that came from speech; deleted
/// with its utterance.
const V4: &str = "CREATE TABLE utterance_speech (
    utterance_id     TEXT PRIMARY KEY NOT NULL REFERENCES utterances (id) ON DELETE CASCADE,
    model            TEXT NOT NULL,
    duration_seconds REAL NOT NULL CHECK (duration_seconds >= 0),
    mean_logprob     REAL NOT NULL,
    audio_file       TEXT
) STRICT;";

/// Version 3: the simulated respondent of a session made by `simulate` (persona id and seed),
/// so a study can compare personas from stored sessions; `NULL` for a person's interview.
const V3: &str = "ALTER TABLE sessions ADD COLUMN persona TEXT;
ALTER TABLE sessions ADD COLUMN persona_seed INTEGER;";

/// Version 2: `sessions.failure`, why the session's last turn failed (seed 004's ERROR state:
/// the stage, message and time), as JSON; NULL for a session whose last turn completed. A
/// database of version 1 gains the column empty.
const V2: &str = "ALTER TABLE sessions ADD COLUMN failure TEXT;";

/// Version 1: every table of the architecture's "Storage" section.
///
/// Tables are STRICT so a wrongly typed bind fails loudly. Child tables cascade from `sessions`
/// so deleting a session removes everything it owns. `kg_nodes.superseded_by` is a deferred
/// foreign key: one batch may mark an old node superseded by a node that appears later in the
/// same batch. `sessions.activity` is a store-wide counter bumped on every change to a session;
/// it orders [`list_sessions`](super::StoreOps::list_sessions) exactly, where millisecond
/// timestamps could tie.
const V1: &str = "
CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY NOT NULL,
    methodology        TEXT NOT NULL,
    concept            TEXT NOT NULL,
    max_turns          INTEGER NOT NULL CHECK (max_turns >= 0),
    status             TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'finished')),
    termination_reason TEXT,
    turn_count         INTEGER NOT NULL DEFAULT 0,
    state              TEXT NOT NULL,
    node_tracker       TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    activity           INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_by_activity ON sessions (activity);

CREATE TABLE utterances (
    id         TEXT PRIMARY KEY NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn       INTEGER NOT NULL CHECK (turn >= 0),
    speaker    TEXT NOT NULL CHECK (speaker IN ('interviewer', 'respondent')),
    text       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (session_id, turn, speaker)
) STRICT;

CREATE TABLE kg_nodes (
    id                   TEXT PRIMARY KEY NOT NULL,
    session_id           TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    label                TEXT NOT NULL,
    node_type            TEXT NOT NULL,
    confidence           REAL NOT NULL,
    properties           TEXT NOT NULL,
    stance               INTEGER NOT NULL CHECK (stance IN (-1, 0, 1)),
    source_utterance_ids TEXT NOT NULL,
    source_quote         TEXT NOT NULL,
    superseded_by        TEXT REFERENCES kg_nodes (id) ON DELETE SET NULL
                             DEFERRABLE INITIALLY DEFERRED,
    embedding            BLOB,
    recorded_at          TEXT NOT NULL,
    turn                 INTEGER NOT NULL CHECK (turn >= 0)
) STRICT;
CREATE INDEX kg_nodes_by_session_turn ON kg_nodes (session_id, turn);
CREATE INDEX kg_nodes_by_superseded_by ON kg_nodes (superseded_by);

CREATE TABLE kg_edges (
    id                   TEXT PRIMARY KEY NOT NULL,
    session_id           TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    source_node_id       TEXT NOT NULL REFERENCES kg_nodes (id) ON DELETE CASCADE,
    target_node_id       TEXT NOT NULL REFERENCES kg_nodes (id) ON DELETE CASCADE,
    edge_type            TEXT NOT NULL,
    confidence           REAL NOT NULL,
    properties           TEXT NOT NULL,
    source_utterance_ids TEXT NOT NULL,
    recorded_at          TEXT NOT NULL,
    turn                 INTEGER NOT NULL CHECK (turn >= 0)
) STRICT;
CREATE INDEX kg_edges_by_session_turn ON kg_edges (session_id, turn);
CREATE INDEX kg_edges_by_source ON kg_edges (source_node_id);
CREATE INDEX kg_edges_by_target ON kg_edges (target_node_id);

CREATE TABLE canonical_slots (
    id              TEXT PRIMARY KEY NOT NULL,
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    slot_name       TEXT NOT NULL,
    description     TEXT NOT NULL,
    node_type       TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('candidate', 'active')),
    support_count   INTEGER NOT NULL CHECK (support_count >= 0),
    first_seen_turn INTEGER NOT NULL CHECK (first_seen_turn >= 0),
    promoted_turn   INTEGER CHECK (promoted_turn >= 0),
    embedding       BLOB
) STRICT;
CREATE INDEX canonical_slots_by_session ON canonical_slots (session_id, first_seen_turn);

CREATE TABLE surface_to_slot_mapping (
    surface_node_id   TEXT PRIMARY KEY NOT NULL REFERENCES kg_nodes (id) ON DELETE CASCADE,
    canonical_slot_id TEXT NOT NULL REFERENCES canonical_slots (id) ON DELETE CASCADE,
    similarity        REAL NOT NULL,
    assigned_turn     INTEGER NOT NULL CHECK (assigned_turn >= 0)
) STRICT;
CREATE INDEX surface_to_slot_mapping_by_slot ON surface_to_slot_mapping (canonical_slot_id);

CREATE TABLE canonical_edges (
    id               TEXT PRIMARY KEY NOT NULL,
    session_id       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    source_slot_id   TEXT NOT NULL REFERENCES canonical_slots (id) ON DELETE CASCADE,
    target_slot_id   TEXT NOT NULL REFERENCES canonical_slots (id) ON DELETE CASCADE,
    edge_type        TEXT NOT NULL,
    support_count    INTEGER NOT NULL CHECK (support_count >= 0),
    surface_edge_ids TEXT NOT NULL
) STRICT;
CREATE INDEX canonical_edges_by_session ON canonical_edges (session_id);
CREATE INDEX canonical_edges_by_source ON canonical_edges (source_slot_id);
CREATE INDEX canonical_edges_by_target ON canonical_edges (target_slot_id);

CREATE TABLE scoring_history (
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn          INTEGER NOT NULL CHECK (turn >= 0),
    strategy      TEXT NOT NULL,
    focus_node_id TEXT,
    phase         TEXT NOT NULL CHECK (phase IN ('early', 'mid', 'late')),
    payload       TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (session_id, turn)
) STRICT;

CREATE TABLE stage_checkpoints (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn       INTEGER NOT NULL CHECK (turn >= 0),
    stage      TEXT NOT NULL,
    output     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, turn, stage)
) STRICT;

CREATE TABLE llm_usage (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn       INTEGER NOT NULL CHECK (turn >= 0),
    role       TEXT NOT NULL,
    provider   TEXT NOT NULL,
    model      TEXT NOT NULL,
    tokens_in  INTEGER NOT NULL CHECK (tokens_in >= 0),
    tokens_out INTEGER NOT NULL CHECK (tokens_out >= 0),
    latency_ms INTEGER NOT NULL CHECK (latency_ms >= 0),
    attempts   INTEGER NOT NULL CHECK (attempts >= 0),
    outcome    TEXT NOT NULL,
    cost_usd   REAL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX llm_usage_by_session_turn ON llm_usage (session_id, turn);
";

/// Reads `PRAGMA user_version`.
pub(crate) fn user_version(conn: &Connection) -> Result<i64, StoreError> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(|e| StoreError::sqlite("reading the schema version", e))
}

/// Brings the file up to [`SCHEMA_VERSION`].
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    apply(conn, &MIGRATIONS)
}

/// Applies `steps[version..]`, one transaction per step.
fn apply(conn: &mut Connection, steps: &[&str]) -> Result<(), StoreError> {
    for (index, step) in steps.iter().enumerate() {
        let target = i64::try_from(index).map_or(i64::MAX, |i| i.saturating_add(1));
        let context = format!("migrating the schema to version {target}");
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| StoreError::sqlite(context.as_str(), e))?;
        // Re-read under the write lock: another process may have migrated since we looked.
        if user_version(&tx)? >= target {
            continue;
        }
        tx.execute_batch(step)
            .and_then(|()| tx.pragma_update(None, "user_version", target))
            .and_then(|()| tx.commit())
            .map_err(|e| StoreError::sqlite(context.as_str(), e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn schema_version_counts_the_steps() {
        assert_eq!(usize::try_from(SCHEMA_VERSION).unwrap(), MIGRATIONS.len());
    }

    #[test]
    fn migrating_twice_is_a_no_op() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn a_failing_step_keeps_the_previous_version_and_nothing_of_the_step() {
        let mut conn = Connection::open_in_memory().unwrap();
        let steps = [
            "CREATE TABLE a (x INTEGER)",
            "CREATE TABLE b (x INTEGER); CREATE TABLE a (y INTEGER)",
        ];
        assert!(apply(&mut conn, &steps).is_err());
        assert_eq!(user_version(&conn).unwrap(), 1);
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 1, "table b of the failed step was rolled back");
    }

    #[test]
    fn steps_already_applied_are_skipped() {
        let mut conn = Connection::open_in_memory().unwrap();
        apply(&mut conn, &["CREATE TABLE a (x INTEGER)"]).unwrap();
        apply(
            &mut conn,
            &["CREATE TABLE a (x INTEGER)", "CREATE TABLE b (x INTEGER)"],
        )
        .unwrap();
        assert_eq!(user_version(&conn).unwrap(), 2);
    }
}
