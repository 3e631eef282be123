#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;

/// Names the pipeline passes: a few catalogue signals and the strategies of a methodology.
const TERMS: &[&str] = &[
    "graph.chain_completion",
    "llm.response_depth",
    "llm.engagement",
    "explore_attributes",
    "deepen",
    "clarify",
    "validate_outcome",
];

fn problem(text: &str) -> QuestionProblem {
    check_question(text, TERMS).expect_err(text)
}

#[test]
fn good_questions_pass() {
    for q in [
        "Why is that important to you?",
        "You mentioned \"creamy texture\". Why does that matter to you personally?",
        "Could you clarify what you mean by a proper latte?",
        "What does that reflect about how you like to start the day?",
        "Thanks, that helps. What happens for you when it froths well?",
        "Would you still buy it if it cost £1.50 more per carton?",
        "Does oat milk help you manage your weight, and how?",
        "Who did you go with?",
        "What were you thinking of?",
        "What was the score of the match you were watching on the train?",
        "e.g. at home or at work, where do you drink it most?",
    ] {
        assert_eq!(check_question(q, TERMS), Ok(()), "{q}");
    }
}

#[test]
fn leaked_prompt_headings_are_refused() {
    // Replies the local model gave in issue 13, as the reply parser flattens them.
    assert!(matches!(
        problem("## Strategy: - Ask your respondent to describe the taste?"),
        QuestionProblem::Markdown { .. }
    ));
    assert!(matches!(
        problem(
            "- Why This Strategy Was Selected: - graph.chain_completion.has_complete.true: \
             weight 0.6 …"
        ),
        QuestionProblem::Markdown { .. }
    ));
    // The same without the list markers is still the prompt.
    assert_eq!(
        problem("Why This Strategy Was Selected: weight 0.6 for the chain?"),
        QuestionProblem::PromptText {
            phrase: "why this strategy".to_owned()
        }
    );
    for (text, phrase) in [
        (
            "Research topic: oat milk. What do you like about it?",
            "research topic",
        ),
        (
            "What does the Knowledge graph so far say about you?",
            "knowledge graph",
        ),
        (
            "Ask your respondent to describe the taste of it?",
            "respondent",
        ),
        (
            "Write the next question about why creaminess matters?",
            "write the next question",
        ),
        (
            "A question in this spirit: why is creaminess important to you?",
            "a question in this spirit",
        ),
        (
            "Focus concept: creamy texture. Why does it matter?",
            "focus concept",
        ),
    ] {
        assert_eq!(
            problem(text),
            QuestionProblem::PromptText {
                phrase: phrase.to_owned()
            },
            "{text}"
        );
    }
}

#[test]
fn markdown_of_every_kind_is_refused() {
    for text in [
        "# Opening question What do you like about oat milk?",
        "1. What do you like about oat milk?",
        "* What do you like about oat milk?",
        "Question list: - what do you like about oat milk?",
        "What do you **really** like about oat milk?",
        "What do you like about `oat milk` in coffee?",
        "• What do you like about oat milk?",
    ] {
        assert!(
            matches!(problem(text), QuestionProblem::Markdown { .. }),
            "{text}: {}",
            problem(text)
        );
    }
    // A dash inside a sentence and a hashtag are not Markdown.
    assert_eq!(
        check_question(
            "And the price - does that come into it for you at all?",
            TERMS
        ),
        Ok(())
    );
    assert_eq!(
        check_question("Did you see the #oatmilk posts before you tried it?", TERMS),
        Ok(())
    );
}

#[test]
fn role_labels_are_refused() {
    for (text, label) in [
        (
            "Interviewer: What do you like about oat milk?",
            "interviewer:",
        ),
        (
            "What do you like? Respondent: I like the taste of it?",
            "respondent:",
        ),
        ("Assistant: Why is that important to you?", "assistant:"),
        ("User : why is that important to you?", "user:"),
    ] {
        assert_eq!(
            problem(text),
            QuestionProblem::RoleLabel {
                label: label.to_owned()
            },
            "{text}"
        );
    }
    // The words themselves are fine where they are not labels.
    assert_eq!(
        check_question(
            "As a regular user of oat milk, what do you notice first?",
            TERMS
        ),
        Ok(())
    );
}

#[test]
fn strategy_signal_names_and_identifiers_are_refused() {
    assert_eq!(
        problem("Which strategy would help you choose a milk?"),
        QuestionProblem::MentionsStrategy {
            word: "strategy".to_owned()
        }
    );
    assert_eq!(
        problem("How does LLM.Response_Depth feel to you today?"),
        QuestionProblem::ForbiddenTerm {
            term: "llm.response_depth".to_owned()
        }
    );
    assert_eq!(
        problem("Shall we explore_attributes of the carton you buy?"),
        QuestionProblem::ForbiddenTerm {
            term: "explore_attributes".to_owned()
        }
    );
    assert_eq!(
        problem("deepen: why is creaminess important to you?"),
        QuestionProblem::ForbiddenTerm {
            term: "deepen".to_owned()
        }
    );
    // A plain-word strategy name used as a word is ordinary English.
    assert_eq!(
        check_question("Could you clarify what you mean by creamy?", TERMS),
        Ok(())
    );
    for (text, token) in [
        (
            "What does has_complete mean for your coffee?",
            "has_complete",
        ),
        (
            "How is graph.max_depth related to your breakfast?",
            "graph.max_depth",
        ),
        ("Why is {focus} important to you?", "{focus}"),
    ] {
        assert_eq!(
            problem(text),
            QuestionProblem::Identifier {
                token: token.to_owned()
            },
            "{text}"
        );
    }
}

#[test]
fn weights_are_refused() {
    for (text, found) in [
        ("Is creaminess about 0.6 of why you buy it?", "0.6"),
        ("Would you rate it -0.5 or higher on taste?", "-0.5"),
        ("With weight 1.2 on taste, what else matters?", "weight 1.2"),
        (
            "Given a weight: 3 for price, what else matters?",
            "weight: 3",
        ),
        ("Score: base 1.1 × phase 1.2, what do you think?", "×"),
    ] {
        assert_eq!(
            problem(text),
            QuestionProblem::Weight {
                found: found.to_owned()
            },
            "{text}"
        );
    }
}

#[test]
fn cut_and_unfinished_replies_are_refused() {
    for text in [
        "What do you think about the way it",
        "What do you like about the taste,",
        "Why is creaminess important to you...",
        "Why is creaminess important to you…",
        "What do you like about the?",
        "What do you like about it (at home?",
        "What does \"creamy mean to you?",
        "What makes it different from the other options,especially,?",
        "What do you choose, and what makes it different from the alternatives, you have not \
         yet mentioned, so?",
    ] {
        assert!(
            matches!(problem(text), QuestionProblem::CutMidSentence { .. }),
            "{text}: {}",
            problem(text)
        );
    }
    assert_eq!(
        problem("Tell me about the last time you bought oat milk."),
        QuestionProblem::NotAQuestion {
            ending: "you bought oat milk.".to_owned()
        }
    );
}

#[test]
fn one_question_of_four_to_forty_five_words() {
    assert_eq!(
        problem("Why oat milk? And why not soy milk?"),
        QuestionProblem::MultipleQuestions { count: 2 }
    );
    assert_eq!(problem("Why that?"), QuestionProblem::TooShort { words: 2 });
    let long = format!("{} milk?", "oat ".repeat(MAX_QUESTION_WORDS));
    assert_eq!(
        problem(&long),
        QuestionProblem::TooLong {
            words: MAX_QUESTION_WORDS + 1
        }
    );
    let at_limit = format!("{} milk?", "oat ".repeat(MAX_QUESTION_WORDS - 1));
    assert_eq!(check_question(&at_limit, TERMS), Ok(()));
    assert_eq!(check_question("Why does that matter?", TERMS), Ok(()));
    assert_eq!(check_question("Why do you think so?", TERMS), Ok(()));
    assert_eq!(problem("  \n "), QuestionProblem::Empty);
}

#[test]
fn reasons_are_one_line_and_name_the_rule() {
    let p = problem("## Strategy: - Ask your respondent to …");
    let reason = p.to_string();
    assert!(!reason.contains('\n'), "{reason}");
    assert_eq!(p.rule(), "markdown");
    let long = problem(&format!("What about {}", "x".repeat(200)));
    assert!(long.to_string().chars().count() < 120, "{long}");
}

#[test]
fn odd_input_never_panics() {
    for text in [
        "?",
        "??",
        "İstanbul? İ",
        "_",
        "._.",
        "{",
        "}{?",
        "é\u{301}?",
        "weight",
        "weight:",
        "1.",
        "-",
        "—?",
        "\u{202e}abc?",
    ] {
        let _ = check_question(text, &["", " ", "İ", "."]);
    }
}
