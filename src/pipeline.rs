//! The turn pipeline: one respondent answer in, the next question out, through the seeds'
//! twelve stages (1, 2, 2.5, 3, 4, 4.5, 5, 6, 7, 8, 9, 10).
//!
//! Each stage is a function in its own file under `stages/`, named by the seeds' number and
//! the stage's name (`stages/s03_extraction.rs`, `stages/s04_5_slot_discovery.rs`, …):
//! `run(input, ports)` reads the typed outputs of earlier stages ([`contracts`]) and what the
//! interview offers through its ports (configuration, LLM router, embedder, store reads, the
//! session's data, events), and returns its output contract with the store changes it implies,
//! as data. The turn runner (`runner.rs`) alone commits them: output, effects, checkpoint and
//! LLM usage in one `SQLite` transaction, then the effects applied in memory. A turn
//! interrupted anywhere resumes at the first stage without a checkpoint: committed LLM results
//! are read back, never requested again, and nothing is written twice.
//!
//! The LLM signal batch (the `signal_scoring` role) needs only the answer and the question it
//! answers, so it starts as soon as stage 2 has saved the answer and runs while stages 2.5–5
//! work; stage 6 awaits it. Slot discovery (4.5) runs after the question is out unless
//! [`PipelineSettings::inline_slot_discovery`] asks for the seeds' order.
//!
//! [`Interview`] owns one session: its configuration, its graph in memory and the store. The
//! session driver ([`crate::session`]) drives it; tests drive it directly. A researcher's
//! override of the pending question lives in `moderator.rs`.

mod context;
pub mod contracts;
mod crash;
mod error;
pub mod events;
mod ids;
mod interview;
mod moderator;
mod ports;
mod result;
mod runner;
mod session_data;
mod stages;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use context::TurnContext;
pub use crash::{CRASH_ENV, CrashPoint, CrashSide};
pub use error::{PipelineError, TurnError};
pub use events::{Event, EventSink};
pub use interview::{Interview, InterviewSpec, Pending, Services};
pub use result::TurnResult;

/// Why an imported session ended: its transcript did.
pub const TRANSCRIPT_ENDED: &str = "transcript ended";

/// Longest answer the pipeline accepts, in characters (the reference system's limit).
pub const MAX_ANSWER_CHARS: usize = 5_000;

/// The stages, in execution order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    ContextLoading,
    UtteranceSaving,
    SrlPreprocessing,
    Extraction,
    GraphUpdate,
    SlotDiscovery,
    StateComputation,
    StrategySelection,
    Continuation,
    QuestionGeneration,
    ResponseSaving,
    ScoringPersistence,
}

impl Stage {
    pub const ALL: [Stage; 12] = [
        Stage::ContextLoading,
        Stage::UtteranceSaving,
        Stage::SrlPreprocessing,
        Stage::Extraction,
        Stage::GraphUpdate,
        Stage::SlotDiscovery,
        Stage::StateComputation,
        Stage::StrategySelection,
        Stage::Continuation,
        Stage::QuestionGeneration,
        Stage::ResponseSaving,
        Stage::ScoringPersistence,
    ];

    /// The name used in checkpoints, events and `INTERVIEWER_CRASH_AT`.
    pub fn name(self) -> &'static str {
        match self {
            Self::ContextLoading => "context_loading",
            Self::UtteranceSaving => "utterance_saving",
            Self::SrlPreprocessing => "srl_preprocessing",
            Self::Extraction => "extraction",
            Self::GraphUpdate => "graph_update",
            Self::SlotDiscovery => "slot_discovery",
            Self::StateComputation => "state_computation",
            Self::StrategySelection => "strategy_selection",
            Self::Continuation => "continuation",
            Self::QuestionGeneration => "question_generation",
            Self::ResponseSaving => "response_saving",
            Self::ScoringPersistence => "scoring_persistence",
        }
    }

    /// The seeds' stage number (`2.5`, `4.5` for the optional stages).
    pub fn number(self) -> &'static str {
        match self {
            Self::ContextLoading => "1",
            Self::UtteranceSaving => "2",
            Self::SrlPreprocessing => "2.5",
            Self::Extraction => "3",
            Self::GraphUpdate => "4",
            Self::SlotDiscovery => "4.5",
            Self::StateComputation => "5",
            Self::StrategySelection => "6",
            Self::Continuation => "7",
            Self::QuestionGeneration => "8",
            Self::ResponseSaving => "9",
            Self::ScoringPersistence => "10",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Feature switches and bounds of the pipeline (seed 001 "Feature Flags").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent switches of the pipeline, each set from its own flag or command"
)]
pub struct PipelineSettings {
    /// Stage 2.5: discourse relations and predicate frames as extraction hints.
    pub enable_srl: bool,
    /// Stage 4.5: canonical slots (the dual graph).
    pub enable_canonical_slots: bool,
    /// Character budget of the conversation window given to prompts.
    pub window_chars: usize,
    /// Run slot discovery inside the turn, before state computation, as the seeds order it.
    /// Off (the default), it runs after the question is out, while the respondent reads and
    /// types ([`Interview::discover_deferred_slots`]), so a turn waits for two model calls
    /// instead of three; the turn's canonical signals then come from the previous turn's slots.
    pub inline_slot_discovery: bool,
    /// An imported transcript decides when the interview ends: continuation still works out
    /// whether the engine would stop (its reason is kept), but the session goes on to the
    /// transcript's last answer.
    pub transcript_driven: bool,
}

impl Default for PipelineSettings {
    fn default() -> Self {
        Self {
            enable_srl: true,
            enable_canonical_slots: true,
            window_chars: crate::prompts::DEFAULT_WINDOW_CHARS,
            inline_slot_discovery: false,
            transcript_driven: false,
        }
    }
}

/// The characters of `raw` that [`clean_answer`] keeps and counts against
/// [`MAX_ANSWER_CHARS`]: what a front end shows as the answer's length.
pub fn answer_chars(raw: &str) -> usize {
    cleaned_answer(raw).chars().count()
}

fn cleaned_answer(raw: &str) -> String {
    let cleaned: String = raw
        .replace("\r\n", "\n")
        .chars()
        .map(|c| if c == '\r' { '\n' } else { c })
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect();
    cleaned.trim().to_owned()
}

/// Cleans a respondent's answer for prompts and storage: control characters other than
/// newlines and tabs are removed, line endings normalised, surrounding whitespace trimmed.
///
/// Returns an error for an empty answer and for one longer than [`MAX_ANSWER_CHARS`]; the
/// answer is refused rather than cut, so nothing the respondent said is silently dropped.
pub fn clean_answer(raw: &str) -> Result<String, PipelineError> {
    let cleaned = cleaned_answer(raw);
    if cleaned.is_empty() {
        return Err(PipelineError::EmptyAnswer);
    }
    let chars = cleaned.chars().count();
    if chars > MAX_ANSWER_CHARS {
        return Err(PipelineError::AnswerTooLong {
            chars,
            limit: MAX_ANSWER_CHARS,
        });
    }
    Ok(cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_names_round_trip_in_order() {
        let numbers: Vec<&str> = Stage::ALL.iter().map(|s| s.number()).collect();
        assert_eq!(
            numbers,
            [
                "1", "2", "2.5", "3", "4", "4.5", "5", "6", "7", "8", "9", "10"
            ]
        );
        for stage in Stage::ALL {
            assert_eq!(Stage::parse(stage.name()), Some(stage));
        }
        assert_eq!(Stage::parse("extract"), None);
    }

    #[test]
    fn answers_are_cleaned_and_bounded() {
        assert_eq!(
            clean_answer("  I like\u{0} oat\r\nmilk\u{1b}[31m \u{7}").unwrap(),
            "I like oat\nmilk[31m"
        );
        assert!(matches!(
            clean_answer(" \n\t\u{0} "),
            Err(PipelineError::EmptyAnswer)
        ));
        let long = "é".repeat(MAX_ANSWER_CHARS + 1);
        assert!(matches!(
            clean_answer(&long),
            Err(PipelineError::AnswerTooLong { chars, .. }) if chars == MAX_ANSWER_CHARS + 1
        ));
        assert!(clean_answer(&"é".repeat(MAX_ANSWER_CHARS)).is_ok());
    }
}
