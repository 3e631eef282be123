//! The extraction reply contract: lenient about where the JSON object sits in the reply, strict
//! about what it holds.
//!
//! Decisions, each a place where a model's reply commonly strays:
//! - both `concepts` and `relationships` are required arrays (`relationships` may be empty); a
//!   missing key is an error naming it, because a model that forgot the key may have forgotten
//!   the links too and a retry is cheaper than a silently unlinked turn;
//! - more than [`MAX_CONCEPTS`] concepts or [`MAX_RELATIONSHIPS`] relationships is an error, not
//!   a truncation, since which entries to keep would be arbitrary;
//! - labels and endpoints are flattened to one line and must be non-empty and at most
//!   [`MAX_LABEL_CHARS`] characters;
//! - `node_type` and `edge_type` match the methodology's names ignoring ASCII case and are
//!   returned in the methodology's spelling;
//! - `confidence` is required and must be a JSON number in [0, 1] (integers 0 and 1 included,
//!   numeric strings refused);
//! - `stance` is -1, 0 or 1 (integral floats accepted) or `"negative"`, `"neutral"`,
//!   `"positive"`; a missing or null stance is 0, the contract's "unclear";
//! - `source_quote` is a string, and missing or null reads as empty;
//! - unknown fields are ignored.
//!
//! Whether a relationship's endpoints name real concepts, and whether its edge type permits that
//! pair of node types, is decided when the graph is updated (`graph::surface`), where the
//! existing labels are known.

use serde_json::{Map, Value};

use super::{Extraction, MAX_CONCEPTS, MAX_LABEL_CHARS, MAX_RELATIONSHIPS};
use crate::config::Methodology;
use crate::graph::surface::{ExtractedConcept, ExtractedRelationship};
use crate::prompts::window::one_line;
use crate::reply_json::{ContractError, extract_object};

/// Parses and validates an extraction reply against `methodology`'s ontology.
///
/// Errors name the offending part as a path (`concepts[2].node_type`) and quote the value.
pub fn parse_extraction_reply(
    reply: &str,
    methodology: &Methodology,
) -> Result<Extraction, ContractError> {
    let map = extract_object(reply)?;
    let concepts = array_field(&map, "concepts", MAX_CONCEPTS)?;
    let relationships = array_field(&map, "relationships", MAX_RELATIONSHIPS)?;
    let node_types = node_type_names(methodology);
    let edge_types = edge_type_names(methodology);
    Ok(Extraction {
        concepts: concepts
            .iter()
            .enumerate()
            .map(|(i, v)| parse_concept(&Entry::new("concepts", i, v)?, &node_types))
            .collect::<Result<_, _>>()?,
        relationships: relationships
            .iter()
            .enumerate()
            .map(|(i, v)| parse_relationship(&Entry::new("relationships", i, v)?, &edge_types))
            .collect::<Result<_, _>>()?,
    })
}

/// The methodology's node type names, in ontology order.
pub(in crate::prompts) fn node_type_names(methodology: &Methodology) -> Vec<&str> {
    let nodes = &methodology.ontology.nodes;
    nodes.iter().map(|n| n.name.as_str()).collect()
}

/// The methodology's edge type names, in ontology order.
pub(in crate::prompts) fn edge_type_names(methodology: &Methodology) -> Vec<&str> {
    let edges = &methodology.ontology.edges;
    edges.iter().map(|e| e.name.as_str()).collect()
}

fn array_field<'a>(
    map: &'a Map<String, Value>,
    name: &str,
    max: usize,
) -> Result<&'a [Value], ContractError> {
    let value = map
        .get(name)
        .ok_or_else(|| ContractError::invalid(name, "missing", &Value::Object(map.clone())))?;
    let list = value
        .as_array()
        .ok_or_else(|| ContractError::invalid(name, "must be an array", value))?;
    if list.len() > max {
        return Err(ContractError::Invalid {
            field: name.to_owned(),
            reason: format!("more than {max} entries"),
            found: format!("{} entries", list.len()),
        });
    }
    Ok(list)
}

fn parse_concept(
    entry: &Entry<'_>,
    node_types: &[&str],
) -> Result<ExtractedConcept, ContractError> {
    Ok(ExtractedConcept {
        label: entry.label("label")?,
        node_type: entry.choice("node_type", node_types, "node types")?,
        confidence: entry.confidence()?,
        stance: entry.stance()?,
        source_quote: entry.optional_text("source_quote")?,
    })
}

fn parse_relationship(
    entry: &Entry<'_>,
    edge_types: &[&str],
) -> Result<ExtractedRelationship, ContractError> {
    Ok(ExtractedRelationship {
        source: entry.label("source")?,
        target: entry.label("target")?,
        edge_type: entry.choice("edge_type", edge_types, "edge types")?,
        confidence: entry.confidence()?,
    })
}

/// One element of a reply array, with its path for error messages.
struct Entry<'a> {
    path: String,
    fields: &'a Map<String, Value>,
}

impl<'a> Entry<'a> {
    fn new(array: &str, index: usize, value: &'a Value) -> Result<Self, ContractError> {
        let path = format!("{array}[{index}]");
        match value.as_object() {
            Some(fields) => Ok(Self { path, fields }),
            None => Err(ContractError::invalid(path, "must be an object", value)),
        }
    }

    fn at(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    fn required(&self, key: &str) -> Result<&'a Value, ContractError> {
        self.fields
            .get(key)
            .ok_or_else(|| ContractError::invalid(self.at(key), "missing", &Value::Null))
    }

    fn string(&self, key: &str) -> Result<&'a str, ContractError> {
        let value = self.required(key)?;
        value
            .as_str()
            .ok_or_else(|| ContractError::invalid(self.at(key), "must be a string", value))
    }

    /// A concept label or relationship endpoint: one line, non-empty, bounded.
    fn label(&self, key: &str) -> Result<String, ContractError> {
        let raw = self.string(key)?;
        let label = one_line(raw);
        if label.is_empty() {
            let found = Value::String(raw.to_owned());
            return Err(ContractError::invalid(
                self.at(key),
                "must not be empty",
                &found,
            ));
        }
        if label.chars().count() > MAX_LABEL_CHARS {
            let reason = format!("longer than {MAX_LABEL_CHARS} characters");
            return Err(ContractError::invalid(
                self.at(key),
                reason,
                &Value::String(label),
            ));
        }
        Ok(label)
    }

    /// One of `allowed`, ignoring ASCII case and surrounding whitespace, in its allowed spelling.
    fn choice(&self, key: &str, allowed: &[&str], noun: &str) -> Result<String, ContractError> {
        let raw = self.string(key)?;
        let wanted = raw.trim();
        if let Some(name) = allowed.iter().find(|a| a.eq_ignore_ascii_case(wanted)) {
            return Ok((*name).to_owned());
        }
        let reason = if allowed.is_empty() {
            format!("the methodology defines no {noun}")
        } else {
            format!("must be one of the {noun}: {}", allowed.join(", "))
        };
        Err(ContractError::invalid(
            self.at(key),
            reason,
            &Value::String(raw.to_owned()),
        ))
    }

    fn confidence(&self) -> Result<f64, ContractError> {
        let key = "confidence";
        let value = self.required(key)?;
        value
            .as_f64()
            .filter(|c| (0.0..=1.0).contains(c))
            .ok_or_else(|| {
                ContractError::invalid(self.at(key), "must be a number from 0 to 1", value)
            })
    }

    fn stance(&self) -> Result<i8, ContractError> {
        let key = "stance";
        let value = self.fields.get(key).unwrap_or(&Value::Null);
        let stance = match value {
            Value::Null => Some(0),
            Value::Number(n) => n.as_f64().and_then(|f| {
                [-1_i8, 0, 1]
                    .into_iter()
                    .find(|s| (f64::from(*s) - f).abs() < f64::EPSILON)
            }),
            Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                "negative" => Some(-1),
                "neutral" => Some(0),
                "positive" => Some(1),
                _ => None,
            },
            _ => None,
        };
        stance.ok_or_else(|| {
            ContractError::invalid(
                self.at(key),
                "must be -1, 0 or 1 (or \"negative\", \"neutral\", \"positive\")",
                value,
            )
        })
    }

    /// A string that may be absent or null (read as empty), trimmed.
    fn optional_text(&self, key: &str) -> Result<String, ContractError> {
        match self.fields.get(key).unwrap_or(&Value::Null) {
            Value::Null => Ok(String::new()),
            Value::String(s) => Ok(s.trim().to_owned()),
            other => Err(ContractError::invalid(
                self.at(key),
                "must be a string",
                other,
            )),
        }
    }
}
