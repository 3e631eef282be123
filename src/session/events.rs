//! What a running session reports to its front end ([`SessionEvent`]): the pipeline's events,
//! and the driver's own (the history of an opened session, each answer it receives, a
//! snapshot after every command, a fatal error), which are not the pipeline's business.
//!
//! A view receives them through a [`SessionFeed`]: events in order on an unbounded channel
//! (a turn's events must all arrive: the conversation and the panels fold every one), and
//! snapshots through a `watch`, latest wins: each snapshot holds the whole graph, so a view
//! that fell behind skips straight to the newest instead of drawing stale ones.

use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender, error::TryRecvError};
use tokio::sync::watch;

use super::views::{SessionHistory, SessionSnapshot};
use crate::pipeline::Event;

/// One thing a running session reports.
#[derive(Debug, Clone)]
pub enum SessionEvent {
    /// Something the turn pipeline reported.
    Pipeline(Event),
    /// What an opened session already holds, reported once before it waits for anything.
    Resumed(Box<SessionHistory>),
    /// The respondent's answer to turn `turn`, as the driver received it, reported before the
    /// turn runs so a view shows it whoever typed it (a person or a synthetic respondent).
    AnswerReceived { turn: u32, text: String },
    /// The session's graph and bookkeeping after a change (a turn, an override, the start).
    Snapshot(Arc<SessionSnapshot>),
    /// The session cannot go on (its database failed, its state is unreadable).
    Fatal { error: String },
}

impl From<Event> for SessionEvent {
    fn from(event: Event) -> Self {
        Self::Pipeline(event)
    }
}

impl SessionEvent {
    /// The pipeline event inside, if this is one.
    pub fn pipeline(&self) -> Option<&Event> {
        match self {
            Self::Pipeline(event) => Some(event),
            _ => None,
        }
    }
}

/// The sending half of a [`SessionFeed`]: routes snapshots to the watch and everything else
/// to the channel. Sending to a feed nobody reads any more is not an error.
#[derive(Debug, Clone)]
pub struct FeedSender {
    events: UnboundedSender<SessionEvent>,
    snapshots: Arc<watch::Sender<Option<Arc<SessionSnapshot>>>>,
}

impl FeedSender {
    pub fn send(&self, event: &SessionEvent) {
        match event {
            SessionEvent::Snapshot(snapshot) => {
                self.snapshots.send_replace(Some(Arc::clone(snapshot)));
            }
            other => {
                let _ = self.events.send(other.clone());
            }
        }
    }
}

/// A view's end of a running session: its events in order, and its latest snapshot.
#[derive(Debug)]
pub struct SessionFeed {
    events: Option<UnboundedReceiver<SessionEvent>>,
    snapshots: Option<watch::Receiver<Option<Arc<SessionSnapshot>>>>,
    /// A snapshot newer than the last one taken was seen, and waits for the events ahead of it.
    snapshot_due: bool,
}

impl SessionFeed {
    /// A connected sender and feed.
    pub fn channel() -> (FeedSender, Self) {
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (snapshots_tx, snapshots_rx) = watch::channel(None);
        (
            FeedSender {
                events: events_tx,
                snapshots: Arc::new(snapshots_tx),
            },
            Self {
                events: Some(events_rx),
                snapshots: Some(snapshots_rx),
                snapshot_due: false,
            },
        )
    }

    /// The next event; a snapshot newer than the last one taken comes after the events
    /// already waiting, and never ahead of an event sent before it. `None` once the session
    /// is gone and everything it sent was taken.
    pub async fn next(&mut self) -> Option<SessionEvent> {
        loop {
            if let Some(event) = self.take_ready() {
                return Some(event);
            }
            if self.events.is_none() && self.snapshots.is_none() {
                return None;
            }
            let event = async {
                match self.events.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            };
            let changed = async {
                match self.snapshots.as_mut() {
                    Some(rx) => rx.changed().await.is_ok(),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                event = event => match event {
                    Some(event) => return Some(event),
                    None => self.events = None,
                },
                changed = changed => {
                    if changed {
                        self.snapshot_due = true;
                    } else {
                        self.snapshots = None;
                    }
                }
            }
        }
    }

    /// An event that is already waiting, without waiting: `Some(None)` when the session is
    /// gone and nothing is left, `None` when nothing is waiting yet.
    pub fn try_next(&mut self) -> Option<Option<SessionEvent>> {
        if let Some(rx) = self.snapshots.as_mut() {
            // `has_changed` reports a closed channel even while its last value is unseen.
            match rx.changed().now_or_never() {
                Some(Ok(())) => self.snapshot_due = true,
                Some(Err(_)) => self.snapshots = None,
                None => {}
            }
        }
        if let Some(event) = self.take_ready() {
            return Some(Some(event));
        }
        (self.events.is_none() && self.snapshots.is_none()).then_some(None)
    }

    /// A waiting event, else the due snapshot, without waiting. The newest snapshot is read
    /// before the event channel is looked at: every event sent before that snapshot is then
    /// already in the channel, so a snapshot is handed out only once they were all taken.
    fn take_ready(&mut self) -> Option<SessionEvent> {
        let snapshot = if self.snapshot_due {
            self.latest()
        } else {
            None
        };
        if let Some(rx) = self.events.as_mut() {
            match rx.try_recv() {
                Ok(event) => return Some(event),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => self.events = None,
            }
        }
        if self.snapshot_due {
            self.snapshot_due = false;
            if let Some(snapshot) = snapshot {
                return Some(SessionEvent::Snapshot(snapshot));
            }
        }
        None
    }

    /// The newest snapshot, marked seen.
    fn latest(&mut self) -> Option<Arc<SessionSnapshot>> {
        self.snapshots
            .as_mut()
            .and_then(|rx| rx.borrow_and_update().clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(turn_count: u32) -> SessionEvent {
        SessionEvent::Snapshot(Arc::new(SessionSnapshot {
            turn_count,
            ..SessionSnapshot::default()
        }))
    }

    fn turn_of(event: &SessionEvent) -> Option<u32> {
        match event {
            SessionEvent::Snapshot(s) => Some(s.turn_count),
            SessionEvent::AnswerReceived { turn, .. } => Some(*turn),
            _ => None,
        }
    }

    #[tokio::test]
    async fn events_arrive_in_order_and_only_the_latest_snapshot_is_delivered() {
        let (tx, mut feed) = SessionFeed::channel();
        tx.send(&snapshot(0));
        tx.send(&SessionEvent::AnswerReceived {
            turn: 1,
            text: "a".into(),
        });
        tx.send(&snapshot(1));
        tx.send(&SessionEvent::AnswerReceived {
            turn: 2,
            text: "b".into(),
        });
        tx.send(&snapshot(2));
        drop(tx);
        let mut seen = Vec::new();
        while let Some(event) = feed.next().await {
            seen.push(turn_of(&event));
        }
        // Both answers, in order, then only the newest of the three snapshots.
        assert_eq!(seen, vec![Some(1), Some(2), Some(2)]);
        assert!(feed.next().await.is_none());
    }

    #[test]
    fn try_next_tells_waiting_from_nothing_yet_from_gone() {
        let (tx, mut feed) = SessionFeed::channel();
        assert!(feed.try_next().is_none(), "nothing sent yet");
        tx.send(&snapshot(3));
        let event = feed.try_next().flatten();
        assert_eq!(event.as_ref().and_then(turn_of), Some(3));
        assert!(feed.try_next().is_none(), "the snapshot was taken");
        drop(tx);
        assert!(matches!(feed.try_next(), Some(None)), "gone");
    }

    /// A snapshot is never delivered ahead of an event the session sent before it, however
    /// the two threads interleave (the session runs on its own thread).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_snapshot_never_overtakes_the_events_sent_before_it() {
        const TURNS: u32 = 20_000;
        let (tx, mut feed) = SessionFeed::channel();
        let sender = std::thread::spawn(move || {
            for turn in 1..=TURNS {
                tx.send(&SessionEvent::AnswerReceived {
                    turn,
                    text: String::new(),
                });
                tx.send(&snapshot(turn));
            }
        });
        let mut answered = 0;
        while let Some(event) = feed.next().await {
            match event {
                SessionEvent::AnswerReceived { turn, .. } => answered = turn,
                SessionEvent::Snapshot(s) => assert!(
                    s.turn_count <= answered,
                    "snapshot of turn {} before its answer (last answer {answered})",
                    s.turn_count
                ),
                _ => {}
            }
        }
        sender.join().unwrap();
        assert_eq!(answered, TURNS);
    }
}
