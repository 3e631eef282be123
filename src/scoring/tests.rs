use std::path::Path;

use proptest::prelude::*;
use proptest::strategy::Strategy;

use super::*;
use crate::config::parse_methodology;

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

/// The seed's Path 18 example: deepen with `llm.response_depth.low: 0.8` and
/// `llm.engagement.high: 0.7`, phase multiplier 1.3 and bonus 0.2, and a node weighted by
/// `graph.node.exhaustion_score.low: 1.0`.
const PATH18: &str = r"
method: {name: path18}
ontology:
  nodes: [{name: attribute, level: 1}]
strategies:
  - name: deepen
    signal_weights:
      llm.response_depth.low: 0.8
      llm.engagement.high: 0.7
      graph.node.exhaustion_score.low: 1.0
  - name: reflect
    node_binding: none
    signal_weights:
      graph.max_depth: 0.5
phases:
  mid:
    signal_weights: {deepen: 1.3}
    phase_bonuses: {deepen: 0.2}
";

fn path18() -> Methodology {
    parse_methodology(Path::new("path18.yaml"), PATH18, &crate::signals::Catalog).unwrap()
}

fn sig(pairs: &[(&str, SignalValue)]) -> Signals {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

#[test]
fn path18_worked_example() {
    let m = path18();
    let signals = sig(&[
        ("llm.response_depth", SignalValue::category("surface")),
        ("llm.engagement", SignalValue::Number(1.0)),
        ("graph.max_depth", SignalValue::Number(0.4)),
    ]);
    let nodes: NodeSignals = vec![
        (
            "abc-123-def".to_owned(),
            sig(&[("graph.node.exhaustion_score", SignalValue::Number(0.1))]),
        ),
        (
            "other".to_owned(),
            sig(&[("graph.node.exhaustion_score", SignalValue::Number(0.9))]),
        ),
    ];
    let s = select(&m, &signals, &nodes, Some(Phase::Mid)).unwrap();
    let deepen = &s.strategies[0];
    assert_eq!(deepen.strategy, "deepen");
    assert_eq!(deepen.node_id, "");
    assert_eq!(deepen.signal_contributions.len(), 2);
    assert_eq!(
        deepen.signal_contributions[0].name,
        "llm.response_depth.low"
    );
    assert_eq!(
        deepen.signal_contributions[0].value,
        SignalValue::Bool(true)
    );
    close(deepen.signal_contributions[0].contribution, 0.8);
    close(deepen.signal_contributions[1].contribution, 0.7);
    close(deepen.base_score, 1.5);
    close(deepen.phase_multiplier, 1.3);
    close(deepen.phase_bonus, 0.2);
    close(deepen.final_score, 2.15); // 1.5 × 1.3 + 0.2
    assert_eq!((deepen.rank, deepen.selected), (1, true));
    let reflect = &s.strategies[1];
    close(reflect.final_score, 0.2);
    assert_eq!((reflect.rank, reflect.selected), (2, false));
    // Stage 2: the fresh node wins with exactly the seed's numbers.
    assert_eq!(s.node_id.as_deref(), Some("abc-123-def"));
    let node = &s.nodes[0];
    assert_eq!(
        node.signal_contributions[0].name,
        "graph.node.exhaustion_score.low"
    );
    close(node.base_score, 1.0);
    close(node.phase_multiplier, 1.0);
    close(node.phase_bonus, 0.0);
    close(node.final_score, 1.0);
    assert!(node.selected);
    // The "other" node resolves the key to false: present, zero contribution.
    close(s.nodes[1].final_score, 0.0);
    assert_eq!(
        s.nodes[1].signal_contributions[0].value,
        SignalValue::Bool(false)
    );
    assert_eq!(s.alternatives[0].0, "deepen");
    assert_eq!(s.decomposition().len(), 4);
}

#[test]
fn node_free_winner_skips_stage_two() {
    let m = path18();
    let signals = sig(&[("graph.max_depth", SignalValue::Number(1.0))]);
    let nodes: NodeSignals = vec![(
        "n1".to_owned(),
        sig(&[("graph.node.exhaustion_score", SignalValue::Number(0.0))]),
    )];
    let s = select(&m, &signals, &nodes, None).unwrap();
    assert_eq!(s.strategy, "reflect");
    assert_eq!(s.node_id, None);
    assert!(s.nodes.is_empty());
}

#[test]
fn no_phase_means_neutral_terms_and_missing_signals_contribute_nothing() {
    let m = path18();
    let s = select(&m, &Signals::new(), &Vec::new(), None).unwrap();
    for c in &s.strategies {
        assert!(c.signal_contributions.is_empty());
        close(c.phase_multiplier, 1.0);
        close(c.phase_bonus, 0.0);
    }
    // All tie at 0: methodology order decides.
    assert_eq!(s.strategy, "deepen");
    assert_eq!(s.node_id, None, "node-bound but no node signals");
}

#[test]
fn node_ties_go_to_the_newest_node() {
    let m = path18();
    let same = sig(&[("graph.node.exhaustion_score", SignalValue::Number(0.0))]);
    // Creation order: "older" first. Ids sort the other way, so neither id order nor input
    // order can pass for the rule.
    let nodes: NodeSignals = vec![
        ("older-b".to_owned(), same.clone()),
        ("middle".to_owned(), same.clone()),
        ("newer-a".to_owned(), same),
    ];
    let s = rank_nodes_for_strategy(&m.strategies[0], &nodes);
    let order: Vec<&str> = s.iter().map(|c| c.node_id.as_str()).collect();
    assert_eq!(order, ["newer-a", "middle", "older-b"]);
}

fn arb_value() -> impl Strategy<Value = SignalValue> {
    prop_oneof![
        any::<bool>().prop_map(SignalValue::Bool),
        (-2.0f64..2.0).prop_map(SignalValue::Number),
        prop::sample::select(vec!["surface", "shallow", "moderate", "deep"])
            .prop_map(SignalValue::category),
    ]
}

fn arb_signals() -> impl Strategy<Value = Signals> {
    let names = vec![
        "llm.response_depth",
        "llm.engagement",
        "graph.max_depth",
        "graph.node.exhaustion_score",
    ];
    prop::collection::btree_map(
        prop::sample::select(names).prop_map(str::to_owned),
        arb_value(),
        0..4,
    )
}

proptest! {
    #[test]
    fn final_is_sum_of_contributions_times_multiplier_plus_bonus(signals in arb_signals(), phase in prop::option::of(prop::sample::select(Phase::ALL.to_vec()))) {
        let m = path18();
        for c in rank_strategies(&m, &signals, phase) {
            let sum: f64 = c.signal_contributions.iter().map(|x| x.contribution).sum();
            prop_assert!((sum - c.base_score).abs() < 1e-12);
            prop_assert!((c.base_score * c.phase_multiplier + c.phase_bonus - c.final_score).abs() < 1e-12);
        }
    }

    #[test]
    fn ranking_is_total_deterministic_and_sorted(signals in arb_signals(), nodes in prop::collection::vec(arb_signals(), 0..6)) {
        let m = path18();
        let node_signals: NodeSignals = nodes.into_iter().enumerate().map(|(i, s)| (format!("n{i}"), s)).collect();
        let a = select(&m, &signals, &node_signals, Some(Phase::Mid)).unwrap();
        let b = select(&m, &signals, &node_signals, Some(Phase::Mid)).unwrap();
        prop_assert_eq!(&a, &b);
        for list in [&a.strategies, &a.nodes] {
            let ranks: Vec<u32> = list.iter().map(|c| c.rank).collect();
            prop_assert_eq!(ranks, (1..=u32::try_from(list.len()).unwrap()).collect::<Vec<_>>());
            prop_assert!(list.windows(2).all(|w| w[0].final_score >= w[1].final_score));
            prop_assert_eq!(list.iter().filter(|c| c.selected).count(), usize::from(!list.is_empty()));
        }
        prop_assert_eq!(a.strategies.len(), m.strategies.len());
    }

    /// The scorer walks each strategy's weights in the order the YAML file lists them (the
    /// decomposition shows them in that order), so the same weights listed in another order
    /// must give the same scores, ranks and selection. Several keys share a signal
    /// (`llm.engagement`, `.high`, `.low`), so a scorer that let an earlier key of a signal
    /// shadow a later one, or stopped early, would fail here. Weights and values are multiples
    /// of 1/8 and 1/16, so every sum is exact in any order and the comparison can be exact.
    #[test]
    fn result_is_invariant_to_signal_insertion_order(
        case in arb_weight_orders(),
        signals in arb_order_signals(),
        nodes in prop::collection::vec(arb_order_node_signals(), 0..4),
    ) {
        let (listed, shuffled) = case;
        let node_signals: NodeSignals =
            nodes.into_iter().enumerate().map(|(i, s)| (format!("n{i}"), s)).collect();
        let a = select(&order_methodology(&listed), &signals, &node_signals, Some(Phase::Mid)).unwrap();
        let b = select(&order_methodology(&shuffled), &signals, &node_signals, Some(Phase::Mid)).unwrap();
        prop_assert_eq!(by_contribution_name(a), by_contribution_name(b));
    }
}

/// Global weight keys, several per signal so that their order could matter.
const ORDER_GLOBAL_KEYS: [&str; 9] = [
    "llm.response_depth.low",
    "llm.response_depth.surface",
    "llm.response_depth.deep",
    "llm.engagement",
    "llm.engagement.high",
    "llm.engagement.low",
    "graph.max_depth",
    "graph.max_depth.mid",
    "graph.chain_completion.has_complete",
];

/// Node-scoped weight keys, for stage 2.
const ORDER_NODE_KEYS: [&str; 4] = [
    "graph.node.exhaustion_score",
    "graph.node.exhaustion_score.low",
    "graph.node.is_orphan",
    "graph.node.focus_streak.high",
];

/// One strategy's weights in file order.
type WeightList = Vec<(String, f64)>;

/// A multiple of 1/8 in [-2, 2]: exact in binary, and so are its products with the values.
fn arb_dyadic_weight() -> impl Strategy<Value = f64> {
    (-16i32..=16).prop_map(|n| f64::from(n) / 8.0)
}

/// A multiple of 1/16 in [0, 1].
fn arb_dyadic_unit() -> impl Strategy<Value = f64> {
    (0u8..=16).prop_map(|n| f64::from(n) / 16.0)
}

/// Three strategies' weights as listed, and the same weights with each list shuffled.
fn arb_weight_orders() -> impl Strategy<Value = (Vec<WeightList>, Vec<WeightList>)> {
    let keys: Vec<&str> = ORDER_GLOBAL_KEYS
        .iter()
        .chain(&ORDER_NODE_KEYS)
        .copied()
        .collect();
    let one = prop::collection::btree_map(
        prop::sample::select(keys).prop_map(str::to_owned),
        arb_dyadic_weight(),
        0..8,
    )
    .prop_map(|m| m.into_iter().collect::<WeightList>())
    .prop_flat_map(|list| (Just(list.clone()), Just(list).prop_shuffle()));
    prop::collection::vec(one, 3).prop_map(|pairs| pairs.into_iter().unzip())
}

fn arb_order_signals() -> impl Strategy<Value = Signals> {
    (
        prop::option::of(prop::sample::select(vec![
            "surface", "shallow", "moderate", "deep",
        ])),
        prop::option::of(arb_dyadic_unit()),
        prop::option::of(arb_dyadic_unit()),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(depth, engagement, max_depth, complete)| {
            let mut s = Signals::new();
            if let Some(d) = depth {
                s.insert("llm.response_depth".into(), SignalValue::category(d));
            }
            if let Some(v) = engagement {
                s.insert("llm.engagement".into(), SignalValue::Number(v));
            }
            if let Some(v) = max_depth {
                s.insert("graph.max_depth".into(), SignalValue::Number(v));
            }
            if let Some(b) = complete {
                s.insert(
                    "graph.chain_completion.has_complete".into(),
                    SignalValue::Bool(b),
                );
            }
            s
        })
}

fn arb_order_node_signals() -> impl Strategy<Value = Signals> {
    (
        prop::option::of(arb_dyadic_unit()),
        prop::option::of(any::<bool>()),
        prop::option::of(prop::sample::select(vec!["none", "low", "medium", "high"])),
    )
        .prop_map(|(exhaustion, orphan, streak)| {
            let mut s = Signals::new();
            if let Some(v) = exhaustion {
                s.insert("graph.node.exhaustion_score".into(), SignalValue::Number(v));
            }
            if let Some(b) = orphan {
                s.insert("graph.node.is_orphan".into(), SignalValue::Bool(b));
            }
            if let Some(c) = streak {
                s.insert("graph.node.focus_streak".into(), SignalValue::category(c));
            }
            s
        })
}

/// A methodology whose three strategies list `weights` in the given order, loaded through the
/// YAML loader like a real file; `s1` is node-free, and the mid phase scales `s1` and lifts
/// `s2`, so the phase terms take part.
fn order_methodology(weights: &[WeightList]) -> Methodology {
    let mut yaml = String::from(
        "method: {name: order}\nontology:\n  nodes: [{name: attribute, level: 1}]\nstrategies:\n",
    );
    for (i, list) in weights.iter().enumerate() {
        let entries: Vec<String> = list.iter().map(|(k, w)| format!("{k}: {w}")).collect();
        let binding = if i == 1 {
            "    node_binding: none\n"
        } else {
            ""
        };
        yaml.push_str(&format!(
            "  - name: s{i}\n{binding}    signal_weights: {{{}}}\n",
            entries.join(", ")
        ));
    }
    yaml.push_str(
        "phases:\n  mid:\n    signal_weights: {s1: 1.5}\n    phase_bonuses: {s2: 0.25}\n",
    );
    let m = parse_methodology(Path::new("order.yaml"), &yaml, &crate::signals::Catalog).unwrap();
    for (strategy, list) in m.strategies.iter().zip(weights) {
        let loaded: Vec<&str> = strategy.weights().map(|(k, _)| k).collect();
        let listed: Vec<&str> = list.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(loaded, listed, "the loader keeps the file's order");
    }
    m
}

/// The selection with each candidate's contributions sorted by key: their listed order is the
/// file's, by design; everything else must not depend on it.
fn by_contribution_name(mut s: Selection) -> Selection {
    for c in s.strategies.iter_mut().chain(&mut s.nodes) {
        c.signal_contributions.sort_by(|a, b| a.name.cmp(&b.name));
    }
    s
}
