//! The surface graph tables, `kg_nodes` and `kg_edges`.
//!
//! Nodes are upserted (a merge appends provenance, an embedding arrives later, a revision sets
//! `superseded_by`) but keep their creation turn and row order, which is the graph's creation
//! order. Edges are insert-only: a turn never writes the same edge twice.

use rusqlite::{Connection, Row, params};

use super::StoreError;
use super::codec::{
    atomic, col, embedding_col, embedding_to_blob, exec, json_col, query_all, to_json,
};
use crate::graph::records::{KgEdge, KgNode};

const NODE_COLUMNS: &str = "id, session_id, label, node_type, confidence, properties, stance, \
     source_utterance_ids, source_quote, superseded_by, embedding, recorded_at, turn";

const EDGE_COLUMNS: &str = "id, session_id, source_node_id, target_node_id, edge_type, \
     confidence, properties, source_utterance_ids, recorded_at, turn";

pub(crate) fn upsert_nodes(conn: &Connection, nodes: &[KgNode]) -> Result<(), StoreError> {
    atomic(conn, "saving graph nodes", |conn| {
        nodes.iter().try_for_each(|node| upsert_node(conn, node))
    })
}

fn upsert_node(conn: &Connection, node: &KgNode) -> Result<(), StoreError> {
    let context = format!("saving node {} of session {}", node.id, node.session_id);
    let properties = to_json(&node.properties, &context)?;
    let sources = to_json(&node.source_utterance_ids, &context)?;
    let embedding = node.embedding.as_deref().map(embedding_to_blob);
    // The creation turn and session never change: they define the node's place in the graph.
    exec(
        conn,
        &format!(
            "INSERT INTO kg_nodes ({NODE_COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT (id) DO UPDATE SET
                 label = excluded.label, node_type = excluded.node_type,
                 confidence = excluded.confidence, properties = excluded.properties,
                 stance = excluded.stance, source_utterance_ids = excluded.source_utterance_ids,
                 source_quote = excluded.source_quote, superseded_by = excluded.superseded_by,
                 embedding = excluded.embedding, recorded_at = excluded.recorded_at"
        ),
        params![
            node.id,
            node.session_id,
            node.label,
            node.node_type,
            node.confidence,
            properties,
            node.stance,
            sources,
            node.source_quote,
            node.superseded_by,
            embedding,
            node.recorded_at,
            node.turn,
        ],
        &context,
    )?;
    Ok(())
}

/// The nodes of a session in creation order (turn, then insertion).
pub(crate) fn nodes(conn: &Connection, session_id: &str) -> Result<Vec<KgNode>, StoreError> {
    query_all(
        conn,
        &format!("SELECT {NODE_COLUMNS} FROM kg_nodes WHERE session_id = ?1 ORDER BY turn, rowid"),
        [session_id],
        &format!("reading the nodes of session {session_id}"),
        decode_node,
    )
}

pub(crate) fn insert_edges(conn: &Connection, edges: &[KgEdge]) -> Result<(), StoreError> {
    atomic(conn, "saving graph edges", |conn| {
        edges.iter().try_for_each(|edge| write_edge(conn, edge, ""))
    })
}

/// Saves edges that already exist with their grown provenance and confidence; their
/// endpoints, type and creation turn never change.
pub(crate) fn update_edges(conn: &Connection, edges: &[KgEdge]) -> Result<(), StoreError> {
    atomic(conn, "updating graph edges", |conn| {
        edges.iter().try_for_each(|edge| {
            write_edge(
                conn,
                edge,
                " ON CONFLICT (id) DO UPDATE SET confidence = excluded.confidence,
                  properties = excluded.properties,
                  source_utterance_ids = excluded.source_utterance_ids",
            )
        })
    })
}

fn write_edge(conn: &Connection, edge: &KgEdge, on_conflict: &str) -> Result<(), StoreError> {
    let context = format!(
        "saving edge {} ({} -> {}) of session {}",
        edge.id, edge.source_node_id, edge.target_node_id, edge.session_id
    );
    let properties = to_json(&edge.properties, &context)?;
    let sources = to_json(&edge.source_utterance_ids, &context)?;
    exec(
        conn,
        &format!(
            "INSERT INTO kg_edges ({EDGE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)\
             {on_conflict}"
        ),
        params![
            edge.id,
            edge.session_id,
            edge.source_node_id,
            edge.target_node_id,
            edge.edge_type,
            edge.confidence,
            properties,
            sources,
            edge.recorded_at,
            edge.turn,
        ],
        &context,
    )?;
    Ok(())
}

/// The edges of a session in creation order.
pub(crate) fn edges(conn: &Connection, session_id: &str) -> Result<Vec<KgEdge>, StoreError> {
    query_all(
        conn,
        &format!("SELECT {EDGE_COLUMNS} FROM kg_edges WHERE session_id = ?1 ORDER BY turn, rowid"),
        [session_id],
        &format!("reading the edges of session {session_id}"),
        decode_edge,
    )
}

fn decode_node(row: &Row<'_>) -> Result<KgNode, StoreError> {
    let id: String = col(row, "id")?;
    let what = |column: &str| format!("kg_nodes.{column} of node {id}");
    Ok(KgNode {
        session_id: col(row, "session_id")?,
        label: col(row, "label")?,
        node_type: col(row, "node_type")?,
        confidence: col(row, "confidence")?,
        properties: json_col(row, "properties", || what("properties"))?,
        stance: col(row, "stance")?,
        source_utterance_ids: json_col(row, "source_utterance_ids", || {
            what("source_utterance_ids")
        })?,
        source_quote: col(row, "source_quote")?,
        superseded_by: col(row, "superseded_by")?,
        embedding: embedding_col(row, "embedding", || what("embedding"))?,
        recorded_at: col(row, "recorded_at")?,
        turn: col(row, "turn")?,
        id: id.clone(),
    })
}

fn decode_edge(row: &Row<'_>) -> Result<KgEdge, StoreError> {
    let id: String = col(row, "id")?;
    let what = |column: &str| format!("kg_edges.{column} of edge {id}");
    Ok(KgEdge {
        session_id: col(row, "session_id")?,
        source_node_id: col(row, "source_node_id")?,
        target_node_id: col(row, "target_node_id")?,
        edge_type: col(row, "edge_type")?,
        confidence: col(row, "confidence")?,
        properties: json_col(row, "properties", || what("properties"))?,
        source_utterance_ids: json_col(row, "source_utterance_ids", || {
            what("source_utterance_ids")
        })?,
        recorded_at: col(row, "recorded_at")?,
        turn: col(row, "turn")?,
        id: id.clone(),
    })
}
