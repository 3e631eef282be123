//! The conversation: questions and answers with speaker headers, wrapped to the panel, the
//! question being generated as it streams, and a moderator's proposal marked as such.
//!
//! Questions are numbered by the answer they ask for: the opening question is Q1 and is
//! answered by A1 (pipeline turn 1).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::{frame, has_focus, scrolled};
use crate::domain::Speaker;
use crate::tui::app::{App, Mode};
use crate::tui::layout::PanelId;
use crate::tui::model::Message;
use crate::tui::strings;
use crate::tui::text::wrap;

/// Columns of indentation before message text.
const INDENT: &str = "  ";

/// The conversation panel.
#[derive(Debug)]
pub struct ConversationPanel<'a> {
    app: &'a App,
}

impl<'a> ConversationPanel<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &ConversationPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let focused = has_focus(app, PanelId::Conversation);
        let block = frame(strings::CONVERSATION, &app.theme, focused);
        let inner = block.inner(area);
        block.render(area, buf);
        let (lines, viewed) = lines(app, usize::from(inner.width));
        let height = usize::from(inner.height);
        let bottom = lines.len().saturating_sub(height);
        // Stepped back to a turn: its answer at the top (as far as the rows allow).
        let offset = viewed.map_or_else(
            || bottom.saturating_sub(app.ui.conversation_scroll),
            |row| row.min(bottom),
        );
        scrolled(lines, offset, inner, buf);
    }
}

/// How far the conversation can scroll up at the current size.
pub fn max_scroll(app: &App) -> usize {
    let areas = app.areas();
    let Some(area) = areas.panel(PanelId::Conversation) else {
        return 0;
    };
    let inner_width = usize::from(area.width.saturating_sub(2));
    let inner_height = usize::from(area.height.saturating_sub(2));
    lines(app, inner_width).0.len().saturating_sub(inner_height)
}

/// Every row of the conversation at `width` columns, and the first row of the viewed turn
/// when the researcher stepped back to one.
fn lines(app: &App, width: usize) -> (Vec<Line<'static>>, Option<usize>) {
    let theme = &app.theme;
    let model = &app.model;
    let text_width = width.saturating_sub(INDENT.len() + 1).max(8);
    let mut out = Vec::new();
    let mut viewed_row = None;
    let streaming = model.streaming.as_ref();
    for m in &model.conversation {
        let replaced =
            streaming.is_some_and(|(t, _)| *t == m.turn) && m.speaker == Speaker::Interviewer;
        if replaced {
            continue;
        }
        let proposal = app.mode == Mode::Moderator
            && m.speaker == Speaker::Interviewer
            && app.proposal_pending()
            && model.question_turn == Some(m.turn);
        // The viewed turn is its answer and the question that followed it.
        let viewed = model.viewing == Some(m.turn);
        if viewed && viewed_row.is_none() {
            viewed_row = Some(out.len());
        }
        push_message(&mut out, app, m, (proposal, viewed), text_width);
    }
    if let Some((turn, text)) = streaming {
        let header = Line::from(vec![
            Span::styled(strings::INTERVIEWER, theme.interviewer),
            Span::styled(format!(" · Q{} · writing…", turn + 1), theme.dim),
        ]);
        out.push(header);
        push_body(&mut out, &format!("{text}▍"), theme.streaming, text_width);
        out.push(Line::default());
    }
    if out.is_empty() {
        out.push(Line::from(Span::styled(
            "The opening question appears here.",
            theme.dim,
        )));
    }
    (out, viewed_row)
}

fn push_message(
    out: &mut Vec<Line<'static>>,
    app: &App,
    m: &Message,
    (proposal, viewed): (bool, bool),
    width: usize,
) {
    let theme = &app.theme;
    let (name, style, tag) = match m.speaker {
        Speaker::Interviewer => (
            strings::INTERVIEWER,
            theme.interviewer,
            format!("Q{}", m.turn + 1),
        ),
        Speaker::Respondent => (
            strings::RESPONDENT,
            theme.respondent,
            format!("A{}", m.turn),
        ),
    };
    let mut header = vec![
        Span::styled(name, style),
        Span::styled(format!(" · {tag}"), theme.dim),
    ];
    if proposal {
        header.push(Span::styled(" · proposed", theme.proposal));
    }
    if viewed {
        header.insert(0, Span::styled("▶ ", theme.winner));
        header.push(Span::styled(" · viewing this turn", theme.winner));
    }
    out.push(Line::from(header));
    if let Some(note) = &m.note {
        for row in wrap(&format!("↻ {note}"), width) {
            out.push(Line::from(vec![
                Span::raw(INDENT),
                Span::styled(row, theme.warning),
            ]));
        }
    }
    let body_style = if proposal { theme.proposal } else { theme.text };
    push_body(out, &m.text, body_style, width);
    out.push(Line::default());
}

fn push_body(out: &mut Vec<Line<'static>>, text: &str, style: Style, width: usize) {
    for row in wrap(text, width) {
        out.push(Line::from(vec![
            Span::raw(INDENT),
            Span::styled(row, style),
        ]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Event;
    use crate::tui::panels::fixture::{self, draw, inside, rows};

    fn panel(app: &App, width: u16, height: u16) -> ratatui::buffer::Buffer {
        draw(&ConversationPanel::new(app), width, height)
    }

    #[test]
    fn questions_and_answers_in_turn_order_wrapped_to_the_panel() {
        let app = fixture::app(Mode::Respondent);
        let buf = panel(&app, 40, 21);
        assert!(rows(&buf)[0].starts_with("╭ Conversation "));
        // Questions are numbered by the answer they ask for; text wraps at 35 columns.
        let expected = [
            "Interviewer · Q1",
            "  What comes to mind when you think",
            "  about oat milk?",
            "",
            "Respondent · A1",
            "  It is creamy and it is cheaper than",
            "  dairy where I live.",
            "",
            "Interviewer · Q2",
            "  What does the creamy texture give",
            "  you?",
            "",
            "Respondent · A2",
            "  A calm start to the morning.",
            "",
            "Interviewer · Q3",
            "  Why does a calm morning matter to",
            "  you?",
            "",
        ];
        assert_eq!(inside(&buf), expected);
    }

    #[test]
    fn the_newest_rows_show_and_a_streaming_question_has_a_cursor() {
        let mut app = fixture::app(Mode::Respondent);
        app.apply(crate::session::SessionEvent::AnswerReceived {
            turn: 3,
            text: "Because I work better.".to_owned(),
        });
        app.apply(Event::QuestionDelta {
            turn: 3,
            text: "What makes".to_owned(),
        });
        let rows = inside(&panel(&app, 40, 8));
        assert_eq!(
            rows,
            [
                "Respondent · A3",
                "  Because I work better.",
                "",
                "Interviewer · Q4 · writing…",
                "  What makes▍",
                "",
            ]
        );
    }

    #[test]
    fn a_moderators_pending_question_is_marked_as_a_proposal() {
        let app = fixture::app(Mode::Moderator);
        let rows = inside(&panel(&app, 40, 21));
        assert_eq!(rows[15], "Interviewer · Q3 · proposed");
        assert_eq!(rows[8], "Interviewer · Q2", "only the pending question");
    }

    #[test]
    fn an_empty_conversation_says_where_the_opening_question_appears() {
        let rows = inside(&panel(&fixture::empty_app(Mode::Respondent), 40, 4));
        assert_eq!(rows[0], "The opening question appears here.");
    }
}
