//! The question check: whether a text may be shown to the respondent as the next question.
//!
//! Every question, from any provider and from the templates, passes through [`check_question`]
//! before it is shown. Small models copy their prompt (`## Strategy: - Ask your respondent to
//! …`, `weight 0.6`), run past their budget and stop mid-phrase, or ask three things at once;
//! the check names the first such fault in a [`QuestionProblem`] so the caller can retry once
//! and then fall back to the strategy's template question.
//!
//! The rules: one question, ending with `?`; 4–45 words; no Markdown (headings, list markers,
//! emphasis, code); no role labels (`Interviewer:`); no prompt text (the headings and stock
//! phrases of our own prompts); no signal or strategy names (the caller passes them: the
//! signal catalogue sits above this module); no code identifiers (`has_complete`,
//! `graph.max_depth`, an unfilled `{focus}`); no weights (`0.6`, `weight 0.4`); no mention of
//! "strategy"; not cut mid-sentence.
//!
//! Pure and total: any text gives an answer, never a panic. The check does not judge whether a
//! question is good, only whether it is safe and whole enough to show.

mod lexicon;

pub(super) use lexicon::DANGLING_WORDS;
use lexicon::{PROMPT_PHRASES, ROLE_LABELS, WEIGHT_WORDS};

/// Fewest words a question may have: "Why does that matter?" is four.
pub const MIN_QUESTION_WORDS: usize = 4;
/// Most words a question may have. A spoken interview question is one or two sentences; a
/// closing question with a short thank-you fits in 45 words, a pasted prompt section does not.
pub const MAX_QUESTION_WORDS: usize = 45;

/// Longest excerpt of the offending text quoted in a [`QuestionProblem`], in characters.
const MAX_QUOTE_CHARS: usize = 40;

/// Why a text cannot be shown as the next question. Each variant names what failed; its
/// `Display` is a one-line reason for events, the audit trail and logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuestionProblem {
    /// Nothing but whitespace.
    #[error("is empty")]
    Empty,
    /// A Markdown heading, list marker, emphasis or code mark.
    #[error("contains Markdown ({marker}); a question is plain speech")]
    Markdown { marker: String },
    /// A speaker label such as `Respondent:`.
    #[error("contains the role label '{label}'")]
    RoleLabel { label: String },
    /// A heading or stock phrase of one of our prompts.
    #[error("repeats prompt text ('{phrase}')")]
    PromptText { phrase: String },
    /// The word "strategy": the engine's vocabulary, never the respondent's.
    #[error("mentions '{word}', which belongs to the engine, not the interview")]
    MentionsStrategy { word: String },
    /// One of the caller's forbidden terms (a signal or strategy name).
    #[error("names the signal or strategy '{term}'")]
    ForbiddenTerm { term: String },
    /// A code identifier (`snake_case`, `dotted.name`) or an unfilled `{placeholder}`.
    #[error("contains the identifier '{token}'")]
    Identifier { token: String },
    /// A number from the scoring: `0.6`, `-0.5`, `weight 0.4`, `×`.
    #[error("contains a weight or score ('{found}')")]
    Weight { found: String },
    /// The text stops mid-sentence.
    #[error("is cut mid-sentence (ends '{ending}')")]
    CutMidSentence { ending: String },
    /// The text ends as a statement, not with `?`.
    #[error("does not end with '?' (ends '{ending}')")]
    NotAQuestion { ending: String },
    /// More than one question mark.
    #[error("asks {count} questions; ask exactly one")]
    MultipleQuestions { count: usize },
    /// Fewer than [`MIN_QUESTION_WORDS`] words.
    #[error("has {words} word(s); a question needs at least {MIN_QUESTION_WORDS}")]
    TooShort { words: usize },
    /// More than [`MAX_QUESTION_WORDS`] words.
    #[error("has {words} words; a question has at most {MAX_QUESTION_WORDS}")]
    TooLong { words: usize },
}

/// Checks that `text` is one whole, clean question. `forbidden_terms` are names the question
/// must not contain: the signal catalogue's names and the methodology's strategy names.
///
/// A term that looks like an identifier (it contains `.`, `_` or a digit, as
/// `llm.response_depth` and `explore_attributes` do) is refused wherever it appears as a
/// whole token or token prefix, ignoring case. A plain word (`deepen`, `clarify`) is also an
/// ordinary English word, so it is refused only where it is used as a name: followed by `:` or
/// `=`, or in backticks.
pub fn check_question(text: &str, forbidden_terms: &[&str]) -> Result<(), QuestionProblem> {
    let text = text.trim();
    if text.is_empty() {
        return Err(QuestionProblem::Empty);
    }
    let lower = text.to_lowercase();
    markdown(text)?;
    role_label(&lower)?;
    prompt_text(&lower)?;
    strategy_word(&lower)?;
    forbidden(&lower, forbidden_terms)?;
    identifiers(text)?;
    weights(&lower)?;
    ending(text)?;
    let count = text.matches('?').count();
    if count > 1 {
        return Err(QuestionProblem::MultipleQuestions { count });
    }
    let words = word_count(text);
    if words < MIN_QUESTION_WORDS {
        return Err(QuestionProblem::TooShort { words });
    }
    if words > MAX_QUESTION_WORDS {
        return Err(QuestionProblem::TooLong { words });
    }
    Ok(())
}

/// Words: whitespace-separated tokens with at least one letter or digit (a lone `—` is none).
pub(super) fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .filter(|t| t.chars().any(char::is_alphanumeric))
        .count()
}

fn markdown(text: &str) -> Result<(), QuestionProblem> {
    let fail = |marker: &str| {
        Err(QuestionProblem::Markdown {
            marker: marker.to_owned(),
        })
    };
    for mark in ["**", "__", "`", "•"] {
        if text.contains(mark) {
            return fail(&format!("'{mark}'"));
        }
    }
    let mut previous: Option<&str> = None;
    for line in text.lines() {
        let mut tokens = line.split_whitespace().peekable();
        let mut line_start = true;
        while let Some(token) = tokens.next() {
            if token.chars().all(|c| c == '#') && tokens.peek().is_some() {
                return fail("a '#' heading");
            }
            let starts_item = line_start || previous.is_some_and(|p| p.ends_with(':'));
            if starts_item && is_list_marker(token) && tokens.peek().is_some() {
                return fail(&format!("the list marker '{token}'"));
            }
            previous = Some(token);
            line_start = false;
        }
    }
    Ok(())
}

/// `-`, `*`, `+`, or a number followed by `.` or `)` (`1.`, `2)`).
fn is_list_marker(token: &str) -> bool {
    if matches!(token, "-" | "*" | "+" | "–") {
        return true;
    }
    let digits = token.trim_end_matches(['.', ')']);
    digits.len() < token.len()
        && token.len() - digits.len() == 1
        && !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
}

fn role_label(lower: &str) -> Result<(), QuestionProblem> {
    for label in ROLE_LABELS {
        for (at, _) in lower.match_indices(label) {
            let after = lower.get(at + label.len()..).unwrap_or_default();
            if starts_word(lower, at) && after.trim_start_matches(' ').starts_with(':') {
                return Err(QuestionProblem::RoleLabel {
                    label: format!("{label}:"),
                });
            }
        }
    }
    Ok(())
}

fn prompt_text(lower: &str) -> Result<(), QuestionProblem> {
    match PROMPT_PHRASES
        .iter()
        .find(|phrase| find_word(lower, phrase).is_some())
    {
        Some(phrase) => Err(QuestionProblem::PromptText {
            phrase: (*phrase).to_owned(),
        }),
        None => Ok(()),
    }
}

fn strategy_word(lower: &str) -> Result<(), QuestionProblem> {
    match ["strategy", "strategies"]
        .into_iter()
        .find(|w| find_word(lower, w).is_some())
    {
        Some(word) => Err(QuestionProblem::MentionsStrategy {
            word: word.to_owned(),
        }),
        None => Ok(()),
    }
}

fn forbidden(lower: &str, terms: &[&str]) -> Result<(), QuestionProblem> {
    for term in terms {
        let term = term.trim().to_lowercase();
        if term.is_empty() {
            continue;
        }
        let identifier_like = term
            .chars()
            .any(|c| c == '.' || c == '_' || c.is_ascii_digit());
        let found = if identifier_like {
            find_word(lower, &term).is_some()
        } else {
            used_as_name(lower, &term)
        };
        if found {
            return Err(QuestionProblem::ForbiddenTerm { term });
        }
    }
    Ok(())
}

/// Whether a plain word appears as a name: `word:`, `word =` or `` `word` ``.
fn used_as_name(lower: &str, word: &str) -> bool {
    lower.match_indices(word).any(|(at, _)| {
        let before = lower.get(..at).unwrap_or_default();
        let after = lower.get(at + word.len()..).unwrap_or_default();
        let bounded = starts_word(lower, at) && ends_word(lower, at + word.len());
        let labelled = after.trim_start_matches(' ').starts_with([':', '=']);
        let quoted = before.ends_with('`') || after.starts_with('`');
        bounded && (labelled || quoted)
    })
}

fn identifiers(text: &str) -> Result<(), QuestionProblem> {
    for raw in text.split_whitespace() {
        let token = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '{' && c != '}');
        let snake = token
            .char_indices()
            .any(|(i, c)| c == '_' && is_between_alphanumerics(token, i));
        let placeholder = token.contains('{') || token.contains('}');
        if snake || placeholder || is_dotted_identifier(token) {
            return Err(QuestionProblem::Identifier {
                token: quote(token),
            });
        }
    }
    Ok(())
}

fn is_between_alphanumerics(token: &str, at: usize) -> bool {
    let before = token.get(..at).and_then(|s| s.chars().next_back());
    let after = token.get(at + 1..).and_then(|s| s.chars().next());
    before.is_some_and(char::is_alphanumeric) && after.is_some_and(char::is_alphanumeric)
}

/// `graph.max_depth`, `llm.engagement`: letters on both sides of a dot, each side at least two
/// letters long, so "e.g." and "U.S." are not identifiers.
fn is_dotted_identifier(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| p.chars().count() >= 2 && p.chars().all(|c| c.is_alphabetic() || c == '_'))
}

fn weights(lower: &str) -> Result<(), QuestionProblem> {
    if lower.contains('×') {
        return Err(QuestionProblem::Weight {
            found: "×".to_owned(),
        });
    }
    let tokens: Vec<&str> = lower.split_whitespace().collect();
    for (i, raw) in tokens.iter().enumerate() {
        if is_weight_number(raw) {
            return Err(QuestionProblem::Weight { found: quote(raw) });
        }
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        if !WEIGHT_WORDS.contains(&word) {
            continue;
        }
        let next = tokens.get(i + 1).copied().unwrap_or_default();
        let next = next.trim_start_matches([':', '=']);
        let glued = raw.rsplit([':', '=']).next().unwrap_or_default();
        if is_number(next) || (raw.contains([':', '=']) && is_number(glued)) {
            return Err(QuestionProblem::Weight {
                found: quote(&format!("{raw} {next}")),
            });
        }
    }
    Ok(())
}

/// A decimal number the way weights are written: negative (`-0.5`) or at most 2 with written
/// decimals (`0.6`, `1.2`, `1.0`). Prices (`£1.50`) and larger measures (`2.5`) pass.
fn is_weight_number(raw: &str) -> bool {
    if raw.starts_with(['£', '$', '€', '¥']) {
        return false;
    }
    let token = raw.trim_end_matches(|c: char| !c.is_ascii_digit());
    let token = token.trim_start_matches(['(', '[', '"', '\'']);
    if !token.contains('.') {
        return false;
    }
    match token.parse::<f64>() {
        Ok(v) => v < 0.0 || v <= 2.0,
        Err(_) => false,
    }
}

fn is_number(token: &str) -> bool {
    let token = token.trim_end_matches([',', ';', '.', ')']);
    !token.is_empty() && token.parse::<f64>().is_ok()
}

fn ending(text: &str) -> Result<(), QuestionProblem> {
    let tail = tail_of(text);
    if text.ends_with("...") || text.ends_with('…') {
        return Err(QuestionProblem::CutMidSentence { ending: tail });
    }
    let Some(last) = text.chars().next_back() else {
        return Err(QuestionProblem::Empty);
    };
    if last == '?' {
        let before = text.trim_end_matches('?');
        let last_word = before
            .split_whitespace()
            .next_back()
            .unwrap_or_default()
            .to_lowercase();
        let unbalanced = text.matches('(').count() != text.matches(')').count()
            || text.matches('"').count() % 2 == 1
            || text.matches('“').count() != text.matches('”').count();
        // "…, especially,?": punctuation right before the mark is a phrase the budget cut.
        let cut_punctuation = before
            .trim_end()
            .ends_with([',', ';', ':', '-', '–', '—', '(']);
        // "…, you have not yet mentioned, so?": a connective after a comma that starts a clause
        // it never finishes ("Why do you think so?" ends a question).
        let trailing_connective = matches!(last_word.as_str(), "so" | "then" | "like")
            && before
                .trim_end()
                .rsplit_once(char::is_whitespace)
                .is_some_and(|(head, _)| head.trim_end().ends_with(','));
        if DANGLING_WORDS.contains(&last_word.as_str())
            || unbalanced
            || cut_punctuation
            || trailing_connective
        {
            return Err(QuestionProblem::CutMidSentence { ending: tail });
        }
        return Ok(());
    }
    if last.is_alphanumeric() || matches!(last, ',' | ';' | ':' | '-' | '–' | '—' | '(' | '\'')
    {
        return Err(QuestionProblem::CutMidSentence { ending: tail });
    }
    Err(QuestionProblem::NotAQuestion { ending: tail })
}

/// The last few words of `text`, for messages.
fn tail_of(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let start = words.len().saturating_sub(4);
    quote(&words.get(start..).unwrap_or_default().join(" "))
}

/// `text` cut to [`MAX_QUOTE_CHARS`] characters for a message.
fn quote(text: &str) -> String {
    if text.chars().count() <= MAX_QUOTE_CHARS {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(MAX_QUOTE_CHARS).collect();
    out.push('…');
    out
}

/// The byte offset of `needle` in `hay` where it starts a word and, when it ends with a letter
/// or digit, ends one.
fn find_word(hay: &str, needle: &str) -> Option<usize> {
    let ends_alnum = needle
        .chars()
        .next_back()
        .is_some_and(char::is_alphanumeric);
    hay.match_indices(needle)
        .map(|(at, _)| at)
        .find(|&at| starts_word(hay, at) && (!ends_alnum || ends_word(hay, at + needle.len())))
}

fn starts_word(hay: &str, at: usize) -> bool {
    hay.get(..at)
        .and_then(|s| s.chars().next_back())
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
}

fn ends_word(hay: &str, at: usize) -> bool {
    hay.get(at..)
        .and_then(|s| s.chars().next())
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
}

impl QuestionProblem {
    /// A short machine-readable name of the rule that failed, for events and the audit trail.
    pub fn rule(&self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::Markdown { .. } => "markdown",
            Self::RoleLabel { .. } => "role_label",
            Self::PromptText { .. } => "prompt_text",
            Self::MentionsStrategy { .. } => "strategy",
            Self::ForbiddenTerm { .. } => "forbidden_term",
            Self::Identifier { .. } => "identifier",
            Self::Weight { .. } => "weight",
            Self::CutMidSentence { .. } => "cut",
            Self::NotAQuestion { .. } => "not_a_question",
            Self::MultipleQuestions { .. } => "multiple_questions",
            Self::TooShort { .. } => "too_short",
            Self::TooLong { .. } => "too_long",
        }
    }
}

#[cfg(test)]
mod tests;
