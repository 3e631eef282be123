//! [`StoreOps`]: every typed read and write, shared by [`Store`](super::Store) and
//! [`Tx`](super::Tx).
//!
//! The SQL lives once, in free functions over `&rusqlite::Connection` (a transaction derefs to
//! one); this trait only forwards to them. Multi-row writes run atomically wherever they are
//! called: in their own transaction on a [`Store`](super::Store), under a savepoint inside a
//! [`Tx`](super::Tx).

use rusqlite::Connection;

use super::imports::ImportRecord;
use super::{
    Checkpoint, LlmUsage, LlmUsageRecord, NewSession, ScoringRecord, SessionRecord, SessionSummary,
    Speaker, StoreError, UsageTotals, Utterance, canonical, history, imports, scoring, sessions,
    surface, usage, utterances,
};
use crate::domain::SessionState;
use crate::graph::records::{CanonicalEdge, CanonicalSlot, KgEdge, KgNode, SlotMapping};

pub(crate) mod sealed {
    /// Grants the forwarding methods a connection while keeping it out of the public API.
    pub trait Connected {
        fn connection(&self) -> &rusqlite::Connection;
    }
}

/// Typed access to every table. Bring it into scope to call these on a store or transaction.
///
/// Sealed: only [`Store`](super::Store) and [`Tx`](super::Tx) implement it.
pub trait StoreOps: sealed::Connected {
    // --- sessions ---------------------------------------------------------------------------

    /// Creates an active session; fails if the id exists.
    fn create_session(&self, new: &NewSession) -> Result<(), StoreError> {
        sessions::create(conn(self), new)
    }

    /// The session, or `None` if there is none with that id.
    fn get_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        sessions::get(conn(self), id)
    }

    /// Every session, most recently active first.
    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        sessions::list(conn(self))
    }

    /// Saves the session state and the node tracker JSON at turn end.
    fn update_session_state(
        &self,
        id: &str,
        state: &SessionState,
        node_tracker: &(impl serde::Serialize + ?Sized),
    ) -> Result<(), StoreError> {
        sessions::update_state(conn(self), id, state, node_tracker)
    }

    /// Saves the node tracker mid-turn, in the transaction of the stage that changed it.
    fn update_tracker(
        &self,
        id: &str,
        node_tracker: &(impl serde::Serialize + ?Sized),
    ) -> Result<(), StoreError> {
        sessions::update_tracker(conn(self), id, node_tracker)
    }

    /// Marks the session finished with the termination reason.
    fn finish_session(&self, id: &str, reason: &str) -> Result<(), StoreError> {
        sessions::finish(conn(self), id, reason)
    }

    /// Records why the session's last turn failed, or clears it with `None` (a successful
    /// state save clears it too).
    fn set_session_failure(
        &self,
        id: &str,
        failure: Option<&sessions::TurnFailure>,
    ) -> Result<(), StoreError> {
        sessions::set_failure(conn(self), id, failure)
    }

    /// Records that `simulate` answers the session with `persona` under `seed`.
    fn set_session_persona(&self, id: &str, persona: &str, seed: u64) -> Result<(), StoreError> {
        sessions::set_persona(conn(self), id, persona, seed)
    }

    /// The persona id and seed of a simulated session; `None` for a person's interview.
    fn session_persona(&self, id: &str) -> Result<Option<(String, u64)>, StoreError> {
        sessions::persona(conn(self), id)
    }

    /// Deletes the session and, by cascade, everything it owns.
    fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        sessions::delete(conn(self), id)
    }

    // --- imports ----------------------------------------------------------------------------

    /// Records that a session is being imported from a transcript file.
    fn insert_import(&self, record: &ImportRecord) -> Result<(), StoreError> {
        imports::insert(conn(self), record)
    }

    /// Marks a session's import finished.
    fn complete_import(&self, session_id: &str) -> Result<(), StoreError> {
        imports::complete(conn(self), session_id)
    }

    /// The import of the file with this content hash, if it was imported.
    fn import_by_hash(&self, hash: &str) -> Result<Option<ImportRecord>, StoreError> {
        imports::by_hash(conn(self), hash)
    }

    /// How the session was imported, if it was.
    fn import_of(&self, session_id: &str) -> Result<Option<ImportRecord>, StoreError> {
        imports::by_session(conn(self), session_id)
    }

    /// Every imported transcript, oldest first.
    fn imports(&self) -> Result<Vec<ImportRecord>, StoreError> {
        imports::all(conn(self))
    }

    // --- utterances -------------------------------------------------------------------------

    /// Removes an utterance (an imported session's last engine question, which nobody asked).
    fn delete_utterance(
        &self,
        session_id: &str,
        turn: u32,
        speaker: Speaker,
    ) -> Result<(), StoreError> {
        utterances::delete(conn(self), session_id, turn, speaker)
    }

    /// Saves an utterance under a fresh `UUIDv4` and marks the session active; a second
    /// utterance by the same speaker in the same turn is refused.
    fn insert_utterance(
        &self,
        session_id: &str,
        turn: u32,
        speaker: Speaker,
        text: &str,
    ) -> Result<Utterance, StoreError> {
        let id = uuid::Uuid::new_v4().to_string();
        utterances::insert(conn(self), &id, session_id, turn, speaker, text)
    }

    /// Saves an utterance under an id the caller minted (so a stage can checkpoint the id in
    /// the same transaction).
    fn insert_utterance_with_id(
        &self,
        id: &str,
        session_id: &str,
        turn: u32,
        speaker: Speaker,
        text: &str,
    ) -> Result<Utterance, StoreError> {
        utterances::insert(conn(self), id, session_id, turn, speaker, text)
    }

    /// All utterances of a session in the order they were said.
    /// Replaces an utterance's text in place (a regenerated question keeps its id).
    fn replace_utterance_text(
        &self,
        session_id: &str,
        turn: u32,
        speaker: Speaker,
        text: &str,
    ) -> Result<(), StoreError> {
        utterances::replace_text(conn(self), session_id, turn, speaker, text)
    }

    fn utterances(&self, session_id: &str) -> Result<Vec<Utterance>, StoreError> {
        utterances::all(conn(self), session_id)
    }

    /// Records how a spoken answer was heard (in the transaction that saves the answer).
    fn insert_utterance_speech(
        &self,
        utterance_id: &str,
        speech: &crate::domain::AnswerSpeech,
    ) -> Result<(), StoreError> {
        utterances::insert_speech(conn(self), utterance_id, speech)
    }

    /// How each spoken answer of a session was heard, by utterance id.
    fn utterance_speech(
        &self,
        session_id: &str,
    ) -> Result<Vec<(String, crate::domain::AnswerSpeech)>, StoreError> {
        utterances::speech(conn(self), session_id)
    }

    /// The last `limit` utterances, oldest first (context loading's recent window).
    fn recent_utterances(
        &self,
        session_id: &str,
        limit: u32,
    ) -> Result<Vec<Utterance>, StoreError> {
        utterances::recent(conn(self), session_id, limit)
    }

    fn utterance(
        &self,
        session_id: &str,
        turn: u32,
        speaker: Speaker,
    ) -> Result<Option<Utterance>, StoreError> {
        utterances::one(conn(self), session_id, turn, speaker)
    }

    // --- surface graph ----------------------------------------------------------------------

    /// Inserts or updates nodes, all or none. The creation turn of an existing node is kept.
    fn upsert_nodes(&self, nodes: &[KgNode]) -> Result<(), StoreError> {
        surface::upsert_nodes(conn(self), nodes)
    }

    /// The nodes of a session in creation order (turn, then insertion).
    fn nodes(&self, session_id: &str) -> Result<Vec<KgNode>, StoreError> {
        surface::nodes(conn(self), session_id)
    }

    /// Inserts edges, all or none; both endpoints must exist.
    fn insert_edges(&self, edges: &[KgEdge]) -> Result<(), StoreError> {
        surface::insert_edges(conn(self), edges)
    }

    /// Saves re-mentioned edges (grown provenance, new confidence), all or none.
    fn update_edges(&self, edges: &[KgEdge]) -> Result<(), StoreError> {
        surface::update_edges(conn(self), edges)
    }

    fn edges(&self, session_id: &str) -> Result<Vec<KgEdge>, StoreError> {
        surface::edges(conn(self), session_id)
    }

    // --- canonical graph --------------------------------------------------------------------

    fn upsert_slots(&self, slots: &[CanonicalSlot]) -> Result<(), StoreError> {
        canonical::upsert_slots(conn(self), slots)
    }

    /// The slots of a session in discovery order.
    fn slots(&self, session_id: &str) -> Result<Vec<CanonicalSlot>, StoreError> {
        canonical::slots(conn(self), session_id)
    }

    /// Inserts or re-assigns node-to-slot mappings, all or none.
    fn upsert_mappings(&self, mappings: &[SlotMapping]) -> Result<(), StoreError> {
        canonical::upsert_mappings(conn(self), mappings)
    }

    fn mappings(&self, session_id: &str) -> Result<Vec<SlotMapping>, StoreError> {
        canonical::mappings(conn(self), session_id)
    }

    fn upsert_canonical_edges(&self, edges: &[CanonicalEdge]) -> Result<(), StoreError> {
        canonical::upsert_edges(conn(self), edges)
    }

    fn canonical_edges(&self, session_id: &str) -> Result<Vec<CanonicalEdge>, StoreError> {
        canonical::edges(conn(self), session_id)
    }

    // --- scoring and checkpoints ------------------------------------------------------------

    /// Records a turn's decision; one per turn.
    fn insert_scoring<P: serde::Serialize>(
        &self,
        record: &ScoringRecord<P>,
    ) -> Result<(), StoreError> {
        scoring::insert(conn(self), record)
    }

    /// Replaces a turn's decision (researcher override).
    fn replace_scoring<P: serde::Serialize>(
        &self,
        record: &ScoringRecord<P>,
    ) -> Result<(), StoreError> {
        scoring::replace(conn(self), record)
    }

    /// Every decision of a session, by turn.
    fn scoring_history(&self, session_id: &str) -> Result<Vec<ScoringRecord>, StoreError> {
        scoring::history(conn(self), session_id)
    }

    /// The strategies of the last `limit` turns, oldest first (the seed uses 5).
    fn recent_strategies(&self, session_id: &str, limit: u32) -> Result<Vec<String>, StoreError> {
        scoring::recent_strategies(conn(self), session_id, limit)
    }

    /// Saves (or replaces) a stage's output contract for a turn, serialised straight to its
    /// JSON text.
    fn put_checkpoint<T: serde::Serialize + ?Sized>(
        &self,
        session_id: &str,
        turn: u32,
        stage: &str,
        output: &T,
    ) -> Result<(), StoreError> {
        scoring::put_checkpoint(conn(self), session_id, turn, stage, output)
    }

    fn checkpoint(
        &self,
        session_id: &str,
        turn: u32,
        stage: &str,
    ) -> Result<Option<Checkpoint>, StoreError> {
        scoring::checkpoint(conn(self), session_id, turn, stage)
    }

    /// The stages a turn has checkpointed, in save order (their outputs are not read).
    fn checkpointed_stages(&self, session_id: &str, turn: u32) -> Result<Vec<String>, StoreError> {
        scoring::checkpointed_stages(conn(self), session_id, turn)
    }

    /// The checkpoints of a turn in the order the stages saved them.
    fn checkpoints_for_turn(
        &self,
        session_id: &str,
        turn: u32,
    ) -> Result<Vec<Checkpoint>, StoreError> {
        scoring::checkpoints_for_turn(conn(self), session_id, turn)
    }

    /// Every checkpoint of a session, by turn then save order, with floats read back
    /// bit-exactly (exports rebuild each turn's result from these).
    fn session_checkpoints(&self, session_id: &str) -> Result<Vec<Checkpoint>, StoreError> {
        history::session_checkpoints(conn(self), session_id)
    }

    /// [`scoring_history`](Self::scoring_history) with floats read back bit-exactly.
    fn scoring_history_exact(&self, session_id: &str) -> Result<Vec<ScoringRecord>, StoreError> {
        history::scoring_history(conn(self), session_id)
    }

    /// Milliseconds between the first and last checkpoint commit of each turn, by turn
    /// (wall-clock; a rebuilt turn's latency).
    fn turn_spans(&self, session_id: &str) -> Result<Vec<(u32, u64)>, StoreError> {
        history::turn_spans(conn(self), session_id)
    }

    // --- LLM usage --------------------------------------------------------------------------

    /// Records one LLM call and returns its row id.
    fn insert_llm_usage(&self, usage: &LlmUsage) -> Result<i64, StoreError> {
        usage::insert(conn(self), usage)
    }

    fn llm_usage(&self, session_id: &str) -> Result<Vec<LlmUsageRecord>, StoreError> {
        usage::all(conn(self), session_id)
    }

    fn usage_totals(&self, session_id: &str) -> Result<UsageTotals, StoreError> {
        usage::totals(conn(self), session_id)
    }
}

fn conn<S: sealed::Connected + ?Sized>(store: &S) -> &Connection {
    store.connection()
}
