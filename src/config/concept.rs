//! Concept YAML: *what* an interview explores, decoupled from *how* (the methodology).
//!
//! The objective may sit at the root or under `context` (seed 001 "Concept Structure"); the
//! legacy `elements` list is accepted and ignored.

use serde::{Deserialize, Serialize};

use super::error::Problem;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Concept {
    pub id: String,
    pub name: String,
    pub methodology: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub context: ConceptContext,
    /// The language the interviews are held in (`en`, `de`, …): picks the speech model and
    /// its language. English when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Legacy field of the original system; always empty for exploratory interviews.
    #[serde(default, skip_serializing)]
    pub elements: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConceptContext {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    /// Short topic anchor used to keep questions on subject.
    #[serde(default)]
    pub topic: String,
    /// Background the interviewer may draw on.
    #[serde(default)]
    pub insight: String,
    #[serde(default)]
    pub description: String,
}

impl Concept {
    /// The research objective, wherever the file put it.
    pub fn objective(&self) -> &str {
        self.objective
            .as_deref()
            .or(self.context.objective.as_deref())
            .unwrap_or_default()
    }

    /// The topic anchor: the explicit topic, else the concept name.
    pub fn topic(&self) -> &str {
        if self.context.topic.is_empty() {
            &self.name
        } else {
            &self.context.topic
        }
    }

    pub fn validate(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        for (path, value) in [
            ("id", &self.id),
            ("name", &self.name),
            ("methodology", &self.methodology),
        ] {
            if value.trim().is_empty() {
                problems.push(Problem::new(path, "must not be empty"));
            }
        }
        if self.objective().trim().is_empty() {
            problems.push(Problem::new(
                "objective",
                "an objective is required, at the root or under `context`",
            ));
        }
        problems
    }
}
