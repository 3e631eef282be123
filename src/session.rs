//! The session task: owns one [`Interview`] on a background thread with its own tokio
//! runtime, takes [`Command`]s and reports [`Event`]s. The TUI talks to it only through the two
//! channels, so drawing never waits on the pipeline.
//!
//! A dedicated thread rather than a task on the caller's runtime: the interview owns its
//! `SQLite` connection, which may move between threads but not be shared, so the whole
//! interview lives on one thread while its model calls still run concurrently on that
//! thread's runtime.

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
    pub fn shutdown(mut self) {
        let _ = self.commands.send(Command::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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
                Ok(rt) => rt.block_on(run(interview, cmd_rx, EventSink::new(ev_tx))),
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
    settle(&mut interview, &events).await;
    while let Some(command) = commands.recv().await {
        match command {
            Command::Answer(text) => {
                if let Err(e) = interview.answer(&text, &events).await {
                    events.emit(failed(&e));
                }
            }
            Command::Retry => settle(&mut interview, &events).await,
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
        } => {
            if let Err(e) = interview.resume(events).await {
                events.emit(failed(&e));
            }
        }
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
