//! The `csv` export: one row per signal contribution of every scored candidate of every turn
//! (seed 000 Path 18); a candidate without contributions gets one row with an empty signal.
//!
//! Floats are printed as the shortest decimal that reads back as the same `f64`, so every
//! number equals the pipeline's. `value` is `true`/`false` for boolean signals, the category
//! for categorical ones.

use std::io::{self, Write};

use super::data::SessionData;
use super::float;
use crate::domain::SignalValue;
use crate::scoring::ScoredCandidate;

/// The header, in column order.
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

pub(crate) fn write(data: &SessionData, out: &mut dyn Write) -> io::Result<()> {
    let mut csv = ::csv::Writer::from_writer(out);
    csv.write_record(COLUMNS)?;
    for record in &data.turns {
        for candidate in &record.result.score_decomposition {
            for row in rows(data, record.turn, candidate) {
                csv.write_record(&row)?;
            }
        }
    }
    csv.flush()
}

/// The rows of one candidate.
fn rows(data: &SessionData, turn: u32, c: &ScoredCandidate) -> Vec<[String; 15]> {
    let head = [
        turn.to_string(),
        c.stage().to_string(),
        c.strategy.clone(),
        c.node_id.clone(),
        data.node_label(&c.node_id).to_owned(),
    ];
    let tail = [
        float(c.base_score),
        float(c.phase_multiplier),
        float(c.phase_bonus),
        float(c.final_score),
        c.rank.to_string(),
        c.selected.to_string(),
    ];
    let row = |signal: [String; 4]| -> [String; 15] {
        let [t, s, st, id, label] = head.clone();
        let [name, value, weight, contribution] = signal;
        let [base, multiplier, bonus, fin, rank, selected] = tail.clone();
        [
            t,
            s,
            st,
            id,
            label,
            name,
            value,
            weight,
            contribution,
            base,
            multiplier,
            bonus,
            fin,
            rank,
            selected,
        ]
    };
    if c.signal_contributions.is_empty() {
        return vec![row(Default::default())];
    }
    c.signal_contributions
        .iter()
        .map(|s| {
            row([
                s.name.clone(),
                value(&s.value),
                float(s.weight),
                float(s.contribution),
            ])
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
