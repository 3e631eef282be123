//! `interviewer sessions`: list the stored interviews (most recently active first), show one
//! in detail, or delete one.
//!
//! `delete` removes the session's rows (everything cascades from the session) and its audit
//! trail file. It asks for confirmation on a terminal; `--yes` skips the question, and without
//! a terminal it refuses unless `--yes` is given, so a script never deletes by accident.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use clap::{Args, Subcommand};

use super::export::{open_existing, open_for_reading};
use super::sync::team_error;
use super::{CliError, emit};
use crate::audit::AuditTrail;
use crate::export::{SessionData, usage_by};
use crate::graph::records::SlotStatus;
use crate::store::{SessionRecord, StoreError, StoreOps, UsageTotals};
use crate::team::Target;

/// How many of the latest turns `show` lists with their strategy and focus.
///
/// The seed's strategy history window (000 Path 4) is five turns: the span the repetition
/// signals look at, so the same span explains the next choice.
const LAST_STRATEGIES: usize = 5;

#[derive(Debug, Default, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub command: Option<SessionsCommand>,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List the sessions (the default).
    List {
        /// List the team's sessions in this PostgreSQL database
        /// (`postgresql://USER@HOST[:PORT]/DB`) instead, with who pushed them from where.
        #[arg(long, value_name = "URL")]
        from: Option<String>,
    },
    /// Summarise one session: status, graph size, last strategies, LLM usage and cost.
    Show {
        /// The session: its id, the start of one, or `latest`.
        #[arg(value_name = "SESSION_ID|latest")]
        session_id: String,
    },
    /// Delete a session, everything stored for it, and its audit trail.
    Delete {
        /// The session: its id, the start of one, or `latest`.
        #[arg(value_name = "SESSION_ID|latest")]
        session_id: String,
        /// Do not ask for confirmation (required when stdin is not a terminal).
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

pub fn run(db: &Path, args: &SessionsArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.command {
        None | Some(SessionsCommand::List { from: None }) => list(db, out),
        Some(SessionsCommand::List { from: Some(url) }) => list_team(url, out),
        Some(SessionsCommand::Show { session_id }) => show(db, session_id, out),
        Some(SessionsCommand::Delete { session_id, yes }) => {
            let stdin = std::io::stdin();
            let interactive = stdin.is_terminal();
            delete(db, session_id, *yes, interactive, &mut stdin.lock(), out)
        }
    }
}

fn list(db: &Path, out: &mut dyn Write) -> Result<(), CliError> {
    if !db.exists() {
        return emit(
            out,
            &format!(
                "no sessions: there is no database at {} yet\n",
                db.display()
            ),
        );
    }
    let store = open_for_reading(db)?;
    let sessions = store
        .list_sessions()
        .map_err(|e| CliError::Input(e.to_string()))?;
    if sessions.is_empty() {
        return emit(out, &format!("no sessions in {}\n", db.display()));
    }
    let imported =
        crate::import::imported_sessions(&store).map_err(|e| CliError::Input(e.to_string()))?;
    let mut text = format!(
        "{:<36}  {:<24}  {:<18}  {:>5}  {:<8}  {}\n",
        "id", "concept", "methodology", "turns", "status", "last activity"
    );
    for s in sessions {
        let status = if imported.contains_key(&s.id) {
            "imported"
        } else {
            s.status_word()
        };
        text.push_str(&format!(
            "{:<36}  {:<24}  {:<18}  {:>5}  {:<8}  {}\n",
            s.id, s.concept, s.methodology, s.turns, status, s.updated_at
        ));
        if let Some(failure) = &s.failure {
            text.push_str(&format!(
                "  {}\n",
                crate::tui::sanitize_line(&failure.describe())
            ));
        }
    }
    emit(out, &text)
}

/// The team database's sessions, with the interviewer and machine each came from.
fn list_team(url: &str, out: &mut dyn Write) -> Result<(), CliError> {
    let target = Target::parse(url).map_err(|e| team_error(&e))?;
    for warning in &target.warnings {
        eprintln!("warning: {warning}");
    }
    let sessions = super::current_thread_runtime()?
        .block_on(async { target.connect().await?.sessions().await })
        .map_err(|e| team_error(&e))?;
    if sessions.is_empty() {
        return emit(out, &format!("no sessions in {}\n", target.display_url()));
    }
    let row = |cells: [&str; 9]| {
        let [
            id,
            concept,
            methodology,
            turns,
            status,
            interviewer,
            machine,
            updated,
            synced,
        ] = cells;
        format!(
            "{id:<36}  {concept:<24}  {methodology:<18}  {turns:>5}  {status:<8}  \
             {interviewer:<16}  {machine:<16}  {updated:<24}  {synced}\n"
        )
    };
    let mut text = row([
        "id",
        "concept",
        "methodology",
        "turns",
        "status",
        "interviewer",
        "machine",
        "last activity",
        "synced",
    ]);
    for s in &sessions {
        let clean = |t: &str| crate::tui::sanitize_line(t);
        text.push_str(&row([
            &clean(&s.id),
            &clean(&s.concept),
            &clean(&s.methodology),
            &s.turns.to_string(),
            &s.status,
            &clean(&s.interviewer),
            &clean(&s.machine),
            &clean(&s.updated_at),
            &s.synced_at,
        ]));
    }
    emit(out, &text)
}

/// A session reference as errors quote it: `--resume 'ab1'`, or `'ab1'` when positional.
pub(crate) fn quoted(argument: &str, typed: &str) -> String {
    if argument.is_empty() {
        format!("'{typed}'")
    } else {
        format!("{argument} '{typed}'")
    }
}

/// The stored session a typed reference means: `latest` (the most recently active), a whole
/// id, or the start of exactly one id. `argument` is where it was typed (`"--resume"`), or
/// empty for a positional argument; errors quote it with the value, and say which database
/// was searched.
pub(crate) fn resolve(
    store: &impl StoreOps,
    db: &Path,
    argument: &str,
    typed: &str,
) -> Result<SessionRecord, CliError> {
    let quoted = quoted(argument, typed);
    let input = |e: StoreError| CliError::Input(e.to_string());
    if typed.is_empty() {
        return Err(CliError::Usage(format!(
            "{quoted}: give a session id, the start of one, or `latest`"
        )));
    }
    if let Some(session) = store.get_session(typed).map_err(input)? {
        return Ok(session);
    }
    let sessions = store.list_sessions().map_err(input)?;
    let id = if typed == "latest" {
        sessions.first().map(|s| s.id.clone()).ok_or_else(|| {
            CliError::Usage(format!(
                "{quoted}: there are no sessions in {}",
                db.display()
            ))
        })?
    } else {
        let matching: Vec<&str> = sessions
            .iter()
            .map(|s| s.id.as_str())
            .filter(|id| id.starts_with(typed))
            .collect();
        match matching.as_slice() {
            [id] => (*id).to_owned(),
            [] => {
                return Err(CliError::Usage(format!(
                    "{quoted}: no session in {} has this id or one starting with it; \
                     `interviewer sessions` lists them",
                    db.display()
                )));
            }
            several => {
                let shown: Vec<&str> = several.iter().take(5).copied().collect();
                let more = several.len().saturating_sub(shown.len());
                return Err(CliError::Usage(format!(
                    "{quoted} is ambiguous: {} sessions have ids starting with it ({}{}); \
                     type more of the id",
                    several.len(),
                    shown.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )));
            }
        }
    };
    store.get_session(&id).map_err(input)?.ok_or_else(|| {
        CliError::Input(format!(
            "session {id} disappeared while it was being opened"
        ))
    })
}

fn show(db: &Path, typed: &str, out: &mut dyn Write) -> Result<(), CliError> {
    let store = open_for_reading(db)?;
    let id = resolve(&store, db, "", typed)?.id;
    let data = SessionData::load(&store, &id).map_err(|e| CliError::Input(e.to_string()))?;
    emit(out, &summary(&data))
}

/// The text of `sessions show`.
fn summary(data: &SessionData) -> String {
    let s = &data.session;
    let word = crate::store::status_word(s.status, s.failure.as_ref());
    let status = match (&s.termination_reason, &s.failure) {
        (Some(reason), _) => format!("{word} ({reason})"),
        (None, Some(failure)) => {
            format!("{word}: {}", crate::tui::sanitize_line(&failure.describe()))
        }
        (None, None) => word.to_owned(),
    };
    let superseded = data
        .nodes
        .iter()
        .filter(|n| n.superseded_by.is_some())
        .count();
    let active = data
        .slots
        .iter()
        .filter(|slot| slot.status == SlotStatus::Active)
        .count();
    let mut text = format!(
        "session      {}\nconcept      {}\nmethodology  {}\nstatus       {status}\n\
         turns        {} of {}\ncreated      {}\nlast active  {}\n\
         graph        {} nodes ({superseded} superseded), {} edges\n\
         canonical    {} slots ({active} active, {} candidate), {} edges, {} of {} nodes mapped\n",
        s.id,
        s.concept,
        s.methodology,
        s.state.turn_count,
        s.max_turns,
        s.created_at,
        s.updated_at,
        data.nodes.len(),
        data.edges.len(),
        data.slots.len(),
        data.slots.len() - active,
        data.canonical_edges.len(),
        data.mappings.len(),
        data.nodes.len(),
    );
    if let Some(i) = &data.import {
        text.push_str(&format!(
            "imported     from {} ({}, {}): interviewer {}, respondent {}\n",
            crate::tui::sanitize_line(&i.file),
            i.format,
            i.imported_at,
            crate::tui::sanitize_line(&i.interviewer),
            crate::tui::sanitize_line(&i.respondent)
        ));
    }
    text.push_str(&last_strategies(data));
    text.push_str(&usage_table(
        "LLM usage by role",
        "role",
        &usage_by(&data.usage, |c| c.usage.role.clone()),
        data.usage_totals,
    ));
    text.push_str(&usage_table(
        "LLM usage by turn",
        "turn",
        &usage_by(&data.usage, |c| c.usage.turn),
        data.usage_totals,
    ));
    text
}

fn last_strategies(data: &SessionData) -> String {
    let history = &data.session.state.focus_history;
    if history.is_empty() {
        return "last strategies: none yet\n".to_owned();
    }
    let mut text = String::from("last strategies\n");
    for entry in history
        .iter()
        .skip(history.len().saturating_sub(LAST_STRATEGIES))
    {
        let focus = if entry.label.is_empty() {
            "no node".to_owned()
        } else {
            entry.label.clone()
        };
        let mark = if entry.overridden {
            "  (researcher override)"
        } else {
            ""
        };
        text.push_str(&format!(
            "  turn {:>3}  {} → {focus}{mark}\n",
            entry.turn, entry.strategy
        ));
    }
    text
}

fn usage_table<K: std::fmt::Display>(
    title: &str,
    key: &str,
    rows: &BTreeMap<K, UsageTotals>,
    total: UsageTotals,
) -> String {
    if rows.is_empty() {
        return format!("{title}: no calls\n");
    }
    let line = |name: &str, t: &UsageTotals| {
        format!(
            "  {name:<20} {:>6} {:>11} {:>11}  {}\n",
            t.calls,
            t.tokens_in,
            t.tokens_out,
            cost(t)
        )
    };
    let mut text = format!(
        "{title}\n  {key:<20} {:>6} {:>11} {:>11}  cost (USD)\n",
        "calls", "tokens in", "tokens out"
    );
    for (name, totals) in rows {
        text.push_str(&line(&name.to_string(), totals));
    }
    text.push_str(&line("total", &total));
    text
}

/// A cost that never passes off an unknown price as free.
fn cost(t: &UsageTotals) -> String {
    match (t.cost_usd, t.unpriced_calls) {
        (None, _) => "unknown".to_owned(),
        (Some(c), 0) => format!("{c:.6}"),
        (Some(c), n) => format!("{c:.6} + {n} call(s) at unknown price"),
    }
}

fn delete(
    db: &Path,
    typed: &str,
    yes: bool,
    interactive: bool,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = open_existing(db)?;
    let session = resolve(&store, db, "", typed)?;
    let id = session.id.as_str();
    let _lock = store.lock_session(id).map_err(|e| match e {
        StoreError::SessionInUse { .. } => {
            CliError::Input(format!("{e}; stop it before deleting the session"))
        }
        e => CliError::Input(e.to_string()),
    })?;
    if !yes {
        if !interactive {
            return Err(CliError::Usage(format!(
                "refusing to delete session {id} without confirmation: stdin is not a \
                 terminal; pass --yes"
            )));
        }
        eprint!(
            "delete session {id} ({} with {}, {} turns) and its audit trail? [y/N] ",
            session.concept, session.methodology, session.state.turn_count
        );
        if !confirmed(input)? {
            return emit(out, "nothing deleted\n");
        }
    }
    store
        .delete_session(id)
        .map_err(|e| CliError::Input(e.to_string()))?;
    let mut text = format!("deleted session {id}\n");
    if let Some(path) = store
        .path()
        .and_then(|db| AuditTrail::path_for(db, id).ok())
        .filter(|p| p.exists())
    {
        std::fs::remove_file(&path).map_err(|e| {
            CliError::Input(format!(
                "session {id} deleted, but its audit trail {} could not be removed: {e}",
                path.display()
            ))
        })?;
        text.push_str(&format!("removed its audit trail {}\n", path.display()));
    }
    if let Some(dir) = store
        .path()
        .map(|db| crate::speech::kept_audio_dir(db, id))
        .filter(|d| d.exists())
    {
        std::fs::remove_dir_all(&dir).map_err(|e| {
            CliError::Input(format!(
                "session {id} deleted, but its kept audio {} could not be removed: {e}",
                dir.display()
            ))
        })?;
        text.push_str(&format!("removed its kept audio {}\n", dir.display()));
    }
    emit(out, &text)
}

/// Reads one answer line; only `y` or `yes` (any case) confirms.
fn confirmed(input: &mut dyn BufRead) -> Result<bool, CliError> {
    let mut line = String::new();
    input
        .read_line(&mut line)
        .map_err(|e| CliError::Input(format!("cannot read the confirmation: {e}")))?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::domain::SessionState;
    use crate::store::{NewSession, Store};

    fn db_with_session(dir: &Path) -> std::path::PathBuf {
        let db = dir.join("i.db");
        let store = Store::open(&db).unwrap();
        store
            .create_session(&NewSession {
                id: "s1".into(),
                methodology: "m".into(),
                concept: "c".into(),
                max_turns: 3,
                state: SessionState::default(),
            })
            .unwrap();
        db
    }

    #[test]
    fn only_yes_confirms() {
        for (answer, want) in [
            ("y\n", true),
            ("YES\n", true),
            ("\n", false),
            ("no\n", false),
        ] {
            let mut input = std::io::Cursor::new(answer);
            assert_eq!(confirmed(&mut input).unwrap(), want, "{answer:?}");
        }
    }

    #[test]
    fn a_terminal_answer_decides_the_deletion() {
        let dir = tempfile::tempdir().unwrap();
        let db = db_with_session(dir.path());
        let mut out = Vec::new();
        delete(
            &db,
            "s1",
            false,
            true,
            &mut std::io::Cursor::new("n\n"),
            &mut out,
        )
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&out), "nothing deleted\n");
        let store = Store::open(&db).unwrap();
        assert!(store.get_session("s1").unwrap().is_some());
        let mut out = Vec::new();
        delete(
            &db,
            "s1",
            false,
            true,
            &mut std::io::Cursor::new("y\n"),
            &mut out,
        )
        .unwrap();
        assert!(store.get_session("s1").unwrap().is_none());
    }

    #[test]
    fn unknown_prices_are_never_free() {
        let mut t = UsageTotals {
            calls: 2,
            unpriced_calls: 2,
            ..UsageTotals::default()
        };
        assert_eq!(cost(&t), "unknown");
        t.cost_usd = Some(0.0125);
        t.unpriced_calls = 1;
        assert_eq!(cost(&t), "0.012500 + 1 call(s) at unknown price");
        t.unpriced_calls = 0;
        assert_eq!(cost(&t), "0.012500");
    }
}
