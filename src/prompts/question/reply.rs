//! The question reply contract: plain text, one question.
//!
//! Models decorate a question in a handful of predictable ways: a code fence, a
//! `Question:` label, wrapping quotation marks, a "Here is the question:" line, or a JSON object
//! despite being asked for text. The parser removes exactly those, flattens the text to one line,
//! and refuses anything else that is not a plausible question: empty text, text over
//! [`MAX_QUESTION_CHARS`], and JSON other than `{"question": "..."}`. Text starting with `{` or
//! `[` is always read as JSON, since a question never starts that way.

use serde_json::Value;

use crate::prompts::decoration::{strip_label, strip_layers};
use crate::prompts::window::one_line;
use crate::reply_json::{ContractError, MAX_REPLY_BYTES, quote};

/// Longest question accepted, in characters after cleaning. A spoken interview question is one
/// or two sentences (seed examples are under 100 characters); a playback summary before a
/// closing question needs more, but a reply past 600 characters is an essay, not a question.
pub const MAX_QUESTION_CHARS: usize = 600;

/// Labels a model may put before the question, compared ignoring ASCII case; longest first so
/// `follow-up question` wins over `question`.
const LABELS: &[&str] = &[
    "follow-up question",
    "follow up question",
    "opening question",
    "closing question",
    "next question",
    "interviewer",
    "question",
    "q",
];

/// Opening and closing marks stripped when they wrap the whole text.
const WRAPPERS: &[(&str, &str)] = &[
    ("\"", "\""),
    ("'", "'"),
    ("“", "”"),
    ("‘", "’"),
    ("«", "»"),
    ("**", "**"),
    ("*", "*"),
    ("_", "_"),
];

/// Invisible format characters that could reorder or hide text in a terminal: bidirectional
/// embeddings, overrides and isolates, zero-width space and the byte-order mark.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}' | '\u{feff}')
}

/// Parses a question reply into one clean line of text.
pub fn parse_question_reply(reply: &str) -> Result<String, ContractError> {
    if reply.trim().is_empty() {
        return Err(ContractError::Empty);
    }
    if reply.len() > MAX_REPLY_BYTES {
        return Err(ContractError::TooLarge(reply.len()));
    }
    let body = strip_fence(reply.trim());
    let text = if body.starts_with(['{', '[']) {
        from_json(body)?
    } else {
        body.to_owned()
    };
    let visible: String = drop_preamble(&text)
        .chars()
        .filter(|c| !is_invisible(*c))
        .collect();
    let question = strip_decoration(&one_line(&visible));
    if question.is_empty() {
        return Err(ContractError::Empty);
    }
    if question.chars().count() > MAX_QUESTION_CHARS {
        return Err(ContractError::Invalid {
            field: "question".to_owned(),
            reason: format!("longer than {MAX_QUESTION_CHARS} characters"),
            found: quote(&question),
        });
    }
    Ok(question)
}

/// The body of a fenced reply (```` ```lang\n…\n``` ````), or `text` unchanged.
fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.strip_suffix("```").unwrap_or(rest);
    // An info string ("json", "text") runs to the end of the first line and is one word.
    let body = match rest.split_once('\n') {
        Some((info, body)) if !info.trim().contains(char::is_whitespace) => body,
        _ => rest,
    };
    body.trim()
}

/// The question inside a JSON reply; only `{"question": "..."}` is accepted.
fn from_json(text: &str) -> Result<String, ContractError> {
    // serde_json bounds recursion (128 levels), so deep nesting is an error, not a crash.
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => match map.get("question") {
            Some(Value::String(q)) => Ok(q.clone()),
            Some(other) => Err(ContractError::invalid(
                "question",
                "must be a string",
                other,
            )),
            None => Err(ContractError::invalid(
                "reply",
                "must be plain text; the only JSON accepted is {\"question\": \"...\"}",
                &Value::Object(map),
            )),
        },
        Ok(other) => Err(ContractError::invalid(
            "reply",
            "must be plain text, not JSON",
            &other,
        )),
        Err(_) => Err(ContractError::Invalid {
            field: "reply".to_owned(),
            reason: "starts like JSON but does not parse; expected plain text".to_owned(),
            found: quote(text),
        }),
    }
}

/// Drops a first line such as "Here's my follow-up question:" when more lines follow.
fn drop_preamble(text: &str) -> &str {
    let trimmed = text.trim();
    match trimmed.split_once('\n') {
        Some((first, rest))
            if first.trim_end().ends_with(':')
                && first.to_ascii_lowercase().contains("question")
                && !rest.trim().is_empty() =>
        {
            rest
        }
        _ => trimmed,
    }
}

/// Removes leading labels and wrapping marks, in any nesting (`Question: "…"`, `"Q: …"`).
fn strip_decoration(text: &str) -> String {
    fn layer(t: &str) -> &str {
        strip_wrapper(strip_label(t, LABELS))
    }
    strip_layers(text, layer)
}

fn strip_wrapper(text: &str) -> &str {
    for (open, close) in WRAPPERS {
        let Some(inner) = text
            .strip_prefix(*open)
            .and_then(|t| t.strip_suffix(*close))
        else {
            continue;
        };
        // Symmetric marks inside the text mean they quote parts of it ("A" or "B"), except
        // apostrophes, which questions are full of.
        if open == close && *open != "'" && inner.contains(*open) {
            continue;
        }
        return inner;
    }
    text
}
