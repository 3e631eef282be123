//! The one error type of the storage layer.
//!
//! Every variant says what was being done and where (table, row, file), because a storage error
//! surfaces to the researcher as a failed turn and must be actionable without a debugger.

use std::path::PathBuf;

/// Everything that can go wrong while opening, reading or writing the interview database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `SQLite` refused a statement; `context` names the operation and the row or session.
    #[error("database error while {context}: {source}")]
    Sqlite {
        context: String,
        #[source]
        source: rusqlite::Error,
    },
    /// The file was written by a newer build; it is left untouched rather than misread.
    #[error(
        "{} has schema version {found}, but this build of interviewer supports up to \
         {supported}; upgrade interviewer to open it",
        path.display()
    )]
    NewerSchema {
        found: i64,
        supported: i64,
        path: PathBuf,
    },
    /// Another process (or another handle in this one) is driving the session.
    #[error("session {session_id} is in use by another interviewer process")]
    SessionInUse { session_id: String },
    /// An update or delete named a row that does not exist.
    #[error("{what} '{id}' not found")]
    NotFound { what: &'static str, id: String },
    /// A stored value could not be decoded: bad JSON, an unknown enum text, a torn embedding.
    #[error("corrupt {what}: {reason}")]
    Corrupt { what: String, reason: String },
    /// A file or directory next to the database could not be created or opened.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The database file has more than one name (hard links). `SQLite` names its
    /// write-ahead log and the session locks are named after the path, so two processes
    /// writing through two names would neither see each other's log nor each other's lock.
    #[error(
        "{} has {links} hard links (names); writing a database through more than one name can \
         corrupt it, because its write-ahead log and session locks follow the name. Keep one \
         name: copy the file (cp) instead of linking it, or remove the other links",
        path.display()
    )]
    HardLinked { path: PathBuf, links: u64 },
    /// A read-only open found a file of an older schema, which only a writable open upgrades.
    #[error(
        "{} has schema version {found} and this build reads {supported}; it cannot be upgraded \
         without write access to it and its folder",
        path.display()
    )]
    OlderSchemaReadOnly {
        found: i64,
        supported: i64,
        path: PathBuf,
    },
    /// The database thread behind an [`AsyncStore`](super::AsyncStore) has stopped.
    #[error("the database thread has stopped; the store is closed")]
    Closed,
}

impl StoreError {
    /// Wraps a `SQLite` error with what was being done when it happened.
    pub(crate) fn sqlite(context: impl Into<String>, source: rusqlite::Error) -> Self {
        Self::Sqlite {
            context: context.into(),
            source,
        }
    }

    pub(crate) fn corrupt(what: impl Into<String>, reason: &dyn std::fmt::Display) -> Self {
        Self::Corrupt {
            what: what.into(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn not_found(what: &'static str, id: &str) -> Self {
        Self::NotFound {
            what,
            id: id.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_and_where() {
        let e = StoreError::SessionInUse {
            session_id: "abc".into(),
        };
        assert_eq!(
            e.to_string(),
            "session abc is in use by another interviewer process"
        );
        let e = StoreError::NewerSchema {
            found: 9,
            supported: 1,
            path: PathBuf::from("/tmp/x.db"),
        };
        assert!(e.to_string().starts_with("/tmp/x.db has schema version 9"));
        let e = StoreError::sqlite("inserting utterance", rusqlite::Error::InvalidQuery);
        assert!(e.to_string().contains("while inserting utterance"));
    }
}
