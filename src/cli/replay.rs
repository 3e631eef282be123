//! `interviewer replay`: a stored session's strategy decisions scored again under its own or
//! an edited methodology, without any model call and without changing the session (see
//! [`crate::export::replay`]).

use std::io::Write;
use std::path::Path;

use clap::{Args, ValueEnum};

use super::export::open_for_reading;
use super::{CliError, emit};
use crate::config::ConfigDir;
use crate::domain::format_number;
use crate::export::SessionData;
use crate::export::replay::{Replay, TurnReplay, apply_set, replay, validate_edited};
use crate::signals::Catalog;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The session to replay: its id, the start of one, or `latest`.
    #[arg(value_name = "SESSION_ID|latest")]
    pub session_id: String,
    /// Methodology id or path to replay under; default: the session's own.
    #[arg(long, short = 'm', value_name = "ID|PATH")]
    pub methodology: Option<String>,
    /// Edit one number of the methodology first (repeatable):
    /// `strategies.<name>.signal_weights.<signal key>=N`,
    /// `phases.<phase>.signal_weights.<strategy>=N` or `phases.<phase>.phase_bonuses.<strategy>=N`.
    #[arg(long = "set", value_name = "PATH=NUMBER")]
    pub sets: Vec<String>,
    #[arg(long, value_enum, default_value_t)]
    pub format: ReplayFormat,
}

/// How the replay is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ReplayFormat {
    /// A line per turn, the top three, what moved, and a summary.
    #[default]
    Table,
    /// Every turn with its full replayed decomposition.
    Json,
    /// One row per replayed candidate contribution, with the stored and replayed decisions.
    Csv,
}

pub fn run(
    dir: &ConfigDir,
    db: &Path,
    args: &ReplayArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = open_for_reading(db)?;
    let id = super::sessions::resolve(&store, db, "", &args.session_id)?.id;
    let data = SessionData::load(&store, &id).map_err(|e| CliError::Input(e.to_string()))?;
    let source = args
        .methodology
        .clone()
        .unwrap_or_else(|| data.session.methodology.clone());
    let mut methodology = dir.methodology(&source, &Catalog)?;
    for spec in &args.sets {
        apply_set(&mut methodology, spec).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    validate_edited(&methodology, &Catalog).map_err(|e| CliError::Usage(e.to_string()))?;
    let replayed = replay(&data, &methodology).map_err(|e| CliError::Input(e.to_string()))?;
    let text = match args.format {
        ReplayFormat::Table => table(&replayed),
        ReplayFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&replayed).map_err(|e| CliError::Input(e.to_string()))?
        ),
        ReplayFormat::Csv => csv(&replayed)?,
    };
    emit(out, &text)
}

fn decision(strategy: &str, label: &str) -> String {
    if label.is_empty() {
        strategy.to_owned()
    } else {
        format!("{strategy} → {}", crate::tui::sanitize_line(label))
    }
}

fn table(r: &Replay) -> String {
    let mut t = format!(
        "replay of {} under {}: {} of {} turns changed\n\n",
        r.session_id,
        r.methodology,
        r.changed(),
        r.turns.len()
    );
    for turn in &r.turns {
        t.push_str(&turn_line(turn));
    }
    t.push_str("\nstrategy usage (stored → replayed):\n");
    let names: std::collections::BTreeSet<&String> =
        r.usage_before.keys().chain(r.usage_after.keys()).collect();
    for name in names {
        t.push_str(&format!(
            "  {name:<24} {} → {}\n",
            r.usage_before.get(name).copied().unwrap_or(0),
            r.usage_after.get(name).copied().unwrap_or(0)
        ));
    }
    t.push_str(&format!("\n{}\n", r.limits));
    t
}

fn turn_line(turn: &TurnReplay) -> String {
    let stored = decision(&turn.stored.strategy, &turn.stored.node_label);
    let mut line = if turn.changed {
        format!(
            "T{:<3} CHANGED  {stored}  ⇒  would have chosen {}",
            turn.turn,
            decision(&turn.replayed.strategy, &turn.replayed.node_label)
        )
    } else {
        format!("T{:<3} same     {stored}", turn.turn)
    };
    if turn.overridden {
        line.push_str("  (a researcher replaced this question)");
    }
    let top: Vec<String> = turn
        .top
        .iter()
        .map(|(s, f)| format!("{s} {}", format_number(*f)))
        .collect();
    line.push_str(&format!("\n       top: {}\n", top.join(" · ")));
    for m in &turn.moved {
        let at = if m.node_id.is_empty() {
            m.strategy.clone()
        } else {
            format!("{} on {}", m.strategy, m.node_id)
        };
        line.push_str(&format!(
            "       moved: {at} · {} {} → {}\n",
            m.signal,
            format_number(m.stored),
            format_number(m.replayed)
        ));
    }
    line
}

const CSV_COLUMNS: [&str; 19] = [
    "turn",
    "changed",
    "stored_strategy",
    "stored_node_id",
    "replayed_strategy",
    "replayed_node_id",
    "stage",
    "strategy",
    "node_id",
    "signal",
    "value",
    "weight",
    "contribution",
    "base",
    "multiplier",
    "bonus",
    "final",
    "rank",
    "selected",
];

fn csv(r: &Replay) -> Result<String, CliError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let io = |e: ::csv::Error| CliError::Input(format!("writing the replay CSV: {e}"));
    w.write_record(CSV_COLUMNS).map_err(io)?;
    for turn in &r.turns {
        let head = [
            turn.turn.to_string(),
            turn.changed.to_string(),
            turn.stored.strategy.clone(),
            turn.stored.node_id.clone(),
            turn.replayed.strategy.clone(),
            turn.replayed.node_id.clone(),
        ];
        for c in &turn.score_decomposition {
            let tail = [
                crate::export::float(c.base_score),
                crate::export::float(c.phase_multiplier),
                crate::export::float(c.phase_bonus),
                crate::export::float(c.final_score),
                c.rank.to_string(),
                c.selected.to_string(),
            ];
            let candidate = [c.stage().to_string(), c.strategy.clone(), c.node_id.clone()];
            let signals: Vec<[String; 4]> = if c.signal_contributions.is_empty() {
                vec![[String::new(), String::new(), String::new(), "0".to_owned()]]
            } else {
                c.signal_contributions
                    .iter()
                    .map(|x| {
                        [
                            x.name.clone(),
                            x.value.to_string(),
                            crate::export::float(x.weight),
                            crate::export::float(x.contribution),
                        ]
                    })
                    .collect()
            };
            for signal in signals {
                let row: Vec<&str> = head
                    .iter()
                    .chain(&candidate)
                    .chain(&signal)
                    .chain(&tail)
                    .map(String::as_str)
                    .collect();
                w.write_record(row).map_err(io)?;
            }
        }
    }
    let bytes = w
        .into_inner()
        .map_err(|e| CliError::Input(format!("writing the replay CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| CliError::Input(e.to_string()))
}
