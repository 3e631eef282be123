//! `interviewer analyze`: the analysis across the interviews of a study (see [`crate::study`]),
//! from one or more database files and the team's PostgreSQL database (`--from`, see
//! [`crate::team`]), to stdout or (atomically) to a file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::sync::team_error;
use super::{CliError, SessionChoice};
use crate::config::ConfigDir;
use crate::export::ExportError;
use crate::signals::Catalog;
use crate::simulate::RunSummary;
use crate::store::{SessionStatus, Store, StoreOps};
use crate::study::{self, Format, Selection, Study, StudyError, StudySession};
use crate::team::Target;

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Which sessions, from whichever database holds them (a study's must share one
    /// methodology).
    #[command(flatten)]
    pub choice: SessionChoice,
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
    /// Instead of the study: the persona × methodology table of the chosen simulated sessions
    /// (what `simulate --matrix` prints), from the database files; the sessions may use
    /// several methodologies. Formats md (the aligned table), csv and json.
    #[arg(long, conflicts_with = "cutoff")]
    pub personas: bool,
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
    let Some(selection) = args.choice.selection() else {
        return Err(CliError::Usage(
            "say which sessions to analyse: --concept ID, --sessions ID,... or --all".into(),
        ));
    };
    if args.personas {
        let runs = persona_runs(
            dir,
            databases,
            args.from.as_deref(),
            &selection,
            args.unfinished,
        )?;
        let text = render_runs(&runs, args.format)?;
        return match &args.output {
            Some(path) => {
                write_file(path, &text)?;
                eprintln!(
                    "wrote {} ({} simulated sessions)",
                    path.display(),
                    runs.len()
                );
                Ok(())
            }
            None => super::emit(out, &text),
        };
    }
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

/// The chosen sessions that `simulate` ran, summarised from their stored rows as the matrix
/// summarises them (from the files first, then the rows `sync` kept in the team database),
/// ordered by persona, methodology and session id.
fn persona_runs(
    dir: &ConfigDir,
    databases: &[PathBuf],
    from: Option<&str>,
    selection: &Selection,
    unfinished: bool,
) -> Result<Vec<RunSummary>, CliError> {
    let mut runs = file_persona_runs(dir, databases, selection, unfinished)?;
    if let Some(url) = from {
        let target = Target::parse(url).map_err(|e| team_error(&e))?;
        let rows = super::current_thread_runtime()?
            .block_on(async {
                let team = target.connect().await?;
                team.simulations(selection, unfinished).await
            })
            .map_err(|e| team_error(&e))?;
        for (id, json) in rows {
            if runs.iter().any(|r| r.session_id == id) {
                continue;
            }
            let run: RunSummary = serde_json::from_str(&json).map_err(|e| {
                CliError::Input(format!(
                    "{}: session {id}: its persona table row cannot be read: {e}",
                    target.display_url()
                ))
            })?;
            runs.push(run);
        }
    }
    if runs.is_empty() {
        return Err(CliError::Usage(
            "none of the chosen sessions was run by `simulate` (only simulated sessions have a \
             persona)"
                .into(),
        ));
    }
    runs.sort_by(|a, b| {
        (&a.persona, &a.methodology, &a.session_id).cmp(&(
            &b.persona,
            &b.methodology,
            &b.session_id,
        ))
    });
    Ok(runs)
}

/// The simulated sessions among the chosen ones in the database files.
fn file_persona_runs(
    dir: &ConfigDir,
    databases: &[PathBuf],
    selection: &Selection,
    unfinished: bool,
) -> Result<Vec<RunSummary>, CliError> {
    let mut methodologies = BTreeMap::new();
    let mut runs = Vec::new();
    for path in databases {
        if !path.is_file() {
            return Err(study_error(&StudyError::MissingDatabase(path.clone())));
        }
        let in_file =
            |e: crate::store::StoreError| CliError::Input(format!("{}: {e}", path.display()));
        let store = Store::open_read_only(path).map_err(in_file)?;
        for summary in store.list_sessions().map_err(in_file)? {
            let done = summary.status == SessionStatus::Finished;
            if !selection.takes(&summary.id, &summary.concept, done, unfinished)
                || runs.iter().any(|r: &RunSummary| r.session_id == summary.id)
            {
                continue;
            }
            let Some((persona, seed)) = store.session_persona(&summary.id).map_err(in_file)? else {
                continue;
            };
            if !methodologies.contains_key(&summary.methodology) {
                let loaded = dir.methodology(&summary.methodology, &Catalog)?;
                methodologies.insert(summary.methodology.clone(), loaded);
            }
            let Some(methodology) = methodologies.get(&summary.methodology) else {
                continue;
            };
            let run = crate::simulate::summarize(&store, &summary.id, methodology, &persona, seed)
                .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
            runs.push(run);
        }
    }
    Ok(runs)
}

/// The persona table in `format`: the matrix's aligned table, one CSV row per session, or the
/// summaries as JSON.
fn render_runs(runs: &[RunSummary], format: Format) -> Result<String, CliError> {
    match format {
        Format::Md => Ok(crate::simulate::comparison_table(runs)),
        Format::Json => serde_json::to_string_pretty(runs)
            .map(|text| text + "\n")
            .map_err(|e| CliError::Input(format!("cannot write the persona table: {e}"))),
        Format::Csv => runs_csv(runs)
            .map_err(|e| CliError::Input(format!("cannot write the persona table: {e}"))),
        Format::Mermaid | Format::Dot | Format::Graphml => {
            Err(CliError::Usage("--personas writes md, csv or json".into()))
        }
    }
}

fn runs_csv(runs: &[RunSummary]) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "persona",
        "methodology",
        "concept",
        "session",
        "seed",
        "finished",
        "turns",
        "nodes",
        "edges",
        "max_depth",
        "chain_completion",
        "slots",
        "unmapped",
        "ended_by",
        "tokens_in",
        "tokens_out",
        "cost_usd",
    ])?;
    for r in runs {
        writer.write_record([
            r.persona.clone(),
            r.methodology.clone(),
            r.concept.clone(),
            r.session_id.clone(),
            r.seed.to_string(),
            r.finished.to_string(),
            r.turns.to_string(),
            r.nodes.to_string(),
            r.edges.to_string(),
            r.max_depth.to_string(),
            format!("{:.3}", r.chain_completion),
            r.canonical_slots_active.to_string(),
            r.unmapped_nodes.to_string(),
            r.termination_reason.clone().unwrap_or_default(),
            r.usage.tokens_in.to_string(),
            r.usage.tokens_out.to_string(),
            r.usage
                .cost_usd
                .map(|c| format!("{c:.6}"))
                .unwrap_or_default(),
        ])?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
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
