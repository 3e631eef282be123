//! The interview's knowledge graph: surface and canonical records ([`records`]), turn updates of
//! the surface graph ([`surface`]), canonical slots ([`canonical`]), metrics ([`metrics`]) and
//! per-node state tracking ([`node_state`], seed 000 Paths 8 and 19).
//!
//! Everything here is pure; embeddings arrive as values and writes are returned, not made.

pub mod canonical;
pub mod discovery;
pub mod metrics;
pub mod node_state;
pub mod records;
pub mod similarity;
pub mod surface;
