//! The session driving lock: at most one driver per session, across processes.
//!
//! A file-backed store takes an exclusive OS advisory lock (`flock` on Unix, `LockFileEx` on
//! Windows, via [`File::try_lock`]) on `<canonical db path>.locks/<session id>.lock`; a
//! symbolic link to the database leads to the same lock. A hard link under another name would
//! not (nothing ties the two paths together, and `SQLite`'s write-ahead log follows the name
//! too), so [`Store::open`](super::Store::open) refuses a file with more than one. The OS drops the
//! lock when the file is closed, so a crashed process never leaves a session stuck. Such locks
//! belong to the open file description, so two handles in one process exclude each other too.
//! Lock files are never deleted: removing one while another process waits on it would let two
//! drivers lock two different files for the same session.
//!
//! An in-memory store has no file to lock and is private to its process, so it keeps the held
//! session ids in a table shared by the store and its locks. Readers never take the lock.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::StoreError;

/// Proof that this process drives a session; dropping it releases the session.
#[derive(Debug)]
#[must_use = "the session is released as soon as the lock is dropped"]
pub struct SessionLock {
    session_id: String,
    held: Held,
}

#[derive(Debug)]
enum Held {
    /// The open, locked file; closing it releases the OS lock.
    File(File),
    Memory(MemoryLocks),
}

impl SessionLock {
    pub fn session_id(&self) -> &str {
        &self.session_id
    }
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        match &self.held {
            // Closing the file would release the lock too; unlocking first makes the release
            // independent of when the descriptor is actually closed.
            Held::File(file) => {
                // Nothing to do on failure: the close that follows releases the lock anyway.
                let _ = file.unlock();
            }
            Held::Memory(table) => table.release(&self.session_id),
        }
    }
}

/// The in-process lock table of an in-memory store.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemoryLocks(Arc<Mutex<HashSet<String>>>);

impl MemoryLocks {
    pub(crate) fn acquire(&self, session_id: &str) -> Result<SessionLock, StoreError> {
        // A poisoned table is still a consistent set of ids: insert and remove cannot tear it.
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !held.insert(session_id.to_owned()) {
            return Err(in_use(session_id));
        }
        Ok(SessionLock {
            session_id: session_id.to_owned(),
            held: Held::Memory(self.clone()),
        })
    }

    fn release(&self, session_id: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
    }
}

/// Locks `session_id` for the database at `db_path`. The lock folder is named after the
/// file's canonical path, so the same database opened through a symbolic link (or a path with
/// `..`) takes the same lock.
pub(crate) fn acquire_file(db_path: &Path, session_id: &str) -> Result<SessionLock, StoreError> {
    let canonical = db_path
        .canonicalize()
        .map_err(|e| StoreError::io(db_path, e))?;
    let dir = lock_dir(&canonical);
    super::create_private_dir(&dir)?;
    let path = dir.join(format!("{}.lock", file_stem(session_id)));
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path).map_err(|e| StoreError::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(SessionLock {
            session_id: session_id.to_owned(),
            held: Held::File(file),
        }),
        Err(TryLockError::WouldBlock) => Err(in_use(session_id)),
        Err(TryLockError::Error(e)) => Err(StoreError::io(path, e)),
    }
}

/// `<db path>.locks`: next to the database, so every process opening the file finds it.
fn lock_dir(db_path: &Path) -> PathBuf {
    let mut dir = db_path.as_os_str().to_owned();
    dir.push(".locks");
    PathBuf::from(dir)
}

/// A file name for a session id: ids made of ASCII letters, digits, `-` and `_` (UUIDs) are
/// used as they are; anything else is hex-encoded so no id can escape the lock directory.
fn file_stem(session_id: &str) -> String {
    let plain = !session_id.is_empty()
        && session_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain {
        session_id.to_owned()
    } else {
        let mut stem = String::from("x-");
        for byte in session_id.bytes() {
            stem.push_str(&format!("{byte:02x}"));
        }
        stem
    }
}

fn in_use(session_id: &str) -> StoreError {
    StoreError::SessionInUse {
        session_id: session_id.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn unsafe_ids_cannot_escape_the_lock_directory() {
        assert_eq!(file_stem("3f2a-b_9"), "3f2a-b_9");
        assert_eq!(file_stem("../x"), "x-2e2e2f78");
        assert_eq!(file_stem(""), "x-");
    }

    #[test]
    fn memory_locks_exclude_and_release() {
        let table = MemoryLocks::default();
        let lock = table.acquire("s1").unwrap();
        assert_eq!(lock.session_id(), "s1");
        assert!(matches!(
            table.acquire("s1"),
            Err(StoreError::SessionInUse { .. })
        ));
        let other = table.acquire("s2").unwrap();
        drop(lock);
        let again = table.acquire("s1").unwrap();
        drop((other, again));
    }

    #[test]
    #[cfg(unix)]
    fn a_symbolic_link_to_the_database_takes_the_same_lock() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        std::fs::write(&db, "").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let link = dir.path().join("sub/link.db");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let lock = acquire_file(&link, "s1").unwrap();
        for other in [db.clone(), dir.path().join("sub/../x.db")] {
            assert!(
                matches!(
                    acquire_file(&other, "s1"),
                    Err(StoreError::SessionInUse { .. })
                ),
                "{}",
                other.display()
            );
        }
        drop(lock);
        drop(acquire_file(&db, "s1").unwrap());
        assert!(matches!(
            acquire_file(&dir.path().join("missing.db"), "s1"),
            Err(StoreError::Io { .. })
        ));
    }

    #[test]
    fn file_locks_exclude_a_second_open_of_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        std::fs::write(&db, "").unwrap();
        let lock = acquire_file(&db, "s1").unwrap();
        assert!(dir.path().join("x.db.locks").join("s1.lock").exists());
        assert!(matches!(
            acquire_file(&db, "s1"),
            Err(StoreError::SessionInUse { .. })
        ));
        drop(lock);
        drop(acquire_file(&db, "s1").unwrap());
    }
}
