//! Property-based fuzzing of the four LLM reply parsers: extraction, slot discovery, the signal
//! batch and the question. Whatever the model sends (noise, a cut-off reply, a field of the wrong
//! type, a huge array, deep nesting, prose and code fences around the JSON), each parser returns
//! a value that honours its contract or a typed error, never a panic and never after a long
//! stall. `PROPTEST_CASES` raises the case count for long runs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::sync::OnceLock;

use interviewer::config::{ConfigDir, Methodology, REQUIRED_RUBRICS};
use interviewer::graph::discovery::{MAX_SLOTS_PER_REPLY, parse_slot_reply};
use interviewer::prompts::{
    MAX_CONCEPTS, MAX_LABEL_CHARS, MAX_QUESTION_CHARS, MAX_RELATIONSHIPS, parse_extraction_reply,
    parse_question_reply,
};
use interviewer::reply_json::ContractError;
use interviewer::signals::llm::parse_batch_reply;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};

fn mec() -> &'static Methodology {
    static MEC: OnceLock<Methodology> = OnceLock::new();
    MEC.get_or_init(|| {
        ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
            .methodology("means_end_chain", &interviewer::signals::Catalog)
            .expect("the shipped methodology loads")
    })
}

// ---- valid replies, one per contract ----

fn valid_extraction() -> Value {
    json!({
        "concepts": [
            {"label": "noise cancelling", "node_type": "attribute", "confidence": 0.9,
             "stance": 1, "source_quote": "I love the noise cancelling"},
            {"label": "focus on the train", "node_type": "functional_consequence",
             "confidence": 0.7, "stance": 0, "source_quote": "I can focus"}
        ],
        "relationships": [
            {"source": "noise cancelling", "target": "focus on the train",
             "edge_type": "leads_to", "confidence": 0.8}
        ]
    })
}

fn valid_slots() -> Value {
    json!({"slots": [{"slot_name": "noise_control", "description": "Blocking noise",
        "node_type": "attribute", "surface_labels": ["noise cancelling", "quiet"]}]})
}

fn valid_batch() -> Value {
    let entries = REQUIRED_RUBRICS
        .iter()
        .map(|r| ((*r).to_owned(), json!({"score": 3, "rationale": "because"})));
    Value::Object(entries.collect())
}

fn valid_question() -> Value {
    json!({"question": "Why does that matter to you?"})
}

/// Which parser a case targets.
#[derive(Debug, Clone, Copy)]
enum Contract {
    Extraction,
    Slots,
    Batch,
    Question,
}

const ALL: [Contract; 4] = [
    Contract::Extraction,
    Contract::Slots,
    Contract::Batch,
    Contract::Question,
];

impl Contract {
    fn valid(self) -> Value {
        match self {
            Self::Extraction => valid_extraction(),
            Self::Slots => valid_slots(),
            Self::Batch => valid_batch(),
            Self::Question => valid_question(),
        }
    }

    /// Runs the parser and checks its contract on success; returns whether it accepted.
    fn check(self, reply: &str) -> Result<(), ContractError> {
        match self {
            Self::Extraction => parse_extraction_reply(reply, mec()).map(|e| {
                assert!(e.concepts.len() <= MAX_CONCEPTS);
                assert!(e.relationships.len() <= MAX_RELATIONSHIPS);
                for c in &e.concepts {
                    assert_label(&c.label);
                    assert!(mec().node_type(&c.node_type).is_some(), "{}", c.node_type);
                    assert!((0.0..=1.0).contains(&c.confidence));
                    assert!((-1..=1).contains(&c.stance));
                }
                for r in &e.relationships {
                    assert_label(&r.source);
                    assert_label(&r.target);
                    assert!(mec().ontology.edges.iter().any(|t| t.name == r.edge_type));
                    assert!((0.0..=1.0).contains(&r.confidence));
                }
            }),
            Self::Slots => parse_slot_reply(reply).map(|slots| {
                assert!(slots.len() <= MAX_SLOTS_PER_REPLY);
                assert!(slots.iter().all(|s| !s.slot_name.is_empty()));
            }),
            Self::Batch => parse_batch_reply(reply, &REQUIRED_RUBRICS).map(|scores| {
                assert_eq!(scores.len(), REQUIRED_RUBRICS.len());
                assert!(scores.values().all(|s| (1..=5).contains(&s.score)));
            }),
            Self::Question => parse_question_reply(reply).map(|q| {
                assert!(!q.is_empty());
                assert!(q.chars().count() <= MAX_QUESTION_CHARS);
                assert!(!q.chars().any(char::is_control), "{q:?}");
                assert_eq!(q.trim(), q);
            }),
        }
    }
}

fn assert_label(label: &str) {
    assert!(!label.is_empty());
    assert!(label.chars().count() <= MAX_LABEL_CHARS);
    assert!(!label.contains('\n'));
}

fn check_all(reply: &str) {
    for contract in ALL {
        let _ = contract.check(reply);
    }
}

/// Runs `contract` on `reply`, requiring a typed error. Hostile inputs must be refused. Their cost is bounded by construction (size and depth
/// limits, linear scans); a regression shows up as this test hanging, not as a timing assert.
fn refused_quickly(contract: Contract, reply: &str) {
    assert!(
        contract.check(reply).is_err(),
        "{contract:?} accepted a hostile reply"
    );
}

// ---- generators ----

/// Any JSON value, biased towards values that are nearly right for our contracts.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        (-2.0f64..2.0).prop_map(Value::from),
        (0u8..7).prop_map(Value::from),
        "\\PC{0,24}".prop_map(Value::String),
        prop::sample::select(vec![
            "attribute",
            "leads_to",
            "positive",
            "",
            " \n",
            "4",
            "Attribute",
            "slots",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{0,10}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// JSON pointers to every value inside `v`, the root included.
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    out.push(at.to_owned());
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, &format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                pointers(item, &format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

/// `valid` with the value at one pointer replaced by `new`, or removed when `remove` is set.
fn mutate(mut valid: Value, pick: Index, new: Value, remove: bool) -> Value {
    let mut all = Vec::new();
    pointers(&valid, "", &mut all);
    let target = pick.get(&all).clone();
    if remove && let Some((parent, key)) = target.rsplit_once('/') {
        match valid.pointer_mut(parent).unwrap() {
            Value::Object(map) => {
                map.shift_remove(key);
            }
            Value::Array(items) => {
                items.remove(key.parse::<usize>().unwrap());
            }
            _ => unreachable!("pointers only descend into containers"),
        }
        return valid;
    }
    *valid.pointer_mut(&target).unwrap() = new;
    valid
}

fn arb_contract() -> impl Strategy<Value = Contract> {
    prop::sample::select(ALL.to_vec())
}

/// Prose that cannot be mistaken for JSON or a fence.
const PROSE: &str = "[A-Za-z0-9 .,!?'\\n-]{0,80}";

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        check_all(&text);
    }

    #[test]
    fn json_flavoured_noise_never_panics(text in "[{}\\[\\]\":,0-9a-z_ .\\\\\n`-]{0,300}") {
        check_all(&text);
    }

    #[test]
    fn truncated_replies_are_refused(contract in arb_contract(), cut in any::<Index>()) {
        let full = contract.valid().to_string();
        prop_assert!(contract.check(&full).is_ok(), "the valid reply must parse");
        // Compact JSON is ASCII, so every byte offset is a char boundary.
        let prefix = &full[..cut.index(full.len())];
        prop_assert!(contract.check(prefix).is_err(), "accepted a cut-off reply: {prefix}");
    }

    #[test]
    fn wrong_types_never_panic(
        contract in arb_contract(),
        pick in any::<Index>(),
        new in arb_json(),
        remove in any::<bool>(),
    ) {
        let reply = mutate(contract.valid(), pick, new, remove);
        let _ = contract.check(&reply.to_string());
        let _ = contract.check(&serde_json::to_string_pretty(&reply).unwrap());
    }

    #[test]
    fn prose_and_fences_around_json_are_accepted(
        contract in prop::sample::select(
            vec![Contract::Extraction, Contract::Slots, Contract::Batch],
        ),
        before in PROSE,
        after in PROSE,
        lang in prop::sample::select(vec!["", "json", "JSON"]),
        fenced in any::<bool>(),
    ) {
        let body = serde_json::to_string_pretty(&contract.valid()).unwrap();
        let body = if fenced { format!("```{lang}\n{body}\n```") } else { body };
        let reply = format!("{before}\n{body}\n{after}");
        prop_assert!(contract.check(&reply).is_ok(), "{reply}");
    }

    #[test]
    fn fenced_questions_are_accepted(
        lang in prop::sample::select(vec!["", "text", "json"]),
        as_json in any::<bool>(),
        question in "[A-Za-z][A-Za-z ,']{0,80}\\?",
    ) {
        let body = if as_json {
            json!({"question": question}).to_string()
        } else {
            question.clone()
        };
        let reply = format!("```{lang}\n{body}\n```");
        let want = question.split_whitespace().collect::<Vec<_>>().join(" ");
        prop_assert_eq!(parse_question_reply(&reply), Ok(want));
    }
}

// ---- hostile shapes, deterministic ----

/// `n` copies of `item`, comma-separated, in brackets.
fn array_of(item: &str, n: usize) -> String {
    format!("[{}]", vec![item; n].join(","))
}

#[test]
fn huge_arrays_are_refused_quickly() {
    const N: usize = 100_000;
    let zeros = array_of("0", N);
    refused_quickly(
        Contract::Extraction,
        &format!(r#"{{"concepts": {zeros}, "relationships": []}}"#),
    );
    refused_quickly(
        Contract::Extraction,
        &format!(r#"{{"concepts": [], "relationships": {zeros}}}"#),
    );
    refused_quickly(Contract::Slots, &format!(r#"{{"slots": {zeros}}}"#));
    refused_quickly(
        Contract::Batch,
        &format!(r#"{{"response_depth": {zeros}}}"#),
    );
    refused_quickly(Contract::Question, &zeros);
    refused_quickly(Contract::Question, &format!(r#"{{"question": {zeros}}}"#));
    // Bigger than the reply limit: refused before parsing.
    let objects = array_of("{}", N);
    for contract in ALL {
        refused_quickly(
            contract,
            &format!(r#"{{"concepts": {objects}, "slots": {objects}}}"#),
        );
    }
    // Valid entries, just too many of them.
    let concept = r#"{"label": "a", "node_type": "attribute", "confidence": 0.5}"#;
    let many = array_of(concept, 3_000);
    refused_quickly(
        Contract::Extraction,
        &format!(r#"{{"concepts": {many}, "relationships": []}}"#),
    );
}

#[test]
fn deep_nesting_is_refused_quickly() {
    const N: usize = 10_000;
    let open = "[".repeat(N);
    let closed = format!("{open}{}", "]".repeat(N));
    for contract in ALL {
        refused_quickly(contract, &open);
        refused_quickly(contract, &closed);
        refused_quickly(
            contract,
            &format!(r#"{{"concepts": {closed}, "slots": {closed}, "question": {closed}}}"#),
        );
        refused_quickly(
            contract,
            &format!(r#"{{"response_depth": {{"score": {closed}}}}}"#),
        );
    }
}

/// Nested objects rather than arrays: every `{` is a candidate start for the lenient
/// extraction, so these also exercise its rescanning. Kept at 2,000 levels so the default run
/// stays fast; see [`a_reply_of_open_braces_is_refused_in_linear_time`] for the large case.
#[test]
fn deeply_nested_objects_are_refused() {
    const N: usize = 2_000;
    for contract in ALL {
        refused_quickly(
            contract,
            &format!("{}{}", r#"{"a":"#.repeat(N), "}".repeat(N)),
        );
        refused_quickly(contract, &"{".repeat(N));
    }
}

/// A 200 KB reply of `{` (under the 256 KiB reply limit) is refused after one short scan per
/// brace: each scan stops at the depth limit, so the whole check is linear in the reply.
#[test]
fn a_reply_of_open_braces_is_refused() {
    let braces = "{".repeat(200_000);
    for contract in [Contract::Extraction, Contract::Slots, Contract::Batch] {
        refused_quickly(contract, &braces);
    }
}

#[test]
fn empty_and_whitespace_replies_are_empty_errors() {
    for contract in ALL {
        for reply in ["", "   ", "\n\t\n"] {
            assert_eq!(
                contract.check(reply),
                Err(ContractError::Empty),
                "{contract:?}"
            );
        }
    }
}
