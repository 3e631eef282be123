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
/// database at `db`. Every answer runs through the pipeline; the interviewer's questions
/// replace the engine's as edits. On any failure the partial session is deleted, so a file is
/// either imported whole or not at all.
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
    let store = Store::open(db).map_err(|e| fail(e.to_string()))?;
    let earlier = store
        .import_by_hash(&read.content_hash)
        .map_err(|e| fail(e.to_string()))?;
    let replaced = match earlier {
        Some(r) if r.complete && !options.replace => {
            return Ok(Imported::AlreadyImported {
                session_id: r.session_id,
            });
        }
        Some(r) => {
            store
                .delete_session(&r.session_id)
                .map_err(|e| fail(format!("cannot replace session {}: {e}", r.session_id)))?;
            Some(r.session_id)
        }
        None => None,
    };
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
    let session = Store::open(db).map_err(|e| fail(e.to_string()))?;
    let mut interview =
        Interview::create(session, spec, services, None).map_err(|e| fail(e.to_string()))?;
    let id = interview.session_id().to_owned();
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
        complete: false,
        imported_at: String::new(),
    };
    let outcome = match store.insert_import(&record) {
        Ok(()) => replay(&mut interview, read).await,
        Err(e) => Err(e.to_string()),
    };
    drop(interview);
    match outcome.and_then(|()| store.complete_import(&id).map_err(|e| e.to_string())) {
        Ok(()) => Ok(Imported::New {
            session_id: id,
            exchanges: t.exchanges.len(),
            replaced,
        }),
        Err(message) => {
            let cleanup = store.delete_session(&id).err().map(|e: StoreError| {
                format!(" (and the partial session {id} could not be removed: {e})")
            });
            Err(fail(format!("{message}{}", cleanup.unwrap_or_default())))
        }
    }
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
