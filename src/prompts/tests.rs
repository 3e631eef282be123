#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;
use crate::config::{Concept, ConfigDir, Methodology};
use crate::domain::{GraphState, SignalValue, Signals, Speaker};
use crate::reply_json::ContractError;
use crate::scoring::{ScoredCandidate, SignalContribution};
use crate::signals::catalog;

fn config() -> ConfigDir {
    ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
}

fn mec() -> Methodology {
    config()
        .methodology("means_end_chain", &catalog::Catalog)
        .unwrap()
}

fn headphones() -> Concept {
    config().concept("headphones").unwrap()
}

fn extraction_input<'a>(
    methodology: &'a Methodology,
    concept: &'a Concept,
    labels: &'a [&'a str],
    srl_hints: &'a str,
) -> ExtractionInput<'a> {
    ExtractionInput {
        methodology,
        concept,
        answer: "I like the noise cancelling because I can focus on the train.",
        question: "What do you notice when you use them?",
        existing_labels: labels,
        srl_hints,
    }
}

// ---- extraction prompt ----

#[test]
fn extraction_prompt_carries_the_whole_ontology() {
    let (m, c) = (mec(), headphones());
    let p = extraction_prompt(&extraction_input(&m, &c, &[], ""));
    assert_eq!(p.temperature, EXTRACTION_TEMPERATURE);
    for node in &m.ontology.nodes {
        let head = format!("- {} (level {}", node.name, node.level);
        assert!(p.system.contains(&head), "missing {head}");
        assert!(p.system.contains(node.description.trim()));
        for example in &node.examples {
            assert!(p.system.contains(&format!("\"{example}\"")), "{example}");
        }
    }
    assert!(p.system.contains("- terminal_value (level 5, terminal)"));
    for edge in &m.ontology.edges {
        assert!(p.system.contains(&format!("- {}: ", edge.name)));
        for (s, t) in &edge.permitted_connections {
            let side = |x: &str| {
                if x == "*" {
                    "any type".to_owned()
                } else {
                    x.to_owned()
                }
            };
            let pair = format!("{} → {}", side(s), side(t));
            assert!(p.system.contains(&pair), "missing connection {pair}");
        }
    }
    assert!(p.system.contains("any type → any type"));
}

#[test]
fn extraction_prompt_carries_guidance_topic_and_contract() {
    let (m, c) = (mec(), headphones());
    let p = extraction_prompt(&extraction_input(&m, &c, &[], ""));
    for guidance in [
        &m.ontology.concept_naming_convention,
        &m.ontology.extraction_guidelines,
        &m.ontology.extractability_criteria,
        &m.ontology.relationship_examples,
    ] {
        assert!(!guidance.is_empty());
    }
    assert!(
        p.system
            .contains("## Naming concepts\nWrite labels as short lowercase phrases")
    );
    let naming = m.ontology.concept_naming_convention.render();
    assert!(
        p.system
            .contains(&format!("## Naming concepts\n{naming}\n"))
    );
    for guidance in [
        &m.ontology.extraction_guidelines,
        &m.ontology.extractability_criteria,
    ] {
        assert!(p.system.contains(&guidance.render()));
    }
    assert!(p.system.contains(
        "## Relationship examples\n- text: I buy it because it's creamy, which makes my morning \
         coffee feel like a proper treat.\n  source: creamy texture\n  target: coffee feels like \
         a treat\n  edge_type: leads_to\n- text: It froths"
    ));
    assert!(p.system.contains(c.topic()));
    assert!(p.system.contains(c.objective().trim()));
    assert!(p.system.contains("\"relationships\": [{\"source\""));
    assert!(p.system.contains(
        "node_type: one of attribute, functional_consequence, psychosocial_consequence, \
         instrumental_value, terminal_value."
    ));
    assert!(p.system.contains("edge_type: one of leads_to, revises"));
    assert!(
        p.user
            .contains("## Interviewer's question\nWhat do you notice")
    );
    assert!(
        p.user
            .contains("## Respondent's answer\nI like the noise cancelling")
    );
}

#[test]
fn extraction_prompt_keeps_the_newest_thirty_labels() {
    let (m, c) = (mec(), headphones());
    let owned: Vec<String> = (0..40).map(|i| format!("label {i}")).collect();
    let labels: Vec<&str> = owned.iter().map(String::as_str).collect();
    let p = extraction_prompt(&extraction_input(&m, &c, &labels, ""));
    let shown: Vec<&str> = p
        .user
        .lines()
        .filter(|l| l.starts_with("- label "))
        .collect();
    assert_eq!(shown.len(), MAX_EXISTING_LABELS);
    assert_eq!(shown.first(), Some(&"- label 10"));
    assert_eq!(shown.last(), Some(&"- label 39"));
    assert!(!p.user.contains("- label 9\n"));
}

#[test]
fn extraction_prompt_sections_are_optional() {
    let (m, c) = (mec(), headphones());
    let mut input = extraction_input(&m, &c, &[], "  ");
    input.question = "";
    let p = extraction_prompt(&input);
    assert!(!p.user.contains("Interviewer's question"));
    assert!(!p.user.contains("Concepts already in the graph"));
    assert!(!p.user.contains("Linguistic hints"));
    let hinted = extraction_prompt(&extraction_input(&m, &c, &["focus"], "because: A → B"));
    assert!(hinted.user.contains("## Linguistic hints\n"));
    assert!(hinted.user.contains("because: A → B"));
    assert!(hinted.user.contains("- focus\n"));
}

// ---- extraction reply ----

const VALID: &str = r#"{"concepts": [
  {"label": "noise cancelling", "node_type": "attribute", "confidence": 0.9, "stance": 1,
   "source_quote": "I like the noise cancelling"},
  {"label": "focus on the train", "node_type": "functional_consequence", "confidence": 1,
   "stance": 0, "source_quote": "I can focus on the train"}],
 "relationships": [{"source": "noise cancelling", "target": "focus on the train",
   "edge_type": "leads_to", "confidence": 0.8}]}"#;

fn parse(reply: &str) -> Result<Extraction, ContractError> {
    parse_extraction_reply(reply, &mec())
}

fn error_text(reply: &str) -> String {
    parse(reply).unwrap_err().to_string()
}

#[test]
fn accepts_fenced_json_with_prose() {
    let reply = format!("Here is the extraction:\n```json\n{VALID}\n```\nLet me know!");
    let e = parse(&reply).unwrap();
    assert_eq!(e.concepts.len(), 2);
    assert_eq!(e.concepts[0].label, "noise cancelling");
    assert_eq!(e.concepts[0].stance, 1);
    assert_eq!(e.concepts[1].confidence, 1.0);
    assert_eq!(e.relationships[0].edge_type, "leads_to");
    assert_eq!(e.relationships[0].target, "focus on the train");
}

#[test]
fn lenient_spellings_are_normalised() {
    let reply = r#"{"concepts": [{"label": "  creamy\n texture ", "node_type": "Attribute",
        "confidence": 0, "stance": "Negative", "extra": true},
        {"label": "x", "node_type": "attribute", "confidence": 0.5, "stance": null,
         "source_quote": null}],
        "relationships": [], "notes": "ignored"}"#;
    let e = parse(reply).unwrap();
    assert_eq!(e.concepts[0].label, "creamy texture");
    assert_eq!(e.concepts[0].node_type, "attribute");
    assert_eq!(e.concepts[0].stance, -1);
    assert_eq!(e.concepts[0].source_quote, "");
    assert_eq!(e.concepts[1].stance, 0);
    assert!(e.relationships.is_empty());
}

#[test]
fn unknown_node_type_names_the_field_and_the_allowed_types() {
    let err = error_text(
        r#"{"concepts": [{"label": "a", "node_type": "feature", "confidence": 0.5}],
            "relationships": []}"#,
    );
    let want = "concepts[0].node_type: must be one of the node types: attribute, \
                functional_consequence, psychosocial_consequence, instrumental_value, \
                terminal_value (got '\"feature\"')";
    assert_eq!(err, want);
    let err = error_text(
        r#"{"concepts": [], "relationships": [
            {"source": "a", "target": "b", "edge_type": "leads_to", "confidence": 1},
            {"source": "a", "target": "b", "edge_type": "causes", "confidence": 1}]}"#,
    );
    assert!(
        err.starts_with(
            "relationships[1].edge_type: must be one of the edge types: leads_to, revises"
        ),
        "{err}"
    );
}

#[test]
fn confidence_must_be_a_number_in_the_unit_interval() {
    for bad in ["1.5", "-0.1", "\"0.8\"", "null", "[0.5]"] {
        let reply = format!(
            r#"{{"concepts": [{{"label": "a", "node_type": "attribute", "confidence": {bad}}}],
                "relationships": []}}"#
        );
        let err = error_text(&reply);
        assert!(
            err.starts_with("concepts[0].confidence: must be a number from 0 to 1"),
            "{bad}: {err}"
        );
    }
    let missing = error_text(
        r#"{"concepts": [{"label": "a", "node_type": "attribute"}], "relationships": []}"#,
    );
    assert!(
        missing.starts_with("concepts[0].confidence: missing"),
        "{missing}"
    );
}

#[test]
fn stance_labels_and_sizes_are_checked() {
    let concept = |fields: &str| {
        format!(
            r#"{{"concepts": [{{"node_type": "attribute", "confidence": 0.5, {fields}}}],
                "relationships": []}}"#
        )
    };
    let err = error_text(&concept(r#""label": "a", "stance": 2"#));
    assert!(
        err.starts_with("concepts[0].stance: must be -1, 0 or 1"),
        "{err}"
    );
    let err = error_text(&concept(r#""label": "a", "stance": "very positive""#));
    assert!(err.starts_with("concepts[0].stance"), "{err}");
    assert_eq!(
        parse(&concept(r#""label": "a", "stance": -1.0"#))
            .unwrap()
            .concepts[0]
            .stance,
        -1
    );
    let err = error_text(&concept(r#""label": " \n ""#));
    assert!(
        err.starts_with("concepts[0].label: must not be empty"),
        "{err}"
    );
    let long = "x".repeat(MAX_LABEL_CHARS + 1);
    let err = error_text(&concept(&format!(r#""label": "{long}""#)));
    assert!(
        err.starts_with("concepts[0].label: longer than 200 characters"),
        "{err}"
    );
    let ok = "x".repeat(MAX_LABEL_CHARS);
    assert!(parse(&concept(&format!(r#""label": "{ok}""#))).is_ok());
    let err = error_text(&concept(r#""label": 7"#));
    assert!(
        err.starts_with("concepts[0].label: must be a string"),
        "{err}"
    );
    let err = error_text(&concept(r#""label": "a", "source_quote": 3"#));
    assert!(
        err.starts_with("concepts[0].source_quote: must be a string"),
        "{err}"
    );
}

#[test]
fn arrays_are_required_and_bounded() {
    let err = error_text(r#"{"concepts": []}"#);
    assert!(err.starts_with("relationships: missing"), "{err}");
    let err = error_text(r#"{"concepts": {}, "relationships": []}"#);
    assert!(err.starts_with("concepts: must be an array"), "{err}");
    let err = error_text(r#"{"concepts": ["a"], "relationships": []}"#);
    assert!(err.starts_with("concepts[0]: must be an object"), "{err}");
    let one = r#"{"label": "a", "node_type": "attribute", "confidence": 0.5}"#;
    let at_limit = vec![one; MAX_CONCEPTS].join(",");
    assert!(
        parse(&format!(
            r#"{{"concepts": [{at_limit}], "relationships": []}}"#
        ))
        .is_ok()
    );
    let over = vec![one; MAX_CONCEPTS + 1].join(",");
    let err = error_text(&format!(r#"{{"concepts": [{over}], "relationships": []}}"#));
    assert_eq!(err, "concepts: more than 64 entries (got 65 entries)");
    let edge = r#"{"source": "a", "target": "b", "edge_type": "leads_to", "confidence": 0.5}"#;
    let over = vec![edge; MAX_RELATIONSHIPS + 1].join(",");
    let err = error_text(&format!(r#"{{"concepts": [], "relationships": [{over}]}}"#));
    assert!(
        err.starts_with("relationships: more than 128 entries"),
        "{err}"
    );
    let err = error_text(
        r#"{"concepts": [], "relationships": [
            {"source": "", "target": "b", "edge_type": "leads_to", "confidence": 0.5}]}"#,
    );
    assert!(
        err.starts_with("relationships[0].source: must not be empty"),
        "{err}"
    );
}

#[test]
fn no_json_is_a_typed_error() {
    assert_eq!(parse("   "), Err(ContractError::Empty));
    assert!(matches!(
        parse("I could not find anything."),
        Err(ContractError::NoJson(_))
    ));
}

// ---- question prompts ----

#[test]
fn opening_prompt_uses_method_and_objective() {
    let (m, c) = (mec(), headphones());
    let p = opening_prompt(&m, &c);
    assert_eq!(p.temperature, OPENING_TEMPERATURE);
    assert!(p.user.contains(c.objective().trim()));
    assert!(
        p.user
            .contains(&format!("means_end_chain: {}", m.method.goal.trim()))
    );
    assert!(p.user.contains(m.method.opening_bias.trim()));
    assert!(p.user.contains(c.context.insight.trim()));
    assert!(p.system.contains("exactly one open-ended question"));
}

fn contribution(
    name: &str,
    value: SignalValue,
    weight: f64,
    contribution: f64,
) -> SignalContribution {
    SignalContribution {
        name: name.to_owned(),
        value,
        weight,
        contribution,
    }
}

fn deepen_winner() -> ScoredCandidate {
    ScoredCandidate {
        strategy: "deepen".to_owned(),
        node_id: String::new(),
        signal_contributions: vec![
            contribution(
                "graph.chain_completion.has_complete.false",
                SignalValue::Bool(true),
                0.4,
                0.4,
            ),
            contribution(
                "llm.response_depth.moderate",
                SignalValue::Bool(true),
                0.4,
                0.4,
            ),
            contribution("llm.certainty.low", SignalValue::Bool(false), -0.5, 0.0),
            contribution("llm.engagement.high", SignalValue::Bool(true), 0.3, 0.3),
        ],
        base_score: 1.1,
        phase_multiplier: 1.2,
        phase_bonus: 0.2,
        final_score: 1.52,
        rank: 1,
        selected: true,
    }
}

fn signals() -> Signals {
    let mut s = Signals::new();
    s.insert(
        "llm.response_depth".into(),
        SignalValue::category("moderate"),
    );
    s.insert(
        "graph.chain_completion.has_complete".into(),
        SignalValue::Bool(false),
    );
    s.insert("llm.certainty".into(), SignalValue::Number(0.9));
    s.insert("llm.engagement".into(), SignalValue::Number(0.8));
    s
}

fn follow_up(graph: &GraphState, closing: bool) -> Prompt {
    let (m, c) = (mec(), headphones());
    let strategy = m.strategy("deepen").unwrap().clone();
    let winner = deepen_winner();
    let signals = signals();
    follow_up_prompt(&FollowUpInput {
        methodology: &m,
        concept: &c,
        strategy: &strategy,
        focus: QuestionFocus::Node("active noise cancelling"),
        focus_stance: 0,
        conversation: "Interviewer: Which pair do you use?\nRespondent: The ones with ANC.",
        graph,
        signals: &signals,
        winner: Some(&winner),
        closing,
    })
}

#[test]
fn follow_up_prompt_carries_strategy_focus_and_anchoring() {
    let (m, c) = (mec(), headphones());
    let graph = GraphState {
        node_count: 3,
        edge_count: 1,
        max_depth: 1,
        orphan_count: 1,
        ..GraphState::default()
    };
    let p = follow_up(&graph, false);
    assert_eq!(p.temperature, FOLLOW_UP_TEMPERATURE);
    let topic = c.topic();
    assert!(p.system.contains(&format!(
        "## Topic Anchoring:\nThis interview is about **{topic}**"
    )));
    assert!(p.system.contains("Method: means_end_chain\nGoal: "));
    assert!(p.system.contains(m.method.goal.trim()));
    let deepen = m.strategy("deepen").unwrap();
    assert!(p.user.contains(&format!(
        "## Strategy: deepen\n{}",
        deepen.description.trim()
    )));
    assert!(p.user.contains("Focus concept: active noise cancelling"));
    assert!(
        p.user
            .contains("- Concepts: 3\n- Relationships: 1\n- Longest chain: 1 links")
    );
    assert!(
        p.user
            .contains("Complete chain from a concrete to a terminal concept: no")
    );
    assert!(p.user.contains("Respondent: The ones with ANC."));
    assert!(
        !p.user.contains("Note: the conversation has reached"),
        "no reminder below depth 2"
    );
    assert!(!p.user.contains("## Closing"));
}

#[test]
fn follow_up_prompt_explains_the_selection() {
    let p = follow_up(&GraphState::default(), false);
    let active = p.user.split("## Active Signals:\n").nth(1).unwrap();
    let active = active.split("\n## ").next().unwrap();
    for base in [
        "graph.chain_completion.has_complete",
        "llm.response_depth",
        "llm.engagement",
    ] {
        let description = catalog::spec(base).unwrap().description;
        assert!(active.contains(&format!("  -> {description}")), "{base}");
    }
    assert!(active.contains("- llm.response_depth: moderate\n"));
    assert!(active.contains("- graph.chain_completion.has_complete: false\n"));
    assert!(
        !active.contains("llm.certainty"),
        "zero contributions are not active"
    );
    let why = p
        .user
        .split("## Why This Strategy Was Selected:\n")
        .nth(1)
        .unwrap();
    assert!(why.starts_with(
        "- graph.chain_completion.has_complete.false: weight 0.4, contribution 0.4\n"
    ));
    assert!(why.contains("- llm.engagement.high: weight 0.3, contribution 0.3\n"));
    assert!(why.contains("- Score: base 1.1 × phase multiplier 1.2 + phase bonus 0.2 = 1.52"));
    assert!(!why.contains("llm.certainty.low"));
}

#[test]
fn depth_reminder_and_closing_are_conditional() {
    let deep = GraphState {
        max_depth: 2,
        ..GraphState::default()
    };
    let p = follow_up(&deep, true);
    assert!(
        p.user
            .contains("Note: the conversation has reached a chain of 2 links")
    );
    assert!(p.user.contains(&headphones().context.topic));
    assert!(p.user.contains("## Closing:\nThis is the last question"));
    let (m, c) = (mec(), headphones());
    let strategy = m.strategy("explore_attributes").unwrap();
    let p = follow_up_prompt(&FollowUpInput {
        methodology: &m,
        concept: &c,
        strategy,
        focus: QuestionFocus::Topic,
        focus_stance: 0,
        conversation: "",
        graph: &GraphState::default(),
        signals: &Signals::new(),
        winner: None,
        closing: false,
    });
    assert!(p.user.contains("Focus concept: none"));
    assert!(p.user.contains("(nothing yet)"));
    assert!(!p.user.contains("## Active Signals"));
    assert!(!p.user.contains("## Why This Strategy"));
}

#[test]
fn a_negative_focus_is_not_asked_about_as_if_valued_in_either_style() {
    let (m, c) = (mec(), headphones());
    let deepen = m.strategy("deepen").unwrap();
    let (graph, signals) = (GraphState::default(), Signals::new());
    let input = |focus_stance| FollowUpInput {
        methodology: &m,
        concept: &c,
        strategy: deepen,
        focus: QuestionFocus::Node("battery dies"),
        focus_stance,
        conversation: "",
        graph: &graph,
        signals: &signals,
        winner: None,
        closing: false,
    };
    let note = "spoke of it as something negative";
    assert!(follow_up_prompt(&input(-1)).user.contains(note));
    assert!(!follow_up_prompt(&input(0)).user.contains(note));
    // The compact prompt's example question comes from the negative phrasings.
    let example = |stance| {
        let user = compact_follow_up_prompt(&input(stance)).user;
        let (_, after) = user.split_once("A question in this spirit: \"").unwrap();
        after.split_once('"').map(|(q, _)| q.to_owned()).unwrap()
    };
    let rendered = |templates: &[String], question: &str| {
        templates
            .iter()
            .any(|t| t.replace("{focus}", "battery dies").replace('"', "'") == question)
    };
    let (negative, neutral) = (example(-1), example(0));
    assert!(
        rendered(&deepen.negative_focus_templates, &negative),
        "{negative}"
    );
    assert!(rendered(&deepen.question_templates, &neutral), "{neutral}");
}

#[test]
fn the_three_focus_modes_give_three_different_prompts_in_both_styles() {
    let (m, c) = (mec(), headphones());
    let strategy = m.strategy("reflect").unwrap();
    let raised = vec![
        "active noise cancelling".to_owned(),
        "concentrate on the train".to_owned(),
        "feeling in control".to_owned(),
    ];
    let (graph, signals) = (GraphState::default(), Signals::new());
    let input = |focus| FollowUpInput {
        methodology: &m,
        concept: &c,
        strategy,
        focus,
        focus_stance: 0,
        conversation: "",
        graph: &graph,
        signals: &signals,
        winner: None,
        closing: false,
    };
    let foci = [
        QuestionFocus::Node("feeling in control"),
        QuestionFocus::Summary(&raised),
        QuestionFocus::Topic,
    ];
    let full: Vec<String> = foci
        .iter()
        .map(|f| follow_up_prompt(&input(*f)).user)
        .collect();
    assert!(full[0].contains("Focus concept: feeling in control"));
    assert!(full[1].contains(
        "The concepts they raised, most recent last: active noise cancelling; concentrate on \
         the train; feeling in control."
    ));
    assert!(full[2].contains("Focus concept: none; address the topic as a whole."));
    let compact: Vec<String> = foci
        .iter()
        .map(|f| compact_follow_up_prompt(&input(*f)).user)
        .collect();
    assert!(compact[0].contains("Ask about \"feeling in control\"."));
    assert!(compact[1].contains(
        "Ask about what they have said so far as a whole: \"active noise cancelling\", \
         \"concentrate on the train\" and \"feeling in control\"."
    ));
    assert!(compact[2].contains("in general."));
    for prompts in [&full, &compact] {
        assert_ne!(prompts[0], prompts[1]);
        assert_ne!(prompts[1], prompts[2]);
        assert_ne!(prompts[0], prompts[2]);
    }
}

// ---- conversation window ----

fn line(speaker: Speaker, text: &str) -> Line<'_> {
    Line { speaker, text }
}

fn transcript(texts: &[String]) -> Vec<Line<'_>> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let speaker = if i % 2 == 0 {
                Speaker::Interviewer
            } else {
                Speaker::Respondent
            };
            line(speaker, t)
        })
        .collect()
}

#[test]
fn window_renders_everything_that_fits() {
    assert_eq!(conversation_window(&[], 100), "");
    let lines = [
        line(Speaker::Interviewer, "Hi?"),
        line(Speaker::Respondent, "Hello\n  there"),
    ];
    assert_eq!(
        conversation_window(&lines, 1_000),
        "Interviewer: Hi?\nRespondent: Hello there"
    );
}

#[test]
fn window_drops_the_oldest_lines_first() {
    let texts: Vec<String> = (0..8).map(|i| format!("{i}{}", "x".repeat(49))).collect();
    let lines = transcript(&texts);
    // Each line is 62-63 characters; 300 leaves room for the notice and four lines.
    let w = conversation_window(&lines, 300);
    assert!(w.chars().count() <= 300, "{}", w.chars().count());
    assert!(
        w.starts_with("[4 earlier lines omitted]\nInterviewer: 4x"),
        "{w}"
    );
    assert!(w.ends_with(&format!("Respondent: {}", texts[7])));
    assert_eq!(w.lines().count(), 5);
    let one_dropped = conversation_window(&lines, w.chars().count() + 200);
    assert!(
        one_dropped.starts_with("[1 earlier line omitted]\nRespondent: 1x"),
        "{one_dropped}"
    );
}

#[test]
fn window_always_keeps_the_latest_exchange() {
    let question = format!("Q-start {} Q-end?", "q".repeat(300));
    let answer = format!("A-start {} A-end.", "a".repeat(2_000));
    let texts = vec![
        "old question".to_owned(),
        "old answer".to_owned(),
        question,
        answer,
    ];
    let lines = transcript(&texts);
    let w = conversation_window(&lines, 200);
    assert!(w.chars().count() <= 200, "{}", w.chars().count());
    let rows: Vec<&str> = w.lines().collect();
    assert_eq!(rows[0], "[2 earlier lines omitted]");
    assert!(
        rows[1].starts_with("Interviewer: Q-start") && rows[1].ends_with("Q-end?"),
        "{w}"
    );
    assert!(
        rows[2].starts_with("Respondent: A-start") && rows[2].ends_with("A-end."),
        "{w}"
    );
    assert!(rows[1].contains('…') && rows[2].contains('…'));
    // A short question keeps all of its text; the answer takes the rest of the budget.
    let texts = vec!["Why?".to_owned(), "b".repeat(1_000)];
    let w = conversation_window(&transcript(&texts), 100);
    assert_eq!(w.chars().count(), 100);
    assert!(w.starts_with("Interviewer: Why?\nRespondent: bbb"), "{w}");
}

#[test]
fn window_bound_holds_for_every_budget() {
    let texts = vec![
        "a question".repeat(30),
        "an answer".repeat(80),
        "q2".repeat(99),
        "ä".repeat(700),
    ];
    let lines = transcript(&texts);
    // Fixed part of the last exchange: labels, one newline, the notice, one "…" per text.
    let fixed =
        "Interviewer: ".len() + "Respondent: ".len() + 1 + "[2 earlier lines omitted]\n".len() + 2;
    for max in 0..2_500 {
        let w = conversation_window(&lines, max);
        assert!(
            w.chars().count() <= max.max(fixed),
            "max {max}: {}",
            w.chars().count()
        );
        assert!(w.contains("Interviewer: ") && w.contains("Respondent: "));
    }
    assert_eq!(conversation_window(&lines, 0).chars().count(), fixed);
}

#[test]
fn window_without_an_interviewer_keeps_the_last_line() {
    let long = "first ".repeat(10);
    let lines = [
        line(Speaker::Respondent, &long),
        line(Speaker::Respondent, "second"),
    ];
    assert_eq!(
        conversation_window(&lines, 45),
        "[1 earlier line omitted]\nRespondent: second"
    );
    let trailing_question = [
        line(Speaker::Respondent, &long),
        line(Speaker::Interviewer, "next?"),
    ];
    assert_eq!(
        conversation_window(&trailing_question, 45),
        "[1 earlier line omitted]\nInterviewer: next?"
    );
}

// ---- question reply ----

#[test]
fn question_reply_strips_decoration() {
    let cases = [
        (
            "Why does that matter to you?",
            "Why does that matter to you?",
        ),
        (
            "  \"Why does that matter to you?\"  ",
            "Why does that matter to you?",
        ),
        (
            "```\nQuestion: \"Why does that matter?\"\n```",
            "Why does that matter?",
        ),
        (
            "```text\nWhat do you\n  notice first?\n```",
            "What do you notice first?",
        ),
        ("**Question:** What's it like?", "What's it like?"),
        (
            "Interviewer: 'What's that like for you?'",
            "What's that like for you?",
        ),
        (
            "“Q: When did you last use them?”",
            "When did you last use them?",
        ),
        (
            "Sure! Here's my follow-up question:\n\nWhat else matters?",
            "What else matters?",
        ),
        ("{\"question\": \"  What else?  \"}", "What else?"),
        (
            "```json\n{\"question\": \"What else?\", \"why\": \"x\"}\n```",
            "What else?",
        ),
        (
            "\"Cheap\" or \"good\", which matters more?",
            "\"Cheap\" or \"good\", which matters more?",
        ),
        ("Why\u{0007} that\u{202e} one?\r\n", "Why that one?"),
    ];
    for (reply, want) in cases {
        assert_eq!(
            parse_question_reply(reply).as_deref(),
            Ok(want),
            "{reply:?}"
        );
    }
}

#[test]
fn question_reply_refusals_are_typed() {
    assert_eq!(parse_question_reply(""), Err(ContractError::Empty));
    assert_eq!(parse_question_reply("```\n```"), Err(ContractError::Empty));
    assert_eq!(
        parse_question_reply("Question: \"\""),
        Err(ContractError::Empty)
    );
    let err = parse_question_reply("[\"Why?\"]").unwrap_err().to_string();
    assert!(
        err.starts_with("reply: must be plain text, not JSON"),
        "{err}"
    );
    let err = parse_question_reply("{\"text\": \"Why?\"}")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("reply: must be plain text; the only JSON accepted"),
        "{err}"
    );
    let err = parse_question_reply("{\"question\": 3}")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("question: must be a string"), "{err}");
    let err = parse_question_reply("{\"question\": \"Why")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("reply: starts like JSON but does not parse"),
        "{err}"
    );
    let long = "why ".repeat(200);
    let err = parse_question_reply(&long).unwrap_err();
    assert!(matches!(&err, ContractError::Invalid { field, .. } if field == "question"));
    assert!(
        err.to_string().contains("longer than 600 characters"),
        "{err}"
    );
    let at_limit = "w".repeat(MAX_QUESTION_CHARS);
    assert_eq!(parse_question_reply(&at_limit), Ok(at_limit));
}
