//! [`App`]: the whole app state — the folded session ([`Model`]), what the user is looking at
//! and typing ([`Ui`]) — and [`App::handle`], which turns one [`AppEvent`] into state changes
//! and the [`Action`]s the event loop carries out. Nothing here awaits or touches the terminal,
//! so a test drives it with plain values.

mod info;
mod keys;
mod popup_keys;
mod speech;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use ratatui::layout::Rect;
use ratatui_textarea::{TextArea, WrapMode};

pub use crate::session::{SessionInfo, StrategyInfo};
pub use info::{Clock, FixedClock, SystemClock};
pub use speech::{SpeechPhase, SpeechUi};

use super::event::AppEvent;
use super::layout::{self, Areas, PanelId};
use super::model::{Model, Work};
use super::popups::RegenerateState;
use super::strings;
use super::theme::Theme;
use crate::pipeline::Event;
use crate::session::{Command, SessionEvent};

/// Who answers the questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The respondent types the answers.
    Respondent,
    /// A researcher conducts the interview: questions are proposals to accept, edit or
    /// regenerate, and the researcher types what the respondent said.
    Moderator,
    /// Answers come from elsewhere (a simulated respondent); the app only shows the session.
    Watch,
}

/// What has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFocus {
    Answer,
    Panel(PanelId),
}

/// A window over the screen; the first in the list takes the keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Popup {
    Help,
    Quit,
    /// "End the interview now?"
    EndConfirm,
    /// A failed turn or override, or a fatal session error.
    Error,
    /// The interview is over.
    End,
    Regenerate(RegenerateState),
    /// The what-if weight editor; its state is [`Ui::whatif`].
    WhatIf,
}

/// Selection and expansion of a list panel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListUi {
    pub selected: usize,
    /// Keys of expanded rows.
    pub expanded: BTreeSet<String>,
}

/// The graph view's cursor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphViewUi {
    /// Position in [`super::model::GraphIndex::order`].
    pub node: usize,
    pub slot: usize,
    /// Whether the slot list has the cursor.
    pub on_slots: bool,
    /// Inspector rows scrolled (long provenance).
    pub inspector_scroll: usize,
}

/// What the user looks at and types.
#[derive(Debug, Clone)]
pub struct Ui {
    pub focus: KeyFocus,
    /// The panel shown where panels share space (tabs).
    pub tab: PanelId,
    pub popups: Vec<Popup>,
    pub graph_view: Option<GraphViewUi>,
    /// Conversation rows scrolled up from the newest.
    pub conversation_scroll: usize,
    pub graph_stats_scroll: usize,
    pub focus_scroll: usize,
    pub signals: ListUi,
    pub scores: ListUi,
    /// Moderator mode: the turn whose proposed question was accepted as asked.
    pub accepted: Option<u32>,
    /// Moderator mode: the answer box holds the question being edited.
    pub editing: bool,
    /// The answer typed before an edit began, restored after it.
    pub draft: Vec<String>,
    /// The last answer sent, put back if its turn fails before saving it.
    pub last_sent: Option<String>,
    /// A short notice in the answer box title (why Enter did nothing), until the next key.
    pub flash: Option<String>,
    /// The terminal size of the last frame.
    pub area: Rect,
    /// Ticks so far (spinner frame).
    pub tick: u64,
    /// Help overlay rows scrolled (short terminals).
    pub help_scroll: usize,
    /// The what-if editor's state while it is open.
    pub whatif: Option<crate::tui::popups::WhatIfState>,
    /// A listener is attached: F2 listens.
    pub speech_available: bool,
    /// Listening (or loading the model to listen) and what the transcript has put in the
    /// answer box.
    pub speech: Option<SpeechUi>,
    /// The answer box holds a finished transcript: how it was heard, sent with the answer.
    pub heard: Option<crate::domain::AnswerSpeech>,
}

/// What the event loop does for the app.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Send(Command),
    /// Start (true) or stop listening.
    Listen(bool),
    Quit,
}

/// The app.
pub struct App {
    pub info: SessionInfo,
    pub mode: Mode,
    pub model: Model,
    pub ui: Ui,
    pub input: TextArea<'static>,
    pub theme: Theme,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("info", &self.info)
            .field("mode", &self.mode)
            .field("ui", &self.ui)
            .finish_non_exhaustive()
    }
}

impl App {
    pub fn new(info: SessionInfo, mode: Mode, theme: Theme, clock: Arc<dyn Clock>) -> Self {
        let focus = if mode == Mode::Watch {
            KeyFocus::Panel(PanelId::Conversation)
        } else {
            KeyFocus::Answer
        };
        let mut app = Self {
            info,
            mode,
            model: Model::default(),
            ui: Ui {
                focus,
                tab: PanelId::Conversation,
                popups: Vec::new(),
                graph_view: None,
                conversation_scroll: 0,
                graph_stats_scroll: 0,
                focus_scroll: 0,
                signals: ListUi::default(),
                scores: ListUi::default(),
                accepted: None,
                editing: false,
                draft: Vec::new(),
                last_sent: None,
                flash: None,
                area: Rect::new(0, 0, 80, 24),
                tick: 0,
                help_scroll: 0,
                whatif: None,
                speech_available: false,
                speech: None,
                heard: None,
            },
            input: TextArea::default(),
            theme,
            clock,
        };
        app.reset_input(Vec::new());
        app
    }

    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// The layout of the last known terminal size.
    pub fn areas(&self) -> Areas {
        layout::areas(self.ui.area, self.ui.tab)
    }

    /// Handles one event and returns what the loop must do.
    pub fn handle(&mut self, event: AppEvent) -> Vec<Action> {
        match event {
            AppEvent::Tick => {
                self.ui.tick = self.ui.tick.wrapping_add(1);
                Vec::new()
            }
            AppEvent::Pipeline(e) => {
                self.apply(e);
                Vec::new()
            }
            AppEvent::PipelineClosed => {
                self.model.closed = true;
                self.model.running = None;
                Vec::new()
            }
            AppEvent::Input(input) => self.input_event(input),
            AppEvent::Speech(heard) => {
                self.heard(heard);
                Vec::new()
            }
        }
    }

    /// Folds a session event and reacts to it (focus, popups).
    pub fn apply(&mut self, event: impl Into<SessionEvent>) {
        let event = event.into();
        let now = self.now();
        let fatal = matches!(event, SessionEvent::Fatal { .. });
        let pipeline = event.pipeline();
        let reaction = match pipeline {
            Some(Event::Question { turn, closing, .. }) => Some((*turn, *closing)),
            _ => None,
        };
        let completed = matches!(pipeline, Some(Event::TurnCompleted(_)));
        let failed = fatal || matches!(pipeline, Some(Event::TurnFailed { .. }));
        let finished = matches!(pipeline, Some(Event::Finished { .. }));
        let answer_failed = match pipeline {
            Some(Event::TurnFailed { stage, .. }) => {
                *stage <= crate::pipeline::Stage::UtteranceSaving
            }
            _ => false,
        };
        let was = self.model.running.map(|r| r.work);
        self.model.apply(event, now);
        if let Some((turn, closing)) = reaction {
            self.question_arrived(turn, closing);
        }
        if completed {
            self.ui.scores.selected = 0;
        }
        if failed {
            if answer_failed && was == Some(Work::Turn) && self.input.is_empty() {
                let sent = self.ui.last_sent.clone().unwrap_or_default();
                self.reset_input(sent.lines().map(str::to_owned).collect());
            }
            self.open(Popup::Error);
        }
        if finished && !self.ui.popups.contains(&Popup::End) {
            self.ui.popups.retain(|p| *p != Popup::Error);
            self.open(Popup::End);
        }
    }

    fn question_arrived(&mut self, turn: u32, closing: bool) {
        self.ui.conversation_scroll = 0;
        self.ui.popups.retain(|p| *p != Popup::Error);
        if self.ui.editing {
            self.finish_editing();
        }
        if closing || self.mode == Mode::Watch {
            return;
        }
        // Moderator mode: every new or replaced question is a proposal again.
        if self.ui.accepted == Some(turn) || self.mode == Mode::Moderator {
            self.ui.accepted = None;
        }
        self.ui.focus = KeyFocus::Answer;
    }

    pub(crate) fn open(&mut self, popup: Popup) {
        self.ui.popups.retain(|p| *p != popup);
        self.ui.popups.insert(0, popup);
    }

    /// Whether the proposed question of moderator mode waits for the researcher.
    pub fn proposal_pending(&self) -> bool {
        self.mode == Mode::Moderator
            && self.model.running.is_none()
            && self.model.failure.is_none()
            && self
                .model
                .question_turn
                .is_some_and(|t| self.ui.accepted != Some(t))
    }

    /// Why an answer cannot be sent now, or `None` when it can.
    pub fn send_blocked(&self) -> Option<&'static str> {
        let m = &self.model;
        if self.mode == Mode::Watch {
            Some(strings::WAIT_WATCH)
        } else if m.finished.is_some() || m.fatal.is_some() {
            Some(strings::WAIT_FINISHED)
        } else if m.failure.is_some() {
            Some(strings::WAIT_FAILED)
        } else if let Some(r) = m.running {
            Some(match r.work {
                Work::Override => strings::WAIT_OVERRIDE,
                Work::Starting if m.question_turn.is_none() => strings::WAIT_OPENING,
                _ => strings::WAIT_TURN,
            })
        } else if m.question_turn.is_none() {
            Some(strings::WAIT_OPENING)
        } else if self.proposal_pending() {
            Some(strings::WAIT_PROPOSAL)
        } else {
            None
        }
    }

    /// Replaces the answer box's text and restyles it.
    pub(crate) fn reset_input(&mut self, lines: Vec<String>) {
        let mut input = TextArea::new(lines);
        input.set_wrap_mode(WrapMode::WordOrGlyph);
        input.set_cursor_line_style(ratatui::style::Style::new());
        input.set_placeholder_text(strings::PLACEHOLDER);
        input.set_placeholder_style(self.theme.dim);
        input.set_selection_style(self.theme.selected);
        input.move_cursor(ratatui_textarea::CursorMove::Bottom);
        input.move_cursor(ratatui_textarea::CursorMove::End);
        self.input = input;
    }

    /// The answer box's text as one string.
    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    /// Sends the typed answer, or says why not.
    fn send_answer(&mut self) -> Vec<Action> {
        if let Some(reason) = self.send_blocked() {
            self.ui.flash = Some(reason.to_owned());
            return Vec::new();
        }
        let text = self.input_text();
        let chars = crate::pipeline::answer_chars(&text);
        if chars == 0 {
            self.ui.flash = Some(strings::EMPTY_ANSWER.to_owned());
            return Vec::new();
        }
        if chars > crate::pipeline::MAX_ANSWER_CHARS {
            self.ui.flash = Some(format!(
                "the answer is {chars} characters; the limit is {}",
                crate::pipeline::MAX_ANSWER_CHARS
            ));
            return Vec::new();
        }
        let turn = self.model.question_turn.map_or(1, |t| t + 1);
        self.reset_input(Vec::new());
        self.ui.last_sent = Some(text.clone());
        self.ui.conversation_scroll = 0;
        self.model.begin(Work::Turn, turn, self.now());
        let command = match self.ui.heard.take() {
            Some(speech) => Command::SpokenAnswer { text, speech },
            None => Command::Answer(text),
        };
        let mut actions = vec![Action::Send(command)];
        // What is shown is what was said: listening ends, and a late transcript stays out.
        if self.ui.speech.take().is_some() {
            actions.push(Action::Listen(false));
        }
        actions
    }

    /// Moderator mode: the proposed question counts as asked.
    fn accept_proposal(&mut self) {
        self.ui.accepted = self.model.question_turn;
        self.ui.flash = None;
    }

    /// Moderator mode: the answer box takes the proposed question for editing.
    fn start_editing(&mut self) {
        let Some(turn) = self.model.question_turn else {
            return;
        };
        let question = self
            .model
            .conversation
            .iter()
            .find(|m| m.turn == turn && m.speaker == crate::domain::Speaker::Interviewer)
            .map(|m| m.text.clone())
            .unwrap_or_default();
        self.ui.draft = self.input.lines().to_vec();
        self.ui.editing = true;
        self.ui.focus = KeyFocus::Answer;
        self.reset_input(question.lines().map(str::to_owned).collect());
    }

    fn finish_editing(&mut self) {
        self.ui.editing = false;
        let draft = std::mem::take(&mut self.ui.draft);
        self.reset_input(draft);
    }

    fn send_edit(&mut self) -> Vec<Action> {
        let text = self.input_text();
        if text.trim().is_empty() {
            self.ui.flash = Some("the question is empty; Esc keeps the proposed one".to_owned());
            return Vec::new();
        }
        let turn = self.model.question_turn.unwrap_or(0);
        self.finish_editing();
        self.model.begin(Work::Override, turn, self.now());
        vec![Action::Send(Command::EditQuestion(text))]
    }

    /// Moderator mode: opens the regenerate popup, preselecting `strategy` and `node` when
    /// given.
    fn open_regenerate(&mut self, strategy: Option<&str>, node: Option<&str>) {
        if self.model.question_turn.is_none_or(|t| t == 0) {
            self.ui.flash = Some(
                "the opening question has no decision to regenerate; edit it with e instead"
                    .to_owned(),
            );
            return;
        }
        let state = RegenerateState::new(&self.info, &self.model, strategy, node);
        self.open(Popup::Regenerate(state));
    }
}
