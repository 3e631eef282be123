//! `interviewer import FILE...`: transcripts of interviews people ran, as sessions of a concept
//! (see [`crate::import`]).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::setup::{LlmOptions, SessionChoice, StageFlags, embedder, llm_config, router_for};
use super::{CliError, emit};
use crate::config::ConfigDir;
use crate::import::{Format, ImportOptions, Imported, ReadTranscript};
use crate::pipeline::Services;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Transcript files: plain text with speaker labels, `WebVTT`, SRT, or this app's JSON
    /// export.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The concept the interviews were about (id or file).
    #[arg(long, value_name = "ID|PATH")]
    pub concept: String,
    /// Methodology to analyse them with (default: the concept's).
    #[arg(long, value_name = "ID|PATH")]
    pub methodology: Option<String>,
    /// How to read the files (default: from the extension and the first lines).
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// The interviewer's speaker label (default: a label naming the role, else the speaker
    /// who asks the most questions, else the first speaker).
    #[arg(long, value_name = "NAME")]
    pub interviewer: Option<String>,
    /// The respondent's speaker label (needed when more than two people speak).
    #[arg(long, value_name = "NAME")]
    pub respondent: Option<String>,
    /// Import a file again that was imported before (its session is replaced).
    #[arg(long)]
    pub replace: bool,
}

pub fn run(
    dir: &ConfigDir,
    db: &std::path::Path,
    llm: &LlmOptions,
    args: &ImportArgs,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let choice = SessionChoice {
        concept: Some(args.concept.clone()),
        methodology: args.methodology.clone(),
        ..SessionChoice::default()
    };
    let spec = super::setup::resolve_session(dir, db, &choice)?.into_spec();
    // Every file is checked before any model loads or anything is stored.
    let (ready, mut failed) = check_files(args);
    for problem in &failed {
        eprintln!("error: {problem}");
    }
    if ready.is_empty() {
        return Err(CliError::Input(format!(
            "nothing imported: {} of {} files could not be read",
            failed.len(),
            args.files.len()
        )));
    }
    let mut config = llm_config(dir, llm)?;
    config.template_questions("import");
    let understanding = config.understanding.value;
    let services = Services {
        llm: std::sync::Arc::new(router_for(&config)?),
        embedder: embedder()?,
        settings: StageFlags::default().settings(),
    };
    let spec = crate::pipeline::InterviewSpec {
        understanding,
        ..spec
    };
    let bar = if ready.len() > 1 && std::io::stderr().is_terminal() {
        ProgressBar::new(ready.len() as u64).with_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} transcripts {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        )
    } else {
        ProgressBar::hidden()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Input(format!("cannot start the runtime: {e}")))?;
    let options = ImportOptions {
        replace: args.replace,
    };
    let (mut imported, mut skipped) = (0, 0);
    for (path, read) in &ready {
        bar.set_message(path.display().to_string());
        let result = runtime.block_on(crate::import::import_file(
            db,
            path,
            read,
            spec.clone(),
            services.clone(),
            options,
        ));
        bar.inc(1);
        let line = match result {
            Ok(Imported::New {
                session_id,
                exchanges,
                replaced,
            }) => {
                imported += 1;
                imported_line(path, &read.transcript, &session_id, exchanges, replaced)
            }
            Ok(Imported::AlreadyImported { session_id }) => {
                skipped += 1;
                format!(
                    "{}: already imported as session {session_id} (unchanged; --replace imports \
                     it again)\n",
                    path.display()
                )
            }
            Err(e) => {
                failed.push(e.to_string());
                bar.suspend(|| eprintln!("error: {e}"));
                continue;
            }
        };
        bar.suspend(|| emit(out, &line))?;
    }
    bar.finish_and_clear();
    let summary = format!(
        "{imported} imported, {skipped} already imported, {} failed\n",
        failed.len()
    );
    emit(out, &summary)?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::Input(format!(
            "{} of {} files were not imported (see above); nothing of them was stored",
            failed.len(),
            args.files.len()
        )))
    }
}

/// Reads and checks every file: those ready to import, and the problems of the others.
fn check_files(args: &ImportArgs) -> (Vec<(PathBuf, ReadTranscript)>, Vec<String>) {
    let mut failed = Vec::new();
    let mut ready = Vec::new();
    for path in &args.files {
        match crate::import::read(
            path,
            args.format,
            args.interviewer.as_deref(),
            args.respondent.as_deref(),
        ) {
            Ok(read) => ready.push((path.clone(), read)),
            Err(e) => failed.push(e.to_string()),
        }
    }
    (ready, failed)
}

/// The line printed for a file imported as a new session.
fn imported_line(
    path: &std::path::Path,
    t: &crate::import::Transcript,
    session_id: &str,
    exchanges: usize,
    replaced: Option<String>,
) -> String {
    let replaced = replaced
        .map(|old| format!(", replacing session {old}"))
        .unwrap_or_default();
    let others = if t.roles.others_left_out > 0 {
        format!(
            "; {} turns of other speakers left out",
            t.roles.others_left_out
        )
    } else {
        String::new()
    };
    format!(
        "{}: session {session_id} ({exchanges} answers, {}; interviewer {:?}: {}; respondent \
         {:?}{others}{replaced})\n",
        path.display(),
        t.format,
        t.roles.interviewer,
        t.roles.how,
        t.roles.respondent,
    )
}
