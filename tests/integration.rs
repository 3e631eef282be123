//! The integration suite in one test binary: every module below was its own test crate, and
//! linking each against candle, tokenizers and llguidance cost minutes and gigabytes.
//! `local_llm` (a real model on every core) and `parallel_calls` (wall-clock overlap) stay
//! binaries of their own so nothing else competes with them for the CPU.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;
mod tui_support;

mod audit;
mod cli_check;
mod cli_interview;
mod cli_score;
mod cli_sessions;
mod coach;
mod crash_resume;
mod embed;
mod embedded_default;
mod export;
mod focus_follows;
mod focus_support;
mod front_ends;
mod fuzz_contracts;
mod fuzz_loaders;
mod graph_minilm;
mod import;
mod layering;
mod new_methodologies;
mod pipeline;
mod providers_http;
mod replay;
mod score_formula;
mod simulate;
mod store;
mod study;
mod team;
mod tui_app;
mod tui_signals;
mod tui_snapshots;
mod understanding_corpus;
