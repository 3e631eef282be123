//! The catalogue of every signal the engine can produce: name, scope, kind and the detector
//! that produces it.
//!
//! Configuration validation and weight-key resolution both read this table, so a methodology
//! can only weight what a detector really emits, with qualifiers that fit the signal's kind.
//! [`Catalog`] hands this table to `config`'s validation, which cannot import it.

use crate::config::SignalNames;

/// Whether a signal has one value per interview or one per node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Node,
}

/// The type of a signal's value, which decides the qualifiers a weight key may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    /// A number. `unit` numbers lie in [0, 1]; counts do not, and `.low/.mid/.high` on them
    /// would be meaningless, so the validator refuses those qualifiers.
    Number {
        unit: bool,
    },
    /// A category. Ordinal categories also accept `.low/.mid/.high` by their position in
    /// `values` (first = 0.0, last = 1.0), so `llm.response_depth.low` means "surface".
    Category {
        values: &'static [&'static str],
        ordinal: bool,
    },
}

/// One output of a detector.
#[derive(Debug, Clone, Copy)]
pub struct SignalSpec {
    pub name: &'static str,
    pub detector: &'static str,
    pub scope: Scope,
    pub kind: Kind,
    pub description: &'static str,
}

pub const DEPTH_VALUES: &[&str] = &["surface", "shallow", "moderate", "deep"];
pub const LEVEL_VALUES: &[&str] = &["none", "low", "medium", "high"];
pub const TREND_VALUES: &[&str] = &["deepening", "stable", "shallowing", "fatigued"];
pub const PHASE_VALUES: &[&str] = &["early", "mid", "late"];
pub const OPPORTUNITY_VALUES: &[&str] = &["exhausted", "probe_deeper", "fresh"];
pub const PHASE_REASON_VALUES: &[&str] = &crate::domain::PHASE_REASONS;
pub const CANONICAL_NOVELTY_VALUES: &[&str] = &["new", "confirming", "orphan"];
/// `graph.node.novelty`'s categories, the original system's (lowest first).
pub const NOVELTY_VALUES: &[&str] = &["low", "medium", "high"];

const COUNT: Kind = Kind::Number { unit: false };
const UNIT: Kind = Kind::Number { unit: true };
const G: Scope = Scope::Global;
const N: Scope = Scope::Node;

macro_rules! spec {
    ($name:literal, $det:literal, $scope:expr, $kind:expr, $desc:literal) => {
        SignalSpec {
            name: $name,
            detector: $det,
            scope: $scope,
            kind: $kind,
            description: $desc,
        }
    };
}

/// Every signal, grouped by pool in the order the signals panel shows them.
pub const SIGNALS: &[SignalSpec] = &[
    spec!(
        "graph.node_count",
        "graph.node_count",
        G,
        COUNT,
        "surface nodes in the graph"
    ),
    spec!(
        "graph.edge_count",
        "graph.edge_count",
        G,
        COUNT,
        "surface edges in the graph"
    ),
    spec!(
        "graph.orphan_count",
        "graph.orphan_count",
        G,
        COUNT,
        "nodes without any edge"
    ),
    spec!(
        "graph.max_depth",
        "graph.max_depth",
        G,
        UNIT,
        "longest chain / (ontology levels − 1)"
    ),
    spec!(
        "graph.avg_depth",
        "graph.avg_depth",
        G,
        UNIT,
        "mean node depth / (ontology levels − 1)"
    ),
    spec!(
        "graph.chain_completion.ratio",
        "graph.chain_completion",
        G,
        UNIT,
        "share of level-1 nodes that reach a terminal node"
    ),
    spec!(
        "graph.chain_completion.has_complete",
        "graph.chain_completion",
        G,
        Kind::Bool,
        "some level-1 → terminal chain exists"
    ),
    spec!(
        "graph.turn.top_new_type",
        "graph.turn.top_new_type",
        G,
        Kind::Category {
            values: &[],
            ordinal: false
        },
        "type of the highest-level concept the answer just given added (weight \
         `graph.turn.top_new_type.<type>`); absent when it added none"
    ),
    spec!(
        "graph.depth_by_element",
        "graph.depth_by_element",
        G,
        UNIT,
        "how far the ladders go on from the lowest-level nodes, on average, over the depth divisor"
    ),
    spec!(
        "graph.canonical_concept_count",
        "graph.canonical_concept_count",
        G,
        COUNT,
        "active canonical slots"
    ),
    spec!(
        "graph.canonical_edge_density",
        "graph.canonical_edge_density",
        G,
        COUNT,
        "canonical edges per active slot"
    ),
    spec!(
        "graph.canonical_exhaustion_score",
        "graph.canonical_exhaustion_score",
        G,
        UNIT,
        "mean exhaustion score of tracked nodes"
    ),
    spec!(
        "llm.response_depth",
        "llm.response_depth",
        G,
        Kind::Category {
            values: DEPTH_VALUES,
            ordinal: true
        },
        "elaboration of the answer"
    ),
    spec!(
        "llm.specificity",
        "llm.specificity",
        G,
        UNIT,
        "concreteness of the answer"
    ),
    spec!(
        "llm.certainty",
        "llm.certainty",
        G,
        UNIT,
        "confidence of the answer"
    ),
    spec!(
        "llm.valence",
        "llm.valence",
        G,
        UNIT,
        "emotional tone, 0 negative … 1 positive"
    ),
    spec!(
        "llm.engagement",
        "llm.engagement",
        G,
        UNIT,
        "willingness to engage"
    ),
    spec!(
        "llm.intellectual_engagement",
        "llm.intellectual_engagement",
        G,
        UNIT,
        "reasoning and reflection shown"
    ),
    spec!(
        "llm.global_response_trend",
        "llm.global_response_trend",
        G,
        Kind::Category {
            values: TREND_VALUES,
            ordinal: false
        },
        "direction of response depth over the session"
    ),
    spec!(
        "temporal.strategy_repetition_count",
        "temporal.strategy_repetition_count",
        G,
        UNIT,
        "share of the last 5 turns that used the latest strategy"
    ),
    spec!(
        "temporal.turns_since_strategy_change",
        "temporal.turns_since_strategy_change",
        G,
        UNIT,
        "turns the latest strategy has run in a row ÷ 5 (0 before turn 2)"
    ),
    spec!(
        "meta.interview.phase",
        "meta.interview.phase",
        G,
        Kind::Category {
            values: PHASE_VALUES,
            ordinal: true
        },
        "early / mid / late"
    ),
    spec!(
        "meta.interview.phase_reason",
        "meta.interview.phase_reason",
        G,
        Kind::Category {
            values: PHASE_REASON_VALUES,
            ordinal: false
        },
        "which boundary put the turn in its phase"
    ),
    spec!(
        "meta.interview.is_late_stage",
        "meta.interview.is_late_stage",
        G,
        Kind::Bool,
        "the turn is in the late phase"
    ),
    spec!(
        "meta.interview_progress",
        "meta.interview_progress",
        G,
        UNIT,
        "turn ÷ max turns"
    ),
    spec!(
        "meta.conversation.saturation",
        "meta.conversation.saturation",
        G,
        UNIT,
        "surface information-velocity saturation"
    ),
    spec!(
        "meta.canonical.saturation",
        "meta.canonical.saturation",
        G,
        UNIT,
        "canonical information-velocity saturation"
    ),
    spec!(
        "graph.node.exhausted",
        "graph.node.exhausted",
        N,
        Kind::Bool,
        "node meets all four exhaustion criteria"
    ),
    spec!(
        "graph.node.exhaustion_score",
        "graph.node.exhaustion_score",
        N,
        UNIT,
        "0.4 yield stagnation + 0.3 streak + 0.3 shallow ratio"
    ),
    spec!(
        "graph.node.yield_stagnation",
        "graph.node.yield_stagnation",
        N,
        Kind::Bool,
        "focused and 3+ turns without yield"
    ),
    spec!(
        "graph.node.focus_streak",
        "graph.node.focus_streak",
        N,
        Kind::Category {
            values: LEVEL_VALUES,
            ordinal: true
        },
        "consecutive turns in focus"
    ),
    spec!(
        "graph.node.recency_score",
        "graph.node.recency_score",
        N,
        UNIT,
        "1.0 focused now … 0.0 at 20+ turns"
    ),
    spec!(
        "graph.node.is_current_focus",
        "graph.node.is_current_focus",
        N,
        Kind::Bool,
        "the previous turn's focus"
    ),
    spec!(
        "graph.node.is_orphan",
        "graph.node.is_orphan",
        N,
        Kind::Bool,
        "node has no edges"
    ),
    spec!(
        "graph.node.edge_count",
        "graph.node.edge_count",
        N,
        COUNT,
        "incoming + outgoing edges"
    ),
    spec!(
        "graph.node.has_outgoing",
        "graph.node.has_outgoing",
        N,
        Kind::Bool,
        "node has an outgoing edge"
    ),
    spec!(
        "graph.node.focus_count",
        "graph.node.focus_count",
        N,
        Kind::Category {
            values: LEVEL_VALUES,
            ordinal: true
        },
        "times in focus: none 0, low 1–2, medium 3–4, high 5+"
    ),
    spec!(
        "graph.node.novelty",
        "graph.node.novelty",
        N,
        Kind::Category {
            values: NOVELTY_VALUES,
            ordinal: true
        },
        "max(0, 1 − age/5): high ≥ 0.6 (age 0–2), medium ≥ 0.3 (age 3), low"
    ),
    spec!(
        "graph.node.is_new",
        "graph.node.is_new",
        N,
        Kind::Bool,
        "created by the answer just given"
    ),
    spec!(
        "graph.node.is_mentioned",
        "graph.node.is_mentioned",
        N,
        Kind::Bool,
        "named again by the answer just given, after an earlier answer raised it"
    ),
    spec!(
        "graph.node.level",
        "graph.node.level",
        N,
        UNIT,
        "ontology level on the ladder: 0 lowest (attribute) … 1 highest (value)"
    ),
    spec!(
        "graph.node.is_terminal",
        "graph.node.is_terminal",
        N,
        Kind::Bool,
        "node type is terminal (the top of a ladder)"
    ),
    spec!(
        "graph.node.type",
        "graph.node.type",
        N,
        Kind::Category {
            values: &[],
            ordinal: false
        },
        "the node's type in the methodology's ontology (weight `graph.node.type.<type>`)"
    ),
    spec!(
        "graph.node.canonical_novelty",
        "graph.node.canonical_novelty",
        N,
        Kind::Category {
            values: CANONICAL_NOVELTY_VALUES,
            ordinal: false
        },
        "slot first seen this turn (new), earlier (confirming), or no slot yet (orphan)"
    ),
    spec!(
        "meta.node.opportunity",
        "meta.node.opportunity",
        N,
        Kind::Category {
            values: OPPORTUNITY_VALUES,
            ordinal: false
        },
        "exhausted / probe_deeper / fresh"
    ),
    spec!(
        "technique.node.strategy_repetition",
        "technique.node.strategy_repetition",
        N,
        Kind::Category {
            values: LEVEL_VALUES,
            ordinal: true
        },
        "same strategy on this node in a row"
    ),
];

/// Prefixes of node-scoped weights (seed 001 "Node-Scoped Signal Partitioning").
pub const NODE_SIGNAL_PREFIXES: [&str; 3] = ["graph.node.", "technique.node.", "meta.node."];

/// The pools a methodology's `signals:` section may list.
pub const POOLS: [&str; 5] = ["graph", "llm", "temporal", "meta", "technique"];

/// The catalogue as the vocabulary methodology validation checks names against: pass
/// `&Catalog` wherever a methodology is loaded.
#[derive(Debug, Clone, Copy, Default)]
pub struct Catalog;

impl SignalNames for Catalog {
    fn pools(&self) -> &[&str] {
        &POOLS
    }

    fn is_known(&self, name: &str) -> bool {
        spec(name).is_some() || is_detector(name)
    }

    fn weight_key_problem(&self, key: &str) -> Option<String> {
        check_weight_key(key)
    }

    fn node_type_in_key<'k>(&self, key: &'k str) -> Option<&'k str> {
        let (base, qualifier) = key.rsplit_once('.')?;
        spec(base).filter(|s| is_open(s.kind)).map(|_| qualifier)
    }
}

/// Whether a weight key is node-scoped.
pub fn is_node_key(key: &str) -> bool {
    NODE_SIGNAL_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// The spec of an output signal by exact name.
pub fn spec(name: &str) -> Option<&'static SignalSpec> {
    SIGNALS.iter().find(|s| s.name == name)
}

/// Whether `name` is a detector (possibly with several outputs).
pub fn is_detector(name: &str) -> bool {
    SIGNALS.iter().any(|s| s.detector == name)
}

/// The outputs of a detector.
pub fn outputs_of(detector: &str) -> impl Iterator<Item = &'static SignalSpec> {
    SIGNALS.iter().filter(move |s| s.detector == detector)
}

/// The qualifiers a signal of `kind` accepts after its name in a weight key.
pub fn qualifiers(kind: Kind) -> Vec<&'static str> {
    match kind {
        Kind::Bool => vec!["true", "false"],
        Kind::Number { unit: true } => vec!["low", "mid", "high"],
        Kind::Number { unit: false } => vec![],
        Kind::Category { values, ordinal } => {
            let mut q = values.to_vec();
            if ordinal {
                for b in ["low", "mid", "high"] {
                    if !q.contains(&b) {
                        q.push(b);
                    }
                }
            }
            q
        }
    }
}

/// A category that lists no values takes them from the methodology (`graph.node.type`'s are
/// its ontology's node types): any qualifier passes here, and methodology validation checks
/// it against the ontology.
pub fn is_open(kind: Kind) -> bool {
    matches!(kind, Kind::Category { values: [], .. })
}

/// Weight keys that meant something before `graph.node.novelty` and `graph.node.focus_count`
/// became the original system's categories, with what to write instead. A bare weight on a
/// category adds nothing, so these would silently stop counting.
const RENAMED_KEYS: &[(&str, &str)] = &[
    (
        "graph.node.novelty",
        "'graph.node.novelty' is a category (high: age 0–2 turns, medium: 3, low: 4+), so a \
         bare weight adds nothing; weight 'graph.node.novelty.high' (or .medium, .low), or \
         'graph.node.is_new' for a node created by the answer just given",
    ),
    (
        "graph.node.novelty.mid",
        "'graph.node.novelty' names its middle category 'medium': write \
         'graph.node.novelty.medium'",
    ),
    (
        "graph.node.focus_count",
        "'graph.node.focus_count' is a category (none: 0, low: 1–2, medium: 3–4, high: 5+), \
         so a bare weight adds nothing; weight 'graph.node.focus_count.none' (or .low, \
         .medium, .high)",
    ),
];

/// Why a weight key names nothing the engine produces, or `None` when it is valid.
pub fn check_weight_key(key: &str) -> Option<String> {
    if let Some((_, problem)) = RENAMED_KEYS.iter().find(|(k, _)| *k == key) {
        return Some((*problem).to_owned());
    }
    if spec(key).is_some() {
        return None;
    }
    if let Some((base, qualifier)) = key.rsplit_once('.')
        && let Some(s) = spec(base)
    {
        let allowed = qualifiers(s.kind);
        if allowed.contains(&qualifier) || is_open(s.kind) {
            return None;
        }
        return Some(if allowed.is_empty() {
            format!("'{base}' is a count and takes no qualifier; weight it directly")
        } else {
            format!(
                "'{qualifier}' is not a qualifier of '{base}' (allowed: {})",
                allowed.join(", ")
            )
        });
    }
    if is_detector(key) {
        let outs: Vec<&str> = outputs_of(key).map(|s| s.name).collect();
        return Some(format!(
            "'{key}' has several outputs; weight one of: {}",
            outs.join(", ")
        ));
    }
    Some(format!("unknown signal '{key}'{}", suggestion(key)))
}

fn suggestion(key: &str) -> String {
    // Compare the key as written and without a trailing qualifier, so that
    // `llm.engagment.high` still finds `llm.engagement`.
    let base = key.rsplit_once('.').map_or(key, |(b, _)| b);
    let best = SIGNALS
        .iter()
        .map(|s| {
            (
                edit_distance(key, s.name).min(edit_distance(base, s.name)),
                s.name,
            )
        })
        .min_by_key(|(d, _)| *d);
    match best {
        Some((d, name)) if d <= 4 => format!(" (did you mean '{name}'?)"),
        _ => String::new(),
    }
}

/// Levenshtein distance, for "did you mean" hints on misspelt signal names.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_scopes_follow_prefixes() {
        for (i, s) in SIGNALS.iter().enumerate() {
            assert!(
                SIGNALS.iter().skip(i + 1).all(|o| o.name != s.name),
                "{}",
                s.name
            );
            assert_eq!(is_node_key(s.name), s.scope == Scope::Node, "{}", s.name);
            assert!(s.name.starts_with(s.detector), "{}", s.name);
        }
    }

    #[test]
    fn old_weights_of_the_original_systems_categories_name_the_new_qualifier() {
        for (key, expected) in [
            ("graph.node.novelty", "graph.node.novelty.high"),
            ("graph.node.novelty.mid", "graph.node.novelty.medium"),
            ("graph.node.focus_count", "graph.node.focus_count.none"),
        ] {
            let problem = check_weight_key(key).unwrap_or_default();
            assert!(problem.contains(expected), "{key}: {problem}");
        }
        for key in [
            "graph.node.novelty.high",
            "graph.node.novelty.medium",
            "graph.node.novelty.low",
            "graph.node.focus_count.none",
            "graph.node.focus_count.low",
            "graph.node.focus_count.medium",
            "graph.node.focus_count.high",
            "graph.node.canonical_novelty.new",
            "graph.node.canonical_novelty.confirming",
            "graph.node.canonical_novelty.orphan",
            "graph.node.is_new.true",
            "graph.node.is_terminal.true",
            "graph.node.level",
            "graph.node.level.high",
            "graph.node.type.functional_job",
        ] {
            assert_eq!(check_weight_key(key), None, "{key}");
        }
    }

    #[test]
    fn weight_keys_are_checked_against_kinds() {
        assert_eq!(check_weight_key("llm.response_depth.surface"), None);
        assert_eq!(check_weight_key("llm.response_depth.low"), None);
        assert_eq!(
            check_weight_key("graph.chain_completion.has_complete.false"),
            None
        );
        assert_eq!(check_weight_key("graph.node.exhaustion_score.low"), None);
        assert_eq!(check_weight_key("temporal.strategy_repetition_count"), None);
        assert!(check_weight_key("graph.node_count.high").is_some());
        assert!(check_weight_key("llm.response_depth.profound").is_some());
        assert!(check_weight_key("graph.chain_completion").is_some());
        let typo = check_weight_key("llm.engagment.high").unwrap_or_default();
        assert!(typo.contains("did you mean 'llm.engagement'"), "{typo}");
    }

    #[test]
    fn only_an_open_category_names_a_node_type_in_its_key() {
        assert_eq!(
            Catalog.node_type_in_key("graph.node.type.pain_point"),
            Some("pain_point")
        );
        assert_eq!(Catalog.node_type_in_key("graph.node.type"), None);
        assert_eq!(Catalog.node_type_in_key("graph.node.novelty.high"), None);
        assert_eq!(Catalog.node_type_in_key("graph.node.is_new"), None);
    }

    #[test]
    fn the_catalog_vocabulary_knows_signals_detectors_and_pools() {
        assert_eq!(Catalog.pools(), POOLS);
        assert!(Catalog.is_known("graph.chain_completion.ratio"));
        assert!(Catalog.is_known("graph.chain_completion"));
        assert!(!Catalog.is_known("graph.chain"));
        assert_eq!(Catalog.weight_key_problem("llm.certainty.high"), None);
        assert!(
            Catalog
                .weight_key_problem("graph.node_count.high")
                .is_some()
        );
    }
}
