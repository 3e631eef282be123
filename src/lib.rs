//! `interviewer`: adaptive, knowledge-graph-based qualitative research interviews.
//!
//! Each respondent answer runs through a turn pipeline that extracts concepts into a graph,
//! computes signals from five pools, scores the methodology's strategies in two stages and asks
//! the next question. This crate is the engine plus its command-line front end.
//!
//! # Layout
//!
//! - [`domain`]: shared value types (signal values, phases, focus entries, graph summaries).
//! - [`config`]: methodology, concept and persona YAML and the signal rubrics, validated.
//! - [`signals`]: the detector registry and every detector of the five pools (pure).
//! - [`scoring`]: two-stage strategy → node selection with score decomposition (pure).
//! - [`graph`]: per-node state tracking (pure).
//! - [`contract`]: lenient extraction of JSON from LLM replies.
//! - [`srl`]: rule-based discourse relations and predicate frames for extraction hints (pure).
//! - [`prompts`]: extraction and question prompts, the conversation window, and strict reply
//!   parsers (pure).
//! - [`cli`]: the `interviewer` command's subcommands.
//!
//! The pure modules never import an adapter; see `ARCHITECTURE` notes in the README.

#![cfg_attr(test, allow(clippy::float_cmp))]

pub mod cli;
pub mod config;
pub mod contract;
pub mod domain;
pub mod embed;
pub mod graph;
pub mod llm;
pub mod pipeline;
pub mod prompts;
pub mod scoring;
pub mod session;
pub mod signals;
pub mod srl;
pub mod store;
