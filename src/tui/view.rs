//! The whole screen: status bar, tabs where panels share space, the panels (or the graph
//! view), the answer box, the hint line, and the topmost popup. A read of the [`App`] only.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::app::{App, KeyFocus};
use super::layout::{self, PanelId, Shape};
use super::panels::status::AnswerBox;
use super::panels::{
    ConversationPanel, FocusTracePanel, GraphStatsPanel, GraphView, HintBar, ScorePanel,
    SignalsPanel, StatusBar,
};
use super::{popups, strings};

impl Widget for &App {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let areas = layout::areas(area, self.ui.tab);
        (&StatusBar::new(self)).render(areas.status, buf);
        if self.ui.graph_view.is_some() {
            (&GraphView::new(self)).render(areas.body, buf);
        } else {
            if let Some(tabs) = areas.tabs {
                render_tabs(self, Shape::of(area), tabs, buf);
            }
            for (id, rect) in &areas.panels {
                render_panel(self, *id, *rect, buf);
            }
            (&AnswerBox::new(self)).render(areas.answer, buf);
        }
        (&HintBar::new(self)).render(areas.hint, buf);
        popups::render_top(self, area, buf);
    }
}

/// Draws one panel by id.
pub fn render_panel(app: &App, id: PanelId, area: Rect, buf: &mut Buffer) {
    match id {
        PanelId::Conversation => (&ConversationPanel::new(app)).render(area, buf),
        PanelId::Signals => (&SignalsPanel::new(app)).render(area, buf),
        PanelId::Scores => (&ScorePanel::new(app)).render(area, buf),
        PanelId::GraphStats => (&GraphStatsPanel::new(app)).render(area, buf),
        PanelId::FocusTrace => (&FocusTracePanel::new(app)).render(area, buf),
    }
}

fn render_tabs(app: &App, shape: Shape, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let shown = if shape == Shape::Medium && app.ui.tab == PanelId::Conversation {
        PanelId::Scores
    } else {
        app.ui.tab
    };
    let mut spans = Vec::new();
    for id in PanelId::ALL {
        if shape == Shape::Medium && id == PanelId::Conversation {
            continue;
        }
        let name = strings::TABS.get(id.index()).copied().unwrap_or_default();
        let style = if id == shown {
            theme.tab_active
        } else {
            theme.tab
        };
        let focus = if app.ui.focus == KeyFocus::Panel(id) {
            "▸"
        } else {
            " "
        };
        spans.push(Span::styled(
            format!("{focus}{} {name} ", id.index() + 1),
            style,
        ));
    }
    Line::from(spans).render(area, buf);
}
