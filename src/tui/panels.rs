//! The panels: each a read-only widget over the [`App`], drawn where the layout puts it.
//!
//! Every panel takes `&App` and draws; none changes state. Row lists that keys navigate
//! (signals, score decomposition) expose the same row keys the key handler uses, so what is
//! selected is what is drawn.

pub mod conversation;
#[cfg(test)]
pub(crate) mod fixture;
pub mod focus_trace;
pub mod graph_stats;
pub mod graph_view;
pub mod score;
pub mod signals;
pub mod status;

use ratatui::buffer::Buffer;
use ratatui::layout::{Margin, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Scrollbar, ScrollbarOrientation, ScrollbarState};
use ratatui::widgets::{StatefulWidget, Widget};

pub use conversation::ConversationPanel;
pub use focus_trace::FocusTracePanel;
pub use graph_stats::GraphStatsPanel;
pub use graph_view::GraphView;
pub use score::ScorePanel;
pub use signals::SignalsPanel;
pub use status::{AnswerBox, HintBar, StatusBar};

use super::app::{App, KeyFocus};
use super::layout::PanelId;
use super::theme::Theme;

/// A panel's frame: rounded when it has the keyboard, its title in the title style.
pub(crate) fn frame<'a>(title: &'a str, theme: &Theme, focused: bool) -> Block<'a> {
    let (border, kind) = if focused {
        (theme.border_focused, BorderType::Thick)
    } else {
        (theme.border, BorderType::Rounded)
    };
    Block::bordered()
        .border_type(kind)
        .border_style(border)
        .title(Line::from(Span::styled(format!(" {title} "), theme.title)))
}

/// Whether `panel` has the keyboard.
pub(crate) fn has_focus(app: &App, panel: PanelId) -> bool {
    app.ui.focus == KeyFocus::Panel(panel)
}

/// Draws `lines` into `area` from row `offset`, with a scrollbar on the right border when they
/// do not fit.
pub(crate) fn scrolled(lines: Vec<Line<'_>>, offset: usize, area: Rect, buf: &mut Buffer) {
    let height = usize::from(area.height);
    let total = lines.len();
    let offset = offset.min(total.saturating_sub(height));
    for (row, line) in lines.into_iter().skip(offset).take(height).enumerate() {
        let y = area.y + u16::try_from(row).unwrap_or(u16::MAX);
        buf.set_line(area.x, y, &line, area.width);
    }
    if total > height {
        let mut state = ScrollbarState::new(total.saturating_sub(height))
            .viewport_content_length(height)
            .position(offset);
        let bar = Scrollbar::new(ScrollbarOrientation::VerticalRight)
            .begin_symbol(None)
            .end_symbol(None);
        let track = area.outer(Margin::new(1, 0));
        StatefulWidget::render(bar, track, buf, &mut state);
    }
}

/// The first row to show so that `selected` is visible in `height` rows.
pub(crate) fn follow(selected: usize, height: usize) -> usize {
    selected.saturating_sub(height.saturating_sub(1))
}

/// A small horizontal bar of `width` cells for `fraction` in [0, 1].
pub(crate) fn bar(fraction: f64, width: usize, theme: &Theme) -> Vec<Span<'static>> {
    let f = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        0.0
    };
    // Rounded to the nearest cell; the value itself is printed beside the bar.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let filled = ((f * width as f64).round() as usize).min(width);
    vec![
        Span::styled("█".repeat(filled), theme.bar),
        Span::styled("░".repeat(width - filled), theme.bar_empty),
    ]
}

/// A placeholder line for an empty panel.
pub(crate) fn empty_note(area: Rect, buf: &mut Buffer, text: &str, theme: &Theme) {
    Line::from(Span::styled(text.to_owned(), theme.dim)).render(area, buf);
}

/// A popup's frame: double border in the focus colour.
pub(crate) fn frame_for_popup<'a>(title: &'a str, theme: &Theme) -> Block<'a> {
    Block::bordered()
        .border_type(BorderType::Double)
        .border_style(theme.border_focused)
        .title(Line::from(Span::styled(format!(" {title} "), theme.title)))
}
