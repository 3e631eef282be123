//! Compact question prompts for small models: a few sentences of plain prose instead of the
//! full follow-up prompt's sections.
//!
//! The embedded 135M model copies whatever looks like structure (`## Strategy:`, signal names,
//! `weight 0.6`) into its reply, and loses the thread in a 2,700-token prompt. These prompts
//! carry only what one question needs: the topic, the last exchange (cut), what to do now (one
//! sentence taken from the strategy's description, in everyday words), the focus label, one
//! example phrasing from the methodology's templates, and the instruction to write one short
//! question. No headings, labels, signal names or numbers from the scoring appear, and the
//! whole prompt stays under [`COMPACT_MAX_TOKENS`] (at four characters a token).
//!
//! The reply is parsed and checked like any question ([`parse_question_reply`](super::parse_question_reply),
//! [`check_question`](super::check_question)); these builders only write the prompt.

use super::templates::{TemplateInput, clean_label, render_template};
use super::{FollowUpInput, QuestionFocus};
use crate::prompts::Prompt;
use crate::prompts::window::one_line;

/// Upper bound of a compact prompt (system and user together), in tokens estimated at four
/// characters each: a tenth of the full follow-up prompt on a long interview, and little
/// enough that a 135M model on two cores reads it in about five seconds.
pub const COMPACT_MAX_TOKENS: u64 = 600;

/// Sampling temperature of the compact prompts. A small model drifts off topic at the full
/// prompts' 0.8–0.9; the variety comes from the strategy and the example phrasing instead.
pub const COMPACT_TEMPERATURE: f32 = 0.5;

/// Words of the strategy's intent kept: the longest first instruction among the shipped
/// strategies (a closing recap) is 40 words with its "Close the interview.".
const MAX_INTENT_WORDS: usize = 45;
/// Characters of the previous question shown.
const MAX_SHOWN_QUESTION_CHARS: usize = 200;
/// Characters of the respondent's answer shown.
const MAX_SHOWN_ANSWER_CHARS: usize = 480;
/// Words of the focus label and topic kept (as in the templates).
const MAX_LABEL_WORDS: usize = 8;

/// Description sentences that describe the situation rather than say what to do start so.
const SITUATION_OPENERS: &[&str] = &["The ", "If ", "When "];

const SYSTEM: &str = "You are a friendly interviewer. You ask one short, open question at a \
                      time, in plain everyday words, about the person's own experience. You \
                      reply with the question only.";

/// The follow-up question prompt for a small model.
pub fn compact_follow_up_prompt(input: &FollowUpInput<'_>) -> Prompt {
    let topic = clean_label(input.concept.topic(), MAX_LABEL_WORDS);
    let focus = input
        .focus
        .node_label()
        .map(|f| clean_label(f, MAX_LABEL_WORDS))
        .filter(|f| !f.is_empty());
    let summary: Vec<String> = match input.focus {
        QuestionFocus::Summary(labels) => labels
            .iter()
            .map(|l| clean_label(l, MAX_LABEL_WORDS))
            .filter(|l| !l.is_empty())
            .collect(),
        QuestionFocus::Node(_) | QuestionFocus::Topic => Vec::new(),
    };
    let mut user = format!("We are interviewing someone about {topic}.");
    if let Some(exchange) = last_exchange(input.conversation) {
        user.push(' ');
        user.push_str(&exchange);
    }
    user.push(' ');
    user.push_str(&intent(&input.strategy.description, focus.as_deref()));
    match (&focus, summary.as_slice()) {
        (Some(label), _) => user.push_str(&format!(" Ask about \"{label}\".")),
        (None, []) => user.push_str(&format!(" Ask about {topic} in general.")),
        (None, labels) => user.push_str(&format!(
            " Ask about what they have said so far as a whole: {}.",
            spoken_list(labels)
        )),
    }
    if input.closing {
        user.push_str(
            " This is the last question: thank them for their time and ask whether anything \
             important is missing.",
        );
    }
    let example = example(&render_template(&TemplateInput {
        templates: input.strategy.templates_for(input.focus_stance),
        focus: focus.as_deref(),
        topic: &topic,
        turn: 0,
        session_seed: &input.strategy.name,
        asked: &[],
        echo: None,
    }));
    // The length is asked for in words, not digits: a small model echoes numbers.
    user.push_str(&format!(
        " A question in this spirit: \"{example}\" Write one new question in a single short \
         sentence, ending with a question mark."
    ));
    Prompt {
        system: SYSTEM.to_owned(),
        user,
        temperature: COMPACT_TEMPERATURE,
    }
}

/// `a`, `a and b`, `a, b and c`, each in double quotes.
fn spoken_list(labels: &[String]) -> String {
    let quoted: Vec<String> = labels.iter().map(|l| format!("\"{l}\"")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// "The last question was … and they answered …" from the conversation window's final
/// exchange; `None` when the window is empty.
fn last_exchange(conversation: &str) -> Option<String> {
    let lines: Vec<&str> = conversation.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| l.starts_with("Interviewer: "))
        .unwrap_or(0);
    let exchange = lines.get(start..).unwrap_or_default();
    let question = exchange
        .iter()
        .find_map(|l| l.strip_prefix("Interviewer: "))
        .map(|q| shown(q, MAX_SHOWN_QUESTION_CHARS))
        .filter(|q| !q.is_empty());
    let answer: Vec<&str> = exchange
        .iter()
        .filter_map(|l| l.strip_prefix("Respondent: "))
        .collect();
    let answer = Some(shown(&answer.join(" "), MAX_SHOWN_ANSWER_CHARS)).filter(|a| !a.is_empty());
    let sentence = match (question, answer) {
        (Some(q), Some(a)) => format!("The last question was \"{q}\" and they answered \"{a}\""),
        (None, Some(a)) => format!("They have just said \"{a}\""),
        (Some(q), None) => format!("The last question was \"{q}\""),
        (None, None) => return None,
    };
    Some(end_sentence(sentence))
}

/// `text` ended with a full stop unless it already ends a sentence, inside quotes or not.
fn end_sentence(mut text: String) -> String {
    let bare = text.trim_end_matches(['"', '\'']);
    if !bare.ends_with(['.', '?', '!', '…']) {
        text.push('.');
    }
    text
}

/// The example question as shown inside double quotes: its own double quotes made single.
fn example(question: &str) -> String {
    question.replace('"', "'")
}

/// Text as shown inside quotation marks: one line, double quotes made single, cut at a word
/// boundary to `max` characters with `…`.
fn shown(text: &str, max: usize) -> String {
    let text = one_line(text).replace(['"', '“', '”'], "'");
    if text.chars().count() <= max {
        return text;
    }
    let mut out = String::new();
    for word in text.split(' ') {
        if out.chars().count() + word.chars().count() + 2 > max {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out.push('…');
    out
}

/// What to do now, in one sentence of everyday words: the first sentence of `description`
/// that says what to do (situation sentences are skipped; a very short one takes the next
/// along), without asides in parentheses, "the respondent" said as "the person", the focus
/// named, and cut to [`MAX_INTENT_WORDS`] at a clause boundary.
fn intent(description: &str, focus: Option<&str>) -> String {
    let sentences = sentences(&one_line(description));
    let first = sentences
        .iter()
        .position(|s| !SITUATION_OPENERS.iter().any(|o| s.starts_with(o)))
        .unwrap_or(0);
    let mut text = String::new();
    for s in sentences.iter().skip(first) {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(s);
        if text.split_whitespace().count() >= 6 {
            break;
        }
    }
    let text = plain_words(&without_asides(&text), focus);
    clip_clause(&text, MAX_INTENT_WORDS)
}

/// Sentences of one line of text: a `.`, `!` or `?` (after any closing quote) followed by a
/// space ends one.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        let closes = matches!(c, '.' | '!' | '?')
            && chars.peek().is_none_or(|n| *n == ' ')
            && !current.ends_with("e.g.")
            && !current.ends_with("i.e.");
        if closes && !inside_quotes(&current) {
            out.push(current.trim().to_owned());
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

fn inside_quotes(text: &str) -> bool {
    text.matches('"').count() % 2 == 1
}

/// `text` without parenthesised asides.
fn without_asides(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    one_line(&out.replace(" ,", ","))
}

/// The methodology's words for the interview's parts, said as a small model should say them.
fn plain_words(text: &str, focus: Option<&str>) -> String {
    let named = focus.map_or_else(|| "the topic".to_owned(), |f| format!("\"{f}\""));
    let mut out = text.to_owned();
    for part in ["element", "job", "moment", "point"] {
        out = out.replace(&format!("the focus {part}"), &named);
    }
    for (from, to) in [
        ("The respondent's", "The person's"),
        ("the respondent's", "the person's"),
        ("respondents", "people"),
        ("The respondent", "The person"),
        ("respondent", "person"),
    ] {
        out = out.replace(from, to);
    }
    out
}

/// `text` cut to at most `max` words, at the last `,`, `;` or `:` within them when there is one
/// past the first third, and ended with a full stop.
fn clip_clause(text: &str, max: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let kept = if words.len() <= max {
        words
    } else {
        let head = words.get(..max).unwrap_or_default();
        let clause_end = head
            .iter()
            .rposition(|w| w.ends_with([',', ';', ':']))
            .filter(|&i| i >= max / 3);
        match clause_end {
            Some(i) => head.get(..=i).unwrap_or_default().to_vec(),
            None => head.to_vec(),
        }
    };
    let out = kept
        .join(" ")
        .trim_end_matches([',', ';', ':', '.', ' '])
        .to_owned();
    end_sentence(out)
}

#[cfg(test)]
mod tests;
