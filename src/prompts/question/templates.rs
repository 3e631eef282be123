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
    /// The questions already asked in this session, oldest first: none is asked again, and the
    /// last one's phrasing is not used twice in a row.
    pub asked: &'a [String],
    /// The respondent's own words from the answer just given, said back before the question
    /// ("You said a calmer mood before work."): the focus's words when the focus came from
    /// that answer; with no focus, a concept of that answer, so a question that widens the
    /// interview still shows it heard what was just said.
    pub echo: Option<&'a str>,
}

/// Words of a focus label kept in a question: node labels are 2–5 words by the naming
/// conventions, and the offline extractor's reach 7 besides articles and the "kind of" of "the
/// kind of manager I wish I had"; a longer one is an extraction slip and would crowd out the
/// question.
const MAX_FOCUS_WORDS: usize = 11;
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

/// Phrasings without a focus node when the strategy has none that fit, or when every one it
/// has was already asked.
const TOPIC_FALLBACK: &[&str] = &[
    "What else comes to mind when you think about {topic}?",
    "Could you tell me more about your own experience of {topic}?",
    "Is there anything about {topic} that we have not talked about yet?",
    "Can you think of a recent occasion involving {topic} and walk me through it?",
    "What would you miss most about {topic} if it were gone?",
    "How would you describe {topic} to a friend who has never tried it?",
];

/// How a question says the respondent's words back before asking about them; `{echo}` is
/// the quote, the rest of the question follows.
const ECHO_LEADS: &[&str] = &["You said \"{echo}\".", "You mentioned \"{echo}\"."];

/// The last resorts when everything above was already asked: different each time they are
/// needed, and they pass the check whatever the focus and topic are.
const LAST_RESORTS: &[&str] = &[
    LAST_RESORT_QUESTION,
    "Is there anything else you would like to add about this?",
    "What else would be useful for me to understand here?",
    "Looking back on everything you have said, what stands out most to you?",
];

/// The question asked when nothing else renders to a question that passes the check; it
/// passes whatever the focus and topic are, since it uses neither.
pub const LAST_RESORT_QUESTION: &str = "What else comes to mind when you think about this?";

/// The focus already is a feeling ("feel awful about the waste"): asking how it makes the
/// respondent feel would ask the answer back.
fn names_a_feeling(focus: &str) -> bool {
    focus.split(|c: char| !c.is_alphanumeric()).any(|w| {
        matches!(
            w.to_lowercase().as_str(),
            "feel" | "felt" | "feeling" | "feelings"
        )
    })
}

/// A phrasing that asks for a feeling ("How does \"{focus}\" make you feel?").
fn asks_a_feeling(template: &str) -> bool {
    let lower = template.to_lowercase();
    lower.contains("{focus}") && (lower.contains(" feel?") || lower.contains("to feel "))
}

/// A focus the respondent put as a denial ("not rushing everyone out").
fn is_denied(focus: &str) -> bool {
    let lower = focus.to_lowercase();
    lower.starts_with("not ") || lower.starts_with("no ") || lower.starts_with("never ")
}

/// A phrasing that asks what life would be like without the focus: with a denied focus it
/// reads as a double negative ("without \"not rushing everyone out\"").
fn asks_without(template: &str) -> bool {
    let lower = template.to_lowercase();
    lower.contains("without \"{focus}\"") || lower.contains("without {focus}")
}

/// Topic used in a phrasing when the concept's topic is empty after cleaning.
const NO_TOPIC: &str = "this";

/// Renders one of `input.templates` for this turn: `{focus}` and `{topic}` filled in, the
/// phrasing chosen by a stable hash of the session seed, turn and focus.
///
/// Phrasings that need `{focus}` are skipped when there is no focus. With more than one
/// usable phrasing, consecutive turns never get the same one: even turns choose among the
/// even positions of a per-session rotation of the list, odd turns among the odd ones, and
/// the hash picks within that half. A phrasing whose question was already asked in the
/// session, that the last question used, or that asks about the topic alone and was asked
/// before after any lead, is passed over (rotate), then generic phrasings
/// stand in (vary), and the last resorts come last, so no question is asked twice.
///
/// With an `echo` (the focus came from the answer just given), each phrasing is first tried
/// as a follow-up that says the respondent's words back: `You said "{echo}". Why is that
/// important to you?`. With an echo and no focus, each topic phrasing is first tried after
/// the same lead: `You mentioned "{echo}". What else do you notice about oat milk?`.
pub fn render_template(input: &TemplateInput<'_>) -> String {
    let focus = input
        .focus
        .map(|f| clean_label(f, MAX_FOCUS_WORDS))
        .filter(|f| !f.is_empty());
    let echo = input
        .echo
        .map(|e| clean_label(e, MAX_FOCUS_WORDS))
        .filter(|e| !e.is_empty());
    let topic = Some(clean_label(input.topic, MAX_TOPIC_WORDS))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| NO_TOPIC.to_owned());
    let usable: Vec<&str> = input
        .templates
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty() && (focus.is_some() || !t.contains("{focus}")))
        .filter(|t| !(focus.as_deref().is_some_and(names_a_feeling) && asks_a_feeling(t)))
        .filter(|t| !(focus.as_deref().is_some_and(is_denied) && asks_without(t)))
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
    let rotated: Vec<&str> = candidates
        .iter()
        .cycle()
        .skip(first)
        .take(candidates.len())
        .copied()
        .collect();
    let focus_fallback = FOCUS_FALLBACK.iter().filter(|_| focus.is_some()).copied();
    let plain: Vec<String> = rotated
        .iter()
        .copied()
        .chain(focus_fallback)
        .chain(TOPIC_FALLBACK.iter().copied())
        .map(str::to_owned)
        .collect();
    let lead = ECHO_LEADS
        .get(usize::try_from(input.turn).unwrap_or(0) % ECHO_LEADS.len())
        .copied()
        .unwrap_or("You said \"{echo}\".");
    // Each candidate with the phrasing it comes from: the last question's phrasing is not
    // used again, whichever lead either was asked with.
    let echoed: Vec<(&str, String)> = match (&echo, &focus) {
        (None, _) => Vec::new(),
        (Some(_), Some(_)) => plain
            .iter()
            .filter_map(|t| Some((t.as_str(), format!("{lead} {}", echoed_body(t)?))))
            .collect(),
        (Some(_), None) => plain
            .iter()
            .filter(|t| acknowledges(t))
            .map(|t| (t.as_str(), format!("{lead} {t}")))
            .collect(),
    };
    let asked: Vec<String> = input.asked.iter().map(|q| normalized(q)).collect();
    let last = input.asked.last().map(String::as_str);
    // A phrasing about the topic alone asks the same thing whatever words lead it ("You
    // said "speaker". … how does your choice change …" and later "You mentioned "one less
    // thing to think about". … how does your choice change …", seen in a live interview), so
    // once asked it is not asked again.
    let fresh = |phrasing: &str, question: &str| {
        !asked.contains(&normalized(question))
            && !last.is_some_and(|l| asked_as(phrasing, l))
            && (phrasing.contains("{focus}") || !input.asked.iter().any(|a| asked_as(phrasing, a)))
    };
    let render = |t: &str| fill(t, focus.as_deref(), echo.as_deref(), &topic);
    let said_back: Vec<(&str, String)> = echoed
        .iter()
        .map(|(phrasing, t)| (*phrasing, render(t)))
        .collect();
    let options: Vec<(&str, String)> = said_back
        .iter()
        .cloned()
        .chain(plain.iter().map(|t| (t.as_str(), render(t))))
        .chain(LAST_RESORTS.iter().map(|q| (*q, (*q).to_owned())))
        .collect();
    let passes = |(t, q): &&(&str, String)| fresh(t, q) && check_question(q, &[]).is_ok();
    // Rotate before varying: a phrasing of the strategy's own not yet used in the session
    // comes first ("How would you tell a day with …" was asked at turns 2 and 6 of a live
    // interview while two of its phrasings were never used), said back when there is an
    // echo.
    let unused = |(t, _): &&(&str, String)| {
        rotated.contains(t) && !input.asked.iter().any(|a| asked_as(t, a))
    };
    let own = if echo.is_some() { &said_back } else { &options };
    own.iter()
        .filter(unused)
        .find(passes)
        .or_else(|| options.iter().find(passes))
        .map_or_else(|| least_recent_last_resort(&asked), |(_, q)| q.clone())
}

/// Every phrasing and last resort was asked already (a very long interview on one focus):
/// the least recently asked last resort, among `asked` (normalised, oldest first).
fn least_recent_last_resort(asked: &[String]) -> String {
    LAST_RESORTS
        .iter()
        .min_by_key(|q| {
            asked
                .iter()
                .rposition(|a| *a == normalized(q))
                .map_or(0, |p| p + 1)
        })
        .map_or_else(|| LAST_RESORT_QUESTION.to_owned(), |q| (*q).to_owned())
}

/// The body of a focus phrasing asked as a follow-up that says the respondent's words back:
/// the phrasing with the quoted focus replaced by "that", to follow a lead (`You said
/// "{echo}".`). Phrasings that already open by quoting ("You mentioned …") or name the focus
/// more than once have no such form.
fn echoed_body(template: &str) -> Option<String> {
    if template.matches("{focus}").count() != 1 || template.to_lowercase().starts_with("you ") {
        return None;
    }
    let body = ["\"{focus}\"", "'{focus}'", "“{focus}”", "{focus}"]
        .iter()
        .find(|q| template.contains(**q))
        .map(|q| template.replacen(q, "that", 1))?;
    // "How would you know that {focus} …" would read "that that".
    Some(body.replace(" that that ", " that "))
}

/// Whether a topic phrasing can follow the lead that says back what the last answer raised
/// (`You mentioned "{echo}". What else do you notice about {topic}?`): not one that needs a
/// focus or already opens on the respondent ("You …").
fn acknowledges(template: &str) -> bool {
    !template.contains("{focus}") && !template.to_lowercase().starts_with("you ")
}

/// Whether `question` was asked from `phrasing`, as it stands or after a lead that says
/// the respondent's words back.
fn asked_as(phrasing: &str, question: &str) -> bool {
    if same_phrasing(phrasing, question) {
        return true;
    }
    let Some(body) = ECHO_LEADS.iter().find_map(|lead| {
        let (open, close) = lead.split_once("{echo}")?;
        let rest = question.strip_prefix(open)?;
        rest.split_once(close).map(|(_, body)| body.trim_start())
    }) else {
        return false;
    };
    same_phrasing(phrasing, body) || echoed_body(phrasing).is_some_and(|b| same_phrasing(&b, body))
}

/// Lowercase words only, one space apart: two questions are the same when these are equal.
fn normalized(question: &str) -> String {
    question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `question` was rendered from `template`: the template's literal pieces (the text
/// between its placeholders) appear in the question in order, and the question starts and
/// ends as the template does. A template without placeholders is the same phrasing only as
/// the same question.
pub(super) fn same_phrasing(template: &str, question: &str) -> bool {
    let mut parts = template.split('{');
    let mut pieces: Vec<String> = vec![normalized(parts.next().unwrap_or_default())];
    pieces.extend(parts.map(|p| normalized(p.split_once('}').map_or(p, |(_, after)| after))));
    if pieces.len() == 1 {
        return normalized(template) == normalized(question);
    }
    let question = normalized(question);
    let mut at = 0;
    for (i, piece) in pieces.iter().enumerate() {
        if piece.is_empty() {
            continue;
        }
        let Some(found) = question.get(at..).and_then(|q| q.find(piece.as_str())) else {
            return false;
        };
        if i == 0 && found != 0 {
            return false;
        }
        at += found + piece.len();
    }
    pieces
        .last()
        .is_none_or(|p| p.is_empty() || question.ends_with(p.as_str()))
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

fn fill(template: &str, focus: Option<&str>, echo: Option<&str>, topic: &str) -> String {
    let mut text = template.replace("{topic}", topic);
    if let Some(focus) = focus {
        text = text.replace("{focus}", focus);
    }
    if let Some(echo) = echo {
        text = text.replace("{echo}", echo);
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
