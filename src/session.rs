//! The session task: owns one [`Interview`] on a background thread with its own tokio
//! runtime, takes [`Command`]s and reports [`Event`]s. The TUI talks to it only through the two
//! channels, so drawing never waits on the pipeline.
//!
//! A dedicated thread rather than a task on the caller's runtime: the interview owns its
//! `SQLite` connection, which may move between threads but not be shared, so the whole
//! interview lives on one thread while its model calls still run concurrently on that
//! thread's runtime.
//!
//! Besides the pipeline's own events the task reports what a view cannot ask for without
//! touching the store: the session's history once when it starts ([`Event::Resumed`]), every
//! answer it receives ([`Event::AnswerReceived`]), and a [`Event::Snapshot`] of the graph,
//! node states, slots and focus trace after every command (built in `session/snapshot.rs`).

mod snapshot;

pub use snapshot::{history, publish as publish_snapshot};

use std::thread;

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::pipeline::{Event, EventSink, Interview, Pending};

/// What a driver asks of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// The respondent's answer to the pending question.
    Answer(String),
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
    pub commands: UnboundedSender<Command>,
    pub events: UnboundedReceiver<Event>,
    thread: Option<thread::JoinHandle<()>>,
}

impl SessionHandle {
    /// Asks the task to stop and waits for it.
    pub fn shutdown(self) {
        self.into_parts().1.shutdown();
    }

    /// Splits the handle: the events for a view, and the control that commands and stops the
    /// task.
    pub fn into_parts(self) -> (UnboundedReceiver<Event>, SessionControl) {
        (
            self.events,
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
    pub commands: UnboundedSender<Command>,
    thread: Option<thread::JoinHandle<()>>,
}

impl SessionControl {
    /// Asks the task to stop and waits for it (a running turn finishes first).
    pub fn shutdown(mut self) {
        // A closed channel means the task has already stopped; joining is all that is left.
        let _ = self.commands.send(Command::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Asks the task to stop and waits at most `limit`. Returns whether it stopped; if not, a
    /// turn is still running and is left to the process exit (its last checkpoint makes the
    /// session resumable), so quitting never waits on a model call.
    pub fn shutdown_within(mut self, limit: std::time::Duration) -> bool {
        let _ = self.commands.send(Command::Shutdown);
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
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let thread = thread::Builder::new()
        .name("interviewer-session".to_owned())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match runtime {
                Ok(rt) => {
                    let warn = ev_tx.clone();
                    let (events, trail) = crate::audit::attach(
                        EventSink::new(ev_tx.clone()),
                        interview.store(),
                        interview.session_id(),
                        move |message| {
                            let _ = warn.send(Event::Warning { message });
                        },
                    );
                    rt.block_on(run(interview, cmd_rx, events));
                    if let Some(trail) = trail {
                        trail.flush();
                    }
                }
                Err(e) => {
                    let _ = ev_tx.send(Event::Fatal {
                        error: format!("cannot start the session runtime: {e}"),
                    });
                }
            }
        })?;
    Ok(SessionHandle {
        commands: cmd_tx,
        events: ev_rx,
        thread: Some(thread),
    })
}

async fn run(
    mut interview: Interview,
    mut commands: UnboundedReceiver<Command>,
    events: EventSink,
) {
    events.emit(Event::Resumed(Box::new(snapshot::history(&interview))));
    snapshot::publish(&interview, &events);
    settle(&mut interview, &events).await;
    snapshot::publish(&interview, &events);
    while let Some(command) = commands.recv().await {
        match command {
            Command::Answer(text) => {
                events.emit(Event::AnswerReceived {
                    turn: interview.turn_count() + 1,
                    text: text.clone(),
                });
                match interview.answer(&text, &events).await {
                    Ok(_) => {
                        // The question is on screen: the deferred slot discovery runs while
                        // the respondent reads and types (its graph comes with the snapshot).
                        if let Err(e) = interview.discover_deferred_slots(&events).await {
                            events.emit(failed(&e));
                        }
                    }
                    Err(e) => events.emit(failed(&e)),
                }
            }
            Command::Retry => settle(&mut interview, &events).await,
            Command::EditQuestion(text) => {
                if let Err(e) = interview.edit_question(&text, &events) {
                    events.emit(failed(&e));
                }
            }
            Command::Regenerate { strategy, node_id } => {
                if let Err(e) = interview
                    .regenerate(&strategy, node_id.as_deref(), &events)
                    .await
                {
                    events.emit(failed(&e));
                }
            }
            Command::EndNow => {
                if let Err(e) = interview.end_now("Ended by researcher", &events) {
                    events.emit(Event::Fatal {
                        error: e.to_string(),
                    });
                }
            }
            Command::Shutdown => break,
        }
        snapshot::publish(&interview, &events);
        interview.flush_journal();
    }
}

/// Brings the session to a state where it waits for an answer (or is finished).
async fn settle(interview: &mut Interview, events: &EventSink) {
    let pending = match interview.pending() {
        Ok(p) => p,
        Err(e) => {
            events.emit(Event::Fatal {
                error: e.to_string(),
            });
            return;
        }
    };
    match pending {
        Pending::Opening => {
            if let Err(e) = interview.opening(events).await {
                events.emit(failed(&e));
            }
        }
        Pending::Resume {
            answer: Some(_), ..
        } => match interview.resume(events).await {
            Ok(_) => {
                if let Err(e) = interview.discover_deferred_slots(events).await {
                    events.emit(failed(&e));
                }
            }
            Err(e) => events.emit(failed(&e)),
        },
        Pending::Resume { turn, answer: None } => {
            // Interrupted before the answer was saved: ask the same question again.
            if let Ok(question) = interview.question_of(turn.saturating_sub(1)) {
                events.emit(Event::Question {
                    turn: turn - 1,
                    text: question,
                    closing: false,
                });
            }
        }
        Pending::Answer { turn, question } => events.emit(Event::Question {
            turn: turn - 1,
            text: question,
            closing: false,
        }),
        Pending::Finished { reason } => events.emit(Event::Finished { reason }),
    }
}

fn failed(e: &crate::pipeline::TurnError) -> Event {
    Event::TurnFailed {
        turn: e.turn,
        stage: e.stage,
        error: e.error.to_string(),
    }
}
