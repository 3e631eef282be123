//! USD per million tokens by model, from `config/pricing.yaml` plus the settings file.
//!
//! A key ending in `*` matches every model name with that prefix; an exact key wins over a
//! prefix, and a longer prefix over a shorter one. A model that matches nothing is priced as
//! unknown: its calls are counted, never guessed at.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, Problem};

/// File name of the shipped table inside the config directory.
pub const PRICING_FILE: &str = "pricing.yaml";

/// Input and output price per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

/// Prices by model name or prefix pattern.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PricingTable {
    entries: BTreeMap<String, Price>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PricingDoc {
    models: BTreeMap<String, Price>,
}

impl PricingTable {
    /// Reads `pricing.yaml` (`models: { name: { input, output } }`).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let doc: PricingDoc = crate::config::yaml::load(path)?;
        let bad: Vec<Problem> = doc
            .models
            .iter()
            .filter(|(_, p)| !(p.input >= 0.0 && p.output >= 0.0))
            .map(|(m, _)| Problem::new(format!("models.{m}"), "prices must be zero or more"))
            .collect();
        if !bad.is_empty() {
            return Err(ConfigError::invalid(path, bad));
        }
        Ok(Self {
            entries: doc.models,
        })
    }

    /// Adds or replaces entries.
    pub fn extend(&mut self, entries: impl IntoIterator<Item = (String, Price)>) {
        self.entries.extend(entries);
    }

    /// The price of `model`, if any entry matches it.
    pub fn price(&self, model: &str) -> Option<Price> {
        if let Some(p) = self.entries.get(model) {
            return Some(*p);
        }
        self.entries
            .iter()
            .filter_map(|(key, p)| {
                let prefix = key.strip_suffix('*')?;
                model.starts_with(prefix).then_some((prefix.len(), *p))
            })
            .max_by_key(|(len, _)| *len)
            .map(|(_, p)| p)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> PricingTable {
        let mut t = PricingTable::default();
        t.extend([
            (
                "claude-sonnet-*".to_owned(),
                Price {
                    input: 3.0,
                    output: 15.0,
                },
            ),
            (
                "claude-sonnet-4-6-cheap".to_owned(),
                Price {
                    input: 1.0,
                    output: 1.0,
                },
            ),
            (
                "claude-*".to_owned(),
                Price {
                    input: 9.0,
                    output: 9.0,
                },
            ),
        ]);
        t
    }

    #[test]
    fn exact_beats_prefix_and_longer_prefix_beats_shorter() {
        let t = table();
        assert_eq!(
            t.price("claude-sonnet-4-6-cheap").map(|p| p.input),
            Some(1.0)
        );
        assert_eq!(t.price("claude-sonnet-4-6").map(|p| p.output), Some(15.0));
        assert_eq!(t.price("claude-haiku").map(|p| p.input), Some(9.0));
    }

    #[test]
    fn unknown_models_have_no_price() {
        assert_eq!(table().price("gpt-9"), None);
    }

    #[test]
    fn the_shipped_table_has_the_seed_prices() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("config")
            .join(PRICING_FILE);
        let t = PricingTable::load(&path).unwrap();
        let p = |m: &str| t.price(m).map(|p| (p.input, p.output));
        assert_eq!(p("claude-sonnet-4-6"), Some((3.0, 15.0)));
        assert_eq!(p("kimi-k2-0905-preview"), Some((0.60, 2.50)));
        assert_eq!(p("deepseek-chat"), Some((0.14, 0.28)));
        assert_eq!(
            p("gpt-4.1-mini"),
            None,
            "not in the seed: unknown, not guessed"
        );
    }
}
