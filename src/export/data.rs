//! [`SessionData`]: everything an export reads, loaded once from the store, with each
//! completed turn's [`TurnResult`] rebuilt from its checkpoints.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde_json::Value;

use super::ExportError;
use crate::graph::node_state::NodeStateTracker;
use crate::graph::records::{CanonicalEdge, CanonicalSlot, KgEdge, KgNode, SlotMapping};
use crate::pipeline::{Stage, TurnContext, TurnResult};
use crate::store::{
    Checkpoint, LlmUsageRecord, ScoringRecord, SessionRecord, Store, StoreOps, UsageTotals,
    Utterance,
};

/// Checkpoint name of a researcher's override (the pipeline's `question_override`).
const OVERRIDE_CHECKPOINT: &str = "question_override";

/// One completed turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRecord {
    pub turn: u32,
    /// The interview phase the decision was made in, from the decision row.
    pub phase: Option<String>,
    /// The engine's result for the turn, as the pipeline produced it.
    pub result: TurnResult,
    /// The LLM rubric scores stage 6 used (`{rubric: {score, reason}}`), when saved.
    pub llm_scores: Option<Value>,
    /// A researcher's override of the turn's question: the override record (strategy, focus,
    /// question, what it replaced) plus the `score_decomposition` it was chosen from.
    pub question_override: Option<Value>,
}

/// A session as the exports see it.
#[derive(Debug, Clone)]
pub struct SessionData {
    pub session: SessionRecord,
    pub utterances: Vec<Utterance>,
    /// How each spoken answer was heard, by utterance id.
    pub speech: HashMap<String, crate::domain::AnswerSpeech>,
    /// The transcript file the session was imported from, if it was.
    pub import: Option<crate::store::ImportRecord>,
    pub nodes: Vec<KgNode>,
    pub edges: Vec<KgEdge>,
    pub slots: Vec<CanonicalSlot>,
    pub mappings: Vec<SlotMapping>,
    pub canonical_edges: Vec<CanonicalEdge>,
    /// Completed turns in order.
    pub turns: Vec<TurnRecord>,
    pub usage: Vec<LlmUsageRecord>,
    pub usage_totals: UsageTotals,
    /// The node tracker's labels by tracking key (a node id, or a slot id once mapped).
    pub tracked_labels: HashMap<String, String>,
    /// Methodology level of each node type, as the node tracker recorded it.
    pub levels: BTreeMap<String, u32>,
}

impl SessionData {
    /// Loads `session_id` and rebuilds its completed turns.
    pub fn load(store: &Store, session_id: &str) -> Result<Self, ExportError> {
        let session = store
            .get_session(session_id)?
            .ok_or_else(|| ExportError::UnknownSession(session_id.to_owned()))?;
        let turns = load_turns(store, session_id)?;
        let nodes = store.nodes(session_id)?;
        let (tracked_labels, levels) = tracker_facts(session.node_tracker.as_deref(), &nodes);
        Ok(Self {
            utterances: store.utterances(session_id)?,
            speech: store.utterance_speech(session_id)?.into_iter().collect(),
            import: store.import_of(session_id)?,
            nodes,
            edges: store.edges(session_id)?,
            slots: store.slots(session_id)?,
            mappings: store.mappings(session_id)?,
            canonical_edges: store.canonical_edges(session_id)?,
            usage: store.llm_usage(session_id)?,
            usage_totals: store.usage_totals(session_id)?,
            turns,
            tracked_labels,
            levels,
            session,
        })
    }

    /// A readable label for a scored node: the tracker's (what the focus shows), else the
    /// surface node's, else the slot's name; empty when unknown.
    pub fn node_label(&self, node_id: &str) -> &str {
        if let Some(label) = self.tracked_labels.get(node_id) {
            return label;
        }
        if let Some(node) = self.nodes.iter().find(|n| n.id == node_id) {
            return &node.label;
        }
        self.slots
            .iter()
            .find(|s| s.id == node_id)
            .map_or("", |s| s.slot_name.as_str())
    }

    /// The level of a node type, when the methodology gave it one.
    pub fn level(&self, node_type: &str) -> Option<u32> {
        self.levels.get(node_type).copied()
    }
}

/// Every completed turn, rebuilt from checkpoints and joined with its decision row.
fn load_turns(store: &Store, session_id: &str) -> Result<Vec<TurnRecord>, ExportError> {
    let mut by_turn: BTreeMap<u32, Vec<Checkpoint>> = BTreeMap::new();
    for checkpoint in store.session_checkpoints(session_id)? {
        by_turn.entry(checkpoint.turn).or_default().push(checkpoint);
    }
    let spans: HashMap<u32, u64> = store.turn_spans(session_id)?.into_iter().collect();
    let decisions: HashMap<u32, ScoringRecord> = store
        .scoring_history_exact(session_id)?
        .into_iter()
        .map(|r| (r.turn, r))
        .collect();
    let mut turns = Vec::new();
    for (turn, checkpoints) in by_turn {
        let span = Duration::from_millis(spans.get(&turn).copied().unwrap_or(0));
        let fail = |message: String| ExportError::Turn {
            session: session_id.to_owned(),
            turn,
            message,
        };
        let Some(mut record) = rebuild(turn, checkpoints, span).map_err(fail)? else {
            continue;
        };
        if let Some(decision) = decisions.get(&turn) {
            record.phase = Some(decision.phase.as_str().to_owned());
            if let Some(o) = record
                .question_override
                .as_mut()
                .and_then(Value::as_object_mut)
            {
                let ranking = decision
                    .payload
                    .get("score_decomposition")
                    .cloned()
                    .unwrap_or(Value::Null);
                o.insert("score_decomposition".to_owned(), ranking);
            }
        }
        turns.push(record);
    }
    Ok(turns)
}

/// A turn's record from its checkpoints, or `None` when the turn did not complete.
fn rebuild(
    turn: u32,
    checkpoints: Vec<Checkpoint>,
    span: Duration,
) -> Result<Option<TurnRecord>, String> {
    let mut ctx = TurnContext::default();
    let mut llm_scores = None;
    let mut question_override = None;
    for checkpoint in checkpoints {
        let mut envelope = checkpoint.output;
        let output = envelope.get_mut("output").map_or(Value::Null, Value::take);
        if checkpoint.stage == OVERRIDE_CHECKPOINT {
            question_override = Some(output);
            continue;
        }
        let Some(stage) = Stage::parse(&checkpoint.stage) else {
            continue;
        };
        if stage == Stage::StrategySelection {
            llm_scores = envelope.get_mut("extra").and_then(|e| {
                e.get_mut("llm_scores")
                    .map(Value::take)
                    .filter(|v| !v.is_null())
            });
        }
        ctx.restore(stage, output).map_err(|e| e.to_string())?;
    }
    if !ctx.has(Stage::ScoringPersistence) {
        return Ok(None);
    }
    let result = TurnResult::from_run(&ctx, span).map_err(|e| e.to_string())?;
    Ok(Some(TurnRecord {
        turn,
        phase: None,
        result,
        llm_scores,
        question_override,
    }))
}

/// Labels by tracking key and levels by node type from the persisted node tracker. A tracker
/// that cannot be read only costs labels and levels, never the export.
fn tracker_facts(
    json: Option<&str>,
    nodes: &[KgNode],
) -> (HashMap<String, String>, BTreeMap<String, u32>) {
    let mut labels = HashMap::new();
    let mut levels = BTreeMap::new();
    let Some(tracker) = json.and_then(|j| NodeStateTracker::from_json_text(j).ok()) else {
        return (labels, levels);
    };
    for node in nodes {
        if let Some(state) = tracker.get(&node.id) {
            labels
                .entry(tracker.tracking_key(&node.id).to_owned())
                .or_insert_with(|| state.label.clone());
            if state.level > 0 {
                levels.entry(state.node_type.clone()).or_insert(state.level);
            }
        }
    }
    (labels, levels)
}

/// Usage totals of `calls` grouped by `key` (role, turn, …), in key order. A group's cost is
/// the sum of its known costs, `None` when none was known; `unpriced_calls` counts the rest.
pub fn usage_by<K: Ord>(
    calls: &[LlmUsageRecord],
    key: impl Fn(&LlmUsageRecord) -> K,
) -> BTreeMap<K, UsageTotals> {
    let mut groups: BTreeMap<K, UsageTotals> = BTreeMap::new();
    for call in calls {
        let totals = groups.entry(key(call)).or_default();
        totals.calls += 1;
        totals.tokens_in += call.usage.tokens_in;
        totals.tokens_out += call.usage.tokens_out;
        match call.usage.cost_usd {
            Some(cost) => totals.cost_usd = Some(totals.cost_usd.unwrap_or(0.0) + cost),
            None => totals.unpriced_calls += 1,
        }
    }
    groups
}
