//! What a running interview reports: stage progress, LLM calls, question text as it streams,
//! and turn outcomes. The TUI folds these into its view; the headless driver prints some.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;

use super::contracts::Focus;
use super::{Stage, TurnResult};
use crate::domain::{FocusEntry, LlmScores, Speaker};
use crate::graph::model::SlotStatus;
use crate::graph::node_state::NodeState;
use crate::llm::Role;
use crate::scoring::ScoredCandidate;
use crate::store::UsageTotals;

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
    /// The session cannot go on (its database failed, its state is unreadable).
    Fatal {
        error: String,
    },
    /// The respondent's answer to turn `turn`, as the driver received it, reported before the
    /// turn runs so a view shows it whoever typed it (a person or a synthetic respondent).
    AnswerReceived {
        turn: u32,
        text: String,
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
    /// What an opened session already holds, reported once before it waits for anything.
    Resumed(Box<SessionHistory>),
    /// The session's graph and bookkeeping after a change (a turn, an override, the start).
    Snapshot(Box<SessionSnapshot>),
}

/// A session's past as a view needs it when it opens: the transcript and the last completed
/// turn's result (rebuilt from its checkpoints).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionHistory {
    pub transcript: Vec<TranscriptLine>,
    /// Every completed turn's result, oldest first (a researcher's override applied): the
    /// last is the latest turn, the rest let a view step back through the session.
    pub turns: Vec<TurnResult>,
}

/// One utterance of the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TranscriptLine {
    pub turn: u32,
    pub speaker: Speaker,
    pub text: String,
}

/// The session beyond one turn's result: the whole surface graph with node states and
/// provenance, the canonical slots with their members, the focus trace, the latest rubric
/// rationales and the usage so far. Built off the view's thread, so a view never queries the
/// store itself.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionSnapshot {
    pub session_id: String,
    /// Completed turns.
    pub turn_count: u32,
    pub max_turns: u32,
    /// The termination reason once the interview is over.
    pub finished: Option<String>,
    /// One entry per completed turn, oldest first, overrides marked.
    pub focus_history: Vec<FocusEntry>,
    /// Surface nodes in creation order (superseded ones included and marked).
    pub nodes: Vec<NodeView>,
    pub edges: Vec<EdgeView>,
    /// Canonical slots in discovery order.
    pub slots: Vec<SlotView>,
    /// Rubric scores of the latest completed turn, rationales included.
    pub rubric_scores: LlmScores,
    /// New surface nodes per completed turn: entry `i` is turn `i + 1`.
    pub new_nodes_per_turn: Vec<u32>,
    pub usage: UsageTotals,
}

/// A surface node with its tracked state and where it was said.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeView {
    pub id: String,
    pub label: String,
    pub node_type: String,
    /// The node type's ontology level (0 when the methodology gives none).
    pub level: u32,
    /// Turn that created the node.
    pub turn: u32,
    pub stance: i8,
    pub confidence: f64,
    pub superseded: bool,
    /// The key its state and node signals are stored under (its slot id once mapped).
    pub tracking_key: String,
    pub slot_id: Option<String>,
    /// The respondent's words the concept was extracted from.
    pub source_quote: String,
    /// Every answer that mentioned the concept.
    pub mentions: Vec<TranscriptLine>,
    /// The tracker's state for [`Self::tracking_key`], when it has one.
    pub state: Option<NodeState>,
}

/// A surface edge between two nodes of [`SessionSnapshot::nodes`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EdgeView {
    pub source: String,
    pub target: String,
    pub edge_type: String,
    pub turn: u32,
}

/// A canonical slot with its members.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlotView {
    pub id: String,
    pub name: String,
    pub node_type: String,
    pub status: SlotStatus,
    pub support_count: u32,
    pub first_seen_turn: u32,
    pub promoted_turn: Option<u32>,
    /// Surface node ids mapped to the slot.
    pub members: Vec<String>,
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
