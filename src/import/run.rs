//! Replaying a checked transcript through the pipeline into a new session.

use std::path::Path;

use super::{ImportError, ReadTranscript};
use crate::pipeline::{EventSink, Interview, InterviewSpec, Services};
use crate::store::{ImportRecord, Store, StoreError, StoreOps};

/// How one file is imported.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions {
    /// Import again a file already imported (its session is replaced).
    pub replace: bool,
}

/// What became of one file.
#[derive(Debug, Clone, PartialEq)]
pub enum Imported {
    /// A new session.
    New {
        session_id: String,
        exchanges: usize,
        /// The session of an earlier import of the same file, replaced (`--replace`, or an
        /// import a crash left unfinished).
        replaced: Option<String>,
    },
    /// The same bytes were imported before: nothing was done.
    AlreadyImported { session_id: String },
}

/// Imports `read` (the checked contents of `path`) as a new session of `spec` into the
/// database at `db`. Every answer runs through the pipeline in a staging file beside the
/// database; the finished session then moves in with its import record in one transaction
/// (replacing an earlier import of the file in the same transaction), so the database holds
/// the whole transcript or nothing of it, whatever happens on the way.
pub async fn import_file(
    db: &Path,
    path: &Path,
    read: &ReadTranscript,
    spec: InterviewSpec,
    services: Services,
    options: ImportOptions,
) -> Result<Imported, ImportError> {
    let fail = |message: String| ImportError::Pipeline {
        path: path.to_path_buf(),
        message,
    };
    let mut store = Store::open(db).map_err(|e| fail(e.to_string()))?;
    let earlier = store
        .import_by_hash(&read.content_hash)
        .map_err(|e| fail(e.to_string()))?;
    let replaced = match earlier {
        Some(r) if !options.replace => {
            return Ok(Imported::AlreadyImported {
                session_id: r.session_id,
            });
        }
        Some(r) => Some(r.session_id),
        None => None,
    };
    let staged = staging_file(db);
    if let Some(dir) = staged.parent() {
        remove_stale_staging(dir);
    }
    let outcome = stage(&staged, path, read, spec, services).await;
    let landed = outcome.and_then(|(id, record)| {
        store
            .adopt_session(&staged, &id, |tx| {
                if let Some(old) = &replaced {
                    tx.delete_session(old)?;
                }
                tx.insert_import(&record)
            })
            .map(|()| id)
            .map_err(|e| e.to_string())
    });
    remove_staging(&staged);
    match landed {
        Ok(session_id) => Ok(Imported::New {
            session_id,
            exchanges: read.transcript.exchanges.len(),
            replaced,
        }),
        Err(message) => Err(fail(message)),
    }
}

/// `<db>.import/stage-<uuid>.db`: beside the database (same file system, private folder).
fn staging_file(db: &Path) -> std::path::PathBuf {
    let mut dir = db.as_os_str().to_owned();
    dir.push(".import");
    std::path::PathBuf::from(dir).join(format!("stage-{}.db", uuid::Uuid::new_v4()))
}

/// Removes a staging file and what `SQLite` and the session lock left beside it.
fn remove_staging(staged: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = staged.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(std::path::PathBuf::from(name));
    }
    let mut locks = staged.as_os_str().to_owned();
    locks.push(".locks");
    let _ = std::fs::remove_dir_all(std::path::PathBuf::from(locks));
    if let Some(dir) = staged.parent() {
        // Only when empty: another import may be staging beside this one.
        let _ = std::fs::remove_dir(dir);
    }
}

/// Removes staging files an interrupted import left: no process holds their session lock and
/// they have not changed for ten minutes.
fn remove_stale_staging(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name.starts_with("stage-")
            && path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("db"));
        if !ours {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_secs(600));
        if old && !locked(&path) {
            remove_staging(&path);
        }
    }
}

/// Whether a process holds a session lock of the staging file.
fn locked(staged: &Path) -> bool {
    let mut locks = staged.as_os_str().to_owned();
    locks.push(".locks");
    let Ok(entries) = std::fs::read_dir(std::path::PathBuf::from(locks)) else {
        return false;
    };
    entries.flatten().any(|e| {
        std::fs::File::open(e.path())
            .is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
    })
}

/// Runs the transcript into a new session of the staging file; returns its id and the import
/// record to land with it.
async fn stage(
    staged: &Path,
    path: &Path,
    read: &ReadTranscript,
    spec: InterviewSpec,
    services: Services,
) -> Result<(String, ImportRecord), String> {
    let t = &read.transcript;
    let spec = InterviewSpec {
        max_turns: u32::try_from(t.exchanges.len()).unwrap_or(u32::MAX),
        ..spec
    };
    let services = Services {
        settings: crate::pipeline::PipelineSettings {
            transcript_driven: true,
            ..services.settings
        },
        ..services
    };
    let session = Store::open(staged).map_err(|e| e.to_string())?;
    let mut interview =
        Interview::create(session, spec, services, None).map_err(|e| e.to_string())?;
    let id = interview.session_id().to_owned();
    replay(&mut interview, read).await?;
    let record = ImportRecord {
        content_hash: read.content_hash.clone(),
        session_id: id.clone(),
        file: path.display().to_string(),
        format: t.format.to_string(),
        interviewer: t.roles.interviewer.clone(),
        respondent: t.roles.respondent.clone(),
        interviewer_words: t.interviewer_words as u64,
        respondent_words: t.respondent_words as u64,
        interviewer_seconds: t.interviewer_seconds,
        respondent_seconds: t.respondent_seconds,
        cue_times: cue_times(t),
        complete: true,
        imported_at: String::new(),
    };
    Ok((id, record))
}

/// The opening question, then each answer with the question that followed it.
async fn replay(interview: &mut Interview, read: &ReadTranscript) -> Result<(), String> {
    let events = EventSink::none();
    let t = &read.transcript;
    let at = |line: usize, e: &dyn std::fmt::Display| format!("line {line}: {e}");
    interview
        .opening(&events)
        .await
        .map_err(|e| e.to_string())?;
    let Some(first) = t.exchanges.first() else {
        return Err("no exchanges".to_owned());
    };
    interview
        .edit_question(&first.question, &events)
        .map_err(|e| at(first.question_line, &e))?;
    for (i, exchange) in t.exchanges.iter().enumerate() {
        interview
            .answer(&exchange.answer, &events)
            .await
            .map_err(|e| at(exchange.answer_line, &e))?;
        if let Some(next) = t.exchanges.get(i + 1) {
            interview
                .edit_question(&next.question, &events)
                .map_err(|e| at(next.question_line, &e))?;
        } else {
            interview
                .end_transcript(t.closing.as_deref(), &events)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The transcript's time of each utterance, numbered as the session numbers them: question
/// `k` (0 = the opening) is asked in turn `k`, answer `k` is turn `k`'s, the closing remark is
/// the last turn's question.
fn cue_times(t: &super::Transcript) -> Vec<crate::store::CueTime> {
    let mut out = Vec::new();
    let mut push = |turn: usize, speaker: &str, span: super::Span| {
        if let (Some(start), Ok(turn)) = (span.start, u32::try_from(turn)) {
            out.push(crate::store::CueTime {
                turn,
                speaker: speaker.to_owned(),
                start,
                end: span.end,
            });
        }
    };
    for (i, e) in t.exchanges.iter().enumerate() {
        push(i, "interviewer", e.question_span);
        push(i + 1, "respondent", e.answer_span);
    }
    if t.closing.is_some() {
        push(t.exchanges.len(), "interviewer", t.closing_span);
    }
    out
}

/// The imports recorded in `store`, by session id.
pub fn imported_sessions(
    store: &Store,
) -> Result<std::collections::HashMap<String, ImportRecord>, StoreError> {
    Ok(store
        .imports()?
        .into_iter()
        .map(|r| (r.session_id.clone(), r))
        .collect())
}
