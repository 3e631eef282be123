//! One session's data in memory: its state, node tracker and both graphs, loaded from the
//! store when the interview opens and kept in step with every commit.
//!
//! Stages change a copy, commit it, and only then replace what is here, so after a failed
//! commit memory still matches the database.

use crate::domain::SessionState;
use crate::graph::node_state::NodeStateTracker;
use crate::graph::records::{CanonicalEdge, CanonicalSlot, KgEdge, KgNode, SlotMapping};
use crate::store::{SessionStatus, Store, StoreOps};

use super::PipelineError;
use super::stages::{Effects, merge_mappings};

#[derive(Debug, Clone)]
pub(crate) struct SessionData {
    pub session_id: String,
    pub max_turns: u32,
    pub status: SessionStatus,
    pub termination_reason: Option<String>,
    pub state: SessionState,
    pub tracker: NodeStateTracker,
    pub nodes: Vec<KgNode>,
    pub edges: Vec<KgEdge>,
    pub slots: Vec<CanonicalSlot>,
    pub mappings: Vec<SlotMapping>,
    pub canonical_edges: Vec<CanonicalEdge>,
    /// What the researcher should know about how the session was loaded (its last turn
    /// failed, or a stored node tracker could not be read and was replaced by a fresh one);
    /// the driver reports each as a warning event when it starts.
    pub load_warnings: Vec<String>,
}

impl SessionData {
    pub fn load(store: &Store, session_id: &str) -> Result<Self, PipelineError> {
        let record = store
            .get_session(session_id)?
            .ok_or_else(|| PipelineError::NoSession(session_id.to_owned()))?;
        let mut load_warnings: Vec<String> = record
            .failure
            .iter()
            .map(|f| format!("session {session_id}: the last turn {}", f.describe()))
            .collect();
        let tracker = match record
            .node_tracker
            .as_deref()
            .map(NodeStateTracker::from_json_text)
        {
            None => NodeStateTracker::new(),
            Some(Ok(tracker)) => tracker,
            // Seed 000 Path 8: a tracker that cannot be loaded degrades to a fresh one with a
            // warning; the per-node history is lost, the session itself is not.
            Some(Err(e)) => {
                tracing::warn!(session = session_id, error = %e, "node tracker replaced by a fresh one");
                load_warnings.push(format!(
                    "session {session_id}: the stored node tracker could not be read ({e}); \
                     continuing with a fresh tracker, so node focus and yield history restart"
                ));
                NodeStateTracker::new()
            }
        };
        Ok(Self {
            session_id: record.id,
            max_turns: record.max_turns,
            status: record.status,
            termination_reason: record.termination_reason,
            state: record.state,
            tracker,
            nodes: store.nodes(session_id)?,
            edges: store.edges(session_id)?,
            slots: store.slots(session_id)?,
            mappings: store.mappings(session_id)?,
            canonical_edges: store.canonical_edges(session_id)?,
            load_warnings,
        })
    }

    /// A node's label, or its id when unknown.
    pub fn label_of(&self, id: &str) -> String {
        self.nodes
            .iter()
            .find(|n| n.id == id)
            .map_or_else(|| id.to_owned(), |n| n.label.clone())
    }

    /// Nodes not superseded by a revision.
    pub fn live_nodes(&self) -> impl Iterator<Item = &KgNode> {
        self.nodes.iter().filter(|n| n.superseded_by.is_none())
    }

    /// Replaces nodes by id and appends new ones, in creation order.
    pub fn apply_nodes(&mut self, updated: &[KgNode], created: &[KgNode]) {
        for node in updated {
            if let Some(old) = self.nodes.iter_mut().find(|n| n.id == node.id) {
                old.clone_from(node);
            }
        }
        self.nodes.extend_from_slice(created);
    }

    pub fn apply_edges(&mut self, updated: &[KgEdge], created: &[KgEdge]) {
        for edge in updated {
            if let Some(old) = self.edges.iter_mut().find(|e| e.id == edge.id) {
                old.clone_from(edge);
            }
        }
        self.edges.extend_from_slice(created);
    }

    /// Applies a committed stage's effects.
    pub fn apply(&mut self, effects: Effects<'_>) {
        self.apply_nodes(&effects.nodes_updated, &effects.nodes_created);
        self.apply_edges(&effects.edges_updated, &effects.edges_created);
        for slot in effects.slots_updated {
            if let Some(old) = self.slots.iter_mut().find(|s| s.id == slot.id) {
                *old = slot;
            }
        }
        self.slots.extend(effects.slots_created);
        if !effects.mappings.is_empty() {
            self.mappings = merge_mappings(&self.mappings, &effects.mappings);
        }
        if let Some(edges) = effects.canonical_edges {
            self.canonical_edges = edges;
        }
        if let Some(tracker) = effects.tracker {
            self.tracker = tracker;
        }
        if let Some(state) = effects.state {
            self.state = state;
        }
        if let Some(reason) = effects.finish {
            self.status = SessionStatus::Finished;
            self.termination_reason = Some(reason);
        }
    }
}
