//! `interviewer export`: one session in one format, to stdout or (atomically) to a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::CliError;
use crate::export::{self, CsvLayout, ExportError, ExportFormat, ExportOptions};
use crate::store::Store;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The session to export: its id, the start of one, or `latest` (see `interviewer
    /// sessions`).
    #[arg(value_name = "SESSION_ID|latest")]
    pub session_id: String,
    /// What to write.
    #[arg(long, short = 'f', value_enum)]
    pub format: ExportFormat,
    /// Write to FILE (replaced atomically) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Graph formats: draw the canonical graph instead of the surface graph.
    #[arg(long)]
    pub canonical: bool,
    /// The csv format's columns: ours (the default) or the original system's, for analysis
    /// scripts written for it.
    #[arg(long, value_enum, value_name = "LAYOUT")]
    pub csv_layout: Option<CsvLayout>,
}

pub fn run(db: &Path, args: &ExportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    // Any --csv-layout, the default's name included, asks for a CSV.
    if args.csv_layout.is_some() && args.format != ExportFormat::Csv {
        return Err(CliError::Usage(
            ExportError::CsvLayoutNotCsv(args.format.name()).to_string(),
        ));
    }
    let store = open_for_reading(db)?;
    let id = super::sessions::resolve(&store, db, "", &args.session_id)?.id;
    let options = ExportOptions::default()
        .canonical(args.canonical)
        .csv_layout(args.csv_layout.unwrap_or_default());
    match &args.output {
        Some(path) => {
            export::write_file(&store, &id, args.format, &options, path)
                .map_err(|e| export_error(e, db))?;
            eprintln!("wrote {}", path.display());
            Ok(())
        }
        None => {
            export::write(&store, &id, args.format, &options, out).map_err(|e| export_error(e, db))
        }
    }
}

/// Opens the existing database at `db` for reading only (see [`Store::open_read_only`]).
pub(crate) fn open_for_reading(db: &Path) -> Result<Store, CliError> {
    if !db.exists() {
        return Err(missing_database(db));
    }
    Store::open_read_only(db).map_err(|e| CliError::Input(e.to_string()))
}

fn missing_database(db: &Path) -> CliError {
    CliError::Usage(format!(
        "no database at {}; pass --db or set INTERVIEWER_DB",
        db.display()
    ))
}

/// Opens the database at `db`, refusing to create one: reading a session from a file that
/// does not exist is a mistake in `--db`, not a request for an empty database.
pub(crate) fn open_existing(db: &Path) -> Result<Store, CliError> {
    if !db.exists() {
        return Err(missing_database(db));
    }
    Store::open(db).map_err(|e| CliError::Input(e.to_string()))
}

fn export_error(e: ExportError, db: &Path) -> CliError {
    match e {
        ExportError::UnknownSession(id) => CliError::Usage(format!(
            "no session '{id}' in {}; `interviewer sessions` lists them",
            db.display()
        )),
        e @ (ExportError::CanonicalNotGraph(_) | ExportError::CsvLayoutNotCsv(_)) => {
            CliError::Usage(e.to_string())
        }
        e => CliError::Input(e.to_string()),
    }
}
