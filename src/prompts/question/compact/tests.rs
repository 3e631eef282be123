#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;
use crate::config::{Concept, ConfigDir, FileKind, Methodology, Strategy};
use crate::domain::{GraphState, Signals};
use crate::llm::estimate_tokens;
use crate::prompts::check_question;
use crate::signals::catalog;

fn config() -> ConfigDir {
    ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
}

fn all<T>(kind: FileKind, load: impl Fn(&ConfigDir, &str) -> T) -> Vec<T> {
    let dir = config();
    dir.ids(kind).iter().map(|id| load(&dir, id)).collect()
}

fn tokens(p: &Prompt) -> u64 {
    estimate_tokens(&p.system) + estimate_tokens(&p.user)
}

fn prompt(
    m: &Methodology,
    c: &Concept,
    s: &Strategy,
    focus: Option<&str>,
    conversation: &str,
    closing: bool,
) -> Prompt {
    compact_follow_up_prompt(&FollowUpInput {
        methodology: m,
        concept: c,
        strategy: s,
        focus: focus.map_or(QuestionFocus::Topic, QuestionFocus::Node),
        focus_stance: 0,
        conversation,
        graph: &GraphState::default(),
        signals: &Signals::new(),
        winner: None,
        closing,
    })
}

const EXCHANGE: &str = "Interviewer: Which pair do you use most days?\nRespondent: The ones with \
                        noise cancelling, because I can finally concentrate on the train.";

#[test]
fn prompts_stay_under_the_token_bound_in_the_worst_case() {
    let methodologies = all(FileKind::Methodology, |d, id| {
        d.methodology(id, &crate::signals::Catalog).unwrap()
    });
    let concepts = all(FileKind::Concept, |d, id| d.concept(id).unwrap());
    let long_question = format!(
        "Interviewer: {}?",
        "why does that matter so much ".repeat(40)
    );
    let long_answer = format!(
        "Respondent: {}",
        "because it is creamy and I love it ".repeat(150)
    );
    let conversation = format!(
        "[12 earlier lines omitted]\nInterviewer: old\nRespondent: old\n{long_question}\n\
         {long_answer}\nRespondent: {}",
        "and another thing ".repeat(100)
    );
    let focus = "feel less guilty about my footprint when I buy coffee on the way to work \
                 every single day of the week";
    let mut worst = 0;
    for m in &methodologies {
        for c in &concepts {
            for s in &m.strategies {
                for closing in [false, true] {
                    let p = prompt(m, c, s, Some(focus), &conversation, closing);
                    worst = worst.max(tokens(&p));
                }
            }
        }
    }
    assert!(worst <= COMPACT_MAX_TOKENS, "{worst} tokens");
}

#[test]
fn follow_up_carries_topic_exchange_intent_focus_and_an_example() {
    let (m, c) = (
        config()
            .methodology("means_end_chain", &crate::signals::Catalog)
            .unwrap(),
        config().concept("headphones").unwrap(),
    );
    let deepen = m.strategy("deepen").unwrap();
    let p = prompt(&m, &c, deepen, Some("noise cancelling"), EXCHANGE, false);
    assert_eq!(p.temperature, COMPACT_TEMPERATURE);
    assert!(
        p.user
            .starts_with(&format!("We are interviewing someone about {}.", c.topic()))
    );
    assert!(p.user.contains(
        "The last question was \"Which pair do you use most days?\" and they answered \"The \
         ones with noise cancelling, because I can finally concentrate on the train.\" Ladder"
    ));
    assert!(
        p.user
            .contains("Ladder one rung up from \"noise cancelling\" by asking why it matters"),
        "{}",
        p.user
    );
    assert!(p.user.contains("Ask about \"noise cancelling\"."));
    let example = p
        .user
        .split("A question in this spirit: \"")
        .nth(1)
        .unwrap()
        .split("\" Write one new question")
        .next()
        .unwrap();
    assert_eq!(check_question(example, &[]), Ok(()), "{example}");
    assert!(example.contains("'noise cancelling'"), "{example}");
    assert!(p.user.ends_with("ending with a question mark."));
    assert!(!p.user.contains("last question: thank them"));

    let closing = prompt(
        &m,
        &c,
        m.strategy("validate_outcome").unwrap(),
        None,
        "",
        true,
    );
    assert!(
        closing
            .user
            .contains("This is the last question: thank them")
    );
    assert!(
        closing
            .user
            .contains(&format!("Ask about {} in general.", c.topic()))
    );
    assert!(!closing.user.contains("The last question was"));
}

#[test]
fn nothing_a_small_model_could_copy_into_its_question() {
    let methodologies = all(FileKind::Methodology, |d, id| {
        d.methodology(id, &crate::signals::Catalog).unwrap()
    });
    let c = config().concept("oat_milk").unwrap();
    for m in &methodologies {
        let mut prompts = Vec::new();
        for s in &m.strategies {
            prompts.push(prompt(m, &c, s, Some("creamy texture"), EXCHANGE, false));
            prompts.push(prompt(m, &c, s, None, EXCHANGE, true));
        }
        for p in prompts {
            let text = format!("{}\n{}", p.system, p.user);
            let lower = text.to_lowercase();
            for leak in [
                "#",
                "strateg",
                "respondent",
                "interviewer:",
                "weight",
                "focus element",
                "focus job",
                "focus moment",
                "focus point",
                "focus concept",
            ] {
                assert!(!lower.contains(leak), "{leak} in {text}");
            }
            for signal in catalog::SIGNALS {
                assert!(!lower.contains(signal.name), "{} in {text}", signal.name);
            }
            for s in m.strategies.iter().filter(|s| s.name.contains('_')) {
                assert!(!lower.contains(&s.name), "{} in {text}", s.name);
            }
            assert!(!text.chars().any(|c| c.is_ascii_digit()), "numbers: {text}");
            assert!(
                !p.system.contains('\n') && !p.user.contains('\n'),
                "one paragraph each: {text}"
            );
        }
    }
}

#[test]
fn intent_is_one_plain_sentence() {
    let m = config()
        .methodology("means_end_chain", &crate::signals::Catalog)
        .unwrap();
    // A situation sentence is skipped for the one that says what to do.
    let clarify = intent(&m.strategy("clarify").unwrap().description, Some("creamy"));
    assert!(
        clarify.starts_with("Ask the person to make it concrete"),
        "{clarify}"
    );
    // A very short first sentence takes the next along.
    let close = intent(&m.strategy("validate_outcome").unwrap().description, None);
    assert!(
        close.starts_with("Close the interview. Briefly play back"),
        "{close}"
    );
    // Asides in parentheses go; the cut falls at a clause boundary.
    let revitalize = intent(&m.strategy("revitalize").unwrap().description, None);
    assert!(!revitalize.contains('('), "{revitalize}");
    for text in [&clarify, &close, &revitalize] {
        assert!(
            text.split_whitespace().count() <= MAX_INTENT_WORDS,
            "{text}"
        );
        assert!(text.ends_with(['.', '"', '?']), "{text}");
    }
    assert_eq!(intent("", None), ".");
    assert_eq!(
        intent(
            "Find out what the focus job is really in service of.",
            Some("commute")
        ),
        "Find out what \"commute\" is really in service of."
    );
    assert_eq!(
        intent(
            "Focus on what people did at the focus moment.",
            Some("the call")
        ),
        "Focus on what people did at \"the call\"."
    );
    let long = format!("Ask {}and more words here.", "one two three, ".repeat(20));
    let clipped = intent(&long, None);
    assert!(clipped.ends_with("three."), "{clipped}");
}

#[test]
fn the_last_exchange_is_read_from_the_window() {
    assert_eq!(last_exchange(""), None);
    assert_eq!(
        last_exchange("Respondent: hello \"there\""),
        Some("They have just said \"hello 'there'\".".to_owned())
    );
    assert_eq!(
        last_exchange("Interviewer: a?\nRespondent: b\nInterviewer: c?"),
        Some("The last question was \"c?\"".to_owned())
    );
    let long = format!("Interviewer: q?\nRespondent: {}", "word ".repeat(500));
    let shown = last_exchange(&long).unwrap();
    assert!(shown.ends_with("word…\""), "{shown}");
    assert!(shown.chars().count() < MAX_SHOWN_ANSWER_CHARS + 60);
}
