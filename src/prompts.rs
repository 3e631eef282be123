//! The prompts the turn pipeline sends to its LLM roles, and the strict parsers of their replies.
//!
//! Three prompts live here: extraction (stage 3, [`extraction_prompt`]), the opening question
//! ([`opening_prompt`]) and follow-up questions (stage 8, [`follow_up_prompt`]), the last
//! also in a compact form for small models ([`compact_follow_up_prompt`]; a small model does
//! not write the opening, which has no answer to build on: the methodology's own opening
//! template is asked instead). Every question is vetted by [`check_question`], and
//! [`render_template`] turns the methodology's question templates into the fallback question.
//! Each prompt builder takes values and returns a [`Prompt`]; each parser takes the reply text
//! and returns a typed value or a [`ContractError`](crate::reply_json::ContractError). The
//! conversation shown to the question generator is bounded by [`conversation_window`].
//!
//! Pure: no I/O, no clock. Sending a prompt, retrying and repair prompts belong to the
//! pipeline. The slot-discovery prompt lives with its stage in `graph::discovery`, and the
//! signal-scoring prompt in `signals::llm`.

mod decoration;
mod extraction;
mod guidance;
mod question;
mod respondent;
pub mod schema;
mod window;

use serde::Serialize;

pub use extraction::{
    EXTRACTION_TEMPERATURE, Extraction, ExtractionInput, MAX_CONCEPTS, MAX_EXISTING_LABELS,
    MAX_LABEL_CHARS, MAX_RELATIONSHIPS, Rejection, extraction_prompt, parse_extraction_reply,
    rejection_feedback, screen_extraction,
};
pub use question::{
    Anchors, COMPACT_MAX_TOKENS, COMPACT_TEMPERATURE, FOLLOW_UP_TEMPERATURE, FollowUpInput,
    LAST_RESORT_QUESTION, MAX_QUESTION_CHARS, MAX_QUESTION_WORDS, MAX_REASONS, MIN_QUESTION_WORDS,
    OPENING_TEMPERATURE, QuestionFocus, QuestionProblem, RelevanceProblem, SUMMARY_CONCEPTS,
    TemplateInput, check_question, check_small_model_question, compact_follow_up_prompt,
    follow_up_prompt, opening_prompt, parse_question_reply, render_template,
};
pub use respondent::{
    AnswerLength, LENGTH_TOLERANCE, MAX_RESPONDENT_CHARS, MIN_WORD_LIMIT, RESPONDENT_TEMPERATURE,
    RESPONDENT_WINDOW_CHARS, RespondentInput, parse_respondent_reply, respondent_prompt,
    word_limit,
};
pub use window::{DEFAULT_WINDOW_CHARS, Line, conversation_window};

/// One request to a chat model: a system message, a user message and the sampling temperature.
///
/// Provider adapters map this onto their wire format; nothing here knows about providers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prompt {
    /// Role, rules and stable context (ontology, topic anchoring).
    pub system: String,
    /// The turn's material: the answer to extract from, or the strategy and conversation.
    pub user: String,
    /// Sampling temperature: one of the `*_TEMPERATURE` constants of the prompt's kind.
    pub temperature: f32,
}

#[cfg(test)]
mod tests;
