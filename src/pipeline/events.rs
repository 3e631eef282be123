//! What a running interview reports: stage progress, LLM calls, question text as it streams,
//! and turn outcomes. The TUI folds these into its view; the headless driver prints some.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;

use super::contracts::Focus;
use super::{Stage, TurnResult};
use crate::llm::Role;
use crate::scoring::ScoredCandidate;

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
        /// Attempts made, retries included.
        attempts: u32,
        /// USD, when the model's price is known.
        cost_usd: Option<f64>,
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
    /// Something the researcher should know that does not stop the interview (the audit
    /// trail could not be written, a stored node tracker could not be read and was replaced).
    Warning {
        message: String,
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
    /// A researcher replaced the pending question of turn `turn` (moderator mode): regenerated
    /// under another strategy or focus, or edited by hand. The new text follows as a `Question`.
    Overridden {
        turn: u32,
        strategy: String,
        focus: Option<Focus>,
        /// The decision redone for the researcher's choice; `None` when only the text changed.
        score_decomposition: Option<Vec<ScoredCandidate>>,
        /// True for a hand edit of the text, false for a regenerated question.
        edited: bool,
    },
}

/// Something that sees every event as it is emitted, beside the sink's channel (the audit
/// trail, for one).
///
/// Called on the pipeline's thread in the middle of a turn, so it must return at once: hand
/// the work to another thread rather than doing I/O here.
pub trait EventObserver: Send + Sync + std::fmt::Debug {
    fn observe(&self, event: &Event);
}

/// Where events go. A closed receiver is not an error: the pipeline runs the same unwatched.
///
/// Observers added with [`EventSink::with_observer`] see each event before the channel gets
/// it, whether or not anyone receives from the channel.
#[derive(Debug, Clone, Default)]
pub struct EventSink {
    tx: Option<UnboundedSender<Event>>,
    observers: Vec<Arc<dyn EventObserver>>,
}

impl EventSink {
    pub fn new(tx: UnboundedSender<Event>) -> Self {
        Self {
            tx: Some(tx),
            observers: Vec::new(),
        }
    }

    /// A sink that drops everything.
    pub fn none() -> Self {
        Self::default()
    }

    /// This sink, also forwarding every event to `observer`.
    #[must_use]
    pub fn with_observer(mut self, observer: impl EventObserver + 'static) -> Self {
        self.observers.push(Arc::new(observer));
        self
    }

    pub fn emit(&self, event: Event) {
        for observer in &self.observers {
            observer.observe(&event);
        }
        if let Some(tx) = &self.tx {
            // Nobody watching is fine: the pipeline runs the same unwatched.
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
