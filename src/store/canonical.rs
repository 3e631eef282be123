//! The canonical graph tables: `canonical_slots`, `surface_to_slot_mapping` and
//! `canonical_edges`.
//!
//! All three are upserted: slot discovery revisits slots every turn (support grows, candidates
//! are promoted, a node may be re-assigned) and rewrites the aggregated edges.

use rusqlite::{Connection, Row, params};

use super::StoreError;
use super::codec::{
    atomic, col, embedding_col, embedding_to_blob, exec, json_col, query_all, to_json,
};
use crate::graph::records::{CanonicalEdge, CanonicalSlot, SlotMapping, SlotStatus};

const SLOT_COLUMNS: &str = "id, session_id, slot_name, description, node_type, status, \
     support_count, first_seen_turn, promoted_turn, embedding";

const CANONICAL_EDGE_COLUMNS: &str =
    "id, session_id, source_slot_id, target_slot_id, edge_type, support_count, surface_edge_ids";

pub(crate) fn upsert_slots(conn: &Connection, slots: &[CanonicalSlot]) -> Result<(), StoreError> {
    atomic(conn, "saving canonical slots", |conn| {
        slots.iter().try_for_each(|slot| upsert_slot(conn, slot))
    })
}

fn upsert_slot(conn: &Connection, slot: &CanonicalSlot) -> Result<(), StoreError> {
    let embedding = slot.embedding.as_deref().map(embedding_to_blob);
    exec(
        conn,
        &format!(
            "INSERT INTO canonical_slots ({SLOT_COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (id) DO UPDATE SET
                 slot_name = excluded.slot_name, description = excluded.description,
                 node_type = excluded.node_type, status = excluded.status,
                 support_count = excluded.support_count,
                 first_seen_turn = excluded.first_seen_turn,
                 promoted_turn = excluded.promoted_turn, embedding = excluded.embedding"
        ),
        params![
            slot.id,
            slot.session_id,
            slot.slot_name,
            slot.description,
            slot.node_type,
            slot.status.as_str(),
            slot.support_count,
            slot.first_seen_turn,
            slot.promoted_turn,
            embedding,
        ],
        &format!("saving slot {} of session {}", slot.id, slot.session_id),
    )?;
    Ok(())
}

/// The slots of a session in discovery order.
pub(crate) fn slots(conn: &Connection, session_id: &str) -> Result<Vec<CanonicalSlot>, StoreError> {
    query_all(
        conn,
        &format!(
            "SELECT {SLOT_COLUMNS} FROM canonical_slots WHERE session_id = ?1
             ORDER BY first_seen_turn, rowid"
        ),
        [session_id],
        &format!("reading the slots of session {session_id}"),
        decode_slot,
    )
}

pub(crate) fn upsert_mappings(
    conn: &Connection,
    mappings: &[SlotMapping],
) -> Result<(), StoreError> {
    atomic(conn, "saving slot mappings", |conn| {
        mappings.iter().try_for_each(|m| {
            exec(
                conn,
                "INSERT INTO surface_to_slot_mapping
                     (surface_node_id, canonical_slot_id, similarity, assigned_turn)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (surface_node_id) DO UPDATE SET
                     canonical_slot_id = excluded.canonical_slot_id,
                     similarity = excluded.similarity, assigned_turn = excluded.assigned_turn",
                params![
                    m.surface_node_id,
                    m.canonical_slot_id,
                    m.similarity,
                    m.assigned_turn
                ],
                &format!(
                    "mapping node {} to slot {}",
                    m.surface_node_id, m.canonical_slot_id
                ),
            )
            .map(drop)
        })
    })
}

/// The mappings of a session's nodes, in assignment order.
pub(crate) fn mappings(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<SlotMapping>, StoreError> {
    query_all(
        conn,
        "SELECT m.surface_node_id, m.canonical_slot_id, m.similarity, m.assigned_turn
         FROM surface_to_slot_mapping AS m JOIN kg_nodes AS n ON n.id = m.surface_node_id
         WHERE n.session_id = ?1 ORDER BY m.assigned_turn, m.rowid",
        [session_id],
        &format!("reading the slot mappings of session {session_id}"),
        |row| {
            Ok(SlotMapping {
                surface_node_id: col(row, "surface_node_id")?,
                canonical_slot_id: col(row, "canonical_slot_id")?,
                similarity: col(row, "similarity")?,
                assigned_turn: col(row, "assigned_turn")?,
            })
        },
    )
}

pub(crate) fn upsert_edges(conn: &Connection, edges: &[CanonicalEdge]) -> Result<(), StoreError> {
    atomic(conn, "saving canonical edges", |conn| {
        edges.iter().try_for_each(|edge| upsert_edge(conn, edge))
    })
}

fn upsert_edge(conn: &Connection, edge: &CanonicalEdge) -> Result<(), StoreError> {
    let context = format!(
        "saving canonical edge {} of session {}",
        edge.id, edge.session_id
    );
    let surface = to_json(&edge.surface_edge_ids, &context)?;
    exec(
        conn,
        &format!(
            "INSERT INTO canonical_edges ({CANONICAL_EDGE_COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (id) DO UPDATE SET
                 source_slot_id = excluded.source_slot_id,
                 target_slot_id = excluded.target_slot_id, edge_type = excluded.edge_type,
                 support_count = excluded.support_count,
                 surface_edge_ids = excluded.surface_edge_ids"
        ),
        params![
            edge.id,
            edge.session_id,
            edge.source_slot_id,
            edge.target_slot_id,
            edge.edge_type,
            edge.support_count,
            surface,
        ],
        &context,
    )?;
    Ok(())
}

/// The canonical edges of a session in creation order.
pub(crate) fn edges(conn: &Connection, session_id: &str) -> Result<Vec<CanonicalEdge>, StoreError> {
    query_all(
        conn,
        &format!(
            "SELECT {CANONICAL_EDGE_COLUMNS} FROM canonical_edges WHERE session_id = ?1
             ORDER BY rowid"
        ),
        [session_id],
        &format!("reading the canonical edges of session {session_id}"),
        |row| {
            let id: String = col(row, "id")?;
            Ok(CanonicalEdge {
                session_id: col(row, "session_id")?,
                source_slot_id: col(row, "source_slot_id")?,
                target_slot_id: col(row, "target_slot_id")?,
                edge_type: col(row, "edge_type")?,
                support_count: col(row, "support_count")?,
                surface_edge_ids: json_col(row, "surface_edge_ids", || {
                    format!("canonical_edges.surface_edge_ids of edge {id}")
                })?,
                id,
            })
        },
    )
}

fn decode_slot(row: &Row<'_>) -> Result<CanonicalSlot, StoreError> {
    let id: String = col(row, "id")?;
    let status: String = col(row, "status")?;
    let status = SlotStatus::parse(&status).ok_or_else(|| {
        StoreError::corrupt(
            format!("canonical_slots.status of slot {id}"),
            &format!("unknown status '{status}'"),
        )
    })?;
    Ok(CanonicalSlot {
        session_id: col(row, "session_id")?,
        slot_name: col(row, "slot_name")?,
        description: col(row, "description")?,
        node_type: col(row, "node_type")?,
        status,
        support_count: col(row, "support_count")?,
        first_seen_turn: col(row, "first_seen_turn")?,
        promoted_turn: col(row, "promoted_turn")?,
        embedding: embedding_col(row, "embedding", || {
            format!("canonical_slots.embedding of slot {id}")
        })?,
        id,
    })
}
