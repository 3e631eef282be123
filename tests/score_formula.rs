//! The engine behind `interviewer score` (`scoring::select`) against the seeds' two-stage
//! formula written out again, independently and plainly, in this file: for every shipped
//! methodology and for one written in the original system's style (ordinal category
//! qualifiers on node signals), random global and node signal sets over the whole catalogue
//! must give the same contributions, base, phase multiplier, bonus and final scores (within
//! 1e-9), the same rankings and the same selected strategy and node.
//!
//! The formula, as README "How strategies are scored" states it:
//! - stage 1 scores every strategy on its global weights, `final = base × phase multiplier +
//!   phase bonus` (1 and 0 for a strategy the phase does not name, or without a phase);
//! - stage 2 scores the nodes, in creation order, on the winner's node-scoped weights without
//!   phase terms, only when the winner is node-bound and there are nodes;
//! - `base` is the sum over the strategy's weights whose signal is present of weight × the
//!   matched value: a bare boolean gives the weight when true, a bare number weight × value, a
//!   bare category nothing; a qualified key gives the weight when its qualifier holds (`.true`
//!   / `.false`; `.low` ≤ 0.25 < `.mid` < 0.75 ≤ `.high` for unit numbers; a category value
//!   exactly; on an ordinal category, `.low/.mid/.high` by position only when no value has
//!   that name), else 0;
//! - tied strategies keep the methodology's order; tied nodes go to the newest (the reverse of
//!   their creation order).
//!
//! `PROPTEST_CASES` raises the case count (64 per methodology by default).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::float_cmp
)]

use crate::common;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use interviewer::config::{FileKind, Methodology, NodeBinding, parse_methodology};
use interviewer::domain::{NodeSignals, Phase, SignalValue, Signals};
use interviewer::scoring::{ScoredCandidate, Selection, select};
use interviewer::signals::Catalog;
use interviewer::signals::catalog::{Kind, SIGNALS, Scope, SignalSpec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Scores are compared within this.
const EPS: f64 = 1e-9;

/// A methodology in the original system's style: ordinal category qualifiers on node signals
/// (`.low` naming a value, `.mid` positional), positional bins on the response depth, a value
/// named `mid` on the phase, bare booleans, counts and categories, and phase terms for every
/// phase. Every signal of the catalogue is weighed somewhere.
const ORIGINAL_STYLE: &str = r"
method: {name: original_style}
ontology:
  nodes:
    - {name: attribute, level: 1}
    - {name: consequence, level: 2}
    - {name: value, level: 3, terminal: true}
strategies:
  - name: deepen
    signal_weights:
      llm.response_depth.mid: 0.7
      llm.response_depth.low: -0.4
      llm.response_depth.high: 0.5
      llm.response_depth.surface: -0.2
      llm.response_depth: 3.0
      meta.interview.phase.mid: 0.3
      llm.engagement.high: 0.6
      llm.certainty: 0.4
      graph.chain_completion.has_complete.false: 0.35
      graph.node.focus_streak.low: 0.8
      graph.node.focus_streak.mid: 0.45
      graph.node.focus_streak.none: 0.25
      graph.node.focus_streak.high: -0.9
      technique.node.strategy_repetition.high: -1.0
      technique.node.strategy_repetition.mid: -0.3
      technique.node.strategy_repetition.none: 0.4
      graph.node.exhaustion_score.low: 1.0
      graph.node.exhaustion_score.mid: 0.2
      graph.node.recency_score: 0.6
      graph.node.exhausted: -1.5
      graph.node.edge_count: 0.05
      meta.node.opportunity.probe_deeper: 0.9
      graph.node.canonical_novelty.new: 0.3
      graph.node.canonical_novelty.orphan: 0.25
      graph.node.novelty.high: 0.2
      graph.node.novelty.medium: 0.1
      graph.node.is_new.true: 1.2
      graph.node.is_mentioned.true: 0.6
      graph.node.level: 0.8
      graph.node.is_terminal.true: -2.0
      graph.node.type.consequence: 0.4
      graph.node.focus_count.none: 0.3
      graph.node.focus_count.high: -0.6
  - name: clarify
    signal_weights:
      llm.specificity.low: 1.2
      llm.certainty.low: 1.1
      llm.global_response_trend.fatigued: -0.5
      temporal.strategy_repetition_count: -0.8
      graph.node.is_current_focus.true: 0.8
      graph.node.focus_count.medium: -0.1
      graph.node.is_orphan.true: 0.5
      graph.node.has_outgoing.false: 0.3
      graph.node.yield_stagnation.true: -0.5
      technique.node.strategy_repetition.low: -0.2
      graph.node.focus_streak.medium: 0.35
  - name: reflect
    node_binding: none
    signal_weights:
      graph.max_depth: 0.5
      graph.depth_by_element.mid: 0.3
      graph.node_count: 0.02
      graph.canonical_edge_density: 0.1
      meta.interview.phase.late: 0.6
      meta.interview.phase.low: 0.25
      meta.interview.phase_reason.early_window: 0.4
      meta.interview.is_late_stage: 0.3
      meta.interview_progress.high: 0.5
      meta.conversation.saturation.high: 0.4
      meta.canonical.saturation.mid: 0.2
      temporal.turns_since_strategy_change.high: -0.3
      llm.global_response_trend.shallowing: 0.2
      llm.valence.low: 0.15
      llm.intellectual_engagement.mid: 0.1
  - name: lateral
    signal_weights:
      graph.chain_completion.ratio.mid: 0.3
      graph.avg_depth.low: 0.2
      graph.orphan_count: 0.05
      graph.edge_count: 0.01
      graph.canonical_concept_count: 0.03
      graph.canonical_exhaustion_score.high: -0.3
      graph.turn.top_new_type.value: -0.4
      graph.chain_completion.has_complete: 0.15
      llm.response_depth.deep: -0.2
      meta.node.opportunity.fresh: 0.8
      meta.node.opportunity.exhausted: -0.8
      graph.node.recency_score.low: 0.5
      graph.node.canonical_novelty.confirming: -0.1
      technique.node.strategy_repetition.medium: 0.2
phases:
  early:
    signal_weights: {deepen: 0.8, reflect: 0.2}
    phase_bonuses: {lateral: 0.3}
  mid:
    signal_weights: {deepen: 1.3, clarify: 1.1}
    phase_bonuses: {deepen: 0.2}
  late:
    signal_weights: {reflect: 2.0}
    phase_bonuses: {reflect: 0.5, clarify: -0.1}
";

// ---- the formula, written out independently of `interviewer::scoring` ----

/// One expected candidate: a strategy (stage 1) or a node (stage 2).
#[derive(Debug, Clone)]
struct Expected {
    /// The strategy's name, or the node's id.
    name: String,
    /// `(key, resolved value, weight, contribution)` of each weight whose signal is present,
    /// in the methodology's order.
    contributions: Vec<(String, SignalValue, f64, f64)>,
    base: f64,
    multiplier: f64,
    bonus: f64,
    fin: f64,
}

/// How often each kind of qualifier matched and missed (and stage 2 ran or not), so a run
/// shows it saw both.
#[derive(Debug, Default)]
struct Tally(BTreeMap<&'static str, [u32; 2]>);

impl Tally {
    fn note(&mut self, form: &'static str, matched: bool) {
        self.0.entry(form).or_default()[usize::from(matched)] += 1;
    }
}

/// The signal a weight key weighs and its qualifier: the key itself when it is a signal's
/// name, else the name before its last dot.
fn parse_key(key: &str) -> (&'static SignalSpec, Option<&str>) {
    if let Some(spec) = SIGNALS.iter().find(|s| s.name == key) {
        return (spec, None);
    }
    let (name, qualifier) = key
        .rsplit_once('.')
        .unwrap_or_else(|| panic!("'{key}' names no signal"));
    let spec = SIGNALS
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("'{key}' names no signal"));
    (spec, Some(qualifier))
}

/// Whether `qualifier` holds for `value` of the signal `spec`.
fn qualifier_holds(
    spec: &SignalSpec,
    value: &SignalValue,
    qualifier: &str,
    tally: &mut Tally,
) -> bool {
    let (form, holds) = match (spec.kind, value) {
        (Kind::Bool, SignalValue::Bool(b)) => match qualifier {
            "true" => ("bool", *b),
            "false" => ("bool", !*b),
            _ => panic!("{}.{qualifier}: not a boolean qualifier", spec.name),
        },
        (Kind::Number { unit: true }, SignalValue::Number(v)) => match qualifier {
            "low" => ("unit bin", *v <= 0.25),
            "mid" => ("unit bin", 0.25 < *v && *v < 0.75),
            "high" => ("unit bin", *v >= 0.75),
            _ => panic!("{}.{qualifier}: not a bin", spec.name),
        },
        (Kind::Category { values, ordinal }, SignalValue::Category(c)) => {
            // An open category (no values listed) takes the methodology's: its qualifier is a
            // value.
            if values.contains(&qualifier) || values.is_empty() {
                ("category value", c == qualifier)
            } else {
                assert!(
                    ordinal && ["low", "mid", "high"].contains(&qualifier),
                    "{}.{qualifier}: not a qualifier of the category",
                    spec.name
                );
                // Position index / last in [0, 1], binned in whole quarters of `last`.
                let index = values.iter().position(|v| v == c).unwrap();
                let last = values.len() - 1;
                let quarters = 4 * index;
                let holds = match qualifier {
                    "low" => quarters <= last,
                    "mid" => last < quarters && quarters < 3 * last,
                    _ => quarters >= 3 * last,
                };
                ("ordinal position", holds)
            }
        }
        (kind, value) => panic!("{}: a {kind:?} signal holds {value:?}", spec.name),
    };
    tally.note(form, holds);
    holds
}

/// The expected contributions and base of `weights` (in file order) over `signals`, taking
/// only the keys whose signal has `scope`.
fn expected_base(
    weights: &serde_json::Map<String, serde_json::Value>,
    scope: Scope,
    signals: &Signals,
    tally: &mut Tally,
) -> (Vec<(String, SignalValue, f64, f64)>, f64) {
    let mut contributions = Vec::new();
    let mut base = 0.0;
    for (key, weight) in weights {
        let weight = weight.as_f64().unwrap();
        let (spec, qualifier) = parse_key(key);
        if spec.scope != scope {
            continue;
        }
        let Some(value) = signals.get(spec.name) else {
            continue;
        };
        let (resolved, contribution) = if let Some(q) = qualifier {
            let holds = qualifier_holds(spec, value, q, tally);
            (SignalValue::Bool(holds), if holds { weight } else { 0.0 })
        } else {
            let contribution = match value {
                SignalValue::Bool(true) => weight,
                SignalValue::Bool(false) | SignalValue::Category(_) => 0.0,
                SignalValue::Number(v) => weight * v,
            };
            (value.clone(), contribution)
        };
        base += contribution;
        contributions.push((key.clone(), resolved, weight, contribution));
    }
    (contributions, base)
}

fn expected_strategies(
    m: &Methodology,
    signals: &Signals,
    phase: Option<Phase>,
    tally: &mut Tally,
) -> Vec<Expected> {
    let phase_terms = phase.and_then(|p| m.phases.get(p.as_str()));
    m.strategies
        .iter()
        .map(|s| {
            let (contributions, base) =
                expected_base(&s.signal_weights, Scope::Global, signals, tally);
            let multiplier = phase_terms
                .and_then(|t| t.signal_weights.get(&s.name).copied())
                .unwrap_or(1.0);
            let bonus = phase_terms
                .and_then(|t| t.phase_bonuses.get(&s.name).copied())
                .unwrap_or(0.0);
            Expected {
                name: s.name.clone(),
                contributions,
                base,
                multiplier,
                bonus,
                fin: base * multiplier + bonus,
            }
        })
        .collect()
}

fn expected_nodes(
    m: &Methodology,
    strategy: &str,
    nodes: &NodeSignals,
    tally: &mut Tally,
) -> Vec<Expected> {
    let s = m.strategies.iter().find(|s| s.name == strategy).unwrap();
    if s.node_binding == NodeBinding::None {
        return Vec::new();
    }
    // Newest first, so the stable sort gives tied nodes to the newest.
    nodes
        .iter()
        .rev()
        .map(|(id, signals)| {
            let (contributions, base) =
                expected_base(&s.signal_weights, Scope::Node, signals, tally);
            Expected {
                name: id.clone(),
                contributions,
                base,
                multiplier: 1.0,
                bonus: 0.0,
                fin: base,
            }
        })
        .collect()
}

/// Best first; equal scores keep their order (a stable sort).
fn ranked(mut candidates: Vec<Expected>) -> Vec<Expected> {
    candidates.sort_by(|a, b| b.fin.total_cmp(&a.fin));
    candidates
}

// ---- the comparison ----

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= EPS
}

/// The engine's ranked `got` against the expected ranking `want`: the same candidates with
/// the same contributions and scores, ranked 1, 2, … with the first selected, in the expected
/// order (two candidates whose expected scores lie within `EPS` may trade places, the only
/// freedom float rounding leaves).
fn check_ranking(
    stage: &str,
    got: &[ScoredCandidate],
    want: &[Expected],
    name: fn(&ScoredCandidate) -> &str,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.len(), want.len(), "{}: candidates", stage);
    let distinct: std::collections::BTreeSet<&str> = got.iter().map(name).collect();
    prop_assert_eq!(distinct.len(), got.len(), "{}: a candidate twice", stage);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let e = want
            .iter()
            .find(|e| e.name == name(g))
            .ok_or_else(|| TestCaseError::fail(format!("{stage}: unexpected {}", name(g))))?;
        let who = format!("{stage} {}", e.name);
        prop_assert!(
            e.name == w.name || close(e.fin, w.fin),
            "{} (expected final {}) ranked {}, where {} (expected final {}) belongs",
            who,
            e.fin,
            i + 1,
            w.name,
            w.fin
        );
        prop_assert_eq!(usize::try_from(g.rank).unwrap(), i + 1, "{}", who);
        prop_assert_eq!(g.selected, i == 0, "{}", who);
        let keys: Vec<&str> = g
            .signal_contributions
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let want_keys: Vec<&str> = e.contributions.iter().map(|c| c.0.as_str()).collect();
        prop_assert_eq!(keys, want_keys, "{}: contributing keys", who);
        for (c, (key, value, weight, contribution)) in
            g.signal_contributions.iter().zip(&e.contributions)
        {
            prop_assert_eq!(&c.value, value, "{} {}", who, key);
            prop_assert_eq!(c.weight, *weight, "{} {}", who, key);
            prop_assert!(
                close(c.contribution, *contribution),
                "{} {}: contribution {} != {}",
                who,
                key,
                c.contribution,
                contribution
            );
        }
        for (what, got, want) in [
            ("base", g.base_score, e.base),
            ("multiplier", g.phase_multiplier, e.multiplier),
            ("bonus", g.phase_bonus, e.bonus),
            ("final", g.final_score, e.fin),
        ] {
            prop_assert!(close(got, want), "{}: {} {} != {}", who, what, got, want);
        }
    }
    Ok(())
}

fn check_selection(
    m: &Methodology,
    signals: &Signals,
    nodes: &NodeSignals,
    phase: Option<Phase>,
    tally: &mut Tally,
) -> Result<(), TestCaseError> {
    let got: Selection = select(m, signals, nodes, phase).unwrap();
    prop_assert_eq!(got.phase, phase);
    let strategies = ranked(expected_strategies(m, signals, phase, tally));
    check_ranking("stage 1", &got.strategies, &strategies, |c| {
        c.strategy.as_str()
    })?;
    prop_assert!(got.strategies.iter().all(|c| c.node_id.is_empty()));
    prop_assert_eq!(&got.strategy, &got.strategies[0].strategy);
    // Stage 2 belongs to the strategy the engine chose (the expected winner, or one within
    // `EPS` of it, as checked above).
    let nodes = ranked(expected_nodes(m, &got.strategy, nodes, tally));
    check_ranking("stage 2", &got.nodes, &nodes, |c| c.node_id.as_str())?;
    tally.note("stage 2", !got.nodes.is_empty());
    prop_assert!(got.nodes.iter().all(|c| c.strategy == got.strategy));
    prop_assert_eq!(
        got.node_id.as_deref(),
        got.nodes.first().map(|c| c.node_id.as_str())
    );
    Ok(())
}

// ---- the generators ----

/// A value of the signal `spec`, biased towards the bins' edges for unit numbers.
fn arb_value(spec: &'static SignalSpec) -> BoxedStrategy<SignalValue> {
    match spec.kind {
        Kind::Bool => any::<bool>().prop_map(SignalValue::Bool).boxed(),
        Kind::Number { unit: true } => prop_oneof![
            prop::sample::select(vec![
                0.0,
                0.25,
                0.25 - 1e-12,
                0.25 + 1e-12,
                0.5,
                0.75,
                0.75 - 1e-12,
                0.75 + 1e-12,
                1.0
            ]),
            0.0..=1.0f64,
        ]
        .prop_map(SignalValue::Number)
        .boxed(),
        Kind::Number { unit: false } => prop_oneof![(0u32..40).prop_map(f64::from), 0.0..25.0f64]
            .prop_map(SignalValue::Number)
            .boxed(),
        // An open category's values are the methodologies' node types.
        Kind::Category { values: [], .. } => prop::sample::select(node_types().clone())
            .prop_map(SignalValue::category)
            .boxed(),
        Kind::Category { values, .. } => prop::sample::select(values.to_vec())
            .prop_map(SignalValue::category)
            .boxed(),
    }
}

/// Every catalogue signal of `scope`, each present with probability 0.85.
fn arb_signals(scope: Scope) -> impl Strategy<Value = Signals> {
    SIGNALS
        .iter()
        .filter(|s| s.scope == scope)
        .map(|s| {
            prop::option::weighted(0.85, arb_value(s))
                .prop_map(move |v| v.map(|v| (s.name.to_owned(), v)))
        })
        .collect::<Vec<_>>()
        .prop_map(|pairs| pairs.into_iter().flatten().collect())
}

/// Global signals and 0 to 5 nodes' signals, in creation order.
fn arb_case() -> impl Strategy<Value = (Signals, NodeSignals)> {
    (
        arb_signals(Scope::Global),
        prop::collection::vec(arb_signals(Scope::Node), 0..6),
    )
        .prop_map(|(signals, nodes)| {
            let nodes = nodes
                .into_iter()
                .enumerate()
                .map(|(i, s)| (format!("node-{i}"), s))
                .collect();
            (signals, nodes)
        })
}

/// The phase `score` uses without `--turn`: the signals' `meta.interview.phase`.
fn phase_of(signals: &Signals) -> Option<Phase> {
    match signals.get("meta.interview.phase")? {
        SignalValue::Category(c) => Some(Phase::parse(c).unwrap()),
        other => panic!("meta.interview.phase is {other:?}"),
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64)
}

/// Runs the property over `m`; returns the qualifier tally.
fn check_methodology(label: &str, m: &Methodology) -> Tally {
    let tally = RefCell::new(Tally::default());
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&arb_case(), |(signals, nodes)| {
        let phase = phase_of(&signals);
        check_selection(m, &signals, &nodes, phase, &mut tally.borrow_mut())
    });
    if let Err(e) = result {
        panic!("{label}: {e}");
    }
    tally.into_inner()
}

/// Every node type of the shipped ontologies and of [`ORIGINAL_STYLE`]'s.
fn node_types() -> &'static Vec<String> {
    static TYPES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        let original =
            parse_methodology(Path::new("original_style.yaml"), ORIGINAL_STYLE, &Catalog).unwrap();
        let mut types: Vec<String> = shipped()
            .into_iter()
            .map(|(_, m)| m)
            .chain([original])
            .flat_map(|m| m.ontology.nodes.into_iter().map(|n| n.name))
            .collect();
        types.sort();
        types.dedup();
        types
    });
    &TYPES
}

fn shipped() -> Vec<(String, Methodology)> {
    let dir = common::config();
    let ids = dir.ids(FileKind::Methodology);
    assert!(ids.len() >= 5, "{ids:?}");
    ids.into_iter()
        .map(|id| {
            let m = dir.methodology(&id, &Catalog).unwrap();
            (id, m)
        })
        .collect()
}

#[test]
fn every_shipped_methodology_scores_by_the_formula() {
    let mut seen = Tally::default();
    for (id, m) in shipped() {
        for (form, counts) in check_methodology(&id, &m).0 {
            let total = seen.0.entry(form).or_default();
            total[0] += counts[0];
            total[1] += counts[1];
        }
    }
    // The shipped files weigh booleans, unit bins and category values; each matched and
    // missed somewhere, and stage 2 ran in some cases and not in others.
    for form in ["bool", "unit bin", "category value", "stage 2"] {
        let [missed, matched] = seen.0.get(form).copied().unwrap_or_default();
        assert!(missed > 0 && matched > 0, "{form}: {seen:?}");
    }
}

#[test]
fn an_original_style_methodology_scores_by_the_formula() {
    let m = parse_methodology(Path::new("original_style.yaml"), ORIGINAL_STYLE, &Catalog).unwrap();
    // Every catalogue signal is weighed, so every generated signal takes part.
    for spec in SIGNALS {
        let weighed = m
            .strategies
            .iter()
            .flat_map(|s| s.signal_weights.keys())
            .any(|k| parse_key(k).0.name == spec.name);
        assert!(weighed, "{} is weighed nowhere", spec.name);
    }
    let seen = check_methodology("original_style", &m);
    for form in [
        "bool",
        "unit bin",
        "category value",
        "ordinal position",
        "stage 2",
    ] {
        let [missed, matched] = seen.0.get(form).copied().unwrap_or_default();
        assert!(missed > 0 && matched > 0, "{form}: {seen:?}");
    }
}

/// The independent reading of the qualifier rules on the cases README spells out.
#[test]
fn the_reference_reads_the_qualifiers_as_the_readme_does() {
    let mut tally = Tally::default();
    let mut holds = |key: &str, value: SignalValue| {
        let (spec, qualifier) = parse_key(key);
        qualifier_holds(spec, &value, qualifier.unwrap(), &mut tally)
    };
    let cat = SignalValue::category;
    // Level categories have a value `low`: `.low` is that value, never `none`.
    assert!(holds("graph.node.focus_streak.low", cat("low")));
    assert!(!holds("graph.node.focus_streak.low", cat("none")));
    // No value is named `mid`: positional, `low` (1/3) and `medium` (2/3).
    assert!(holds("graph.node.focus_streak.mid", cat("low")));
    assert!(holds("graph.node.focus_streak.mid", cat("medium")));
    assert!(!holds("graph.node.focus_streak.mid", cat("none")));
    assert!(!holds(
        "technique.node.strategy_repetition.mid",
        cat("high")
    ));
    assert!(holds(
        "technique.node.strategy_repetition.high",
        cat("high")
    ));
    assert!(!holds(
        "technique.node.strategy_repetition.high",
        cat("medium")
    ));
    // Depth has no value named low/mid/high: all positional.
    assert!(holds("llm.response_depth.low", cat("surface")));
    assert!(holds("llm.response_depth.mid", cat("shallow")));
    assert!(holds("llm.response_depth.mid", cat("moderate")));
    assert!(holds("llm.response_depth.high", cat("deep")));
    assert!(!holds("llm.response_depth.high", cat("moderate")));
    // The phase has a value `mid`.
    assert!(holds("meta.interview.phase.mid", cat("mid")));
    assert!(!holds("meta.interview.phase.low", cat("mid")));
    assert!(holds("meta.interview.phase.low", cat("early")));
    // Unit bins: 0.25 is low, 0.75 is high.
    assert!(holds("llm.engagement.low", SignalValue::Number(0.25)));
    assert!(holds(
        "llm.engagement.mid",
        SignalValue::Number(0.25 + 1e-12)
    ));
    assert!(holds("llm.engagement.high", SignalValue::Number(0.75)));
    assert!(!holds("llm.engagement.mid", SignalValue::Number(0.75)));
    assert!(holds(
        "graph.chain_completion.has_complete.false",
        SignalValue::Bool(false)
    ));
}
