//! The help overlay: every key binding by context, from [`strings::HELP`].

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::window;
use crate::tui::app::App;
use crate::tui::panels::{frame_for_popup, scrolled};
use crate::tui::strings;
use crate::tui::text::pad;

/// Width of the keys column.
const KEYS: usize = 24;

/// The help overlay.
#[derive(Debug)]
pub struct HelpPopup<'a> {
    app: &'a App,
}

impl<'a> HelpPopup<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &HelpPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = &self.app.theme;
        let mut lines = Vec::new();
        for (section, rows) in strings::HELP {
            if !lines.is_empty() {
                lines.push(Line::default());
            }
            lines.push(Line::from(Span::styled(*section, theme.title)));
            for (keys, what) in *rows {
                lines.push(Line::from(vec![
                    Span::styled(pad(keys, KEYS), theme.key),
                    Span::raw(*what),
                ]));
            }
        }
        let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
        let rect = window(area, 84, height, buf);
        let block = frame_for_popup("Keys — ↑↓ scroll · Esc closes", theme);
        let inner = block.inner(rect);
        block.render(rect, buf);
        scrolled(lines, self.app.ui.help_scroll, inner, buf);
    }
}
