//! Tokens with byte offsets, contraction splitting, sentence boundaries, and the [`Doc`] that
//! the later passes share.
//!
//! Offsets always come from `char_indices`, so every token (and every span built from tokens)
//! starts and ends on a character boundary of the original text.

use std::ops::Range;

use super::Span;
use super::tagger::{self, Tag};
use super::words;

/// What a token is before tagging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Word,
    Number,
    Punct,
}

/// One token: a byte range of the input and its normalised spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Token {
    pub start: usize,
    pub end: usize,
    /// Lowercase, curly apostrophes straightened, contractions expanded where unambiguous:
    /// `n't` → `not`, `'m` → `am`, `'re` → `are`, `'ve` → `have`, `'ll` → `will`, the `ca` of
    /// `can't` → `can`. `'s` and `'d` stay as they are (is/has, would/had).
    pub norm: String,
    pub shape: Shape,
    /// First character is uppercase: a proper-noun hint away from a sentence start.
    pub capitalised: bool,
}

/// The tokenised, tagged input that discourse and frame passes read.
#[derive(Debug)]
pub(super) struct Doc<'t> {
    pub text: &'t str,
    pub tokens: Vec<Token>,
    pub tags: Vec<Tag>,
    /// Token index ranges, in order, covering every token once.
    pub sentences: Vec<Range<usize>>,
}

impl<'t> Doc<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        let tokens = tokenize(text);
        let sentences = sentences(text, &tokens);
        let tags = tagger::tag_all(&tokens, &sentences);
        Self {
            text,
            tokens,
            tags,
            sentences,
        }
    }

    /// Re-tags the tokens of `range` (a prepositional connective is one preposition).
    pub(super) fn retag(&mut self, range: Range<usize>, tag: Tag) {
        for k in range {
            if let Some(slot) = self.tags.get_mut(k) {
                *slot = tag;
            }
        }
    }

    /// The normalised spelling of token `i`, or `""` past either end.
    pub(super) fn norm(&self, i: usize) -> &str {
        self.tokens.get(i).map_or("", |t| t.norm.as_str())
    }

    /// The tag of token `i`; out of range reads as punctuation, which ends every phrase.
    pub(super) fn tag(&self, i: usize) -> Tag {
        self.tags.get(i).copied().unwrap_or(Tag::Punct)
    }

    /// `range` without leading and trailing punctuation and dangling "and"/"or"; `None` when
    /// nothing is left.
    pub(super) fn trim(&self, range: Range<usize>) -> Option<Range<usize>> {
        let end = range.end.min(self.tokens.len());
        let mut start = range.start.min(end);
        let mut end = end;
        while start < end && self.droppable(start) {
            start += 1;
        }
        while end > start && self.droppable(end - 1) {
            end -= 1;
        }
        (start < end).then_some(start..end)
    }

    fn droppable(&self, i: usize) -> bool {
        self.tokens.get(i).is_none_or(|token| match token.shape {
            Shape::Punct => !matches!(token.norm.as_str(), "$" | "£" | "€" | "%"),
            _ => matches!(token.norm.as_str(), "and" | "or"),
        })
    }

    /// The text of a token range, trimmed as in [`Doc::trim`].
    pub(super) fn span(&self, range: Range<usize>) -> Option<Span> {
        let range = self.trim(range)?;
        self.raw_span(range)
    }

    /// Like [`Doc::span`], also dropping leading fillers ("well", "um", "yeah"): for discourse
    /// arguments, which start where a speaker may hesitate.
    pub(super) fn arg_span(&self, range: Range<usize>) -> Option<Span> {
        let range = self.trim(range)?;
        let start = range.clone().find(|&k| {
            !matches!(
                self.norm(k),
                "um" | "uh" | "er" | "erm" | "yeah" | "oh" | "well" | "ok" | "okay" | "then"
            ) && self.tokens.get(k).is_some_and(|t| t.shape != Shape::Punct)
        })?;
        self.span(start..range.end)
    }

    /// The exact text of a token range, untrimmed (for predicates and markers).
    pub(super) fn raw_span(&self, range: Range<usize>) -> Option<Span> {
        let start = self.tokens.get(range.start)?.start;
        let end = self.tokens.get(range.end.checked_sub(1)?)?.end;
        Span::new(self.text, start, end)
    }
}

/// Splits `text` into word, number and punctuation tokens.
fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if !c.is_alphanumeric() {
            out.push(Token {
                start,
                end: start + c.len_utf8(),
                norm: c.to_string(),
                shape: Shape::Punct,
                capitalised: false,
            });
            continue;
        }
        let numeric = c.is_numeric();
        let mut end = start + c.len_utf8();
        while let Some(&(i, next)) = chars.peek() {
            let after = text
                .get(i + next.len_utf8()..)
                .and_then(|rest| rest.chars().next());
            let joins = next.is_alphanumeric()
                || match next {
                    '\'' | '\u{2019}' => after.is_some_and(char::is_alphabetic),
                    '-' => after.is_some_and(char::is_alphanumeric),
                    // "3.5", "1,000", and clock times: "the 8:10 train".
                    '.' | ',' | ':' => numeric && after.is_some_and(|a| a.is_ascii_digit()),
                    _ => false,
                };
            if !joins {
                break;
            }
            end = i + next.len_utf8();
            chars.next();
        }
        push_word(text, start..end, numeric, &mut out);
    }
    split_noun_is(text, out)
}

/// "The milk's creamy": a noun's `'s` before an adjective, participle or adverb is "is", not
/// a possessive, so it becomes its own token.
fn split_noun_is(text: &str, tokens: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        let next_is_predicate = tokens
            .peek()
            .is_some_and(|next| words::opens_predicate(&next.norm));
        let base_chars = token.norm.chars().count().saturating_sub(2);
        let cut = text
            .get(token.start..token.end)
            .and_then(|w| w.char_indices().nth(base_chars))
            .map(|(i, _)| token.start + i);
        match cut {
            Some(cut) if next_is_predicate && token.norm.ends_with("'s") && base_chars > 0 => {
                let base = token.norm.chars().take(base_chars).collect();
                out.push(Token {
                    end: cut,
                    norm: base,
                    ..token.clone()
                });
                out.push(Token {
                    start: cut,
                    norm: "'s".to_string(),
                    capitalised: false,
                    ..token
                });
            }
            _ => out.push(token),
        }
    }
    out
}

/// Pushes one word, split at a contraction when it has one.
fn push_word(text: &str, range: Range<usize>, numeric: bool, out: &mut Vec<Token>) {
    let Some(word) = text.get(range.clone()) else {
        return;
    };
    let lower = word.to_lowercase().replace('\u{2019}', "'");
    let capitalised = word.chars().next().is_some_and(char::is_uppercase);
    let token = |start: usize, end: usize, norm: &str, capitalised: bool| Token {
        start,
        end,
        norm: norm.to_string(),
        shape: if numeric { Shape::Number } else { Shape::Word },
        capitalised,
    };
    let split = if numeric {
        None
    } else {
        contraction(word, &lower)
    };
    match split {
        Some((chars, first, second)) => {
            let cut = word
                .char_indices()
                .nth(chars)
                .map_or(range.end, |(i, _)| range.start + i);
            out.push(token(range.start, cut, first, capitalised));
            out.push(token(cut, range.end, second, false));
        }
        None => out.push(token(range.start, range.end, &lower, capitalised)),
    }
}

/// Contractions written as one word, with or without an apostrophe that `'` splitting does
/// not cover: the spelling, the first part's length in characters, and both parts' normalised
/// spellings. "its", "ill", "id", "well" and "were" are words, so they are not here.
const FUSED: &[(&str, usize, &str, &str)] = &[
    ("cannot", 3, "can", "not"),
    ("gonna", 3, "going", "to"),
    ("wanna", 3, "want", "to"),
    ("gotta", 3, "got", "to"),
    ("im", 1, "i", "am"),
    ("ive", 1, "i", "have"),
    ("youre", 3, "you", "are"),
    ("theyre", 4, "they", "are"),
    ("thats", 4, "that", "'s"),
    ("whats", 4, "what", "'s"),
    ("cant", 2, "can", "not"),
    ("wont", 2, "will", "not"),
    ("dont", 2, "do", "not"),
    ("doesnt", 4, "does", "not"),
    ("didnt", 3, "did", "not"),
    ("isnt", 2, "is", "not"),
    ("arent", 3, "are", "not"),
    ("wasnt", 3, "was", "not"),
    ("werent", 4, "were", "not"),
    ("hasnt", 3, "has", "not"),
    ("havent", 4, "have", "not"),
    ("hadnt", 3, "had", "not"),
    ("couldnt", 5, "could", "not"),
    ("wouldnt", 5, "would", "not"),
    ("shouldnt", 6, "should", "not"),
];

/// Where to split a contracted word: the first part's length in characters and both parts'
/// normalised spellings.
fn contraction<'a>(word: &str, lower: &'a str) -> Option<(usize, &'a str, &'a str)> {
    if let Some(&(_, first_chars, first, second)) = FUSED.iter().find(|f| f.0 == lower) {
        return Some((first_chars, first, second));
    }
    let chars = word.chars().count();
    if let Some(base) = lower.strip_suffix("n't").filter(|b| !b.is_empty()) {
        let first = match base {
            "ca" => "can",
            "wo" => "will",
            "sha" => "shall",
            "ai" => "is",
            other => other,
        };
        return Some((chars.checked_sub(3)?, first, "not"));
    }
    let (base, suffix) = lower.rsplit_once('\'')?;
    let second = match suffix {
        "m" => "am",
        "re" => "are",
        "ve" => "have",
        "ll" => "will",
        "d" => "'d",
        "s" if base == "let" => "us",
        "s" if takes_s_contraction(base) => "'s",
        _ => return None,
    };
    let suffix_chars = suffix.chars().count() + 1;
    Some((chars.checked_sub(suffix_chars)?, base, second))
}

/// Words whose `'s` is "is"/"has" rather than a possessive.
fn takes_s_contraction(base: &str) -> bool {
    matches!(
        base,
        "it" | "he"
            | "she"
            | "that"
            | "there"
            | "what"
            | "who"
            | "here"
            | "where"
            | "how"
            | "this"
            | "everything"
            | "nothing"
            | "something"
            | "everyone"
            | "someone"
    )
}

/// Sentence boundaries: terminal punctuation (with trailing quotes and brackets) and line
/// breaks. A period after a single lowercase letter or a title ("e.g.", "Dr.") does not end a
/// sentence.
fn sentences(text: &str, tokens: &[Token]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < tokens.len() {
        if i > start && line_break_before(text, tokens, i) {
            out.push(start..i);
            start = i;
        }
        if ends_sentence(tokens, i) {
            let mut end = i + 1;
            while tokens.get(end).is_some_and(|t| {
                matches!(
                    t.norm.as_str(),
                    "." | "!" | "?" | "\u{2026}" | ")" | "\"" | "'" | "\u{201d}" | "\u{2019}"
                )
            }) {
                end += 1;
            }
            out.push(start..end);
            start = end;
            i = end;
            continue;
        }
        i += 1;
    }
    if start < tokens.len() {
        out.push(start..tokens.len());
    }
    out
}

fn line_break_before(text: &str, tokens: &[Token], i: usize) -> bool {
    let (Some(prev), Some(this)) = (tokens.get(i.wrapping_sub(1)), tokens.get(i)) else {
        return false;
    };
    text.get(prev.end..this.start)
        .is_some_and(|gap| gap.contains('\n'))
}

fn ends_sentence(tokens: &[Token], i: usize) -> bool {
    let Some(token) = tokens.get(i) else {
        return false;
    };
    match token.norm.as_str() {
        "!" | "?" | "\u{2026}" => true,
        "." => !abbreviation_dot(tokens, i),
        _ => false,
    }
}

/// A period inside "e.g." or "i.e.", or after a title such as "Dr".
fn abbreviation_dot(tokens: &[Token], i: usize) -> bool {
    let single_letter = |k: Option<usize>| {
        k.and_then(|k| tokens.get(k)).is_some_and(|t| {
            t.shape == Shape::Word
                && t.norm.len() == 1
                && t.norm.bytes().all(|b| b.is_ascii_alphabetic())
        })
    };
    let norm_at = |k: Option<usize>| {
        k.and_then(|k| tokens.get(k))
            .map_or("", |t| t.norm.as_str())
    };
    let prev = i.checked_sub(1);
    if matches!(
        norm_at(prev),
        "mr" | "mrs" | "ms" | "dr" | "prof" | "st" | "vs" | "approx"
    ) {
        return true;
    }
    single_letter(prev)
        && (single_letter(i.checked_add(1)) || norm_at(prev.and_then(|p| p.checked_sub(1))) == ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norms(text: &str) -> Vec<String> {
        tokenize(text).into_iter().map(|t| t.norm).collect()
    }

    #[test]
    fn contractions_split_into_aux_and_negation() {
        assert_eq!(norms("I don't"), ["i", "do", "not"]);
        assert_eq!(norms("can't"), ["can", "not"]);
        assert_eq!(norms("It\u{2019}s fine"), ["it", "'s", "fine"]);
        assert_eq!(norms("I'm"), ["i", "am"]);
        assert_eq!(norms("John's car"), ["john's", "car"]);
        assert_eq!(norms("3.50 costs"), ["3.50", "costs"]);
        assert_eq!(norms("i dont"), ["i", "do", "not"]);
        assert_eq!(norms("im"), ["i", "am"]);
        assert_eq!(norms("its"), ["its"]);
    }

    #[test]
    fn contraction_offsets_cover_the_word() {
        let text = "won\u{2019}t";
        let tokens = tokenize(text);
        assert_eq!(tokens.len(), 2);
        assert_eq!(&text[tokens[0].start..tokens[0].end], "wo");
        assert_eq!(&text[tokens[1].start..tokens[1].end], "n\u{2019}t");
    }

    #[test]
    fn sentences_split_on_terminal_punctuation_and_newlines() {
        let text = "I like it. E.g. oat milk!\nSo good";
        let tokens = tokenize(text);
        assert_eq!(sentences(text, &tokens).len(), 3);
    }
}
