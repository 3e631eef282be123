//! The synthetic respondent's prompt and the bounds put on its reply (simulations only).
//!
//! The respondent sees what a real respondent would: who they are (the persona's name, traits
//! and way of speaking), the interview's topic, and the conversation so far, meaning the
//! interviewer's questions and its own earlier answers. It never sees the engine's internals:
//! no strategy, focus, signal, node type or graph summary reaches this prompt. The persona's
//! `description` is left out too, because it is written for researchers and says what the
//! persona is meant to test.
//!
//! Per answer the simulator chooses a length and whether to deflect; the prompt states both, and
//! [`parse_respondent_reply`] holds the model to the length afterwards.

use super::Prompt;
use super::decoration::{strip_label, strip_layers};
use super::window::{Line, conversation_window, one_line};
use crate::config::Persona;
use crate::reply_json::{ContractError, MAX_REPLY_BYTES, quote};

/// The respondent's temperature when its role sets none: high, so answers vary like people's.
pub const RESPONDENT_TEMPERATURE: f32 = 0.9;
/// Conversation shown to the respondent, in characters. Twice the question generator's window:
/// a person remembers more of their own interview than the last few exchanges, and keeping
/// earlier answers in view keeps the invented details consistent.
pub const RESPONDENT_WINDOW_CHARS: usize = 8_000;
/// Replies longer than the target by this factor are cut at a sentence end (see
/// [`parse_respondent_reply`]).
pub const LENGTH_TOLERANCE: f64 = 1.5;
/// Longest answer returned, in characters: the pipeline's `MAX_ANSWER_CHARS`, restated here
/// because prompts do not depend on the pipeline (the simulator's tests check they agree).
pub const MAX_RESPONDENT_CHARS: usize = 5_000;
/// The cut never leaves fewer words than this, so a two-word target can still say "Yeah, I
/// guess so."
pub const MIN_WORD_LIMIT: u32 = 4;

/// The length class of one answer, from the persona's `response_patterns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnswerLength {
    Acknowledgment,
    Brief,
    Medium,
    Detailed,
}

impl AnswerLength {
    /// Shortest first: the order in which the simulator accumulates probabilities.
    pub const ALL: [AnswerLength; 4] = [
        AnswerLength::Acknowledgment,
        AnswerLength::Brief,
        AnswerLength::Medium,
        AnswerLength::Detailed,
    ];

    /// The persona YAML's key for this class.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Acknowledgment => "acknowledgment",
            Self::Brief => "brief",
            Self::Medium => "medium",
            Self::Detailed => "detailed",
        }
    }

    /// Target words of the class, before fatigue: a spoken answer of that kind.
    pub fn word_range(self) -> (u32, u32) {
        match self {
            Self::Acknowledgment => (2, 5),
            Self::Brief => (6, 15),
            Self::Medium => (25, 45),
            Self::Detailed => (60, 110),
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Self::Acknowledgment => {
                "a few words only, such as agreeing, or saying you are not sure or have \
                 nothing to add"
            }
            Self::Brief => "one short sentence or a phrase",
            Self::Medium => "a few sentences",
            Self::Detailed => "a full answer with a concrete example or a short story",
        }
    }
}

impl std::fmt::Display for AnswerLength {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the respondent prompt is built from.
#[derive(Debug, Clone, Copy)]
pub struct RespondentInput<'a> {
    pub persona: &'a Persona,
    /// The concept's topic, as a recruited respondent would have been told it.
    pub topic: &'a str,
    /// The conversation so far, oldest first, ending with the question to answer.
    pub conversation: &'a [Line<'a>],
    pub length: AnswerLength,
    pub target_words: u32,
    /// `Some` when this answer deflects; holds one of the persona's deflection patterns as an
    /// example, or `None` inside when the persona lists none.
    pub deflection: Option<Option<&'a str>>,
    /// How tired the respondent is, in [0, 1]; above 0 the prompt says so.
    pub fatigue: f64,
}

/// The prompt for one answer.
pub fn respondent_prompt(input: &RespondentInput<'_>) -> Prompt {
    Prompt {
        system: respondent_system(input.persona, input.topic),
        user: respondent_user(input),
        temperature: RESPONDENT_TEMPERATURE,
    }
}

fn respondent_system(persona: &Persona, topic: &str) -> String {
    let mut p = String::from(
        "You are taking part in a qualitative research interview as the person described \
         below. Stay in character for the whole conversation and answer as this person would, \
         from their own life and experience. You are a member of the public, not an \
         assistant: never mention being an AI, a simulation, a character or these \
         instructions.\n\n## Who you are\n",
    );
    p.push_str(&format!("Profile: {}\n", one_line(&persona.name)));
    if !persona.traits.is_empty() {
        let traits: Vec<String> = persona.traits.iter().map(|t| one_line(t)).collect();
        p.push_str(&format!("Traits: {}\n", traits.join(", ")));
    }
    let speech = one_line(&persona.speech_pattern);
    if !speech.is_empty() {
        p.push_str(&format!("How you speak: {speech}\n"));
    }
    p.push_str(&format!(
        "\n## The interview\nThe interview is about {}. Where you need details of your own \
         experience (places, times, brands, people), invent plausible ones and keep them \
         consistent with what you said earlier.\n\n\
         Rules:\n\
         - Reply with your spoken answer only: no name or label, no quotation marks, no stage \
         directions, no lists or headings.\n\
         - Answer only the interviewer's last question.\n\
         - Keep to the length you are given for this answer.\n",
        one_line(topic)
    ));
    p
}

fn respondent_user(input: &RespondentInput<'_>) -> String {
    let conversation = conversation_window(input.conversation, RESPONDENT_WINDOW_CHARS);
    let mut p = format!(
        "## The conversation so far\nLines marked Respondent are your own earlier answers; \
         the last line is the question to answer now.\n{}\n\n## Your next answer\n",
        if conversation.is_empty() {
            "(nothing yet)"
        } else {
            &conversation
        }
    );
    p.push_str(&format!(
        "Length: {}, about {} words ({}).\n",
        input.length,
        input.target_words,
        input.length.hint()
    ));
    match input.deflection {
        Some(example) => {
            p.push_str(
                "Deflect this question: do not really answer it; sidestep it the way you do \
                 when you would rather not go there.",
            );
            if let Some(example) = example.map(one_line).filter(|e| !e.is_empty()) {
                p.push_str(&format!(" For example, in your own words: \"{example}\""));
            }
            p.push('\n');
        }
        None => p.push_str("Answer the question in character.\n"),
    }
    if input.fatigue > 0.0 {
        p.push_str(
            "You have been talking for a while and are getting tired of the interview; let it \
             show a little.\n",
        );
    }
    p.push_str("\nWrite your answer.");
    p
}

/// Labels a model may put before the answer, compared ignoring ASCII case.
const LABELS: &[&str] = &["respondent", "answer", "me", "you"];

/// Opening and closing marks stripped when they wrap the whole answer.
const WRAPPERS: &[(char, char)] = &[('"', '"'), ('“', '”'), ('\'', '\''), ('«', '»')];

/// Cleans and bounds a respondent's reply to about `target_words` words.
///
/// The reply is flattened to one line; a leading `Respondent:`-style label and quotation marks
/// around the whole text are removed. An empty result is an error. When the answer has more
/// than `target_words ×` [`LENGTH_TOLERANCE`] words (at least [`MIN_WORD_LIMIT`]), it is cut
/// after the last sentence that ends within that limit; when even the first sentence runs
/// past it, after the limit's last word, marked with `…`. The result never exceeds the
/// pipeline's answer limit ([`MAX_RESPONDENT_CHARS`]).
pub fn parse_respondent_reply(reply: &str, target_words: u32) -> Result<String, ContractError> {
    if reply.len() > MAX_REPLY_BYTES {
        return Err(ContractError::TooLarge(reply.len()));
    }
    let text = strip_decoration(&one_line(reply));
    if text.is_empty() {
        return Err(ContractError::Empty);
    }
    let limit = word_limit(target_words);
    let words: Vec<&str> = text.split(' ').collect();
    let mut answer = if words.len() <= limit {
        text
    } else {
        cut_to_limit(&words, limit)
    };
    if answer.chars().count() > MAX_RESPONDENT_CHARS {
        answer = answer.chars().take(MAX_RESPONDENT_CHARS - 1).collect();
        answer.push('…');
    }
    if answer.trim_matches(['…', ' ']).is_empty() {
        return Err(ContractError::Invalid {
            field: "answer".to_owned(),
            reason: "has no words".to_owned(),
            found: quote(reply),
        });
    }
    Ok(answer)
}

/// Most words kept for a target.
pub fn word_limit(target_words: u32) -> usize {
    let limit = (f64::from(target_words) * LENGTH_TOLERANCE).ceil();
    // Targets are small whole numbers, so the product is exact and in range.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let limit = limit as usize;
    limit.max(MIN_WORD_LIMIT as usize)
}

/// The longest run of whole sentences within `limit` words, else the first `limit` words.
fn cut_to_limit(words: &[&str], limit: usize) -> String {
    let sentence_end = words
        .iter()
        .take(limit)
        .rposition(|w| ends_sentence(w))
        .map(|i| i + 1);
    if let Some(n) = sentence_end {
        return words.get(..n).unwrap_or(words).join(" ");
    }
    let kept = words.get(..limit).unwrap_or(words).join(" ");
    let kept = kept.trim_end_matches([',', ';', ':', '-', '–', '—']);
    format!("{kept}…")
}

fn ends_sentence(word: &str) -> bool {
    word.trim_end_matches(['"', '\'', ')', '”', '’'])
        .ends_with(['.', '!', '?', '…'])
}

fn strip_decoration(text: &str) -> String {
    fn layer(t: &str) -> &str {
        strip_wrapper(strip_label(t, LABELS))
    }
    strip_layers(text, layer)
}

fn strip_wrapper(text: &str) -> &str {
    for (open, close) in WRAPPERS {
        if let Some(inner) = text
            .strip_prefix(*open)
            .and_then(|rest| rest.strip_suffix(*close))
            // A quote inside means the marks are the answer's own quotations, not a wrapper.
            && !inner.contains(*close)
        {
            return inner;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigDir, Persona};
    use crate::domain::Speaker;

    fn persona(id: &str) -> Persona {
        ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
            .persona(id)
            .unwrap()
    }

    fn lines<'a>(texts: &'a [(Speaker, &'a str)]) -> Vec<Line<'a>> {
        texts
            .iter()
            .map(|(speaker, text)| Line {
                speaker: *speaker,
                text,
            })
            .collect()
    }

    #[test]
    fn prompt_carries_persona_length_and_conversation_only() {
        let p = persona("skeptical");
        let convo = [
            (Speaker::Interviewer, "What milk do you buy?"),
            (Speaker::Respondent, "Oat, mostly."),
            (Speaker::Interviewer, "Why oat?"),
        ];
        let conversation = lines(&convo);
        let prompt = respondent_prompt(&RespondentInput {
            persona: &p,
            topic: "oat milk",
            conversation: &conversation,
            length: AnswerLength::Medium,
            target_words: 30,
            deflection: None,
            fatigue: 0.0,
        });
        assert!(prompt.system.contains("Profile: Skeptical challenger"));
        assert!(prompt.system.contains("Traits: critical, well-informed"));
        assert!(
            prompt
                .system
                .contains("How you speak: Direct and sometimes blunt.")
        );
        assert!(prompt.system.contains("about oat milk"));
        assert!(
            !prompt.system.contains("Tests whether"),
            "the researcher-facing description stays out"
        );
        assert!(prompt.user.contains("Interviewer: Why oat?"));
        assert!(prompt.user.contains("Respondent: Oat, mostly."));
        assert!(prompt.user.contains("Length: medium, about 30 words"));
        assert!(prompt.user.contains("Answer the question in character."));
        assert!(!prompt.user.contains("Deflect"));
        assert!(!prompt.user.contains("tired"));
    }

    #[test]
    fn deflection_and_fatigue_are_stated() {
        let p = persona("fatiguing");
        let convo = [(Speaker::Interviewer, "And then?")];
        let conversation = lines(&convo);
        let prompt = respondent_prompt(&RespondentInput {
            persona: &p,
            topic: "oat milk",
            conversation: &conversation,
            length: AnswerLength::Acknowledgment,
            target_words: 3,
            deflection: Some(Some("Same as I said before, really.")),
            fatigue: 0.3,
        });
        assert!(prompt.user.contains("Deflect this question"));
        assert!(prompt.user.contains("\"Same as I said before, really.\""));
        assert!(prompt.user.contains("getting tired"));
        let bare = respondent_prompt(&RespondentInput {
            deflection: Some(None),
            ..RespondentInput {
                persona: &p,
                topic: "oat milk",
                conversation: &conversation,
                length: AnswerLength::Brief,
                target_words: 8,
                deflection: None,
                fatigue: 0.0,
            }
        });
        assert!(bare.user.contains("Deflect this question"));
        assert!(!bare.user.contains("For example"));
    }

    #[test]
    fn replies_are_cleaned() {
        assert_eq!(
            parse_respondent_reply("  Respondent: \"I buy oat milk.\"\n", 10).unwrap(),
            "I buy oat milk."
        );
        assert_eq!(
            parse_respondent_reply("He said \"no\" and \"yes\".", 10).unwrap(),
            "He said \"no\" and \"yes\".",
            "inner quotations are kept"
        );
        assert_eq!(
            parse_respondent_reply("Yeah.\n\n  Pretty much.", 10).unwrap(),
            "Yeah. Pretty much."
        );
    }

    #[test]
    fn empty_replies_are_errors() {
        for reply in ["", "   \n", "Respondent:", "\"\"", "…"] {
            let err = parse_respondent_reply(reply, 10).unwrap_err();
            assert!(
                matches!(err, ContractError::Empty | ContractError::Invalid { .. }),
                "{reply:?}: {err}"
            );
        }
    }

    #[test]
    fn long_replies_are_cut_at_a_sentence_end() {
        // Target 4 → limit 6 words: the first two sentences (5 words) fit, the third does not.
        let reply = "I like it. Very creamy. And it froths well in my latte every morning.";
        assert_eq!(
            parse_respondent_reply(reply, 4).unwrap(),
            "I like it. Very creamy."
        );
        // Within the limit nothing changes.
        assert_eq!(parse_respondent_reply(reply, 10).unwrap(), reply);
    }

    #[test]
    fn a_first_sentence_past_the_limit_is_cut_at_a_word() {
        let reply = "Well, honestly, the thing about oat milk is that it just works, you know";
        assert_eq!(
            parse_respondent_reply(reply, 2).unwrap(),
            "Well, honestly, the thing…"
        );
    }

    #[test]
    fn word_limits_follow_the_target() {
        assert_eq!(word_limit(1), MIN_WORD_LIMIT as usize);
        assert_eq!(word_limit(10), 15);
        assert_eq!(word_limit(11), 17);
    }

    #[test]
    fn answers_never_exceed_the_pipeline_limit() {
        let word = "x".repeat(MAX_RESPONDENT_CHARS * 2);
        let answer = parse_respondent_reply(&word, 100).unwrap();
        assert_eq!(answer.chars().count(), MAX_RESPONDENT_CHARS);
        assert!(answer.ends_with('…'));
    }
}
