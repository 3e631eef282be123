//! The interview's knowledge graph. This layer currently holds per-node state tracking
//! (seed 000 Paths 8 and 19); graph storage and metrics arrive with the store.

pub mod node_state;
