//! The one event type the loop runs on: terminal input, a tick, or a pipeline event, merged
//! from three sources by [`EventSources::next`].
//!
//! Terminal input arrives on a channel rather than straight from crossterm, so a test feeds
//! keys the same way a terminal does ([`forward_terminal`] is the production feeder).

use std::time::Duration;

use crossterm::event::Event as CtEvent;
use futures::StreamExt;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::{Interval, MissedTickBehavior};

use crate::pipeline::Event;

/// One thing the app reacts to.
#[derive(Debug, Clone)]
pub enum AppEvent {
    /// A key, paste, mouse or resize event.
    Input(CtEvent),
    /// Time passed (spinner, elapsed time).
    Tick,
    Pipeline(Event),
    /// The pipeline's sender is gone: the session task stopped.
    PipelineClosed,
}

/// How often the spinner and elapsed time advance while nothing else happens.
pub const TICK: Duration = Duration::from_millis(100);

/// The three sources, polled without blocking on any one of them.
#[derive(Debug)]
pub struct EventSources {
    input: UnboundedReceiver<CtEvent>,
    pipeline: Option<UnboundedReceiver<Event>>,
    tick: Interval,
}

impl EventSources {
    pub fn new(
        input: UnboundedReceiver<CtEvent>,
        pipeline: UnboundedReceiver<Event>,
        tick: Duration,
    ) -> Self {
        let mut tick = tokio::time::interval(tick);
        tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
        Self {
            input,
            pipeline: Some(pipeline),
            tick,
        }
    }

    /// The next event. Input comes first when several are ready, so typing never waits behind
    /// a burst of pipeline events. `None` once terminal input has ended.
    pub async fn next(&mut self) -> Option<AppEvent> {
        let pipeline = async {
            match self.pipeline.as_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            input = self.input.recv() => input.map(AppEvent::Input),
            event = pipeline => Some(if let Some(e) = event {
                AppEvent::Pipeline(e)
            } else {
                self.pipeline = None;
                AppEvent::PipelineClosed
            }),
            _ = self.tick.tick() => Some(AppEvent::Tick),
        }
    }

    /// A pipeline event that is already waiting, if any (drained before a frame is drawn, so a
    /// burst of stream deltas costs one frame).
    pub fn ready_pipeline(&mut self) -> Option<AppEvent> {
        let rx = self.pipeline.as_mut()?;
        match rx.try_recv() {
            Ok(e) => Some(AppEvent::Pipeline(e)),
            Err(tokio::sync::mpsc::error::TryRecvError::Empty) => None,
            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => {
                self.pipeline = None;
                Some(AppEvent::PipelineClosed)
            }
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
