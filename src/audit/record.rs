//! What the audit trail keeps of a pipeline [`Event`], and how one becomes a JSON line.
//!
//! [`Observed::from_event`] runs on the pipeline's thread, so it copies only the few fields a
//! line needs (a finished turn's result is reduced to its decision). The line is built on the
//! writer thread by [`Line::to_json`].

use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

use crate::domain::SignalValue;
use crate::llm::Role;
use crate::pipeline::contracts::{Alternative, Focus};
use crate::pipeline::{Event, Stage};
use crate::scoring::ScoredCandidate;

/// How many ranked strategies a `strategy_decision` line lists (the winner included).
///
/// Three shows the winner and its closest rivals, which is what a reader checks when a choice
/// looks wrong; the full ranking is in the session export.
pub const TOP_ALTERNATIVES: usize = 3;

/// The audited part of one event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Observed {
    StageStarted {
        turn: u32,
        stage: Stage,
    },
    StageFinished {
        turn: u32,
        stage: Stage,
        elapsed: Duration,
        summary: String,
        resumed: bool,
    },
    StageFailed {
        turn: u32,
        stage: Stage,
        error: String,
    },
    LlmCall {
        turn: u32,
        role: Role,
        provider: String,
        model: String,
        tokens_in: u64,
        tokens_out: u64,
        latency: Duration,
        attempts: u32,
        cost_usd: Option<f64>,
        outcome: String,
    },
    Decision {
        turn: u32,
        /// `engine`, or `researcher` for a moderator's override.
        by: &'static str,
        phase: Option<String>,
        strategy: String,
        focus: Option<Focus>,
        alternatives: Vec<Alternative>,
        /// For an override: the question text was edited by hand (no new ranking).
        edited: Option<bool>,
    },
    Termination {
        reason: String,
    },
    Fatal {
        error: String,
    },
}

impl Observed {
    /// The audited part of `event`, or `None` for events the trail does not keep (streamed
    /// question text, the question itself, and variants added after this module).
    pub(crate) fn from_event(event: &Event) -> Option<Self> {
        Some(match event {
            Event::StageStarted { turn, stage } => Self::StageStarted {
                turn: *turn,
                stage: *stage,
            },
            Event::StageFinished {
                turn,
                stage,
                elapsed,
                summary,
                resumed,
            } => Self::StageFinished {
                turn: *turn,
                stage: *stage,
                elapsed: *elapsed,
                summary: summary.clone(),
                resumed: *resumed,
            },
            Event::TurnFailed { turn, stage, error } => Self::StageFailed {
                turn: *turn,
                stage: *stage,
                error: error.clone(),
            },
            Event::LlmCall {
                turn,
                role,
                provider,
                model,
                tokens_in,
                tokens_out,
                latency,
                attempts,
                cost_usd,
                outcome,
            } => Self::LlmCall {
                turn: *turn,
                role: *role,
                provider: provider.clone(),
                model: model.clone(),
                tokens_in: *tokens_in,
                tokens_out: *tokens_out,
                latency: *latency,
                attempts: *attempts,
                cost_usd: *cost_usd,
                outcome: outcome.clone(),
            },
            Event::TurnCompleted(result) => Self::Decision {
                turn: result.turn_number,
                by: "engine",
                edited: None,
                phase: match result.signals.get("meta.interview.phase") {
                    Some(SignalValue::Category(phase)) => Some(phase.clone()),
                    _ => None,
                },
                strategy: result.strategy_selected.clone(),
                focus: result.focus.clone(),
                alternatives: result
                    .strategy_alternatives
                    .iter()
                    .take(TOP_ALTERNATIVES)
                    .cloned()
                    .collect(),
            },
            Event::Overridden {
                turn,
                strategy,
                focus,
                score_decomposition,
                edited,
            } => Self::Decision {
                turn: *turn,
                by: "researcher",
                phase: None,
                strategy: strategy.clone(),
                focus: focus.clone(),
                alternatives: score_decomposition
                    .as_deref()
                    .map(top_strategies)
                    .unwrap_or_default(),
                edited: Some(*edited),
            },
            Event::Finished { reason } => Self::Termination {
                reason: reason.clone(),
            },
            // Streamed text, shown questions, answers and view snapshots are not audited;
            // variants added later are skipped until this module learns them, never a reason
            // to fail a turn.
            _ => return None,
        })
    }

    /// The turn the event belongs to; `None` for session-level events.
    ///
    /// An override's turn is the completed turn whose question it replaced.
    pub(crate) fn turn(&self) -> Option<u32> {
        match self {
            Self::StageStarted { turn, .. }
            | Self::StageFinished { turn, .. }
            | Self::StageFailed { turn, .. }
            | Self::LlmCall { turn, .. }
            | Self::Decision { turn, .. } => Some(*turn),
            Self::Termination { .. } | Self::Fatal { .. } => None,
        }
    }
}

/// One line ready to serialise: the common fields and the event's own.
pub(crate) struct Line<'a> {
    pub at: SystemTime,
    pub session: &'a str,
    pub turn: u32,
    pub event: &'static str,
    pub fields: Map<String, Value>,
}

impl Line<'_> {
    /// `{"ts", "event", "session", "turn", ...fields}` as one JSON text without a newline.
    pub(crate) fn to_json(&self) -> String {
        let mut object = Map::new();
        object.insert("ts".to_owned(), json!(crate::time::rfc3339(self.at)));
        object.insert("event".to_owned(), json!(self.event));
        object.insert("session".to_owned(), json!(self.session));
        object.insert("turn".to_owned(), json!(self.turn));
        for (key, value) in &self.fields {
            object.insert(key.clone(), value.clone());
        }
        Value::Object(object).to_string()
    }
}

/// Milliseconds of a duration as a JSON number.
pub(crate) fn millis(d: Duration) -> Value {
    json!(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The fields of an `llm_call` line. Prompts, replies and keys are never part of an event.
pub(crate) fn llm_fields(call: &Observed) -> Map<String, Value> {
    let Observed::LlmCall {
        role,
        provider,
        model,
        tokens_in,
        tokens_out,
        latency,
        attempts,
        cost_usd,
        outcome,
        ..
    } = call
    else {
        return Map::new();
    };
    object(json!({
        "role": role.as_str(),
        "provider": provider,
        "model": model,
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "latency_ms": millis(*latency),
        "cost_usd": cost_usd,
        "attempts": attempts,
        "retries": attempts.saturating_sub(1),
        "outcome": outcome,
    }))
}

/// The fields of a `strategy_decision` line.
pub(crate) fn decision_fields(decision: &Observed) -> Map<String, Value> {
    let Observed::Decision {
        by,
        phase,
        strategy,
        focus,
        alternatives,
        edited,
        ..
    } = decision
    else {
        return Map::new();
    };
    let mut fields = object(json!({
        "by": by,
        "phase": phase,
        "strategy": strategy,
        "focus": focus,
        "alternatives": alternatives,
    }));
    if let Some(edited) = edited {
        fields.insert("edited".to_owned(), json!(edited));
    }
    fields
}

/// The best [`TOP_ALTERNATIVES`] stage-1 candidates of a ranking, best first.
fn top_strategies(ranking: &[ScoredCandidate]) -> Vec<Alternative> {
    let mut strategies: Vec<&ScoredCandidate> = ranking.iter().filter(|c| c.stage() == 1).collect();
    strategies.sort_by_key(|c| c.rank);
    strategies
        .into_iter()
        .take(TOP_ALTERNATIVES)
        .map(|c| Alternative {
            strategy: c.strategy.clone(),
            score: c.final_score,
        })
        .collect()
}

/// The members of a JSON object value (empty for anything else).
pub(crate) fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
