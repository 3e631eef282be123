#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeSet;

use super::*;
use crate::config::{ConfigDir, FileKind, Methodology, NodeBinding};
use crate::prompts::check_question;
use crate::signals::catalog;

fn config() -> ConfigDir {
    ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
}

fn methodologies() -> Vec<Methodology> {
    let dir = config();
    dir.ids(FileKind::Methodology)
        .iter()
        .map(|id| dir.methodology(id, &crate::signals::Catalog).unwrap())
        .collect()
}

fn topics() -> Vec<String> {
    let dir = config();
    dir.ids(FileKind::Concept)
        .iter()
        .map(|id| dir.concept(id).unwrap().topic().to_owned())
        .collect()
}

/// What the pipeline passes as forbidden terms: every catalogue signal and every strategy.
fn forbidden(m: &Methodology) -> Vec<String> {
    catalog::SIGNALS
        .iter()
        .map(|s| s.name.to_owned())
        .chain(m.strategies.iter().map(|s| s.name.clone()))
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

const FOCUS_LABELS: &[&str] = &[
    "creamy texture",
    "x",
    "being careful with money",
    "inner harmony",
    "feel less guilty about my footprint when I buy coffee on the way to work every single day",
    "charger showed an error code after twenty minutes of waiting in the rain",
    "clarify",
    "the \"barista\" edition?",
    "## Strategy: - weird",
    "froths_well",
    "0.5% fat",
    "price (per carton",
    "`code` **bold** {focus}",
    "Respondent: creamy",
    "line one\nline two\ttabbed",
    "\u{202e}reversed\u{200b}",
    "   ",
    "???",
    "café crème — très bon",
    "家族の安心",
    "and the",
];

fn render(templates: &[String], focus: Option<&str>, topic: &str, turn: u32, seed: &str) -> String {
    render_template(&TemplateInput {
        templates,
        focus,
        topic,
        turn,
        session_seed: seed,
        asked: &[],
        echo: None,
    })
}

#[test]
fn every_shipped_strategy_and_opening_has_three_to_five_templates() {
    for m in methodologies() {
        let n = m.method.opening_templates.len();
        assert!(
            (3..=5).contains(&n),
            "{}: {n} opening templates",
            m.method.name
        );
        for s in &m.strategies {
            let n = s.question_templates.len();
            assert!((3..=5).contains(&n), "{}.{}: {n}", m.method.name, s.name);
            if s.node_binding == NodeBinding::None {
                assert!(
                    s.question_templates.iter().all(|t| !t.contains("{focus}")),
                    "{}.{}",
                    m.method.name,
                    s.name
                );
            }
        }
    }
}

#[test]
fn every_rendered_template_passes_the_question_check() {
    let topics = topics();
    for m in methodologies() {
        let terms = forbidden(&m);
        let terms: Vec<&str> = terms.iter().map(String::as_str).collect();
        let lists = m
            .strategies
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    &s.question_templates,
                    s.node_binding.clone(),
                )
            })
            .chain([("opening", &m.method.opening_templates, NodeBinding::None)]);
        for (name, templates, binding) in lists {
            let foci: Vec<Option<&str>> = match binding {
                NodeBinding::Required => FOCUS_LABELS.iter().copied().map(Some).collect(),
                _ => vec![None],
            };
            for focus in foci {
                for topic in topics.iter().map(String::as_str).chain(["", "x"]) {
                    for turn in 0..6 {
                        let q = render(templates, focus, topic, turn, "session-1");
                        assert_eq!(
                            check_question(&q, &terms),
                            Ok(()),
                            "{}.{name}, focus {focus:?}, topic {topic:?}: {q}",
                            m.method.name
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_longest_offline_label_is_quoted_whole() {
    // Seen in a headless run: 'Besides "being the kind of manager i wish i", …'.
    let label = "being the kind of manager i wish i had";
    let m = &methodologies()[0];
    for s in m
        .strategies
        .iter()
        .filter(|s| s.node_binding == NodeBinding::Required)
    {
        for turn in 0..6 {
            let q = render(&s.question_templates, Some(label), "oat milk", turn, "seed");
            assert!(
                !q.contains("wish i\"") && !q.contains("wish i'"),
                "{}: {q}",
                s.name
            );
        }
    }
}

#[test]
fn shipped_templates_are_used_as_written_for_ordinary_labels() {
    // With a plain label and a shipped topic no phrasing falls back: over enough turns every
    // template of the list is asked, and nothing else is.
    let topic = config().concept("oat_milk").unwrap().topic().to_owned();
    for m in methodologies() {
        for s in &m.strategies {
            let focus = (s.node_binding == NodeBinding::Required).then_some("creamy texture");
            let expected: BTreeSet<String> = s
                .question_templates
                .iter()
                .map(|t| {
                    t.replace("{topic}", &topic)
                        .replace("{focus}", "creamy texture")
                })
                .collect();
            let asked: BTreeSet<String> = (0..40)
                .map(|turn| render(&s.question_templates, focus, &topic, turn, "seed"))
                .collect();
            assert_eq!(asked, expected, "{}.{}", m.method.name, s.name);
        }
    }
}

#[test]
fn rendering_is_deterministic_and_seeded() {
    let templates = strings(&[
        "Why is \"{focus}\" important to you?",
        "What does \"{focus}\" give you?",
        "What would be different without \"{focus}\"?",
        "Why does \"{focus}\" matter to you?",
    ]);
    let run = |seed: &str| -> Vec<String> {
        (0..12)
            .map(|t| render(&templates, Some("creamy texture"), "oat milk", t, seed))
            .collect()
    };
    assert_eq!(run("a"), run("a"));
    let seeds = ["a", "b", "c", "d", "e"];
    let distinct: BTreeSet<Vec<String>> = seeds.iter().map(|s| run(s)).collect();
    assert!(distinct.len() > 1, "the seed changes the phrasings");
}

#[test]
fn consecutive_turns_never_get_the_same_position() {
    for n in 2..=6 {
        for seed in ["", "s", "sim-0123456789abcdef"] {
            for turn in 0..60u32 {
                for (a, b) in [("x", "y"), ("creamy", "creamy"), ("a", "")] {
                    let now = choose(n, seed, turn + 1, Some(a));
                    let before = choose(n, seed, turn, Some(b));
                    assert_ne!(now, before, "n {n}, seed {seed:?}, turn {turn}");
                    assert!(now < n);
                }
                assert_ne!(choose(n, seed, turn, None), choose(n, seed, turn + 1, None));
            }
        }
    }
    assert_eq!(choose(1, "s", 7, Some("x")), 0);
    assert_eq!(choose(0, "s", 7, None), 0);
}

#[test]
fn every_position_is_reachable() {
    for n in 2..=5 {
        let seen: BTreeSet<usize> = (0..200u32)
            .map(|turn| choose(n, "session", turn, Some(&format!("focus {turn}"))))
            .collect();
        assert_eq!(seen.len(), n, "n {n}");
    }
}

#[test]
fn generic_phrasings_stand_in() {
    // No templates at all, with and without a focus.
    let q = render(&[], Some("creamy texture"), "oat milk", 3, "s");
    assert!(q.contains("\"creamy texture\""), "{q}");
    let q = render(&[], None, "oat milk", 3, "s");
    assert!(q.contains("oat milk") && !q.contains('{'), "{q}");
    // Only focus templates and no focus: the topic phrasings.
    let focus_only = strings(&["Why is \"{focus}\" important to you?"]);
    let q = render(&focus_only, None, "oat milk", 1, "s");
    assert!(
        TOPIC_FALLBACK
            .iter()
            .any(|t| t.replace("{topic}", "oat milk") == q),
        "{q}"
    );
    // A blank focus is no focus.
    let q = render(&focus_only, Some("  ?? "), "oat milk", 1, "s");
    assert!(!q.contains('"'), "{q}");
}

#[test]
fn a_focus_that_cannot_be_asked_about_falls_back_to_the_topic() {
    let templates = strings(&["Why is \"{focus}\" important to you?"]);
    // "0.5" reads as a weight: the focus phrasings all fail the check.
    let q = render(&templates, Some("0.5 fat"), "oat milk", 2, "s");
    assert_eq!(check_question(&q, &[]), Ok(()));
    assert!(!q.contains("0.5"), "{q}");
    assert!(q.contains("oat milk"), "{q}");
    // A template too long for any focus, with a topic that is itself unusable.
    let long = strings(&[&format!("{} \"{{focus}}\"?", "very ".repeat(50))]);
    let q = render(&long, Some("graph.max_depth"), "graph.max_depth", 0, "s");
    assert_eq!(q, LAST_RESORT_QUESTION);
    assert_eq!(check_question(LAST_RESORT_QUESTION, &[]), Ok(()));
}

#[test]
fn labels_are_cleaned_for_a_question() {
    assert_eq!(clean_label("  creamy   texture ", 8), "creamy texture");
    assert_eq!(
        clean_label("the \"barista\" edition?", 8),
        "the barista edition"
    );
    assert_eq!(clean_label("froths_well", 8), "froths well");
    assert_eq!(clean_label("- **bold** #tag", 8), "bold tag");
    assert_eq!(
        clean_label("one two three four five six seven eight nine", 8)
            .split(' ')
            .count(),
        8
    );
    assert_eq!(clean_label("cheaper than the", 8), "cheaper");
    assert_eq!(clean_label("a\u{202e}b\u{200b}c", 8), "abc");
    assert_eq!(clean_label("???", 8), "");
    assert!(clean_label(&"longerword ".repeat(8), 8).chars().count() <= MAX_LABEL_CHARS);
    assert_eq!(clean_label("50% less sugar.", 8), "50% less sugar");
}

fn render_after(
    templates: &[String],
    focus: Option<&str>,
    turn: u32,
    asked: &[String],
    echo: Option<&str>,
) -> String {
    render_template(&TemplateInput {
        templates,
        focus,
        topic: "oat milk",
        turn,
        session_seed: "oat_milk",
        asked,
        echo,
    })
}

#[test]
fn no_question_is_asked_twice_in_a_session() {
    // Forty turns on one focus and on none: the shipped means-end chain's deepen phrasings,
    // then an opening's (no focus), each asked after everything before it.
    let m = crate::config::shipped_methodology("means_end_chain");
    for (strategy, focus) in [
        ("deepen", Some("creamy texture")),
        ("explore_attributes", None),
    ] {
        let templates = &m.strategy(strategy).unwrap().question_templates;
        let mut asked: Vec<String> = Vec::new();
        for turn in 1..=40 {
            let q = render_after(templates, focus, turn, &asked, None);
            assert!(check_question(&q, &[]).is_ok(), "{q}");
            if asked.len() < 12 {
                assert!(
                    !asked.contains(&q),
                    "turn {turn} repeats {q:?} after {asked:#?}"
                );
            }
            if let Some(last) = asked.last() {
                assert_ne!(&q, last, "turn {turn}");
            }
            asked.push(q);
        }
        let distinct: BTreeSet<&String> = asked.iter().collect();
        assert!(
            distinct.len() >= 12,
            "{strategy}: {} distinct",
            distinct.len()
        );
    }
}

#[test]
fn a_phrasing_is_not_used_twice_in_a_row_even_for_another_focus() {
    let templates = strings(&[
        "Why is \"{focus}\" important to you?",
        "What does \"{focus}\" give you?",
    ]);
    for turn in 1..20 {
        let last = render_after(&templates, Some("creamy texture"), turn, &[], None);
        let next = render_after(
            &templates,
            Some("a calmer mood"),
            turn + 1,
            std::slice::from_ref(&last),
            None,
        );
        let phrasing = |q: &str| templates.iter().position(|t| same_phrasing(t, q));
        assert_ne!(phrasing(&last), phrasing(&next), "{last} / {next}");
    }
}

#[test]
fn same_phrasing_reads_the_template_frame() {
    assert!(same_phrasing(
        "Why is \"{focus}\" important to you?",
        "Why is \"creamy texture\" important to you?"
    ));
    assert!(!same_phrasing(
        "Why is \"{focus}\" important to you?",
        "What does \"creamy texture\" give you?"
    ));
    assert!(!same_phrasing(
        "Why is \"{focus}\" important to you?",
        "You said creamy. Why is that important to you?"
    ));
    assert!(same_phrasing(
        "You said \"{echo}\". Why is that important to you?",
        "You said \"a calmer mood\". Why is that important to you?"
    ));
    assert!(same_phrasing("What else?", "what else"));
}

#[test]
fn a_focus_from_the_last_answer_is_said_back_in_the_respondents_words() {
    let m = crate::config::shipped_methodology("means_end_chain");
    let templates = &m.strategy("deepen").unwrap().question_templates;
    let mut asked: Vec<String> = Vec::new();
    for turn in 2..8 {
        let q = render_after(
            templates,
            Some("calmer mood before work"),
            turn,
            &asked,
            Some("a calmer mood before work"),
        );
        assert!(
            q.starts_with("You said \"a calmer mood before work\". ")
                || q.starts_with("You mentioned \"a calmer mood before work\". "),
            "{q}"
        );
        assert!(check_question(&q, &[]).is_ok(), "{q}");
        assert!(!asked.contains(&q));
        asked.push(q);
    }
    // A phrasing that reads "that {focus}" says "that" once.
    let q = render_after(
        &strings(&["How would you know that \"{focus}\" had been done well?"]),
        Some("meals sorted"),
        3,
        &[],
        Some("meals sorted"),
    );
    assert_eq!(
        q,
        "You mentioned \"meals sorted\". How would you know that had been done well?"
    );
}

#[test]
fn a_question_with_no_focus_says_back_what_the_last_answer_raised() {
    let m = crate::config::shipped_methodology("means_end_chain");
    let templates = &m.strategy("explore_attributes").unwrap().question_templates;
    let mut asked: Vec<String> = Vec::new();
    for turn in 2..2 + u32::try_from(templates.len()).unwrap() {
        let q = render_after(templates, None, turn, &asked, Some("froths well"));
        let (lead, rest) = q.split_once(". ").unwrap();
        assert!(
            lead == "You said \"froths well\"" || lead == "You mentioned \"froths well\"",
            "{q}"
        );
        // The rest is one of the strategy's phrasings, not a fallback.
        assert!(templates.iter().any(|t| same_phrasing(t, rest)), "{q}");
        assert!(check_question(&q, &[]).is_ok(), "{q}");
        assert!(!asked.contains(&q), "{q}");
        if let Some(last) = asked.last() {
            let phrasing = |q: &str| {
                let rest = q.split_once(". ").map_or(q, |(_, r)| r);
                templates.iter().position(|t| same_phrasing(t, rest))
            };
            assert_ne!(phrasing(last), phrasing(&q), "{last} / {q}");
        }
        asked.push(q);
    }
    // With nothing to say back, the phrasing is asked as it stands.
    let q = render_after(templates, None, 3, &[], None);
    assert!(templates.iter().any(|t| same_phrasing(t, &q)), "{q}");
}

#[test]
fn a_topic_phrasing_is_not_asked_again_after_other_words() {
    // A live interview asked "You said "speaker". Thinking about …, how does your choice
    // change …?" and, eight turns later, the same after "You mentioned "one less thing to
    // think about"".
    let m = crate::config::shipped_methodology("means_end_chain");
    let templates = &m.strategy("explore_attributes").unwrap().question_templates;
    let echoes = [
        "froths well",
        "cheaper",
        "the barista",
        "my kids",
        "the carton",
    ];
    let mut asked: Vec<String> = Vec::new();
    for (turn, echo) in (1..).zip(echoes.iter().chain(echoes.iter())) {
        let q = render_after(templates, None, turn, &asked, Some(echo));
        let rest = q.split_once(". ").map_or(q.as_str(), |(_, r)| r);
        let repeated = templates
            .iter()
            .find(|t| same_phrasing(t, rest) && asked.iter().any(|a| a.ends_with(rest)));
        assert!(
            repeated.is_none(),
            "turn {turn} asks again {q:?} after {asked:#?}"
        );
        asked.push(q);
    }
}

#[test]
fn a_feeling_is_not_asked_how_it_makes_the_respondent_feel() {
    // A jobs-to-be-done tmux run: 'You mentioned "feel awful about the waste". How does that
    // make you feel?'.
    let templates = strings(&[
        "How does \"{focus}\" make you feel?",
        "What would make \"{focus}\" go away?",
    ]);
    for turn in 0..8 {
        let input = TemplateInput {
            templates: &templates,
            focus: Some("feel awful about the waste"),
            topic: "meal kits",
            turn,
            session_seed: "s",
            asked: &[],
            echo: None,
        };
        let q = render_template(&input);
        assert!(!q.contains("make you feel"), "{q}");
    }
    // Any other focus may be asked so.
    let asked: BTreeSet<String> = (0..8)
        .map(|turn| {
            render_template(&TemplateInput {
                templates: &templates,
                focus: Some("portions too big"),
                topic: "meal kits",
                turn,
                session_seed: "s",
                asked: &[],
                echo: None,
            })
        })
        .collect();
    assert!(
        asked.iter().any(|q| q.contains("make you feel")),
        "{asked:?}"
    );
}

#[test]
fn a_denied_focus_is_not_asked_what_would_be_different_without_it() {
    // A headless ladder: 'What would be different for you without "not rushing everyone
    // out"?'.
    let templates = strings(&[
        "What would be different for you without \"{focus}\"?",
        "What does \"{focus}\" give you?",
    ]);
    for turn in 0..8 {
        let q = render_template(&TemplateInput {
            templates: &templates,
            focus: Some("not rushing everyone out"),
            topic: "oat milk",
            turn,
            session_seed: "s",
            asked: &[],
            echo: None,
        });
        assert!(!q.contains("without"), "{q}");
    }
    let asked: BTreeSet<String> = (0..8)
        .map(|turn| {
            render_template(&TemplateInput {
                templates: &templates,
                focus: Some("calm mum"),
                topic: "oat milk",
                turn,
                session_seed: "s",
                asked: &[],
                echo: None,
            })
        })
        .collect();
    assert!(asked.iter().any(|q| q.contains("without")), "{asked:?}");
}

#[test]
fn every_phrasing_of_a_strategy_is_used_before_one_comes_back() {
    // A live jobs interview asked "How would you tell a day with … from one without?" at
    // turns 2 and 6 while two of dig_motivation's phrasings were never used.
    let m = crate::config::shipped_methodology("jobs_to_be_done");
    let templates = &m.strategy("dig_motivation").unwrap().question_templates;
    let foci = [
        "tried for the first month",
        "looking after ourselves",
        "a proper meal together",
        "calm",
        "a team again",
    ];
    for echoed in [false, true] {
        let mut asked: Vec<String> = Vec::new();
        for (turn, focus) in (2..).zip(foci) {
            let q = render_after(
                templates,
                Some(focus),
                turn,
                &asked,
                echoed.then_some(focus),
            );
            asked.push(q);
        }
        for t in templates {
            let uses = asked.iter().filter(|q| asked_as(t, q)).count();
            assert_eq!(uses, 1, "{t}: {asked:#?}");
        }
    }
}
