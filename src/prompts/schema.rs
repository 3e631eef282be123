//! JSON schemas of the three structured reply contracts, for providers that can constrain
//! decoding to a schema (the local model).
//!
//! Each schema describes a subset of what the contract's strict parser accepts, so a reply that
//! matches it always parses: [`extraction_schema`] (`parse_extraction_reply`),
//! [`slot_schema`] (`graph::discovery::parse_slot_reply`) and [`scoring_schema`]
//! (`signals::llm::parse_batch_reply`). They are tighter than the parsers where that keeps a
//! small model on track and its reply finite: names come from enums built from the
//! methodology's ontology and the rubric names, numbers from short enums, arrays and strings
//! have bounds sized so a typical reply fits the role's default `max_tokens`.
//!
//! Every schema also carries llguidance's `x-guidance` options: compact separators with one
//! space, no free whitespace (a small model can otherwise emit newlines forever), and only the
//! `\"` and `\\` escapes (labels stay on one line). Providers that do not constrain decoding
//! ignore the schema.

use serde_json::{Value, json};

use crate::config::Methodology;

/// Most concepts in a constrained extraction reply (the parser allows 64): one answer rarely
/// holds more distinct ideas, and eight keep the reply well within the default 2,048 tokens.
pub const SCHEMA_MAX_CONCEPTS: usize = 8;
/// Most relationships in a constrained extraction reply (the parser allows 128).
pub const SCHEMA_MAX_RELATIONSHIPS: usize = 8;
/// Longest label in a constrained reply (the parser allows 200): labels are short phrases.
pub const SCHEMA_LABEL_CHARS: usize = 60;
/// Longest source quote in a constrained reply: a sentence or two of the answer.
pub const SCHEMA_QUOTE_CHARS: usize = 120;
/// Most slots per constrained slot-discovery reply (the parser allows 16; a batch holds at most
/// eight nodes).
pub const SCHEMA_MAX_SLOTS: usize = 8;
/// Longest rationale in a constrained scoring reply: six of them must fit 512 tokens.
pub const SCHEMA_RATIONALE_CHARS: usize = 120;

/// Confidence values a constrained reply may use: the parser takes any number in [0, 1]; a
/// short enum stops a model from writing digits forever.
const CONFIDENCES: [f64; 10] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// llguidance options shared by every schema (see the module notes).
fn guidance_options() -> Value {
    json!({
        "whitespace_flexible": false,
        "key_separator": ": ",
        "item_separator": ", ",
        "json_allowed_escapes": "\"\\",
    })
}

fn object(properties: &Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// A one-line label: starts with a visible character, at most `max` characters.
fn label(max: usize) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": max, "pattern": "^\\S"})
}

/// An array of `items` with at most `max` entries, or an empty array when `items` is `None`
/// (the methodology defines no names to fill it with).
fn bounded_array(items: Option<Value>, max: usize) -> Value {
    match items {
        Some(items) => json!({"type": "array", "items": items, "maxItems": max}),
        None => json!({"type": "array", "maxItems": 0}),
    }
}

/// The methodology's node type names, in ontology order (the extraction parser's spelling).
fn node_type_names(methodology: &Methodology) -> Vec<&str> {
    let nodes = &methodology.ontology.nodes;
    nodes.iter().map(|n| n.name.as_str()).collect()
}

/// The methodology's edge type names, in ontology order.
fn edge_type_names(methodology: &Methodology) -> Vec<&str> {
    let edges = &methodology.ontology.edges;
    edges.iter().map(|e| e.name.as_str()).collect()
}

fn names_enum(names: &[&str]) -> Option<Value> {
    (!names.is_empty()).then(|| json!({"enum": names}))
}

/// `schema` with the llguidance options every schema here carries (compact separators, no free
/// whitespace, only the `\"` and `\\` escapes).
pub fn with_guidance(mut schema: Value) -> Value {
    if let Some(map) = schema.as_object_mut() {
        map.insert("x-guidance".to_owned(), guidance_options());
    }
    schema
}

/// The extraction reply (stage 3) for `methodology`: node and edge types from its ontology.
pub fn extraction_schema(methodology: &Methodology) -> Value {
    let node_types = names_enum(&node_type_names(methodology));
    let edge_types = names_enum(&edge_type_names(methodology));
    let confidence = json!({"enum": CONFIDENCES});
    let concept = node_types.map(|node_type| {
        object(
            &json!({
                "label": label(SCHEMA_LABEL_CHARS),
                "node_type": node_type,
                "confidence": confidence,
                "stance": {"enum": [-1, 0, 1]},
                "source_quote": {"type": "string", "maxLength": SCHEMA_QUOTE_CHARS},
            }),
            &["label", "node_type", "confidence", "stance", "source_quote"],
        )
    });
    let relationship = edge_types.map(|edge_type| {
        object(
            &json!({
                "source": label(SCHEMA_LABEL_CHARS),
                "target": label(SCHEMA_LABEL_CHARS),
                "edge_type": edge_type,
                "confidence": confidence,
            }),
            &["source", "target", "edge_type", "confidence"],
        )
    });
    with_guidance(object(
        &json!({
            "concepts": bounded_array(concept, SCHEMA_MAX_CONCEPTS),
            "relationships": bounded_array(relationship, SCHEMA_MAX_RELATIONSHIPS),
        }),
        &["concepts", "relationships"],
    ))
}

/// The slot-discovery reply (stage 4.5): `snake_case` slot names, the methodology's node types.
pub fn slot_schema(methodology: &Methodology) -> Value {
    let slot = names_enum(&node_type_names(methodology)).map(|node_type| {
        object(
            &json!({
                "slot_name": {"type": "string", "maxLength": 48, "pattern": "^[a-z][a-z0-9_]*$"},
                "description": {"type": "string", "maxLength": 160},
                "node_type": node_type,
                "surface_labels": {
                    "type": "array",
                    "items": label(crate::prompts::MAX_LABEL_CHARS),
                    "minItems": 1,
                    "maxItems": 8,
                },
            }),
            &["slot_name", "description", "node_type", "surface_labels"],
        )
    });
    with_guidance(object(
        &json!({"slots": bounded_array(slot, SCHEMA_MAX_SLOTS)}),
        &["slots"],
    ))
}

/// The signal-scoring reply: one `{"score", "rationale"}` object per rubric, in `rubrics` order.
pub fn scoring_schema(rubrics: &[&str]) -> Value {
    let entry = object(
        &json!({
            "score": {"enum": [1, 2, 3, 4, 5]},
            "rationale": {"type": "string", "maxLength": SCHEMA_RATIONALE_CHARS},
        }),
        &["score", "rationale"],
    );
    let properties: serde_json::Map<String, Value> = rubrics
        .iter()
        .map(|name| ((*name).to_owned(), entry.clone()))
        .collect();
    with_guidance(object(&Value::Object(properties), rubrics))
}

/// Longest question from [`question_schema`]: one or two spoken sentences (the parser allows
/// 600 characters).
pub const SCHEMA_QUESTION_CHARS: usize = 300;

/// An optional schema for question replies: one JSON string of at most
/// [`SCHEMA_QUESTION_CHARS`] characters, without escapes, starting with a visible character.
/// `parse_question_reply` strips the wrapping quotes. Not attached by the pipeline; it keeps a
/// small local model from rambling past the parser's limit, at the price of a leading `"` in
/// the streamed deltas.
pub fn question_schema() -> Value {
    let mut options = guidance_options();
    if let Some(map) = options.as_object_mut() {
        map.insert("json_allowed_escapes".to_owned(), json!(""));
    }
    json!({
        "type": "string",
        "minLength": 2,
        "maxLength": SCHEMA_QUESTION_CHARS,
        "pattern": "^[^\\s{\\[]",
        "x-guidance": options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn methodology() -> Methodology {
        crate::config::ConfigDir::new(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config"),
        )
        .methodology("means_end_chain", &crate::signals::Catalog)
        .unwrap()
    }

    #[test]
    fn extraction_schema_names_the_ontology() {
        let m = methodology();
        let schema = extraction_schema(&m);
        let concept = &schema["properties"]["concepts"]["items"];
        let types: Vec<&str> = concept["properties"]["node_type"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(types, node_type_names(&m));
        assert_eq!(concept["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["concepts", "relationships"]));
        assert_eq!(schema["x-guidance"]["whitespace_flexible"], false);
    }

    #[test]
    fn every_schema_example_passes_its_strict_parser() {
        let m = methodology();
        let node = node_type_names(&m)[0];
        let edge = edge_type_names(&m)[0];
        let extraction = json!({
            "concepts": [{"label": "oat milk", "node_type": node, "confidence": 0.9,
                          "stance": 1, "source_quote": "I buy oat milk"}],
            "relationships": [{"source": "oat milk", "target": "oat milk",
                               "edge_type": edge, "confidence": 1.0}],
        });
        let parsed = crate::prompts::parse_extraction_reply(&extraction.to_string(), &m).unwrap();
        assert_eq!(parsed.concepts.len(), 1);
        let slots = json!({"slots": [{"slot_name": "plant_based", "description": "d",
                                      "node_type": node, "surface_labels": ["oat milk"]}]});
        assert_eq!(
            crate::graph::discovery::parse_slot_reply(&slots.to_string())
                .unwrap()
                .len(),
            1
        );
        let scores = json!({"specificity": {"score": 3, "rationale": "concrete"}});
        let parsed =
            crate::signals::llm::parse_batch_reply(&scores.to_string(), &["specificity"]).unwrap();
        assert_eq!(parsed["specificity"].score, 3);
    }

    #[test]
    fn schema_enums_stay_inside_the_parsers_ranges() {
        assert!(CONFIDENCES.iter().all(|c| (0.0..=1.0).contains(c)));
        let schema = scoring_schema(&["a", "b"]);
        assert_eq!(schema["required"], json!(["a", "b"]));
        assert_eq!(
            schema["properties"]["b"]["properties"]["score"]["enum"],
            json!([1, 2, 3, 4, 5])
        );
    }

    #[test]
    fn a_methodology_without_edge_types_allows_no_relationships() {
        let mut m = methodology();
        m.ontology.edges.clear();
        let schema = extraction_schema(&m);
        assert_eq!(schema["properties"]["relationships"]["maxItems"], 0);
    }
}
