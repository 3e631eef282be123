//! Terminal input to state changes: keys by what has the keyboard (the graph view, the answer
//! box or a panel; popups are in `popup_keys`), pasted text, mouse wheel and resizes. Bindings
//! are listed for users in [`crate::tui::strings::HELP`]; keep the two in step.

use crossterm::event::{
    Event as CtEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;

use super::{Action, App, GraphViewUi, KeyFocus, Mode, Popup};
use crate::tui::layout::PanelId;
use crate::tui::panels::{conversation, graph_stats, score, signals};
use crate::tui::sanitize;

/// Rows one mouse wheel notch scrolls.
const WHEEL_ROWS: usize = 3;

/// Rows `PageUp` and `PageDown` scroll.
pub(super) const PAGE_ROWS: usize = 10;

/// Upper bound of the node inspector's scroll; drawing clamps to the real length, this only
/// keeps `PageUp` from having to undo a long run of `PageDown`s.
const INSPECTOR_ROWS: usize = 200;

impl App {
    pub(super) fn input_event(&mut self, event: CtEvent) -> Vec<Action> {
        match event {
            CtEvent::Key(key) if key.kind != KeyEventKind::Release => self.key(key),
            CtEvent::Paste(text) => {
                self.paste(&text);
                Vec::new()
            }
            CtEvent::Mouse(mouse) => {
                self.mouse(mouse);
                Vec::new()
            }
            CtEvent::Resize(w, h) => {
                self.ui.area = Rect::new(0, 0, w, h);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Pasted text arrives whole (bracketed paste) and goes into the answer box, sanitised,
    /// without being taken for keys (a pasted newline does not send).
    fn paste(&mut self, text: &str) {
        if self.ui.focus != KeyFocus::Answer || self.mode == Mode::Watch {
            return;
        }
        if self.proposal_pending() && !self.ui.editing {
            self.ui.flash = Some("accept or edit the proposed question before typing".to_owned());
            return;
        }
        let clean = sanitize::clean(&text.replace("\r\n", "\n"));
        self.input.insert_str(clean);
    }

    fn mouse(&mut self, mouse: MouseEvent) {
        let down = match mouse.kind {
            MouseEventKind::ScrollDown => true,
            MouseEventKind::ScrollUp => false,
            _ => return,
        };
        if self.ui.graph_view.is_some() || !self.ui.popups.is_empty() {
            return;
        }
        if let Some(panel) = self.areas().panel_at(mouse.column, mouse.row) {
            for _ in 0..WHEEL_ROWS {
                self.scroll(panel, down);
            }
        }
    }

    fn key(&mut self, key: KeyEvent) -> Vec<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            if self.ui.popups.first() == Some(&Popup::Quit) {
                return vec![Action::Quit];
            }
            self.open(Popup::Quit);
            return Vec::new();
        }
        if !self.ui.popups.is_empty() {
            return self.popup_key(key);
        }
        if self.ui.graph_view.is_some() {
            self.graph_key(key);
            return Vec::new();
        }
        if key.code == KeyCode::F(2) {
            return self.toggle_listening();
        }
        if self.global_key(key) {
            return Vec::new();
        }
        match self.ui.focus {
            KeyFocus::Answer => self.answer_key(key),
            KeyFocus::Panel(p) => self.panel_key(p, key),
        }
    }

    /// Keys that work whatever has the keyboard; true when handled.
    fn global_key(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::F(1) => self.open(Popup::Help),
            KeyCode::Char('g') if ctrl => self.ui.graph_view = Some(GraphViewUi::default()),
            KeyCode::Char(c @ '1'..='5') if alt => self.show_panel(digit(c)),
            KeyCode::Left if alt => self.model.step_view(true),
            KeyCode::Right if alt => self.model.step_view(false),
            KeyCode::Tab => self.cycle(true),
            KeyCode::BackTab => self.cycle(false),
            KeyCode::PageUp => self.scroll_by(PanelId::Conversation, false, PAGE_ROWS),
            KeyCode::PageDown => self.scroll_by(PanelId::Conversation, true, PAGE_ROWS),
            _ => return false,
        }
        true
    }

    fn answer_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let newline = (key.code == KeyCode::Enter && (alt || shift))
            || (ctrl && key.code == KeyCode::Char('j'));
        if !self.ui.editing && self.proposal_pending() {
            return self.proposal_key(key);
        }
        if key.code == KeyCode::Esc {
            if self.ui.editing {
                self.finish_editing();
            } else {
                self.ui.focus = KeyFocus::Panel(self.ui.tab);
            }
            return Vec::new();
        }
        self.ui.flash = None;
        if newline {
            self.input.insert_newline();
            return Vec::new();
        }
        if key.code == KeyCode::Enter {
            return if self.ui.editing {
                self.send_edit()
            } else {
                self.send_answer()
            };
        }
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            // As in a shell: Ctrl+U deletes back to the start of the line. The text area's
            // own binding for it is undo, which moves to Ctrl+Z.
            KeyCode::Char('u') if ctrl && !alt => {
                self.input.delete_line_by_head();
            }
            KeyCode::Char('z') if ctrl && !alt => {
                self.input.undo();
            }
            _ => {
                self.input.input(key);
            }
        }
        // A box emptied by hand no longer holds what was heard.
        if self.input.is_empty() {
            self.ui.heard = None;
        }
        Vec::new()
    }

    /// Moderator mode, a proposed question on screen: accept, edit or regenerate it.
    fn proposal_key(&mut self, key: KeyEvent) -> Vec<Action> {
        match key.code {
            KeyCode::Enter => self.accept_proposal(),
            KeyCode::Char('e') => self.start_editing(),
            KeyCode::Char('r') => self.open_regenerate(None, None),
            KeyCode::Esc => self.ui.focus = KeyFocus::Panel(self.ui.tab),
            KeyCode::Char('q') => self.open(Popup::Quit),
            KeyCode::Char('?') => self.open(Popup::Help),
            _ => {
                self.ui.flash =
                    Some("accept (Enter), edit (e) or regenerate (r) the question".to_owned());
            }
        }
        Vec::new()
    }

    fn panel_key(&mut self, panel: PanelId, key: KeyEvent) -> Vec<Action> {
        self.ui.flash = None;
        match key.code {
            KeyCode::Char('q') => self.open(Popup::Quit),
            KeyCode::Char('?') => self.open(Popup::Help),
            KeyCode::Char('g') => self.ui.graph_view = Some(GraphViewUi::default()),
            KeyCode::Char(c @ '1'..='5') => self.show_panel(digit(c)),
            KeyCode::Char('i' | 'a') | KeyCode::Esc if self.mode != Mode::Watch => {
                self.ui.focus = KeyFocus::Answer;
            }
            KeyCode::Char('x') if self.mode != Mode::Watch && self.model.finished.is_none() => {
                self.open(Popup::EndConfirm);
            }
            KeyCode::Char('e') if self.proposal_pending() => self.start_editing(),
            KeyCode::Char('r') if self.proposal_pending() => {
                let (strategy, node) = (panel == PanelId::Scores)
                    .then(|| score::selected_choice(&self.model, self.ui.scores.selected))
                    .flatten()
                    .unzip();
                self.open_regenerate(strategy.as_deref(), node.flatten().as_deref());
            }
            KeyCode::Down | KeyCode::Char('j') => self.scroll(panel, true),
            KeyCode::Up | KeyCode::Char('k') => self.scroll(panel, false),
            KeyCode::Home => self.scroll_by(panel, false, usize::MAX),
            KeyCode::End => self.scroll_by(panel, true, usize::MAX),
            KeyCode::Enter | KeyCode::Char(' ') => self.expand(panel),
            KeyCode::Char('w') if panel == PanelId::Scores => self.open_whatif(),
            code => {
                self.travel(code);
            }
        }
        Vec::new()
    }

    /// The what-if editor for the Score panel's selected strategy, re-scoring the viewed turn.
    fn open_whatif(&mut self) {
        let Some(rules) = self.info.rules.clone() else {
            self.ui.flash = Some("the methodology is not available in this view".to_owned());
            return;
        };
        let Some((strategy, _)) = score::selected_choice(&self.model, self.ui.scores.selected)
        else {
            self.ui.flash = Some("the weights open after the first answer".to_owned());
            return;
        };
        let Some(shown) = self.model.shown() else {
            return;
        };
        let phase = match shown.signals.get("meta.interview.phase") {
            Some(crate::domain::SignalValue::Category(c)) => crate::domain::Phase::parse(c),
            _ => None,
        };
        if let Some(state) =
            crate::tui::popups::WhatIfState::new(&rules, &strategy, shown.turn_number, phase)
        {
            self.ui.whatif = Some(state);
            self.open(Popup::WhatIf);
        }
    }

    /// Time travel through the completed turns: `[` and `]` step back and forward, `{` jumps
    /// to the first turn and `}` back to the latest; true when `code` was one of them.
    fn travel(&mut self, code: KeyCode) -> bool {
        match code {
            KeyCode::Char('[') => self.model.step_view(true),
            KeyCode::Char(']') => self.model.step_view(false),
            KeyCode::Char('{') => self.model.view_first(true),
            KeyCode::Char('}') => self.model.view_first(false),
            _ => return false,
        }
        true
    }

    fn graph_key(&mut self, key: KeyEvent) {
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let stepped = match key.code {
            KeyCode::Left if alt => {
                self.model.step_view(true);
                true
            }
            KeyCode::Right if alt => {
                self.model.step_view(false);
                true
            }
            code => self.travel(code),
        };
        if stepped {
            // The graph as of another turn has other nodes: start from the top.
            if let Some(g) = self.ui.graph_view.as_mut() {
                *g = GraphViewUi {
                    on_slots: g.on_slots,
                    ..GraphViewUi::default()
                };
            }
            return;
        }
        let nodes = self.model.graph_index().order.len();
        let slots = self.model.graph_snapshot().map_or(0, |s| s.slots.len());
        let Some(g) = self.ui.graph_view.as_mut() else {
            return;
        };
        let (cursor, len) = if g.on_slots {
            (&mut g.slot, slots)
        } else {
            (&mut g.node, nodes)
        };
        match key.code {
            KeyCode::Esc | KeyCode::Char('g') => self.ui.graph_view = None,
            KeyCode::Char('q') => self.open(Popup::Quit),
            KeyCode::Char('?') | KeyCode::F(1) => self.open(Popup::Help),
            KeyCode::Tab | KeyCode::BackTab => g.on_slots = !g.on_slots,
            KeyCode::Down | KeyCode::Char('j') => {
                *cursor = (*cursor + 1).min(len.saturating_sub(1));
                g.inspector_scroll = 0;
            }
            KeyCode::Up | KeyCode::Char('k') => {
                *cursor = cursor.saturating_sub(1);
                g.inspector_scroll = 0;
            }
            KeyCode::Home => *cursor = 0,
            KeyCode::End => *cursor = len.saturating_sub(1),
            KeyCode::PageDown => {
                g.inspector_scroll = (g.inspector_scroll + PAGE_ROWS).min(INSPECTOR_ROWS);
            }
            KeyCode::PageUp => g.inspector_scroll = g.inspector_scroll.saturating_sub(PAGE_ROWS),
            _ => {}
        }
    }

    fn show_panel(&mut self, panel: PanelId) {
        self.ui.tab = panel;
        self.ui.focus = KeyFocus::Panel(panel);
    }

    /// Tab order: the answer box, then the panels.
    fn cycle(&mut self, forward: bool) {
        let mut stops: Vec<KeyFocus> = Vec::new();
        if self.mode != Mode::Watch {
            stops.push(KeyFocus::Answer);
        }
        stops.extend(PanelId::ALL.into_iter().map(KeyFocus::Panel));
        let at = stops.iter().position(|f| *f == self.ui.focus).unwrap_or(0);
        let n = stops.len();
        let next = if forward {
            (at + 1) % n
        } else {
            (at + n - 1) % n
        };
        if let Some(&focus) = stops.get(next) {
            self.ui.focus = focus;
            if let KeyFocus::Panel(p) = focus {
                self.ui.tab = p;
            }
        }
    }

    fn scroll(&mut self, panel: PanelId, down: bool) {
        self.scroll_by(panel, down, 1);
    }

    fn scroll_by(&mut self, panel: PanelId, down: bool, rows: usize) {
        let step = |v: &mut usize, max: usize, down: bool| {
            *v = if down {
                v.saturating_add(rows).min(max)
            } else {
                v.saturating_sub(rows)
            };
        };
        match panel {
            // Conversation scrolls up from the newest line: "down" moves toward it.
            PanelId::Conversation => {
                let max = conversation::max_scroll(self);
                step(&mut self.ui.conversation_scroll, max, !down);
            }
            PanelId::Signals => {
                let max = signals::row_keys(&self.model).len().saturating_sub(1);
                step(&mut self.ui.signals.selected, max, down);
            }
            PanelId::Scores => {
                let max = score::item_keys(&self.model).len().saturating_sub(1);
                step(&mut self.ui.scores.selected, max, down);
            }
            PanelId::GraphStats => {
                let max = self.areas().panel(PanelId::GraphStats).map_or(0, |r| {
                    let inner_width = usize::from(r.width.saturating_sub(2));
                    let inner_height = usize::from(r.height.saturating_sub(2));
                    graph_stats::line_count(self, inner_width).saturating_sub(inner_height)
                });
                step(&mut self.ui.graph_stats_scroll, max, down);
            }
            PanelId::FocusTrace => {
                let max = self
                    .model
                    .snapshot
                    .as_ref()
                    .map_or(0, |s| s.focus_history.len().saturating_sub(1));
                step(&mut self.ui.focus_scroll, max, down);
            }
        }
    }

    fn expand(&mut self, panel: PanelId) {
        let key = match panel {
            PanelId::Signals => signals::row_keys(&self.model)
                .get(self.ui.signals.selected)
                .cloned(),
            PanelId::Scores => score::item_keys(&self.model)
                .get(self.ui.scores.selected)
                .cloned(),
            _ => None,
        };
        let Some(key) = key else {
            return;
        };
        let list = if panel == PanelId::Signals {
            &mut self.ui.signals
        } else {
            &mut self.ui.scores
        };
        if !list.expanded.remove(&key) {
            list.expanded.insert(key);
        }
    }
}

fn digit(c: char) -> PanelId {
    let i = c.to_digit(10).map_or(0, |d| d as usize);
    PanelId::from_index(i.saturating_sub(1))
}
