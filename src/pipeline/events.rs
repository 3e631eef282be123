//! What a running interview reports: stage progress, LLM calls, question text as it streams,
//! and turn outcomes. The TUI folds these into its view; the headless driver prints some.

use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;

use super::{Stage, TurnResult};
use crate::llm::Role;

/// One thing that happened.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A stage began (resumed stages whose checkpoint exists are not re-run and report
    /// `StageFinished` with `resumed: true` only).
    StageStarted {
        turn: u32,
        stage: Stage,
    },
    StageFinished {
        turn: u32,
        stage: Stage,
        #[serde(with = "millis")]
        elapsed: Duration,
        summary: String,
        resumed: bool,
    },
    /// A model call finished (or failed: `outcome` says which).
    LlmCall {
        turn: u32,
        role: Role,
        provider: String,
        model: String,
        tokens_in: u64,
        tokens_out: u64,
        #[serde(with = "millis")]
        latency: Duration,
        outcome: String,
    },
    /// A piece of the question being generated.
    QuestionDelta {
        turn: u32,
        text: String,
    },
    /// The question shown to the respondent (opening, follow-up or regenerated).
    Question {
        turn: u32,
        text: String,
        closing: bool,
    },
    TurnCompleted(Box<TurnResult>),
    TurnFailed {
        turn: u32,
        stage: Stage,
        error: String,
    },
    /// The interview is over.
    Finished {
        reason: String,
    },
    /// The session cannot go on (its database failed, its state is unreadable).
    Fatal {
        error: String,
    },
}

/// Where events go. A closed receiver is not an error: the pipeline runs the same unwatched.
#[derive(Debug, Clone, Default)]
pub struct EventSink(Option<UnboundedSender<Event>>);

impl EventSink {
    pub fn new(tx: UnboundedSender<Event>) -> Self {
        Self(Some(tx))
    }

    /// A sink that drops everything.
    pub fn none() -> Self {
        Self(None)
    }

    pub fn emit(&self, event: Event) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(event);
        }
    }
}

mod millis {
    use std::time::Duration;

    use serde::Serializer;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}
