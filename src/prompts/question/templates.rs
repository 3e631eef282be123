//! Template questions: the methodology's own phrasings with the focus and topic filled in.
//!
//! A session on the `none` provider asks only these, and a model whose question fails the
//! [question check](super::check_question) twice falls back to them, so they are the floor of
//! every interview. [`render_template`] is deterministic: the same session, turn and focus give
//! the same question, so a `none` run is reproducible byte for byte and a resumed session asks
//! what the interrupted one would have. No randomness, no `RandomState`: the choice is a
//! stable FNV-1a hash.
//!
//! What comes back always passes `check_question(text, &[])`: when the chosen phrasing renders
//! to something that does not (a focus label that is a code identifier, or one that makes the
//! question too long), the other phrasings and then generic ones are tried, down to
//! [`LAST_RESORT_QUESTION`].

use super::check::{DANGLING_WORDS, check_question};

/// What a template question is rendered from.
#[derive(Debug, Clone, Copy)]
pub struct TemplateInput<'a> {
    /// The strategy's `question_templates` (or the methodology's `opening_templates`).
    pub templates: &'a [String],
    /// Label of the focus node; `None` for node-free strategies and the opening question.
    pub focus: Option<&'a str>,
    /// The concept's topic anchor.
    pub topic: &'a str,
    /// The turn the question is asked after (0 for the opening question).
    pub turn: u32,
    /// Anything stable for the session (its id), so sessions differ in their phrasings.
    pub session_seed: &'a str,
}

/// Words of a focus label kept in a question: node labels are 2–5 words by the naming
/// conventions; a longer one is an extraction slip and would crowd out the question.
const MAX_FOCUS_WORDS: usize = 8;
/// Words of the topic kept in a question: the shipped topics have at most 8.
const MAX_TOPIC_WORDS: usize = 12;
/// Characters of a focus label or topic kept, whatever its words.
const MAX_LABEL_CHARS: usize = 80;

/// Phrasings for a focus node when the strategy has none that fit.
const FOCUS_FALLBACK: &[&str] = &[
    "Could you tell me more about \"{focus}\"?",
    "Why does \"{focus}\" matter to you?",
    "What comes to mind when you think about \"{focus}\"?",
];

/// Phrasings without a focus node when the strategy has none that fit.
const TOPIC_FALLBACK: &[&str] = &[
    "What else comes to mind when you think about {topic}?",
    "Could you tell me more about your own experience of {topic}?",
    "Is there anything about {topic} that we have not talked about yet?",
];

/// The question asked when nothing else renders to a question that passes the check; it
/// passes whatever the focus and topic are, since it uses neither.
pub const LAST_RESORT_QUESTION: &str = "What else comes to mind when you think about this?";

/// Topic used in a phrasing when the concept's topic is empty after cleaning.
const NO_TOPIC: &str = "this";

/// Renders one of `input.templates` for this turn: `{focus}` and `{topic}` filled in, the
/// phrasing chosen by a stable hash of the session seed, turn and focus.
///
/// Phrasings that need `{focus}` are skipped when there is no focus. With more than one
/// usable phrasing, consecutive turns never get the same one: even turns choose among the
/// even positions of a per-session rotation of the list, odd turns among the odd ones, and
/// the hash picks within that half. Generic phrasings stand in when the list has nothing
/// usable.
pub fn render_template(input: &TemplateInput<'_>) -> String {
    let focus = input
        .focus
        .map(|f| clean_label(f, MAX_FOCUS_WORDS))
        .filter(|f| !f.is_empty());
    let topic = Some(clean_label(input.topic, MAX_TOPIC_WORDS))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| NO_TOPIC.to_owned());
    let usable: Vec<&str> = input
        .templates
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty() && (focus.is_some() || !t.contains("{focus}")))
        .collect();
    let candidates: Vec<&str> = if usable.is_empty() {
        if focus.is_some() {
            FOCUS_FALLBACK.to_vec()
        } else {
            TOPIC_FALLBACK.to_vec()
        }
    } else {
        usable
    };
    let first = choose(
        candidates.len(),
        input.session_seed,
        input.turn,
        focus.as_deref(),
    );
    let rotated = candidates.iter().cycle().skip(first).take(candidates.len());
    let focus_fallback = FOCUS_FALLBACK.iter().filter(|_| focus.is_some());
    rotated
        .chain(focus_fallback)
        .chain(TOPIC_FALLBACK)
        .map(|t| fill(t, focus.as_deref(), &topic))
        .find(|q| check_question(q, &[]).is_ok())
        .unwrap_or_else(|| LAST_RESORT_QUESTION.to_owned())
}

/// The position of the phrasing for this turn among `n`.
fn choose(n: usize, seed: &str, turn: u32, focus: Option<&str>) -> usize {
    if n <= 1 {
        return 0;
    }
    let rotation = mix(fnv1a(&[seed.as_bytes()]));
    let parity = u64::from(turn % 2);
    let n64 = n as u64;
    // Positions of this turn's half: parity, parity + 2, ... below n.
    let half = (n64 - parity).div_ceil(2);
    let within = mix(fnv1a(&[
        seed.as_bytes(),
        &turn.to_le_bytes(),
        focus.map_or(&[0xff][..], str::as_bytes),
    ])) % half;
    let position = parity + 2 * within;
    usize::try_from((position + rotation) % n64).unwrap_or(0)
}

/// FNV-1a over the parts, with a separator byte between them so ("ab", "c") ≠ ("a", "bc").
fn fnv1a(parts: &[&[u8]]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash = OFFSET;
    for part in parts {
        for byte in part.iter().chain(&[0x1f]) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    hash
}

/// Spreads every input bit over the low bits. FNV-1a's lowest bit is only the parity of the
/// input bytes' lowest bits, so `hash % 2` alone would give every even turn the same phrasing.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

fn fill(template: &str, focus: Option<&str>, topic: &str) -> String {
    let mut text = template.replace("{topic}", topic);
    if let Some(focus) = focus {
        text = text.replace("{focus}", focus);
    }
    text
}

/// A label made safe to put inside a question: one line, no characters that the check reads as
/// Markdown, quoting or a question mark, at most `max_words` words and [`MAX_LABEL_CHARS`]
/// characters, and no function word left dangling at a cut.
pub(super) fn clean_label(label: &str, max_words: usize) -> String {
    let plain: String = label
        .chars()
        .filter(|c| !is_invisible(*c))
        .map(|c| match c {
            '_' | ':' | ';' | '|' | '\\' | '/' => ' ',
            c if c.is_control() => ' ',
            c => c,
        })
        .filter(|c| !"?\"“”`*#{}[]()<>•×".contains(*c))
        .collect();
    let mut words: Vec<&str> = plain
        .split_whitespace()
        .skip_while(|w| !w.chars().any(char::is_alphanumeric))
        .take(max_words)
        .collect();
    while words.iter().map(|w| w.chars().count() + 1).sum::<usize>() > MAX_LABEL_CHARS + 1 {
        words.pop();
    }
    while words.last().is_some_and(|w| {
        let bare = w
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        bare.is_empty() || DANGLING_WORDS.contains(&bare.as_str())
    }) {
        words.pop();
    }
    words
        .join(" ")
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '%')
        .to_owned()
}

/// Format characters that could reorder or hide text in a terminal.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}' | '\u{feff}')
}

#[cfg(test)]
mod tests;
