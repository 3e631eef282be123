//! Shared value types that every layer speaks: signal values, interview phases, response depth,
//! focus entries and the graph summaries that signals read.
//!
//! Nothing here performs I/O or reads a clock. The graph layer computes [`GraphState`] and
//! [`CanonicalGraphState`] from the stored graph; this module only defines their shape.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// One detected signal value.
///
/// Numbers contribute `weight × value` to a strategy score, booleans contribute their weight
/// when true, categories only through qualified keys (`llm.response_depth.surface`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SignalValue {
    Bool(bool),
    Number(f64),
    Category(String),
}

impl SignalValue {
    /// A category value from anything string-like.
    pub fn category(value: impl Into<String>) -> Self {
        Self::Category(value.into())
    }
}

impl From<bool> for SignalValue {
    fn from(value: bool) -> Self {
        Self::Bool(value)
    }
}

impl From<f64> for SignalValue {
    fn from(value: f64) -> Self {
        Self::Number(value)
    }
}

impl From<u32> for SignalValue {
    fn from(value: u32) -> Self {
        Self::Number(f64::from(value))
    }
}

impl fmt::Display for SignalValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(b) => write!(f, "{b}"),
            Self::Number(n) => write!(f, "{}", format_number(*n)),
            Self::Category(c) => f.write_str(c),
        }
    }
}

/// Formats a score the way every report in the project does: up to four decimals, no trailing
/// zeros, so `2.15` prints as `2.15` and `1.0` as `1`.
pub fn format_number(n: f64) -> String {
    let s = format!("{n:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// A count with its noun, singular for one: `counted(1, "node")` is `1 node`, and
/// `counted(3, "edge")` is `3 edges` (the nouns counted here all take a plain `s`).
pub fn counted(n: impl TryInto<u64>, noun: &str) -> String {
    let n: u64 = n.try_into().unwrap_or(u64::MAX);
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Global signals, `{namespaced name: value}`, ordered by name for stable output.
pub type Signals = BTreeMap<String, SignalValue>;

/// Node-scoped signals in node creation order: `(node_id, signals)`.
///
/// A vector rather than a map because stage-2 ties are broken by creation order.
pub type NodeSignals = Vec<(String, Signals)>;

/// Interview phase (`meta.interview.phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Early,
    Mid,
    Late,
}

impl Phase {
    pub const ALL: [Phase; 3] = [Phase::Early, Phase::Mid, Phase::Late];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Early => "early",
            Self::Mid => "mid",
            Self::Late => "late",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// The phase of `turn_number` (1-based) in an interview of `max_turns` turns, under the
    /// seed's boundaries ([`PhaseBoundaries::default`]).
    pub fn for_turn(turn_number: u32, max_turns: u32) -> Self {
        PhaseBoundaries::default().phase(turn_number, max_turns)
    }
}

/// Where the phases change (seed 001 "Meta Signals": `early_max = max(2, round(max_turns ×
/// 0.10))` and `mid_max = max_turns − 2`); a methodology may set its own.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PhaseBoundaries {
    /// Share of the interview that is early (seed: 0.10).
    pub early_share: f64,
    /// At least this many early turns (seed: 2).
    pub early_min_turns: u32,
    /// The final turns that are late (seed: 2).
    pub late_turns: u32,
}

impl Default for PhaseBoundaries {
    fn default() -> Self {
        Self {
            early_share: 0.10,
            early_min_turns: 2,
            late_turns: 2,
        }
    }
}

impl PhaseBoundaries {
    /// The phase of `turn_number` (1-based) in an interview of `max_turns` turns.
    ///
    /// `early_max = max(early_min_turns, round(max_turns × early_share))` and `mid_max =
    /// max_turns − late_turns`. Python's `round` rounds halves to even, and so do we, so 25
    /// turns give `early_max = 2` as in the original.
    ///
    /// Short interviews keep a mid phase (the seeds are silent; the original guards it): from
    /// 3 turns on, early and late give way so each phase has a turn, which under the seed's
    /// boundaries makes 3 turns early, mid, late and 4 turns early, early, mid, late. Where
    /// the boundaries leave every phase a turn (5 turns or more under the seed's) they apply
    /// unchanged; 1 and 2 turns are early.
    pub fn phase(&self, turn_number: u32, max_turns: u32) -> Phase {
        let (early_max, mid_max, _) = self.limits(max_turns);
        let turn = f64::from(turn_number);
        if turn <= early_max {
            Phase::Early
        } else if turn <= mid_max {
            Phase::Mid
        } else {
            Phase::Late
        }
    }

    /// Why `turn_number` is in its phase (`meta.interview.phase_reason`): one of
    /// [`PHASE_REASONS`]; `short_interview` when the interview is so short that the
    /// boundaries gave way so every phase keeps a turn.
    pub fn reason(&self, turn_number: u32, max_turns: u32) -> &'static str {
        let [early, mid, late, short] = PHASE_REASONS;
        if self.limits(max_turns).2 {
            return short;
        }
        match self.phase(turn_number, max_turns) {
            Phase::Early => early,
            Phase::Mid => mid,
            Phase::Late => late,
        }
    }

    /// `(early_max, mid_max, whether the short-interview guard moved them)`.
    fn limits(&self, max_turns: u32) -> (f64, f64, bool) {
        let n = f64::from(max_turns);
        let early = (n * self.early_share)
            .round_ties_even()
            .max(f64::from(self.early_min_turns));
        let late = f64::from(self.late_turns);
        if max_turns < 3 {
            return (early, n - late, false);
        }
        let early_max = early.min(n - 2.0);
        let late_turns = late.min(n - early_max - 1.0);
        let moved = early_max < early || late_turns < late;
        (early_max, n - late_turns, moved)
    }

    /// Problems with the values, as `(field, reason)`.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if !(0.0..=1.0).contains(&self.early_share) {
            out.push((
                "early_share",
                format!("must be a share in [0, 1], found {}", self.early_share),
            ));
        }
        out
    }
}

/// The values of `meta.interview.phase_reason`: within the early window (the first ~10 % of
/// turns, at least two, under the seed's boundaries), between early and late, among the final
/// turns, or a short interview's adjusted boundaries.
pub const PHASE_REASONS: [&str; 4] = [
    "early_window",
    "mid_window",
    "final_turns",
    "short_interview",
];

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much a response elaborates (`llm.response_depth`), mapped from the 1–5 rubric score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseDepth {
    Surface,
    Shallow,
    Moderate,
    Deep,
}

impl ResponseDepth {
    pub const ALL: [ResponseDepth; 4] = [Self::Surface, Self::Shallow, Self::Moderate, Self::Deep];

    /// Maps the rubric's 1–5 score: 1 surface, 2 shallow, 3 moderate, 4–5 deep.
    ///
    /// Scores outside 1–5 are clamped; the batch parser rejects them before they get here.
    pub fn from_score(score: u8) -> Self {
        match score {
            0 | 1 => Self::Surface,
            2 => Self::Shallow,
            3 => Self::Moderate,
            _ => Self::Deep,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Surface => "surface",
            Self::Shallow => "shallow",
            Self::Moderate => "moderate",
            Self::Deep => "deep",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// Ordinal rank 0..=3, used by the response-trend signal.
    pub fn rank(self) -> u8 {
        self as u8
    }
}

/// How a spoken answer was heard: the speech model, the audio's length, the transcript's mean
/// token log-probability (closer to 0 is surer), and the kept audio file, if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerSpeech {
    pub model: String,
    pub duration_seconds: f64,
    pub mean_logprob: f64,
    /// The audio kept beside the database (`--keep-audio`), by file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_file: Option<String>,
}

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    Interviewer,
    Respondent,
}

impl Speaker {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Interviewer => "interviewer",
            Self::Respondent => "respondent",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "interviewer" => Some(Self::Interviewer),
            "respondent" => Some(Self::Respondent),
            _ => None,
        }
    }
}

/// How a session understands answers: extraction (stage 3), slot naming (4.5) and the rubric
/// signals (6) either by model calls with JSON reply contracts, or offline by the program (SRL
/// frames, MiniLM typing, embedding clusters and stated rules). Both produce the same
/// contracts; nothing downstream knows which made them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Understanding {
    /// Model calls (the seeds' design); the default for hosted providers and for sessions
    /// stored before the mode existed.
    #[default]
    Llm,
    /// The program itself; the default for the local model and for `--provider none`.
    Offline,
}

impl Understanding {
    pub const ALLOWED: [&'static str; 2] = ["llm", "offline"];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Llm => "llm",
            Self::Offline => "offline",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "llm" => Some(Self::Llm),
            "offline" => Some(Self::Offline),
            _ => None,
        }
    }
}

impl fmt::Display for Understanding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the focus trace (seed 000 Path 17): every turn gets one, node-free turns too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FocusEntry {
    /// Turn number, 1-based.
    pub turn: u32,
    /// Target node id; empty when the strategy is node-free or the graph was empty (turn 1).
    pub node_id: String,
    /// Label of the target node; empty exactly when `node_id` is.
    pub label: String,
    /// Strategy selected for this turn.
    pub strategy: String,
    /// True when a researcher overrode the engine's choice (moderator mode).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overridden: bool,
}

/// Surface-graph aggregates that global graph signals read (001 "Graph State Metrics").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphState {
    pub node_count: u32,
    pub edge_count: u32,
    pub nodes_by_type: BTreeMap<String, u32>,
    pub edges_by_type: BTreeMap<String, u32>,
    pub orphan_count: u32,
    /// Longest chain, counted in edges, over the acyclic condensation of the graph.
    pub max_depth: u32,
    pub avg_depth: f64,
    /// Mean, over the lowest-level nodes (the elements a ladder starts from), of the longest
    /// chain leading on from each, in edges (seed 001: `depth_by_element`, "average depth per
    /// element").
    #[serde(default)]
    pub element_depth: f64,
    pub longest_chain_path: Vec<String>,
    /// Share of level-1 nodes from which a terminal node is reachable.
    pub chain_completion_ratio: f64,
    /// Whether at least one level-1 → terminal chain exists.
    pub has_complete_chain: bool,
    pub turn_count: u32,
}

/// Canonical-graph aggregates (001 "Canonical Graph State").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CanonicalGraphState {
    /// Active slots only; candidates are excluded.
    pub concept_count: u32,
    pub edge_count: u32,
    /// Active slots with no canonical edge.
    pub orphan_count: u32,
    pub max_depth: u32,
    pub avg_support: f64,
}

/// Saturation metrics carried from turn to turn (seed 001 "`SaturationMetrics`").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SaturationMetrics {
    /// Observed ÷ Chao1-estimated concept richness, in [0, 1]; 1 means nothing unseen remains.
    pub chao1_ratio: f64,
    /// New nodes ÷ concepts extracted this turn.
    pub new_info_rate: f64,
    /// Turns in a row without a new node.
    pub consecutive_low_info: u32,
    /// Answers in a row that were surface or shallow.
    pub consecutive_shallow: u32,
    /// Turns in a row whose max depth did not exceed the previous max.
    pub consecutive_depth_plateau: u32,
    pub prev_max_depth: u32,
    pub is_saturated: bool,
}

/// Information-velocity state persisted per session (seed 000 Path 16 "Data Model").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VelocityState {
    pub surface_velocity_ewma: f64,
    pub surface_velocity_peak: f64,
    pub prev_surface_node_count: u32,
    pub canonical_velocity_ewma: f64,
    pub canonical_velocity_peak: f64,
    pub prev_canonical_node_count: u32,
}

/// Mutable interview state persisted with a session (seed 001 "Session State", with the
/// velocity fields of seed 000 Path 16).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    pub methodology: String,
    pub concept_id: String,
    pub concept_name: String,
    /// Completed turns; the turn being processed is `turn_count + 1`.
    pub turn_count: u32,
    pub last_strategy: Option<String>,
    #[serde(flatten)]
    pub velocity: VelocityState,
    pub focus_history: Vec<FocusEntry>,
    /// Depth of every answer so far (session-scoped input of `llm.global_response_trend`).
    #[serde(default)]
    pub depth_history: Vec<ResponseDepth>,
    /// Saturation counters carried from turn to turn (stage 5 reads, stage 10 saves).
    #[serde(default)]
    pub saturation: SaturationMetrics,
    /// Strategies of the most recent turns, oldest first, at most
    /// [`STRATEGY_HISTORY_LEN`] (seed 000 Path 4: the `GraphState` deque of 30).
    #[serde(default)]
    pub strategy_history: Vec<String>,
    /// How this session understands answers; chosen when it is created and kept on resume.
    #[serde(default)]
    pub understanding: Understanding,
}

/// Length of the in-session strategy history deque (seed 000 Path 4).
pub const STRATEGY_HISTORY_LEN: usize = 30;

/// One rubric score returned by the LLM signal batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RubricScore {
    /// Likert score 1–5.
    pub score: u8,
    /// The model's reason; shown on demand, never used in scoring.
    pub rationale: String,
}

/// The six rubric scores of one response, keyed by rubric name (`response_depth`, ...).
pub type LlmScores = BTreeMap<String, RubricScore>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_boundaries_for_ten_turns() {
        // early_max = max(2, round(1.0)) = 2; mid_max = 8; turns 9 and 10 are late.
        use Phase::{Early as E, Late as L, Mid as M};
        let phases: Vec<Phase> = (1..=10).map(|t| Phase::for_turn(t, 10)).collect();
        assert_eq!(phases, vec![E, E, M, M, M, M, M, M, L, L]);
    }

    #[test]
    fn short_interviews_keep_a_mid_phase() {
        use Phase::{Early as E, Late as L, Mid as M};
        let phases = |n: u32| (1..=n).map(|t| Phase::for_turn(t, n)).collect::<Vec<_>>();
        assert_eq!(phases(1), vec![E]);
        assert_eq!(phases(2), vec![E, E]);
        assert_eq!(phases(3), vec![E, M, L]);
        assert_eq!(phases(4), vec![E, E, M, L]);
        assert_eq!(phases(5), vec![E, E, M, L, L]);
        assert_eq!(phases(6), vec![E, E, M, M, L, L]);
    }

    /// A methodology's own boundaries: 30 % early (at least 1), the final 3 turns late.
    #[test]
    fn phase_boundaries_can_be_set() {
        use Phase::{Early as E, Late as L, Mid as M};
        let b = PhaseBoundaries {
            early_share: 0.3,
            early_min_turns: 1,
            late_turns: 3,
        };
        let phases: Vec<Phase> = (1..=10).map(|t| b.phase(t, 10)).collect();
        assert_eq!(phases, vec![E, E, E, M, M, M, M, L, L, L]);
        assert_eq!(b.reason(2, 10), "early_window");
        assert_eq!(b.reason(8, 10), "final_turns");
        assert_eq!(PhaseBoundaries::default().reason(2, 4), "short_interview");
        assert!(b.problems().is_empty());
        let bad = PhaseBoundaries {
            early_share: 1.5,
            ..b
        };
        assert_eq!(bad.problems().len(), 1);
    }

    #[test]
    fn phase_boundaries_for_twenty_turns() {
        // early_max = max(2, round(2.0)) = 2; mid_max = 18.
        assert_eq!(Phase::for_turn(2, 20), Phase::Early);
        assert_eq!(Phase::for_turn(3, 20), Phase::Mid);
        assert_eq!(Phase::for_turn(18, 20), Phase::Mid);
        assert_eq!(Phase::for_turn(19, 20), Phase::Late);
        assert_eq!(Phase::for_turn(20, 20), Phase::Late);
    }

    #[test]
    fn phase_rounding_matches_python_half_to_even() {
        // 25 × 0.1 = 2.5 rounds to 2 (even); 35 × 0.1 = 3.5 rounds to 4.
        assert_eq!(Phase::for_turn(3, 25), Phase::Mid);
        assert_eq!(Phase::for_turn(4, 35), Phase::Early);
        assert_eq!(Phase::for_turn(5, 35), Phase::Mid);
        // 30 turns: round(3.0) = 3.
        assert_eq!(Phase::for_turn(3, 30), Phase::Early);
        assert_eq!(Phase::for_turn(4, 30), Phase::Mid);
    }

    #[test]
    fn response_depth_maps_rubric_scores() {
        let mapped: Vec<&str> = (1..=5)
            .map(|s| ResponseDepth::from_score(s).as_str())
            .collect();
        assert_eq!(mapped, ["surface", "shallow", "moderate", "deep", "deep"]);
    }

    #[test]
    fn numbers_format_compactly() {
        assert_eq!(format_number(2.15), "2.15");
        assert_eq!(format_number(1.0), "1");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(0.123_456), "0.1235");
    }
}
