//! The terminal app's commands: `interviewer new`, `interviewer resume` and `interviewer` with
//! no subcommand (the start screen).
//!
//! Models and the session are opened before the terminal is taken over where possible, so a
//! configuration or model error prints as a normal command error. Logs go to the file logger
//! `main` installs ([`crate::logging`]); nothing is printed while the app runs.

use std::path::Path;

use clap::Args;

use super::CliError;
use super::interview::DEFAULT_MAX_TURNS;
use super::setup::{
    LlmOptions, Resume, SessionChoice, StageFlags, open_interview, open_resolved, prepare,
    resolve_session,
};
use crate::config::{ConfigDir, FileKind};
use crate::domain::Understanding;
use crate::pipeline::Interview;
use crate::session::SessionHandle;
use crate::store::{Store, StoreOps};
use crate::tui::{ConceptEntry, Mode, StartChoice, StartScreen, Theme, TuiError};

#[derive(Debug, Args)]
pub struct NewArgs {
    /// Concept: an id from the config directory or a path to a concept YAML file.
    #[arg(long, short = 'c')]
    pub concept: String,
    /// Methodology: an id or a YAML path (default: the concept's methodology).
    #[arg(long, short = 'm')]
    pub methodology: Option<String>,
    /// Maximum number of turns.
    #[arg(long, default_value_t = DEFAULT_MAX_TURNS, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub max_turns: u32,
    /// A researcher conducts the interview: questions are proposals to accept, edit or
    /// regenerate, and the researcher types the respondent's answers.
    #[arg(long)]
    pub moderator: bool,
    /// Read each question aloud (`audio.speak`, else spd-say, espeak-ng or say): with F2 for
    /// the answers, a voice interview.
    #[arg(long)]
    pub speak: bool,
    /// Keep the recording of each answer heard with F2 beside the database
    /// (`<db>.audio/<session>/turn-NN.wav`, files 0600), named in the JSON export and deleted
    /// with the session.
    #[arg(long)]
    pub keep_audio: bool,
    #[command(flatten)]
    pub stages: StageFlags,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The session id (see `interviewer sessions`), or `latest`.
    #[arg(value_name = "SESSION_ID|latest")]
    pub id: String,
    /// Continue in moderator mode.
    #[arg(long)]
    pub moderator: bool,
    /// Read each question aloud (`audio.speak`, else spd-say, espeak-ng or say): with F2 for
    /// the answers, a voice interview.
    #[arg(long)]
    pub speak: bool,
    /// Keep the recording of each answer heard with F2 beside the database
    /// (`<db>.audio/<session>/turn-NN.wav`, files 0600), named in the JSON export and deleted
    /// with the session.
    #[arg(long)]
    pub keep_audio: bool,
    #[command(flatten)]
    pub stages: StageFlags,
}

fn mode(moderator: bool) -> Mode {
    if moderator {
        Mode::Moderator
    } else {
        Mode::Respondent
    }
}

/// The app's error as a command error; `session` is the interview it ran, when known, for
/// the hint after a stop signal.
fn tui_error(e: &TuiError, session: Option<&str>) -> CliError {
    match (e, session) {
        (TuiError::Stopped { .. }, Some(id)) => CliError::Input(format!(
            "{e}; session {id} is saved at its last checkpoint: `interviewer resume {id}` \
             continues it"
        )),
        (TuiError::Stopped { .. }, None) => CliError::Input(format!(
            "{e}; a session in progress is saved at its last checkpoint (`interviewer sessions` \
             lists it)"
        )),
        _ => CliError::Input(e.to_string()),
    }
}

/// Checked before anything is opened, so a run without a terminal stores nothing.
fn require_terminal() -> Result<(), CliError> {
    crate::tui::require_terminal().map_err(|e| {
        CliError::Usage(format!(
            "{e}; without one, `interviewer interview --answers FILE` (or `-` for standard \
             input) runs the interview headless"
        ))
    })
}

/// `interviewer new`: a new interview straight into the app.
pub fn run_new(
    dir: &ConfigDir,
    db: &Path,
    llm: &LlmOptions,
    args: &NewArgs,
) -> Result<(), CliError> {
    require_terminal()?;
    let choice = SessionChoice {
        concept: Some(args.concept.clone()),
        methodology: args.methodology.clone(),
        max_turns: args.max_turns,
        resume: None,
        understanding: Understanding::default(),
    };
    // Everything that needs no model first, so a mistake is reported before any download.
    let resolved = resolve_session(dir, db, &choice)?;
    let mut listen = super::setup::listen_config(llm, Some(resolved.concept()))?;
    let prepared = prepare(dir, llm, args.stages)?;
    let interview = open_resolved(resolved, db, prepared.understanding, prepared.services)?;
    let id = interview.session_id().to_owned();
    if args.keep_audio {
        listen.keep = Some(crate::speech::kept_audio_dir(db, &id));
    }
    let session = spawn(interview)?;
    let voice = super::setup::voice(llm, args.speak)?;
    crate::tui::run_interview(session, mode(args.moderator), Some(listen), voice)
        .map_err(|e| tui_error(&e, Some(&id)))
}

/// `interviewer resume ID`: a stored session in the app.
pub fn run_resume(
    dir: &ConfigDir,
    db: &Path,
    llm: &LlmOptions,
    args: &ResumeArgs,
) -> Result<(), CliError> {
    require_terminal()?;
    // A resumed session keeps the mode it was created with; the one passed is not used.
    let choice = SessionChoice {
        concept: None,
        methodology: None,
        max_turns: DEFAULT_MAX_TURNS,
        resume: Some(Resume {
            typed: args.id.clone(),
            argument: "",
        }),
        understanding: Understanding::default(),
    };
    let resolved = resolve_session(dir, db, &choice)?;
    let mut listen = super::setup::listen_config(llm, Some(resolved.concept()))?;
    let prepared = prepare(dir, llm, args.stages)?;
    let interview = open_resolved(resolved, db, prepared.understanding, prepared.services)?;
    let id = interview.session_id().to_owned();
    if args.keep_audio {
        listen.keep = Some(crate::speech::kept_audio_dir(db, &id));
    }
    let session = spawn(interview)?;
    let voice = super::setup::voice(llm, args.speak)?;
    crate::tui::run_interview(session, mode(args.moderator), Some(listen), voice)
        .map_err(|e| tui_error(&e, Some(&id)))
}

/// `interview` on its session thread, for the app to show.
fn spawn(interview: Interview) -> Result<SessionHandle, CliError> {
    crate::session::spawn(interview).map_err(|e| CliError::Input(e.to_string()))
}

/// `interviewer`: the start screen, then the chosen interview.
pub fn run_start(dir: &ConfigDir, db: &Path, llm: &LlmOptions) -> Result<(), CliError> {
    require_terminal()?;
    let screen = start_screen(dir, db)?;
    let listen = super::setup::listen_config(llm, None)?;
    let open = |choice: &StartChoice| {
        prepare(dir, llm, StageFlags::default())
            .and_then(|prepared| {
                let session = SessionChoice {
                    concept: choice.concept.clone(),
                    methodology: choice.methodology.clone(),
                    max_turns: choice.max_turns,
                    resume: choice.resume.clone().map(|typed| Resume {
                        typed,
                        argument: "",
                    }),
                    understanding: prepared.understanding,
                };
                open_interview(dir, db, &session, prepared.services)
            })
            .and_then(spawn)
            .map(|session| (session, mode(choice.moderator)))
            .map_err(|e| e.to_string())
    };
    let analyse = |concept: &str| {
        let selection = crate::study::Selection::Concept(concept.to_owned());
        super::analyze::analyse(dir, &[db.to_path_buf()], &selection, false, None)
            .map_err(|e| e.to_string())
    };
    crate::tui::run_start(screen, open, analyse, Some(listen)).map_err(|e| tui_error(&e, None))
}

/// The concepts of the config directory and the stored sessions.
fn start_screen(dir: &ConfigDir, db: &Path) -> Result<StartScreen, CliError> {
    let mut concepts = Vec::new();
    for id in dir.ids(FileKind::Concept) {
        match dir.concept(&id) {
            Ok(c) => concepts.push(ConceptEntry {
                id: c.id,
                name: c.name,
                methodology: c.methodology,
            }),
            // A broken file is `interviewer check`'s to report; the rest stay usable.
            Err(e) => tracing::warn!("concept {id} left off the start screen: {e}"),
        }
    }
    let store = Store::open(db).map_err(|e| CliError::Input(e.to_string()))?;
    let sessions = store
        .list_sessions()
        .map_err(|e| CliError::Input(e.to_string()))?;
    // The app opens its own handle (and takes the session lock) once a session is chosen.
    drop(store);
    Ok(StartScreen::new(
        concepts,
        dir.ids(FileKind::Methodology),
        sessions,
        DEFAULT_MAX_TURNS,
        Theme::from_env(),
    ))
}
