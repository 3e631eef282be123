//! Importing interviews people ran: a transcript file (plain text with speaker labels, `WebVTT`,
//! SRT or this app's JSON export) becomes an ordinary session, marked as imported.
//!
//! [`read`] checks the whole file before anything is stored: size, text encoding, format,
//! speakers, who interviewed, and that every answer fits the pipeline's limits. Each
//! respondent answer then runs through the turn pipeline like a live answer (utterance, SRL,
//! extraction, graph update, slots, state, signals, strategy scoring); the engine's question
//! for that point is written, then replaced by the question the interviewer actually asked as
//! a researcher's edit, so the session records both: what was asked, and what the engine would
//! have asked instead (strategy, focus, score decomposition), as moderator overrides are
//! recorded. The transcript, not the engine, decides when the interview ends.

mod formats;
mod run;
mod transcript;

use std::path::{Path, PathBuf};

pub use formats::{clock, detect};
pub use run::{ImportOptions, Imported, import_file, imported_sessions};
pub use transcript::{Exchange, Format, MAX_EXCHANGES, MAX_FILE_BYTES, Roles, Span, Transcript};

/// What is wrong with a transcript, and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ImportProblem {
    /// 1-based line of the file, when the problem has one.
    pub line: Option<usize>,
    pub message: String,
}

impl ImportProblem {
    pub fn at(line: usize, message: String) -> Self {
        Self {
            line: Some(line),
            message,
        }
    }

    pub fn whole(message: String) -> Self {
        Self {
            line: None,
            message,
        }
    }
}

/// An import failure with the file it is about.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{}: {problem}", path.display())]
    File {
        path: PathBuf,
        problem: ImportProblem,
    },
    #[error("{}: {message}", path.display())]
    Pipeline { path: PathBuf, message: String },
}

/// A transcript read and checked, with the hash of its bytes.
#[derive(Debug, Clone)]
pub struct ReadTranscript {
    pub transcript: Transcript,
    /// A name-based UUID (v5, SHA-1) of the file's bytes: the same file imports once.
    pub content_hash: String,
}

/// Reads and checks `path` as a transcript in `format`.
pub fn read(
    path: &Path,
    format: Format,
    interviewer: Option<&str>,
    respondent: Option<&str>,
) -> Result<ReadTranscript, ImportError> {
    let fail = |problem| ImportError::File {
        path: path.to_path_buf(),
        problem,
    };
    let size = std::fs::metadata(path)
        .map_err(|e| fail(ImportProblem::whole(format!("cannot read: {e}"))))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(fail(ImportProblem::whole(format!(
            "{size} bytes; a transcript may have at most {MAX_FILE_BYTES} bytes"
        ))));
    }
    let bytes =
        std::fs::read(path).map_err(|e| fail(ImportProblem::whole(format!("cannot read: {e}"))))?;
    let text = decode_text(&bytes).map_err(fail)?;
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let format = match format {
        Format::Auto => detect(extension.as_deref(), text),
        f => f,
    };
    let parsed = formats::parse(format, text).map_err(fail)?;
    let transcript = transcript::build(parsed, interviewer, respondent).map_err(fail)?;
    Ok(ReadTranscript {
        transcript,
        content_hash: uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, &bytes).to_string(),
    })
}

/// The file's text: UTF-8 (a byte-order mark is skipped); anything else is refused by name.
fn decode_text(bytes: &[u8]) -> Result<&str, ImportProblem> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(ImportProblem::whole(
            "UTF-16 text; save the transcript as UTF-8".to_owned(),
        ));
    }
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    if bytes.contains(&0) {
        return Err(ImportProblem::whole(
            "a binary file, not a text transcript".to_owned(),
        ));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes
            .get(..e.valid_up_to())
            .map_or(1, |b| b.split(|&c| c == b'\n').count());
        ImportProblem::at(
            line,
            "not UTF-8 text (a binary file, or another encoding)".to_owned(),
        )
    })
}
