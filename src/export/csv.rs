//! The `csv` export: one row per signal contribution of every scored candidate of every turn
//! (seed 000 Path 18), in one of two column layouts ([`CsvLayout`]).
//!
//! Floats are printed as the shortest decimal that reads back as the same `f64`, so every
//! number equals the pipeline's. `value` is `true`/`false` for boolean signals, the category
//! for categorical ones. Both layouts hold the same rows with the same numbers; they differ in
//! their columns and in the row of a candidate without contributions (an empty signal in
//! ours, `(no signals fired)` with contribution 0 in the original's).

use std::io::{self, Write};

use clap::ValueEnum;

use super::data::{SessionData, TurnRecord};
use super::float;
use crate::domain::SignalValue;
use crate::scoring::ScoredCandidate;

/// The columns of a CSV export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, ValueEnum)]
pub enum CsvLayout {
    /// This project's columns: turn, stage, strategy, `node_id`, `node_label`, signal, value,
    /// weight, contribution, base, multiplier, bonus, final, rank, selected.
    #[default]
    Ours,
    /// The columns of the system this project replaces, for analysis scripts written for it:
    /// `turn_number`, phase, strategy, `node_id`, `signal_name`, `signal_value`,
    /// `signal_weight`, `weighted_contribution`, `phase_multiplier`, `phase_bonus`,
    /// `base_score`, `final_score`, rank, selected.
    Original,
}

impl CsvLayout {
    pub fn name(self) -> &'static str {
        match self {
            Self::Ours => "ours",
            Self::Original => "original",
        }
    }
}

/// The header of [`CsvLayout::Ours`], in column order.
pub const COLUMNS: [&str; 15] = [
    "turn",
    "stage",
    "strategy",
    "node_id",
    "node_label",
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

/// The header of [`CsvLayout::Original`], in column order.
pub const ORIGINAL_COLUMNS: [&str; 14] = [
    "turn_number",
    "phase",
    "strategy",
    "node_id",
    "signal_name",
    "signal_value",
    "signal_weight",
    "weighted_contribution",
    "phase_multiplier",
    "phase_bonus",
    "base_score",
    "final_score",
    "rank",
    "selected",
];

/// `signal_name` of the one row of a candidate without contributions in the original layout.
pub const NO_SIGNALS: &str = "(no signals fired)";

/// `phase` of a turn whose signals hold no `meta.interview.phase`.
const UNKNOWN_PHASE: &str = "unknown";

pub(crate) fn write(data: &SessionData, layout: CsvLayout, out: &mut dyn Write) -> io::Result<()> {
    let mut csv = ::csv::Writer::from_writer(out);
    match layout {
        CsvLayout::Ours => csv.write_record(COLUMNS)?,
        CsvLayout::Original => csv.write_record(ORIGINAL_COLUMNS)?,
    }
    for record in &data.turns {
        let phase = phase(record);
        for candidate in &record.result.score_decomposition {
            match layout {
                CsvLayout::Ours => {
                    for row in rows(data, record.turn, candidate) {
                        csv.write_record(&row)?;
                    }
                }
                CsvLayout::Original => {
                    for row in original_rows(record.turn, &phase, candidate) {
                        csv.write_record(&row)?;
                    }
                }
            }
        }
    }
    csv.flush()
}

/// The turn's `meta.interview.phase` signal, or `unknown`.
fn phase(record: &TurnRecord) -> String {
    record
        .result
        .signals
        .get("meta.interview.phase")
        .map_or_else(|| UNKNOWN_PHASE.to_owned(), value)
}

/// `[signal, value, weight, contribution]` of each contribution of a candidate, in pipeline
/// order; `None` once for a candidate without contributions.
fn signal_cells(c: &ScoredCandidate) -> Vec<Option<[String; 4]>> {
    if c.signal_contributions.is_empty() {
        return vec![None];
    }
    c.signal_contributions
        .iter()
        .map(|s| {
            Some([
                s.name.clone(),
                value(&s.value),
                float(s.weight),
                float(s.contribution),
            ])
        })
        .collect()
}

/// The rows of one candidate in our layout.
fn rows(data: &SessionData, turn: u32, c: &ScoredCandidate) -> Vec<[String; 15]> {
    signal_cells(c)
        .into_iter()
        .map(|cells| {
            let [name, value, weight, contribution] = cells.unwrap_or_default();
            [
                turn.to_string(),
                c.stage().to_string(),
                c.strategy.clone(),
                c.node_id.clone(),
                data.node_label(&c.node_id).to_owned(),
                name,
                value,
                weight,
                contribution,
                float(c.base_score),
                float(c.phase_multiplier),
                float(c.phase_bonus),
                float(c.final_score),
                c.rank.to_string(),
                c.selected.to_string(),
            ]
        })
        .collect()
}

/// The rows of one candidate in the original layout.
fn original_rows(turn: u32, phase: &str, c: &ScoredCandidate) -> Vec<[String; 14]> {
    signal_cells(c)
        .into_iter()
        .map(|cells| {
            let [name, value, weight, contribution] = cells.unwrap_or_else(|| {
                [
                    NO_SIGNALS.to_owned(),
                    String::new(),
                    String::new(),
                    float(0.0),
                ]
            });
            [
                turn.to_string(),
                phase.to_owned(),
                c.strategy.clone(),
                c.node_id.clone(),
                name,
                value,
                weight,
                contribution,
                float(c.phase_multiplier),
                float(c.phase_bonus),
                float(c.base_score),
                float(c.final_score),
                c.rank.to_string(),
                c.selected.to_string(),
            ]
        })
        .collect()
}

fn value(v: &SignalValue) -> String {
    match v {
        SignalValue::Bool(b) => b.to_string(),
        SignalValue::Number(n) => float(*n),
        SignalValue::Category(c) => c.clone(),
    }
}
