//! The turn's global signals grouped by pool in the catalogue's order: numbers with a small
//! bar, booleans as yes/no, categories as text, and the rubric score of LLM signals. Enter on a
//! row opens what the signal measures and, for rubric signals, the model's rationale.
//!
//! Bars: a unit signal (in [0, 1] by the catalogue) fills its share of the bar; a count (like
//! `node_count`) is drawn against the largest count of its pool, so counts compare with each
//! other rather than with an arbitrary ceiling.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::{bar, empty_note, follow, frame, has_focus, scrolled};
use crate::domain::{SignalValue, format_number};
use crate::signals::catalog::{self, Kind};
use crate::tui::app::App;
use crate::tui::layout::PanelId;
use crate::tui::model::Model;
use crate::tui::sanitize::{clean, clean_line};
use crate::tui::strings;
use crate::tui::text::{pad, wrap};

/// Cells of a value bar.
const BAR: usize = 8;

/// The signals panel.
#[derive(Debug)]
pub struct SignalsPanel<'a> {
    app: &'a App,
}

impl<'a> SignalsPanel<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

/// Signal names in display order (pool order, then the catalogue's order, unknown names last
/// by name): the panel's selectable rows.
pub fn row_keys(model: &Model) -> Vec<String> {
    let Some(last) = &model.last else {
        return Vec::new();
    };
    let mut keys: Vec<&String> = last.signals.keys().collect();
    keys.sort_by_key(|k| (pool_rank(pool(k)), catalogue_rank(k), *k));
    keys.into_iter().cloned().collect()
}

fn pool(key: &str) -> &str {
    key.split('.').next().unwrap_or(key)
}

fn pool_rank(pool: &str) -> usize {
    catalog::POOLS
        .iter()
        .position(|p| *p == pool)
        .unwrap_or(catalog::POOLS.len())
}

fn catalogue_rank(key: &str) -> usize {
    catalog::SIGNALS
        .iter()
        .position(|s| s.name == key)
        .unwrap_or(usize::MAX)
}

/// Whether the catalogue says the signal is a count rather than a unit value.
fn is_count(key: &str) -> bool {
    matches!(
        catalog::spec(key).map(|s| s.kind),
        Some(Kind::Number { unit: false })
    )
}

impl Widget for &SignalsPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let focused = has_focus(app, PanelId::Signals);
        let mut block = frame(strings::SIGNALS, &app.theme, focused);
        if let Some(last) = &app.model.last {
            block = block.title(Line::from(format!(" turn {} ", last.turn_number)).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        if app.model.last.is_none() {
            empty_note(inner, buf, strings::NO_TURN_YET, &app.theme);
            return;
        }
        let (lines, selected_line) = lines(app, usize::from(inner.width), focused);
        let offset = follow(selected_line, usize::from(inner.height));
        scrolled(lines, offset, inner, buf);
    }
}

/// The panel's rows and the row index of the selected signal.
fn lines(app: &App, width: usize, focused: bool) -> (Vec<Line<'static>>, usize) {
    let theme = &app.theme;
    let Some(last) = &app.model.last else {
        return (Vec::new(), 0);
    };
    let keys = row_keys(&app.model);
    // Rubric scores belong to the snapshot's latest turn; show them only for that turn.
    let rubric = app
        .model
        .snapshot
        .as_ref()
        .filter(|s| s.turn_count == last.turn_number)
        .map(|s| &s.rubric_scores);
    let name_width = keys
        .iter()
        .map(|k| short(k).chars().count())
        .max()
        .unwrap_or(0)
        .min(width.saturating_sub(BAR + 10))
        .max(8);
    let mut out = Vec::new();
    let mut selected_line = 0;
    let mut current_pool = "";
    for (i, key) in keys.iter().enumerate() {
        let Some(value) = last.signals.get(key) else {
            continue;
        };
        let p = pool(key);
        if p != current_pool {
            current_pool = p;
            out.push(Line::from(Span::styled(clean_line(p), theme.title)));
        }
        let selected = i == app.ui.signals.selected;
        if selected {
            selected_line = out.len();
        }
        let scale = is_count(key).then(|| pool_max(last, p));
        let mut spans = vec![
            Span::raw(" "),
            Span::raw(pad(&clean_line(short(key)), name_width)),
            Span::raw(" "),
        ];
        spans.extend(value_spans(value, scale, theme));
        let score = rubric.and_then(|r| r.get(short(key)));
        if let Some(s) = score {
            spans.push(Span::styled(format!(" {}/5", s.score), theme.dim));
        }
        let mut line = Line::from(spans);
        if selected && focused {
            line = line.style(theme.selected);
        }
        out.push(line);
        if app.ui.signals.expanded.contains(key) {
            let about = catalog::spec(key).map_or("", |s| s.description);
            let rationale = score.map(|s| format!("rationale: {}", clean(&s.rationale)));
            for text in std::iter::once(about.to_owned()).chain(rationale) {
                for row in wrap(&text, width.saturating_sub(4)) {
                    out.push(Line::from(vec![
                        Span::raw("    "),
                        Span::styled(row, theme.dim.italic()),
                    ]));
                }
            }
        }
    }
    (out, selected_line)
}

/// The name without its pool prefix.
fn short(key: &str) -> &str {
    key.split_once('.').map_or(key, |(_, rest)| rest)
}

/// The largest count of a pool, for count bars (at least 1).
fn pool_max(last: &crate::pipeline::TurnResult, pool_name: &str) -> f64 {
    last.signals
        .iter()
        .filter(|(k, _)| pool(k) == pool_name && is_count(k))
        .filter_map(|(_, v)| match v {
            SignalValue::Number(n) if n.is_finite() => Some(n.abs()),
            _ => None,
        })
        .fold(1.0, f64::max)
}

/// A value's spans; `scale` is the pool's largest count for count signals.
fn value_spans(
    value: &SignalValue,
    scale: Option<f64>,
    theme: &crate::tui::theme::Theme,
) -> Vec<Span<'static>> {
    match value {
        SignalValue::Number(n) => {
            let fraction = scale.map_or(*n, |max| n.abs() / max);
            let mut spans = bar(fraction, BAR, theme);
            spans.push(Span::raw(format!(" {}", format_number(*n))));
            spans
        }
        SignalValue::Bool(true) => vec![Span::styled("● yes", theme.positive)],
        SignalValue::Bool(false) => vec![Span::styled("○ no", theme.dim)],
        SignalValue::Category(c) => vec![Span::styled(clean_line(c), theme.category)],
    }
}
