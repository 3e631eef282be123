//! The `interviewer` command line: argument types and one module per subcommand.
//!
//! Every subcommand returns a [`CliError`] whose exit code tells configuration and usage
//! mistakes (2) and model failures (3) apart from other failures (1), and whose message names
//! the file and the place.

mod analyze;
mod check;
mod coach;
mod doctor;
mod export;
mod import;
mod interview;
mod models;
mod replay;
mod score;
mod sessions;
pub mod setup;
mod simulate;
mod sync;
mod transcribe;
mod tui;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::config::ConfigError;

#[derive(Debug, Parser)]
#[command(
    name = "interviewer",
    version,
    about = "Adaptive, knowledge-graph-based qualitative research interviews"
)]
pub struct Cli {
    /// Config directory (methodologies/, concepts/, personas/, prompts/).
    #[arg(long, global = true, env = crate::config::CONFIG_DIR_ENV, value_name = "DIR")]
    pub config_dir: Option<PathBuf>,
    /// Database file (default: the platform data directory's interviewer/interviewer.db);
    /// `analyze` takes it more than once to read several.
    #[arg(long, global = true, env = "INTERVIEWER_DB", value_name = "PATH", action = clap::ArgAction::Append)]
    pub db: Vec<PathBuf>,
    #[command(flatten)]
    pub llm: setup::LlmOptions,
    /// No subcommand opens the terminal app's start screen.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate configuration files and print a one-line summary per file.
    Check(check::CheckArgs),
    /// Score a methodology's strategies (and nodes) for given signals and print the decomposition.
    Score(score::ScoreArgs),
    /// List the interviews stored in the database, most recently active first.
    Sessions(sessions::SessionsArgs),
    /// Export a session as JSON, a scoring CSV, a graph file or a Markdown transcript.
    Export(export::ExportArgs),
    /// Score every stored turn of a session again under its own or an edited methodology
    /// (no model calls, the session unchanged) and say which decisions would change.
    Replay(replay::ReplayArgs),
    /// Analyse the interviews of a study together: codes across sessions, the implication
    /// matrix and its map, dominant chains, coverage; or the persona table of simulations.
    Analyze(analyze::AnalyzeArgs),
    /// Push sessions of the database file into the team's PostgreSQL database (only what is
    /// new since the last sync).
    Sync(sync::SyncArgs),
    /// Run an interview without the terminal UI, answers from a file or stdin.
    Interview(interview::InterviewArgs),
    /// Import transcripts of interviews people ran (text with speaker labels, `WebVTT`, SRT,
    /// this app's JSON export) as sessions of a concept: each answer runs through the
    /// pipeline, the interviewer's questions are kept, the engine's choice is recorded beside.
    Import(import::ImportArgs),
    /// Review an interviewer's questions beside the engine's choices, with the flags a
    /// training researcher raises (leading, double-barrelled, closed, missed rung, repeated)
    /// and the interviewer's talk share; one session or all of a concept's.
    Coach(coach::CoachArgs),
    /// Show each LLM role's provider, model and settings with their sources, and probe each
    /// provider with a one-token request.
    Doctor,
    /// Run interviews answered by a synthetic respondent (a persona); `--matrix` compares
    /// personas × methodologies.
    Simulate(simulate::SimulateArgs),
    /// Show, fetch and verify the model files of the embedder, the local LLM and speech.
    Models(models::ModelsArgs),
    /// Transcribe an audio file (WAV, MP3, Ogg Vorbis, FLAC, M4A) offline with Whisper
    /// (tiny.en by default).
    Transcribe(transcribe::TranscribeArgs),
    /// Start an interview in the terminal app.
    New(tui::NewArgs),
    /// Continue a stored interview in the terminal app.
    Resume(tui::ResumeArgs),
}

/// Output format of reporting commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Json,
    Table,
}

/// A failed command: what to print and which exit code to use.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Input(String),
    /// A model call failed or its reply broke the contract.
    #[error("{0}")]
    Llm(String),
    /// Problems were already printed (e.g. by `check`); only the exit code remains.
    #[error("{0}")]
    Reported(String),
}

impl CliError {
    /// 2 for configuration and usage errors, 3 for model failures, 1 otherwise.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Self::Config(_) | Self::Usage(_) | Self::Reported(_) => ExitCode::from(2),
            Self::Llm(_) => ExitCode::from(3),
            Self::Input(_) => ExitCode::from(1),
        }
    }
}

/// Runs a parsed command line, writing results to `out`.
pub fn run(cli: Cli, out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let dir = crate::config::ConfigDir::discover(cli.config_dir.as_deref());
    let Some(command) = cli.command else {
        return tui::run_start(&dir, &one_db(&cli.db)?, &cli.llm);
    };
    let db = || one_db(&cli.db);
    match command {
        Command::New(args) => tui::run_new(&dir, &db()?, &cli.llm, &args),
        Command::Resume(args) => tui::run_resume(&dir, &db()?, &cli.llm, &args),
        Command::Check(args) => check::run(&dir, &args, out),
        Command::Models(args) => models::run(&args, out),
        Command::Transcribe(args) => transcribe::run(&args, out),
        Command::Score(args) => score::run(&dir, &args, out),
        Command::Sessions(args) => sessions::run(&db()?, &args, out),
        Command::Export(args) => export::run(&db()?, &args, out),
        Command::Replay(args) => replay::run(&dir, &db()?, &args, out),
        Command::Doctor => doctor::run(&dir, &cli.llm, out),
        Command::Sync(args) => sync::run(&dir, &db()?, &args, out),
        Command::Analyze(args) => {
            // The team database alone, unless files are named as well.
            let databases = if cli.db.is_empty() && args.from.is_none() {
                vec![crate::store::default_path()]
            } else {
                cli.db.clone()
            };
            analyze::run(&dir, &databases, &args, out)
        }
        Command::Simulate(args) => simulate::run(&dir, &db()?, &cli.llm, &args, out),
        Command::Interview(args) => interview::run(&dir, &db()?, &cli.llm, &args, out),
        Command::Import(args) => import::run(&dir, &db()?, &cli.llm, &args, out),
        Command::Coach(args) => coach::run(&dir, &db()?, &args, out),
    }
}

/// The one database a command other than `analyze` reads: the `--db` given, or the default.
fn one_db(given: &[PathBuf]) -> Result<PathBuf, CliError> {
    match given {
        [] => Ok(crate::store::default_path()),
        [one] => Ok(one.clone()),
        many => Err(CliError::Usage(format!(
            "--db was given {} times; only `analyze` reads several databases",
            many.len()
        ))),
    }
}

/// A runtime on this thread for a command's network calls.
fn current_thread_runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Input(format!("cannot start the async runtime: {e}")))
}

// Which stored sessions a command takes: named ones, a concept's, or all. (A plain comment:
// clap would make a doc comment the help text of every command that flattens this.)
#[derive(Debug, Clone, clap::Args)]
pub struct SessionChoice {
    /// These sessions (full ids, comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ID,...", conflicts_with_all = ["concept", "all"])]
    pub sessions: Vec<String>,
    /// Every session of this concept.
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    pub concept: Option<String>,
    /// Every session.
    #[arg(long)]
    pub all: bool,
}

impl SessionChoice {
    /// The sessions chosen; `None` when the command line named none.
    pub fn selection(&self) -> Option<crate::study::Selection> {
        use crate::study::Selection;
        match (&self.concept, self.all, self.sessions.is_empty()) {
            (Some(concept), _, _) => Some(Selection::Concept(concept.clone())),
            (None, true, _) => Some(Selection::All),
            (None, false, false) => Some(Selection::Ids(self.sessions.clone())),
            (None, false, true) => None,
        }
    }
}

/// Writes to the output, mapping a closed pipe or full disk to an input error.
fn emit(out: &mut dyn std::io::Write, text: &str) -> Result<(), CliError> {
    out.write_all(text.as_bytes())
        .map_err(|e| CliError::Input(format!("cannot write output: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use clap::Parser;

    use super::*;
    use crate::domain::Understanding;

    #[test]
    fn understanding_is_a_flag_of_every_interview_command_and_the_start_screen() {
        for args in [
            &["interviewer", "--understanding", "offline"][..],
            &[
                "interviewer",
                "new",
                "--concept",
                "oat_milk",
                "--understanding",
                "offline",
            ],
            &[
                "interviewer",
                "interview",
                "-c",
                "oat_milk",
                "-a",
                "-",
                "--understanding",
                "offline",
            ],
            &[
                "interviewer",
                "simulate",
                "-c",
                "oat_milk",
                "-p",
                "brief",
                "--understanding",
                "offline",
            ],
            &["interviewer", "--understanding", "OFFLINE", "doctor"],
        ] {
            let cli = Cli::try_parse_from(args).unwrap();
            assert_eq!(
                cli.llm.understanding,
                Some(Understanding::Offline),
                "{args:?}"
            );
        }
        let cli = Cli::try_parse_from(["interviewer", "new", "-c", "x"]).unwrap();
        assert_eq!(cli.llm.understanding, None);
    }

    #[test]
    fn a_bad_understanding_is_a_usage_error_naming_the_allowed_values() {
        let err = Cli::try_parse_from([
            "interviewer",
            "interview",
            "--concept",
            "oat_milk",
            "--answers",
            "-",
            "--understanding",
            "bogus",
        ])
        .unwrap_err();
        assert_eq!(err.exit_code(), 2, "usage errors exit with 2");
        let message = err.to_string();
        assert!(
            message.contains("--understanding")
                && message.contains("'bogus' is not an understanding mode (allowed: llm, offline)"),
            "{message}"
        );
    }

    #[test]
    fn none_is_a_provider_name_the_flag_accepts() {
        let cli = Cli::try_parse_from(["interviewer", "--provider", "none", "doctor"]).unwrap();
        assert_eq!(cli.llm.provider.as_deref(), Some("none"));
        assert!(crate::llm::config::Preset::find("none").is_some());
    }
}
