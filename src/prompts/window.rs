//! The recent conversation as the question generator sees it: a character-bounded suffix of the
//! transcript (seed 003 "Conversation Window Management").
//!
//! The seed drops the oldest messages until the rest fits, but never the final exchange. We do
//! the same and go one step further: when the final exchange alone is over budget, its texts are
//! shortened in the middle with a visible `…`, so one rambling answer cannot crowd out the
//! system prompt. Long-term memory is the graph summary's job, not the window's.

use crate::domain::Speaker;

/// Default window size in characters.
///
/// About 1,000 tokens at the usual four characters per token. A typical exchange (a question of
/// ~150 characters and an answer of ~75 words) is 550–600 characters, so this keeps the last six
/// or seven exchanges: enough to avoid repeating a recent question and to reuse the
/// respondent's words, while the graph summary carries everything older. The seed's 100,000
/// characters served a chat agent whose whole memory was the transcript; ours is not.
pub const DEFAULT_WINDOW_CHARS: usize = 4_000;

/// One utterance of the transcript, oldest first in the slice given to [`conversation_window`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub speaker: Speaker,
    pub text: &'a str,
}

/// Separator between a speaker label and the text.
const LABEL_SEP: &str = ": ";

/// Renders the newest lines that fit in `max_chars` characters as `Interviewer: …` /
/// `Respondent: …` lines, oldest first, preceded by `[N earlier lines omitted]` when lines were
/// dropped.
///
/// Texts are flattened to one line (whitespace runs and control characters become one space), so
/// an answer cannot forge a speaker line. Lines are dropped oldest first. The latest exchange,
/// meaning every line from the last interviewer line to the end (or the last line alone when the
/// interviewer never spoke), is always kept; when it alone exceeds the budget its texts share
/// what is left after labels, newlines and the notice, the shortest keeping all of theirs, and
/// the rest are cut in the middle with `…`.
///
/// Bound: the result has at most `max_chars` characters (Unicode scalar values) whenever
/// `max_chars` covers the fixed part of the latest exchange, that is its speaker labels, the
/// newlines, the omission notice and one `…` per text. For the usual question-and-answer pair
/// that fixed part is under 60 characters; below it, each text is reduced to a lone `…` and the
/// fixed part is returned, which is the only case where `max_chars` is exceeded.
pub fn conversation_window(lines: &[Line<'_>], max_chars: usize) -> String {
    let rendered: Vec<(&str, String)> = lines
        .iter()
        .map(|l| (speaker_label(l.speaker), one_line(l.text)))
        .collect();
    let Some(last) = rendered.len().checked_sub(1) else {
        return String::new();
    };
    let core_start = lines
        .iter()
        .rposition(|l| l.speaker == Speaker::Interviewer)
        .unwrap_or(last);
    let core = rendered.get(core_start..).unwrap_or_default();
    let mut used = core.iter().map(line_chars).sum::<usize>() + core.len().saturating_sub(1);
    let mut start = core_start;
    for line in rendered.get(..core_start).unwrap_or_default().iter().rev() {
        let with_line = used + line_chars(line) + 1;
        if with_line + notice_chars(start - 1) > max_chars {
            break;
        }
        used = with_line;
        start -= 1;
    }
    let kept = rendered.get(start..).unwrap_or_default();
    if used + notice_chars(start) <= max_chars {
        return join(start, kept.iter().map(|(l, t)| (*l, t.clone())));
    }
    // Only the latest exchange is left and it is still too long: shorten its texts.
    let fixed = core
        .iter()
        .map(|(l, _)| l.len() + LABEL_SEP.len())
        .sum::<usize>()
        + core.len().saturating_sub(1)
        + notice_chars(start);
    let lens: Vec<usize> = core.iter().map(|(_, t)| t.chars().count()).collect();
    let allotted = allot(&lens, max_chars.saturating_sub(fixed));
    join(
        start,
        core.iter()
            .zip(allotted)
            .map(|((l, t), n)| (*l, cut_middle(t, n))),
    )
}

fn speaker_label(speaker: Speaker) -> &'static str {
    match speaker {
        Speaker::Interviewer => "Interviewer",
        Speaker::Respondent => "Respondent",
    }
}

/// Flattens text to one line: control characters and whitespace runs become one space.
pub(super) fn one_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Characters of a rendered line without its newline; labels are ASCII.
fn line_chars((label, text): &(&str, String)) -> usize {
    label.len() + LABEL_SEP.len() + text.chars().count()
}

fn notice(omitted: usize) -> String {
    let noun = if omitted == 1 { "line" } else { "lines" };
    format!("[{omitted} earlier {noun} omitted]")
}

/// Characters the omission notice and its newline take; nothing when no line was omitted.
fn notice_chars(omitted: usize) -> usize {
    if omitted == 0 {
        0
    } else {
        notice(omitted).len() + 1
    }
}

fn join<'a>(omitted: usize, lines: impl Iterator<Item = (&'a str, String)>) -> String {
    let mut out: Vec<String> = Vec::new();
    if omitted > 0 {
        out.push(notice(omitted));
    }
    out.extend(lines.map(|(label, text)| format!("{label}{LABEL_SEP}{text}")));
    out.join("\n")
}

/// Shares `budget` characters among texts of the given lengths: shortest first, each gets its
/// full length or an equal share of what is left, whichever is smaller.
fn allot(lens: &[usize], budget: usize) -> Vec<usize> {
    let mut order: Vec<(usize, usize)> = lens.iter().copied().enumerate().collect();
    order.sort_by_key(|&(_, len)| len);
    let mut remaining = budget;
    let count = order.len();
    let mut given: Vec<(usize, usize)> = order
        .into_iter()
        .enumerate()
        .map(|(pos, (index, len))| {
            let share = remaining / (count - pos);
            let give = len.min(share);
            remaining -= give;
            (index, give)
        })
        .collect();
    given.sort_by_key(|&(index, _)| index);
    given.into_iter().map(|(_, give)| give).collect()
}

/// `text` cut to `max` characters by replacing its middle with `…`; a lone `…` when `max` is 0.
fn cut_middle(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let keep = max.saturating_sub(1);
    let tail = keep / 2;
    let head = keep - tail;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(count - tail));
    out
}
