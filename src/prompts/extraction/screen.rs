//! Screening a parsed extraction against the answer it came from: the check both extraction
//! paths (LLM and offline) pass before anything reaches the graph.
//!
//! [`parse_extraction_reply`](super::parse_extraction_reply) checks the reply's shape; this
//! checks its content. It drops, and names with a reason:
//! - concepts whose label is a placeholder: empty after normalisation, only dots or other
//!   punctuation (`...`, `…`), a word of the reply format itself (`label`, `concept`,
//!   `source_quote`, …), or one of the methodology's own node or edge type names in any case
//!   or spacing (`Functional Consequence`, `terminal-value`);
//! - concepts whose `source_quote` is not in the answer once both are normalised (lowercase,
//!   curly quotes straightened, runs of whitespace collapsed, outer whitespace trimmed). An
//!   **empty quote is rejected too**: every concept must rest on words the respondent actually
//!   said, and a model that leaves the quote empty has shown nothing it read;
//! - relationships with an endpoint that names a dropped concept (and no kept one), or that is
//!   itself a placeholder. Endpoints naming concepts outside this extraction (labels already
//!   in the graph) are left to the graph update, which knows them.
//!
//! Kept items keep their order. The pipeline retries the LLM once with
//! [`rejection_feedback`] appended to the prompt; the offline path never produces a rejected
//! item, and screening it is a guard that keeps both paths under one contract.

use std::collections::HashSet;

use super::Extraction;
use crate::config::Methodology;

/// Words of the reply format that a model copies into labels instead of content.
const FORMAT_WORDS: [&str; 14] = [
    "label",
    "concept",
    "concepts",
    "node",
    "node type",
    "edge",
    "edge type",
    "relationship",
    "source",
    "target",
    "source quote",
    "string",
    "example",
    "n a",
];

/// One item [`screen_extraction`] dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// Where the item sat in the reply and what it said: `concepts[2] "..."`,
    /// `relationships[0] "creamy" -> "treat"`.
    pub item: String,
    /// Why it was dropped, in words a model can act on.
    pub reason: String,
}

impl std::fmt::Display for Rejection {
    /// `concepts[2] "...": a placeholder, not a concept`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.item, self.reason)
    }
}

/// Drops placeholder labels, quotes that are not in the answer and relationships left without
/// an endpoint; names each rejection (see the module docs for the rules).
pub fn screen_extraction(
    extraction: Extraction,
    answer: &str,
    methodology: &Methodology,
) -> (Extraction, Vec<Rejection>) {
    let answer_norm = normalise_text(answer);
    let reserved = reserved_names(methodology);
    let mut rejections = Vec::new();
    let mut kept = Vec::with_capacity(extraction.concepts.len());
    let mut dropped_labels: HashSet<String> = HashSet::new();
    for (i, concept) in extraction.concepts.into_iter().enumerate() {
        let item = format!("concepts[{i}] \"{}\"", concept.label);
        let reason = placeholder_reason(&concept.label, &reserved)
            .or_else(|| quote_reason(&concept.source_quote, &answer_norm));
        match reason {
            Some(reason) => {
                dropped_labels.insert(normalise_text(&concept.label));
                rejections.push(Rejection { item, reason });
            }
            None => kept.push(concept),
        }
    }
    let kept_labels: HashSet<String> = kept.iter().map(|c| normalise_text(&c.label)).collect();
    let mut relationships = Vec::with_capacity(extraction.relationships.len());
    for (i, rel) in extraction.relationships.into_iter().enumerate() {
        let item = format!(
            "relationships[{i}] \"{}\" -> \"{}\"",
            rel.source, rel.target
        );
        let endpoint_reason = |end: &str, label: &str| -> Option<String> {
            if let Some(why) = placeholder_reason(label, &reserved) {
                return Some(format!("{end} {why}"));
            }
            let key = normalise_text(label);
            (dropped_labels.contains(&key) && !kept_labels.contains(&key))
                .then(|| format!("{end} \"{label}\" names a concept that was dropped"))
        };
        let reason = endpoint_reason("source", &rel.source)
            .or_else(|| endpoint_reason("target", &rel.target));
        match reason {
            Some(reason) => rejections.push(Rejection { item, reason }),
            None => relationships.push(rel),
        }
    }
    let screened = Extraction {
        concepts: kept,
        relationships,
    };
    (screened, rejections)
}

/// The text appended to the extraction prompt for the single retry: every rejection with its
/// reason, then what to do instead. Empty when nothing was rejected.
pub fn rejection_feedback(rejections: &[Rejection]) -> String {
    if rejections.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "\n\n## Your previous reply\nThese items of your previous reply were rejected:\n",
    );
    for r in rejections {
        text.push_str(&format!("- {}: {}\n", r.item, r.reason));
    }
    text.push_str(
        "Reply again with the whole JSON object. Every label must be the respondent's own idea \
         in their words, never a placeholder, an example value or a node or edge type name. \
         Every source_quote must be copied exactly from the respondent's answer. Relationships \
         may only connect concepts you keep.",
    );
    text
}

/// Lowercase, curly quotes straightened, whitespace runs collapsed to one space, trimmed.
pub(crate) fn normalise_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{02BC}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            other => other,
        };
        out.extend(c.to_lowercase());
    }
    out
}

/// A name compared ignoring case, spacing and punctuation: `Functional Consequence`,
/// `functional_consequence` and `functional-consequence` are one name.
fn squeeze(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The format words and the methodology's node and edge type names, squeezed.
fn reserved_names(methodology: &Methodology) -> HashSet<String> {
    let ontology = &methodology.ontology;
    FORMAT_WORDS
        .iter()
        .map(|w| squeeze(w))
        .chain(ontology.nodes.iter().map(|n| squeeze(&n.name)))
        .chain(ontology.edges.iter().map(|e| squeeze(&e.name)))
        .collect()
}

fn placeholder_reason(label: &str, reserved: &HashSet<String>) -> Option<String> {
    let key = squeeze(label);
    if key.is_empty() {
        return Some(format!(
            "placeholder label \"{}\": no words left after normalisation",
            label.trim()
        ));
    }
    reserved.contains(&key).then(|| {
        format!(
            "placeholder label \"{}\": a word of the reply format or a type name of the \
             ontology, not the respondent's idea",
            label.trim()
        )
    })
}

fn quote_reason(quote: &str, answer_norm: &str) -> Option<String> {
    let quote_norm = normalise_text(quote);
    if quote_norm.is_empty() {
        return Some("empty source_quote: it must be the respondent's words, copied".to_owned());
    }
    (!answer_norm.contains(&quote_norm)).then(|| {
        format!(
            "source_quote \"{}\" is not in the respondent's answer",
            quote.trim()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::surface::{ExtractedConcept, ExtractedRelationship};

    fn mec() -> Methodology {
        crate::config::shipped_methodology("means_end_chain")
    }

    fn concept(label: &str, quote: &str) -> ExtractedConcept {
        ExtractedConcept {
            label: label.into(),
            node_type: "attribute".into(),
            confidence: 0.9,
            stance: 0,
            source_quote: quote.into(),
        }
    }

    fn rel(source: &str, target: &str) -> ExtractedRelationship {
        ExtractedRelationship {
            source: source.into(),
            target: target.into(),
            edge_type: "leads_to".into(),
            confidence: 0.8,
        }
    }

    const ANSWER: &str = "I buy it because it\u{2019}s so   creamy.\nIt froths well.";

    #[test]
    fn keeps_real_concepts_with_normalised_quotes() {
        let extraction = Extraction {
            concepts: vec![
                concept("creamy texture", "It's so creamy"),
                concept("froths well", "it froths WELL"),
            ],
            relationships: vec![rel("creamy texture", "froths well")],
        };
        let (screened, rejections) = screen_extraction(extraction.clone(), ANSWER, &mec());
        assert!(rejections.is_empty(), "{rejections:?}");
        assert_eq!(screened, extraction);
    }

    #[test]
    fn drops_placeholders_and_type_names_naming_each() {
        let extraction = Extraction {
            concepts: vec![
                concept("...", "creamy"),
                concept("Label", "creamy"),
                concept("Functional Consequence", "creamy"),
                concept("terminal-value", "creamy"),
                concept(" leads_to ", "creamy"),
                concept("…", "creamy"),
                concept("creamy", "creamy"),
            ],
            relationships: vec![],
        };
        let (screened, rejections) = screen_extraction(extraction, ANSWER, &mec());
        assert_eq!(screened.concepts.len(), 1);
        assert_eq!(rejections.len(), 6);
        assert_eq!(rejections[0].item, "concepts[0] \"...\"");
        assert!(
            rejections[0].reason.contains("placeholder"),
            "{rejections:?}"
        );
        assert_eq!(rejections[2].item, "concepts[2] \"Functional Consequence\"");
        assert!(rejections[2].reason.contains("type name"));
    }

    #[test]
    fn drops_quotes_not_in_the_answer_and_empty_quotes() {
        let extraction = Extraction {
            concepts: vec![
                concept("cheap", "it is cheap"),
                concept("creamy", ""),
                concept("froths well", "froths well"),
            ],
            relationships: vec![
                rel("cheap", "froths well"),
                rel("froths well", "being capable"),
                rel("...", "froths well"),
            ],
        };
        let (screened, rejections) = screen_extraction(extraction, ANSWER, &mec());
        let labels: Vec<&str> = screened.concepts.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["froths well"]);
        assert!(
            rejections[0]
                .reason
                .contains("not in the respondent's answer")
        );
        assert!(rejections[1].reason.starts_with("empty source_quote"));
        // The link to a dropped concept goes; a link to a label outside the reply stays.
        assert_eq!(
            screened.relationships,
            vec![rel("froths well", "being capable")]
        );
        assert_eq!(
            rejections[2].item,
            "relationships[0] \"cheap\" -> \"froths well\""
        );
        assert!(rejections[2].reason.contains("dropped"));
        assert!(rejections[3].reason.starts_with("source placeholder"));
    }

    #[test]
    fn a_dropped_label_that_is_also_kept_keeps_its_links() {
        let extraction = Extraction {
            concepts: vec![concept("creamy", "not said"), concept("creamy", "creamy")],
            relationships: vec![rel("creamy", "froths well")],
        };
        let (screened, rejections) = screen_extraction(extraction, ANSWER, &mec());
        assert_eq!(rejections.len(), 1);
        assert_eq!(screened.relationships.len(), 1);
    }

    #[test]
    fn feedback_lists_every_rejection() {
        assert_eq!(rejection_feedback(&[]), "");
        let text = rejection_feedback(&[Rejection {
            item: "concepts[0] \"...\"".into(),
            reason: "placeholder label".into(),
        }]);
        assert!(text.contains("- concepts[0] \"...\": placeholder label"));
        assert!(text.contains("copied exactly"));
    }

    #[test]
    fn normalisation_collapses_space_case_and_quotes() {
        assert_eq!(
            normalise_text("  It\u{2019}s\n  SO  creamy "),
            "it's so creamy"
        );
    }
}
