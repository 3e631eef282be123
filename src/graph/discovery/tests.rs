use super::*;
use crate::embed::{Embedder, HashEmbedder};
use crate::graph::records::SlotStatus;

fn mec() -> Methodology {
    crate::config::shipped_methodology("means_end_chain")
}

fn node(id: &str, label: &str, node_type: &str) -> KgNode {
    KgNode {
        source_utterance_ids: vec!["u1".into()],
        source_quote: format!("it's {label}"),
        embedding: HashEmbedder::default().embed(&[label]).unwrap().pop(),
        ..KgNode::fixture(id, label, node_type)
    }
}

/// One turn of discovery the way the pipeline's stage runs it: one prompt for every type, the
/// scripted reply parsed, all proposals embedded together, then integrated.
fn run(
    reply: Option<&str>,
    prompts: &mut Vec<String>,
    slots: &[CanonicalSlot],
    nodes: &[KgNode],
    turn: u32,
) -> Result<SlotUpdate, DiscoveryError> {
    let mapped = HashSet::new();
    let ctx = SlotContext {
        session_id: "s",
        turn,
        mapped_nodes: &mapped,
        thresholds: crate::config::Thresholds::default(),
    };
    let mut n = 0;
    let mut ids = || {
        n += 1;
        format!("slot-{turn}-{n}")
    };
    let methodology = mec();
    let groups = groups(nodes);
    if groups.is_empty() {
        return Ok(SlotUpdate::default());
    }
    prompts.push(slot_prompt(&methodology, &groups, slots));
    let reply = reply.ok_or_else(|| DiscoveryError::Llm("script exhausted".to_owned()))?;
    let proposals = proposals_of(reply)?;
    let texts = proposal_texts(&proposals);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let embeddings = HashEmbedder::default().embed(&refs).unwrap();
    Ok(integrate_turn(
        slots,
        &groups,
        &proposals,
        &embeddings,
        &ctx,
        &mut ids,
    ))
}

#[test]
fn no_new_nodes_means_no_llm_call() {
    let mut prompts = Vec::new();
    let update = run(None, &mut prompts, &[], &[], 1).unwrap();
    assert!(prompts.is_empty());
    assert_eq!(update, SlotUpdate::default());
}

#[test]
fn one_call_for_all_types_and_promotion_across_turns() {
    let t1 = [
        node("a", "creamy texture", "attribute"),
        node("v", "indulgence", "terminal_value"),
    ];
    let reply = r#"```json
{"slots": [{"slot_name": "Creamy Texture", "description": "a rich mouthfeel", "node_type": "attribute", "surface_labels": ["creamy texture"]},
           {"slot_name": "indulgence", "description": "treating oneself", "node_type": "terminal_value", "surface_labels": ["indulgence"]},
           {"slot_name": "price", "description": "what it costs", "node_type": "functional_consequence", "surface_labels": ["cheap"]}]}
```"#;
    let mut prompts = Vec::new();
    let u1 = run(Some(reply), &mut prompts, &[], &t1, 1).unwrap();
    assert_eq!(prompts.len(), 1, "one call covers both types");
    assert!(prompts[0].contains("## Concepts of type 'attribute'"));
    assert!(prompts[0].contains("## Concepts of type 'terminal_value'"));
    assert!(prompts[0].contains("- creamy texture (respondent said: \"it's creamy texture\")"));
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
    assert_eq!(
        u1.ignored_proposals,
        vec!["price (functional_consequence): no new node of that type".to_owned()]
    );

    // Turn 2 proposes the same canonical name for a paraphrase: same text, same embedding.
    let t2 = [node("b", "creamy feel", "attribute")];
    let reply2 = r#"{"slots": [{"slot_name": "creamy_texture", "description": "a rich mouthfeel", "node_type": "attribute", "surface_labels": ["Creamy feel"]}]}"#;
    let mut prompts2 = Vec::new();
    let u2 = run(Some(reply2), &mut prompts2, &u1.slots_created, &t2, 2).unwrap();
    assert!(
        prompts2[0].contains("already in use (reuse a name when a concept fits): creamy_texture")
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
        let err = run(Some(reply), &mut Vec::new(), &[], &nodes, 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err}");
    }
    let err = run(None, &mut Vec::new(), &[], &nodes, 1)
        .unwrap_err()
        .to_string();
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
