//! `interviewer export`: one session in one format, to stdout or (atomically) to a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::CliError;
use crate::export::{self, ExportError, ExportFormat, ExportOptions};
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
}

pub fn run(db: &Path, args: &ExportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let store = open_for_reading(db)?;
    let id = super::sessions::resolve(&store, db, "", &args.session_id)?.id;
    let options = ExportOptions::default().canonical(args.canonical);
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
        e @ ExportError::CanonicalNotGraph(_) => CliError::Usage(e.to_string()),
        e => CliError::Input(e.to_string()),
    }
}
