//! Weight-key resolution: how a key such as `llm.response_depth.surface` or
//! `graph.node.exhaustion_score.low` turns into a value and a contribution.
//!
//! Resolution order: an exact signal name; otherwise `base.qualifier`, where the qualifier is
//! `true`/`false` for booleans, `low` (≤ 0.25) / `mid` (0.25 < v < 0.75) / `high` (≥ 0.75) for
//! numbers and ordinal categories (by position), or a category value compared for equality.
//! A key whose signal is absent resolves to `None` and contributes nothing.

use crate::domain::{SignalValue, Signals};
use crate::signals::catalog::{self, Kind};

/// Upper bound of the `.low` bin.
pub const LOW_MAX: f64 = 0.25;
/// Lower bound of the `.high` bin.
pub const HIGH_MIN: f64 = 0.75;

/// The value a weight key resolves to in `signals`, or `None` when its signal is absent.
pub fn resolve(key: &str, signals: &Signals) -> Option<SignalValue> {
    if let Some(v) = signals.get(key) {
        return Some(v.clone());
    }
    let (base, qualifier) = key.rsplit_once('.')?;
    let value = signals.get(base)?;
    Some(SignalValue::Bool(qualifier_matches(base, value, qualifier)))
}

fn qualifier_matches(base: &str, value: &SignalValue, qualifier: &str) -> bool {
    match value {
        SignalValue::Bool(b) => match qualifier {
            "true" => *b,
            "false" => !*b,
            _ => false,
        },
        SignalValue::Number(n) => bin_matches(*n, qualifier),
        SignalValue::Category(c) => {
            if c == qualifier {
                return true;
            }
            match ordinal_position(base, c) {
                Some(pos) if matches!(qualifier, "low" | "mid" | "high") => {
                    bin_matches(pos, qualifier)
                }
                _ => false,
            }
        }
    }
}

/// Whether `v` falls in the named bin.
pub fn bin_matches(v: f64, bin: &str) -> bool {
    match bin {
        "low" => v <= LOW_MAX,
        "mid" => v > LOW_MAX && v < HIGH_MIN,
        "high" => v >= HIGH_MIN,
        _ => false,
    }
}

/// Position of an ordinal category value in [0, 1] (first value 0, last 1).
fn ordinal_position(base: &str, value: &str) -> Option<f64> {
    let spec = catalog::spec(base)?;
    let Kind::Category {
        values,
        ordinal: true,
    } = spec.kind
    else {
        return None;
    };
    let index = values.iter().position(|v| *v == value)?;
    let last = values.len().checked_sub(1).filter(|l| *l > 0)?;
    Some(index as f64 / last as f64)
}

/// A resolved value's contribution: booleans give the weight or 0, numbers weight × value,
/// categories (weighted without a qualifier) nothing.
pub fn contribution(value: &SignalValue, weight: f64) -> f64 {
    match value {
        SignalValue::Bool(true) => weight,
        SignalValue::Bool(false) | SignalValue::Category(_) => 0.0,
        SignalValue::Number(n) => weight * n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signals(pairs: &[(&str, SignalValue)]) -> Signals {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn resolves_direct_qualified_and_missing() {
        let s = signals(&[
            ("llm.response_depth", SignalValue::category("surface")),
            ("graph.node.exhaustion_score", SignalValue::Number(0.25)),
            (
                "graph.chain_completion.has_complete",
                SignalValue::Bool(false),
            ),
            ("llm.engagement", SignalValue::Number(0.75)),
        ]);
        assert_eq!(
            resolve("llm.response_depth.surface", &s),
            Some(SignalValue::Bool(true))
        );
        assert_eq!(
            resolve("llm.response_depth.deep", &s),
            Some(SignalValue::Bool(false))
        );
        assert_eq!(
            resolve("llm.response_depth.low", &s),
            Some(SignalValue::Bool(true)),
            "ordinal position 0"
        );
        assert_eq!(
            resolve("graph.node.exhaustion_score.low", &s),
            Some(SignalValue::Bool(true)),
            "0.25 is low"
        );
        assert_eq!(
            resolve("graph.node.exhaustion_score.mid", &s),
            Some(SignalValue::Bool(false))
        );
        assert_eq!(
            resolve("llm.engagement.high", &s),
            Some(SignalValue::Bool(true)),
            "0.75 is high"
        );
        assert_eq!(
            resolve("graph.chain_completion.has_complete.false", &s),
            Some(SignalValue::Bool(true))
        );
        assert_eq!(
            resolve("llm.engagement", &s),
            Some(SignalValue::Number(0.75))
        );
        assert_eq!(resolve("llm.certainty.high", &s), None);
    }

    #[test]
    fn ordinal_bins_follow_positions() {
        // shallow = 1/3 and moderate = 2/3 are mid; deep = 1 is high.
        for (value, bin) in [("shallow", "mid"), ("moderate", "mid"), ("deep", "high")] {
            let s = signals(&[("llm.response_depth", SignalValue::category(value))]);
            assert_eq!(
                resolve(&format!("llm.response_depth.{bin}"), &s),
                Some(SignalValue::Bool(true)),
                "{value}"
            );
        }
    }

    #[test]
    fn contributions() {
        assert_eq!(contribution(&SignalValue::Bool(true), 0.8), 0.8);
        assert_eq!(contribution(&SignalValue::Bool(false), 0.8), 0.0);
        assert_eq!(contribution(&SignalValue::Number(0.5), -0.3), -0.15);
        assert_eq!(contribution(&SignalValue::category("deep"), 2.0), 0.0);
    }
}
