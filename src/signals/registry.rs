//! The detector registry: every detector with its declared dependencies, run in topological
//! order so a detector sees the outputs it depends on.
//!
//! Building a registry rejects unknown dependencies and cycles, so the order is fixed before
//! any turn runs; detection itself cannot fail.

use std::collections::{BTreeMap, BTreeSet};

use super::catalog;
use super::input::{Detected, DetectionInput};
use crate::config::Methodology;

/// The interview phase: always computed, since scoring applies the phase's modifiers.
const PHASE: &str = "meta.interview.phase";
/// The answer depth rubric, and the session-scoped trend that follows it.
const DEPTH: &str = "llm.response_depth";
const TREND: &str = "llm.global_response_trend";

/// A detector: a namespaced name, the detectors it reads, and a pure function.
#[derive(Clone, Copy)]
pub struct Detector {
    pub name: &'static str,
    pub depends_on: &'static [&'static str],
    pub detect: fn(&DetectionInput<'_>, &mut Detected),
}

impl std::fmt::Debug for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Detector")
            .field("name", &self.name)
            .field("depends_on", &self.depends_on)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("detector '{detector}' depends on '{missing}', which no detector provides")]
    UnknownDependency {
        detector: &'static str,
        missing: &'static str,
    },
    #[error("detectors form a dependency cycle: {}", .0.join(" → "))]
    Cycle(Vec<&'static str>),
    #[error("two detectors are named '{0}'")]
    Duplicate(&'static str),
}

/// Detectors in an order where every dependency precedes its dependents.
#[derive(Debug, Clone)]
pub struct Registry {
    ordered: Vec<Detector>,
}

impl Registry {
    /// Orders `detectors` topologically (Kahn's algorithm; ties keep the given order).
    pub fn new(detectors: Vec<Detector>) -> Result<Self, RegistryError> {
        let mut names = BTreeSet::new();
        for d in &detectors {
            if !names.insert(d.name) {
                return Err(RegistryError::Duplicate(d.name));
            }
        }
        for d in &detectors {
            if let Some(missing) = d.depends_on.iter().find(|dep| !names.contains(*dep)) {
                return Err(RegistryError::UnknownDependency {
                    detector: d.name,
                    missing,
                });
            }
        }
        let mut remaining = detectors;
        let mut ordered: Vec<Detector> = Vec::with_capacity(remaining.len());
        while !remaining.is_empty() {
            let done: BTreeSet<&str> = ordered.iter().map(|d| d.name).collect();
            let ready = remaining
                .iter()
                .position(|d| d.depends_on.iter().all(|dep| done.contains(dep)));
            match ready {
                Some(i) => ordered.push(remaining.remove(i)),
                None => return Err(RegistryError::Cycle(cycle_in(&remaining))),
            }
        }
        Ok(Self { ordered })
    }

    /// The standard registry of every detector in [`super::detectors`].
    pub fn standard() -> Self {
        // The standard set is a compile-time constant; its ordering is covered by a unit test,
        // so a failure here is impossible at run time. Fall back to the given order regardless.
        Self::new(super::detectors::all()).unwrap_or_else(|_| Self {
            ordered: super::detectors::all(),
        })
    }

    /// Detector names in execution order.
    pub fn order(&self) -> Vec<&'static str> {
        self.ordered.iter().map(|d| d.name).collect()
    }

    /// The detectors needed for `requested` names (detectors or their outputs, or weight keys
    /// with qualifiers), closed over dependencies, in execution order.
    pub fn plan<'a>(&self, requested: impl IntoIterator<Item = &'a str>) -> Vec<&'static str> {
        let mut wanted: BTreeSet<&'static str> = BTreeSet::new();
        for key in requested {
            if let Some(det) = self.detector_for(key) {
                wanted.insert(det);
            }
        }
        let mut changed = true;
        while changed {
            changed = false;
            for d in &self.ordered {
                if wanted.contains(d.name) {
                    for dep in d.depends_on {
                        changed |= wanted.insert(dep);
                    }
                }
            }
        }
        self.ordered
            .iter()
            .map(|d| d.name)
            .filter(|n| wanted.contains(n))
            .collect()
    }

    /// The detectors to run for `methodology`, following seed 001's "YAML Configuration Flow":
    /// `config.signals` makes the global detector, so the global signals are what its
    /// `signals:` section lists, the detectors those read, and the phase (scoring applies phase
    /// weights and bonuses); the node signals come from their own service, outside the section,
    /// and always run (on what the plan computes: a node signal never asks for a rubric the
    /// section leaves out); the session-scoped `llm.global_response_trend`, which the original
    /// system's files weigh without listing it, runs whenever the answer depth is scored.
    /// `None`, every detector, when the section lists nothing.
    pub fn plan_for(&self, methodology: &Methodology) -> Option<Vec<&'static str>> {
        let wanted = methodology.wanted_signals()?;
        let mut planned = self.plan(wanted.iter().map(String::as_str).chain([PHASE]));
        if planned.contains(&DEPTH) {
            planned = self.plan(planned.iter().copied().chain([TREND]));
        }
        let node_scoped = |name: &str| {
            catalog::SIGNALS
                .iter()
                .any(|s| s.detector == name && s.scope == catalog::Scope::Node)
        };
        Some(
            self.ordered
                .iter()
                .map(|d| d.name)
                .filter(|n| planned.contains(n) || node_scoped(n))
                .collect(),
        )
    }

    /// Whether a run of `plan` (every detector when `None`) computes the signal a weight key
    /// names; false for a key no detector produces.
    pub fn computes(&self, plan: Option<&[&'static str]>, key: &str) -> bool {
        self.detector_for(key)
            .is_some_and(|d| plan.is_none_or(|p| p.contains(&d)))
    }

    /// The detector producing a name, an output or a qualified weight key.
    fn detector_for(&self, key: &str) -> Option<&'static str> {
        let by_name = |k: &str| {
            catalog::spec(k)
                .map(|s| s.detector)
                .or_else(|| self.ordered.iter().find(|d| d.name == k).map(|d| d.name))
        };
        by_name(key).or_else(|| key.rsplit_once('.').and_then(|(base, _)| by_name(base)))
    }

    /// Runs the planned detectors (all when `plan` is `None`).
    pub fn detect(&self, input: &DetectionInput<'_>, plan: Option<&[&'static str]>) -> Detected {
        let mut out = Detected::default();
        for d in &self.ordered {
            if plan.is_none_or(|p| p.contains(&d.name)) {
                (d.detect)(input, &mut out);
            }
        }
        out
    }
}

/// Names one cycle among detectors that could not be ordered.
fn cycle_in(stuck: &[Detector]) -> Vec<&'static str> {
    let deps: BTreeMap<&'static str, &'static [&'static str]> =
        stuck.iter().map(|d| (d.name, d.depends_on)).collect();
    let Some(start) = stuck.first().map(|d| d.name) else {
        return Vec::new();
    };
    let mut path = vec![start];
    let mut current = start;
    loop {
        let next = deps
            .get(current)
            .and_then(|ds| ds.iter().find(|d| deps.contains_key(*d)));
        let Some(&next) = next else { return path };
        if let Some(pos) = path.iter().position(|n| *n == next) {
            let mut cycle: Vec<&'static str> = path.split_off(pos);
            cycle.push(next);
            return cycle;
        }
        path.push(next);
        current = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop(_: &DetectionInput<'_>, _: &mut Detected) {}

    fn det(name: &'static str, depends_on: &'static [&'static str]) -> Detector {
        Detector {
            name,
            depends_on,
            detect: noop,
        }
    }

    #[test]
    fn orders_dependencies_first() {
        let r = Registry::new(vec![det("c", &["b"]), det("b", &["a"]), det("a", &[])]).unwrap();
        assert_eq!(r.order(), vec!["a", "b", "c"]);
    }

    #[test]
    fn rejects_cycles_and_names_them() {
        let err =
            Registry::new(vec![det("a", &["b"]), det("b", &["c"]), det("c", &["a"])]).unwrap_err();
        assert_eq!(err, RegistryError::Cycle(vec!["a", "b", "c", "a"]));
    }

    #[test]
    fn rejects_unknown_dependencies() {
        let err = Registry::new(vec![det("a", &["ghost"])]).unwrap_err();
        assert!(matches!(
            err,
            RegistryError::UnknownDependency {
                missing: "ghost",
                ..
            }
        ));
    }

    #[test]
    fn standard_registry_orders_and_plans() {
        let r = Registry::new(super::super::detectors::all()).unwrap();
        let order = r.order();
        let pos = |n: &str| order.iter().position(|o| *o == n).unwrap();
        assert!(pos("graph.node.exhausted") < pos("meta.node.opportunity"));
        assert!(pos("llm.response_depth") < pos("meta.node.opportunity"));
        let plan = r.plan(["meta.node.opportunity.fresh"]);
        assert!(plan.contains(&"graph.node.exhausted"));
        assert!(plan.contains(&"llm.response_depth"));
        assert_eq!(
            r.plan(["graph.chain_completion.has_complete.false"]),
            vec!["graph.chain_completion"]
        );
    }

    /// A methodology's `signals:` section decides the plan: the listed detectors, what they
    /// read, and the phase; an empty section runs everything.
    #[test]
    fn a_methodology_plans_what_it_lists() {
        #![allow(clippy::unwrap_used)]
        let dir = crate::config::ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"));
        let mut m = dir
            .methodology("means_end_chain", &crate::signals::Catalog)
            .unwrap();
        let r = Registry::standard();
        let all = r.plan_for(&m).unwrap();
        for s in &m.strategies {
            for key in s.signal_weights.keys() {
                assert!(
                    r.computes(Some(&all), key),
                    "{key} is weighed but not listed"
                );
            }
        }
        let node_detectors: BTreeSet<&str> = catalog::SIGNALS
            .iter()
            .filter(|s| s.scope == catalog::Scope::Node)
            .map(|s| s.detector)
            .collect();
        // Only node signals: the globals are the phase alone, and no rubric is asked for,
        // although node exhaustion reads answer depths (it sees none then).
        m.signals = [("graph".to_owned(), vec!["graph.node.is_orphan".to_owned()])]
            .into_iter()
            .collect();
        let plan = r.plan_for(&m).unwrap();
        let expected: BTreeSet<&str> = node_detectors.iter().copied().chain([PHASE]).collect();
        assert_eq!(plan.iter().copied().collect::<BTreeSet<_>>(), expected);
        assert!(!r.computes(Some(&plan), "llm.response_depth.deep"));
        assert!(!r.computes(Some(&plan), "llm.global_response_trend.fatigued"));
        // A listed node signal brings what it reads: exhaustion asks for the answer depth,
        // and the session-scoped trend follows the depth.
        m.signals = [(
            "graph".to_owned(),
            vec!["graph.node.exhaustion_score".to_owned()],
        )]
        .into_iter()
        .collect();
        let plan = r.plan_for(&m).unwrap();
        assert!(r.computes(Some(&plan), "llm.response_depth.deep"));
        assert!(r.computes(Some(&plan), "llm.global_response_trend.fatigued"));
        assert!(!r.computes(Some(&plan), "llm.valence.high"));
        assert!(!r.computes(Some(&plan), "graph.max_depth"));
        assert!(r.computes(None, "llm.valence.high"));
        // Weights on what is not computed are reported by name.
        let notes = m.unlisted_weights(&|k| r.computes(Some(&plan), k));
        assert!(!notes.is_empty());
        assert!(notes.iter().all(|n| n.path.contains(".signal_weights.")));
        m.signals.clear();
        assert!(r.plan_for(&m).is_none());
        assert!(m.unlisted_weights(&|_| false).is_empty());
    }
}
