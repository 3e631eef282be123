//! Two-stage strategy → node selection (seed 000 Path 2, "D2") with full score decomposition
//! (Path 18).
//!
//! Stage 1 ranks every strategy on global signals: `final = base × phase multiplier + bonus`.
//! Stage 2 runs only for the winner, only when it is node-bound and node signals exist, and
//! ranks nodes on node-scoped weights without phase terms. Tied strategies keep the
//! methodology's order; tied nodes go to the newest (the reverse of their creation order),
//! since the concept the respondent raised last is the one the interview should follow. A
//! ranking is total and deterministic.

pub mod keys;

use serde::{Deserialize, Serialize};

use crate::config::{Methodology, NodeBinding, Strategy};
use crate::domain::{NodeSignals, Phase, SignalValue, Signals};
use crate::signals::catalog::is_node_key;

/// One signal's part in a candidate's base score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignalContribution {
    /// The weight key, qualifier included (`llm.response_depth.surface`).
    pub name: String,
    /// The resolved value: a boolean for qualified keys, else the signal's value.
    pub value: SignalValue,
    pub weight: f64,
    pub contribution: f64,
}

/// One scored candidate: a strategy (stage 1, empty `node_id`) or a node (stage 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredCandidate {
    pub strategy: String,
    pub node_id: String,
    pub signal_contributions: Vec<SignalContribution>,
    /// Sum of the contributions.
    pub base_score: f64,
    /// Phase multiplier (stage 1); always 1.0 in stage 2.
    pub phase_multiplier: f64,
    /// Phase bonus (stage 1); always 0.0 in stage 2.
    pub phase_bonus: f64,
    /// `base_score × phase_multiplier + phase_bonus`.
    pub final_score: f64,
    /// 1 = best.
    pub rank: u32,
    pub selected: bool,
}

impl ScoredCandidate {
    /// 1 for strategy candidates, 2 for node candidates.
    pub fn stage(&self) -> u8 {
        if self.node_id.is_empty() { 1 } else { 2 }
    }
}

/// The outcome of both stages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    pub phase: Option<Phase>,
    pub strategy: String,
    /// `None` for node-free strategies or when no node signals exist.
    pub node_id: Option<String>,
    /// `(strategy, final score)` for every strategy in rank order.
    pub alternatives: Vec<(String, f64)>,
    /// Stage-1 candidates in rank order.
    pub strategies: Vec<ScoredCandidate>,
    /// Stage-2 candidates in rank order; empty when stage 2 did not run.
    pub nodes: Vec<ScoredCandidate>,
}

impl Selection {
    /// Stage 1 then stage 2 entries, the seed's `score_decomposition` list.
    pub fn decomposition(&self) -> Vec<ScoredCandidate> {
        self.strategies.iter().chain(&self.nodes).cloned().collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoringError {
    #[error("methodology '{0}' has no strategies to rank")]
    NoStrategies(String),
}

/// Weight keys with their weights, in file order.
pub type Weights<'a> = Vec<(&'a str, f64)>;

/// Splits a strategy's weights into `(global, node-scoped)` by key prefix.
pub fn partition_signal_weights(strategy: &Strategy) -> (Weights<'_>, Weights<'_>) {
    strategy.weights().partition(|(k, _)| !is_node_key(k))
}

/// Scores weights against signals; returns the contributions of present signals and their sum.
pub fn score_weights<'a>(
    weights: impl IntoIterator<Item = (&'a str, f64)>,
    signals: &Signals,
) -> (Vec<SignalContribution>, f64) {
    let mut contributions = Vec::new();
    let mut base = 0.0;
    for (key, weight) in weights {
        let Some(value) = keys::resolve(key, signals) else {
            continue;
        };
        let contribution = keys::contribution(&value, weight);
        base += contribution;
        contributions.push(SignalContribution {
            name: key.to_owned(),
            value,
            weight,
            contribution,
        });
    }
    (contributions, base)
}

/// Stage 1: every strategy scored on global signals, with phase terms when `phase` is known.
pub fn rank_strategies(
    methodology: &Methodology,
    signals: &Signals,
    phase: Option<Phase>,
) -> Vec<ScoredCandidate> {
    let phase_cfg = phase.and_then(|p| methodology.phase(p));
    let candidates = methodology.strategies.iter().map(|s| {
        let (global, _) = partition_signal_weights(s);
        let (signal_contributions, base_score) = score_weights(global, signals);
        let phase_multiplier = phase_cfg
            .and_then(|c| c.signal_weights.get(&s.name))
            .copied()
            .unwrap_or(1.0);
        let phase_bonus = phase_cfg
            .and_then(|c| c.phase_bonuses.get(&s.name))
            .copied()
            .unwrap_or(0.0);
        ScoredCandidate {
            strategy: s.name.clone(),
            node_id: String::new(),
            signal_contributions,
            base_score,
            phase_multiplier,
            phase_bonus,
            final_score: base_score * phase_multiplier + phase_bonus,
            rank: 0,
            selected: false,
        }
    });
    finish_ranking(candidates.collect())
}

/// Stage 2: nodes scored on the strategy's node-scoped weights, no phase terms.
/// `node_signals` is in creation order; tied nodes rank newest first.
pub fn rank_nodes_for_strategy(
    strategy: &Strategy,
    node_signals: &NodeSignals,
) -> Vec<ScoredCandidate> {
    let (_, node_weights) = partition_signal_weights(strategy);
    let candidates = node_signals.iter().rev().map(|(node_id, signals)| {
        let (signal_contributions, base_score) =
            score_weights(node_weights.iter().copied(), signals);
        ScoredCandidate {
            strategy: strategy.name.clone(),
            node_id: node_id.clone(),
            signal_contributions,
            base_score,
            phase_multiplier: 1.0,
            phase_bonus: 0.0,
            final_score: base_score,
            rank: 0,
            selected: false,
        }
    });
    finish_ranking(candidates.collect())
}

/// Sorts by final score, best first; the sort is stable so ties keep input order. NaN scores
/// (impossible from validated weights, but a signals file could carry one) sort last.
fn finish_ranking(mut candidates: Vec<ScoredCandidate>) -> Vec<ScoredCandidate> {
    candidates.sort_by(|a, b| sort_key(b.final_score).total_cmp(&sort_key(a.final_score)));
    for (i, c) in candidates.iter_mut().enumerate() {
        c.rank = u32::try_from(i + 1).unwrap_or(u32::MAX);
        c.selected = i == 0;
    }
    candidates
}

fn sort_key(score: f64) -> f64 {
    if score.is_nan() {
        f64::NEG_INFINITY
    } else {
        score
    }
}

/// Both stages: the winning strategy, its focus node when node-bound, and the decomposition.
pub fn select(
    methodology: &Methodology,
    signals: &Signals,
    node_signals: &NodeSignals,
    phase: Option<Phase>,
) -> Result<Selection, ScoringError> {
    let strategies = rank_strategies(methodology, signals, phase);
    let best = strategies
        .first()
        .ok_or_else(|| ScoringError::NoStrategies(methodology.method.name.clone()))?;
    let strategy = methodology
        .strategy(&best.strategy)
        .ok_or_else(|| ScoringError::NoStrategies(methodology.method.name.clone()))?;
    select_node(strategy, strategies.clone(), node_signals, phase)
}

/// Stage 2 for a given strategy (the winner, or a researcher's override).
pub fn select_node(
    strategy: &Strategy,
    strategies: Vec<ScoredCandidate>,
    node_signals: &NodeSignals,
    phase: Option<Phase>,
) -> Result<Selection, ScoringError> {
    let nodes = if strategy.node_binding == NodeBinding::None || node_signals.is_empty() {
        Vec::new()
    } else {
        rank_nodes_for_strategy(strategy, node_signals)
    };
    Ok(Selection {
        phase,
        strategy: strategy.name.clone(),
        node_id: nodes.first().map(|n| n.node_id.clone()),
        alternatives: strategies
            .iter()
            .map(|c| (c.strategy.clone(), c.final_score))
            .collect(),
        strategies,
        nodes,
    })
}

#[cfg(test)]
mod tests;
