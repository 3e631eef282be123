//! The twelve stages, one file each, named by the seeds' number and the stage's name. Each is
//! a function `run(input, ports)`: `input` holds the earlier stages' outputs it reads (typed,
//! built from the turn's context by `Input::from_turn`), `ports` what it may call
//! ([`Ports`](super::ports::Ports)). It returns a [`Staged`]: its output contract, the store
//! changes the output implies ([`Effects`]), the LLM calls it made and a one-line summary. It
//! writes nothing itself: the turn runner (`runner.rs`) commits the output, its effects, its
//! checkpoint and its usage rows in one transaction, then applies the effects to the session
//! in memory.

pub(crate) mod s01_context_loading;
pub(crate) mod s02_5_srl_preprocessing;
pub(crate) mod s02_utterance_saving;
pub(crate) mod s03_extraction;
pub(crate) mod s04_5_slot_discovery;
pub(crate) mod s04_graph_update;
pub(crate) mod s05_state_computation;
pub(crate) mod s06_strategy_selection;
pub(crate) mod s07_continuation;
pub(crate) mod s08_question_generation;
pub(crate) mod s09_response_saving;
pub(crate) mod s10_scoring_persistence;

#[cfg(test)]
pub(crate) mod fixture;

use super::ports::CallRecord;
use super::runner::{DecisionRecord, LoadingRecord};
use crate::domain::{SessionState, Speaker};
use crate::graph::node_state::NodeStateTracker;
use crate::graph::records::{CanonicalEdge, CanonicalSlot, KgEdge, KgNode, SlotMapping};
use crate::store::ScoringRecord;
use s10_scoring_persistence::ScoringPayload;

/// What a stage hands the turn runner.
pub(crate) struct Staged<'a, O> {
    /// The stage's output contract, checkpointed and filed in the turn's context.
    pub output: O,
    /// What the stage did, in one line (the stage-finished event and the log).
    pub summary: String,
    pub effects: Effects<'a>,
    /// Data kept in the checkpoint beside the output, for a resumed turn.
    pub extra: Option<Extra>,
    /// The LLM calls whose replies the output was built from; their usage rows commit with it.
    pub calls: Vec<CallRecord>,
}

impl<O> Staged<'_, O> {
    /// An output with no effects, extra data or calls.
    pub fn new(output: O, summary: impl Into<String>) -> Self {
        Self {
            output,
            summary: summary.into(),
            effects: Effects::default(),
            extra: None,
            calls: Vec::new(),
        }
    }
}

/// What a stage keeps in its checkpoint beside its output contract (`{"output": …, "extra":
/// …}`), for a resumed turn.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub(crate) enum Extra {
    /// Stage 1: the answer, until stage 2 has saved it.
    Loading(LoadingRecord),
    /// Stage 6: what the decision row and a researcher's override need.
    Decision(DecisionRecord),
}

/// An utterance a stage saves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewUtterance {
    pub id: String,
    pub speaker: Speaker,
    pub text: String,
    /// How a spoken answer was heard.
    pub speech: Option<crate::domain::AnswerSpeech>,
}

/// The store changes a stage's output implies, as data. The runner writes them in the
/// stage's transaction and, once it has committed, applies them to the session in memory, so
/// after a failed commit memory still matches the database.
#[derive(Default)]
pub(crate) struct Effects<'a> {
    pub utterance: Option<NewUtterance>,
    pub nodes_created: Vec<KgNode>,
    /// Existing nodes changed (merged into, superseded), replaced by id.
    pub nodes_updated: Vec<KgNode>,
    pub edges_created: Vec<KgEdge>,
    pub edges_updated: Vec<KgEdge>,
    pub slots_created: Vec<CanonicalSlot>,
    pub slots_updated: Vec<CanonicalSlot>,
    /// New mappings of surface nodes to slots; one for a node already mapped replaces it.
    pub mappings: Vec<SlotMapping>,
    /// The session's canonical edges after the stage, all of them.
    pub canonical_edges: Option<Vec<CanonicalEdge>>,
    /// The node tracker after the stage.
    pub tracker: Option<NodeStateTracker>,
    /// The turn's decision row.
    pub scoring: Option<ScoringRecord<ScoringPayload<'a>>>,
    /// The session state at the end of the turn.
    pub state: Option<SessionState>,
    /// The interview ends, for this reason.
    pub finish: Option<String>,
}

/// The mappings of `existing` with `created` applied: a node mapped again keeps its place with
/// the new slot, a node mapped first is appended.
pub(crate) fn merge_mappings(
    existing: &[SlotMapping],
    created: &[SlotMapping],
) -> Vec<SlotMapping> {
    let mut mappings = existing.to_vec();
    for m in created {
        match mappings
            .iter_mut()
            .find(|old| old.surface_node_id == m.surface_node_id)
        {
            Some(old) => old.clone_from(m),
            None => mappings.push(m.clone()),
        }
    }
    mappings
}
