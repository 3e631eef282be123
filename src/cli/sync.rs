//! `interviewer sync`: push sessions of the local database file into the team's PostgreSQL
//! database (see [`crate::team`]) and say what was pushed and what was already there.
//!
//! For resume tests, `INTERVIEWER_SYNC_CRASH_AT=<n>:<before|after>` ends the process at once
//! (no rollback, no summary: the server sees the connection drop, as after a kill) just before
//! or just after the commit of the n-th session it writes.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, SessionChoice, emit};
use crate::config::ConfigDir;
use crate::signals::Catalog;
use crate::store::{SessionSummary, StoreOps};
use crate::study::Selection;
use crate::team::{LocalFile, Origin, Pushed, Target, TeamDb, TeamError, Watermark};

/// The crash switch's environment variable (tests only).
pub const SYNC_CRASH_ENV: &str = "INTERVIEWER_SYNC_CRASH_AT";

/// Exit code of a sync the crash switch stopped: that of a process killed by SIGKILL.
const CRASH_EXIT: i32 = 137;

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The team database: `postgresql://USER@HOST[:PORT]/DB[?sslmode=…]`; the password from
    /// PGPASSWORD or ~/.pgpass.
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// Which sessions of the file (all of them when none is named).
    #[command(flatten)]
    pub choice: SessionChoice,
    /// Who interviewed, recorded with each session (default: the OS user).
    #[arg(long, value_name = "NAME")]
    pub interviewer: Option<String>,
}

/// How a sync went.
#[derive(Debug, Default)]
struct Tally {
    written: u32,
    up_to_date: u32,
    team_newer: Vec<String>,
}

pub fn run(
    dir: &ConfigDir,
    db: &Path,
    args: &SyncArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let selection = args.choice.selection().unwrap_or(Selection::All);
    if args
        .interviewer
        .as_deref()
        .is_some_and(|n| n.trim().is_empty())
    {
        return Err(CliError::Usage("--interviewer needs a name".into()));
    }
    let crash = crash_switch()?;
    let target = Target::parse(&args.to).map_err(|e| team_error(&e))?;
    for warning in &target.warnings {
        eprintln!("warning: {warning}");
    }
    let file = LocalFile::open(db, &selection).map_err(|e| team_error(&e))?;
    let origin = Origin::here(args.interviewer.as_deref());
    let runtime = super::current_thread_runtime()?;
    let tally = runtime
        .block_on(push_all(dir, &target, &file, &origin, crash))
        .map_err(|e| team_error(&e))?;
    emit(out, &summary(&tally, &target, &origin))
}

async fn push_all(
    dir: &ConfigDir,
    target: &Target,
    file: &LocalFile,
    origin: &Origin,
    crash: Option<(u32, bool)>,
) -> Result<Tally, TeamError> {
    let mut team: TeamDb = target.connect().await?;
    let applied = team.migrate().await?;
    if !applied.is_empty() {
        eprintln!(
            "team database {}: schema migrated to version {}",
            team.url(),
            applied.last().copied().unwrap_or_default()
        );
    }
    let marks = team.watermarks().await?;
    let mut tally = Tally::default();
    for summary in &file.sessions {
        let next = tally.written + 1;
        let before = || {
            if crash == Some((next, true)) {
                crash_now();
            }
        };
        let mark = marks.get(&summary.id);
        // Only a session the team lacks or has older is read from the file.
        let simulation = if mark == Some(&Watermark::of(summary)) {
            None
        } else {
            simulation_row(dir, file, summary)?
        };
        match team
            .push(file, summary, mark, origin, simulation.as_deref(), before)
            .await?
        {
            Pushed::Written => {
                tally.written = next;
                if crash == Some((next, false)) {
                    crash_now();
                }
            }
            Pushed::UpToDate => tally.up_to_date += 1,
            Pushed::TeamNewer => tally.team_newer.push(summary.id.clone()),
        }
    }
    Ok(tally)
}

/// The persona table's row of a session that `simulate` ran (`analyze --personas`), as JSON;
/// `None` for a person's interview.
fn simulation_row(
    dir: &ConfigDir,
    file: &LocalFile,
    summary: &SessionSummary,
) -> Result<Option<String>, TeamError> {
    let local = |reason: String| TeamError::Local {
        path: file.path().to_owned(),
        reason: format!("session {}: {reason}", summary.id),
    };
    let store = file.store();
    let Some((persona, seed)) = store
        .session_persona(&summary.id)
        .map_err(|e| local(e.to_string()))?
    else {
        return Ok(None);
    };
    let methodology = dir
        .methodology(&summary.methodology, &Catalog)
        .map_err(|e| local(e.to_string()))?;
    let run = crate::simulate::summarize(store, &summary.id, &methodology, &persona, seed)
        .map_err(|e| local(e.to_string()))?;
    serde_json::to_string(&run)
        .map(Some)
        .map_err(|e| local(e.to_string()))
}

/// `pushed 2 sessions to URL as NAME from MACHINE; 4 up to date` and the sessions kept.
fn summary(tally: &Tally, target: &Target, origin: &Origin) -> String {
    let sessions = |n: u32| if n == 1 { "session" } else { "sessions" };
    let mut text = if tally.written == 0 {
        format!(
            "nothing to push to {}: {} {} up to date",
            target.display_url(),
            tally.up_to_date,
            sessions(tally.up_to_date)
        )
    } else {
        format!(
            "pushed {} {} to {} as {} from {}; {} up to date",
            tally.written,
            sessions(tally.written),
            target.display_url(),
            origin.interviewer,
            origin.machine,
            tally.up_to_date
        )
    };
    text.push('\n');
    for id in &tally.team_newer {
        text.push_str(&format!(
            "kept the team's copy of {id}: it is newer than this file's\n"
        ));
    }
    text
}

/// Ends the process where it stands (no destructor runs, no transaction is ended).
fn crash_now() -> ! {
    eprintln!("{SYNC_CRASH_ENV}: stopping here");
    std::process::exit(CRASH_EXIT)
}

/// The crash switch, if set: which written session and whether before its commit.
fn crash_switch() -> Result<Option<(u32, bool)>, CliError> {
    let Ok(value) = std::env::var(SYNC_CRASH_ENV) else {
        return Ok(None);
    };
    let parsed = value.split_once(':').and_then(|(n, when)| {
        let n = n.parse::<u32>().ok().filter(|n| *n > 0)?;
        match when {
            "before" => Some((n, true)),
            "after" => Some((n, false)),
            _ => None,
        }
    });
    parsed.map(Some).ok_or_else(|| {
        CliError::Usage(format!(
            "{SYNC_CRASH_ENV}='{value}' is not <n>:<before|after> (n from 1)"
        ))
    })
}

/// A team database failure as the command reports it: a bad URL is a usage error.
pub(super) fn team_error(e: &TeamError) -> CliError {
    match e {
        TeamError::BadUrl { .. } => CliError::Usage(e.to_string()),
        _ => CliError::Input(e.to_string()),
    }
}
