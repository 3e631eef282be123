//! [`AsyncStore`]: the store on its own thread, for async callers.
//!
//! `SQLite` calls block, sometimes for the whole busy timeout, so they must never run on a tokio
//! worker. One dedicated thread owns the [`Store`] and runs closures in the order they arrive;
//! each caller awaits its answer on a oneshot. Sending uses an unbounded std channel, which
//! never blocks, so `call` only ever awaits. Serialising every call on one connection is also
//! what `SQLite` wants: one writer, no lock contention inside the process.
//!
//! Left out: cancellation. A closure already sent runs to completion even if its caller stops
//! waiting; its answer is then dropped.

use std::path::PathBuf;
use std::sync::mpsc;
use std::thread;

use tokio::sync::oneshot;

use super::{Store, StoreError};

/// A unit of work for the database thread.
type Job = Box<dyn FnOnce(&mut Store) + Send>;

/// A clonable handle to a [`Store`] running on a dedicated thread.
///
/// The thread ends when the last handle is dropped (after finishing the calls already sent).
#[derive(Debug, Clone)]
pub struct AsyncStore {
    jobs: mpsc::Sender<Job>,
}

impl AsyncStore {
    /// Moves an open store onto a new database thread.
    pub fn spawn(store: Store) -> Result<Self, StoreError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        start_thread(move || serve(store, &queue))?;
        Ok(Self { jobs })
    }

    /// Opens (and migrates) the database at `path` on a new database thread.
    pub async fn open(path: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let path = path.into();
        let (opened, opened_answer) = oneshot::channel();
        let (jobs, queue) = mpsc::channel::<Job>();
        start_thread(move || match Store::open(&path) {
            Ok(store) => {
                // The opener may have given up waiting; the thread still serves any handle.
                let _ = opened.send(Ok(()));
                serve(store, &queue);
            }
            Err(e) => {
                let _ = opened.send(Err(e));
            }
        })?;
        opened_answer.await.map_err(|_| StoreError::Closed)??;
        Ok(Self { jobs })
    }

    /// Runs `f` on the database thread and returns its result.
    ///
    /// Returns [`StoreError::Closed`] when the thread has stopped (a closure panicked).
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |store| {
            // The caller may have stopped waiting (its task was cancelled); not an error.
            let _ = reply.send(f(store));
        });
        self.jobs.send(job).map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

fn start_thread(body: impl FnOnce() + Send + 'static) -> Result<(), StoreError> {
    thread::Builder::new()
        .name("interviewer-db".to_owned())
        .spawn(body)
        .map(drop)
        .map_err(|e| StoreError::io("<database thread>", e))
}

/// Runs jobs until every handle is dropped.
fn serve(mut store: Store, queue: &mpsc::Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        job(&mut store);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn calls_run_on_the_store_thread() {
        let store = AsyncStore::spawn(Store::open_in_memory().unwrap()).unwrap();
        let name = store
            .call(|_| Ok(thread::current().name().map(str::to_owned)))
            .await
            .unwrap();
        assert_eq!(name.as_deref(), Some("interviewer-db"));
    }

    #[tokio::test]
    async fn a_dead_thread_reports_closed() {
        let store = AsyncStore::spawn(Store::open_in_memory().unwrap()).unwrap();
        let died: Result<(), StoreError> = store
            .call(|_| {
                #[allow(clippy::panic)]
                {
                    panic!("simulated bug in a closure")
                }
            })
            .await;
        assert!(matches!(died, Err(StoreError::Closed)));
        assert!(matches!(
            store.call(|_| Ok(())).await,
            Err(StoreError::Closed)
        ));
    }
}
