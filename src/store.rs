//! Storage: the interview database, one `SQLite` file per workspace.
//!
//! All SQL of the crate lives under this module. [`Store`] is a blocking handle over one
//! connection; [`AsyncStore`] runs it on a dedicated thread for async callers. Every typed read
//! and write is a method of [`StoreOps`], implemented by both [`Store`] and [`Tx`], so a
//! pipeline stage can write its side effects and its checkpoint in one transaction
//! ([`Store::transaction`]) with the same calls it would make outside one.
//!
//! The file is opened in WAL mode with foreign keys on and a busy timeout, created with mode
//! 0600 on Unix, and migrated forward by ordered, versioned steps; a file from a newer build
//! is refused untouched. [`Store::lock_session`] gives one process at a time the right to drive
//! a session; reading never needs it.
//!
//! Left out: what the JSON columns mean. Session state, stage outputs and scoring payloads are
//! serialized by their owners; this module stores and returns them.

mod adopt;
mod async_store;
mod canonical;
mod codec;
mod error;
mod history;
mod imports;
mod lock;
mod ops;
mod schema;
mod scoring;
mod sessions;
mod surface;
mod usage;
mod utterances;

use std::fs::{self, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

pub use async_store::AsyncStore;
pub use error::StoreError;
pub use imports::{CueTime, ImportRecord};
pub use lock::SessionLock;
pub use ops::StoreOps;
pub use schema::SCHEMA_VERSION;
pub use scoring::{Checkpoint, ScoringRecord};
pub use sessions::{
    NewSession, SIMULATION_ID_PREFIX, SessionRecord, SessionStatus, SessionSummary, TurnFailure,
    short_ids, status_word,
};
pub use usage::{LlmUsage, LlmUsageRecord, UsageTotals};
pub use utterances::{Speaker, Utterance};

/// How long a statement waits for another process's write lock before failing.
///
/// Long enough to ride out a concurrent turn's commit (milliseconds) and a WAL checkpoint,
/// short enough that a wedged writer surfaces as an error rather than a frozen interview.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The file name used under the platform data directory.
const FILE_NAME: &str = "interviewer.db";

/// The default database location: `<data dir>/interviewer/interviewer.db`, or
/// `./interviewer.db` where the platform has no data directory.
pub fn default_path() -> PathBuf {
    dirs::data_dir().map_or_else(
        || PathBuf::from(FILE_NAME),
        |dir| dir.join("interviewer").join(FILE_NAME),
    )
}

/// A blocking handle to the interview database.
///
/// Not `Sync`: one connection serves one thread. Share it across tasks through
/// [`AsyncStore`].
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    /// The database file; `None` for an in-memory store.
    path: Option<PathBuf>,
    /// Session locks of an in-memory store (a file-backed store locks files instead).
    memory_locks: lock::MemoryLocks,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            create_private_dir(parent)?;
        }
        create_private_file(path)?;
        refuse_hard_links(path)?;
        let mut conn = Connection::open(path)
            .map_err(|e| StoreError::sqlite(format!("opening {}", path.display()), e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| StoreError::sqlite("setting the busy timeout", e))?;
        // Check the version before anything writes: a newer file must stay byte-identical.
        let found = schema::user_version(&conn)?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                found,
                supported: SCHEMA_VERSION,
                path: path.to_path_buf(),
            });
        }
        configure(&conn)?;
        schema::migrate(&mut conn)?;
        Ok(Self {
            conn,
            path: Some(path.to_path_buf()),
            memory_locks: lock::MemoryLocks::default(),
        })
    }

    /// Opens an existing database for reading only: nothing is created, migrated or written,
    /// so a file in a read-only folder (or one the user may only read) can be listed,
    /// shown and exported. A file of an older schema is upgraded by a writable open where
    /// the file allows one, and refused otherwise.
    ///
    /// A WAL database is read through its shared-memory index, which a reader must be able to
    /// create when the folder holds none (no other connection is open). Where it cannot, the
    /// file is opened as immutable: with no index and no write access there is no writer
    /// whose changes could be missed.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let metadata = fs::metadata(path).map_err(|e| StoreError::io(path, e))?;
        if metadata.is_dir() {
            return Err(StoreError::io(
                path,
                std::io::Error::other("is a folder, not a database file"),
            ));
        }
        let conn = match read_only_connection(path, false) {
            Ok(conn) => conn,
            Err(_) => read_only_connection(path, true)?,
        };
        let found = schema::user_version(&conn)?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                found,
                supported: SCHEMA_VERSION,
                path: path.to_path_buf(),
            });
        }
        if found < SCHEMA_VERSION {
            drop(conn);
            return Self::open(path).map_err(|_| StoreError::OlderSchemaReadOnly {
                found,
                supported: SCHEMA_VERSION,
                path: path.to_path_buf(),
            });
        }
        Ok(Self {
            conn,
            path: Some(path.to_path_buf()),
            memory_locks: lock::MemoryLocks::default(),
        })
    }

    /// A private, migrated in-memory database (tests, dry runs).
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let mut conn = Connection::open_in_memory()
            .map_err(|e| StoreError::sqlite("opening an in-memory database", e))?;
        configure(&conn)?;
        schema::migrate(&mut conn)?;
        Ok(Self {
            conn,
            path: None,
            memory_locks: lock::MemoryLocks::default(),
        })
    }

    /// Moves session `session_id` from the database file `staged` (same schema version) into
    /// this one in one transaction, together with `also` (e.g. deleting the session it
    /// replaces, recording where it came from). Nothing of it is here unless all of it is.
    pub fn adopt_session(
        &mut self,
        staged: &Path,
        session_id: &str,
        also: impl FnOnce(&Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let name = staged.to_str().ok_or_else(|| {
            StoreError::io(
                staged,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a UTF-8 path"),
            )
        })?;
        let staged_version: i64 = {
            self.conn
                .execute("ATTACH DATABASE ?1 AS staged", [name])
                .map_err(|e| StoreError::sqlite(format!("attaching {name}"), e))?;
            self.conn
                .query_row("PRAGMA staged.user_version", [], |r| r.get(0))
                .map_err(|e| StoreError::sqlite("reading the staged file's version", e))?
        };
        let result = if staged_version == schema::SCHEMA_VERSION {
            self.transaction(|tx| {
                adopt::copy_session(ops::sealed::Connected::connection(tx), session_id)?;
                also(tx)
            })
        } else {
            Err(StoreError::corrupt(
                format!("staged file {name}"),
                &format!(
                    "schema version {staged_version}, not {}",
                    schema::SCHEMA_VERSION
                ),
            ))
        };
        let detached = self
            .conn
            .execute("DETACH DATABASE staged", [])
            .map_err(|e| StoreError::sqlite("detaching the staged file", e));
        result.and(detached.map(|_| ()))
    }

    /// The database file, or `None` for an in-memory store.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The schema version of the open file.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        schema::user_version(&self.conn)
    }

    /// Runs `f` in one transaction: everything it writes commits together when it returns
    /// `Ok`, and nothing is written when it returns `Err`.
    ///
    /// The transaction takes the write lock up front (`BEGIN IMMEDIATE`), so a concurrent
    /// writer in another process makes it wait on the busy timeout rather than fail mid-way.
    pub fn transaction<T>(
        &mut self,
        f: impl FnOnce(&Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let tx = Tx {
            inner: self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| StoreError::sqlite("starting a transaction", e))?,
        };
        // On error `tx` is dropped here, which rolls back.
        let value = f(&tx)?;
        tx.inner
            .commit()
            .map_err(|e| StoreError::sqlite("committing a transaction", e))?;
        Ok(value)
    }

    /// Copies the write-ahead log into the database file as far as no reader holds it back
    /// (`SQLite`'s passive checkpoint). Interview drivers call it while the respondent reads
    /// and answers, so the copy and its fsync never land inside a turn.
    pub fn flush_journal(&self) -> Result<(), StoreError> {
        if self.path.is_none() {
            return Ok(());
        }
        self.conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            .map_err(|e| StoreError::sqlite("copying the write-ahead log into the database", e))
    }

    /// Takes the right to drive `session_id` until the returned lock is dropped.
    ///
    /// Fails with [`StoreError::SessionInUse`] while another process, or another handle in
    /// this one, holds it. The session does not have to exist yet.
    pub fn lock_session(&self, session_id: &str) -> Result<SessionLock, StoreError> {
        match &self.path {
            Some(path) => lock::acquire_file(path, session_id),
            None => self.memory_locks.acquire(session_id),
        }
    }
}

impl ops::sealed::Connected for Store {
    fn connection(&self) -> &Connection {
        &self.conn
    }
}

impl StoreOps for Store {}

/// An open transaction of [`Store::transaction`]; writes through it commit together.
#[derive(Debug)]
pub struct Tx<'s> {
    inner: rusqlite::Transaction<'s>,
}

impl ops::sealed::Connected for Tx<'_> {
    fn connection(&self) -> &Connection {
        &self.inner
    }
}

impl StoreOps for Tx<'_> {}

/// Sets the per-connection options; journal mode is persistent, the others are not.
fn configure(conn: &Connection) -> Result<(), StoreError> {
    // Returns the resulting mode ("memory" for in-memory databases); any answer is fine.
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
        .map_err(|e| StoreError::sqlite("enabling WAL journal mode", e))?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(|e| StoreError::sqlite("enabling foreign keys", e))?;
    // In WAL mode NORMAL keeps every commit safe from a crashed process (what matters for a
    // resumable turn) and skips the fsync per commit that FULL adds; only an OS crash or power
    // loss can drop the last commits.
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(|e| StoreError::sqlite("setting synchronous mode", e))?;
    // The write-ahead log is copied into the database by `Store::flush_journal`, which the
    // interview drivers call between turns; this only bounds the log (32 MiB of 4 KiB pages)
    // for programs that never call it.
    conn.pragma_update(None, "wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)
        .map_err(|e| StoreError::sqlite("setting the WAL checkpoint interval", e))?;
    // A turn runs a few dozen distinct statements; rusqlite's default cache of 16 re-prepared
    // (re-parsed) most of them every turn.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| StoreError::sqlite("setting the busy timeout", e))
}

/// A read-only connection to `path` that has read its schema version (which is when `SQLite`
/// finds out whether it can use the WAL index); `immutable` opens it without one.
fn read_only_connection(path: &Path, immutable: bool) -> Result<Connection, StoreError> {
    use rusqlite::OpenFlags;
    let context = || format!("opening {} for reading", path.display());
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = if immutable {
        let uri = format!("file:{}?immutable=1", uri_path(path));
        Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
    } else {
        Connection::open_with_flags(path, flags)
    }
    .map_err(|e| StoreError::sqlite(context(), e))?;
    schema::user_version(&conn)?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(|e| StoreError::sqlite("enabling foreign keys", e))?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| StoreError::sqlite("setting the busy timeout", e))?;
    Ok(conn)
}

/// `path` as the path part of a `file:` URI: every byte outside the unreserved set and `/`
/// percent-encoded.
fn uri_path(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for byte in absolute.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(byte) {
            out.push(char::from(*byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Pages the write-ahead log may hold before `SQLite` copies it back on a commit.
const WAL_AUTOCHECKPOINT_PAGES: u32 = 8_192;

/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 128;

/// Creates a directory (and its parents) readable only by the user; existing ones are kept.
fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| StoreError::io(dir, e))
}

/// Creates the database file with mode 0600 before `SQLite` sees it (`SQLite` would create it
/// with the umask's mode, usually world-readable). An existing file keeps its mode.
fn create_private_file(path: &Path) -> Result<(), StoreError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// Fails when the file at `path` has other names too (see [`StoreError::HardLinked`]).
fn refuse_hard_links(path: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let links = fs::metadata(path)
            .map_err(|e| StoreError::io(path, e))?
            .nlink();
        if links > 1 {
            return Err(StoreError::HardLinked {
                path: path.to_path_buf(),
                links,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::domain::SessionState;

    #[test]
    #[cfg(unix)]
    fn a_database_with_a_second_hard_link_is_refused_by_either_name() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        drop(Store::open(&db).unwrap());
        let link = dir.path().join("other-name.db");
        fs::hard_link(&db, &link).unwrap();
        for path in [&db, &link] {
            let err = Store::open(path).unwrap_err();
            assert!(
                matches!(err, StoreError::HardLinked { links: 2, .. }),
                "{}: {err}",
                path.display()
            );
            assert!(err.to_string().contains("copy the file"), "{err}");
        }
        fs::remove_file(&link).unwrap();
        drop(Store::open(&db).unwrap());
    }

    fn store_with_session() -> Store {
        let store = Store::open_in_memory().unwrap();
        store
            .create_session(&NewSession {
                id: "s1".into(),
                methodology: "m".into(),
                concept: "c".into(),
                max_turns: 5,
                state: SessionState::default(),
            })
            .unwrap();
        store
    }

    #[test]
    fn an_in_memory_store_is_migrated_with_foreign_keys_on() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        let fk: bool = store
            .conn
            .pragma_query_value(None, "foreign_keys", |r| r.get(0))
            .unwrap();
        assert!(fk);
    }

    #[test]
    fn bad_json_in_a_column_is_corrupt_and_names_the_row() {
        let store = store_with_session();
        store
            .conn
            .execute("UPDATE sessions SET state = '{\"turn_count\": \"x\"'", [])
            .unwrap();
        let err = store.get_session("s1").unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        assert!(
            err.to_string().contains("sessions.state of session s1"),
            "{err}"
        );
    }

    #[test]
    fn a_damaged_node_tracker_is_handed_back_not_refused() {
        let store = store_with_session();
        store
            .conn
            .execute("UPDATE sessions SET node_tracker = '{\"states\": {'", [])
            .unwrap();
        let session = store.get_session("s1").unwrap().unwrap();
        assert_eq!(session.node_tracker.as_deref(), Some("{\"states\": {"));
    }

    #[test]
    fn unknown_enum_text_is_corrupt() {
        let store = store_with_session();
        store
            .insert_utterance("s1", 1, Speaker::Respondent, "hi")
            .unwrap();
        // Only a damaged or hand-edited file gets past the CHECK constraints.
        store
            .conn
            .execute_batch(
                "PRAGMA ignore_check_constraints = ON;
                 UPDATE utterances SET speaker = 'narrator';
                 UPDATE sessions SET status = 'paused';",
            )
            .unwrap();
        let err = store.utterances("s1").unwrap_err();
        assert!(
            err.to_string().contains("unknown speaker 'narrator'"),
            "{err}"
        );
        let err = store.list_sessions().unwrap_err();
        assert!(err.to_string().contains("unknown status 'paused'"), "{err}");
    }

    #[test]
    fn default_path_ends_in_the_app_directory() {
        let path = default_path();
        assert!(path.ends_with("interviewer/interviewer.db") || path == Path::new(FILE_NAME));
    }
}
