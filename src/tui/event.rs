//! The one event type the loop runs on: terminal input, a tick, or a session event, merged
//! from three sources by [`EventSources::next`].
//!
//! Terminal input arrives on a channel rather than straight from crossterm, so a test feeds
//! keys the same way a terminal does ([`forward_terminal`] is the production feeder).

use std::time::Duration;

use crossterm::event::Event as CtEvent;
use futures::StreamExt;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::{Interval, MissedTickBehavior};

use crate::session::{SessionEvent, SessionFeed};
use crate::speech::live::LiveEvent;

/// One thing the app reacts to.
#[derive(Debug, Clone)]
pub enum AppEvent {
    /// A key, paste, mouse or resize event.
    Input(CtEvent),
    /// Time passed (spinner, elapsed time).
    Tick,
    /// Something the session reported.
    Pipeline(SessionEvent),
    /// The session's feed is gone: the session task stopped.
    PipelineClosed,
    /// What the listener heard or why it stopped.
    Speech(LiveEvent),
}

/// How often the spinner and elapsed time advance while nothing else happens.
pub const TICK: Duration = Duration::from_millis(100);

/// The three sources, polled without blocking on any one of them.
#[derive(Debug)]
pub struct EventSources {
    input: UnboundedReceiver<CtEvent>,
    pipeline: Option<SessionFeed>,
    tick: Interval,
    /// The listener's events, when speech is on.
    speech: Option<UnboundedReceiver<LiveEvent>>,
}

impl EventSources {
    pub fn new(input: UnboundedReceiver<CtEvent>, pipeline: SessionFeed, tick: Duration) -> Self {
        let mut tick = tokio::time::interval(tick);
        tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
        Self {
            input,
            pipeline: Some(pipeline),
            tick,
            speech: None,
        }
    }

    /// Also takes the listener's events.
    #[must_use]
    pub fn with_speech(mut self, speech: UnboundedReceiver<LiveEvent>) -> Self {
        self.speech = Some(speech);
        self
    }

    /// The next event. Input comes first when several are ready, so typing never waits behind
    /// a burst of pipeline events. `None` once terminal input has ended.
    pub async fn next(&mut self) -> Option<AppEvent> {
        let pipeline = async {
            match self.pipeline.as_mut() {
                Some(feed) => feed.next().await,
                None => std::future::pending().await,
            }
        };
        let speech = async {
            match self.speech.as_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            input = self.input.recv() => input.map(AppEvent::Input),
            Some(heard) = speech => Some(AppEvent::Speech(heard)),
            event = pipeline => Some(if let Some(e) = event {
                AppEvent::Pipeline(e)
            } else {
                self.pipeline = None;
                AppEvent::PipelineClosed
            }),
            _ = self.tick.tick() => Some(AppEvent::Tick),
        }
    }

    /// A session event that is already waiting, if any (drained before a frame is drawn, so a
    /// burst of stream deltas costs one frame).
    pub fn ready_pipeline(&mut self) -> Option<AppEvent> {
        if let Some(e) = self.pipeline.as_mut()?.try_next()? {
            return Some(AppEvent::Pipeline(e));
        }
        self.pipeline = None;
        Some(AppEvent::PipelineClosed)
    }
}

/// The signals that stop the app as if terminal input had ended: the terminal hung up
/// (`SIGHUP`), or someone asked the process to stop (`SIGTERM`, or `SIGINT` sent from outside:
/// in raw mode Ctrl+C is a key). Registered before the first frame, so none of them can kill
/// the process with the terminal still in the app's modes.
pub struct StopSignals {
    streams: Vec<(tokio::signal::unix::Signal, &'static str)>,
}

impl StopSignals {
    /// Takes over the three signals; must run inside a tokio runtime. A signal that cannot be
    /// registered keeps its default action (logged).
    pub fn register() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let kinds = [
            (SignalKind::terminate(), "SIGTERM"),
            (SignalKind::hangup(), "SIGHUP"),
            (SignalKind::interrupt(), "SIGINT"),
        ];
        let streams = kinds
            .into_iter()
            .filter_map(|(kind, name)| match signal(kind) {
                Ok(stream) => Some((stream, name)),
                Err(e) => {
                    tracing::warn!("cannot handle {name}: {e}");
                    None
                }
            })
            .collect();
        Self { streams }
    }

    /// The name of the first signal that arrives.
    async fn first(mut self) -> &'static str {
        let waits = self.streams.iter_mut().map(|(stream, name)| {
            Box::pin(async move {
                stream.recv().await;
                *name
            })
        });
        let waits: Vec<_> = waits.collect();
        if waits.is_empty() {
            return std::future::pending().await;
        }
        futures::future::select_all(waits).await.0
    }
}

/// Runs `feeder` (which owns the input channel's sender) until a stop signal arrives, then
/// drops it, so the app sees its input end and quits the way it does when the terminal goes
/// away; the signal's name goes to `stopped`.
pub async fn feed_until_stopped(
    feeder: impl std::future::Future<Output = ()>,
    signals: StopSignals,
    stopped: tokio::sync::oneshot::Sender<&'static str>,
) {
    tokio::select! {
        () = feeder => {}
        name = signals.first() => {
            // The app may be gone already; then nobody needs to know.
            let _ = stopped.send(name);
        }
    }
}

/// Reads the terminal's events and forwards them until the receiver is dropped or the
/// terminal fails. Runs as its own task, so reading input never waits on drawing.
pub async fn forward_terminal(tx: UnboundedSender<CtEvent>) {
    let mut stream = crossterm::event::EventStream::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(e) => {
                if tx.send(e).is_err() {
                    // The app has quit; nothing is listening.
                    break;
                }
            }
            Err(e) => {
                tracing::error!("terminal input failed: {e}");
                break;
            }
        }
    }
}
