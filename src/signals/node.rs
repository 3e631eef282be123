//! Node-scoped signal formulas (seed 000 Path 8, seed 001 "Node-Level Signals").
//!
//! Each function reads one [`NodeState`]; the detectors in [`super::detectors`] apply them to
//! every tracked node.

use crate::graph::node_state::{NodeState, NodeStateTracker};

/// How many recent responses the shallow ratio looks at.
pub const RECENT_RESPONSES: usize = 3;
/// Exhaustion needs at least this many turns without yield (tightened from 3 in the seed).
pub const EXHAUSTED_MIN_TURNS_WITHOUT_YIELD: u32 = 2;
/// Exhaustion needs at least this focus streak.
pub const EXHAUSTED_MIN_STREAK: u32 = 2;
/// Exhaustion needs at least this share of recent responses to be "surface".
pub const EXHAUSTED_SHALLOW_SHARE: f64 = 2.0 / 3.0;
/// Yield stagnation: focused and this many turns without yield.
pub const STAGNATION_TURNS: u32 = 3;
/// Recency decays linearly to 0 over this many turns.
pub const RECENCY_WINDOW: f64 = 20.0;

/// The four exhaustion criteria of Path 8, all required.
pub fn is_exhausted(s: &NodeState) -> bool {
    s.focus_count >= 1
        && s.turns_since_last_yield >= EXHAUSTED_MIN_TURNS_WITHOUT_YIELD
        && s.current_focus_streak >= EXHAUSTED_MIN_STREAK
        && s.shallow_ratio(RECENT_RESPONSES) + 1e-12 >= EXHAUSTED_SHALLOW_SHARE
}

/// `min(tsly, 10)/10 × 0.4 + min(streak, 5)/5 × 0.3 + shallow_ratio × 0.3`; 0 for a node never
/// focused, which has had no chance to be exhausted.
pub fn exhaustion_score(s: &NodeState) -> f64 {
    if s.focus_count == 0 {
        return 0.0;
    }
    let yield_part = f64::from(s.turns_since_last_yield.min(10)) / 10.0 * 0.4;
    let streak_part = f64::from(s.current_focus_streak.min(5)) / 5.0 * 0.3;
    yield_part + streak_part + s.shallow_ratio(RECENT_RESPONSES) * 0.3
}

pub fn yield_stagnation(s: &NodeState) -> bool {
    s.focus_count > 0 && s.turns_since_last_yield >= STAGNATION_TURNS
}

/// none (0), low (1), medium (2–3), high (4+).
pub fn level(count: u32) -> &'static str {
    match count {
        0 => "none",
        1 => "low",
        2 | 3 => "medium",
        _ => "high",
    }
}

/// Turns over which a node's novelty falls from 1 to 0.
pub const NOVELTY_TURNS: f64 = 5.0;

/// Novelty at or above which a node's novelty is `high` (the original system's boundary).
pub const NOVELTY_HIGH_MIN: f64 = 0.6;
/// Novelty at or above which a node's novelty is `medium` (the original system's boundary).
pub const NOVELTY_MEDIUM_MIN: f64 = 0.3;

/// The novelty score behind `graph.node.novelty` (not in the seeds; the original system's
/// form): `max(0, 1 − age / 5)` with age = this turn − the node's creation turn, so 1.0 in the
/// turn the node appeared, falling linearly to 0.0 five turns later.
pub fn novelty_score(s: &NodeState, turn: u32) -> f64 {
    let age = f64::from(turn.saturating_sub(s.created_at_turn));
    (1.0 - age / NOVELTY_TURNS).max(0.0)
}

/// `graph.node.novelty`, the original system's categories of [`novelty_score`]: `high`
/// (≥ 0.6: ages 0–2), `medium` (≥ 0.3: age 3), `low` (below: age 4 and older). The score is
/// computed in floating point as the original does, so age 4 (0.19999…) is `low`.
pub fn novelty(s: &NodeState, turn: u32) -> &'static str {
    let score = novelty_score(s, turn);
    if score >= NOVELTY_HIGH_MIN {
        "high"
    } else if score >= NOVELTY_MEDIUM_MIN {
        "medium"
    } else {
        "low"
    }
}

/// `graph.node.is_new`: the node was created by the answer just given (this turn), the rung
/// the respondent has just reached. With canonical slots on, a node is tracked by its slot, so
/// a paraphrase of an earlier concept is not new.
pub fn is_new(s: &NodeState, turn: u32) -> bool {
    s.created_at_turn >= turn
}

/// `graph.turn.top_new_type`: the type of the highest-level node the answer just given
/// created, the newest of them on a tie, so stage 1 can choose a strategy that fits where the
/// respondent has just gone (an explanation, a lesson, a value); `None` when it created none.
/// Not one of the original system's signals.
pub fn top_new_type(tracker: &NodeStateTracker, turn: u32) -> Option<&str> {
    let unordered = tracker
        .states
        .iter()
        .filter(|(key, _)| !tracker.order.contains(key))
        .map(|(_, s)| s);
    tracker
        .order
        .iter()
        .filter_map(|key| tracker.states.get(key))
        .chain(unordered)
        .filter(|s| is_new(s, turn))
        .fold(None, |best: Option<&NodeState>, s| match best {
            Some(b) if b.level > s.level => Some(b),
            _ => Some(s),
        })
        .map(|s| s.node_type.as_str())
}

/// `graph.node.is_mentioned` (with the detector's rule that the concept the question was
/// about does not count: naming it is answering, not coming back to it): the answer just given
/// named this concept again, after an earlier answer raised it ("The creamy texture again,
/// really"). Not one of the original system's signals.
pub fn is_mentioned(s: &NodeState, turn: u32) -> bool {
    s.said_again_in(turn)
}

/// `graph.node.level`: the node type's ontology level placed on the methodology's ladder,
/// 0.0 at its lowest level (an attribute) to 1.0 at its highest (a terminal value). A
/// methodology whose types all share one level gives 0.0.
pub fn level_position(s: &NodeState, lowest: u32, highest: u32) -> f64 {
    let span = highest.saturating_sub(lowest);
    if span == 0 {
        return 0.0;
    }
    (f64::from(s.level.clamp(lowest, highest) - lowest) / f64::from(span)).clamp(0.0, 1.0)
}

/// `graph.node.focus_count`, the original system's categories of the cumulative focus count:
/// none (0), low (1–2), medium (3–4), high (5+).
pub fn focus_count_level(count: u32) -> &'static str {
    repetition_level(count)
}

/// 1.0 when focused this turn, falling linearly to 0.0 at 20 turns; 0.0 if never focused.
pub fn recency_score(s: &NodeState) -> f64 {
    if s.last_focus_turn.is_none() {
        return 0.0;
    }
    (1.0 - f64::from(s.turns_since_last_focus) / RECENCY_WINDOW).max(0.0)
}

/// `technique.node.strategy_repetition` bins (the seeds name only the values; these are the
/// original system's): none (0), low (1–2), medium (3–4), high (5+).
pub fn repetition_level(count: u32) -> &'static str {
    match count {
        0 => "none",
        1 | 2 => "low",
        3 | 4 => "medium",
        _ => "high",
    }
}

/// `meta.node.opportunity` from the three signals the seed names: exhausted nodes say so;
/// a node held in focus (streak medium or high) whose answer was deep but yielded nothing
/// still has material the extraction has not captured (`probe_deeper`, seed 001: "Deep
/// responses but no yield"); everything else is fresh.
pub fn opportunity(
    exhausted: bool,
    focus_streak: &str,
    response_depth: Option<&str>,
    yielded_this_turn: bool,
) -> &'static str {
    if exhausted {
        "exhausted"
    } else if matches!(focus_streak, "medium" | "high")
        && response_depth == Some("deep")
        && !yielded_this_turn
    {
        "probe_deeper"
    } else {
        "fresh"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::node_state::NodeRegistration;

    fn state(tsly: u32, streak: u32, focus: u32, depths: &[&str]) -> NodeState {
        let mut t = NodeStateTracker::new();
        let reg = NodeRegistration {
            node_id: "n",
            label: "n",
            node_type: "attribute",
            depth: 0,
            level: 1,
            is_terminal: false,
        };
        let mut s = t.register_node(&reg, 1).clone();
        s.turns_since_last_yield = tsly;
        s.current_focus_streak = streak;
        s.focus_count = focus;
        s.all_response_depths = depths.iter().map(|d| (*d).to_owned()).collect();
        s
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn exhaustion_score_worked_values() {
        // Never focused: 0 whatever else holds.
        close(exhaustion_score(&state(7, 0, 0, &["surface"])), 0.0);
        // Just yielded, first focus, no responses: 0 + 1/5×0.3 = 0.06.
        close(exhaustion_score(&state(0, 1, 1, &[])), 0.06);
        // 3 turns dry, streak 2, one of last three surface: 0.12 + 0.12 + 0.1 = 0.34.
        close(
            exhaustion_score(&state(3, 2, 2, &["deep", "surface", "moderate"])),
            0.34,
        );
        // Caps: 12 dry turns → 0.4, streak 7 → 0.3, last three all surface → 0.3: 1.0.
        close(
            exhaustion_score(&state(12, 7, 7, &["deep", "surface", "surface", "surface"])),
            1.0,
        );
        // Only the last three responses count: [surface, deep, deep, deep] → ratio 0.
        close(
            exhaustion_score(&state(5, 5, 5, &["surface", "deep", "deep", "deep"])),
            0.2 + 0.3,
        );
    }

    #[test]
    fn exhausted_needs_all_four_criteria() {
        assert!(is_exhausted(&state(
            2,
            2,
            1,
            &["surface", "surface", "deep"]
        )));
        assert!(
            !is_exhausted(&state(1, 2, 1, &["surface", "surface"])),
            "yield too recent"
        );
        assert!(
            !is_exhausted(&state(2, 1, 1, &["surface", "surface"])),
            "streak too short"
        );
        assert!(
            !is_exhausted(&state(2, 2, 0, &["surface", "surface"])),
            "never focused"
        );
        assert!(
            !is_exhausted(&state(2, 2, 1, &["surface", "deep", "deep"])),
            "answers not shallow"
        );
    }

    #[test]
    fn streak_levels_recency_and_stagnation() {
        let levels: Vec<&str> = [0, 1, 2, 3, 4, 9].into_iter().map(level).collect();
        assert_eq!(levels, ["none", "low", "medium", "medium", "high", "high"]);
        let mut s = state(3, 1, 1, &[]);
        assert!(yield_stagnation(&s));
        s.turns_since_last_yield = 2;
        assert!(!yield_stagnation(&s));
        assert_eq!(recency_score(&s), 0.0, "never focused");
        s.last_focus_turn = Some(4);
        s.turns_since_last_focus = 5;
        close(recency_score(&s), 0.75);
        s.turns_since_last_focus = 25;
        close(recency_score(&s), 0.0);
    }

    #[test]
    fn opportunity_rules() {
        assert_eq!(opportunity(true, "high", Some("deep"), false), "exhausted");
        assert_eq!(
            opportunity(false, "medium", Some("deep"), false),
            "probe_deeper"
        );
        // A deep answer that yielded concepts was captured: nothing left to probe.
        assert_eq!(opportunity(false, "medium", Some("deep"), true), "fresh");
        assert_eq!(opportunity(false, "low", Some("deep"), false), "fresh");
        assert_eq!(opportunity(false, "high", Some("shallow"), false), "fresh");
        assert_eq!(opportunity(false, "high", None, false), "fresh");
    }

    #[test]
    fn novelty_categories_at_their_boundaries() {
        // Ages 0, 1, 2 score 1.0, 0.8, 0.6 (high: ≥ 0.6); age 3 scores 0.4 (medium: ≥ 0.3);
        // age 4 scores 0.19999… and age 5+ 0 (low), computed in floating point as the original.
        let mut s = state(0, 0, 0, &[]);
        s.created_at_turn = 10;
        let at = |s: &NodeState, turn: u32| novelty(s, turn);
        let by_age: Vec<&str> = (0..=6).map(|age| at(&s, 10 + age)).collect();
        assert_eq!(
            by_age,
            ["high", "high", "high", "medium", "low", "low", "low"]
        );
        close(novelty_score(&s, 12), 0.6);
        close(novelty_score(&s, 13), 0.4);
        assert!(novelty_score(&s, 14) < NOVELTY_MEDIUM_MIN);
        // A turn before the node's creation (a replayed state) counts as age 0.
        assert_eq!(at(&s, 9), "high");
        assert!(is_new(&s, 10));
        assert!(!is_new(&s, 11));
    }

    #[test]
    fn focus_count_categories_at_their_boundaries() {
        let bins: Vec<&str> = (0..=7).map(focus_count_level).collect();
        assert_eq!(
            bins,
            [
                "none", "low", "low", "medium", "medium", "high", "high", "high"
            ]
        );
    }

    #[test]
    fn level_position_places_a_type_on_the_ladder() {
        let mut s = state(0, 0, 0, &[]);
        for (level, expected) in [(1, 0.0), (2, 0.25), (3, 0.5), (5, 1.0), (9, 1.0), (0, 0.0)] {
            s.level = level;
            close(level_position(&s, 1, 5), expected);
        }
        s.level = 3;
        close(level_position(&s, 3, 3), 0.0);
    }

    #[test]
    fn strategy_repetition_bins_are_the_original_systems() {
        let bins: Vec<&str> = (0..=6).map(repetition_level).collect();
        assert_eq!(
            bins,
            ["none", "low", "low", "medium", "medium", "high", "high"]
        );
    }

    #[test]
    fn the_top_new_type_is_the_highest_level_the_answer_reached_newest_first() {
        let mut t = NodeStateTracker::new();
        let add = |t: &mut NodeStateTracker,
                   id: &'static str,
                   node_type: &'static str,
                   level: u32,
                   turn: u32| {
            let reg = NodeRegistration {
                node_id: id,
                label: id,
                node_type,
                depth: 0,
                level,
                is_terminal: false,
            };
            t.register_node(&reg, turn);
        };
        add(&mut t, "a", "lesson", 5, 1);
        add(&mut t, "b", "incident_event", 2, 2);
        add(&mut t, "c", "attribution", 5, 2);
        add(&mut t, "d", "reaction", 3, 2);
        add(&mut t, "e", "outcome", 4, 2);
        assert_eq!(top_new_type(&t, 2), Some("attribution"));
        add(&mut t, "f", "lesson", 5, 2);
        assert_eq!(top_new_type(&t, 2), Some("lesson"), "the newest on a tie");
        assert_eq!(top_new_type(&t, 3), None, "nothing new in turn 3");
    }
}
