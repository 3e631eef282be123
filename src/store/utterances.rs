//! The `utterances` table: every question asked and every answer given, one row per speaker
//! per turn.
//!
//! The `(session, turn, speaker)` uniqueness is what makes a resumed turn safe: saving the same
//! answer twice fails instead of duplicating it.

use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};

use super::codec::{NOW, atomic, col, query_all, query_opt};
use super::{StoreError, sessions};
pub use crate::domain::{AnswerSpeech, Speaker};

/// A stored utterance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Utterance {
    /// The pipeline's utterances get a name-based `UUIDv5` from the session, the turn and the
    /// speaker (`pipeline::ids`); [`insert_utterance`](crate::store::StoreOps::insert_utterance)
    /// a random `UUIDv4`. Nodes and edges cite it as provenance.
    pub id: String,
    pub session_id: String,
    pub turn: u32,
    pub speaker: Speaker,
    pub text: String,
    pub created_at: String,
}

const COLUMNS: &str = "id, session_id, turn, speaker, text, created_at";

pub(crate) fn insert(
    conn: &Connection,
    id: &str,
    session_id: &str,
    turn: u32,
    speaker: Speaker,
    text: &str,
) -> Result<Utterance, StoreError> {
    let context = format!(
        "saving the {} utterance of turn {turn} in session {session_id}",
        speaker.as_str()
    );
    atomic(conn, &context, |conn| {
        let created_at: String = conn
            .prepare_cached(&format!(
                "INSERT INTO utterances ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, {NOW})
                 RETURNING created_at"
            ))
            .and_then(|mut stmt| {
                stmt.query_row(
                    params![id, session_id, turn, speaker.as_str(), text],
                    |row| row.get(0),
                )
            })
            .map_err(|e| StoreError::sqlite(context.as_str(), e))?;
        sessions::touch(conn, session_id)?;
        Ok(Utterance {
            id: id.to_owned(),
            session_id: session_id.to_owned(),
            turn,
            speaker,
            text: text.to_owned(),
            created_at,
        })
    })
}

/// Replaces the text of an existing utterance, keeping its id (a regenerated question).
pub(crate) fn replace_text(
    conn: &Connection,
    session_id: &str,
    turn: u32,
    speaker: Speaker,
    text: &str,
) -> Result<(), StoreError> {
    let context = format!(
        "replacing the {} utterance of turn {turn} in session {session_id}",
        speaker.as_str()
    );
    let changed = conn
        .execute(
            "UPDATE utterances SET text = ?4 WHERE session_id = ?1 AND turn = ?2 AND speaker = ?3",
            params![session_id, turn, speaker.as_str(), text],
        )
        .map_err(|e| StoreError::sqlite(context.as_str(), e))?;
    if changed == 0 {
        return Err(StoreError::NotFound {
            what: "utterance",
            id: format!("{session_id}/{turn}/{}", speaker.as_str()),
        });
    }
    Ok(())
}

/// All utterances of a session in the order they were said.
pub(crate) fn all(conn: &Connection, session_id: &str) -> Result<Vec<Utterance>, StoreError> {
    query_all(
        conn,
        &format!("SELECT {COLUMNS} FROM utterances WHERE session_id = ?1 ORDER BY turn, rowid"),
        [session_id],
        &format!("reading the utterances of session {session_id}"),
        decode,
    )
}

/// The last `limit` utterances of a session, oldest first.
pub(crate) fn recent(
    conn: &Connection,
    session_id: &str,
    limit: u32,
) -> Result<Vec<Utterance>, StoreError> {
    let mut rows = query_all(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM utterances WHERE session_id = ?1
             ORDER BY turn DESC, rowid DESC LIMIT ?2"
        ),
        params![session_id, limit],
        &format!("reading the recent utterances of session {session_id}"),
        decode,
    )?;
    rows.reverse();
    Ok(rows)
}

pub(crate) fn one(
    conn: &Connection,
    session_id: &str,
    turn: u32,
    speaker: Speaker,
) -> Result<Option<Utterance>, StoreError> {
    query_opt(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM utterances
             WHERE session_id = ?1 AND turn = ?2 AND speaker = ?3"
        ),
        params![session_id, turn, speaker.as_str()],
        &format!("reading utterance ({session_id}, turn {turn})"),
        decode,
    )
}

fn decode(row: &Row<'_>) -> Result<Utterance, StoreError> {
    let id: String = col(row, "id")?;
    let speaker: String = col(row, "speaker")?;
    let speaker = Speaker::parse(&speaker).ok_or_else(|| {
        StoreError::corrupt(
            format!("utterances.speaker of utterance {id}"),
            &format!("unknown speaker '{speaker}'"),
        )
    })?;
    Ok(Utterance {
        session_id: col(row, "session_id")?,
        turn: col(row, "turn")?,
        speaker,
        text: col(row, "text")?,
        created_at: col(row, "created_at")?,
        id,
    })
}

/// Deletes the utterance of `speaker` in `turn`.
pub(crate) fn delete(
    conn: &Connection,
    session_id: &str,
    turn: u32,
    speaker: Speaker,
) -> Result<(), StoreError> {
    let context = format!(
        "removing the {} utterance of turn {turn} in session {session_id}",
        speaker.as_str()
    );
    conn.execute(
        "DELETE FROM utterances WHERE session_id = ?1 AND turn = ?2 AND speaker = ?3",
        params![session_id, turn, speaker.as_str()],
    )
    .map_err(|e| StoreError::sqlite(context.as_str(), e))?;
    Ok(())
}

/// Records how the utterance `utterance_id` was heard.
pub(crate) fn insert_speech(
    conn: &Connection,
    utterance_id: &str,
    speech: &AnswerSpeech,
) -> Result<(), StoreError> {
    let context = format!("saving how utterance {utterance_id} was heard");
    conn.execute(
        "INSERT INTO utterance_speech (utterance_id, model, duration_seconds, mean_logprob, \
         audio_file) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            utterance_id,
            speech.model,
            speech.duration_seconds,
            speech.mean_logprob,
            speech.audio_file
        ],
    )
    .map_err(|e| StoreError::sqlite(context.as_str(), e))?;
    Ok(())
}

/// How each spoken answer of a session was heard, by utterance id, in turn order.
pub(crate) fn speech(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<(String, AnswerSpeech)>, StoreError> {
    query_all(
        conn,
        "SELECT s.utterance_id, s.model, s.duration_seconds, s.mean_logprob, s.audio_file
         FROM utterance_speech s JOIN utterances u ON u.id = s.utterance_id
         WHERE u.session_id = ?1 ORDER BY u.turn",
        [session_id],
        &format!("reading how the answers of session {session_id} were heard"),
        |row| {
            Ok((
                col(row, "utterance_id")?,
                AnswerSpeech {
                    model: col(row, "model")?,
                    duration_seconds: col(row, "duration_seconds")?,
                    mean_logprob: col(row, "mean_logprob")?,
                    audio_file: col(row, "audio_file")?,
                },
            ))
        },
    )
}
