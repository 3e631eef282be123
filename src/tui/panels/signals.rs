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
    let Some(last) = model.shown() else {
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
        if let Some(last) = app.model.shown() {
            block = block.title(Line::from(format!(" turn {} ", last.turn_number)).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        if app.model.shown().is_none() {
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
    let Some(last) = app.model.shown() else {
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
        .map(|k| clean_line(short(k)).chars().count())
        .max()
        .unwrap_or(0);
    let value_len = |k: &String| {
        let value = last.signals.get(k)?;
        let score = rubric.and_then(|r| r.get(short(k))).map(|s| s.score);
        Some(value_text(value, score).chars().count())
    };
    // A long category ("psychosocial_consequence") takes a second line of its own rather
    // than pushing every row onto two.
    let value_width = keys
        .iter()
        .filter(|k| !matches!(last.signals.get(*k), Some(SignalValue::Category(_))))
        .filter_map(value_len)
        .max()
        .unwrap_or(0);
    let fit = Fit::choose(width, name_width, value_width);
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
        let score = rubric.and_then(|r| r.get(short(key)));
        let mut spans = vec![Span::raw(" ")];
        let mut value = value_spans(value, scale, fit != Fit::NoBar, theme);
        if let Some(s) = score {
            value.push(Span::styled(format!(" {}/5", s.score), theme.dim));
        }
        // A category that would touch the border reads as part of it: it needs a free column.
        let too_wide = matches!(last.signals.get(key), Some(SignalValue::Category(_)))
            && 1 + name_width + 1 + value_len(key).unwrap_or(0) >= width;
        if fit == Fit::TwoLines || too_wide {
            spans.push(Span::raw(clean_line(short(key))));
            let mut line = Line::from(spans);
            if selected && focused {
                line = line.style(theme.selected);
            }
            out.push(line);
            let mut second = vec![Span::raw("   ")];
            second.extend(value);
            out.push(Line::from(second));
        } else {
            spans.push(Span::raw(pad(&clean_line(short(key)), name_width)));
            spans.push(Span::raw(" "));
            spans.extend(value);
            let mut line = Line::from(spans);
            if selected && focused {
                line = line.style(theme.selected);
            }
            out.push(line);
        }
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

/// How rows fit the panel's width, so that every name and value shows whole: name, bar and
/// value on one line; without the bar (which only repeats the number); or, in a panel too
/// narrow even for that, the name on one line and the bar and value under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    OneLine,
    NoBar,
    TwoLines,
}

impl Fit {
    fn choose(width: usize, name_width: usize, value_width: usize) -> Self {
        // A leading space, the name, a space, then the value (after the bar and a space).
        let without_bar = 1 + name_width + 1 + value_width;
        let with_bar = without_bar + BAR + 1;
        if with_bar <= width {
            Self::OneLine
        } else if without_bar <= width {
            Self::NoBar
        } else {
            Self::TwoLines
        }
    }
}

/// A value as text, as [`value_spans`] shows it without its bar (with the rubric score).
fn value_text(value: &SignalValue, score: Option<u8>) -> String {
    let text = match value {
        SignalValue::Number(n) => format_number(*n),
        SignalValue::Bool(true) => "● yes".to_owned(),
        SignalValue::Bool(false) => "○ no".to_owned(),
        SignalValue::Category(c) => clean_line(c),
    };
    match score {
        Some(s) => format!("{text} {s}/5"),
        None => text,
    }
}

/// A value's spans; `scale` is the pool's largest count for count signals.
fn value_spans(
    value: &SignalValue,
    scale: Option<f64>,
    with_bar: bool,
    theme: &crate::tui::theme::Theme,
) -> Vec<Span<'static>> {
    match value {
        SignalValue::Number(n) if with_bar => {
            let fraction = scale.map_or(*n, |max| n.abs() / max);
            let mut spans = bar(fraction, BAR, theme);
            spans.push(Span::raw(format!(" {}", format_number(*n))));
            spans
        }
        SignalValue::Number(n) => vec![Span::raw(format_number(*n))],
        SignalValue::Bool(true) => vec![Span::styled("● yes", theme.positive)],
        SignalValue::Bool(false) => vec![Span::styled("○ no", theme.dim)],
        SignalValue::Category(c) => vec![Span::styled(clean_line(c), theme.category)],
    }
}

#[cfg(test)]
mod tests {
    use ratatui::style::Modifier;

    use super::*;
    use crate::tui::app::{KeyFocus, Mode};
    use crate::tui::panels::fixture::{self, draw, inside, rows};

    fn panel(app: &App, width: u16, height: u16) -> Buffer {
        draw(&SignalsPanel::new(app), width, height)
    }

    #[test]
    fn pools_in_catalogue_order_with_bars_values_and_rubric_scores() {
        let app = fixture::app(Mode::Respondent);
        let buf = panel(&app, 50, 16);
        let top = &rows(&buf)[0];
        assert!(
            top.starts_with("╭ Signals ") && top.ends_with(" turn 2 ╮"),
            "{top}"
        );
        // Names are padded to the longest (29 columns); a count fills its bar against the
        // largest count of its pool (4), a unit value against 1.
        let expected = [
            "graph".to_owned(),
            format!(" {:<29} ████████ 4", "node_count"),
            format!(" {:<29} ██████░░ 3", "edge_count"),
            " chain_completion.has_complete ● yes".to_owned(),
            "llm".to_owned(),
            format!(" {:<29} deep", "response_depth"),
            format!(" {:<29} ██████░░ 0.8 4/5", "engagement"),
            "temporal".to_owned(),
            format!(" {:<29} ███░░░░░ 0.4", "strategy_repetition_count"),
            "meta".to_owned(),
            format!(" {:<29} early", "interview.phase"),
            format!(" {:<29} ██░░░░░░ 0.25", "conversation.saturation"),
            String::new(),
            String::new(),
        ];
        assert_eq!(inside(&buf), expected);
    }

    #[test]
    fn a_panel_too_narrow_for_bars_drops_them_and_keeps_every_name_and_value_whole() {
        let app = fixture::app(Mode::Respondent);
        let rows = inside(&panel(&app, 44, 16));
        assert_eq!(rows[1], format!(" {:<29} 4", "node_count"));
        assert_eq!(rows[3], " chain_completion.has_complete ● yes");
        assert_eq!(rows[6], format!(" {:<29} 0.8 4/5", "engagement"));
        assert_eq!(rows[8], " strategy_repetition_count     0.4");
    }

    #[test]
    fn a_long_category_takes_a_second_line_of_its_own() {
        let mut app = fixture::app(Mode::Respondent);
        app.model.last.as_mut().unwrap().signals.insert(
            "graph.turn.top_new_type".to_owned(),
            SignalValue::category("psychosocial_consequence"),
        );
        let rows = inside(&panel(&app, 50, 18));
        assert_eq!(rows[1], format!(" {:<29} ████████ 4", "node_count"));
        assert_eq!(rows[4], " turn.top_new_type");
        assert_eq!(rows[5], "   psychosocial_consequence");
        assert_eq!(rows[7], format!(" {:<29} deep", "response_depth"));
    }

    #[test]
    fn a_panel_too_narrow_for_a_row_puts_the_value_under_the_name() {
        let app = fixture::app(Mode::Respondent);
        let rows = inside(&panel(&app, 34, 24));
        assert_eq!(rows[1], " node_count");
        assert_eq!(rows[2], "   ████████ 4");
        assert_eq!(rows[5], " chain_completion.has_complete");
        assert_eq!(rows[6], "   ● yes");
        assert_eq!(rows[11], "   ██████░░ 0.8 4/5");
    }

    #[test]
    fn the_selected_row_is_highlighted_and_an_expanded_one_explains_itself() {
        let mut app = fixture::app(Mode::Respondent);
        app.ui.focus = KeyFocus::Panel(PanelId::Signals);
        app.ui.signals.selected = 1;
        app.ui.signals.expanded.insert("llm.engagement".to_owned());
        let buf = panel(&app, 60, 18);
        let reversed = |y: u16| buf[(2, y)].modifier.contains(Modifier::REVERSED);
        // Row 1 inside the frame is node_count, row 2 edge_count (signal 1).
        assert!(!reversed(2) && reversed(3) && !reversed(4));
        let rows = inside(&buf);
        assert_eq!(rows[6], format!(" {:<29} ██████░░ 0.8 4/5", "engagement"));
        assert_eq!(rows[7], "    willingness to engage");
        assert_eq!(rows[8], "    rationale: answers readily and adds detail");
        assert_eq!(rows[9], "temporal");
    }

    #[test]
    fn before_the_first_turn_the_panel_says_when_signals_appear() {
        let app = fixture::empty_app(Mode::Respondent);
        let rows = inside(&panel(&app, 44, 6));
        assert_eq!(rows[0], strings::NO_TURN_YET);
        assert!(rows[1..].iter().all(String::is_empty), "{rows:?}");
    }
}
