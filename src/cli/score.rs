//! `interviewer score`: the two-stage decomposition for a signals file, offline.
//!
//! Answers "why did it pick that?" without running an interview: give it the signals a turn
//! saw (from an export or written by hand) and it prints every candidate's contributions.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::{CliError, Format, emit};
use crate::config::ConfigDir;
use crate::domain::{NodeSignals, Phase, SignalValue, Signals, format_number};
use crate::scoring::{ScoredCandidate, Selection, select};
use crate::signals::Catalog;

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// Methodology id or path to a methodology YAML.
    #[arg(long, short = 'm')]
    pub methodology: String,
    /// JSON object of global signals: `{"llm.response_depth": "surface", "graph.max_depth": 0.5}`.
    #[arg(long, short = 's')]
    pub signals: PathBuf,
    /// JSON object of node signals: `{"<node_id>": {"graph.node.exhaustion_score": 0.1}}`.
    #[arg(long)]
    pub node_signals: Option<PathBuf>,
    /// Turn number; with --max-turns, derives the phase.
    #[arg(long, requires = "max_turns")]
    pub turn: Option<u32>,
    /// The interview's maximum number of turns; with --turn, derives the phase (early, mid
    /// or late) from how far the turn is into the interview.
    #[arg(long, requires = "turn")]
    pub max_turns: Option<u32>,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub fn run(
    dir: &ConfigDir,
    args: &ScoreArgs,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let methodology = dir.methodology(&args.methodology, &Catalog)?;
    let mut signals = read_signals(&args.signals)?;
    let node_signals = match &args.node_signals {
        Some(p) => read_node_signals(p)?,
        None => Vec::new(),
    };
    let phase = match (args.turn, args.max_turns) {
        (Some(turn), Some(max)) => {
            if turn == 0 || max == 0 {
                return Err(CliError::Usage(
                    "--turn and --max-turns start at 1".to_owned(),
                ));
            }
            let phase = methodology.phase_for(turn, max);
            signals.insert(
                "meta.interview.phase".to_owned(),
                SignalValue::category(phase.as_str()),
            );
            Some(phase)
        }
        _ => phase_from_signals(&args.signals, &signals)?,
    };
    let selection = select(&methodology, &signals, &node_signals, phase)
        .map_err(|e| CliError::Input(e.to_string()))?;
    let text = match args.format {
        Format::Json => to_json(&selection),
        Format::Table => to_table(&selection),
    };
    emit(out, &text)
}

fn read_json(path: &Path) -> Result<serde_json::Value, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Input(format!("{}: cannot read: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::Input(format!("{}: not valid JSON: {e}", path.display())))
}

fn to_signals(path: &Path, at: &str, value: &serde_json::Value) -> Result<Signals, CliError> {
    let serde_json::Value::Object(map) = value else {
        return Err(CliError::Input(format!(
            "{}: {at}must be a JSON object of signal values",
            path.display()
        )));
    };
    let mut signals = Signals::new();
    for (k, v) in map {
        let value = match v {
            serde_json::Value::Bool(b) => SignalValue::Bool(*b),
            serde_json::Value::Number(n) => SignalValue::Number(n.as_f64().unwrap_or(f64::NAN)),
            serde_json::Value::String(s) => SignalValue::Category(s.clone()),
            other => {
                return Err(CliError::Input(format!(
                    "{}: {at}'{k}': a signal value must be a boolean, number or string, found {other}",
                    path.display()
                )));
            }
        };
        signals.insert(k.clone(), value);
    }
    Ok(signals)
}

fn read_signals(path: &Path) -> Result<Signals, CliError> {
    to_signals(path, "", &read_json(path)?)
}

/// Node signals in file order (stage-2 ties break by this order).
fn read_node_signals(path: &Path) -> Result<NodeSignals, CliError> {
    let serde_json::Value::Object(map) = read_json(path)? else {
        return Err(CliError::Input(format!(
            "{}: must be a JSON object keyed by node id",
            path.display()
        )));
    };
    map.iter()
        .map(|(id, v)| Ok((id.clone(), to_signals(path, &format!("node '{id}': "), v)?)))
        .collect()
}

fn phase_from_signals(path: &Path, signals: &Signals) -> Result<Option<Phase>, CliError> {
    match signals.get("meta.interview.phase") {
        None => Ok(None),
        Some(SignalValue::Category(c)) => Phase::parse(c).map(Some).ok_or_else(|| {
            CliError::Input(format!(
                "{}: 'meta.interview.phase' must be early, mid or late, found '{c}'",
                path.display()
            ))
        }),
        Some(other) => Err(CliError::Input(format!(
            "{}: 'meta.interview.phase' must be a string, found {other}",
            path.display()
        ))),
    }
}

fn to_json(s: &Selection) -> String {
    let v = json!({
        "phase": s.phase,
        "strategies": s.strategies,
        "nodes": s.nodes,
        "selected": {"strategy": s.strategy, "node_id": s.node_id},
    });
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
}

fn to_table(s: &Selection) -> String {
    let mut t = format!(
        "phase: {}\n\nStage 1: strategies (base × multiplier + bonus = final)\n",
        s.phase.map_or("none", Phase::as_str)
    );
    for c in &s.strategies {
        t.push_str(&format!(
            "{:>3} {} {:<24} {} × {} + {} = {}\n",
            c.rank,
            if c.selected { '*' } else { ' ' },
            c.strategy,
            format_number(c.base_score),
            format_number(c.phase_multiplier),
            format_number(c.phase_bonus),
            format_number(c.final_score)
        ));
        contributions(&mut t, c);
    }
    if !s.nodes.is_empty() {
        t.push_str(&format!(
            "\nStage 2: nodes for {} (base = final)\n",
            s.strategy
        ));
        for c in &s.nodes {
            t.push_str(&format!(
                "{:>3} {} {:<24} {}\n",
                c.rank,
                if c.selected { '*' } else { ' ' },
                c.node_id,
                format_number(c.final_score)
            ));
            contributions(&mut t, c);
        }
    }
    t.push_str(&format!(
        "\nselected: {}{}\n",
        s.strategy,
        s.node_id
            .as_ref()
            .map(|n| format!(" on {n}"))
            .unwrap_or_default()
    ));
    t
}

/// Contribution rows sorted by |contribution|, largest first.
fn contributions(t: &mut String, c: &ScoredCandidate) {
    let mut rows: Vec<_> = c.signal_contributions.iter().collect();
    rows.sort_by(|a, b| b.contribution.abs().total_cmp(&a.contribution.abs()));
    for r in rows {
        t.push_str(&format!(
            "        {:<44} {:>9} × {:>6} = {}\n",
            r.name,
            r.value.to_string(),
            format_number(r.weight),
            format_number(r.contribution)
        ));
    }
}
