//! The extraction prompt (stage 3): the methodology's ontology and guidance in the system
//! message, the answer and the graph's existing labels in the user message (seed 000 Paths 14
//! and 15, seed 001 "Concept-Driven Coverage").
//!
//! The reply contract and its parser are in [`reply`], the content screen both extraction paths
//! share ([`screen_extraction`]) in [`screen`]; resolving labels against the graph is
//! `graph::surface`'s job, not this module's.

mod reply;
mod screen;

use serde::{Deserialize, Serialize};

use super::Prompt;
use super::guidance::render_guidance;
use super::window::one_line;
use crate::config::{Concept, EdgeType, Guidance, Methodology, NodeType};
use crate::graph::surface::{ExtractedConcept, ExtractedRelationship};

pub use reply::parse_extraction_reply;
pub use screen::{Rejection, rejection_feedback, screen_extraction};

/// Extraction temperature (seed 001 "Three-Client Architecture"): low, because the same answer
/// should yield the same graph on a retry.
pub const EXTRACTION_TEMPERATURE: f32 = 0.3;
/// Existing labels shown to the model. Enough for the concepts of the last few turns, which are
/// the ones an answer links back to; the whole graph would crowd the prompt in long interviews.
pub const MAX_EXISTING_LABELS: usize = 30;
/// Most concepts accepted from one reply. A long answer yields a dozen or two; more is a model
/// listing every noun, and is refused rather than silently cut.
pub const MAX_CONCEPTS: usize = 64;
/// Most relationships accepted from one reply: two per concept at the concept bound.
pub const MAX_RELATIONSHIPS: usize = 128;
/// Longest label accepted. Labels are short phrases by the naming convention; this only stops a
/// model that pastes the whole answer into a label.
pub const MAX_LABEL_CHARS: usize = 200;

/// What the extraction prompt is built from.
#[derive(Debug, Clone, Copy)]
pub struct ExtractionInput<'a> {
    pub methodology: &'a Methodology,
    pub concept: &'a Concept,
    /// The respondent's answer to extract from.
    pub answer: &'a str,
    /// The question being answered; empty when there is none (an unprompted first turn).
    pub question: &'a str,
    /// Labels already in the session graph, oldest first; only the last
    /// [`MAX_EXISTING_LABELS`] are shown, since recent concepts are what an answer links to.
    pub existing_labels: &'a [&'a str],
    /// Rendered SRL hints (discourse relations, predicate frames); empty when SRL is off.
    pub srl_hints: &'a str,
}

/// A validated extraction reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    pub concepts: Vec<ExtractedConcept>,
    pub relationships: Vec<ExtractedRelationship>,
}

/// The extraction prompt for one answer.
pub fn extraction_prompt(input: &ExtractionInput<'_>) -> Prompt {
    Prompt {
        system: extraction_system(input.methodology, input.concept),
        user: extraction_user(input),
        temperature: EXTRACTION_TEMPERATURE,
    }
}

fn extraction_system(methodology: &Methodology, concept: &Concept) -> String {
    let method = &methodology.method;
    let mut p = format!(
        "You read one answer from a qualitative research interview and record what the \
         respondent said as a small knowledge graph: the concepts they expressed and the links \
         they drew between them. The interview follows the {} method. {}\n\n",
        method.name,
        method.goal.trim()
    );
    p.push_str("## Research topic\n");
    p.push_str(&format!("Topic: {}\n", concept.topic().trim()));
    p.push_str(&format!("Objective: {}\n\n", concept.objective().trim()));
    p.push_str(
        "## Node types\nUse exactly these type names. Lower levels are more concrete; a terminal \
         type ends a chain.\n",
    );
    for node in &methodology.ontology.nodes {
        p.push_str(&node_type_entry(node));
    }
    p.push_str("\n## Edge types\n");
    for edge in &methodology.ontology.edges {
        p.push_str(&edge_type_entry(edge));
    }
    let ontology = &methodology.ontology;
    let sections: [(&str, &Guidance); 4] = [
        ("Extraction guidelines", &ontology.extraction_guidelines),
        ("Relationship examples", &ontology.relationship_examples),
        (
            "What to extract and what to leave out",
            &ontology.extractability_criteria,
        ),
        ("Naming concepts", &ontology.concept_naming_convention),
    ];
    for (title, guidance) in sections {
        let text = render_guidance(guidance);
        if !text.is_empty() {
            p.push_str(&format!("\n## {title}\n{text}\n"));
        }
    }
    p.push_str(&reply_contract(methodology));
    p
}

fn node_type_entry(node: &NodeType) -> String {
    let terminal = if node.terminal { ", terminal" } else { "" };
    let mut entry = format!(
        "- {} (level {}{terminal}): {}\n",
        node.name,
        node.level,
        node.description.trim()
    );
    if !node.examples.is_empty() {
        let examples: Vec<String> = node.examples.iter().map(|e| format!("\"{e}\"")).collect();
        entry.push_str(&format!("  Examples: {}\n", examples.join(", ")));
    }
    entry
}

fn edge_type_entry(edge: &EdgeType) -> String {
    let side = |t: &str| {
        if t == "*" {
            "any type".to_owned()
        } else {
            t.to_owned()
        }
    };
    let mut entry = format!("- {}: {}\n", edge.name, edge.description.trim());
    if !edge.permitted_connections.is_empty() {
        let pairs: Vec<String> = edge
            .permitted_connections
            .iter()
            .map(|(s, t)| format!("{} → {}", side(s), side(t)))
            .collect();
        entry.push_str(&format!(
            "  Allowed (source → target): {}\n",
            pairs.join(", ")
        ));
    }
    entry
}

fn reply_contract(methodology: &Methodology) -> String {
    let node_types = reply::node_type_names(methodology).join(", ");
    let edge_types = reply::edge_type_names(methodology).join(", ");
    format!(
        "\n## Reply format\n\
         Reply with one JSON object and nothing else:\n\
         {{\"concepts\": [{{\"label\": \"...\", \"node_type\": \"...\", \"confidence\": 0.9, \
         \"stance\": 0, \"source_quote\": \"...\"}}], \"relationships\": [{{\"source\": \"...\", \
         \"target\": \"...\", \"edge_type\": \"...\", \"confidence\": 0.8}}]}}\n\n\
         - label: the concept as a short phrase that follows the naming rules; at most \
         {MAX_LABEL_CHARS} characters.\n\
         - node_type: one of {node_types}.\n\
         - confidence: how sure you are that the respondent expressed this, from 0 to 1.\n\
         - stance: 1 when the respondent views it favourably, -1 unfavourably, 0 when neutral \
         or unclear.\n\
         - source_quote: the respondent's words the concept rests on, copied exactly.\n\
         - source and target: labels of concepts in this reply or of concepts already in the \
         graph; edge_type: one of {edge_types}, and only between the node types allowed above.\n\
         - At most {MAX_CONCEPTS} concepts and {MAX_RELATIONSHIPS} relationships. When nothing \
         in the answer is extractable, reply {{\"concepts\": [], \"relationships\": []}}.\n"
    )
}

fn extraction_user(input: &ExtractionInput<'_>) -> String {
    let mut p = String::new();
    if !input.question.trim().is_empty() {
        p.push_str(&format!(
            "## Interviewer's question\n{}\n\n",
            input.question.trim()
        ));
    }
    p.push_str(&format!(
        "## Respondent's answer\n{}\n\n",
        input.answer.trim()
    ));
    let labels = recent_labels(input.existing_labels);
    if !labels.is_empty() {
        p.push_str(
            "## Concepts already in the graph\nWhen the answer returns to one of these ideas, \
             reuse its label exactly; any of them may be the source or target of a \
             relationship.\n",
        );
        for label in labels {
            p.push_str(&format!("- {label}\n"));
        }
        p.push('\n');
    }
    if !input.srl_hints.trim().is_empty() {
        p.push_str(&format!(
            "## Linguistic hints\nDerived automatically from the answer's grammar and possibly \
             wrong. Use them to notice causal and purposive links, not as concepts.\n{}\n\n",
            input.srl_hints.trim()
        ));
    }
    p.push_str("Extract the concepts and relationships from the respondent's answer.");
    p
}

/// The newest [`MAX_EXISTING_LABELS`] non-empty labels, oldest first, each on one line.
fn recent_labels(labels: &[&str]) -> Vec<String> {
    let skip = labels.len().saturating_sub(MAX_EXISTING_LABELS);
    labels
        .iter()
        .skip(skip)
        .map(|l| one_line(l))
        .filter(|l| !l.is_empty())
        .collect()
}
