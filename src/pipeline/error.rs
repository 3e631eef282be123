//! Pipeline errors: what went wrong, and for a turn, in which stage.

use super::Stage;
use crate::config::ConfigError;
use crate::embed::EmbedError;
use crate::graph::discovery::DiscoveryError;
use crate::graph::node_state::NodeTrackerError;
use crate::llm::{LlmError, Role};
use crate::reply_json::ContractError;
use crate::scoring::ScoringError;
use crate::store::StoreError;

/// Why an interview operation failed.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("the answer is empty; type an answer (or end the interview)")]
    EmptyAnswer,
    #[error(
        "the answer is {chars} characters long; the limit is {limit}. Shorten it or split it over two turns"
    )]
    AnswerTooLong { chars: usize, limit: usize },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{role} call failed: {source}")]
    Llm {
        role: Role,
        #[source]
        source: LlmError,
    },
    #[error("{role} reply rejected: {source}")]
    Contract {
        role: Role,
        #[source]
        source: ContractError,
    },
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Scoring(#[from] ScoringError),
    #[error("node tracker: {0}")]
    Tracker(#[from] NodeTrackerError),
    /// Stage 6 was handed a graph state that stage 5 did not compute for this turn (seed 001:
    /// stage 6 "Validates: Graph state freshness via `computed_at` timestamp").
    #[error("the graph state scored in turn {turn} is not this turn's: {reason}")]
    StaleGraphState { turn: u32, reason: String },
    #[error("{stage} read before it ran (pipeline order)")]
    NotYetRun { stage: Stage },
    #[error("checkpoint of {stage} cannot be read: {message}")]
    Checkpoint { stage: Stage, message: String },
    #[error("{CRASH}='{value}': {reason}", CRASH = super::CRASH_ENV)]
    CrashSwitch { value: String, reason: String },
    #[error("session {0} does not exist")]
    NoSession(String),
    #[error("session {id} has finished ({reason})")]
    Finished { id: String, reason: String },
    #[error("{0}")]
    State(String),
    #[error("unknown strategy '{name}'; the methodology has: {known}")]
    UnknownStrategy { name: String, known: String },
    #[error("unknown node '{0}'")]
    UnknownNode(String),
}

impl PipelineError {
    /// Wraps a discovery failure as an LLM, contract or embedding error of the slot role.
    /// `call_error` is the typed error of the failed call, when the caller kept it.
    pub(crate) fn discovery(e: DiscoveryError, call_error: Option<LlmError>) -> Self {
        match e {
            DiscoveryError::Llm(message) => Self::Llm {
                role: Role::SlotDiscovery,
                source: call_error.unwrap_or(LlmError::Transport {
                    provider: "slot_discovery".to_owned(),
                    message,
                }),
            },
            DiscoveryError::Contract(source) => Self::Contract {
                role: Role::SlotDiscovery,
                source,
            },
        }
    }

    /// Whether the failure came from a model (a call or its reply), as opposed to config or
    /// storage; the CLI maps the two to different exit codes.
    pub fn is_llm(&self) -> bool {
        matches!(self, Self::Llm { .. } | Self::Contract { .. })
    }
}

/// A turn that stopped in a stage. Everything committed before it stays; the turn resumes
/// from that stage.
#[derive(Debug, thiserror::Error)]
#[error("turn {turn} failed in stage {} ({stage}): {error}", stage.number())]
pub struct TurnError {
    pub turn: u32,
    pub stage: Stage,
    #[source]
    pub error: PipelineError,
}
