//! Structured logs to a file, never to the terminal (the TUI owns it).
//!
//! Every command writes to `<data dir>/interviewer/logs/interviewer.log.<date>` (daily files),
//! or to the directory in `INTERVIEWER_LOG_DIR`. The level filter comes from `INTERVIEWER_LOG`
//! (`tracing` env-filter syntax, e.g. `interviewer::llm=debug`), default `info`. Writing goes
//! through a background thread, so a slow disk never stalls a turn or a frame.

use std::path::PathBuf;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Names the log directory.
pub const LOG_DIR_ENV: &str = "INTERVIEWER_LOG_DIR";
/// Holds the level filter.
pub const LOG_FILTER_ENV: &str = "INTERVIEWER_LOG";

/// Where logs go.
pub fn log_dir() -> PathBuf {
    std::env::var_os(LOG_DIR_ENV).map_or_else(
        || {
            dirs::data_dir()
                .unwrap_or_else(std::env::temp_dir)
                .join("interviewer")
                .join("logs")
        },
        PathBuf::from,
    )
}

/// Installs the file logger. Keep the guard alive until the program ends: dropping it flushes
/// pending lines. Returns `None` (and logs nowhere) when the directory cannot be created or a
/// logger is already installed; logging must never stop the program.
pub fn init() -> Option<WorkerGuard> {
    let dir = log_dir();
    std::fs::create_dir_all(&dir).ok()?;
    let appender = tracing_appender::rolling::daily(&dir, "interviewer.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_env(LOG_FILTER_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        // A line when a turn's or a stage's span closes, with its elapsed time and outcome.
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}
