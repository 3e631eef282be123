//! Weight-key resolution: how a key such as `llm.response_depth.surface` or
//! `graph.node.exhaustion_score.low` turns into a value and a contribution.
//!
//! Resolution order: an exact signal name; otherwise `base.qualifier`, where the qualifier is
//! `true`/`false` for booleans, `low` (≤ 0.25) / `mid` (0.25 < v < 0.75) / `high` (≥ 0.75) for
//! numbers, or a category value compared for equality. On an ordinal category, `low`/`mid`/
//! `high` are positional bins only when the category has no value of that name: the level
//! categories (`none`/`low`/`medium`/`high`) have a value `low`, so `focus_streak.low` means
//! exactly `low`, as in the original system, and never also `none`.
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
            let (values, ordinal) = match catalog::spec(base).map(|s| s.kind) {
                Some(Kind::Category { values, ordinal }) => (values, ordinal),
                _ => (&[][..], false),
            };
            // A qualifier naming one of the category's values is that value and nothing else.
            if c == qualifier || values.contains(&qualifier) || !ordinal {
                return c == qualifier;
            }
            match ordinal_position(values, c) {
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

/// Position of `value` among an ordinal category's `values` in [0, 1] (first 0, last 1).
fn ordinal_position(values: &[&str], value: &str) -> Option<f64> {
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
    fn a_qualifier_naming_a_category_value_matches_that_value_only() {
        // focus_streak is ordinal none/low/medium/high: `.low` is the value `low`, not the
        // positional bin (which would also hold `none` at position 0).
        let at = |value: &str, key: &str| {
            let s = signals(&[("graph.node.focus_streak", SignalValue::category(value))]);
            resolve(key, &s)
        };
        let yes = Some(SignalValue::Bool(true));
        let no = Some(SignalValue::Bool(false));
        assert_eq!(at("none", "graph.node.focus_streak.low"), no);
        assert_eq!(at("low", "graph.node.focus_streak.low"), yes);
        assert_eq!(at("medium", "graph.node.focus_streak.high"), no);
        assert_eq!(at("high", "graph.node.focus_streak.high"), yes);
        assert_eq!(at("none", "graph.node.focus_streak.none"), yes);
        // No value is named `mid`, so `.mid` stays positional: low = 1/3 and medium = 2/3.
        assert_eq!(at("low", "graph.node.focus_streak.mid"), yes);
        assert_eq!(at("medium", "graph.node.focus_streak.mid"), yes);
        assert_eq!(at("none", "graph.node.focus_streak.mid"), no);
        assert_eq!(at("high", "graph.node.focus_streak.mid"), no);
    }

    #[test]
    fn contributions() {
        assert_eq!(contribution(&SignalValue::Bool(true), 0.8), 0.8);
        assert_eq!(contribution(&SignalValue::Bool(false), 0.8), 0.0);
        assert_eq!(contribution(&SignalValue::Number(0.5), -0.3), -0.15);
        assert_eq!(contribution(&SignalValue::category("deep"), 2.0), 0.0);
    }
}
