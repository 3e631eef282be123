//! Exports of a stored session: the whole session as JSON, the score decomposition as CSV (in
//! our columns or the replaced system's, see [`CsvLayout`]), the surface or canonical graph as
//! `GraphML`, DOT or Mermaid, and the transcript as Markdown; and [`replay`], the stored
//! decisions scored again under an edited methodology.
//!
//! Everything is read back from the store; each turn's [`TurnResult`] is rebuilt from its
//! stage checkpoints with floats read bit-exactly, so the CSV and JSON numbers equal the ones
//! the pipeline computed. Only completed turns are exported (a turn interrupted mid-way has no
//! result yet). A researcher's override of a question is reported beside the engine's
//! decision in the JSON (`override`) and the transcript; the CSV holds the engine's ranking.
//!
//! Output order is deterministic everywhere: turns, candidates and contributions in pipeline
//! order, nodes and edges in creation order. The CSV, graph and Markdown formats carry no
//! wall-clock data, so two runs that produce the same session produce the same files. The
//! JSON keeps wall-clock values under these keys only: `session.created_at`,
//! `session.updated_at`, `utterances[].created_at`, `graph.nodes[].recorded_at`,
//! `graph.edges[].recorded_at`, `turns[].turn_result.latency_ms` (rebuilt: the time between
//! the turn's first and last checkpoint commits), `llm_usage.calls[].created_at` and
//! `llm_usage.calls[].latency_ms`.
//!
//! [`TurnResult`]: crate::pipeline::TurnResult

mod csv;
mod data;
mod dot;
pub(crate) mod graph;
pub(crate) mod graphml;
mod json;
mod md;
mod mermaid;
pub mod replay;

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::store::{Store, StoreError};
pub use csv::CsvLayout;
pub use data::{SessionData, TurnRecord, usage_by};

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum ExportFormat {
    /// The whole session: config ids, every turn's result, focus trace, utterances, graphs,
    /// LLM usage.
    Json,
    /// One row per signal contribution of every scored candidate of every turn.
    Csv,
    /// The graph as `GraphML` (Gephi, yEd), with typed attribute keys.
    Graphml,
    /// The graph in Graphviz DOT.
    Dot,
    /// The graph as a Mermaid flowchart.
    Mermaid,
    /// A readable transcript with each turn's strategy and focus.
    Md,
}

impl ExportFormat {
    pub const ALL: [Self; 6] = [
        Self::Json,
        Self::Csv,
        Self::Graphml,
        Self::Dot,
        Self::Mermaid,
        Self::Md,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Csv => "csv",
            Self::Graphml => "graphml",
            Self::Dot => "dot",
            Self::Mermaid => "mermaid",
            Self::Md => "md",
        }
    }

    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Mermaid => "mmd",
            other => other.name(),
        }
    }

    /// Whether the format draws a graph (and so takes [`ExportOptions::canonical`]).
    pub fn is_graph(self) -> bool {
        matches!(self, Self::Graphml | Self::Dot | Self::Mermaid)
    }
}

/// Choices that shape an export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Graph formats draw the canonical graph (slots and their edges) instead of the surface
    /// graph. Other formats refuse it.
    pub canonical: bool,
    /// The CSV's columns. Other formats refuse any layout but the default.
    pub csv_layout: CsvLayout,
}

impl ExportOptions {
    #[must_use]
    pub fn canonical(mut self, canonical: bool) -> Self {
        self.canonical = canonical;
        self
    }

    #[must_use]
    pub fn csv_layout(mut self, layout: CsvLayout) -> Self {
        self.csv_layout = layout;
        self
    }
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("no session '{0}' in the database")]
    UnknownSession(String),
    #[error("--canonical applies to the graph formats (graphml, dot, mermaid), not {0}")]
    CanonicalNotGraph(&'static str),
    #[error("--csv-layout applies to the csv format, not {0}")]
    CsvLayoutNotCsv(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A turn's checkpoints could not be turned back into its result.
    #[error("session {session}, turn {turn}: cannot rebuild the turn result: {message}")]
    Turn {
        session: String,
        turn: u32,
        message: String,
    },
    #[error("writing the {format} export: {source}")]
    Write {
        format: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl ExportError {
    fn write(format: ExportFormat) -> impl FnOnce(io::Error) -> Self {
        move |source| Self::Write {
            format: format.name(),
            source,
        }
    }
}

/// Writes one export of `session_id` to `out`.
pub fn write(
    store: &Store,
    session_id: &str,
    format: ExportFormat,
    options: &ExportOptions,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    check(format, *options)?;
    let data = SessionData::load(store, session_id)?;
    render(&data, format, options, out)
}

/// Writes `session_id` in `format` to `path` atomically: a temporary file in the same
/// directory is renamed over `path` only once complete.
pub fn write_file(
    store: &Store,
    session_id: &str,
    format: ExportFormat,
    options: &ExportOptions,
    path: &Path,
) -> Result<(), ExportError> {
    check(format, *options)?;
    let data = SessionData::load(store, session_id)?;
    atomic_write(path, |out| render(&data, format, options, out))
}

/// Writes every format into `dir` (created if needed) and returns the files, in this order:
/// `session.json`, `scoring.csv`, `transcript.md`, then `surface.{graphml,dot,mmd}` and
/// `canonical.{graphml,dot,mmd}`. Each file is written atomically.
pub fn write_all(store: &Store, session_id: &str, dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    let data = SessionData::load(store, session_id)?;
    crate::logging::create_private_dir(dir).map_err(|source| ExportError::File {
        path: dir.to_path_buf(),
        source,
    })?;
    let surface = ExportOptions::default();
    let canonical = surface.canonical(true);
    let plan = [
        ("session.json", ExportFormat::Json, surface),
        ("scoring.csv", ExportFormat::Csv, surface),
        ("transcript.md", ExportFormat::Md, surface),
        ("surface.graphml", ExportFormat::Graphml, surface),
        ("surface.dot", ExportFormat::Dot, surface),
        ("surface.mmd", ExportFormat::Mermaid, surface),
        ("canonical.graphml", ExportFormat::Graphml, canonical),
        ("canonical.dot", ExportFormat::Dot, canonical),
        ("canonical.mmd", ExportFormat::Mermaid, canonical),
    ];
    let mut written = Vec::with_capacity(plan.len());
    for (name, format, options) in plan {
        let path = dir.join(name);
        atomic_write(&path, |out| render(&data, format, &options, out))?;
        written.push(path);
    }
    Ok(written)
}

fn check(format: ExportFormat, options: ExportOptions) -> Result<(), ExportError> {
    if options.canonical && !format.is_graph() {
        return Err(ExportError::CanonicalNotGraph(format.name()));
    }
    if options.csv_layout != CsvLayout::default() && format != ExportFormat::Csv {
        return Err(ExportError::CsvLayoutNotCsv(format.name()));
    }
    Ok(())
}

/// Renders loaded session data in `format`.
pub fn render(
    data: &SessionData,
    format: ExportFormat,
    options: &ExportOptions,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let mut out = BufWriter::new(out);
    let graph = || {
        if options.canonical {
            graph::canonical(data)
        } else {
            graph::surface(data)
        }
    };
    match format {
        ExportFormat::Json => json::write(data, &mut out),
        ExportFormat::Csv => csv::write(data, options.csv_layout, &mut out),
        ExportFormat::Graphml => graphml::write(&graph(), &mut out),
        ExportFormat::Dot => dot::write(&graph(), &mut out),
        ExportFormat::Mermaid => mermaid::write(&graph(), &mut out),
        ExportFormat::Md => md::write(data, &mut out),
    }
    .and_then(|()| out.flush())
    .map_err(ExportError::write(format))
}

/// Writes a file through `fill` into a temporary sibling, then renames it into place; on any
/// failure the temporary file is removed and `path` is left as it was.
pub(crate) fn atomic_write(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    let file_error = |source| ExportError::File {
        path: path.to_path_buf(),
        source,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| file_error(io::Error::other("not a file path")))?;
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    // Exports hold what respondents said: created 0600 like the database. Errors name the
    // file the user asked for, not the temporary one beside it.
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let result = options
        .open(&tmp)
        .map_err(file_error)
        .and_then(|mut file| {
            fill(&mut file)?;
            file.sync_all().map_err(file_error)
        })
        .and_then(|()| fs::rename(&tmp, path).map_err(file_error));
    if result.is_err() {
        // Best effort: the temporary file may not even exist.
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// A float as the shortest decimal that reads back as the same `f64` (Rust's `Display`), so
/// reports keep the pipeline's exact values.
pub(crate) fn float(value: f64) -> String {
    format!("{value}")
}
