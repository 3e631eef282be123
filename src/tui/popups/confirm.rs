//! Yes/no questions: quitting (the session stays resumable) and ending the interview now.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::window;
use crate::tui::app::App;
use crate::tui::panels::frame_for_popup;
use crate::tui::sanitize::clean_line;

/// A yes/no popup.
#[derive(Debug)]
pub struct ConfirmPopup<'a> {
    app: &'a App,
    title: &'static str,
    question: String,
    detail: String,
}

impl<'a> ConfirmPopup<'a> {
    /// "Quit?", saying how to come back.
    pub fn quit(app: &'a App) -> Self {
        let detail = if app.model.finished.is_some() {
            "The interview is over and saved.".to_owned()
        } else {
            format!(
                "The session stays resumable: interviewer resume {}",
                clean_line(&app.info.session_id)
            )
        };
        Self {
            app,
            title: "Quit",
            question: "Quit? (y/n)".to_owned(),
            detail,
        }
    }

    /// "End the interview now?"
    pub fn end_interview(app: &'a App) -> Self {
        Self {
            app,
            title: "End interview",
            question: "End the interview now? (y/n)".to_owned(),
            detail: "Everything said so far is kept; no more questions are asked.".to_owned(),
        }
    }
}

impl Widget for &ConfirmPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = &self.app.theme;
        let rect = window(area, 60, 6, buf);
        let block = frame_for_popup(self.title, theme);
        let inner = block.inner(rect);
        block.render(rect, buf);
        Paragraph::new(vec![
            Line::from(Span::styled(self.question.clone(), theme.title)),
            Line::from(Span::styled(self.detail.clone(), theme.dim)),
        ])
        .wrap(Wrap { trim: true })
        .render(inner, buf);
    }
}
