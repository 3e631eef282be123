//! The session task of the terminal app: the one session driver ([`driver::run`]) on a
//! background thread, taking [`Command`]s from the keyboard on a bounded channel and reporting
//! [`SessionEvent`]s through a [`SessionFeed`] (events in order, snapshots latest-wins). The
//! TUI talks to it only through these, so drawing never waits on the pipeline. The headless
//! `interview` command and `simulate` run the same driver with their own answer sources.
//!
//! A dedicated thread rather than a task on the caller's runtime: the interview owns its
//! `SQLite` connection, which may move between threads but not be shared, so the whole
//! interview lives on one thread while its model calls still run concurrently on that
//! thread's runtime.
//!
//! Besides the pipeline's own events the driver reports what a view cannot ask for without
//! touching the store: the session's history once when it starts ([`SessionEvent::Resumed`]),
//! every answer it receives ([`SessionEvent::AnswerReceived`]), and a
//! [`SessionEvent::Snapshot`] of the graph, node states, slots and focus trace after every
//! command (built in `session/snapshot.rs`, shaped in `session/views.rs`).

pub mod driver;
pub mod events;
mod info;
mod snapshot;
pub mod views;

pub use driver::{AnswerSource, Ending, Reports, SourceError, Waiting};
pub use events::{FeedSender, SessionEvent, SessionFeed};
pub use info::{SessionInfo, StrategyInfo};
pub use snapshot::{history, publish as publish_snapshot};

use std::thread;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use tokio::sync::mpsc::{self, Receiver, Sender};

use crate::pipeline::Interview;

/// Commands waiting for the session: a person types far slower than this fills, and the
/// terminal app keeps what does not fit and sends it later, so nothing is lost.
pub const COMMAND_CAPACITY: usize = 32;

/// What a driver asks of the session.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// The respondent's answer to the pending question.
    Answer(String),
    /// An answer that was spoken: the text as sent (a moderator may have corrected words) and
    /// how it was heard, saved with the answer.
    SpokenAnswer {
        text: String,
        speech: crate::domain::AnswerSpeech,
    },
    /// Retry the turn that failed (or the opening question).
    Retry,
    /// Regenerate the pending question with a researcher's choice of strategy and focus.
    Regenerate {
        strategy: String,
        node_id: Option<String>,
    },
    /// Replace the pending question's text with the researcher's edit.
    EditQuestion(String),
    /// End the interview now.
    EndNow,
    /// Stop the task (the session stays resumable).
    Shutdown,
}

/// The driver's end of a running session.
#[derive(Debug)]
pub struct SessionHandle {
    /// What a view shows of the session beside its events.
    pub info: SessionInfo,
    pub commands: Sender<Command>,
    pub feed: SessionFeed,
    thread: Option<thread::JoinHandle<()>>,
}

impl SessionHandle {
    /// Asks the task to stop and waits for it.
    pub fn shutdown(self) {
        self.into_parts().1.shutdown();
    }

    /// Splits the handle: the events for a view, and the control that commands and stops the
    /// task.
    pub fn into_parts(self) -> (SessionFeed, SessionControl) {
        (
            self.feed,
            SessionControl {
                commands: self.commands,
                thread: self.thread,
            },
        )
    }
}

/// Commands a running session and stops it; the other half of [`SessionHandle::into_parts`].
#[derive(Debug)]
pub struct SessionControl {
    pub commands: Sender<Command>,
    thread: Option<thread::JoinHandle<()>>,
}

impl SessionControl {
    /// Asks the task to stop and waits for it (a running turn finishes first).
    pub fn shutdown(mut self) {
        // A closed channel means the task has already stopped; joining is all that is left.
        let _ = self.commands.try_send(Command::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Asks the task to stop and waits at most `limit`. Returns whether it stopped; if not, a
    /// turn is still running and is left to the process exit (its last checkpoint makes the
    /// session resumable), so quitting never waits on a model call.
    pub fn shutdown_within(mut self, limit: std::time::Duration) -> bool {
        let _ = self.commands.try_send(Command::Shutdown);
        let deadline = std::time::Instant::now() + limit;
        let Some(t) = self.thread.take() else {
            return true;
        };
        while !t.is_finished() {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = t.join();
        true
    }
}

/// Why a session task could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the session thread: {0}")]
pub struct SpawnError(#[from] std::io::Error);

/// Starts the session task. It first brings the session to a waiting state: asks the opening
/// question if none was asked, resumes an interrupted turn whose answer was saved, or repeats
/// the pending question.
pub fn spawn(interview: Interview) -> Result<SessionHandle, SpawnError> {
    let info = SessionInfo::of(&interview);
    let (cmd_tx, cmd_rx) = mpsc::channel(COMMAND_CAPACITY);
    let (feed_tx, feed) = SessionFeed::channel();
    let thread = thread::Builder::new()
        .name("interviewer-session".to_owned())
        .spawn(move || {
            let mut keyboard = Keyboard(cmd_rx);
            let ran = driver::run(interview, &mut keyboard, |event| feed_tx.send(event));
            // Every other ending was reported by the driver's own events.
            if let Err(e) = ran {
                feed_tx.send(&SessionEvent::Fatal {
                    error: e.to_string(),
                });
            }
        })?;
    Ok(SessionHandle {
        info,
        commands: cmd_tx,
        feed,
        thread: Some(thread),
    })
}

/// Commands typed by a person in the terminal app.
struct Keyboard(Receiver<Command>);

impl AnswerSource for Keyboard {
    fn next<'a>(
        &'a mut self,
        _waiting: &'a Waiting<'a>,
    ) -> LocalBoxFuture<'a, Result<Option<Command>, SourceError>> {
        // A closed channel (the app is gone) stops the session like a shutdown.
        async move { Ok(Some(self.0.recv().await.unwrap_or(Command::Shutdown))) }.boxed_local()
    }

    fn interactive(&self) -> bool {
        true
    }
}
