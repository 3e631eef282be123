//! `interviewer coach SESSION|latest|--concept ID`: the interviewer's questions reviewed beside
//! the engine's choices, with flags (see [`crate::coach`]), as Markdown, CSV or JSON.

use std::fmt::Write as _;
use std::path::Path;

use clap::{Args, ValueEnum};

use super::export::open_for_reading;
use super::{CliError, emit};
use crate::coach::{Flag, SessionReview, StudyReview, review_session, summarise};
use crate::config::ConfigDir;
use crate::export::SessionData;
use crate::signals::Catalog;
use crate::store::StoreOps;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum CoachFormat {
    #[default]
    Md,
    Csv,
    Json,
}

#[derive(Debug, Args)]
pub struct CoachArgs {
    /// A session id (or its start), or `latest`.
    #[arg(
        value_name = "SESSION|latest",
        required_unless_present = "concept",
        conflicts_with = "concept"
    )]
    pub session: Option<String>,
    /// Every session of this concept, with a summary across them.
    #[arg(long, value_name = "ID")]
    pub concept: Option<String>,
    #[arg(long, value_enum, default_value_t = CoachFormat::Md)]
    pub format: CoachFormat,
}

pub fn run(
    dir: &ConfigDir,
    db: &Path,
    args: &CoachArgs,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let store = open_for_reading(db)?;
    let ids: Vec<String> = match (&args.session, &args.concept) {
        (Some(typed), _) => vec![super::sessions::resolve(&store, db, "", typed)?.id],
        (None, Some(concept)) => {
            let mut ids: Vec<_> = store
                .list_sessions()
                .map_err(|e| CliError::Input(e.to_string()))?
                .into_iter()
                .filter(|s| &s.concept == concept)
                .map(|s| s.id)
                .collect();
            if ids.is_empty() {
                return Err(CliError::Usage(format!(
                    "no sessions of concept '{concept}' in {}",
                    db.display()
                )));
            }
            // Oldest first, as a study is read.
            ids.reverse();
            ids
        }
        (None, None) => return Err(CliError::Usage("name a session or --concept".to_owned())),
    };
    let mut reviews = Vec::new();
    for id in ids {
        let data = SessionData::load(&store, &id).map_err(|e| CliError::Input(e.to_string()))?;
        let methodology = dir.methodology(&data.session.methodology, &Catalog)?;
        reviews.push(review_session(&data, &methodology));
    }
    let study = summarise(reviews);
    let text = match args.format {
        CoachFormat::Md => markdown(&study),
        CoachFormat::Csv => csv(&study)?,
        CoachFormat::Json => {
            let mut json = serde_json::to_string_pretty(&study)
                .map_err(|e| CliError::Input(format!("cannot write the review: {e}")))?;
            json.push('\n');
            json
        }
    };
    emit(out, &text)
}

fn percent(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

fn flag_list(e: &crate::coach::ExchangeReview) -> String {
    e.flags
        .iter()
        .map(|f| f.flag.name())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One line per flag of the summary.
fn totals(study: &StudyReview) -> String {
    study
        .flag_counts
        .iter()
        .map(|(f, n)| format!("{} {n}", f.name()))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn markdown(study: &StudyReview) -> String {
    let mut md = String::new();
    if study.sessions.len() > 1 {
        let _ = writeln!(
            md,
            "# Coaching review: {} sessions\n\n{} questions reviewed · {} · interviewer talk \
             share {} on average\n\n| session | origin | questions | leading | double | closed | \
             missed rung | repeated | talk share |\n|---|---|---|---|---|---|---|---|---|",
            study.sessions.len(),
            study.questions,
            totals(study),
            percent(study.mean_talk_share)
        );
        for s in &study.sessions {
            let _ = writeln!(
                md,
                "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} |",
                s.session_id.get(..8).unwrap_or(&s.session_id),
                if s.imported { "imported" } else { "live" },
                s.questions(),
                s.count(Flag::Leading),
                s.count(Flag::DoubleBarrelled),
                s.count(Flag::Closed),
                s.count(Flag::MissedRung),
                s.count(Flag::Repeated),
                percent(s.talk_share)
            );
        }
        md.push('\n');
    }
    for s in &study.sessions {
        session_markdown(s, &mut md);
    }
    md
}

fn session_markdown(s: &SessionReview, md: &mut String) {
    let who = if s.imported {
        "the interviewer's questions (imported)"
    } else {
        "the questions this app asked"
    };
    let flagged = s.exchanges.iter().filter(|e| !e.flags.is_empty()).count();
    let _ = writeln!(
        md,
        "## Session `{}` ({}, {})\n\nReviewing {who}: {} questions, {flagged} flagged · \
         interviewer talk share {} (by {}) · the question took the engine's focus {} times\n",
        s.session_id,
        s.concept,
        s.methodology,
        s.questions(),
        percent(s.talk_share),
        s.talk_basis,
        s.followed_engine_focus
    );
    for e in &s.exchanges {
        let _ = writeln!(md, "### Turn {}\n\n> {}\n", e.turn, one_line(&e.answer));
        if e.question.is_empty() {
            let _ = writeln!(md, "*The interview ended here.*\n");
            continue;
        }
        let _ = writeln!(md, "**Asked:** {}\n", one_line(&e.question));
        let focus = e
            .engine_focus
            .as_deref()
            .map(|f| format!(" on \"{}\"", one_line(f)))
            .unwrap_or_default();
        let reasons = e
            .engine_reasons
            .iter()
            .map(|(name, c)| format!("`{name}` {c:+.2}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            md,
            "**Engine:** `{}`{focus}{}: \"{}\"\n",
            e.engine_strategy,
            if reasons.is_empty() {
                String::new()
            } else {
                format!(" ({reasons})")
            },
            one_line(&e.engine_question)
        );
        for f in &e.flags {
            let _ = writeln!(md, "- ⚑ **{}**: {}", f.flag.name(), one_line(&f.why));
        }
        if !e.flags.is_empty() {
            md.push('\n');
        }
    }
}

/// Text on one line, with Markdown's table and emphasis characters made inert.
fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    flat.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
        .replace('*', "\\*")
        .replace('_', "\\_")
}

fn csv(study: &StudyReview) -> Result<String, CliError> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| CliError::Input(format!("cannot write the review: {e}"));
    writer
        .write_record([
            "session",
            "origin",
            "turn",
            "answer",
            "question",
            "flags",
            "why",
            "engine_strategy",
            "engine_focus",
            "engine_question",
        ])
        .map_err(fail)?;
    for s in &study.sessions {
        for e in &s.exchanges {
            let why = e
                .flags
                .iter()
                .map(|f| format!("{}: {}", f.flag.name(), f.why))
                .collect::<Vec<_>>()
                .join("; ");
            writer
                .write_record([
                    s.session_id.as_str(),
                    if s.imported { "imported" } else { "live" },
                    &e.turn.to_string(),
                    &csv_cell(&e.answer),
                    &csv_cell(&e.question),
                    &flag_list(e),
                    &csv_cell(&why),
                    &e.engine_strategy,
                    &csv_cell(e.engine_focus.as_deref().unwrap_or_default()),
                    &csv_cell(&e.engine_question),
                ])
                .map_err(fail)?;
        }
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| CliError::Input(format!("cannot write the review: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A spreadsheet would run a cell starting with `=`, `+`, `-` or `@` as a formula.
fn csv_cell(text: &str) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    if clean.starts_with(['=', '+', '-', '@']) {
        format!("'{clean}")
    } else {
        clean
    }
}
