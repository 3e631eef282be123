//! Replaying a stored session's strategy decisions under a methodology, without any model
//! call and without changing the session: every completed turn is scored again from the
//! global and node signals it stored, by the same two-stage selection the pipeline ran.
//!
//! Under the session's own methodology a replay reproduces every stored decision; under an
//! edited one (`--methodology`, `--set`) it says which decisions would have changed. The
//! respondent's answers are held fixed, so a turn after the first changed decision is
//! counterfactual ("would have chosen X given the same signals"), and node-state signals that
//! depend on past focus are the stored ones.

use std::collections::BTreeMap;

use serde::Serialize;

use super::data::{SessionData, TurnRecord};
use crate::config::{Methodology, Problem, SignalNames};
use crate::domain::{NodeSignals, Phase, SignalValue, Signals};
use crate::pipeline::TurnResult;
use crate::scoring::{ScoredCandidate, Selection, select};

/// What a replay says of its own limits, in its output and the README.
pub const LIMITS: &str = "A replay holds the respondent's answers fixed: turns after the first \
     changed decision are counterfactual (the engine would have chosen so given the same \
     signals), and node-state signals that depend on past focus are the stored ones.";

/// One decision: a strategy and, for a node-bound one, the node it targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub strategy: String,
    /// Tracking key of the focus node; empty when the strategy targets no node.
    pub node_id: String,
    /// The node's label, when the session knows it.
    pub node_label: String,
}

/// A signal contribution that a change of methodology moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    pub strategy: String,
    pub node_id: String,
    pub signal: String,
    pub stored: f64,
    pub replayed: f64,
}

/// One turn, stored and replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnReplay {
    pub turn: u32,
    /// The engine's stored decision (the rank-1 candidates of the stored decomposition).
    pub stored: Decision,
    pub replayed: Decision,
    pub changed: bool,
    /// A researcher replaced the engine's question in this turn (the stored decision is
    /// still the engine's own).
    pub overridden: bool,
    /// The replayed top three strategies with their final scores.
    pub top: Vec<(String, f64)>,
    /// For a changed turn, the contributions that moved the most (largest |Δ| first).
    pub moved: Vec<Moved>,
    /// The replayed decomposition, in the shape of `TurnResult.score_decomposition`.
    pub score_decomposition: Vec<ScoredCandidate>,
}

/// A whole replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    pub session_id: String,
    pub methodology: String,
    pub turns: Vec<TurnReplay>,
    /// Strategy → turns, as stored and as replayed.
    pub usage_before: BTreeMap<String, u32>,
    pub usage_after: BTreeMap<String, u32>,
    pub limits: &'static str,
}

impl Replay {
    pub fn changed(&self) -> usize {
        self.turns.iter().filter(|t| t.changed).count()
    }
}

/// A turn that cannot be replayed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplayError {
    #[error("turn {turn}: {reason}")]
    Turn { turn: u32, reason: String },
    #[error("--set '{spec}': {reason}")]
    Set { spec: String, reason: String },
    #[error("the edited methodology is not valid: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Problem>),
}

/// Contributions moved by at most this much are not reported.
const MOVED_EPSILON: f64 = 1e-12;
/// How many moved contributions a changed turn lists.
const MOVED_SHOWN: usize = 3;

/// Replays every completed turn of `data` under `methodology`.
pub fn replay(data: &SessionData, methodology: &Methodology) -> Result<Replay, ReplayError> {
    let mut turns = Vec::with_capacity(data.turns.len());
    let mut usage_before = BTreeMap::new();
    let mut usage_after = BTreeMap::new();
    for record in &data.turns {
        let turn = replay_turn(data, record, methodology)?;
        *usage_before
            .entry(turn.stored.strategy.clone())
            .or_default() += 1;
        *usage_after
            .entry(turn.replayed.strategy.clone())
            .or_default() += 1;
        turns.push(turn);
    }
    Ok(Replay {
        session_id: data.session.id.clone(),
        methodology: methodology.method.name.clone(),
        turns,
        usage_before,
        usage_after,
        limits: LIMITS,
    })
}

/// A completed turn scored again under `methodology`, from the signals and node signals it
/// stored, as stage 6 scored it (turn 1 targets no node; the phase is the stored one).
pub fn rescore(result: &TurnResult, methodology: &Methodology) -> Result<Selection, String> {
    let phase = match result.signals.get("meta.interview.phase") {
        Some(SignalValue::Category(c)) => {
            Some(Phase::parse(c).ok_or_else(|| format!("stored phase '{c}' is not a phase"))?)
        }
        _ => None,
    };
    let node_signals = if result.turn_number <= 1 {
        Vec::new()
    } else {
        stored_node_signals(&result.node_signals)?
    };
    select(methodology, &result.signals, &node_signals, phase).map_err(|e| e.to_string())
}

/// The engine's decision in a decomposition: its rank-1 strategy and that strategy's rank-1
/// node (empty when it ranked none).
pub fn decided(decomposition: &[ScoredCandidate]) -> Option<(String, String)> {
    let strategy = decomposition
        .iter()
        .find(|c| c.node_id.is_empty() && c.rank == 1)?;
    let node_id = decomposition
        .iter()
        .find(|c| !c.node_id.is_empty() && c.rank == 1 && c.strategy == strategy.strategy)
        .map(|c| c.node_id.clone())
        .unwrap_or_default();
    Some((strategy.strategy.clone(), node_id))
}

/// How many of `results` would decide otherwise under `methodology` (a turn that cannot be
/// re-scored counts as unchanged).
pub fn changed_decisions<'a>(
    results: impl IntoIterator<Item = &'a TurnResult>,
    methodology: &Methodology,
) -> usize {
    results
        .into_iter()
        .filter(|r| {
            rescore(r, methodology)
                .is_ok_and(|s| decided(&s.decomposition()) != decided(&r.score_decomposition))
        })
        .count()
}

fn replay_turn(
    data: &SessionData,
    record: &TurnRecord,
    methodology: &Methodology,
) -> Result<TurnReplay, ReplayError> {
    let turn = record.turn;
    let result = &record.result;
    let fail = |reason: String| ReplayError::Turn { turn, reason };
    let selection = rescore(result, methodology).map_err(fail)?;
    let stored = decision_of(data, &result.score_decomposition)
        .ok_or_else(|| fail("the stored decomposition has no ranked strategy".to_owned()))?;
    let decomposition = selection.decomposition();
    let replayed = decision_of(data, &decomposition)
        .ok_or_else(|| fail("the replay ranked no strategy".to_owned()))?;
    let changed = stored != replayed;
    let top = selection
        .strategies
        .iter()
        .take(3)
        .map(|c| (c.strategy.clone(), c.final_score))
        .collect();
    let moved = if changed {
        moved(&result.score_decomposition, &decomposition)
    } else {
        Vec::new()
    };
    Ok(TurnReplay {
        turn,
        stored,
        replayed,
        changed,
        overridden: record.question_override.is_some(),
        top,
        moved,
        score_decomposition: decomposition,
    })
}

/// The node signals a turn stored (`{node: {signal: value}}`), in stored order: stage 2 breaks
/// ties by that order.
fn stored_node_signals(
    stored: &serde_json::Map<String, serde_json::Value>,
) -> Result<NodeSignals, String> {
    stored
        .iter()
        .map(|(node, signals)| {
            serde_json::from_value::<Signals>(signals.clone())
                .map(|s| (node.clone(), s))
                .map_err(|e| format!("the stored node signals of '{node}' cannot be read: {e}"))
        })
        .collect()
}

/// The rank-1 strategy of a decomposition and its rank-1 node, if it has node candidates.
fn decision_of(data: &SessionData, decomposition: &[ScoredCandidate]) -> Option<Decision> {
    let (strategy, node_id) = decided(decomposition)?;
    Some(Decision {
        strategy,
        node_label: if node_id.is_empty() {
            String::new()
        } else {
            data.node_label(&node_id).to_owned()
        },
        node_id,
    })
}

/// The contributions of candidates present in both decompositions whose value moved, largest
/// |Δ| first (a weight the edit added or removed counts from or to 0).
fn moved(stored: &[ScoredCandidate], replayed: &[ScoredCandidate]) -> Vec<Moved> {
    let mut out = Vec::new();
    for r in replayed {
        let Some(s) = stored
            .iter()
            .find(|s| s.strategy == r.strategy && s.node_id == r.node_id)
        else {
            continue;
        };
        let of = |c: &ScoredCandidate| -> BTreeMap<String, f64> {
            c.signal_contributions
                .iter()
                .map(|x| (x.name.clone(), x.contribution))
                .collect()
        };
        let (before, after) = (of(s), of(r));
        let keys: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
        for key in keys {
            let b = before.get(key).copied().unwrap_or(0.0);
            let a = after.get(key).copied().unwrap_or(0.0);
            if (a - b).abs() > MOVED_EPSILON {
                out.push(Moved {
                    strategy: r.strategy.clone(),
                    node_id: r.node_id.clone(),
                    signal: key.clone(),
                    stored: b,
                    replayed: a,
                });
            }
        }
    }
    out.sort_by(|x, y| {
        (y.replayed - y.stored)
            .abs()
            .total_cmp(&(x.replayed - x.stored).abs())
    });
    out.truncate(MOVED_SHOWN);
    out
}

/// Applies one `--set PATH=NUMBER` edit to `methodology`:
/// `strategies.<name>.signal_weights.<signal key>`, `phases.<phase>.signal_weights.<strategy>`
/// or `phases.<phase>.phase_bonuses.<strategy>`. The weight key may contain dots; the edited
/// methodology is validated like `check` by [`validate_edited`].
pub fn apply_set(methodology: &mut Methodology, spec: &str) -> Result<(), ReplayError> {
    let fail = |reason: String| ReplayError::Set {
        spec: spec.to_owned(),
        reason,
    };
    let (path, value) = spec
        .split_once('=')
        .ok_or_else(|| fail("expected PATH=NUMBER".to_owned()))?;
    let number: f64 = value
        .trim()
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite())
        .ok_or_else(|| fail(format!("'{}' is not a number", value.trim())))?;
    let path = path.trim();
    if let Some(rest) = path.strip_prefix("strategies.") {
        let (name, key) = rest
            .split_once(".signal_weights.")
            .ok_or_else(|| fail(FORMS.to_owned()))?;
        let known: Vec<String> = methodology
            .strategies
            .iter()
            .map(|s| s.name.clone())
            .collect();
        let strategy = methodology
            .strategies
            .iter_mut()
            .find(|s| s.name == name)
            .ok_or_else(|| {
                fail(format!(
                    "no strategy '{name}' (strategies: {})",
                    known.join(", ")
                ))
            })?;
        let value = serde_json::Number::from_f64(number)
            .ok_or_else(|| fail(format!("'{number}' is not a number")))?;
        strategy
            .signal_weights
            .insert(key.to_owned(), serde_json::Value::Number(value));
        return Ok(());
    }
    if let Some(rest) = path.strip_prefix("phases.") {
        let mut parts = rest.splitn(3, '.');
        let (Some(phase), Some(table), Some(strategy)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(fail(FORMS.to_owned()));
        };
        if Phase::parse(phase).is_none() {
            return Err(fail(format!("'{phase}' is not a phase (early, mid, late)")));
        }
        let config = methodology.phases.entry(phase.to_owned()).or_default();
        let map = match table {
            "signal_weights" => &mut config.signal_weights,
            "phase_bonuses" => &mut config.phase_bonuses,
            other => {
                return Err(fail(format!(
                    "'{other}' is not a phase table (signal_weights, phase_bonuses)"
                )));
            }
        };
        map.insert(strategy.to_owned(), number);
        return Ok(());
    }
    Err(fail(FORMS.to_owned()))
}

const FORMS: &str = "expected strategies.<name>.signal_weights.<signal key>=<number>, \
     phases.<phase>.signal_weights.<strategy>=<number> or \
     phases.<phase>.phase_bonuses.<strategy>=<number>";

/// Every problem of an edited methodology, as `check` reports them (with their YAML paths).
pub fn validate_edited(
    methodology: &Methodology,
    signals: &dyn SignalNames,
) -> Result<(), ReplayError> {
    let problems = methodology.validate(signals);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ReplayError::Invalid(problems))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn mec() -> Methodology {
        crate::config::shipped_methodology("means_end_chain")
    }

    #[test]
    fn set_edits_a_weight_with_dots_and_a_phase_table() {
        let mut m = mec();
        let name = m.strategies[0].name.clone();
        apply_set(
            &mut m,
            &format!("strategies.{name}.signal_weights.llm.response_depth.surface=1.25"),
        )
        .unwrap();
        assert_eq!(
            m.strategies[0].signal_weights["llm.response_depth.surface"],
            serde_json::json!(1.25)
        );
        apply_set(&mut m, &format!("phases.mid.phase_bonuses.{name}=0.3")).unwrap();
        assert_eq!(m.phases["mid"].phase_bonuses[&name], 0.3);
        validate_edited(&m, &crate::signals::Catalog).unwrap();
    }

    #[test]
    fn bad_set_edits_say_what_and_where() {
        let mut m = mec();
        let err = |spec: &str| apply_set(&mut mec(), spec).unwrap_err().to_string();
        assert!(err("strategies.nope.signal_weights.x=1").contains("no strategy 'nope'"));
        assert!(err("strategies.deepen.signal_weights.x=abc").contains("'abc' is not a number"));
        assert!(err("phases.midway.phase_bonuses.deepen=1").contains("not a phase"));
        assert!(err("phases.mid.bonus.deepen=1").contains("not a phase table"));
        assert!(err("graph.max_depth=1").contains("expected strategies."));
        assert!(err("strategies.deepen.signal_weights.x").contains("PATH=NUMBER"));
        // A weight on an unknown signal passes the edit and fails validation with its path.
        let name = m.strategies[0].name.clone();
        apply_set(
            &mut m,
            &format!("strategies.{name}.signal_weights.llm.depthh.low=1"),
        )
        .unwrap();
        let invalid = validate_edited(&m, &crate::signals::Catalog)
            .unwrap_err()
            .to_string();
        assert!(
            invalid.contains("strategies[0].signal_weights.llm.depthh.low"),
            "{invalid}"
        );
    }
}
