//! One session's data in memory: its state, node tracker and both graphs, loaded from the
//! store when the interview opens and kept in step with every commit.
//!
//! Stages change a copy, commit it, and only then replace what is here, so after a failed
//! commit memory still matches the database.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::domain::SessionState;
use crate::graph::model::{CanonicalEdge, CanonicalSlot, KgEdge, KgNode, SlotMapping};
use crate::graph::node_state::NodeStateTracker;
use crate::store::{SessionStatus, Store, StoreOps};

use super::PipelineError;

#[derive(Debug, Clone)]
pub(crate) struct World {
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
}

impl World {
    pub fn load(store: &Store, session_id: &str) -> Result<Self, PipelineError> {
        let record = store
            .get_session(session_id)?
            .ok_or_else(|| PipelineError::NoSession(session_id.to_owned()))?;
        let tracker = match &record.node_tracker {
            Some(json) if !json.is_null() => NodeStateTracker::from_json(json)?,
            _ => NodeStateTracker::new(),
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
}

/// The current UTC time as RFC 3339 with milliseconds (`2026-11-22T09:15:02.120Z`).
pub(crate) fn now_rfc3339() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Gregorian date of a day count since 1970-01-01 (the days-to-civil algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        let now = now_rfc3339();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z'));
    }
}
