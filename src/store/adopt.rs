//! Moving a session from another database file into this one in one transaction: how an
//! import lands. The session is built in a staging file; its rows then arrive here together,
//! or not at all.

use rusqlite::Connection;

use super::StoreError;
use super::codec::{exec, query_all};

/// The session's tables in foreign-key order, with the rows of `session` in each (`?1` is the
/// session id; `staged` is the attached staging file).
const TABLES: [(&str, &str); 11] = [
    ("sessions", "id = ?1"),
    ("utterances", "session_id = ?1"),
    ("kg_nodes", "session_id = ?1"),
    ("kg_edges", "session_id = ?1"),
    ("canonical_slots", "session_id = ?1"),
    (
        "surface_to_slot_mapping",
        "surface_node_id IN (SELECT id FROM staged.kg_nodes WHERE session_id = ?1)",
    ),
    ("canonical_edges", "session_id = ?1"),
    ("scoring_history", "session_id = ?1"),
    ("stage_checkpoints", "session_id = ?1"),
    ("llm_usage", "session_id = ?1"),
    (
        "utterance_speech",
        "utterance_id IN (SELECT id FROM staged.utterances WHERE session_id = ?1)",
    ),
];

fn columns(conn: &Connection, table: &str) -> Result<Vec<String>, StoreError> {
    query_all(
        conn,
        &format!("SELECT name FROM pragma_table_info('{table}')"),
        [],
        &format!("reading the columns of {table}"),
        |row| super::codec::col(row, "name"),
    )
}

/// Copies every row of `session_id` from the attached `staged` database, in the order they
/// were written (checkpoints keep their place in a turn). The session becomes the most
/// recently active here; usage rows get this file's own ids.
pub(crate) fn copy_session(conn: &Connection, session_id: &str) -> Result<(), StoreError> {
    for (table, filter) in TABLES {
        let names: Vec<String> = columns(conn, table)?
            .into_iter()
            .filter(|c| !(table == "llm_usage" && c == "id"))
            .collect();
        let values: Vec<String> = names
            .iter()
            .map(|c| {
                if table == "sessions" && c == "activity" {
                    "(SELECT COALESCE(MAX(activity), 0) + 1 FROM main.sessions)".to_owned()
                } else {
                    format!("\"{c}\"")
                }
            })
            .collect();
        let quoted: Vec<String> = names.iter().map(|c| format!("\"{c}\"")).collect();
        exec(
            conn,
            &format!(
                "INSERT INTO main.{table} ({}) SELECT {} FROM staged.{table} WHERE {filter} \
                 ORDER BY rowid",
                quoted.join(", "),
                values.join(", ")
            ),
            [session_id],
            &format!("copying the {table} rows of session {session_id}"),
        )?;
    }
    Ok(())
}
