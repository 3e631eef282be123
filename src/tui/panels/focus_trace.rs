//! The focus trace: one row per completed turn, newest first — turn, strategy and the focus
//! node's label (empty for turn 1 and node-free strategies), with researcher overrides marked.
//! Scrolls across the whole interview.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::{empty_note, frame, has_focus, scrolled};
use crate::tui::app::App;
use crate::tui::layout::PanelId;
use crate::tui::sanitize::clean_line;
use crate::tui::strings;
use crate::tui::text::{pad, truncate};

/// The focus trace panel.
#[derive(Debug)]
pub struct FocusTracePanel<'a> {
    app: &'a App,
}

impl<'a> FocusTracePanel<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &FocusTracePanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        let focused = has_focus(app, PanelId::FocusTrace);
        let mut block = frame(strings::FOCUS_TRACE, theme, focused);
        let overrides = app
            .model
            .snapshot
            .as_ref()
            .is_some_and(|s| s.focus_history.iter().any(|e| e.overridden));
        if overrides {
            block = block.title(
                Line::from(Span::styled(" ✎ researcher override ", theme.warning)).right_aligned(),
            );
        }
        let inner = block.inner(area);
        block.render(area, buf);
        let all = app
            .model
            .snapshot
            .as_ref()
            .map(|s| s.focus_history.as_slice())
            .unwrap_or_default();
        // Stepped back to a turn: the trace as it stood then.
        let history: Vec<_> = all
            .iter()
            .filter(|e| app.model.viewing.is_none_or(|v| e.turn <= v))
            .collect();
        if history.is_empty() {
            empty_note(inner, buf, strings::NO_TURN_YET, theme);
            return;
        }
        let width = usize::from(inner.width);
        let strategy_width = history
            .iter()
            .map(|e| e.strategy.chars().count())
            .max()
            .unwrap_or(8)
            .min(width / 2);
        let any_override = history.iter().any(|e| e.overridden);
        let mark_width = if any_override { 2 } else { 0 };
        let label_width = width.saturating_sub(strategy_width + mark_width + 6);
        let lines: Vec<Line<'static>> = history
            .iter()
            .rev()
            .map(|e| {
                let label = if e.label.is_empty() {
                    "—".to_owned()
                } else {
                    truncate(&clean_line(&e.label), label_width)
                };
                let mut spans = vec![
                    Span::styled(format!("T{:<3} ", e.turn), theme.dim),
                    Span::raw(pad(&clean_line(&e.strategy), strategy_width)),
                    Span::raw(" "),
                    Span::styled(pad(&label, label_width), theme.category),
                ];
                if e.overridden {
                    spans.push(Span::styled(" ✎", theme.warning));
                }
                Line::from(spans)
            })
            .collect();
        scrolled(lines, app.ui.focus_scroll, inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::app::Mode;
    use crate::tui::panels::fixture::{self, draw, inside, rows};

    fn panel(app: &App, width: u16, height: u16) -> Buffer {
        draw(&FocusTracePanel::new(app), width, height)
    }

    #[test]
    fn newest_turn_first_with_strategy_and_focus_label() {
        let app = fixture::app(Mode::Respondent);
        let buf = panel(&app, 40, 5);
        let top = &rows(&buf)[0];
        assert!(
            top.starts_with("╭ Focus trace ") && !top.contains('✎'),
            "{top}"
        );
        // Strategy names padded to the longest; turn 1's broad question had no focus node.
        assert_eq!(
            inside(&buf),
            ["T2   deepen  creamy texture", "T1   broaden —", ""]
        );
    }

    #[test]
    fn a_researcher_override_is_marked_on_its_row_and_in_the_title() {
        let mut app = fixture::app(Mode::Respondent);
        let mut snapshot = fixture::snapshot();
        snapshot.focus_history[1].overridden = true;
        app.apply(crate::session::SessionEvent::Snapshot(std::sync::Arc::new(
            snapshot,
        )));
        let buf = panel(&app, 40, 5);
        assert!(
            rows(&buf)[0].ends_with(" ✎ researcher override ╮"),
            "{}",
            rows(&buf)[0]
        );
        let rows = inside(&buf);
        assert_eq!(rows[0], format!("T2   deepen  {:<23} ✎", "creamy texture"));
        assert_eq!(rows[1], "T1   broaden —");
    }

    #[test]
    fn narrow_panels_cut_the_label_with_an_ellipsis() {
        let app = fixture::app(Mode::Respondent);
        let rows = inside(&panel(&app, 24, 5));
        assert_eq!(rows[0], "T2   deepen  creamy t…");
    }

    #[test]
    fn before_the_first_turn_the_trace_says_when_it_fills() {
        let rows = inside(&panel(&fixture::empty_app(Mode::Respondent), 40, 4));
        assert_eq!(rows[0], strings::NO_TURN_YET);
    }
}
