//! Signal detection: five pools (graph, llm, temporal, meta, technique) of small detectors
//! with namespaced names, run in dependency order by a [`Registry`].
//!
//! Pure: detectors read a [`DetectionInput`] of values and write [`Detected`] values. The LLM
//! batch call is made by the pipeline; [`llm`] builds its prompt and parses its reply.

pub mod catalog;
mod detectors;
mod input;
pub mod llm;
pub mod meta;
pub mod node;
mod registry;

pub use catalog::Catalog;
pub use detectors::{run_length, strategy_repetition};
pub use input::{Detected, DetectionInput};
pub use registry::{Detector, Registry, RegistryError};

#[cfg(test)]
mod tests;
