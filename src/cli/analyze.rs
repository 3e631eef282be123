//! `interviewer analyze`: the analysis across the interviews of a study (see [`crate::study`]),
//! from one or more database files and the team's PostgreSQL database (`--from`, see
//! [`crate::team`]), to stdout or (atomically) to a file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::CliError;
use super::sync::team_error;
use crate::config::ConfigDir;
use crate::export::ExportError;
use crate::signals::Catalog;
use crate::study::{self, Format, Selection, Study, StudyError, StudySession};
use crate::team::Target;

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// These sessions (full ids, comma-separated), from whichever database holds them.
    #[arg(long, value_delimiter = ',', value_name = "ID,...", conflicts_with_all = ["concept", "all"])]
    pub sessions: Vec<String>,
    /// Every session of this concept.
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    pub concept: Option<String>,
    /// Every session in the databases (they must share one methodology).
    #[arg(long)]
    pub all: bool,
    /// Take unfinished sessions too (the interviews table marks them).
    #[arg(long)]
    pub unfinished: bool,
    /// Respondents a link needs to be on the map (default: from the number of interviews).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub cutoff: Option<u32>,
    /// Read the team's sessions from this PostgreSQL database
    /// (`postgresql://USER@HOST[:PORT]/DB`); database files named with --db are read first.
    #[arg(long, value_name = "URL")]
    pub from: Option<String>,
    /// What to write.
    #[arg(long, short = 'f', value_enum, default_value = "md")]
    pub format: Format,
    /// Write to FILE (replaced atomically) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(
    dir: &ConfigDir,
    databases: &[PathBuf],
    args: &AnalyzeArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let selection = match (&args.concept, args.all, args.sessions.is_empty()) {
        (Some(concept), _, _) => Selection::Concept(concept.clone()),
        (None, true, _) => Selection::All,
        (None, false, false) => Selection::Ids(args.sessions.clone()),
        (None, false, true) => {
            return Err(CliError::Usage(
                "say which sessions to analyse: --concept ID, --sessions ID,... or --all".into(),
            ));
        }
    };
    let sessions = read(databases, args.from.as_deref(), &selection, args.unfinished)?;
    let analysis = analyse_sessions(dir, &sessions, args.cutoff)?;
    let text = study::render(&analysis, args.format)
        .map_err(|e| CliError::Input(format!("cannot write the analysis: {e}")))?;
    match &args.output {
        Some(path) => {
            write_file(path, &text)?;
            eprintln!(
                "wrote {} ({} interviews, {} codes)",
                path.display(),
                analysis.sessions.len(),
                analysis.codes.len()
            );
            Ok(())
        }
        None => super::emit(out, &text),
    }
}

/// Reads the chosen sessions and analyses them under their methodology's config file.
pub(super) fn analyse(
    dir: &ConfigDir,
    databases: &[PathBuf],
    selection: &Selection,
    unfinished: bool,
    cutoff: Option<u32>,
) -> Result<Study, CliError> {
    let sessions = study::load(databases, selection, unfinished).map_err(|e| study_error(&e))?;
    analyse_sessions(dir, &sessions, cutoff)
}

/// The chosen sessions from the files, then from the team database when given.
fn read(
    databases: &[PathBuf],
    from: Option<&str>,
    selection: &Selection,
    unfinished: bool,
) -> Result<Vec<StudySession>, CliError> {
    let Some(url) = from else {
        return study::load(databases, selection, unfinished).map_err(|e| study_error(&e));
    };
    let mut found = BTreeMap::new();
    study::load::gather(databases, selection, unfinished, &mut found)
        .map_err(|e| study_error(&e))?;
    let target = Target::parse(url).map_err(|e| team_error(&e))?;
    for warning in &target.warnings {
        eprintln!("warning: {warning}");
    }
    super::current_thread_runtime()?
        .block_on(async {
            let team = target.connect().await?;
            team.study_sessions(selection, unfinished, &mut found).await
        })
        .map_err(|e| team_error(&e))?;
    study::load::complete(found, selection, unfinished).map_err(|e| study_error(&e))
}

fn analyse_sessions(
    dir: &ConfigDir,
    sessions: &[StudySession],
    cutoff: Option<u32>,
) -> Result<Study, CliError> {
    let name = sessions
        .first()
        .map(|s| s.methodology.clone())
        .unwrap_or_default();
    let methodology = dir.methodology(&name, &Catalog)?;
    Ok(study::analyse(sessions, &methodology, cutoff))
}

fn write_file(path: &Path, text: &str) -> Result<(), CliError> {
    crate::export::atomic_write(path, |out| {
        out.write_all(text.as_bytes())
            .map_err(|source| ExportError::File {
                path: path.to_path_buf(),
                source,
            })
    })
    .map_err(|e| CliError::Input(e.to_string()))
}

fn study_error(e: &StudyError) -> CliError {
    match e {
        StudyError::MissingDatabase(_)
        | StudyError::MixedMethodologies(_)
        | StudyError::UnknownSession(_)
        | StudyError::Empty(_) => CliError::Usage(e.to_string()),
        StudyError::Store { .. } | StudyError::Session { .. } => CliError::Input(e.to_string()),
    }
}
