//! Simulated interviews: a persona-driven synthetic respondent answers the pipeline's questions,
//! one run at a time or as a matrix of personas × methodologies.
//!
//! - [`PersonaRespondent`] answers in character through the `respondent` LLM role, choosing
//!   each answer's length and whether to deflect from a seeded generator ([`rng`]).
//! - [`run_one`] drives one session to its end (creating it, or resuming it after an
//!   interruption) and reports every pipeline [`Event`](crate::pipeline::Event) to an observer,
//!   which is how progress bars and a live view follow it.
//! - [`summarize`] reads a session's outcome from the store; [`comparison_table`] lays
//!   several side by side.
//! - [`matrix`] parses `--matrix`, keeps the resumable manifest and runs cells with bounded
//!   concurrency ([`run_bounded`]).
//!
//! Reproducibility: the session id is derived from the seed and the run's parameters
//! ([`session_id`]), and every random choice comes from the seed, so with the scripted provider
//! a run's utterances, strategies and graph are the same every time. Ids of nodes, edges and
//! utterances are still random UUIDs assigned by the pipeline, as are timestamps; compare
//! contents, not ids.
//!
//! Left out: exports (`crate::export`) and the terminal UI; the CLI wires them in.

pub mod matrix;
mod pool;
mod progress;
mod respondent;
pub mod rng;
mod runner;
mod summary;
mod table;

use crate::config::Persona;
use crate::pipeline::{InterviewSpec, PipelineError, PipelineSettings, TurnError};
use crate::store::{SIMULATION_ID_PREFIX, StoreError};

pub use pool::run_bounded;
pub use progress::{RunProgress, progress_style};
pub use respondent::{
    Answer, AnswerPlan, PersonaRespondent, RespondentError, expected_target_words, fatigue_level,
    length_weights, plan_answer,
};
pub use runner::{RunReport, open_session, run_one};
pub use summary::{RunSummary, format_cost, render_summary, summarize};
pub use table::comparison_table;

/// Everything one simulated interview is run with.
#[derive(Debug, Clone)]
pub struct SimulationSpec {
    /// Concept, methodology (any methodology, not only the concept's default), rubrics and the
    /// number of turns.
    pub interview: InterviewSpec,
    pub persona: Persona,
    pub seed: u64,
}

/// Why a simulation stopped.
#[derive(Debug, thiserror::Error)]
pub enum SimulationError {
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error(transparent)]
    Turn(#[from] TurnError),
    #[error(transparent)]
    Respondent(#[from] RespondentError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The derived session id exists for another concept or methodology.
    #[error(
        "session {id} runs concept '{found_concept}' with '{found_methodology}', not \
         '{concept}' with '{methodology}'; use another --seed or database"
    )]
    Mismatch {
        id: String,
        concept: String,
        methodology: String,
        found_concept: String,
        found_methodology: String,
    },
    #[error("session {id}: {message}")]
    State { id: String, message: String },
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

impl SimulationError {
    /// Whether a model call (interviewer's or respondent's) or its reply failed; the run can be
    /// resumed once the model answers.
    pub fn is_llm(&self) -> bool {
        match self {
            Self::Pipeline(e) => e.is_llm(),
            Self::Turn(e) => e.error.is_llm(),
            Self::Respondent(_) => true,
            _ => false,
        }
    }
}

/// The session id of a simulation: `sim-` and 16 hex digits of a hash of the seed, concept,
/// methodology, persona, number of turns and optional stages.
///
/// The same parameters always give the same id, which makes a run reproducible and lets an
/// interrupted run be found and resumed. Run again with another seed (or database) for a new
/// session with the same parameters.
pub fn session_id(spec: &SimulationSpec, settings: &PipelineSettings) -> String {
    let key = format!(
        "v1\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
        spec.seed,
        spec.interview.concept.id,
        spec.interview.methodology.method.name,
        spec.persona.id,
        spec.interview.max_turns,
        settings.enable_srl,
        settings.enable_canonical_slots
    );
    format!(
        "{}{:016x}",
        SIMULATION_ID_PREFIX,
        rng::fnv1a(key.as_bytes())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigDir;

    fn spec(persona: &str, methodology: &str, seed: u64) -> SimulationSpec {
        let dir = ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"));
        SimulationSpec {
            interview: InterviewSpec {
                methodology: dir
                    .methodology(methodology, &crate::signals::Catalog)
                    .unwrap(),
                concept: dir.concept("oat_milk").unwrap(),
                rubrics: Vec::new(),
                max_turns: 8,
                understanding: crate::domain::Understanding::Llm,
            },
            persona: dir.persona(persona).unwrap(),
            seed,
        }
    }

    #[test]
    fn session_ids_follow_every_parameter() {
        let settings = PipelineSettings::default();
        let base = session_id(&spec("brief", "means_end_chain", 1), &settings);
        assert!(base.starts_with("sim-") && base.len() == 20, "{base}");
        assert_eq!(
            base,
            session_id(&spec("brief", "means_end_chain", 1), &settings)
        );
        let others = [
            session_id(&spec("brief", "means_end_chain", 2), &settings),
            session_id(&spec("hedging", "means_end_chain", 1), &settings),
            session_id(&spec("brief", "jobs_to_be_done", 1), &settings),
            session_id(
                &spec("brief", "means_end_chain", 1),
                &PipelineSettings {
                    enable_srl: false,
                    ..settings
                },
            ),
        ];
        for other in others {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn the_respondent_limit_is_the_pipelines() {
        assert_eq!(
            crate::prompts::MAX_RESPONDENT_CHARS,
            crate::pipeline::MAX_ANSWER_CHARS
        );
    }
}
