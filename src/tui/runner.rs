//! [`EventLoop`]: takes one event at a time from [`EventSources`], lets the [`App`] handle it,
//! sends the resulting commands to the session, and draws. Generic over the backend, so a test
//! runs the same loop on a `TestBackend` with injected keys.
//!
//! The loop never awaits the pipeline: commands go out on a bounded channel without waiting and results come
//! back as events. Pipeline events already waiting are folded before the next frame (at most
//! [`MAX_BATCH`] of them, so a stream of deltas cannot starve input), which makes drawing
//! latest-wins.

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use std::collections::VecDeque;

use tokio::sync::mpsc::Sender;
use tokio::sync::mpsc::error::TrySendError;

use super::app::{Action, App};
use super::event::{AppEvent, EventSources};
use crate::session::Command;
use crate::speech::live::Listener;
use crate::speech::voice::Voice;

/// Most waiting pipeline events folded before a frame.
const MAX_BATCH: usize = 256;

/// One frame at 60 Hz: an event that takes longer to handle and draw is logged as slow.
pub const FRAME_BUDGET: Duration = Duration::from_millis(16);

/// Why the app stopped early.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("terminal: {0}")]
    Terminal(String),
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
    /// The app was asked to stop by a signal; it left the terminal as it found it.
    #[error("stopped by {signal}")]
    Stopped { signal: &'static str },
    #[error("the terminal app needs a terminal on standard input and output")]
    NoTerminal,
}

/// Whether the loop goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// The app's event loop over a terminal backend.
pub struct EventLoop<B: Backend> {
    terminal: Terminal<B>,
    app: App,
    sources: EventSources,
    commands: Option<Sender<Command>>,
    /// Commands the bounded channel had no room for yet.
    backlog: VecDeque<Command>,
    /// Longest time one event took to handle and draw.
    worst_frame: Duration,
    /// Frames drawn, and how many went over [`FRAME_BUDGET`].
    frames: u64,
    slow_frames: u64,
    /// Speech to text, when attached ([`EventLoop::with_listener`]).
    listener: Option<Listener>,
    /// Reads each new question aloud (`--speak`).
    voice: Option<Voice>,
}

impl<B: Backend> std::fmt::Debug for EventLoop<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLoop")
            .field("app", &self.app)
            .field("worst_frame", &self.worst_frame)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> EventLoop<B> {
    /// A loop drawing `app` on `terminal`; `commands` reaches the session (none when watching).
    pub fn new(
        terminal: Terminal<B>,
        app: App,
        sources: EventSources,
        commands: Option<Sender<Command>>,
    ) -> Self {
        Self {
            terminal,
            app,
            sources,
            commands,
            backlog: VecDeque::new(),
            worst_frame: Duration::ZERO,
            frames: 0,
            slow_frames: 0,
            listener: None,
            voice: None,
        }
    }

    /// Reads each new question aloud.
    #[must_use]
    pub fn with_voice(mut self, voice: Voice) -> Self {
        self.voice = Some(voice);
        self
    }

    /// Attaches a listener: F2 starts and stops it. Its events must reach the loop's
    /// [`EventSources`] (`with_speech`).
    #[must_use]
    pub fn with_listener(mut self, listener: Listener) -> Self {
        self.app.ui.speech_available = true;
        self.listener = Some(listener);
        self
    }

    pub fn app(&self) -> &App {
        &self.app
    }

    pub fn terminal(&self) -> &Terminal<B> {
        &self.terminal
    }

    /// The terminal, e.g. to resize a test backend.
    pub fn terminal_mut(&mut self) -> &mut Terminal<B> {
        &mut self.terminal
    }

    /// The longest an event took from arrival to drawn frame so far.
    pub fn worst_frame(&self) -> Duration {
        self.worst_frame
    }

    /// Frames drawn after events so far, and how many took longer than [`FRAME_BUDGET`].
    pub fn frame_counts(&self) -> (u64, u64) {
        (self.frames, self.slow_frames)
    }

    /// Draws a frame.
    pub fn draw(&mut self) -> Result<(), TuiError> {
        let size = self
            .terminal
            .size()
            .map_err(|e| TuiError::Terminal(e.to_string()))?;
        self.app.ui.area = Rect::new(0, 0, size.width, size.height);
        let app = &self.app;
        self.terminal
            .draw(|frame| frame.render_widget(app, frame.area()))
            .map_err(|e| TuiError::Terminal(e.to_string()))?;
        Ok(())
    }

    /// Handles one event without drawing.
    pub fn handle(&mut self, event: AppEvent) -> Flow {
        let mut flow = Flow::Continue;
        self.send_backlog();
        if let AppEvent::Pipeline(e) = &event
            && let Some(crate::pipeline::Event::Question { turn, text, .. }) = e.pipeline()
        {
            if let Some(voice) = self.voice.as_mut() {
                voice.say(text);
            }
            // The answer to this question is kept under its turn (`--keep-audio`).
            if let Some(listener) = self.listener.as_ref() {
                listener.set_turn(*turn);
            }
        }
        for action in self.app.handle(event) {
            match action {
                Action::Send(command) => self.backlog.push_back(command),
                Action::Listen(on) => match self.listener.as_ref() {
                    Some(l) if on => l.start(),
                    Some(l) => l.stop(),
                    None => {}
                },
                Action::Quit => flow = Flow::Quit,
            }
        }
        self.send_backlog();
        flow
    }

    /// Sends the commands waiting for room on the session's bounded channel, in order; what
    /// does not fit stays for the next event (ticks come several times a second), so nothing
    /// typed is lost and the loop never blocks.
    fn send_backlog(&mut self) {
        while let Some(command) = self.backlog.pop_front() {
            let Some(tx) = self.commands.as_ref() else {
                self.session_stopped();
                return;
            };
            match tx.try_send(command) {
                Ok(()) => {}
                Err(TrySendError::Full(command)) => {
                    self.backlog.push_front(command);
                    return;
                }
                Err(TrySendError::Closed(_)) => {
                    self.session_stopped();
                    return;
                }
            }
        }
    }

    /// The session task is gone; say so instead of waiting forever.
    fn session_stopped(&mut self) {
        self.backlog.clear();
        self.app.model.closed = true;
        self.app.model.running = None;
        self.app.ui.flash = Some("the session has stopped".to_owned());
    }

    /// Waits for the next event, handles it and whatever pipeline events are waiting, then
    /// draws. Returns [`Flow::Quit`] when the user quit or terminal input ended.
    pub async fn step(&mut self) -> Result<Flow, TuiError> {
        let Some(event) = self.sources.next().await else {
            return Ok(Flow::Quit);
        };
        let started = Instant::now();
        let idle_tick = matches!(event, AppEvent::Tick) && self.app.model.running.is_none();
        let mut flow = self.handle(event);
        for _ in 0..MAX_BATCH {
            let Some(e) = self.sources.ready_pipeline() else {
                break;
            };
            if self.handle(e) == Flow::Quit {
                flow = Flow::Quit;
            }
        }
        if flow == Flow::Continue && !idle_tick {
            self.draw()?;
            let took = started.elapsed();
            self.frames += 1;
            if took > FRAME_BUDGET {
                self.slow_frames += 1;
                tracing::debug!(?took, "slow frame");
            }
            self.worst_frame = self.worst_frame.max(took);
        }
        Ok(flow)
    }

    /// Runs until the user quits.
    pub async fn run(&mut self) -> Result<(), TuiError> {
        self.draw()?;
        while self.step().await? == Flow::Continue {}
        Ok(())
    }

    /// The app, once the loop is done.
    pub fn into_app(self) -> App {
        self.app
    }
}
