//! Offline understanding: the program itself does what the `llm` understanding mode asks a
//! model for, so that a small local model only has to write the question.
//!
//! Three functions, each with the output contract of the LLM path it replaces:
//! - [`extract_offline`] (stage 3): concepts in the respondent's own words from the SRL frames
//!   and tagged words, typed by `MiniLM` similarity against a [`TypeIndex`] of the
//!   methodology's node types among those the wording allows (who acts, what the clause opens
//!   with: `cues`), linked by connectives, causative verbs and the words between neighbouring
//!   concepts where the ontology permits; returns a [`prompts::Extraction`](crate::prompts::Extraction) whose quotes are
//!   byte slices of the answer. [`extract_offline_in_context`] also takes the interview topic
//!   (not a concept on its own) and the graph's concepts (labels reused, probes linked);
//! - [`score_rubrics_offline`] (stage 6, the LLM signal pool): each rubric scored 1–5 by a
//!   stated rule over counts of the answer's words, links, hedges, details, affect and
//!   reflection, the rationale naming the rule;
//! - [`propose_slots_offline`] (stage 4.5): slot proposals from embedding clusters at the
//!   canonical threshold, named after the member closest to the cluster's centre.
//!
//! Pure apart from the [`Embedder`](crate::embed::Embedder) port it is handed: no model
//! calls, no I/O, no clock. Which mode a session uses, retries and writes belong to the
//! pipeline. English only, like the SRL it builds on, and heuristic: the module docs of each
//! part say what its rules get wrong.

mod cues;
mod extract;
mod lexicon;
mod links;
mod phrases;
mod rubrics;
mod slots;
mod types;

pub use extract::{
    KnownConcept, OfflineInput, TurnContext, extract_offline, extract_offline_in_context,
};
pub use rubrics::{AnswerFeatures, answer_features, score_rubrics_offline};
pub use slots::propose_slots_offline;
pub use types::{TypeIndex, TypeMatch};

#[cfg(test)]
mod tests;
