//! What-if in the Score panel: a strategy's weights (its global and node signal weights, and
//! its phase multiplier and bonus for the viewed turn's phase) in an editor. Every change
//! re-scores the viewed turn at once from its stored signals, and a replay of every completed
//! turn says how many of the session's decisions the change alters. `s` saves the edited
//! methodology as a new YAML file (never over an existing one); `Esc` discards.

use std::path::{Path, PathBuf};

use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::window;
use crate::config::Methodology;
use crate::domain::{Phase, SignalValue, format_number};
use crate::export::replay::{changed_decisions, decided, rescore};
use crate::pipeline::TurnResult;
use crate::tui::app::App;
use crate::tui::panels::{frame_for_popup, scrolled};
use crate::tui::sanitize::clean_line;
use crate::tui::text::{pad, truncate};

/// Steps ←/→ move a value by.
const NUDGE: f64 = 0.1;
/// Contributions of the edited strategy listed under the ranking.
const CONTRIBUTIONS_SHOWN: usize = 6;

/// What one editable row changes.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A signal weight of the strategy (the key, qualifier included).
    Weight(String),
    /// The strategy's multiplier in a phase.
    Multiplier(String),
    /// The strategy's bonus in a phase.
    Bonus(String),
}

/// One editable number.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub target: Target,
    /// The value in the methodology the session runs.
    pub original: f64,
}

impl Row {
    fn label(&self) -> String {
        match &self.target {
            Target::Weight(key) => key.clone(),
            Target::Multiplier(phase) => format!("phase {phase} × multiplier"),
            Target::Bonus(phase) => format!("phase {phase} + bonus"),
        }
    }
}

/// The editor's state: the edited copy of the methodology, the rows and the cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfState {
    pub strategy: String,
    /// The turn re-scored (the viewed one).
    pub turn: u32,
    pub rows: Vec<Row>,
    pub cursor: usize,
    /// The number being typed on the cursor's row.
    pub typing: Option<String>,
    pub methodology: Methodology,
    /// Where `s` saved the edit, or why it could not.
    pub saved: Option<String>,
    /// Edits so far: what the cached count below was computed for.
    revision: u64,
    /// `(revision, decisions' fingerprint, altered)` of the last count of altered decisions,
    /// so a frame re-scores the whole session only after an edit, a new turn or an override,
    /// not on every draw.
    altered: std::cell::Cell<Option<(u64, u64, usize)>>,
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WhatIfOutcome {
    Open,
    Close,
    Save,
}

impl WhatIfState {
    /// The editor for `strategy` of `methodology`, re-scoring `turn` in `phase`; `None` when
    /// the methodology has no such strategy.
    pub fn new(
        methodology: &Methodology,
        strategy: &str,
        turn: u32,
        phase: Option<Phase>,
    ) -> Option<Self> {
        let s = methodology.strategy(strategy)?;
        let mut rows: Vec<Row> = s
            .weights()
            .map(|(key, weight)| Row {
                target: Target::Weight(key.to_owned()),
                original: weight,
            })
            .collect();
        if let Some(phase) = phase {
            let config = methodology.phases.get(phase.as_str());
            rows.push(Row {
                target: Target::Multiplier(phase.as_str().to_owned()),
                original: config
                    .and_then(|c| c.signal_weights.get(strategy))
                    .copied()
                    .unwrap_or(1.0),
            });
            rows.push(Row {
                target: Target::Bonus(phase.as_str().to_owned()),
                original: config
                    .and_then(|c| c.phase_bonuses.get(strategy))
                    .copied()
                    .unwrap_or(0.0),
            });
        }
        Some(Self {
            strategy: strategy.to_owned(),
            turn,
            rows,
            cursor: 0,
            typing: None,
            methodology: methodology.clone(),
            saved: None,
            revision: 0,
            altered: std::cell::Cell::new(None),
        })
    }

    /// The row's value in the edited methodology.
    pub fn value(&self, row: &Row) -> f64 {
        let phase_value = |phase: &str, bonus: bool| {
            self.methodology.phases.get(phase).and_then(|c| {
                if bonus {
                    c.phase_bonuses.get(&self.strategy).copied()
                } else {
                    c.signal_weights.get(&self.strategy).copied()
                }
            })
        };
        match &row.target {
            Target::Weight(key) => self
                .methodology
                .strategy(&self.strategy)
                .and_then(|s| s.weights().find(|(k, _)| k == key).map(|(_, w)| w))
                .unwrap_or(row.original),
            Target::Multiplier(phase) => phase_value(phase, false).unwrap_or(1.0),
            Target::Bonus(phase) => phase_value(phase, true).unwrap_or(0.0),
        }
    }

    /// Whether any row differs from the methodology the session runs.
    pub fn edited(&self) -> bool {
        self.rows
            .iter()
            .any(|r| (self.value(r) - r.original).abs() > f64::EPSILON)
    }

    fn set(&mut self, index: usize, value: f64) {
        let Some(row) = self.rows.get(index) else {
            return;
        };
        let target = row.target.clone();
        match target {
            Target::Weight(key) => {
                if let (Some(s), Some(n)) = (
                    self.methodology
                        .strategies
                        .iter_mut()
                        .find(|s| s.name == self.strategy),
                    serde_json::Number::from_f64(value),
                ) {
                    s.signal_weights.insert(key, serde_json::Value::Number(n));
                }
            }
            Target::Multiplier(phase) => {
                let c = self.methodology.phases.entry(phase).or_default();
                c.signal_weights.insert(self.strategy.clone(), value);
            }
            Target::Bonus(phase) => {
                let c = self.methodology.phases.entry(phase).or_default();
                c.phase_bonuses.insert(self.strategy.clone(), value);
            }
        }
        self.saved = None;
        self.revision += 1;
    }

    /// How many of `decisions` the edited methodology decides otherwise, counted once per
    /// edit and per number of decisions.
    fn altered(&self, decisions: &[&TurnResult]) -> usize {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        for d in decisions {
            (d.turn_number, &d.strategy_selected).hash(&mut hasher);
        }
        let fingerprint = hasher.finish();
        if let Some((revision, seen, altered)) = self.altered.get()
            && revision == self.revision
            && seen == fingerprint
        {
            return altered;
        }
        let altered = changed_decisions(decisions.iter().copied(), &self.methodology);
        self.altered
            .set(Some((self.revision, fingerprint, altered)));
        altered
    }

    /// Applies what is typed, when it reads as a number.
    fn apply_typing(&mut self) {
        if let Some(value) = self
            .typing
            .as_deref()
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|v| v.is_finite())
        {
            self.set(self.cursor, value);
        }
    }

    pub fn key(&mut self, code: KeyCode) -> WhatIfOutcome {
        match code {
            KeyCode::Esc => return WhatIfOutcome::Close,
            KeyCode::Char('s') => {
                self.typing = None;
                return WhatIfOutcome::Save;
            }
            KeyCode::Up | KeyCode::Down | KeyCode::Enter => {
                self.typing = None;
                let last = self.rows.len().saturating_sub(1);
                self.cursor = match code {
                    KeyCode::Up => self.cursor.saturating_sub(1),
                    KeyCode::Down => (self.cursor + 1).min(last),
                    _ => self.cursor,
                };
            }
            KeyCode::Left | KeyCode::Right => {
                self.typing = None;
                if let Some(row) = self.rows.get(self.cursor) {
                    let step = if code == KeyCode::Left { -NUDGE } else { NUDGE };
                    // Rounded to the nudge's precision, so steps do not drift.
                    let value = ((self.value(row) + step) * 1e6).round() / 1e6;
                    self.set(self.cursor, value);
                }
            }
            KeyCode::Backspace => {
                if let Some(t) = self.typing.as_mut() {
                    t.pop();
                }
                self.apply_typing();
            }
            KeyCode::Char(c) if c.is_ascii_digit() || c == '.' || c == '-' => {
                self.typing.get_or_insert_with(String::new).push(c);
                self.apply_typing();
            }
            _ => {}
        }
        WhatIfOutcome::Open
    }
}

/// Saves `methodology` as a new YAML file in `dir`, named (and with `method.name`) after its
/// name with a `_whatif_N` suffix, the first N whose file does not exist; never overwrites.
pub fn save(methodology: &Methodology, dir: &Path) -> Result<PathBuf, String> {
    let base = methodology.method.name.clone();
    for n in 1..1000 {
        let name = format!("{base}_whatif_{n}");
        let path = dir.join(format!("{name}.yaml"));
        if path.exists() {
            continue;
        }
        let mut m = methodology.clone();
        m.method.name.clone_from(&name);
        let yaml = serde_saphyr::to_string(&m)
            .map_err(|e| format!("the edited methodology cannot be written as YAML: {e}"))?;
        let text = format!(
            "# {name}: {base} with weights edited in the terminal app's what-if editor.\n{yaml}"
        );
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        std::io::Write::write_all(&mut file, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(path);
    }
    Err(format!(
        "no free {base}_whatif_N.yaml name in {}",
        dir.display()
    ))
}

/// The editor, drawn over the screen.
pub struct WhatIfPopup<'a> {
    app: &'a App,
    state: &'a WhatIfState,
}

impl<'a> WhatIfPopup<'a> {
    pub fn new(app: &'a App, state: &'a WhatIfState) -> Self {
        Self { app, state }
    }
}

impl Widget for &WhatIfPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (app, s) = (self.app, self.state);
        let theme = &app.theme;
        let rect = window(area, 100, 40, buf);
        let title = format!("What if · {} · turn {}", clean_line(&s.strategy), s.turn);
        let block = frame_for_popup(&title, theme);
        let inner = block.inner(rect);
        block.render(rect, buf);
        let width = usize::from(inner.width);
        let mut lines = Vec::new();
        let label_width = s
            .rows
            .iter()
            .map(|r| r.label().chars().count())
            .max()
            .unwrap_or(10)
            .min(width.saturating_sub(30));
        for (i, row) in s.rows.iter().enumerate() {
            let value = s.value(row);
            let shown = match (&s.typing, i == s.cursor) {
                (Some(t), true) => format!("{t}▍"),
                _ => format_number(value),
            };
            let changed = (value - row.original).abs() > f64::EPSILON;
            let was = if changed {
                format!("  (was {})", format_number(row.original))
            } else {
                String::new()
            };
            let style = if i == s.cursor {
                theme.selected
            } else if changed {
                theme.warning
            } else {
                theme.text
            };
            lines.push(Line::from(Span::styled(
                truncate(
                    &format!(
                        " {} {} {:>8}{was}",
                        if i == s.cursor { '▸' } else { ' ' },
                        pad(&clean_line(&row.label()), label_width),
                        shown
                    ),
                    width,
                ),
                style,
            )));
        }
        lines.push(Line::default());
        lines.extend(outcome_lines(app, s, width));
        lines.push(Line::default());
        if let Some(saved) = &s.saved {
            lines.push(Line::from(Span::styled(
                truncate(&clean_line(saved), width),
                theme.warning,
            )));
        }
        lines.push(Line::from(Span::styled(
            truncate(
                "↑↓ weight · type a number · ←→ −/+0.1 · s save as a new YAML file · Esc discard",
                width,
            ),
            theme.dim,
        )));
        let follow = s.cursor.saturating_sub(usize::from(inner.height) / 3);
        scrolled(lines, follow, inner, buf);
    }
}

/// The viewed turn re-scored (ranking and the strategy's contributions) and how many of the
/// session's decisions the edit alters.
fn outcome_lines(app: &App, s: &WhatIfState, width: usize) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let model = &app.model;
    let Some(result) = model
        .earlier
        .iter()
        .chain(model.last.as_deref())
        .find(|r| r.turn_number == s.turn)
    else {
        return vec![Line::from(Span::styled(
            "no completed turn to re-score",
            theme.dim,
        ))];
    };
    let selection = match rescore(result, &s.methodology) {
        Ok(sel) => sel,
        Err(e) => {
            return vec![Line::from(Span::styled(
                truncate(&format!("cannot re-score: {}", clean_line(&e)), width),
                theme.warning,
            ))];
        }
    };
    let stored = decided(&result.score_decomposition);
    let mut out = vec![Line::from(Span::styled(
        format!("Turn {} re-scored (final = base × phase + bonus):", s.turn),
        theme.dim,
    ))];
    for c in &selection.strategies {
        let was = if stored.as_ref().is_some_and(|(st, _)| *st == c.strategy) {
            "  ← the stored decision"
        } else {
            ""
        };
        let style = if c.selected { theme.winner } else { theme.text };
        out.push(Line::from(Span::styled(
            truncate(
                &format!(
                    " {}{:>2} {:<24} {:>7}{was}",
                    if c.selected { '★' } else { ' ' },
                    c.rank,
                    clean_line(&c.strategy),
                    format_number(c.final_score)
                ),
                width,
            ),
            style,
        )));
    }
    if let Some(edited) = selection
        .strategies
        .iter()
        .find(|c| c.strategy == s.strategy)
    {
        let mut rows: Vec<_> = edited.signal_contributions.iter().collect();
        rows.sort_by(|a, b| b.contribution.abs().total_cmp(&a.contribution.abs()));
        out.push(Line::from(Span::styled(
            format!("{} contributions:", clean_line(&s.strategy)),
            theme.dim,
        )));
        for r in rows.into_iter().take(CONTRIBUTIONS_SHOWN) {
            let value = match &r.value {
                SignalValue::Number(n) => format_number(*n),
                other => clean_line(&other.to_string()),
            };
            out.push(Line::from(Span::raw(truncate(
                &format!(
                    "   {} = {value} × {} → {}",
                    clean_line(&r.name),
                    format_number(r.weight),
                    format_number(r.contribution)
                ),
                width,
            ))));
        }
    }
    let all: Vec<_> = model.earlier.iter().chain(model.last.as_deref()).collect();
    let altered = s.altered(&all);
    let text = if s.edited() {
        format!(
            "This change alters {altered} of {} decisions in this session.",
            all.len()
        )
    } else {
        format!("Unchanged: {altered} of {} decisions differ.", all.len())
    };
    out.push(Line::default());
    out.push(Line::from(Span::styled(text, theme.winner)));
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn mec() -> Methodology {
        crate::config::shipped_methodology("means_end_chain")
    }

    #[test]
    fn typing_and_nudging_edit_the_copy_and_saving_never_overwrites() {
        let m = mec();
        let name = m.strategies[0].name.clone();
        let mut s = WhatIfState::new(&m, &name, 3, Some(Phase::Mid)).unwrap();
        let bonus = s.rows.len() - 1;
        assert_eq!(s.rows[bonus].target, Target::Bonus("mid".into()));
        for _ in 0..bonus {
            s.key(KeyCode::Down);
        }
        for c in "2.5".chars() {
            s.key(KeyCode::Char(c));
        }
        assert_eq!(s.value(&s.rows[bonus]), 2.5);
        s.key(KeyCode::Right);
        assert_eq!(s.value(&s.rows[bonus]), 2.6);
        assert!(s.edited());
        s.key(KeyCode::Up);
        s.key(KeyCode::Char('-'));
        s.key(KeyCode::Char('1'));
        let weight = s.cursor;
        assert_eq!(s.value(&s.rows[weight]), -1.0);
        assert_eq!(s.key(KeyCode::Char('s')), WhatIfOutcome::Save);
        assert_eq!(s.key(KeyCode::Esc), WhatIfOutcome::Close);

        let dir = tempfile::tempdir().unwrap();
        let first = save(&s.methodology, dir.path()).unwrap();
        let second = save(&s.methodology, dir.path()).unwrap();
        assert_ne!(first, second);
        assert!(
            first.ends_with("means_end_chain_whatif_1.yaml"),
            "{first:?}"
        );
        let loaded = crate::config::load_methodology(&second, &crate::signals::Catalog).unwrap();
        assert_eq!(loaded.method.name, "means_end_chain_whatif_2");
        assert_eq!(loaded.phases["mid"].phase_bonuses[&name], 2.6);
        assert!(loaded.validate(&crate::signals::Catalog).is_empty());
        // The session's methodology is untouched.
        assert_ne!(
            m.phases.get("mid").and_then(|c| c.phase_bonuses.get(&name)),
            Some(&2.6)
        );
    }

    #[test]
    fn the_count_of_altered_decisions_is_redone_only_after_an_edit_or_new_decisions() {
        let m = mec();
        let turn = crate::tui::panels::fixture::turn();
        let mut later = turn.clone();
        later.turn_number += 1;
        let mut s = WhatIfState::new(&m, &turn.strategy_selected, turn.turn_number, None).unwrap();
        let counted = s.altered(&[&turn]);
        let (_, fingerprint, _) = s.altered.get().unwrap();
        // What a draw uses is the cached count: mark it and see it come back.
        s.altered.set(Some((0, fingerprint, counted + 7)));
        assert_eq!(s.altered(&[&turn]), counted + 7);
        // Another decision in the session counts again.
        assert!(s.altered(&[&turn, &later]) <= 2);
        s.altered.set(Some((0, fingerprint, counted + 7)));
        // So does an edit.
        s.key(KeyCode::Char('9'));
        assert!(s.edited());
        assert!(s.altered(&[&turn]) <= 1);
    }
}
