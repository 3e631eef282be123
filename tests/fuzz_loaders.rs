//! Property-based fuzzing of every loader: arbitrary bytes and arbitrary YAML trees end in a
//! value or a typed error, never a panic. `PROPTEST_CASES` raises the case count for long runs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

use interviewer::config::{parse_concept, parse_methodology, parse_persona, parse_rubrics};
use interviewer::signals::Catalog;
use proptest::prelude::*;

/// A random YAML-like tree rendered to text, biased towards the keys loaders look for so the
/// fuzzer reaches deep into typed deserialisation and validation.
fn arb_yaml() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "method",
        "name",
        "ontology",
        "nodes",
        "edges",
        "level",
        "terminal",
        "permitted_connections",
        "signals",
        "graph",
        "strategies",
        "signal_weights",
        "node_binding",
        "focus_mode",
        "phases",
        "early",
        "mid",
        "late",
        "phase_bonuses",
        "id",
        "methodology",
        "objective",
        "context",
        "response_patterns",
        "detailed",
        "brief",
        "fatigue",
        "llm.response_depth.low",
        "*",
    ]);
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        (-10.0f64..10.0).prop_map(|f| f.to_string()),
        "[a-z_.*]{0,12}".prop_map(|s| format!("\"{s}\"")),
        Just("required".to_owned()),
        Just("&a [1, *a]".to_owned()),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec((keys.clone(), inner), 0..6).prop_map(|kv| {
                let body: Vec<String> = kv
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\": {v}"))
                    .collect();
                format!("{{{}}}", body.join(", "))
            }),
        ]
    })
}

fn all_loaders(text: &str) {
    let p = Path::new("fuzz.yaml");
    let _ = parse_methodology(p, text, &Catalog);
    let _ = parse_concept(p, text);
    let _ = parse_persona(p, text);
    let _ = parse_rubrics(text);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        all_loaders(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn arbitrary_yaml_trees_never_panic(text in arb_yaml()) {
        all_loaders(&text);
    }

    #[test]
    fn arbitrary_rubric_text_never_panics(text in "([a-z_]{0,8}:? ?[ -~]{0,20}\n|    [ -~]{0,20}\n|#[ -~]{0,10}\n|\n){0,20}") {
        let _ = parse_rubrics(&text);
    }
}

#[test]
fn billion_laughs_is_refused_or_bounded() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = i - 1;
        text.push_str(&format!("a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"));
    }
    // Must return (an error: this is no methodology) rather than exhaust memory.
    assert!(parse_methodology(Path::new("laughs.yaml"), &text, &Catalog).is_err());
}
