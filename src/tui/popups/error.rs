//! A failed turn (stage and message, retry or end the interview), a failed override (keep the
//! current question), or a session that cannot go on.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::window;
use crate::tui::app::App;
use crate::tui::model::Work;
use crate::tui::panels::frame_for_popup;

/// Widest the popup gets.
const WIDTH: u16 = 76;

/// The error popup.
#[derive(Debug)]
pub struct ErrorPopup<'a> {
    app: &'a App,
}

impl<'a> ErrorPopup<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &ErrorPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        let (title, lines) = if let Some(fatal) = &app.model.fatal {
            (
                "Session stopped".to_owned(),
                vec![
                    Line::from(Span::styled(fatal.clone(), theme.error)),
                    Line::default(),
                    Line::from(Span::styled(
                        "q quit — the session is saved up to its last checkpoint",
                        theme.key,
                    )),
                ],
            )
        } else if let Some(f) = &app.model.failure {
            let (title, keys) = if f.work == Work::Override {
                (
                    "Changing the question failed".to_owned(),
                    "r retry · Esc keep the current question · q quit",
                )
            } else {
                (
                    format!("Turn {} failed", f.turn),
                    "r retry · x end the interview · q quit (resumable)",
                )
            };
            (
                title,
                vec![
                    Line::from(vec![
                        Span::styled("stage ", theme.dim),
                        Span::styled(
                            format!("{} {}", f.stage.number(), f.stage.name()),
                            theme.warning,
                        ),
                    ]),
                    Line::from(Span::styled(f.error.clone(), theme.error)),
                    Line::default(),
                    Line::from(Span::styled(keys, theme.key)),
                ],
            )
        } else {
            return;
        };
        let width = area.width.min(WIDTH);
        let inner_width = width.saturating_sub(2);
        // Wrapped rows, so the window fits the message exactly.
        let rows: usize = lines
            .iter()
            .map(|l| l.width().max(1).div_ceil(usize::from(inner_width.max(1))))
            .sum();
        let height = u16::try_from(rows + 2).unwrap_or(u16::MAX);
        let rect = window(area, width, height, buf);
        let block = frame_for_popup(&title, theme);
        let inner = block.inner(rect);
        block.render(rect, buf);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }
}
