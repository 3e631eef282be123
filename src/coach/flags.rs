//! What a training researcher flags in one interviewer question: leading, double-barrelled,
//! closed. Rules over the question's words and the respondent's earlier words; no model.
//!
//! - **Leading**: a phrase that suggests the answer ("don't you think", "wouldn't you say",
//!   "surely", "I imagine", a closing "…, right?"), or a feeling or value word (from a list a
//!   laddering interviewer watches for: safe, proud, guilty, freedom, in control, …) the
//!   respondent has not said: the question puts it in their mouth.
//! - **Double-barrelled**: two questions in one: two question clauses that ask about different
//!   things, "and" before a second question word ("… and how often …"), or an opinion asked
//!   about two things at once ("what do you think of the price and the packaging").
//! - **Closed**: a yes/no question: the question clause opens with an auxiliary verb ("Is…",
//!   "Do you…", "Would you…"), or has no question word at all ("So you buy it weekly?").
//!   Polite invitations ("Could you tell me more…", "Can you walk me through…") are open.
//!
//! Words inside quotation marks are the respondent's, quoted back: they never make a question
//! leading or double-barrelled.

use serde::Serialize;

/// A flag on one question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    Leading,
    DoubleBarrelled,
    Closed,
    /// The answer gave a new consequence and the next question left it unprobed.
    MissedRung,
    /// The same question was asked before in the session.
    Repeated,
}

impl Flag {
    pub const ALL: [Flag; 5] = [
        Flag::Leading,
        Flag::DoubleBarrelled,
        Flag::Closed,
        Flag::MissedRung,
        Flag::Repeated,
    ];
    /// The flags one question carries by its wording ([`flag`]).
    pub const WORDING: [Flag; 3] = [Flag::Leading, Flag::DoubleBarrelled, Flag::Closed];

    pub fn name(self) -> &'static str {
        match self {
            Self::Leading => "leading",
            Self::DoubleBarrelled => "double_barrelled",
            Self::Closed => "closed",
            Self::MissedRung => "missed_rung",
            Self::Repeated => "repeated",
        }
    }

    /// The flag named `name` (as [`Flag::name`] writes it).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// A question's flags with the reason for each.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flagged {
    pub flag: Flag,
    pub why: String,
}

const WH: [&str; 9] = [
    "what", "why", "how", "when", "where", "which", "who", "whom", "whose",
];

const AUX: [&str; 38] = [
    "is",
    "are",
    "was",
    "were",
    "am",
    "do",
    "does",
    "did",
    "have",
    "has",
    "had",
    "can",
    "could",
    "would",
    "will",
    "should",
    "shall",
    "may",
    "might",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "don't",
    "doesn't",
    "didn't",
    "haven't",
    "hasn't",
    "hadn't",
    "can't",
    "couldn't",
    "wouldn't",
    "won't",
    "shouldn't",
    "any",
    "anything",
    "anyone",
    "ever",
];

/// Verbs after "could you" / "can you" / "would you" that make an invitation, not a yes/no.
const INVITING: [&str; 17] = [
    "tell",
    "describe",
    "walk",
    "explain",
    "say",
    "talk",
    "share",
    "give",
    "elaborate",
    "expand",
    "take",
    "show",
    "go",
    "help",
    "unpack",
    "paint",
    "recall",
];

/// Words that may open a clause before the question proper.
const OPENERS: [&str; 12] = [
    "and", "so", "but", "ok", "okay", "right", "now", "then", "well", "also", "alright", "oh",
];

/// Phrases that suggest the answer.
const SUGGESTING: [&str; 31] = [
    "don't you think",
    "don't you find",
    "don't you love",
    "the real reason",
    "so the reason is",
    "do you not think",
    "wouldn't you say",
    "wouldn't you agree",
    "would you agree",
    "don't you agree",
    "isn't it true",
    "isn't that because",
    "isn't it because",
    "isn't that just",
    "isn't that mostly",
    "isn't that really",
    "surely",
    "i imagine",
    "i guess",
    "i bet",
    "i suppose",
    "i assume",
    "presumably",
    "it must be",
    "that must",
    "must have been",
    "must feel",
    "so you're saying",
    "it sounds like",
    "obviously",
    "of course you",
];

/// Feelings, outcomes and values a laddering interviewer must hear from the respondent, not
/// suggest: word stems (matched at the start of a word).
const VALUE_STEMS: [&str; 67] = [
    "safe",
    "secur",
    "proud",
    "pride",
    "guilt",
    "responsib",
    "freedom",
    "free ",
    "calm",
    "relax",
    "stress",
    "anxi",
    "happy",
    "happi",
    "confiden",
    "health",
    "control",
    "independen",
    "accomplish",
    "success",
    "respect",
    "belong",
    "loved",
    "caring",
    "protect",
    "present",
    "connect",
    "lonel",
    "frustrat",
    "annoy",
    "embarrass",
    "asham",
    "peace",
    "fulfil",
    "self-esteem",
    "status",
    "worr",
    "fear",
    "afraid",
    "excit",
    "satisf",
    "escape",
    "relief",
    "relieved",
    "guilty",
    "smart",
    "valued",
    "appreciat",
    "trust",
    "reassur",
    "overwhelm",
    "burden",
    "burnt",
    "burned",
    "joy",
    "grateful",
    "better person",
    "good parent",
    "good mother",
    "good father",
    "in charge",
    "on top of",
    "productive",
    "efficien",
    "wellbeing",
    "seen as",
    "good manager",
];

/// Generic words a rephrased second question may add without asking something new.
const GENERIC: [&str; 22] = [
    "difference",
    "matter",
    "matters",
    "mean",
    "means",
    "important",
    "reason",
    "reasons",
    "make",
    "makes",
    "give",
    "gives",
    "about",
    "that",
    "this",
    "those",
    "there",
    "really",
    "actually",
    "exactly",
    "would",
    "you",
];

/// Lower-case `text` with quoted stretches removed (the respondent's own words). Double
/// quotes (straight or curly) open and close; a single quote opens before a word and closes
/// after one, so apostrophes inside words ("don't") are left alone.
fn unquoted(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut open: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        let before = i
            .checked_sub(1)
            .and_then(|j| chars.get(j))
            .is_some_and(|p| p.is_alphanumeric());
        let after = chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        let double = matches!(c, '"' | '\u{201c}' | '\u{201d}');
        let single = matches!(c, '\'' | '\u{2018}' | '\u{2019}');
        match open {
            Some(q) => {
                let closes = if q == '"' {
                    double
                } else {
                    single && before && !after
                };
                if closes {
                    open = None;
                    out.push(' ');
                }
            }
            None if double => open = Some('"'),
            None if single && !before && after => open = Some('\''),
            None => out.push(c),
        }
    }
    // An unclosed quote quoted nothing: keep the text.
    if open.is_some() {
        return text.to_lowercase().replace('\u{2019}', "'");
    }
    out.to_lowercase().replace('\u{2019}', "'")
}

/// Lower-case words; a question word's contraction ("how's", "what're") counts as the
/// question word.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace('’', "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = w.trim_matches('\'');
            match w.split_once('\'') {
                Some((head, _)) if WH.contains(&head) => head.to_owned(),
                _ => w.to_owned(),
            }
        })
        .collect()
}

/// The question's clauses that end with "?", each without its leading filler words.
fn question_clauses(question: &str) -> Vec<Vec<String>> {
    let text = unquoted(question);
    let mut clauses = Vec::new();
    for piece in text.split_inclusive(['?', '.', '!']) {
        if !piece.trim_end().ends_with('?') {
            continue;
        }
        // The clause after the last comma-separated lead-in ("You said X, so why …?") keeps
        // its question word; take the whole piece's words.
        let w = words(piece);
        let start = w
            .iter()
            .position(|x| !OPENERS.contains(&x.as_str()))
            .unwrap_or(w.len());
        clauses.push(w.get(start..).unwrap_or_default().to_vec());
    }
    clauses
}

/// Where in `clause` the question proper starts: after a lead-in ending in a comma ("You
/// mentioned the price, does it…"), the first word that is a question or auxiliary word.
fn opening_word(clause: &[String]) -> Option<usize> {
    clause
        .iter()
        .position(|w| WH.contains(&w.as_str()) || AUX.contains(&w.as_str()))
}

fn is_closed(clause: &[String]) -> Option<String> {
    let first = clause.first()?;
    let has_wh = clause.iter().any(|w| WH.contains(&w.as_str()));
    let invitation = |at: usize| {
        clause.get(at + 1).is_some_and(|w| w == "you")
            && clause
                .get(at + 2)
                .is_some_and(|v| INVITING.contains(&v.as_str()))
    };
    if AUX.contains(&first.as_str()) {
        if matches!(first.as_str(), "could" | "can" | "would" | "will") && invitation(0) {
            return None;
        }
        return Some(format!("a yes/no question (opens with \"{first}\")"));
    }
    if !has_wh {
        // "Tell me …?" is an invitation; anything else without a question word is yes/no.
        if matches!(first.as_str(), "tell" | "describe" | "walk" | "talk") {
            return None;
        }
        return Some("a yes/no question (no question word)".to_owned());
    }
    // A statement lead-in, then a yes/no clause: "You said X, is that …?"
    let at = opening_word(clause)?;
    let word = clause.get(at)?;
    if at > 0
        && AUX.contains(&word.as_str())
        && !WH.iter().any(|w| clause.iter().skip(at).any(|x| x == w))
    {
        if invitation(at) {
            return None;
        }
        return Some(format!("a yes/no question (\"{word} …?\")"));
    }
    None
}

fn stem_in(stem: &str, text_words: &[String], text: &str) -> bool {
    if stem.contains(' ') || stem.ends_with(' ') {
        return text.contains(stem.trim_end());
    }
    text_words.iter().any(|w| w.starts_with(stem))
}

fn leading(question: &str, heard: &str) -> Option<String> {
    let open = unquoted(question);
    for phrase in SUGGESTING {
        if open.contains(phrase) {
            return Some(format!("suggests the answer (\"{phrase}\")"));
        }
    }
    let trimmed = open.trim_end();
    for tag in [", right?", ", yeah?", ", correct?", ", no?", " right?"] {
        if trimmed.ends_with(tag) {
            return Some(format!(
                "suggests the answer (ends \"{}\")",
                tag.trim_start_matches([',', ' '])
            ));
        }
    }
    let q_words = words(&open);
    let heard_lower = heard.to_lowercase().replace('’', "'");
    let heard_words = words(&heard_lower);
    for stem in VALUE_STEMS {
        if stem_in(stem, &q_words, &open) && !stem_in(stem, &heard_words, &heard_lower) {
            let said = q_words
                .iter()
                .find(|w| w.starts_with(stem.trim_end()))
                .cloned()
                .unwrap_or_else(|| stem.trim_end().to_owned());
            return Some(format!(
                "puts \"{said}\" in the respondent's mouth (they have not said it)"
            ));
        }
    }
    None
}

fn content(words: &[String]) -> Vec<&str> {
    words
        .iter()
        .map(String::as_str)
        .filter(|w| w.len() >= 4 && !GENERIC.contains(w) && !WH.contains(w) && !AUX.contains(w))
        .collect()
}

/// A second question that asks about the first's subject again ("… matter? What difference
/// does it make?"): a rephrase, not a second question.
fn refers_back(clause: &[String]) -> bool {
    clause
        .iter()
        .take(5)
        .any(|w| matches!(w.as_str(), "it" | "that" | "this"))
}

fn double_barrelled(question: &str, clauses: &[Vec<String>]) -> Option<String> {
    // Two question clauses asking about different things.
    if let [first, second, ..] = clauses
        && !refers_back(second)
    {
        let seen = content(first);
        let new: Vec<&str> = content(second)
            .into_iter()
            .filter(|w| {
                // The word's first five characters (not bytes: a respondent's words may be any
                // script).
                let head: String = w.chars().take(5).collect();
                !seen.iter().any(|s| s.starts_with(&head))
            })
            .collect();
        if !new.is_empty() {
            return Some(format!(
                "two questions (the second asks about \"{}\")",
                new.join(" ")
            ));
        }
    }
    let open = unquoted(question);
    let w = words(&open);
    // "… and how often …", "… and do you …": a second question joined by "and".
    for (i, x) in w.iter().enumerate() {
        if x != "and" {
            continue;
        }
        let next = w.get(i + 1).map(String::as_str).unwrap_or_default();
        let after = w.get(i + 2).map(String::as_str).unwrap_or_default();
        let starts_question = WH.contains(&next)
            || (AUX.contains(&next)
                && matches!(
                    after,
                    "you" | "it" | "they" | "that" | "there" | "your" | "the"
                ));
        if starts_question && i > 2 {
            return Some(format!("two questions joined by \"and {next}\""));
        }
    }
    // An opinion asked about two things at once.
    for lead in [
        "think of",
        "think about",
        "feel about",
        "opinion of",
        "like about",
        "rate",
        "thoughts on",
    ] {
        if let Some(at) = open.find(lead)
            && open.get(at..).is_some_and(|rest| rest.contains(" and "))
        {
            return Some(format!("asks \"{lead}\" two things at once"));
        }
    }
    None
}

/// The flags of `question`, asked after the respondent said `heard` (their earlier answers);
/// `wants_open` says the current strategy asks why/how (a summary or closing strategy may
/// ask yes/no).
pub fn flag(question: &str, heard: &str, wants_open: bool) -> Vec<Flagged> {
    let clauses = question_clauses(question);
    let mut out = Vec::new();
    if let Some(why) = leading(question, heard) {
        out.push(Flagged {
            flag: Flag::Leading,
            why,
        });
    }
    if let Some(why) = double_barrelled(question, &clauses) {
        out.push(Flagged {
            flag: Flag::DoubleBarrelled,
            why,
        });
    }
    if wants_open && let Some(why) = clauses.iter().find_map(|c| is_closed(c)) {
        out.push(Flagged {
            flag: Flag::Closed,
            why,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_in_any_script_are_flagged_without_panicking() {
        for question in [
            "Why does the éééé matter? What does the ééééé give you?",
            "味噌汁はどうですか? 毎朝飲みますか?",
            "¿Por qué te importa la espuma? ¿Y el precio?",
        ] {
            let _ = flag(question, "ça mousse bien", true);
        }
        let flags = flag(
            "Why crème brûlée? How often do you buy the günstige milk?",
            "",
            true,
        );
        assert!(
            flags.iter().any(|f| f.flag == Flag::DoubleBarrelled),
            "{flags:?}"
        );
    }
}
