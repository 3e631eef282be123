//! Persona YAML: a synthetic respondent's character for simulations.

use serde::{Deserialize, Serialize};

use super::error::Problem;

/// Tolerance on the response-length distribution's sum; authors write two-decimal shares.
const DISTRIBUTION_TOLERANCE: f64 = 1e-6;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Persona {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub traits: Vec<String>,
    #[serde(default)]
    pub speech_pattern: String,
    pub response_patterns: ResponsePatterns,
    #[serde(default)]
    pub deflection_patterns: Vec<String>,
    /// Probability of deflecting any given question.
    #[serde(default)]
    pub deflection_rate: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fatigue: Option<Fatigue>,
}

/// Probability distribution over answer lengths; must sum to 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResponsePatterns {
    #[serde(default)]
    pub detailed: f64,
    #[serde(default)]
    pub medium: f64,
    #[serde(default)]
    pub brief: f64,
    #[serde(default)]
    pub acknowledgment: f64,
}

impl ResponsePatterns {
    pub fn as_array(&self) -> [(&'static str, f64); 4] {
        [
            ("detailed", self.detailed),
            ("medium", self.medium),
            ("brief", self.brief),
            ("acknowledgment", self.acknowledgment),
        ]
    }
}

/// Answers get shorter from `start_turn` on, moving probability mass towards brief answers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fatigue {
    pub start_turn: u32,
    pub brevity_increase_per_turn: f64,
}

impl Persona {
    pub fn validate(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        if self.id.trim().is_empty() {
            problems.push(Problem::new("id", "must not be empty"));
        }
        let mut sum = 0.0;
        for (name, p) in self.response_patterns.as_array() {
            if !(0.0..=1.0).contains(&p) {
                problems.push(Problem::new(
                    format!("response_patterns.{name}"),
                    format!("{p} is not a probability in [0, 1]"),
                ));
            }
            sum += p;
        }
        if (sum - 1.0).abs() > DISTRIBUTION_TOLERANCE {
            problems.push(Problem::new(
                "response_patterns",
                format!(
                    "probabilities sum to {}, not 1",
                    crate::domain::format_number(sum)
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.deflection_rate) {
            problems.push(Problem::new(
                "deflection_rate",
                format!("{} is not a probability in [0, 1]", self.deflection_rate),
            ));
        }
        if let Some(f) = &self.fatigue
            && !(0.0..=1.0).contains(&f.brevity_increase_per_turn)
        {
            problems.push(Problem::new(
                "fatigue.brevity_increase_per_turn",
                "must lie in [0, 1]",
            ));
        }
        problems
    }
}
