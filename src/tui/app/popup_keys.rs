//! Keys while a popup is open: help scrolling, quit and end confirmations, the failed-turn
//! choices, the end screen and the regenerate picker.

use crossterm::event::{KeyCode, KeyEvent};

use super::keys::PAGE_ROWS;
use super::{Action, App, GraphViewUi, Popup};
use crate::session::Command;
use crate::tui::model::Work;
use crate::tui::popups::{Outcome, WhatIfOutcome, save_whatif};

/// Upper bound of the help overlay's scroll (it has fewer rows than this).
const HELP_ROWS: usize = 64;

impl App {
    pub(super) fn popup_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some(popup) = self.ui.popups.first().cloned() else {
            return Vec::new();
        };
        match popup {
            Popup::Help => match key.code {
                KeyCode::Esc | KeyCode::Char('?' | 'q') | KeyCode::F(1) | KeyCode::Enter => {
                    self.ui.help_scroll = 0;
                    self.close();
                }
                KeyCode::Down | KeyCode::Char('j') => {
                    self.ui.help_scroll = (self.ui.help_scroll + 1).min(HELP_ROWS);
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    self.ui.help_scroll = self.ui.help_scroll.saturating_sub(1);
                }
                KeyCode::PageDown => {
                    self.ui.help_scroll = (self.ui.help_scroll + PAGE_ROWS).min(HELP_ROWS);
                }
                KeyCode::PageUp => {
                    self.ui.help_scroll = self.ui.help_scroll.saturating_sub(PAGE_ROWS);
                }
                _ => {}
            },
            Popup::Quit => match key.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Enter => return vec![Action::Quit],
                KeyCode::Char('n' | 'N') | KeyCode::Esc => self.close(),
                _ => {}
            },
            Popup::EndConfirm => match key.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Enter => {
                    self.close();
                    return vec![Action::Send(Command::EndNow)];
                }
                KeyCode::Char('n' | 'N') | KeyCode::Esc => self.close(),
                _ => {}
            },
            Popup::Error => return self.error_key(key),
            Popup::End => match key.code {
                KeyCode::Esc | KeyCode::Enter => self.close(),
                KeyCode::Char('g') => {
                    self.close();
                    self.ui.graph_view = Some(GraphViewUi::default());
                }
                // The interview is over and stored: nothing is lost by quitting.
                KeyCode::Char('q') => return vec![Action::Quit],
                _ => {}
            },
            Popup::WhatIf => {
                let Some(state) = self.ui.whatif.as_mut() else {
                    self.close();
                    return Vec::new();
                };
                match state.key(key.code) {
                    WhatIfOutcome::Open => {}
                    WhatIfOutcome::Close => {
                        self.ui.whatif = None;
                        self.close();
                    }
                    WhatIfOutcome::Save => {
                        // Next to where the app was started: never over a shipped file.
                        state.saved = Some(
                            match save_whatif(&state.methodology, std::path::Path::new(".")) {
                                Ok(path) => format!(
                                    "saved to {} (the session's methodology is unchanged)",
                                    path.display()
                                ),
                                Err(e) => format!("not saved: {e}"),
                            },
                        );
                    }
                }
            }
            Popup::Regenerate(mut state) => {
                if let Some(k) = self.ui.popups.first_mut() {
                    let outcome = state.key(key.code);
                    *k = Popup::Regenerate(state);
                    return self.regenerate_outcome(outcome);
                }
            }
        }
        Vec::new()
    }

    fn error_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let fatal = self.model.fatal.is_some();
        let failure = self.model.failure.clone();
        match (key.code, failure) {
            (KeyCode::Char('q'), _) => self.open(Popup::Quit),
            (KeyCode::Char('r'), Some(f)) if !fatal => {
                self.close();
                let work = if f.work == Work::Override {
                    Work::Override
                } else {
                    Work::Turn
                };
                self.model.begin(work, f.turn, self.now());
                return vec![Action::Send(Command::Retry)];
            }
            (KeyCode::Char('x'), Some(_)) if !fatal => {
                self.close();
                return vec![Action::Send(Command::EndNow)];
            }
            (KeyCode::Esc, Some(f)) if f.work == Work::Override => {
                // The override failed; the question on screen stays the pending one.
                self.model.failure = None;
                self.close();
            }
            _ => {}
        }
        Vec::new()
    }

    fn regenerate_outcome(&mut self, outcome: Outcome) -> Vec<Action> {
        match outcome {
            Outcome::Open => Vec::new(),
            Outcome::Cancel => {
                self.close();
                Vec::new()
            }
            Outcome::Confirm { strategy, node_id } => {
                self.close();
                let turn = self.model.question_turn.unwrap_or(0);
                self.model.begin(Work::Override, turn, self.now());
                vec![Action::Send(Command::Regenerate { strategy, node_id })]
            }
        }
    }

    pub(super) fn close(&mut self) {
        if !self.ui.popups.is_empty() {
            self.ui.popups.remove(0);
        }
    }
}
