//! The terminal app: a live interview with the conversation beside panels for signals, score
//! decomposition, graph statistics and the focus trace, a graph view, and a start screen.
//!
//! The app is a view. The interview runs in the session task ([`crate::session`]) on its own
//! thread; the app sends it [`Command`]s and folds the [`session::SessionEvent`]s it reports into a [`Model`].
//! One loop ([`EventLoop`]) merges terminal input, ticks and pipeline events, never awaits the
//! pipeline, and draws a frame after each event. Panels are read-only widgets over the
//! [`App`]. Who answers does not matter to the model: a person at the keyboard
//! ([`Mode::Respondent`], [`Mode::Moderator`]) or a simulated respondent ([`Mode::Watch`],
//! see [`watch`]).
//!
//! # Layout
//!
//! - `app`: the state and key handling; `model`: pipeline events folded into data.
//! - `event`, `runner`: the merged event source and the loop; `terminal`: entering and
//!   restoring the terminal (panics included).
//! - [`panels`], [`popups`], `view`: drawing; `layout`: where things go at each size.
//! - `start`: the start screen; `theme`, `strings`, `sanitize`, `text`: styles, wording,
//!   making untrusted text drawable, and wrapping.
//!
//! Logging is the entry point's job (a file subscriber): nothing here prints.

mod app;
mod event;
mod layout;
mod model;
pub mod panels;
pub mod popups;
mod runner;
mod sanitize;
mod start;
mod strings;
mod study;
mod terminal;
mod text;
mod theme;
mod view;

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::Event as CtEvent;
use ratatui::DefaultTerminal;
use tokio::sync::mpsc::{self, UnboundedReceiver};

pub use app::{
    Action, App, Clock, FixedClock, GraphViewUi, KeyFocus, ListUi, Mode, Popup, SessionInfo,
    SpeechPhase, SpeechUi, StrategyInfo, SystemClock, Ui,
};
pub use event::{AppEvent, EventSources, StopSignals, TICK, feed_until_stopped, forward_terminal};
pub use layout::{Areas, PanelId, Shape, areas};
pub use model::{Failure, GraphIndex, Message, Model, Running, Usage, Work};
pub use runner::{EventLoop, FRAME_BUDGET, Flow, TuiError};
pub use sanitize::{clean as sanitize, clean_line as sanitize_line};
pub use start::{ConceptEntry, StartChoice, StartOutcome, StartScreen};
pub use study::StudyScreen;
pub use theme::Theme;
pub use view::render_panel;

use crate::session::{Command, SessionFeed, SessionHandle};
use crate::speech::live::{ListenConfig, Listener};
use crate::speech::voice::Voice;

/// How long quitting waits for the session task to stop before leaving a running turn to its
/// checkpoint.
const SHUTDOWN_WAIT: Duration = Duration::from_millis(500);

/// Fails unless standard input and output are both terminals, before anything is opened or
/// stored: the app cannot run without one.
pub fn require_terminal() -> Result<(), TuiError> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        Ok(())
    } else {
        Err(TuiError::NoTerminal)
    }
}

/// Shows a running session (see [`session::spawn`]) in this terminal until the user quits,
/// then stops it.
pub fn run_interview(
    session: SessionHandle,
    mode: Mode,
    listen: Option<ListenConfig>,
    voice: Option<Voice>,
) -> Result<(), TuiError> {
    let runtime = runtime()?;
    let (terminal, guard) = terminal::enter().map_err(|e| TuiError::Terminal(e.to_string()))?;
    let (result, stopped) = runtime.block_on(async {
        let (inputs, stopped) = spawn_input();
        let result = interview_screen(terminal, inputs, session, mode, listen, voice).await;
        (result, stopped)
    });
    drop(guard);
    stopped_or(stopped, result)
}

/// `result`, unless a signal stopped the app: then that (the terminal is restored by now).
fn stopped_or(
    mut stopped: tokio::sync::oneshot::Receiver<&'static str>,
    result: Result<(), TuiError>,
) -> Result<(), TuiError> {
    match stopped.try_recv() {
        Ok(signal) => Err(TuiError::Stopped { signal }),
        Err(_) => result,
    }
}

/// Shows the start screen; `open` turns the user's choice into a running session and `analyse`
/// a concept into its study (or an error shown on the start screen). Returns when the user
/// quits.
pub fn run_start(
    mut screen: StartScreen,
    mut open: impl FnMut(&StartChoice) -> Result<(SessionHandle, Mode), String>,
    mut analyse: impl FnMut(&str) -> Result<crate::study::Study, String>,
    listen: Option<ListenConfig>,
) -> Result<(), TuiError> {
    let runtime = runtime()?;
    let (mut terminal, guard) = terminal::enter().map_err(|e| TuiError::Terminal(e.to_string()))?;
    let (result, stopped) = runtime.block_on(async {
        let (mut inputs, stopped) = spawn_input();
        let result = async {
            loop {
                let choice = match start::run(&mut terminal, &mut inputs, &mut screen).await? {
                    StartOutcome::Quit => return Ok(()),
                    StartOutcome::Open(choice) => choice,
                    StartOutcome::Study(concept) => {
                        screen.set_message(Some(format!("Analysing the interviews of {concept}…")));
                        start::draw(&mut terminal, &screen)?;
                        match analyse(&concept) {
                            Ok(study) => {
                                let mut view = StudyScreen::new(study, Theme::from_env());
                                study::run(&mut terminal, &mut inputs, &mut view).await?;
                                screen.set_message(None);
                            }
                            Err(e) => screen.set_message(Some(e)),
                        }
                        continue;
                    }
                };
                screen.set_message(Some(
                    "Opening the session and loading the models…".to_owned(),
                ));
                start::draw(&mut terminal, &screen)?;
                match open(&choice) {
                    Ok((session, mode)) => {
                        return interview_screen(terminal, inputs, session, mode, listen, None)
                            .await;
                    }
                    Err(e) => screen.set_message(Some(e)),
                }
            }
        }
        .await;
        (result, stopped)
    });
    drop(guard);
    stopped_or(stopped, result)
}

/// Shows a session whose events come from elsewhere (`simulate --watch`): the same panels,
/// fed by `events`, until the user quits. `commands`, when given, lets the user end the
/// interview or retry a failed turn. Must run inside a tokio runtime; takes over the terminal.
pub async fn watch(
    info: SessionInfo,
    events: SessionFeed,
    commands: Option<tokio::sync::mpsc::Sender<Command>>,
) -> Result<(), TuiError> {
    let (terminal, guard) = terminal::enter().map_err(|e| TuiError::Terminal(e.to_string()))?;
    let (inputs, stopped) = spawn_input();
    let app = App::new(info, Mode::Watch, Theme::from_env(), Arc::new(SystemClock));
    let mut event_loop = EventLoop::new(
        terminal,
        app,
        EventSources::new(inputs, events, TICK),
        commands,
    );
    let result = event_loop.run().await;
    drop(guard);
    stopped_or(stopped, result)
}

async fn interview_screen(
    terminal: DefaultTerminal,
    inputs: UnboundedReceiver<CtEvent>,
    session: SessionHandle,
    mode: Mode,
    listen: Option<ListenConfig>,
    voice: Option<Voice>,
) -> Result<(), TuiError> {
    let info = session.info.clone();
    let (events, control) = session.into_parts();
    let app = App::new(info, mode, Theme::from_env(), Arc::new(SystemClock));
    let mut sources = EventSources::new(inputs, events, TICK);
    let mut event_loop;
    if let Some(config) = listen {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        sources = sources.with_speech(rx);
        event_loop = EventLoop::new(terminal, app, sources, Some(control.commands.clone()))
            .with_listener(Listener::spawn(config, tx));
    } else {
        event_loop = EventLoop::new(terminal, app, sources, Some(control.commands.clone()));
    }
    if let Some(voice) = voice {
        event_loop = event_loop.with_voice(voice);
    }
    let result = event_loop.run().await;
    if !control.shutdown_within(SHUTDOWN_WAIT) {
        tracing::info!("quit during a turn; it resumes from its last checkpoint");
    }
    result
}

fn runtime() -> Result<tokio::runtime::Runtime, TuiError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TuiError::Runtime(e.to_string()))
}

/// Starts reading the terminal on its own task, which ends the input (and so the app) when a
/// stop signal arrives; the second receiver then holds the signal's name.
fn spawn_input() -> (
    UnboundedReceiver<CtEvent>,
    tokio::sync::oneshot::Receiver<&'static str>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
    let signals = StopSignals::register();
    tokio::spawn(feed_until_stopped(forward_terminal(tx), signals, stop_tx));
    (rx, stop_rx)
}
