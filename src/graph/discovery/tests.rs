use std::cell::RefCell;

use super::*;
use crate::config::ConfigDir;
use crate::embed::HashEmbedder;
use crate::graph::model::SlotStatus;

fn mec() -> Methodology {
    ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
        .methodology("means_end_chain")
        .unwrap()
}

fn node(id: &str, label: &str, node_type: &str) -> KgNode {
    KgNode {
        source_utterance_ids: vec!["u1".into()],
        source_quote: format!("it's {label}"),
        embedding: HashEmbedder::default().embed(&[label]).unwrap().pop(),
        ..KgNode::fixture(id, label, node_type)
    }
}

/// A scripted slot-discovery LLM: replies in order, records prompts, errors when exhausted.
struct Script {
    replies: RefCell<Vec<String>>,
    prompts: RefCell<Vec<String>>,
}

impl Script {
    fn new(replies: &[&str]) -> Self {
        Self {
            replies: RefCell::new(replies.iter().rev().map(|r| (*r).to_owned()).collect()),
            prompts: RefCell::default(),
        }
    }

    #[allow(clippy::unused_async)] // stands in for an async LLM call
    async fn ask(&self, prompt: String) -> Result<String, String> {
        self.prompts.borrow_mut().push(prompt);
        self.replies
            .borrow_mut()
            .pop()
            .ok_or_else(|| "script exhausted".to_owned())
    }
}

fn run(
    script: &Script,
    slots: &[CanonicalSlot],
    nodes: &[KgNode],
    turn: u32,
) -> Result<SlotUpdate, DiscoveryError> {
    let mapped = HashSet::new();
    let ctx = SlotContext {
        session_id: "s",
        turn,
        mapped_nodes: &mapped,
    };
    let mut n = 0;
    let mut ids = || {
        n += 1;
        format!("slot-{turn}-{n}")
    };
    let methodology = mec();
    let embedder = HashEmbedder::default();
    let fut = discover_slots(&methodology, slots, nodes, &ctx, &embedder, &mut ids, |p| {
        script.ask(p)
    });
    block_on(fut)
}

/// The scripted futures never pend; a current-thread runtime drives them.
fn block_on<F: Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(fut)
}

#[test]
fn no_new_nodes_means_no_llm_call() {
    let script = Script::new(&[]);
    let update = run(&script, &[], &[], 1).unwrap();
    assert!(script.prompts.borrow().is_empty());
    assert_eq!(update, SlotUpdate::default());
}

#[test]
fn one_call_per_type_batch_and_promotion_across_turns() {
    let t1 = [
        node("a", "creamy texture", "attribute"),
        node("v", "indulgence", "terminal_value"),
    ];
    let script = Script::new(&[
        r#"```json
{"slots": [{"slot_name": "Creamy Texture", "description": "a rich mouthfeel", "node_type": "attribute", "surface_labels": ["creamy texture"]}]}
```"#,
        r#"{"slots": [{"slot_name": "indulgence", "description": "treating oneself", "node_type": "terminal_value", "surface_labels": ["indulgence"]}]}"#,
    ]);
    let u1 = run(&script, &[], &t1, 1).unwrap();
    assert_eq!(script.prompts.borrow().len(), 2);
    assert!(
        script.prompts.borrow()[0]
            .contains("- creamy texture (respondent said: \"it's creamy texture\")")
    );
    assert_eq!(u1.slots_created.len(), 2);
    assert_eq!(
        u1.slots_created[0].slot_name, "creamy_texture",
        "names are normalised to snake_case"
    );
    assert!(
        u1.slots_created
            .iter()
            .all(|s| s.status == SlotStatus::Candidate)
    );

    // Turn 2 proposes the same canonical name for a paraphrase: same text, same embedding.
    let t2 = [node("b", "creamy feel", "attribute")];
    let script2 = Script::new(&[
        r#"{"slots": [{"slot_name": "creamy_texture", "description": "a rich mouthfeel", "node_type": "attribute", "surface_labels": ["Creamy feel"]}]}"#,
    ]);
    let u2 = run(&script2, &u1.slots_created, &t2, 2).unwrap();
    assert!(
        script2.prompts.borrow()[0]
            .contains("already in use (reuse a name when a concept fits): creamy_texture")
    );
    assert!(u2.slots_created.is_empty());
    assert_eq!(u2.slots_updated[0].status, SlotStatus::Active);
    assert_eq!(u2.promoted, vec![u1.slots_created[0].id.clone()]);
}

#[test]
fn malformed_replies_name_the_stage_and_the_field() {
    let nodes = [node("a", "creamy texture", "attribute")];
    for (reply, needle) in [
        (
            "I think these are all about texture.",
            "slot_discovery: malformed reply: no JSON object found",
        ),
        (r#"{"slot": []}"#, "slots: missing"),
        (
            r#"{"slots": [{"slot_name": 7, "node_type": "attribute", "surface_labels": []}]}"#,
            "slots[0].slot_name: must be a string (got '7')",
        ),
        (
            r#"{"slots": [{"slot_name": "x", "node_type": "attribute", "surface_labels": "creamy"}]}"#,
            "slots[0].surface_labels: must be an array of strings",
        ),
    ] {
        let script = Script::new(&[reply]);
        let err = run(&script, &[], &nodes, 1).unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
    }
    let script = Script::new(&[]);
    let err = run(&script, &[], &nodes, 1).unwrap_err().to_string();
    assert_eq!(err, "slot_discovery: the LLM call failed: script exhausted");
}

#[test]
fn oversized_replies_are_refused() {
    let many: Vec<String> = (0..40)
        .map(|i| {
            format!(r#"{{"slot_name": "s{i}", "node_type": "attribute", "surface_labels": []}}"#)
        })
        .collect();
    let reply = format!(r#"{{"slots": [{}]}}"#, many.join(","));
    assert!(parse_slot_reply(&reply).is_err());
}
