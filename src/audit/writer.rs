//! The writer thread: turns observed events into lines and appends them to the file.
//!
//! It owns the per-turn bookkeeping a line needs (when each stage started, the latest turn),
//! so the pipeline's side does nothing but copy a few fields and send. The first write error
//! is reported through [`Shared::fail`]; every later event is dropped.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

use super::Shared;
use super::record::{Line, Observed, decision_fields, llm_fields, millis, object};
use crate::pipeline::Stage;

/// What travels from the observer to the writer thread.
pub(crate) enum Message {
    Event {
        at: SystemTime,
        observed: Observed,
    },
    /// Answer once everything sent before has been written (or dropped).
    Flush(Sender<()>),
}

/// The writer thread's state.
pub(crate) struct Writer {
    pub file: File,
    pub session: String,
    /// The latest turn seen; session-level events (termination) are filed under it.
    pub turn: u32,
    /// Start times of stages that have not finished yet.
    pub started: HashMap<(u32, Stage), SystemTime>,
    pub shared: std::sync::Arc<Shared>,
}

impl Writer {
    /// Runs until every sender is gone.
    pub(crate) fn run(mut self, messages: &Receiver<Message>) {
        for message in messages {
            match message {
                Message::Event { at, observed } => self.handle(at, &observed),
                Message::Flush(done) => {
                    // The flusher may have given up waiting; nothing to tell then.
                    let _ = done.send(());
                }
            }
        }
    }

    fn handle(&mut self, at: SystemTime, observed: &Observed) {
        if let Some(turn) = observed.turn() {
            self.turn = turn;
        }
        let Some((event, fields)) = self.fields(at, observed) else {
            return;
        };
        if self.shared.error().is_some() {
            return;
        }
        let line = Line {
            at,
            session: &self.session,
            turn: self.turn,
            event,
            fields,
        }
        .to_json();
        let written = self
            .file
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| self.file.flush());
        if let Err(e) = written {
            self.shared.fail(&e);
        }
    }

    /// The event name and fields of a line, or `None` when the event only updates state.
    fn fields(
        &mut self,
        at: SystemTime,
        observed: &Observed,
    ) -> Option<(&'static str, Map<String, Value>)> {
        Some(match observed {
            Observed::StageStarted { turn, stage } => {
                self.started.insert((*turn, *stage), at);
                return None;
            }
            Observed::StageFinished {
                turn,
                stage,
                elapsed,
                summary,
                resumed,
            } => {
                let started = self
                    .started
                    .remove(&(*turn, *stage))
                    .unwrap_or_else(|| at.checked_sub(*elapsed).unwrap_or(at));
                let mut fields = stage_fields(*stage, started, *elapsed);
                fields.insert(
                    "outcome".to_owned(),
                    json!(if *resumed { "resumed" } else { "ok" }),
                );
                fields.insert("summary".to_owned(), json!(summary));
                ("stage", fields)
            }
            Observed::StageFailed { turn, stage, error } => {
                let started = self.started.remove(&(*turn, *stage)).unwrap_or(at);
                let elapsed = at.duration_since(started).unwrap_or_default();
                let mut fields = stage_fields(*stage, started, elapsed);
                fields.insert("outcome".to_owned(), json!("failed"));
                fields.insert("error".to_owned(), json!(error));
                ("stage", fields)
            }
            Observed::LlmCall { .. } => ("llm_call", llm_fields(observed)),
            Observed::Decision { .. } => ("strategy_decision", decision_fields(observed)),
            Observed::Termination { reason } => ("termination", object(json!({"reason": reason}))),
            Observed::Fatal { error } => ("fatal", object(json!({"error": error}))),
        })
    }
}

/// `name`, `number`, `started` and `elapsed_ms` of a stage line.
fn stage_fields(stage: Stage, started: SystemTime, elapsed: Duration) -> Map<String, Value> {
    object(json!({
        "name": stage.name(),
        "number": stage.number(),
        "started": crate::time::rfc3339(started),
        "elapsed_ms": millis(elapsed),
    }))
}
