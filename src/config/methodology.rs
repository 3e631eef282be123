//! Methodology YAML: the seed's schema (001 "YAML Configuration Structure"), typed, and its
//! validation (001 "Validation").
//!
//! Guidance fields under `ontology` (`extraction_guidelines`, `relationship_examples`,
//! `extractability_criteria`, `concept_naming_convention`) accept a string, a list or a mapping,
//! because the seeds show all three shapes; they are rendered to text for prompts.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::{Deserialize, Serialize};

use super::error::Problem;
use super::signal_names::SignalNames;
use crate::domain::{Phase, PhaseBoundaries};

/// A whole methodology file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Methodology {
    pub method: MethodInfo,
    pub ontology: Ontology,
    #[serde(default)]
    pub signals: BTreeMap<String, Vec<String>>,
    pub strategies: Vec<Strategy>,
    #[serde(default)]
    pub phases: BTreeMap<String, PhaseConfig>,
    /// Graph thresholds (seed 001 "Feature Flags"); the seed's values when left out.
    #[serde(default)]
    pub thresholds: Thresholds,
    /// How the depth signals are scaled to [0, 1]; see [`DepthNormalisation`].
    #[serde(default)]
    pub depth_normalisation: DepthNormalisation,
    /// Where the phases change; the seed's boundaries when left out.
    #[serde(default)]
    pub phase_boundaries: PhaseBoundaries,
}

/// How `graph.max_depth` and `graph.avg_depth` (chain depth in edges) are scaled to [0, 1].
/// The seeds do not say; `ladder_span` (the default) divides by the ontology's highest minus
/// lowest level, so a full ladder reads 1.0. `node_types` divides by the number of node
/// types, as the original system does, so weights written for it mean what they meant there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DepthNormalisation {
    #[default]
    LadderSpan,
    NodeTypes,
}

/// The similarity thresholds and slot support that seed 001 names as settings, under its
/// names: surface dedup merges at `surface_similarity_threshold` (0.80), canonical slots merge
/// at `canonical_similarity_threshold` (0.60) and a candidate slot is promoted with
/// `canonical_min_support_nodes` (2) members.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    pub surface_similarity_threshold: f32,
    pub canonical_similarity_threshold: f32,
    pub canonical_min_support_nodes: u32,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            surface_similarity_threshold: 0.80,
            canonical_similarity_threshold: 0.60,
            canonical_min_support_nodes: 2,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodInfo {
    pub name: String,
    #[serde(default, deserialize_with = "text_or_number")]
    pub version: String,
    #[serde(default)]
    pub goal: String,
    #[serde(default)]
    pub opening_bias: String,
    #[serde(default)]
    pub description: String,
    /// Phrasings of the opening question, with a `{topic}` placeholder: what a modelless
    /// session asks, and the floor when a model's opening question fails the question check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opening_templates: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ontology {
    pub nodes: Vec<NodeType>,
    #[serde(default)]
    pub edges: Vec<EdgeType>,
    #[serde(default)]
    pub extraction_guidelines: Guidance,
    #[serde(default)]
    pub relationship_examples: Guidance,
    #[serde(default)]
    pub extractability_criteria: Guidance,
    #[serde(default)]
    pub concept_naming_convention: Guidance,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeType {
    pub name: String,
    #[serde(default)]
    pub level: u32,
    #[serde(default)]
    pub terminal: bool,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub examples: Vec<String>,
    /// Respondents' own phrasings of this type, as interviews put them (longer and looser
    /// than `examples`). Offline understanding types a phrase by its nearest examples and
    /// phrasings; prompts show only `examples`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phrasings: Vec<String>,
    /// Concepts of this type are, by what the type means, something the respondent speaks
    /// against (a struggle, a friction): a focus of the type counts as negative where the
    /// respondent's words gave it no stance of their own, so node-bound strategies ask about
    /// it with their `negative_focus_templates`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub negative: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeType {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// `[source_type, target_type]` pairs; `"*"` matches any node type.
    #[serde(default)]
    pub permitted_connections: Vec<(String, String)>,
}

/// Free-form guidance text for prompts, in whichever YAML shape the author chose.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Guidance(pub serde_json::Value);

impl Guidance {
    /// Renders the guidance as indented plain text; empty when absent.
    pub fn render(&self) -> String {
        let mut out = String::new();
        render_value(&self.0, 0, &mut out);
        out.trim_end().to_owned()
    }

    pub fn is_empty(&self) -> bool {
        self.render().is_empty()
    }
}

fn render_value(v: &serde_json::Value, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    match v {
        serde_json::Value::Null => {}
        serde_json::Value::String(s) => {
            for line in s.lines() {
                out.push_str(&format!("{pad}{line}\n"));
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                if item.is_object() || item.is_array() {
                    out.push_str(&format!("{pad}-\n"));
                    render_value(item, indent + 1, out);
                } else {
                    out.push_str(&format!("{pad}- {}\n", scalar(item)));
                }
            }
        }
        serde_json::Value::Object(map) => {
            for (k, item) in map {
                if item.is_object() || item.is_array() {
                    out.push_str(&format!("{pad}{k}:\n"));
                    render_value(item, indent + 1, out);
                } else {
                    out.push_str(&format!("{pad}{k}: {}\n", scalar(item)));
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether stage 2 picks a focus node for a strategy.
///
/// Unknown spellings deserialise into `Invalid` so validation can report them together with
/// every other problem of the file; a validated methodology never contains `Invalid`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NodeBinding {
    #[default]
    Required,
    None,
    Invalid(String),
}

/// What the question generator focuses on for a strategy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FocusMode {
    #[default]
    RecentNode,
    Summary,
    Topic,
    Invalid(String),
}

macro_rules! string_enum {
    ($ty:ident { $($variant:ident => $text:literal),+ }) => {
        impl $ty {
            pub const ALLOWED: &'static [&'static str] = &[$($text),+];

            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $text,)+
                    Self::Invalid(s) => s,
                }
            }
        }

        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                Ok(match text.as_str() {
                    $($text => Self::$variant,)+
                    _ => Self::Invalid(text),
                })
            }
        }
    };
}

string_enum!(NodeBinding { Required => "required", None => "none" });
string_enum!(FocusMode { RecentNode => "recent_node", Summary => "summary", Topic => "topic" });

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Strategy {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Weight per signal key, in file order (the decomposition lists them in this order).
    pub signal_weights: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub node_binding: NodeBinding,
    #[serde(default)]
    pub focus_mode: FocusMode,
    #[serde(default)]
    pub generates_closing_question: bool,
    /// Phrasings of this strategy's question with `{focus}` (node-bound strategies only) and
    /// `{topic}` placeholders: what a modelless session asks, and the floor when a model's
    /// question fails the question check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub question_templates: Vec<String>,
    /// Phrasings for a focus the respondent spoke against (stance −1: "high price", "lost our
    /// mum"), where "Why is it important to you?" or "What does it give you?" would presume
    /// they value it. Node-bound strategies only; without them, `question_templates` serve
    /// every focus.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub negative_focus_templates: Vec<String>,
    /// Phrasings for a focus the respondent spoke well of (stance +1: "had someone in my
    /// corner", "worth more than the whole handbook"), where "What did it cost you?" or "What
    /// would you do differently?" would presume it went wrong. Node-bound strategies only;
    /// without them, `question_templates` serve every focus.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub positive_focus_templates: Vec<String>,
}

impl Strategy {
    /// Numeric weights in file order. Non-numeric weights are rejected at load, so this
    /// never drops a weight of a validated methodology.
    pub fn weights(&self) -> impl Iterator<Item = (&str, f64)> {
        self.signal_weights
            .iter()
            .filter_map(|(k, v)| v.as_f64().map(|w| (k.as_str(), w)))
    }

    /// The phrasings for a focus with this stance: the negative ones for a focus the
    /// respondent spoke against and the positive ones for a focus they spoke well of, when
    /// the strategy has them; its question templates otherwise.
    pub fn templates_for(&self, stance: i8) -> &[String] {
        if stance < 0 && !self.negative_focus_templates.is_empty() {
            &self.negative_focus_templates
        } else if stance > 0 && !self.positive_focus_templates.is_empty() {
            &self.positive_focus_templates
        } else {
            &self.question_templates
        }
    }

    /// Every phrasing of the strategy with the key it sits under:
    /// `("question_templates", j, text)`, then the negative-focus and positive-focus ones.
    pub fn all_templates(&self) -> impl Iterator<Item = (&'static str, usize, &str)> {
        let plain = self
            .question_templates
            .iter()
            .enumerate()
            .map(|(j, t)| ("question_templates", j, t.as_str()));
        let negative = self
            .negative_focus_templates
            .iter()
            .enumerate()
            .map(|(j, t)| ("negative_focus_templates", j, t.as_str()));
        let positive = self
            .positive_focus_templates
            .iter()
            .enumerate()
            .map(|(j, t)| ("positive_focus_templates", j, t.as_str()));
        plain.chain(negative).chain(positive)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    #[serde(default)]
    pub description: String,
    /// Multipliers per strategy name.
    #[serde(default)]
    pub signal_weights: BTreeMap<String, f64>,
    /// Additive bonuses per strategy name.
    #[serde(default)]
    pub phase_bonuses: BTreeMap<String, f64>,
}

/// Placeholders a question template may use.
pub const TEMPLATE_PLACEHOLDERS: [&str; 2] = ["{focus}", "{topic}"];

/// Why a question template cannot be used, if it cannot: it must be one question (ending with
/// `?`) and use only the known placeholders; `{focus}` only where a node is bound.
fn template_problem(template: &str, focus_allowed: bool) -> Option<String> {
    let text = template.trim();
    if text.is_empty() {
        return Some("a question template must not be empty".to_owned());
    }
    if !text.ends_with('?') {
        return Some(format!("'{text}' must end with '?' (one question)"));
    }
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = rest.get(open..).unwrap_or_default();
        let Some(close) = after.find('}') else {
            return Some(format!("'{text}': unclosed '{{'"));
        };
        let placeholder = after.get(..=close).unwrap_or_default();
        if !TEMPLATE_PLACEHOLDERS.contains(&placeholder) {
            return Some(format!(
                "'{text}': unknown placeholder {placeholder} (allowed: {})",
                TEMPLATE_PLACEHOLDERS.join(", ")
            ));
        }
        if placeholder == "{focus}" && !focus_allowed {
            return Some(format!(
                "'{text}': {{focus}} needs a focus node; this question has none \
                 (node_binding: none, or the opening question)"
            ));
        }
        rest = after.get(close + 1..).unwrap_or_default();
    }
    None
}

fn text_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    match v {
        serde_json::Value::String(s) => Ok(s),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        serde_json::Value::Null => Ok(String::new()),
        other => Err(serde::de::Error::custom(format!(
            "expected a string, found {other}"
        ))),
    }
}

impl Methodology {
    pub fn strategy(&self, name: &str) -> Option<&Strategy> {
        self.strategies.iter().find(|s| s.name == name)
    }

    pub fn phase(&self, phase: Phase) -> Option<&PhaseConfig> {
        self.phases.get(phase.as_str())
    }

    pub fn node_type(&self, name: &str) -> Option<&NodeType> {
        self.ontology.nodes.iter().find(|n| n.name == name)
    }

    /// The stance of a concept of type `node_type` whose own stance is `stance`: its own when
    /// it has one, −1 when it has none and its type is `negative`, 0 otherwise.
    pub fn stance_of(&self, node_type: &str, stance: i8) -> i8 {
        match stance.signum() {
            0 if self.node_type(node_type).is_some_and(|t| t.negative) => -1,
            own => own,
        }
    }

    /// The signals this methodology's `signals:` section lists (seed 001 "YAML Configuration
    /// Flow": `config.signals` decides which detectors run), as signal or detector names; `None`
    /// when the section lists nothing, and then every signal is computed.
    pub fn wanted_signals(&self) -> Option<BTreeSet<String>> {
        let listed: BTreeSet<String> = self.signals.values().flatten().cloned().collect();
        (!listed.is_empty()).then_some(listed)
    }

    /// Whether the methodology lists rubric `name` (`llm.<name>`, or one of its outputs
    /// `llm.<name>.…`); every rubric when the methodology lists no signals.
    pub fn wants_rubric(&self, name: &str) -> bool {
        let signal = format!("llm.{name}");
        self.wanted_signals().is_none_or(|wanted| {
            wanted.iter().any(|key| {
                key == &signal
                    || key
                        .strip_prefix(signal.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
            })
        })
    }

    /// Weights on signals that the `signals:` section does not ask for: such a signal is never
    /// computed, so the weight never counts. `is_computed(key)` says whether the weight key's
    /// signal is computed under the section (dependencies included). Empty when the section
    /// lists nothing.
    pub fn unlisted_weights(&self, is_computed: &dyn Fn(&str) -> bool) -> Vec<Problem> {
        if self.wanted_signals().is_none() {
            return Vec::new();
        }
        let mut notes = Vec::new();
        for (i, s) in self.strategies.iter().enumerate() {
            for key in s.signal_weights.keys().filter(|k| !is_computed(k)) {
                notes.push(Problem::new(
                    format!("strategies[{i}].signal_weights.{key}"),
                    "its signal is not listed under signals:, so it is never computed and \
                     this weight never counts",
                ));
            }
        }
        notes
    }

    /// The phase of `turn` in an interview of `max_turns` turns, under this methodology's
    /// boundaries.
    pub fn phase_for(&self, turn: u32, max_turns: u32) -> Phase {
        self.phase_boundaries.phase(turn, max_turns)
    }

    /// What the depth signals are divided by, at least 1 (see [`DepthNormalisation`]).
    pub fn depth_divisor(&self) -> u32 {
        match self.depth_normalisation {
            DepthNormalisation::LadderSpan => self.ladder_span(),
            DepthNormalisation::NodeTypes => u32::try_from(self.ontology.nodes.len())
                .unwrap_or(u32::MAX)
                .max(1),
        }
    }

    /// Ladder length in edges (highest level − lowest level), at least 1.
    pub fn ladder_span(&self) -> u32 {
        let (lo, hi) = self.level_range();
        hi.saturating_sub(lo).max(1)
    }

    /// The lowest and highest level of the ontology's node types; `(0, 0)` without types.
    pub fn level_range(&self) -> (u32, u32) {
        let levels = self.ontology.nodes.iter().map(|n| n.level);
        let (lo, hi) = levels.fold((u32::MAX, 0), |(lo, hi), l| (lo.min(l), hi.max(l)));
        if lo > hi { (0, 0) } else { (lo, hi) }
    }

    /// Whether an edge of `edge_type` may join `source_type` → `target_type`.
    pub fn permits(&self, edge_type: &str, source_type: &str, target_type: &str) -> bool {
        self.ontology
            .edges
            .iter()
            .filter(|e| e.name == edge_type)
            .any(|e| {
                e.permitted_connections
                    .iter()
                    .any(|(s, t)| (s == "*" || s == source_type) && (t == "*" || t == target_type))
            })
    }

    /// Every semantic problem of the methodology, signal names checked against `signals`;
    /// empty when it is usable.
    pub fn validate(&self, signals: &dyn SignalNames) -> Vec<Problem> {
        let mut problems = Vec::new();
        self.validate_ontology(&mut problems);
        self.validate_signals(signals, &mut problems);
        self.validate_strategies(signals, &mut problems);
        self.validate_thresholds(&mut problems);
        self.validate_phases(&mut problems);
        self.validate_templates(&mut problems);
        problems
    }

    fn validate_templates(&self, problems: &mut Vec<Problem>) {
        for (j, template) in self.method.opening_templates.iter().enumerate() {
            if let Some(reason) = template_problem(template, false) {
                problems.push(Problem::new(
                    format!("method.opening_templates[{j}]"),
                    reason,
                ));
            }
        }
        for (i, s) in self.strategies.iter().enumerate() {
            let focus_allowed = s.node_binding == NodeBinding::Required;
            for (key, j, template) in s.all_templates() {
                if let Some(reason) = template_problem(template, focus_allowed) {
                    problems.push(Problem::new(format!("strategies[{i}].{key}[{j}]"), reason));
                }
            }
            let stanced = [
                ("negative_focus_templates", &s.negative_focus_templates),
                ("positive_focus_templates", &s.positive_focus_templates),
            ];
            for (key, templates) in stanced {
                if !focus_allowed && !templates.is_empty() {
                    problems.push(Problem::new(
                        format!("strategies[{i}].{key}"),
                        "only a node-bound strategy has a focus to speak of \
                         (node_binding: none here)",
                    ));
                }
            }
        }
    }

    fn validate_ontology(&self, problems: &mut Vec<Problem>) {
        if self.ontology.nodes.is_empty() {
            problems.push(Problem::new(
                "ontology.nodes",
                "at least one node type is required",
            ));
        }
        let mut seen = HashSet::new();
        for (i, n) in self.ontology.nodes.iter().enumerate() {
            if !seen.insert(n.name.as_str()) {
                problems.push(Problem::new(
                    format!("ontology.nodes[{i}].name"),
                    format!("duplicate node type '{}'", n.name),
                ));
            }
        }
        for (i, e) in self.ontology.edges.iter().enumerate() {
            for (j, (s, t)) in e.permitted_connections.iter().enumerate() {
                for (side, ty) in [("source", s), ("target", t)] {
                    if ty != "*" && self.node_type(ty).is_none() {
                        problems.push(Problem::new(
                            format!("ontology.edges[{i}].permitted_connections[{j}]"),
                            format!("{side} '{ty}' is not a node type of this ontology"),
                        ));
                    }
                }
            }
        }
    }

    fn validate_signals(&self, signals: &dyn SignalNames, problems: &mut Vec<Problem>) {
        for (pool, names) in &self.signals {
            if !signals.is_pool(pool) {
                problems.push(Problem::new(
                    format!("signals.{pool}"),
                    format!(
                        "unknown pool '{pool}' (pools: {})",
                        signals.pools().join(", ")
                    ),
                ));
            }
            for (i, name) in names.iter().enumerate() {
                if !signals.is_known(name) {
                    problems.push(Problem::new(
                        format!("signals.{pool}[{i}]"),
                        format!("unknown signal '{name}'"),
                    ));
                }
            }
        }
    }

    fn validate_strategies(&self, signals: &dyn SignalNames, problems: &mut Vec<Problem>) {
        if self.strategies.is_empty() {
            problems.push(Problem::new(
                "strategies",
                "at least one strategy is required",
            ));
        }
        let mut seen = HashSet::new();
        for (i, s) in self.strategies.iter().enumerate() {
            if !seen.insert(s.name.as_str()) {
                problems.push(Problem::new(
                    format!("strategies[{i}].name"),
                    format!("duplicate strategy name '{}'", s.name),
                ));
            }
            if let NodeBinding::Invalid(v) = &s.node_binding {
                problems.push(Problem::new(
                    format!("strategies[{i}].node_binding"),
                    format!(
                        "'{v}' is not a node_binding (allowed: {})",
                        NodeBinding::ALLOWED.join(", ")
                    ),
                ));
            }
            if let FocusMode::Invalid(v) = &s.focus_mode {
                problems.push(Problem::new(
                    format!("strategies[{i}].focus_mode"),
                    format!(
                        "'{v}' is not a focus_mode (allowed: {})",
                        FocusMode::ALLOWED.join(", ")
                    ),
                ));
            }
            for (key, weight) in &s.signal_weights {
                let at = format!("strategies[{i}].signal_weights.{key}");
                if !weight.is_number() {
                    problems.push(Problem::new(
                        at.clone(),
                        format!("weight must be a number, found {weight}"),
                    ));
                }
                if let Some(reason) = signals.weight_key_problem(key) {
                    problems.push(Problem::new(at, reason));
                } else if let Some(t) = signals.node_type_in_key(key)
                    && self.node_type(t).is_none()
                {
                    let types: Vec<&str> = self
                        .ontology
                        .nodes
                        .iter()
                        .map(|n| n.name.as_str())
                        .collect();
                    problems.push(Problem::new(
                        at,
                        format!(
                            "'{t}' is not a node type of this methodology's ontology (types: {})",
                            types.join(", ")
                        ),
                    ));
                }
            }
        }
    }

    fn validate_thresholds(&self, problems: &mut Vec<Problem>) {
        for (field, reason) in self.phase_boundaries.problems() {
            problems.push(Problem::new(format!("phase_boundaries.{field}"), reason));
        }
        let t = &self.thresholds;
        for (name, value) in [
            (
                "surface_similarity_threshold",
                t.surface_similarity_threshold,
            ),
            (
                "canonical_similarity_threshold",
                t.canonical_similarity_threshold,
            ),
        ] {
            if !(value > 0.0 && value <= 1.0) {
                problems.push(Problem::new(
                    format!("thresholds.{name}"),
                    format!("a cosine similarity threshold must be in (0, 1], found {value}"),
                ));
            }
        }
        if t.canonical_min_support_nodes == 0 {
            problems.push(Problem::new(
                "thresholds.canonical_min_support_nodes",
                "a slot needs at least 1 supporting node to be promoted",
            ));
        }
    }

    fn validate_phases(&self, problems: &mut Vec<Problem>) {
        for (phase, cfg) in &self.phases {
            if Phase::parse(phase).is_none() {
                problems.push(Problem::new(
                    format!("phases.{phase}"),
                    "phase must be early, mid or late",
                ));
            }
            let tables = [
                ("signal_weights", &cfg.signal_weights),
                ("phase_bonuses", &cfg.phase_bonuses),
            ];
            for (table, entries) in tables {
                for name in entries.keys() {
                    if self.strategy(name).is_none() {
                        problems.push(Problem::new(
                            format!("phases.{phase}.{table}.{name}"),
                            format!("'{name}' is not a strategy of this methodology"),
                        ));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vocabulary of one pool and one unit signal, enough to see that validation asks the
    /// vocabulary it is given rather than a catalogue of its own.
    struct FakeSignals;

    impl SignalNames for FakeSignals {
        fn pools(&self) -> &[&str] {
            &["graph"]
        }

        fn is_known(&self, name: &str) -> bool {
            name == "graph.node_count"
        }

        fn weight_key_problem(&self, key: &str) -> Option<String> {
            (key != "graph.node_count" && self.node_type_in_key(key).is_none())
                .then(|| format!("fake: no signal '{key}'"))
        }

        fn node_type_in_key<'k>(&self, key: &'k str) -> Option<&'k str> {
            key.strip_prefix("graph.node.type.")
        }
    }

    fn parse(yaml: &str) -> Methodology {
        crate::config::parse_methodology(std::path::Path::new("t.yaml"), yaml, &FakeSignals)
            .unwrap()
    }

    /// The validation problems of a methodology that parses but need not validate.
    fn problems_of(yaml: &str) -> Vec<String> {
        let m: Methodology =
            crate::config::yaml::parse(std::path::Path::new("t.yaml"), yaml).unwrap();
        m.validate(&FakeSignals)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    const BASE: &str = "method: {name: m, opening_templates: [\"What comes to mind about {topic}?\"]}\n\
        ontology: {nodes: [{name: attribute, level: 1}]}\n\
        strategies:\n";

    #[test]
    fn templates_are_optional_and_checked() {
        let ok = parse(&format!(
            "{BASE}  - name: deepen\n    signal_weights: {{}}\n    question_templates: \
             [\"Why is {{focus}} important to you?\"]\n  - name: broad\n    node_binding: none\n    \
             signal_weights: {{}}\n"
        ));
        assert!(
            ok.validate(&FakeSignals).is_empty(),
            "{:?}",
            ok.validate(&FakeSignals)
        );
        assert_eq!(ok.method.opening_templates.len(), 1);
        assert!(ok.strategies[1].question_templates.is_empty());
    }

    #[test]
    fn a_negative_type_makes_a_concept_without_a_stance_negative() {
        let m = parse(
            "method: {name: m, opening_templates: [\"What comes to mind about {topic}?\"]}\n\
             ontology: {nodes: [{name: job, level: 1}, {name: struggle, level: 1, negative: \
             true}]}\nstrategies:\n  - name: s\n    signal_weights: {}\n",
        );
        assert!(m.validate(&FakeSignals).is_empty());
        assert_eq!(m.stance_of("struggle", 0), -1);
        // The respondent's own stance wins ("not frazzled any more" is welcome).
        assert_eq!(m.stance_of("struggle", 1), 1);
        assert_eq!(m.stance_of("job", 0), 0);
        assert_eq!(m.stance_of("job", -1), -1);
        assert_eq!(m.stance_of("unknown", 0), 0);
        let wrong = crate::config::yaml::parse::<Methodology>(
            std::path::Path::new("t.yaml"),
            "method: {name: m}\nontology: {nodes: [{name: job, negative: 2}]}\n",
        );
        assert!(wrong.is_err());
    }

    #[test]
    fn a_negative_focus_gets_its_own_phrasings_on_node_bound_strategies_only() {
        let m = parse(&format!(
            "{BASE}  - name: deepen\n    signal_weights: {{}}\n    question_templates: \
             [\"Why is {{focus}} important to you?\"]\n    negative_focus_templates: \
             [\"How does {{focus}} affect you?\"]\n  - name: lateral\n    signal_weights: {{}}\n    \
             question_templates: [\"What else besides {{focus}}?\"]\n"
        ));
        assert!(m.validate(&FakeSignals).is_empty());
        let (deepen, lateral) = (&m.strategies[0], &m.strategies[1]);
        assert_eq!(deepen.templates_for(-1), ["How does {focus} affect you?"]);
        assert_eq!(
            deepen.templates_for(0),
            ["Why is {focus} important to you?"]
        );
        assert_eq!(deepen.templates_for(1), deepen.templates_for(0));
        assert_eq!(lateral.templates_for(-1), ["What else besides {focus}?"]);

        let problems = problems_of(&format!(
            "{BASE}  - name: broad\n    node_binding: none\n    signal_weights: {{}}\n    \
             negative_focus_templates: [\"What bothers you about {{topic}}\"]\n"
        ));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("negative_focus_templates[0]") && problems[0].contains("'?'"));
        assert!(
            problems[1].contains("negative_focus_templates") && problems[1].contains("node-bound")
        );
    }

    #[test]
    fn a_positive_focus_gets_its_own_phrasings_on_node_bound_strategies_only() {
        let m = parse(&format!(
            "{BASE}  - name: outcome\n    signal_weights: {{}}\n    question_templates: \
             [\"What did {{focus}} cost you?\"]\n    positive_focus_templates: \
             [\"What did {{focus}} make possible?\"]\n"
        ));
        assert!(m.validate(&FakeSignals).is_empty());
        let outcome = &m.strategies[0];
        assert_eq!(
            outcome.templates_for(1),
            ["What did {focus} make possible?"]
        );
        assert_eq!(outcome.templates_for(0), ["What did {focus} cost you?"]);
        assert_eq!(outcome.templates_for(-1), outcome.templates_for(0));

        let problems = problems_of(&format!(
            "{BASE}  - name: broad\n    node_binding: none\n    signal_weights: {{}}\n    \
             positive_focus_templates: [\"What went well with {{topic}}?\"]\n"
        ));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("positive_focus_templates") && problems[0].contains("node-bound")
        );
    }

    #[test]
    fn bad_templates_name_their_place_and_reason() {
        let problems = problems_of(&format!(
            "{BASE}  - name: broad\n    node_binding: none\n    signal_weights: {{}}\n    \
             question_templates: [\"Tell me about {{focus}}?\", \"What about {{topik}}?\", \
             \"No question here.\", \"Unclosed {{focus?\"]\n"
        ));
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            problems[0].contains("question_templates[0]") && problems[0].contains("focus node")
        );
        assert!(problems[1].contains("unknown placeholder {topik}"));
        assert!(problems[2].contains("must end with '?'"));
        assert!(problems[3].contains("unclosed"));
    }

    #[test]
    fn a_node_type_weight_names_a_type_of_the_ontology() {
        let problems = problems_of(&format!(
            "{BASE}  - name: deepen\n    signal_weights: \
             {{graph.node.type.attribute: 0.5, graph.node.type.value: 0.5}}\n"
        ));
        assert_eq!(
            problems,
            [
                "strategies[0].signal_weights.graph.node.type.value: 'value' is not a node type \
                 of this methodology's ontology (types: attribute)"
            ],
        );
    }

    #[test]
    fn signal_names_come_from_the_vocabulary_passed_in() {
        let problems = problems_of(&format!(
            "{BASE}  - name: broad\n    node_binding: none\n    signal_weights: \
             {{graph.node_count: 0.5, llm.engagement: 0.3}}\n\
             signals: {{graph: [graph.node_count, graph.orphan_count], llm: [llm.engagement]}}\n"
        ));
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("unknown pool 'llm' (pools: graph)"))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("unknown signal 'graph.orphan_count'"))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("unknown signal 'llm.engagement'"))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("signal_weights.llm.engagement")
                    && p.contains("fake: no signal"))
        );
    }

    /// `depth_normalisation` picks the depth signals' divisor: the ladder span by default, the
    /// number of node types (the original system's) on request; an unknown value is an error
    /// at its path.
    #[test]
    fn depth_normalisation_picks_the_divisor() {
        let yaml = |extra: &str| {
            format!(
                "method: {{name: m}}\n\
                 ontology: {{nodes: [{{name: a, level: 1}}, {{name: b, level: 2}}, \
                 {{name: c, level: 3}}]}}\n\
                 strategies:\n  - name: broad\n    node_binding: none\n    \
                 signal_weights: {{}}\n{extra}"
            )
        };
        assert_eq!(parse(&yaml("")).depth_divisor(), 2, "levels 1 to 3: span 2");
        assert_eq!(
            parse(&yaml("depth_normalisation: node_types\n")).depth_divisor(),
            3
        );
        let bad = crate::config::parse_methodology(
            std::path::Path::new("t.yaml"),
            &yaml("depth_normalisation: levels\n"),
            &FakeSignals,
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("depth_normalisation"), "{bad}");
    }
}
