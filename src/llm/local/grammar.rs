//! The question grammar: the local model's next question is decoded under a grammar that
//! admits exactly one interrogative sentence, so a small model cannot leak prompt markup, list
//! items or a second sentence into it.
//!
//! The sentence starts with one of [`QUESTION_OPENERS`], has [`QUESTION_MIN_WORDS`] to
//! [`QUESTION_MAX_WORDS`] words separated by single spaces, and ends with `?`. Words are made of
//! letters, digits, apostrophes, quotes, parentheses and a few symbols (`%`, `$`, `€`,
//! `£`, `&`, `/`), with hyphens only inside a word and a comma only at its end; there is no newline, `#`, `*`, `:`, `;`,
//! `.`, `!` or other `?`, so no heading, list marker, role label or second sentence can appear.
//! Words are at most [`WORD_CHARS`] characters, and the last one ends in a letter, digit, quote,
//! `)` or `%` (no `,?`). The rule is capped at [`QUESTION_MAX_TOKENS`]
//! tokens, and the engine steers the reply to its `?` as that budget runs out (see `engine`).
//!
//! Whether the question is *good* (on topic, not a template echo) is the pipeline's question
//! check; the grammar only makes its form right.

/// Fewest words a question may have.
pub const QUESTION_MIN_WORDS: usize = 4;
/// Most words a question may have: a question a respondent can take in at once. Stricter than
/// the pipeline's question check (45): a 135M model given room runs on into a statement
/// ("What makes it different, is that it has …"), and a short budget keeps it to one thought.
pub const QUESTION_MAX_WORDS: usize = 18;
/// Most tokens a question may take: 18 short words fit, and a 135M model writes them in well
/// under a second.
pub const QUESTION_MAX_TOKENS: u32 = 40;
/// Longest word: longer runs are a model spelling out something that is not a word.
const WORD_CHARS: usize = 14;

/// How a question may begin: an interrogative, an auxiliary or one of a few lead-ins
/// ("Thinking about …, what …?"). A 135M model otherwise starts by talking about its task
/// ("I'm looking for a question …", "A question in this spirit …"), which no opener here allows.
pub const QUESTION_OPENERS: &[&str] = &[
    "What", "Why", "How", "When", "Where", "Which", "Who", "Could", "Can", "Would", "Do", "Does",
    "Did", "Is", "Are", "Was", "Were", "Have", "Has", "In", "Thinking", "Looking", "You", "Tell",
    "If",
];

/// Characters a word is made of (hyphens aside), as a regex class body; `/` is escaped
/// because it ends a regex in Lark.
const WORD_CLASS: &str = r#"\p{L}\p{N}'’"“”()%$€£&\/"#;

/// Characters the last word may end with: no comma, bracket or symbol right before the `?`.
const END_CLASS: &str = r#"\p{L}\p{N}'’"“”)%"#;

/// An llguidance Lark grammar admitting exactly one interrogative sentence (see the module
/// notes), for [`crate::llm::LlmRequest::with_grammar`].
pub fn one_question_grammar() -> String {
    let class = WORD_CLASS;
    let inner = WORD_CHARS - 2;
    // A word: one class character, optionally more (hyphens allowed) ending in one.
    let tail = format!("(?:[{class}\\-]{{0,{inner}}}[{class}])?");
    // "What's", "How'd", "Who've": an opener with a contraction is still an opener.
    let first = format!(
        "(?:{})(?:['’](?:s|re|d|ll|ve))?,?",
        QUESTION_OPENERS.join("|")
    );
    // A comma only ends a word: "different,compared,tothe" is a model cramming words.
    let word = format!("[{class}]{tail},?");
    let last = format!("(?:[{class}][{class}\\-]{{0,{inner}}})?[{END_CLASS}]");
    let middle_min = QUESTION_MIN_WORDS - 2;
    let middle_max = QUESTION_MAX_WORDS - 2;
    format!(
        "start[max_tokens={QUESTION_MAX_TOKENS}]: QUESTION\n\
         QUESTION: /{first}(?: {word}){{{middle_min},{middle_max}}} {last}\\?/\n"
    )
}

/// Whether `text` has the form [`one_question_grammar`] admits; for tests and for checking a
/// reply that was cut at the budget.
pub fn is_one_question(text: &str) -> bool {
    let Some(body) = text.strip_suffix('?') else {
        return false;
    };
    let words: Vec<&str> = body.split(' ').collect();
    let word_ok = |word: &str| {
        let word = word.strip_suffix(',').unwrap_or(word);
        let count = word.chars().count();
        (1..=WORD_CHARS).contains(&count)
            && !word.starts_with('-')
            && !word.ends_with('-')
            && word.chars().all(|c| c == '-' || in_word_class(c))
    };
    (QUESTION_MIN_WORDS..=QUESTION_MAX_WORDS).contains(&words.len())
        && words.iter().all(|w| word_ok(w))
        && words.first().is_some_and(|first| {
            let stem = first
                .trim_end_matches(',')
                .split(['\'', '’'])
                .next()
                .unwrap_or_default();
            QUESTION_OPENERS.contains(&stem)
        })
        && body
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || "'’\"“”)%".contains(c))
}

fn in_word_class(c: char) -> bool {
    c.is_alphanumeric() || "'’\"“”()%$€£&/".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_check_accepts_questions_and_rejects_the_rest() {
        for good in [
            "Why does oat milk matter to you?",
            "What makes a plant-based latte feel \"right\" in the morning, for you?",
            "Could you say more about café prices?",
            "Thinking about mornings, what does oat milk change for you?",
            "What's your take on oat milk these days?",
        ] {
            assert!(is_one_question(good), "{good}");
        }
        for bad in [
            "Why oat milk?",
            "why does oat milk matter to you?",
            "## Strategy: Why does it matter?",
            "- Why does oat milk matter to you?",
            "Why does oat milk matter to you",
            "Thanks. Why does oat milk matter to you?",
            "Why does oat milk\nmatter to you?",
            "Why does it matter?  Really?",
            "Role: why does oat milk matter?",
            "Why does oat -milk matter to you?",
            "I'm looking for a question to explore oat milk?",
            "A question in this spirit is a good one?",
            "What makes it different,compared,tothe others?",
            "Why does oat milk matter to you, ?",
            "Why does oat milk matter to you,?",
        ] {
            assert!(!is_one_question(bad), "{bad}");
        }
        let long = format!("Why {}?", "really ".repeat(QUESTION_MAX_WORDS).trim_end());
        assert!(!is_one_question(&long), "one word too many");
    }

    #[test]
    fn the_grammar_states_the_limits() {
        let grammar = one_question_grammar();
        assert!(
            grammar.starts_with("start[max_tokens=40]: QUESTION\n"),
            "{grammar}"
        );
        assert!(grammar.contains("){2,16} (?:"), "{grammar}");
        assert!(grammar.ends_with("\\?/\n"), "{grammar}");
    }
}
