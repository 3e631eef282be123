//! Per-node engagement, yield and response-depth state that persists across turns.
//!
//! [`NodeStateTracker`] is the memory behind node exhaustion detection and backtracking. The
//! graph-update stage (stage 4) registers new nodes, counts edges and credits yields; strategy
//! selection (stage 6) appends the answer's response depth to the previous focus and then moves
//! the focus. The tracker is saved as versioned JSON at turn end ([`NodeStateTracker::to_json`])
//! and restored at turn start ([`NodeStateTracker::from_json`]).
//!
//! Dual-graph support: a surface node may be mapped to a canonical slot
//! ([`NodeStateTracker::map_to_slot`]). From then on every call made with the surface id lands
//! on the slot's state, so paraphrases ("fast car", "quick vehicle") aggregate into one record.
//!
//! Left out: the signals read from this state (exhaustion, exhaustion score, opportunity, yield
//! stagnation) and their thresholds belong to signal detection; this module only records. It
//! does no I/O and never reads the knowledge graph: callers pass in what changed.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Version written into every persisted tracker.
///
/// Bumped whenever the JSON shape changes incompatibly, so an old session is rejected with a
/// typed error (and the caller starts a fresh tracker) instead of being silently misread.
pub const NODE_TRACKER_SCHEMA_VERSION: u32 = 1;

/// The response depths [`NodeStateTracker::append_response_signal`] accepts, shallowest first.
///
/// Depths come from an LLM signal; anything else is refused so that
/// [`NodeState::shallow_ratio`] only ever counts over known values.
pub const RESPONSE_DEPTHS: [&str; 4] = ["surface", "shallow", "moderate", "deep"];

/// The depth that [`NodeState::shallow_ratio`] counts as a shallow answer.
const SURFACE_DEPTH: &str = "surface";

/// Everything the tracker remembers about one tracked node (or canonical slot).
///
/// Fields with a natural zero value default when missing from persisted JSON, so older v1 rows
/// that lack a field still load; the identifying fields are required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeState {
    /// Surface id of the node that first created this state. For a slot-keyed state this is the
    /// representative paraphrase (a real node in the surface graph), not the slot id.
    pub node_id: String,
    pub label: String,
    /// Turn in which the node was registered.
    pub created_at_turn: u32,
    pub depth: u32,
    pub node_type: String,
    /// Whether the node is a terminal (e.g. a top-level value) in the methodology's chain.
    #[serde(default)]
    pub is_terminal: bool,
    #[serde(default)]
    pub level: u32,

    #[serde(default)]
    pub focus_count: u32,
    #[serde(default)]
    pub last_focus_turn: Option<u32>,
    /// Focus moves since this node was last focused (0 while it is the focus).
    #[serde(default)]
    pub turns_since_last_focus: u32,
    /// Consecutive turns this node has been the focus; only the current focus has a non-zero
    /// streak.
    #[serde(default)]
    pub current_focus_streak: u32,

    /// Turn in which a graph change was last credited to this node.
    #[serde(default)]
    pub last_yield_turn: Option<u32>,
    /// Turns since the last yield: reset to 0 in stage 4, ticked for every node in stage 6.
    #[serde(default)]
    pub turns_since_last_yield: u32,
    /// Number of turns whose graph changes were credited to this node.
    #[serde(default)]
    pub yield_count: u32,
    /// `yield_count / max(focus_count, 1)`, recomputed only when a yield is recorded.
    #[serde(default)]
    pub yield_rate: f64,

    /// Every response depth recorded while this node was the focus, oldest first.
    #[serde(default)]
    pub all_response_depths: Vec<String>,

    /// Tracking keys of nodes that have shared an edge with this one; never contains itself.
    #[serde(default)]
    pub connected_node_ids: BTreeSet<String>,
    #[serde(default)]
    pub edge_count_outgoing: u32,
    #[serde(default)]
    pub edge_count_incoming: u32,

    /// Times each strategy was used while this node was the focus.
    #[serde(default)]
    pub strategy_usage_count: BTreeMap<String, u32>,
    /// Strategy used the last time this node was the focus.
    #[serde(default)]
    pub last_strategy_used: Option<String>,
    /// How many focus turns in a row on this node used `last_strategy_used`.
    #[serde(default)]
    pub consecutive_same_strategy: u32,

    /// Latest turn whose answer named this concept: the one that created it, or a later one
    /// whose concept was merged into it or mapped to its slot. Trackers saved before this was
    /// kept read 0, which [`Self::said_again_in`] takes as the creation turn.
    #[serde(default)]
    pub last_said_turn: u32,
}

impl NodeState {
    /// A fresh state: identity from `node`, every metric at zero / `None` / empty.
    fn registered(node: &NodeRegistration<'_>, turn_number: u32) -> Self {
        Self {
            node_id: node.node_id.to_owned(),
            label: node.label.to_owned(),
            created_at_turn: turn_number,
            depth: node.depth,
            node_type: node.node_type.to_owned(),
            is_terminal: node.is_terminal,
            level: node.level,
            focus_count: 0,
            last_focus_turn: None,
            turns_since_last_focus: 0,
            current_focus_streak: 0,
            last_yield_turn: None,
            turns_since_last_yield: 0,
            yield_count: 0,
            yield_rate: 0.0,
            all_response_depths: Vec::new(),
            connected_node_ids: BTreeSet::new(),
            edge_count_outgoing: 0,
            edge_count_incoming: 0,
            strategy_usage_count: BTreeMap::new(),
            last_strategy_used: None,
            consecutive_same_strategy: 0,
            last_said_turn: turn_number,
        }
    }

    /// The answer of `turn` named this concept again, after an earlier answer created it.
    #[must_use]
    pub fn said_again_in(&self, turn: u32) -> bool {
        self.created_at_turn < turn && self.last_said_turn.max(self.created_at_turn) == turn
    }

    /// True when the node has no edges in either direction.
    #[must_use]
    pub fn is_orphan(&self) -> bool {
        self.edge_count_incoming == 0 && self.edge_count_outgoing == 0
    }

    /// Share of `"surface"` answers among the last `recent` response depths.
    ///
    /// Counts over however many depths exist when fewer than `recent` were recorded; 0.0 when
    /// there are none (or `recent` is 0), so a node with no answers never looks shallow.
    #[must_use]
    pub fn shallow_ratio(&self, recent: usize) -> f64 {
        let (surface, total) = self.all_response_depths.iter().rev().take(recent).fold(
            (0_u32, 0_u32),
            |(surface, total), depth| {
                let surface = surface.saturating_add(u32::from(depth == SURFACE_DEPTH));
                (surface, total.saturating_add(1))
            },
        );
        if total == 0 {
            0.0
        } else {
            f64::from(surface) / f64::from(total)
        }
    }

    /// Recomputes `yield_rate`; the max(.., 1) keeps a never-focused node from dividing by zero.
    fn refresh_yield_rate(&mut self) {
        self.yield_rate = f64::from(self.yield_count) / f64::from(self.focus_count.max(1));
    }

    /// Applies stage 6's focus update to the node that was chosen this turn.
    fn take_focus(&mut self, turn_number: u32, strategy: &str, continues_streak: bool) {
        self.focus_count = self.focus_count.saturating_add(1);
        self.last_focus_turn = Some(turn_number);
        self.turns_since_last_focus = 0;
        self.current_focus_streak = if continues_streak {
            self.current_focus_streak.saturating_add(1)
        } else {
            1
        };
        let used = self
            .strategy_usage_count
            .entry(strategy.to_owned())
            .or_insert(0);
        *used = used.saturating_add(1);
        self.consecutive_same_strategy = if self.last_strategy_used.as_deref() == Some(strategy) {
            self.consecutive_same_strategy.saturating_add(1)
        } else {
            1
        };
        self.last_strategy_used = Some(strategy.to_owned());
    }

    /// Folds a paraphrase's state into this (canonical slot) state.
    ///
    /// The rule: identity fields (`node_id`, label, type, depth, level, terminal) stay this
    /// state's; counts add; sets and strategy counts union/add; `created_at_turn` keeps the
    /// earlier turn; "last ..." turns keep the later one and "turns since ..." the smaller one
    /// (the most recent event wins); the streak is the larger one (at most one node has a
    /// streak); the last strategy comes from whichever was focused more recently (ties keep
    /// this state's); depths are concatenated, this state's first, since their true interleaving
    /// was never recorded.
    fn absorb(&mut self, other: Self) {
        if other.last_focus_turn > self.last_focus_turn {
            self.last_strategy_used = other.last_strategy_used;
            self.consecutive_same_strategy = other.consecutive_same_strategy;
        }
        // A paraphrase folded in says the concept again in the turn that created it.
        self.last_said_turn = self
            .last_said_turn
            .max(other.last_said_turn)
            .max(self.created_at_turn.max(other.created_at_turn));
        self.created_at_turn = self.created_at_turn.min(other.created_at_turn);
        self.focus_count = self.focus_count.saturating_add(other.focus_count);
        self.last_focus_turn = self.last_focus_turn.max(other.last_focus_turn);
        self.turns_since_last_focus = self
            .turns_since_last_focus
            .min(other.turns_since_last_focus);
        self.current_focus_streak = self.current_focus_streak.max(other.current_focus_streak);
        self.last_yield_turn = self.last_yield_turn.max(other.last_yield_turn);
        self.turns_since_last_yield = self
            .turns_since_last_yield
            .min(other.turns_since_last_yield);
        self.yield_count = self.yield_count.saturating_add(other.yield_count);
        self.refresh_yield_rate();
        self.all_response_depths.extend(other.all_response_depths);
        self.connected_node_ids.extend(other.connected_node_ids);
        self.edge_count_outgoing = self
            .edge_count_outgoing
            .saturating_add(other.edge_count_outgoing);
        self.edge_count_incoming = self
            .edge_count_incoming
            .saturating_add(other.edge_count_incoming);
        for (strategy, count) in other.strategy_usage_count {
            let used = self.strategy_usage_count.entry(strategy).or_insert(0);
            *used = used.saturating_add(count);
        }
    }
}

/// What a node to register looks like; the graph layer builds it from a knowledge-graph node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRegistration<'a> {
    pub node_id: &'a str,
    pub label: &'a str,
    pub node_type: &'a str,
    pub depth: u32,
    pub level: u32,
    pub is_terminal: bool,
}

/// Summary of what a turn changed in the graph, passed to [`NodeStateTracker::record_yield`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphChangeSummary {
    pub nodes_added: u32,
    pub edges_added: u32,
    pub nodes_modified: u32,
}

impl GraphChangeSummary {
    /// True when the turn changed nothing, i.e. produced no yield.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.nodes_added == 0 && self.edges_added == 0 && self.nodes_modified == 0
    }
}

/// Why a persisted tracker could not be restored.
///
/// Either way the caller degrades to a fresh tracker; the variant says whether the row is from
/// another version (expected after an upgrade) or damaged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeTrackerError {
    /// The row was written by a schema this build does not read.
    #[error(
        "node tracker schema_version {found} is not supported; this build reads version {expected}",
        expected = NODE_TRACKER_SCHEMA_VERSION
    )]
    UnsupportedSchemaVersion {
        /// The `schema_version` found in the row.
        found: u64,
    },
    /// The row is not a valid v1 tracker; the message says what was wrong.
    #[error("node tracker state is malformed: {0}")]
    Malformed(String),
}

/// All node states of one session, plus the focus of the previous turn.
///
/// Invariants kept by every method: `order` holds each key of `states` exactly once, and at most
/// one state (the one named by `previous_focus`) has a non-zero `current_focus_streak`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeStateTracker {
    /// States keyed by tracking key: the slot id when the node is mapped, else the surface id.
    pub states: BTreeMap<String, NodeState>,
    /// Tracking key of the node focused last turn; `None` after a node-free turn.
    pub previous_focus: Option<String>,
    /// Surface node id to canonical slot id; when present, the tracking key is the slot id.
    pub slot_of: BTreeMap<String, String>,
    /// Tracking keys in creation order, so stage-2 ties can break by creation.
    pub order: Vec<String>,
}

/// Resolves a surface id to its tracking key; a free function so callers can borrow `states`
/// mutably at the same time.
fn resolve<'a>(slot_of: &'a BTreeMap<String, String>, node_id: &'a str) -> &'a str {
    slot_of.get(node_id).map_or(node_id, String::as_str)
}

impl NodeStateTracker {
    /// An empty tracker, as used for a new session or when a persisted one cannot be read.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The key a node's state is stored under: its slot id when mapped, else `node_id` itself.
    #[must_use]
    pub fn tracking_key<'a>(&'a self, node_id: &'a str) -> &'a str {
        resolve(&self.slot_of, node_id)
    }

    /// Maps a surface node to a canonical slot so both share one state from now on.
    ///
    /// If the node is tracked under its surface id, that state moves to the slot key (keeping
    /// its creation-order position) or, when the slot already has a state, is merged into it by
    /// the rule on `NodeState::absorb` (the slot keeps its position). References to the surface
    /// key (`previous_focus`, other nodes' connections) are rewritten to the slot key. A node
    /// already folded into another slot is only re-pointed: that slot's state may hold other
    /// paraphrases and cannot be split. Mappings stay one hop deep (ids mapped to `node_id`
    /// follow it to `slot_id`), and mapping a node to itself removes its mapping.
    pub fn map_to_slot(&mut self, node_id: &str, slot_id: &str) {
        if node_id == slot_id {
            self.slot_of.remove(node_id);
            return;
        }
        self.slot_of.insert(node_id.to_owned(), slot_id.to_owned());
        // Keep mappings one hop deep: paraphrases that pointed at `node_id` follow it.
        for target in self.slot_of.values_mut() {
            if target == node_id {
                slot_id.clone_into(target);
            }
        }
        self.slot_of.retain(|surface, slot| surface != slot);
        let Some(moved) = self.states.remove(node_id) else {
            return;
        };
        if let Some(slot_state) = self.states.get_mut(slot_id) {
            slot_state.absorb(moved);
            self.order.retain(|key| key != node_id);
        } else {
            self.states.insert(slot_id.to_owned(), moved);
            for key in self.order.iter_mut().filter(|key| key.as_str() == node_id) {
                slot_id.clone_into(key);
            }
        }
        if self.previous_focus.as_deref() == Some(node_id) {
            self.previous_focus = Some(slot_id.to_owned());
        }
        for (key, state) in &mut self.states {
            if state.connected_node_ids.remove(node_id) && key != slot_id {
                state.connected_node_ids.insert(slot_id.to_owned());
            }
            // An edge between two paraphrases of one slot is not a connection to another node.
            if key == slot_id {
                state.connected_node_ids.remove(slot_id);
            }
        }
    }

    /// Starts tracking a node created in `turn_number` and returns its state.
    ///
    /// Idempotent: when the tracking key already has a state (the node, or a paraphrase mapped
    /// to the same slot, was registered before), that state is returned unchanged.
    pub fn register_node(&mut self, node: &NodeRegistration<'_>, turn_number: u32) -> &NodeState {
        let key = resolve(&self.slot_of, node.node_id).to_owned();
        if !self.states.contains_key(&key) {
            self.order.push(key.clone());
        }
        self.states
            .entry(key)
            .or_insert_with(|| NodeState::registered(node, turn_number))
    }

    /// Records that the answer of `turn_number` named an existing node again (stage 4: its
    /// concept merged into the node). Unknown nodes are ignored.
    pub fn record_mention(&mut self, node_id: &str, turn_number: u32) {
        if let Some(state) = self.states.get_mut(resolve(&self.slot_of, node_id)) {
            state.last_said_turn = state.last_said_turn.max(turn_number);
        }
    }

    /// Adjusts a node's edge counts by signed deltas, clamping at 0.
    ///
    /// `other_node_id`, the far end of the edge, is added (as its tracking key) to the node's
    /// connections unless it resolves to the node itself. Connections are never removed: they
    /// record every node the node has been linked to. Unknown nodes are ignored.
    pub fn update_edge_counts(
        &mut self,
        node_id: &str,
        outgoing_delta: i32,
        incoming_delta: i32,
        other_node_id: Option<&str>,
    ) {
        let key = resolve(&self.slot_of, node_id);
        let Some(state) = self.states.get_mut(key) else {
            return;
        };
        state.edge_count_outgoing = state
            .edge_count_outgoing
            .saturating_add_signed(outgoing_delta);
        state.edge_count_incoming = state
            .edge_count_incoming
            .saturating_add_signed(incoming_delta);
        if let Some(other) = other_node_id.map(|id| resolve(&self.slot_of, id))
            && other != key
        {
            state.connected_node_ids.insert(other.to_owned());
        }
    }

    /// Credits this turn's graph changes to a node (stage 4; the caller passes the previous
    /// focus). Returns whether a yield was recorded.
    ///
    /// Leaves `current_focus_streak` alone on purpose: if a yield reset the streak, signal
    /// detection in stage 6 would always read it as 0 and persistent focus would go unseen.
    /// `turns_since_last_yield` becomes 0 here and is ticked back to 1 by
    /// [`Self::update_focus`] later in the same turn.
    pub fn record_yield(
        &mut self,
        node_id: &str,
        turn_number: u32,
        changes: GraphChangeSummary,
    ) -> bool {
        if changes.is_empty() {
            return false;
        }
        let Some(state) = self.states.get_mut(resolve(&self.slot_of, node_id)) else {
            return false;
        };
        state.last_yield_turn = Some(turn_number);
        state.turns_since_last_yield = 0;
        state.yield_count = state.yield_count.saturating_add(1);
        state.refresh_yield_rate();
        true
    }

    /// Appends the answer's response depth to the node that was in focus when it was asked.
    ///
    /// Stage 6 calls this before [`Self::update_focus`], so the depth lands on the previous
    /// focus rather than on the node chosen for the next question. Returns `false` (and records
    /// nothing) for an unknown node or a depth outside [`RESPONSE_DEPTHS`].
    pub fn append_response_signal(&mut self, focus_node_id: &str, response_depth: &str) -> bool {
        if !RESPONSE_DEPTHS.contains(&response_depth) {
            return false;
        }
        let Some(state) = self.states.get_mut(resolve(&self.slot_of, focus_node_id)) else {
            return false;
        };
        state.all_response_depths.push(response_depth.to_owned());
        true
    }

    /// Moves the focus after strategy and node selection (stage 6).
    ///
    /// Every tracked node's `turns_since_last_yield` ticks by one. The chosen node (when `Some`
    /// and tracked) gains a focus, its streak grows if it was also last turn's focus and starts
    /// at 1 otherwise, and the strategy is counted on it; every other node's
    /// `turns_since_last_focus` ticks. The seed's walkthrough says the old focus's streak
    /// "resets" when focus moves; we read that as ending it (0), since a streak only exists on
    /// the node in focus and the newly focused node is the one starting at 1. A node-free turn
    /// (`None`, e.g. a reflect strategy) or an unknown node ends all streaks, records the
    /// strategy nowhere and clears `previous_focus`.
    pub fn update_focus(&mut self, node_id: Option<&str>, turn_number: u32, strategy: &str) {
        let focus = node_id
            .map(|id| resolve(&self.slot_of, id))
            .filter(|key| self.states.contains_key(*key))
            .map(str::to_owned);
        let continues_streak = focus.is_some() && focus == self.previous_focus;
        for (key, state) in &mut self.states {
            state.turns_since_last_yield = state.turns_since_last_yield.saturating_add(1);
            if focus.as_ref() == Some(key) {
                state.take_focus(turn_number, strategy, continues_streak);
            } else {
                state.turns_since_last_focus = state.turns_since_last_focus.saturating_add(1);
                state.current_focus_streak = 0;
            }
        }
        self.previous_focus = focus;
    }

    /// The state of a node, looked up by surface id or tracking key.
    #[must_use]
    pub fn get(&self, node_id: &str) -> Option<&NodeState> {
        self.states.get(self.tracking_key(node_id))
    }

    /// All states, oldest registration first.
    pub fn iter_in_creation_order(&self) -> impl Iterator<Item = &NodeState> {
        self.order.iter().filter_map(|key| self.states.get(key))
    }

    /// Serialises the tracker for the session row:
    /// `{"schema_version", "previous_focus", "states", "slot_of", "order"}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        // Cannot fail: every map is keyed by `String` and no field has a fallible `Serialize`.
        // Were it ever to, `Null` makes the next load fail as malformed and start fresh.
        serde_json::to_value(self.persisted()).unwrap_or(Value::Null)
    }

    /// The same shape as [`Self::to_json`], borrowed, for serialising straight to text (the
    /// store writes it every stage that moves the tracker; a `Value` tree first cost more than
    /// the write).
    #[must_use]
    pub fn persisted(&self) -> PersistedTrackerRef<'_> {
        PersistedTrackerRef {
            schema_version: NODE_TRACKER_SCHEMA_VERSION,
            previous_focus: self.previous_focus.as_deref(),
            states: &self.states,
            slot_of: &self.slot_of,
            order: &self.order,
        }
    }

    /// Restores a tracker written by [`Self::to_json`].
    ///
    /// A missing `slot_of` is empty; a missing `order` means the order of the `states` keys.
    /// `order` is repaired to name each state exactly once (unknown and repeated keys dropped,
    /// unlisted states appended in key order).
    ///
    /// # Errors
    ///
    /// [`NodeTrackerError::UnsupportedSchemaVersion`] when `schema_version` is an integer other
    /// than [`NODE_TRACKER_SCHEMA_VERSION`]; [`NodeTrackerError::Malformed`] when the value is
    /// not an object, lacks an integer `schema_version` or `states`, or has wrongly typed fields.
    pub fn from_json(value: &Value) -> Result<Self, NodeTrackerError> {
        let object = value
            .as_object()
            .ok_or_else(|| NodeTrackerError::Malformed("expected a JSON object".to_owned()))?;
        let version = object
            .get("schema_version")
            .ok_or_else(|| NodeTrackerError::Malformed("missing schema_version".to_owned()))?;
        let found = version.as_u64().ok_or_else(|| {
            NodeTrackerError::Malformed("schema_version must be a non-negative integer".to_owned())
        })?;
        if found != u64::from(NODE_TRACKER_SCHEMA_VERSION) {
            return Err(NodeTrackerError::UnsupportedSchemaVersion { found });
        }
        let persisted = PersistedTracker::deserialize(value)
            .map_err(|err| NodeTrackerError::Malformed(err.to_string()))?;
        let order = repaired_order(persisted.order, &persisted.states);
        Ok(Self {
            states: persisted.states,
            previous_focus: persisted.previous_focus,
            slot_of: persisted.slot_of,
            order,
        })
    }

    /// Restores a tracker from its stored JSON text; JSON `null` is no saved tracker and gives
    /// a fresh one.
    ///
    /// # Errors
    ///
    /// As [`Self::from_json`], and [`NodeTrackerError::Malformed`] when the text is not JSON.
    pub fn from_json_text(text: &str) -> Result<Self, NodeTrackerError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| NodeTrackerError::Malformed(format!("not JSON: {e}")))?;
        if value.is_null() {
            return Ok(Self::new());
        }
        Self::from_json(&value)
    }
}

/// The persisted shape, borrowed for writing (see [`NodeStateTracker::persisted`]).
#[derive(Debug, Serialize)]
pub struct PersistedTrackerRef<'a> {
    schema_version: u32,
    previous_focus: Option<&'a str>,
    states: &'a BTreeMap<String, NodeState>,
    slot_of: &'a BTreeMap<String, String>,
    order: &'a [String],
}

/// The persisted shape, owned for reading; `schema_version` is checked before this is parsed.
#[derive(Deserialize)]
struct PersistedTracker {
    #[serde(default)]
    previous_focus: Option<String>,
    states: BTreeMap<String, NodeState>,
    #[serde(default)]
    slot_of: BTreeMap<String, String>,
    #[serde(default)]
    order: Vec<String>,
}

/// Keeps the listed keys that have a state, once each, then appends unlisted states.
fn repaired_order(listed: Vec<String>, states: &BTreeMap<String, NodeState>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut order: Vec<String> = listed
        .into_iter()
        .filter(|key| states.contains_key(key) && seen.insert(key.clone()))
        .collect();
    order.extend(states.keys().filter(|key| !seen.contains(*key)).cloned());
    order
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic,
        clippy::float_cmp
    )]

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn node(id: &str) -> NodeRegistration<'_> {
        NodeRegistration {
            node_id: id,
            label: id,
            node_type: "attribute",
            depth: 1,
            level: 0,
            is_terminal: false,
        }
    }

    const ONE_NODE: GraphChangeSummary = GraphChangeSummary {
        nodes_added: 1,
        edges_added: 0,
        nodes_modified: 0,
    };

    /// Stage 10 then stage 1: what the next turn sees is what was persisted.
    fn save_and_load(tracker: &NodeStateTracker) -> NodeStateTracker {
        NodeStateTracker::from_json(&tracker.to_json()).unwrap()
    }

    #[test]
    fn path19_three_turn_walkthrough() {
        // Turn 1: node A is created and focused.
        let mut tracker = NodeStateTracker::new();
        let a = tracker.register_node(&node("A"), 1);
        assert_eq!(a.created_at_turn, 1);
        assert_eq!(a.focus_count, 0);
        assert_eq!(a.yield_count, 0);
        tracker.update_focus(Some("A"), 1, "deepen");
        let a = tracker.get("A").unwrap();
        assert_eq!(a.focus_count, 1);
        assert_eq!(a.current_focus_streak, 1);
        assert_eq!(a.turns_since_last_yield, 1);
        assert_eq!(a.last_focus_turn, Some(1));

        // Turn 2: A yields and stays in focus.
        let mut tracker = save_and_load(&tracker);
        let a = tracker.get("A").unwrap();
        assert_eq!(
            (
                a.focus_count,
                a.current_focus_streak,
                a.turns_since_last_yield
            ),
            (1, 1, 1)
        );
        assert!(tracker.record_yield("A", 2, ONE_NODE));
        let a = tracker.get("A").unwrap();
        assert_eq!(a.yield_count, 1);
        assert_eq!(a.last_yield_turn, Some(2));
        assert_eq!(a.turns_since_last_yield, 0, "stage 6 detection reads 0");
        assert_eq!(a.current_focus_streak, 1, "record_yield leaves the streak");
        tracker.update_focus(Some("A"), 2, "deepen");
        let a = tracker.get("A").unwrap();
        assert_eq!(a.focus_count, 2);
        assert_eq!(a.current_focus_streak, 2);
        assert_eq!(a.turns_since_last_yield, 1);
        assert_eq!(a.last_focus_turn, Some(2));

        // Turn 3: B is created in stage 4, A yields again, focus moves to B.
        let mut tracker = save_and_load(&tracker);
        let a = tracker.get("A").unwrap();
        assert_eq!(
            (
                a.focus_count,
                a.current_focus_streak,
                a.turns_since_last_yield
            ),
            (2, 2, 1)
        );
        tracker.register_node(&node("B"), 3);
        assert!(tracker.record_yield("A", 3, ONE_NODE));
        let a = tracker.get("A").unwrap();
        assert_eq!(a.yield_count, 2);
        assert_eq!(a.last_yield_turn, Some(3));
        assert_eq!(a.turns_since_last_yield, 0);
        assert_eq!(
            a.current_focus_streak, 2,
            "stage 6 detection reads streak 2"
        );
        assert_eq!(tracker.get("B").unwrap().turns_since_last_yield, 0);
        tracker.update_focus(Some("B"), 3, "broaden");
        let a = tracker.get("A").unwrap();
        assert_eq!(a.current_focus_streak, 0);
        assert_eq!(a.turns_since_last_focus, 1);
        assert_eq!(a.turns_since_last_yield, 1);
        assert_eq!(a.focus_count, 2);
        assert_eq!(a.yield_count, 2);
        assert_eq!(a.last_focus_turn, Some(2));
        let b = tracker.get("B").unwrap();
        assert_eq!(b.focus_count, 1);
        assert_eq!(b.turns_since_last_focus, 0);
        assert_eq!(b.current_focus_streak, 1);
        assert_eq!(b.turns_since_last_yield, 1);
        assert_eq!(b.created_at_turn, 3);
        assert_eq!(tracker.previous_focus.as_deref(), Some("B"));
        assert_eq!(save_and_load(&tracker), tracker);
    }

    #[test]
    fn register_node_is_idempotent_and_keeps_creation_order() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("b"), 1);
        tracker.register_node(&node("a"), 2);
        tracker.update_focus(Some("b"), 2, "deepen");
        let again = tracker.register_node(&node("b"), 5).clone();
        assert_eq!(again.created_at_turn, 1);
        assert_eq!(again.focus_count, 1);
        let ids: Vec<_> = tracker
            .iter_in_creation_order()
            .map(|s| s.node_id.as_str())
            .collect();
        assert_eq!(ids, ["b", "a"]);
    }

    #[test]
    fn response_depth_lands_on_previous_focus_before_focus_moves() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("A"), 1);
        tracker.register_node(&node("B"), 1);
        tracker.update_focus(Some("A"), 1, "deepen");
        // Stage 6 of turn 2: the answer was about A, then B is chosen.
        let previous = tracker.previous_focus.clone().unwrap();
        assert!(tracker.append_response_signal(&previous, "surface"));
        tracker.update_focus(Some("B"), 2, "broaden");
        assert_eq!(tracker.get("A").unwrap().all_response_depths, ["surface"]);
        assert!(tracker.get("B").unwrap().all_response_depths.is_empty());
        assert!(!tracker.append_response_signal("A", "bottomless"));
        assert!(!tracker.append_response_signal("nobody", "deep"));
    }

    #[test]
    fn shallow_ratio_counts_surface_among_recent_depths() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("A"), 1);
        assert_eq!(tracker.get("A").unwrap().shallow_ratio(3), 0.0);
        for depth in ["deep", "surface", "moderate", "surface"] {
            tracker.append_response_signal("A", depth);
        }
        let a = tracker.get("A").unwrap();
        assert!((a.shallow_ratio(3) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(a.shallow_ratio(1), 1.0);
        assert_eq!(a.shallow_ratio(10), 0.5);
        assert_eq!(a.shallow_ratio(0), 0.0);
    }

    #[test]
    fn yield_rate_divides_by_focus_count_and_empty_changes_are_no_yield() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("A"), 1);
        assert!(tracker.record_yield("A", 1, ONE_NODE));
        assert_eq!(
            tracker.get("A").unwrap().yield_rate,
            1.0,
            "unfocused: max(0, 1)"
        );
        for turn in 1..=4 {
            tracker.update_focus(Some("A"), turn, "deepen");
        }
        assert!(!tracker.record_yield("A", 5, GraphChangeSummary::default()));
        assert!(!tracker.record_yield("ghost", 5, ONE_NODE));
        assert_eq!(tracker.get("A").unwrap().yield_count, 1);
        let edge_only = GraphChangeSummary {
            edges_added: 1,
            ..GraphChangeSummary::default()
        };
        assert!(tracker.record_yield("A", 5, edge_only));
        let a = tracker.get("A").unwrap();
        assert_eq!(a.yield_rate, 0.5);
        assert_eq!(a.turns_since_last_yield, 0);
        assert_eq!(a.current_focus_streak, 4);
    }

    #[test]
    fn strategy_usage_and_repetition_are_counted_per_node() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("A"), 1);
        tracker.update_focus(Some("A"), 1, "deepen");
        tracker.update_focus(Some("A"), 2, "deepen");
        tracker.update_focus(Some("A"), 3, "clarify");
        tracker.update_focus(Some("A"), 4, "clarify");
        let a = tracker.get("A").unwrap();
        assert_eq!(a.strategy_usage_count["deepen"], 2);
        assert_eq!(a.strategy_usage_count["clarify"], 2);
        assert_eq!(a.last_strategy_used.as_deref(), Some("clarify"));
        assert_eq!(a.consecutive_same_strategy, 2);
        assert_eq!(a.current_focus_streak, 4);
    }

    #[test]
    fn node_free_turn_ends_streak_and_still_ticks() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("A"), 1);
        tracker.update_focus(Some("A"), 1, "deepen");
        tracker.update_focus(None, 2, "reflect");
        let a = tracker.get("A").unwrap();
        assert_eq!(a.current_focus_streak, 0);
        assert_eq!(a.turns_since_last_focus, 1);
        assert_eq!(a.turns_since_last_yield, 2);
        assert!(!a.strategy_usage_count.contains_key("reflect"));
        assert_eq!(tracker.previous_focus, None);
        tracker.update_focus(Some("A"), 3, "deepen");
        assert_eq!(tracker.get("A").unwrap().current_focus_streak, 1);
        tracker.update_focus(Some("unknown"), 4, "deepen");
        assert_eq!(tracker.get("A").unwrap().current_focus_streak, 0);
        assert_eq!(tracker.previous_focus, None);
    }

    #[test]
    fn a_mention_or_a_paraphrase_folded_in_says_a_concept_again() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("A"), 1);
        assert!(
            !tracker.get("A").unwrap().said_again_in(1),
            "created, not said again"
        );
        tracker.record_mention("A", 3);
        tracker.record_mention("ghost", 3);
        let a = tracker.get("A").unwrap();
        assert!(a.said_again_in(3));
        assert!(!a.said_again_in(4));
        // A paraphrase created in turn 5 and folded into A's slot says A again in turn 5.
        tracker.map_to_slot("A", "slot:a");
        tracker.register_node(&node("A again"), 5);
        tracker.map_to_slot("A again", "slot:a");
        let slot = tracker.get("slot:a").unwrap();
        assert_eq!(slot.created_at_turn, 1);
        assert!(slot.said_again_in(5));
    }

    #[test]
    fn edge_counts_clamp_at_zero_and_record_connections() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("A"), 1);
        assert!(tracker.get("A").unwrap().is_orphan());
        tracker.update_edge_counts("A", 2, 1, Some("B"));
        tracker.update_edge_counts("A", -5, 0, Some("A"));
        tracker.update_edge_counts("ghost", 1, 1, Some("A"));
        let a = tracker.get("A").unwrap();
        assert_eq!((a.edge_count_outgoing, a.edge_count_incoming), (0, 1));
        assert!(!a.is_orphan());
        assert_eq!(a.connected_node_ids, BTreeSet::from(["B".to_owned()]));
        assert!(tracker.get("ghost").is_none());
    }

    #[test]
    fn slot_mapping_moves_state_and_routes_surface_calls() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("first"), 1);
        tracker.register_node(&node("fast car"), 1);
        tracker.register_node(&node("other"), 1);
        tracker.update_edge_counts("other", 1, 0, Some("fast car"));
        tracker.update_focus(Some("fast car"), 1, "deepen");
        tracker.map_to_slot("fast car", "slot:speed");

        assert_eq!(tracker.tracking_key("fast car"), "slot:speed");
        assert!(!tracker.states.contains_key("fast car"));
        assert_eq!(tracker.order, ["first", "slot:speed", "other"]);
        assert_eq!(tracker.previous_focus.as_deref(), Some("slot:speed"));
        let other = tracker.get("other").unwrap();
        assert_eq!(
            other.connected_node_ids,
            BTreeSet::from(["slot:speed".to_owned()])
        );

        assert!(tracker.record_yield("fast car", 2, ONE_NODE));
        tracker.update_focus(Some("fast car"), 2, "deepen");
        let slot = tracker.get("slot:speed").unwrap();
        assert_eq!(slot.node_id, "fast car");
        assert_eq!(slot.yield_count, 1);
        assert_eq!(slot.current_focus_streak, 2);
        assert_eq!(tracker.get("fast car"), Some(slot));
    }

    #[test]
    fn slot_mapping_merges_two_tracked_paraphrases() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("fast car"), 1);
        tracker.map_to_slot("fast car", "slot:speed");
        tracker.register_node(&node("other"), 2);
        tracker.register_node(&node("quick vehicle"), 3);
        tracker.update_focus(Some("fast car"), 3, "deepen");
        tracker.append_response_signal("fast car", "deep");
        tracker.update_focus(Some("quick vehicle"), 4, "clarify");
        tracker.append_response_signal("quick vehicle", "surface");
        tracker.record_yield("quick vehicle", 5, ONE_NODE);
        tracker.update_edge_counts("quick vehicle", 1, 0, Some("fast car"));
        tracker.update_edge_counts("quick vehicle", 0, 1, Some("other"));
        tracker.map_to_slot("quick vehicle", "slot:speed");

        assert_eq!(tracker.order, ["slot:speed", "other"]);
        assert_eq!(tracker.previous_focus.as_deref(), Some("slot:speed"));
        let slot = tracker.get("quick vehicle").unwrap();
        assert_eq!(slot.node_id, "fast car");
        assert_eq!(slot.created_at_turn, 1);
        assert_eq!(slot.focus_count, 2);
        assert_eq!(slot.last_focus_turn, Some(4));
        assert_eq!(slot.current_focus_streak, 1);
        assert_eq!(slot.yield_count, 1);
        assert_eq!(slot.yield_rate, 0.5);
        assert_eq!(slot.last_yield_turn, Some(5));
        assert_eq!(slot.all_response_depths, ["deep", "surface"]);
        assert_eq!(slot.last_strategy_used.as_deref(), Some("clarify"));
        assert_eq!(slot.strategy_usage_count.len(), 2);
        assert_eq!((slot.edge_count_outgoing, slot.edge_count_incoming), (1, 1));
        assert_eq!(
            slot.connected_node_ids,
            BTreeSet::from(["other".to_owned()])
        );
    }

    #[test]
    fn json_has_the_persisted_shape_and_round_trips() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("A"), 1);
        tracker.map_to_slot("A", "slot:a");
        tracker.update_focus(Some("A"), 1, "deepen");
        let value = tracker.to_json();
        assert_eq!(value["schema_version"], json!(1));
        assert_eq!(value["previous_focus"], json!("slot:a"));
        assert_eq!(value["slot_of"], json!({"A": "slot:a"}));
        assert_eq!(value["order"], json!(["slot:a"]));
        assert_eq!(value["states"]["slot:a"]["focus_count"], json!(1));
        assert_eq!(NodeStateTracker::from_json(&value).unwrap(), tracker);
        let text = serde_json::to_string(&value).unwrap();
        let reparsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(NodeStateTracker::from_json(&reparsed).unwrap(), tracker);
    }

    #[test]
    fn from_json_defaults_missing_slot_of_and_order() {
        let value = json!({
            "schema_version": 1,
            "previous_focus": null,
            "states": {
                "b": {"node_id": "b", "label": "B", "created_at_turn": 2, "depth": 0,
                      "node_type": "value"},
                "a": {"node_id": "a", "label": "A", "created_at_turn": 1, "depth": 0,
                      "node_type": "value", "focus_count": 3},
            },
        });
        let tracker = NodeStateTracker::from_json(&value).unwrap();
        assert!(tracker.slot_of.is_empty());
        assert_eq!(tracker.order, ["a", "b"]);
        assert_eq!(tracker.get("a").unwrap().focus_count, 3);
        assert_eq!(tracker.get("b").unwrap().last_focus_turn, None);
        // Saved before `last_said_turn` was kept: the creation turn stands in for it.
        let b = tracker.get("b").unwrap();
        assert_eq!(b.last_said_turn, 0);
        assert!(!b.said_again_in(2), "created in turn 2, not said again");
        assert!(!b.said_again_in(3));

        let mut with_bad_order = value;
        with_bad_order["order"] = json!(["b", "ghost", "b"]);
        let tracker = NodeStateTracker::from_json(&with_bad_order).unwrap();
        assert_eq!(tracker.order, ["b", "a"]);
    }

    #[test]
    fn from_json_text_reads_stored_text_and_names_what_is_wrong() {
        let mut tracker = NodeStateTracker::new();
        tracker.register_node(&node("A"), 1);
        let text = serde_json::to_string(&tracker.to_json()).unwrap();
        assert_eq!(NodeStateTracker::from_json_text(&text).unwrap(), tracker);
        assert_eq!(
            NodeStateTracker::from_json_text("null").unwrap(),
            NodeStateTracker::new()
        );
        let err =
            NodeStateTracker::from_json_text("{\"schema_version\": 1, \"states\": {").unwrap_err();
        assert!(
            matches!(&err, NodeTrackerError::Malformed(m) if m.starts_with("not JSON")),
            "{err}"
        );
    }

    #[test]
    fn from_json_rejects_other_schema_versions() {
        let mut value = NodeStateTracker::new().to_json();
        value["schema_version"] = json!(2);
        let err = NodeStateTracker::from_json(&value).unwrap_err();
        assert_eq!(err, NodeTrackerError::UnsupportedSchemaVersion { found: 2 });
        assert!(err.to_string().contains("reads version 1"));
    }

    #[test]
    fn from_json_rejects_malformed_input_with_typed_errors() {
        let cases = [
            json!(null),
            json!([1, 2]),
            json!({"states": {}}),
            json!({"schema_version": "1", "states": {}}),
            json!({"schema_version": -1, "states": {}}),
            json!({"schema_version": 1}),
            json!({"schema_version": 1, "states": 7}),
            json!({"schema_version": 1, "states": {"a": {"node_id": "a"}}}),
            json!({"schema_version": 1, "states": {"a": {"node_id": "a", "label": "A",
                "created_at_turn": 1, "depth": 0, "node_type": "value", "focus_count": -3}}}),
        ];
        for case in cases {
            let result = NodeStateTracker::from_json(&case);
            assert!(
                matches!(result, Err(NodeTrackerError::Malformed(_))),
                "{case} gave {result:?}"
            );
        }
    }

    /// One tracker call, over a small pool of ids so calls collide.
    #[derive(Debug, Clone)]
    enum Op {
        Register(usize, u32),
        Map(usize, usize),
        Edge(usize, i32, i32, Option<usize>),
        Yield(usize, u32, GraphChangeSummary),
        Depth(usize, usize),
        Focus(Option<usize>, u32, usize),
    }

    const IDS: [&str; 5] = ["a", "b", "c", "slot:1", "slot:2"];
    const STRATEGIES: [&str; 3] = ["deepen", "broaden", "reflect"];

    fn op() -> impl Strategy<Value = Op> {
        let id = 0..IDS.len();
        let changes = (0..3_u32, 0..3_u32, 0..3_u32).prop_map(|(n, e, m)| GraphChangeSummary {
            nodes_added: n,
            edges_added: e,
            nodes_modified: m,
        });
        prop_oneof![
            (id.clone(), 0..20_u32).prop_map(|(i, t)| Op::Register(i, t)),
            (id.clone(), 3..IDS.len()).prop_map(|(i, s)| Op::Map(i, s)),
            (
                id.clone(),
                -2..3_i32,
                -2..3_i32,
                proptest::option::of(id.clone())
            )
                .prop_map(|(i, o, n, other)| Op::Edge(i, o, n, other)),
            (id.clone(), 0..20_u32, changes).prop_map(|(i, t, c)| Op::Yield(i, t, c)),
            (id.clone(), 0..RESPONSE_DEPTHS.len()).prop_map(|(i, d)| Op::Depth(i, d)),
            (proptest::option::of(id), 0..20_u32, 0..STRATEGIES.len())
                .prop_map(|(i, t, s)| Op::Focus(i, t, s)),
        ]
    }

    fn apply(tracker: &mut NodeStateTracker, op: &Op) {
        match *op {
            Op::Register(i, turn) => {
                tracker.register_node(&node(IDS[i]), turn);
            }
            Op::Map(i, slot) => tracker.map_to_slot(IDS[i], IDS[slot]),
            Op::Edge(i, out, inc, other) => {
                tracker.update_edge_counts(IDS[i], out, inc, other.map(|o| IDS[o]));
            }
            Op::Yield(i, turn, changes) => {
                tracker.record_yield(IDS[i], turn, changes);
            }
            Op::Depth(i, depth) => {
                tracker.append_response_signal(IDS[i], RESPONSE_DEPTHS[depth]);
            }
            Op::Focus(i, turn, s) => tracker.update_focus(i.map(|i| IDS[i]), turn, STRATEGIES[s]),
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z_]{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                proptest::collection::btree_map("[a-z_]{0,16}", inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn random_operation_sequences_round_trip_through_json(
            ops in proptest::collection::vec(op(), 0..60)
        ) {
            let mut tracker = NodeStateTracker::new();
            for op in &ops {
                apply(&mut tracker, op);
            }
            let restored = NodeStateTracker::from_json(&tracker.to_json()).unwrap();
            prop_assert_eq!(&restored, &tracker);

            let mut keys = tracker.order.clone();
            keys.sort();
            prop_assert_eq!(keys, tracker.states.keys().cloned().collect::<Vec<_>>());
            let streaks = tracker
                .states
                .iter()
                .filter(|(_, state)| state.current_focus_streak > 0)
                .map(|(key, _)| key.clone())
                .collect::<Vec<_>>();
            prop_assert!(streaks.len() <= 1);
            if let Some(key) = streaks.first() {
                prop_assert_eq!(Some(key), tracker.previous_focus.as_ref());
            }
        }

        #[test]
        fn from_json_never_panics_on_arbitrary_json(
            value in json_value(),
            version in prop_oneof![Just(json!(1)), json_value()],
            field in "[a-z_]{0,16}",
        ) {
            let _ = NodeStateTracker::from_json(&value);
            let wrapped = json!({"schema_version": version, "states": value.clone()});
            let _ = NodeStateTracker::from_json(&wrapped);
            let nested = json!({"schema_version": 1, "states": {"k": value.clone()}});
            let _ = NodeStateTracker::from_json(&nested);
            let mut state = NodeStateTracker::new();
            state.register_node(&node("k"), 1);
            let mut partial = state.to_json();
            partial["states"]["k"][field.as_str()] = value;
            let _ = NodeStateTracker::from_json(&partial);
        }
    }
}
