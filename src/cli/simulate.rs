//! `interviewer simulate`: interviews answered by a synthetic respondent (a persona), one at a
//! time or as a matrix of personas × methodologies.
//!
//! One run shows a progress bar on stderr (turn, stage, nodes) and prints its summary on
//! stdout; `--matrix` runs every combination with `--jobs` at a time, one bar per run, and
//! prints a comparison table. Session ids come from the seed and the run's parameters, so
//! running the same command again resumes an interrupted run and skips a finished one; a
//! matrix also keeps a manifest (see [`crate::simulate::matrix`]). `--out DIR` writes every
//! export of each finished run.

mod matrix;

use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::ProgressBar;

use super::setup::{LlmOptions, Prepared, StageFlags, prepare};
use super::{CliError, emit};
use crate::config::{Concept, ConfigDir, Methodology, Persona};
use crate::domain::Understanding;
use crate::llm::Role;
use crate::pipeline::{InterviewSpec, Services};
use crate::signals::Catalog;
use crate::simulate::matrix::{MatrixError, MatrixSpec};
use crate::simulate::{
    RunProgress, RunReport, SimulationError, SimulationSpec, progress_style, render_summary,
    run_one, session_id,
};
use crate::store::Store;
use crate::tui::SessionInfo;

/// Turns a simulation runs when `--turns` is not given: the length of seed 000's example
/// simulation (Path 18 sizes its CSV on "a 10-turn simulation").
pub const DEFAULT_TURNS: u32 = 10;
/// Matrix runs at once when `--jobs` is not given: two keeps a laptop responsive while model
/// calls of one run overlap the local work of the other.
pub const DEFAULT_JOBS: u16 = 2;

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Concept: an id from the config directory or a path to a concept YAML file.
    #[arg(long, short = 'c')]
    pub concept: String,
    /// Persona: an id from the config directory or a path to a persona YAML file.
    #[arg(
        long,
        short = 'p',
        required_unless_present = "matrix",
        conflicts_with = "matrix"
    )]
    pub persona: Option<String>,
    /// Methodology: an id or a YAML path (default: the concept's methodology).
    #[arg(long, short = 'm')]
    pub methodology: Option<String>,
    /// Maximum number of turns.
    #[arg(long, default_value_t = DEFAULT_TURNS, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub turns: u32,
    /// Seed of every random choice; the same seed and parameters give the same session.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write every export of each finished run into this directory (a matrix: one
    /// subdirectory per run, plus its manifest).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Show the run live in the terminal UI's panels instead of a progress bar.
    #[arg(long, conflicts_with = "matrix")]
    pub watch: bool,
    /// Run every combination: `personas=a,b,c` and optionally `methodologies=x,y`.
    #[arg(long, num_args = 1.., value_name = "KEY=A,B")]
    pub matrix: Option<Vec<String>>,
    /// Matrix runs at once.
    #[arg(long, default_value_t = DEFAULT_JOBS, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub jobs: u16,
    #[command(flatten)]
    pub stages: StageFlags,
}

pub fn run(
    dir: &ConfigDir,
    db: &Path,
    llm: &LlmOptions,
    args: &SimulateArgs,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    if args.watch {
        return watch(dir, db, llm, args, out);
    }
    let concept = dir.concept(&args.concept)?;
    if let Some(matrix) = &args.matrix {
        let spec = MatrixSpec::parse(matrix).map_err(matrix_error)?;
        let prepared = prepare_simulation(dir, llm, args)?;
        let cells = matrix::matrix_cells(dir, args, &concept, &spec, prepared.understanding)?;
        return matrix::run_matrix(db, args, cells, &prepared.services, out);
    }
    let prepared = prepare_simulation(dir, llm, args)?;
    let spec = single_spec(dir, args, &concept, prepared.understanding)?;
    run_single(db, args, &spec, &prepared.services, out)
}

/// The services of a simulation: as an interview's, and the respondent needs a model.
fn prepare_simulation(
    dir: &ConfigDir,
    llm: &LlmOptions,
    args: &SimulateArgs,
) -> Result<Prepared, CliError> {
    let prepared = prepare(dir, llm, args.stages)?;
    if prepared.services.llm.is_modelless(Role::Respondent) {
        return Err(CliError::Usage(
            "simulate needs a model for the respondent role, which uses the none provider; \
             set LLM_RESPONDENT_PROVIDER (or roles.respondent in the settings file) to a \
             provider with a model"
                .to_owned(),
        ));
    }
    Ok(prepared)
}

/// `--watch`: the same run as [`run_single`], shown in the terminal UI's panels instead of a
/// progress bar. The run goes on on a worker thread and feeds the app its events; quitting
/// the app leaves the session at its last checkpoint (run the same command to resume).
fn watch(
    dir: &ConfigDir,
    db: &Path,
    llm: &LlmOptions,
    args: &SimulateArgs,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    crate::tui::require_terminal()
        .map_err(|e| CliError::Usage(format!("{e}; without --watch the run needs none")))?;
    let concept = dir.concept(&args.concept)?;
    let Prepared {
        services,
        understanding,
    } = prepare_simulation(dir, llm, args)?;
    let spec = single_spec(dir, args, &concept, understanding)?;
    let id = session_id(&spec, &services.settings);
    let info = SessionInfo::of_spec(&id, &spec.interview, &services.llm);
    let (tx, feed) = crate::session::SessionFeed::channel();
    let worker = {
        let (db, id) = (db.to_path_buf(), id.clone());
        std::thread::Builder::new()
            .name("simulation".to_owned())
            .spawn(move || {
                // A closed app only means nobody is watching any more.
                run_one(&db, &spec, &services, &id, |e| tx.send(e))
            })
            .map_err(|e| CliError::Input(format!("cannot start the simulation: {e}")))?
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Input(format!("cannot start the async runtime: {e}")))?;
    let watched = runtime.block_on(crate::tui::watch(info, feed, None));
    if let Err(e @ crate::tui::TuiError::Stopped { .. }) = &watched {
        return Err(CliError::Input(format!(
            "{e}; session {id} is saved at its last checkpoint: run the same command to resume it"
        )));
    }
    watched.map_err(|e| CliError::Input(e.to_string()))?;
    if !worker.is_finished() {
        eprintln!("session {id} stopped at its last checkpoint; run the same command to resume it");
        return Ok(());
    }
    let report = worker
        .join()
        .map_err(|_| CliError::Input("the simulation thread stopped unexpectedly".to_owned()))?
        .map_err(|e| simulation_error(&id, &e))?;
    if let Some(dir) = &args.out {
        eprintln!("{}", write_exports(db, &id, dir)?);
    }
    emit(out, &render_summary(&report.summary))
}

fn single_spec(
    dir: &ConfigDir,
    args: &SimulateArgs,
    concept: &Concept,
    understanding: Understanding,
) -> Result<SimulationSpec, CliError> {
    let persona_ref = args
        .persona
        .as_deref()
        .ok_or_else(|| CliError::Usage("--persona is required without --matrix".to_owned()))?;
    let persona = dir.persona(persona_ref)?;
    let methodology = dir.methodology(
        args.methodology
            .as_deref()
            .unwrap_or(concept.methodology.as_str()),
        &Catalog,
    )?;
    spec_for(dir, args, concept, methodology, persona, understanding)
}

fn spec_for(
    dir: &ConfigDir,
    args: &SimulateArgs,
    concept: &Concept,
    methodology: Methodology,
    persona: Persona,
    understanding: Understanding,
) -> Result<SimulationSpec, CliError> {
    Ok(SimulationSpec {
        interview: InterviewSpec {
            methodology,
            concept: concept.clone(),
            rubrics: dir.rubrics()?,
            max_turns: args.turns,
            understanding,
        },
        persona,
        seed: args.seed,
    })
}

fn run_single(
    db: &Path,
    args: &SimulateArgs,
    spec: &SimulationSpec,
    services: &Services,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let id = session_id(spec, &services.settings);
    eprintln!(
        "session {id}: {} × {} on {}, seed {} (run the same command again to resume it)",
        spec.persona.id,
        spec.interview.methodology.method.name,
        spec.interview.concept.id,
        spec.seed
    );
    let mut progress = RunProgress::new(new_bar(spec, &label(spec)));
    let report = run_one(db, spec, services, &id, |e| {
        if let Some(e) = e.pipeline() {
            progress.observe(e);
        }
    });
    finish_bar(&progress, &report);
    let report = report.map_err(|e| simulation_error(&id, &e))?;
    if report.already_finished {
        eprintln!(
            "session {id} had already finished; showing its summary (another --seed starts a new run)"
        );
    }
    if let Some(dir) = &args.out {
        eprintln!("{}", write_exports(db, &id, dir)?);
    }
    emit(out, &render_summary(&report.summary))
}

fn label(spec: &SimulationSpec) -> String {
    format!(
        "{} × {}",
        spec.persona.id, spec.interview.methodology.method.name
    )
}

fn new_bar(spec: &SimulationSpec, label: &str) -> ProgressBar {
    ProgressBar::new(u64::from(spec.interview.max_turns))
        .with_style(progress_style())
        .with_prefix(label.to_owned())
}

fn finish_bar(progress: &RunProgress, report: &Result<RunReport, SimulationError>) {
    let message = match report {
        Ok(r) if r.already_finished => "finished earlier".to_owned(),
        Ok(r) => format!(
            "{} after {} turns · {} nodes",
            r.summary.termination_reason.as_deref().unwrap_or("stopped"),
            r.summary.turns,
            r.summary.nodes
        ),
        Err(_) => format!("failed: {}", progress.message()),
    };
    progress.finish(&message);
}

/// Writes every export of session `id` into `dir`; returns a line saying so.
fn write_exports(db: &Path, id: &str, dir: &Path) -> Result<String, CliError> {
    let store = Store::open(db).map_err(|e| CliError::Input(e.to_string()))?;
    let files = crate::export::write_all(&store, id, dir)
        .map_err(|e| CliError::Input(format!("exporting session {id}: {e}")))?;
    Ok(format!(
        "{id}: {} files written to {}",
        files.len(),
        dir.display()
    ))
}

/// A failed simulation as a command failure: config (2), model (3), anything else (1).
fn simulation_error(id: &str, e: &SimulationError) -> CliError {
    let message = format!("{e}");
    match e {
        SimulationError::Pipeline(crate::pipeline::PipelineError::Config(c)) => {
            CliError::Usage(c.to_string())
        }
        SimulationError::Mismatch { .. } => CliError::Usage(message),
        e if e.is_llm() => CliError::Llm(format!(
            "{message}; run the same command again to resume session {id}"
        )),
        _ => CliError::Input(message),
    }
}

fn matrix_error(e: MatrixError) -> CliError {
    match e {
        MatrixError::Spec(_) => CliError::Usage(e.to_string()),
        e => CliError::Input(e.to_string()),
    }
}
