//! `imports`: which sessions came from a transcript file, found again by the file's content
//! hash so the same file imports once, with who spoke and how much.

use rusqlite::{Connection, Row, params};
use serde::Serialize;

use super::StoreError;
use super::codec::{NOW, col, count_col, exec, query_all, query_opt};

/// When one utterance of an imported session was said in the recording.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct CueTime {
    pub turn: u32,
    /// `interviewer` or `respondent`.
    pub speaker: String,
    /// Seconds from the start of the recording.
    pub start: f64,
    pub end: Option<f64>,
}

/// One imported transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportRecord {
    pub content_hash: String,
    pub session_id: String,
    /// The file as it was named on the command line.
    pub file: String,
    pub format: String,
    pub interviewer: String,
    pub respondent: String,
    pub interviewer_words: u64,
    pub respondent_words: u64,
    /// Seconds each side spoke, when the transcript has times.
    pub interviewer_seconds: Option<f64>,
    pub respondent_seconds: Option<f64>,
    /// The transcript's times of each utterance, when it had them.
    pub cue_times: Vec<CueTime>,
    /// Written true: a session lands with its import record in one transaction (the column
    /// leaves room for imports that land in steps).
    pub complete: bool,
    pub imported_at: String,
}

pub(crate) fn insert(conn: &Connection, r: &ImportRecord) -> Result<(), StoreError> {
    let context = format!("recording the import of {}", r.file);
    let cue_times = if r.cue_times.is_empty() {
        None
    } else {
        Some(
            serde_json::to_string(&r.cue_times)
                .map_err(|e| StoreError::corrupt("imports.cue_times", &e))?,
        )
    };
    exec(
        conn,
        &format!(
            "INSERT INTO imports (content_hash, session_id, file, format, interviewer, \
             respondent, interviewer_words, respondent_words, interviewer_seconds, \
             respondent_seconds, cue_times, complete, imported_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, {NOW})"
        ),
        params![
            r.content_hash,
            r.session_id,
            r.file,
            r.format,
            r.interviewer,
            r.respondent,
            i64::try_from(r.interviewer_words).unwrap_or(i64::MAX),
            i64::try_from(r.respondent_words).unwrap_or(i64::MAX),
            r.interviewer_seconds,
            r.respondent_seconds,
            cue_times,
            r.complete,
        ],
        &context,
    )?;
    Ok(())
}

pub(crate) fn complete(conn: &Connection, session_id: &str) -> Result<(), StoreError> {
    exec(
        conn,
        "UPDATE imports SET complete = 1 WHERE session_id = ?1",
        [session_id],
        &format!("marking the import of session {session_id} complete"),
    )?;
    Ok(())
}

const COLUMNS: &str = "content_hash, session_id, file, format, interviewer, respondent, \
    interviewer_words, respondent_words, interviewer_seconds, respondent_seconds, cue_times, \
    complete, imported_at";

fn decode(row: &Row<'_>) -> Result<ImportRecord, StoreError> {
    Ok(ImportRecord {
        content_hash: col(row, "content_hash")?,
        session_id: col(row, "session_id")?,
        file: col(row, "file")?,
        format: col(row, "format")?,
        interviewer: col(row, "interviewer")?,
        respondent: col(row, "respondent")?,
        interviewer_words: count_col(row, "interviewer_words")?,
        respondent_words: count_col(row, "respondent_words")?,
        interviewer_seconds: col(row, "interviewer_seconds")?,
        respondent_seconds: col(row, "respondent_seconds")?,
        cue_times: match col::<Option<String>>(row, "cue_times")? {
            Some(text) => serde_json::from_str(&text)
                .map_err(|e| StoreError::corrupt("imports.cue_times", &e))?,
            None => Vec::new(),
        },
        complete: col(row, "complete")?,
        imported_at: col(row, "imported_at")?,
    })
}

pub(crate) fn by_hash(conn: &Connection, hash: &str) -> Result<Option<ImportRecord>, StoreError> {
    query_opt(
        conn,
        &format!("SELECT {COLUMNS} FROM imports WHERE content_hash = ?1"),
        [hash],
        "looking up an imported transcript",
        decode,
    )
}

pub(crate) fn by_session(
    conn: &Connection,
    session_id: &str,
) -> Result<Option<ImportRecord>, StoreError> {
    query_opt(
        conn,
        &format!("SELECT {COLUMNS} FROM imports WHERE session_id = ?1"),
        [session_id],
        &format!("reading whether session {session_id} was imported"),
        decode,
    )
}

pub(crate) fn all(conn: &Connection) -> Result<Vec<ImportRecord>, StoreError> {
    query_all(
        conn,
        &format!("SELECT {COLUMNS} FROM imports ORDER BY imported_at"),
        [],
        "listing imported transcripts",
        decode,
    )
}
