//! Where everything goes for a terminal size. Three shapes: wide terminals show every panel at
//! once, medium ones keep the conversation beside one tabbed panel, and narrow or short ones
//! (down to 80×24) show one tabbed pane. The app uses the same computation to route mouse
//! wheel events to the panel under the pointer.

use ratatui::layout::{Constraint, Layout, Rect};

/// The five panels, in tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PanelId {
    Conversation,
    Signals,
    Scores,
    GraphStats,
    FocusTrace,
}

impl PanelId {
    pub const ALL: [PanelId; 5] = [
        PanelId::Conversation,
        PanelId::Signals,
        PanelId::Scores,
        PanelId::GraphStats,
        PanelId::FocusTrace,
    ];

    pub fn index(self) -> usize {
        match self {
            Self::Conversation => 0,
            Self::Signals => 1,
            Self::Scores => 2,
            Self::GraphStats => 3,
            Self::FocusTrace => 4,
        }
    }

    pub fn from_index(i: usize) -> Self {
        Self::ALL.get(i).copied().unwrap_or(Self::Conversation)
    }
}

/// How the screen is arranged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Every panel visible.
    Wide,
    /// Conversation plus one tabbed panel.
    Medium,
    /// One tabbed pane.
    Compact,
}

/// Smallest size that shows every panel at once.
const WIDE_MIN: (u16, u16) = (140, 34);
/// Smallest size that keeps the conversation beside a panel.
const MEDIUM_MIN: (u16, u16) = (110, 28);

impl Shape {
    pub fn of(area: Rect) -> Self {
        if area.width >= WIDE_MIN.0 && area.height >= WIDE_MIN.1 {
            Self::Wide
        } else if area.width >= MEDIUM_MIN.0 && area.height >= MEDIUM_MIN.1 {
            Self::Medium
        } else {
            Self::Compact
        }
    }
}

/// The computed areas of one frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Areas {
    pub status: Rect,
    /// The tab bar, in shapes that have one.
    pub tabs: Option<Rect>,
    pub answer: Rect,
    pub hint: Rect,
    /// The whole body (the graph view and overlays use it).
    pub body: Rect,
    /// Visible panels and where they are.
    pub panels: Vec<(PanelId, Rect)>,
}

impl Areas {
    pub fn panel(&self, id: PanelId) -> Option<Rect> {
        self.panels.iter().find(|(p, _)| *p == id).map(|(_, r)| *r)
    }

    /// The visible panel under a screen position.
    pub fn panel_at(&self, column: u16, row: u16) -> Option<PanelId> {
        let pos = ratatui::layout::Position::new(column, row);
        self.panels
            .iter()
            .find(|(_, r)| r.contains(pos))
            .map(|(p, _)| *p)
    }
}

/// Lays out a frame of `area`; `tab` is the panel shown where panels share space.
pub fn areas(area: Rect, tab: PanelId) -> Areas {
    let shape = Shape::of(area);
    let answer_rows = if shape == Shape::Compact { 4 } else { 5 };
    let [status, body, hint] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let mut out = Areas {
        status,
        hint,
        body,
        ..Areas::default()
    };
    match shape {
        Shape::Wide => wide(&mut out, body, answer_rows),
        Shape::Medium => medium(&mut out, body, answer_rows, tab),
        Shape::Compact => compact(&mut out, body, answer_rows, tab),
    }
    out
}

fn wide(out: &mut Areas, body: Rect, answer_rows: u16) {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(46), Constraint::Percentage(54)]).areas(body);
    let [conversation, answer] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(answer_rows)]).areas(left);
    let [scores, lower] =
        Layout::vertical([Constraint::Percentage(42), Constraint::Percentage(58)]).areas(right);
    // Signals gets the larger share: its longest names (`chain_completion.has_complete`) and
    // values (`moderate 3/5`) must show whole; the Graph and Focus trace rows wrap or truncate
    // labels instead.
    let [signals, side] =
        Layout::horizontal([Constraint::Percentage(56), Constraint::Percentage(44)]).areas(lower);
    let [graph, focus] =
        Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(side);
    out.answer = answer;
    out.panels = vec![
        (PanelId::Conversation, conversation),
        (PanelId::Scores, scores),
        (PanelId::Signals, signals),
        (PanelId::GraphStats, graph),
        (PanelId::FocusTrace, focus),
    ];
}

fn medium(out: &mut Areas, body: Rect, answer_rows: u16, tab: PanelId) {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body);
    let [conversation, answer] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(answer_rows)]).areas(left);
    let [tabs, panel] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(right);
    let shown = if tab == PanelId::Conversation {
        PanelId::Scores
    } else {
        tab
    };
    out.answer = answer;
    out.tabs = Some(tabs);
    out.panels = vec![(PanelId::Conversation, conversation), (shown, panel)];
}

fn compact(out: &mut Areas, body: Rect, answer_rows: u16, tab: PanelId) {
    let [tabs, panel, answer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(answer_rows),
    ])
    .areas(body);
    out.answer = answer;
    out.tabs = Some(tabs);
    out.panels = vec![(tab, panel)];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_by_size() {
        assert_eq!(Shape::of(Rect::new(0, 0, 160, 48)), Shape::Wide);
        assert_eq!(Shape::of(Rect::new(0, 0, 120, 40)), Shape::Medium);
        assert_eq!(Shape::of(Rect::new(0, 0, 80, 24)), Shape::Compact);
        assert_eq!(Shape::of(Rect::new(0, 0, 200, 24)), Shape::Compact);
    }

    #[test]
    fn every_area_fits_inside_the_screen() {
        for (w, h) in [(80, 24), (120, 40), (160, 48), (60, 10)] {
            let screen = Rect::new(0, 0, w, h);
            for tab in PanelId::ALL {
                let a = areas(screen, tab);
                for r in [a.status, a.answer, a.hint]
                    .into_iter()
                    .chain(a.panels.iter().map(|(_, r)| *r))
                {
                    assert_eq!(screen.intersection(r), r, "{w}x{h} {tab:?}");
                }
            }
        }
        let wide = areas(Rect::new(0, 0, 160, 48), PanelId::Conversation);
        assert_eq!(wide.panels.len(), 5);
        assert_eq!(wide.panel_at(1, 2), Some(PanelId::Conversation), "{wide:?}");
    }
}
