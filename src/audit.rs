//! The audit trail: an append-only JSONL file per session recording every turn stage, LLM
//! call, strategy decision and termination.
//!
//! # Location
//!
//! `<directory of the database file>/audit/<session id>.jsonl` ([`AuditTrail::path_for`]);
//! with the default database that is `<data dir>/interviewer/audit/`. The directory is created
//! with mode 0700 and the file with 0600, like the database. An in-memory store has no trail.
//! Lines are only ever appended: a resumed session continues its file.
//!
//! # Format
//!
//! One JSON object per line. Every line starts with `ts` (RFC 3339, UTC, milliseconds: when
//! the event happened), `event` (the type below), `session` (the session id) and `turn` (the
//! turn it belongs to; 0 is the opening question; `termination` and `fatal` carry the latest
//! turn). Prompts, replies and API keys are never written.
//!
//! - `stage`: one per stage run (`name`, seed `number`, `started`, `elapsed_ms`, `outcome`
//!   `ok` | `resumed` | `failed`, then `summary`, or `error` when it failed). A stage restored
//!   from its checkpoint is written with `outcome: "resumed"` and `elapsed_ms: 0`.
//! - `llm_call`: one per model call (`role`, `provider`, `model`, `tokens_in`, `tokens_out`,
//!   `latency_ms`, `cost_usd` (`null` when the model's price is unknown), `attempts`, `retries`,
//!   `outcome`: `ok` or `error: …`).
//! - `strategy_decision`: the engine's decision at the end of every completed turn, and a
//!   researcher's override of a turn's question (`by`: `engine` | `researcher`; `phase`, `null`
//!   for overrides; `strategy`; `focus` `{node_id, label}` or `null`; the engine's top three
//!   `alternatives` `{strategy, score}` in rank order; overrides add `edited`: whether only the
//!   text was edited by hand).
//! - `termination`: the interview ended (`reason`).
//! - `fatal`: the session could not go on (`error`).
//!
//! ```text
//! {"ts":"2026-11-22T06:26:38.621Z","event":"stage","session":"3f07877e-430a-456d-b59a-a9a1e6398657","turn":1,"name":"srl_preprocessing","number":"2.5","started":"2026-11-22T06:26:38.619Z","elapsed_ms":1,"outcome":"ok","summary":"1 discourse relations, 3 frames"}
//! {"ts":"2026-11-22T06:27:02.114Z","event":"stage","session":"3f07877e-430a-456d-b59a-a9a1e6398657","turn":2,"name":"extraction","number":"3","started":"2026-11-22T06:27:00.101Z","elapsed_ms":2013,"outcome":"failed","error":"extraction call failed: anthropic: timed out (2 attempts)"}
//! {"ts":"2026-11-22T06:26:38.621Z","event":"llm_call","session":"3f07877e-430a-456d-b59a-a9a1e6398657","turn":1,"role":"extraction","provider":"anthropic","model":"claude-sonnet-4","tokens_in":1830,"tokens_out":212,"latency_ms":402,"cost_usd":0.00867,"attempts":1,"retries":0,"outcome":"ok"}
//! {"ts":"2026-11-22T06:27:02.113Z","event":"llm_call","session":"3f07877e-430a-456d-b59a-a9a1e6398657","turn":2,"role":"extraction","provider":"anthropic","model":"claude-sonnet-4","tokens_in":0,"tokens_out":0,"latency_ms":2012,"cost_usd":null,"attempts":2,"retries":1,"outcome":"error: anthropic: timed out (2 attempts)"}
//! {"ts":"2026-11-22T06:26:38.770Z","event":"strategy_decision","session":"3f07877e-430a-456d-b59a-a9a1e6398657","turn":1,"by":"engine","phase":"early","strategy":"explore_attributes","focus":null,"alternatives":[{"strategy":"explore_attributes","score":1.65},{"strategy":"deepen","score":0.9600000000000002},{"strategy":"lateral","score":0.3}]}
//! {"ts":"2026-11-22T06:31:12.002Z","event":"strategy_decision","session":"3f07877e-430a-456d-b59a-a9a1e6398657","turn":2,"by":"researcher","phase":null,"strategy":"deepen","focus":{"node_id":"440aa9d5-53cc-4677-86f9-b8ee40fb6ba5","label":"creamy texture"},"alternatives":[{"strategy":"explore_attributes","score":1.74},{"strategy":"deepen","score":0.8960000000000001},{"strategy":"lateral","score":0.36}],"edited":false}
//! {"ts":"2026-11-22T06:26:39.092Z","event":"termination","session":"3f07877e-430a-456d-b59a-a9a1e6398657","turn":10,"reason":"Closing strategy selected"}
//! {"ts":"2026-11-22T06:26:39.095Z","event":"fatal","session":"3f07877e-430a-456d-b59a-a9a1e6398657","turn":10,"error":"database error while saving the state of session …"}
//! ```
//!
//! # Never in the way of a turn
//!
//! [`AuditTrail`] is an [`EventObserver`]: attach it with [`EventSink::with_observer`]. The
//! observer only copies a few fields and sends them over a channel; a dedicated thread
//! formats and appends the lines, so a turn never waits for the disk. A write error never
//! fails a turn: it is logged once (`tracing` warning), kept for [`AuditTrail::error`] and
//! passed to the [`AuditTrail::on_error`] callback, and every later event is dropped.
//!
//! [`EventSink::with_observer`]: crate::pipeline::EventSink::with_observer

mod record;
mod writer;

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

pub use record::TOP_ALTERNATIVES;

use crate::pipeline::events::EventObserver;
use crate::pipeline::{Event, EventSink};
use crate::store::{Store, StoreOps};
use record::Observed;
use writer::{Message, Writer};

/// The directory under the database's directory that holds the trails.
pub const AUDIT_DIR: &str = "audit";

/// How long [`AuditTrail::flush`] waits for the writer before giving up.
///
/// Generous for a local disk (a line is a few hundred bytes); a hung network file system
/// must not hang the command that is shutting down.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a trail could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The id cannot be a file name (path separators, a leading dot, control characters).
    #[error(
        "session id '{0}' cannot name an audit file: use letters, digits, '-', '_' and '.' \
         (not first)"
    )]
    BadSessionId(String),
    #[error("cannot open the audit trail {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the audit writer thread: {0}")]
    Thread(std::io::Error),
    #[error("cannot read session {id} for its audit trail: {source}")]
    Store {
        id: String,
        #[source]
        source: crate::store::StoreError,
    },
}

/// A callback told once about the first write error.
type Notice = Box<dyn FnOnce(String) + Send>;

/// What the observer side and the writer thread share.
struct Shared {
    path: PathBuf,
    error: OnceLock<String>,
    notice: Mutex<Option<Notice>>,
}

impl Shared {
    fn error(&self) -> Option<&String> {
        self.error.get()
    }

    /// Records the first failure: warns in the log, keeps the message, calls the notice.
    fn fail(&self, e: &std::io::Error) {
        let message = format!(
            "audit trail {}: {e}; later events are not recorded",
            self.path.display()
        );
        if self.error.set(message.clone()).is_err() {
            return;
        }
        tracing::warn!(path = %self.path.display(), error = %e, "audit trail write failed");
        let notice = self
            .notice
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(notice) = notice {
            notice(message);
        }
    }
}

/// A session's audit trail; cheap to clone (clones share one file and writer thread).
///
/// The writer thread ends when the last clone is dropped, after writing what it was sent.
#[derive(Clone)]
pub struct AuditTrail {
    tx: Sender<Message>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for AuditTrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditTrail")
            .field("path", &self.shared.path)
            .field("error", &self.shared.error())
            .finish_non_exhaustive()
    }
}

impl AuditTrail {
    /// Where the trail of `session_id` lives for the database at `db_path`.
    pub fn path_for(db_path: &Path, session_id: &str) -> Result<PathBuf, AuditError> {
        let valid = !session_id.is_empty()
            && !session_id.starts_with('.')
            && session_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !valid {
            return Err(AuditError::BadSessionId(session_id.to_owned()));
        }
        let dir = db_path.parent().unwrap_or_else(|| Path::new(""));
        Ok(dir.join(AUDIT_DIR).join(format!("{session_id}.jsonl")))
    }

    /// The trail of `session_id` next to `store`'s file, or `None` for an in-memory store.
    /// Session-level events before the first turn event are filed under the session's
    /// completed-turn count.
    pub fn for_store(store: &Store, session_id: &str) -> Result<Option<Self>, AuditError> {
        let Some(db) = store.path() else {
            return Ok(None);
        };
        let turn = store
            .get_session(session_id)
            .map_err(|source| AuditError::Store {
                id: session_id.to_owned(),
                source,
            })?
            .map_or(0, |s| s.state.turn_count);
        Self::open(&Self::path_for(db, session_id)?, session_id, turn).map(Some)
    }

    /// Opens (creating if needed) the trail file at `path` for appending and starts its
    /// writer thread. `turn` is the turn session-level events use until a turn event arrives.
    pub fn open(path: &Path, session_id: &str, turn: u32) -> Result<Self, AuditError> {
        let io = |source| AuditError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir).map_err(io)?;
        }
        let mut options = OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path).map_err(io)?;
        let shared = Arc::new(Shared {
            path: path.to_path_buf(),
            error: OnceLock::new(),
            notice: Mutex::new(None),
        });
        let (tx, rx) = mpsc::channel();
        let writer = Writer {
            file,
            session: session_id.to_owned(),
            turn,
            started: HashMap::new(),
            shared: Arc::clone(&shared),
        };
        std::thread::Builder::new()
            .name("interviewer-audit".to_owned())
            .spawn(move || writer.run(&rx))
            .map_err(AuditError::Thread)?;
        Ok(Self { tx, shared })
    }

    /// The trail's file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The first write error, if writing has failed (nothing is written after it).
    pub fn error(&self) -> Option<String> {
        self.shared.error().cloned()
    }

    /// Calls `notice` once with the first write error (at once if it already happened), on
    /// the writer thread: a UI would forward it to its status bar through a channel.
    #[must_use]
    pub fn on_error(self, notice: impl FnOnce(String) + Send + 'static) -> Self {
        if let Some(message) = self.error() {
            notice(message);
        } else {
            let mut slot = self
                .shared
                .notice
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *slot = Some(Box::new(notice));
        }
        self
    }

    /// Waits until every event observed so far is written (or dropped after an error), for at
    /// most a few seconds. For shutdown and tests; a running turn never calls it.
    pub fn flush(&self) {
        let (done_tx, done_rx) = mpsc::channel();
        if self.tx.send(Message::Flush(done_tx)).is_ok() {
            // A timeout leaves the remaining lines to the writer thread; nothing else to do.
            let _ = done_rx.recv_timeout(FLUSH_TIMEOUT);
        }
    }
}

impl AuditTrail {
    /// Records that the session cannot go on (its driver's fatal error: not a pipeline event).
    pub fn fatal(&self, error: &str) {
        let _ = self.tx.send(Message::Event {
            at: SystemTime::now(),
            observed: Observed::Fatal {
                error: error.to_owned(),
            },
        });
    }
}

impl EventObserver for AuditTrail {
    fn observe(&self, event: &Event) {
        if let Some(observed) = Observed::from_event(event) {
            let message = Message::Event {
                at: SystemTime::now(),
                observed,
            };
            // The writer only stops when every trail handle is gone, so this cannot fail while
            // `self` exists; if it ever did, the event is simply not audited.
            let _ = self.tx.send(message);
        }
    }
}

/// `events` with the session's audit trail attached, when the store is a file and the trail
/// can be opened; otherwise `events` unchanged (the interview never stops for its trail: why
/// there is none is logged). `on_error` hears of the first write error. Flush the returned
/// trail before the process ends.
pub fn attach(
    events: EventSink,
    store: &Store,
    session_id: &str,
    on_error: impl FnOnce(String) + Send + 'static,
) -> (EventSink, Option<AuditTrail>) {
    match AuditTrail::for_store(store, session_id) {
        Ok(Some(trail)) => {
            let trail = trail.on_error(on_error);
            (events.with_observer(trail.clone()), Some(trail))
        }
        Ok(None) => (events, None),
        Err(e) => {
            tracing::warn!(session = session_id, error = %e, "no audit trail");
            (events, None)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use std::sync::mpsc::channel;

    use super::*;
    use crate::pipeline::{EventSink, Stage};

    fn lines(path: &Path) -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn the_path_is_next_to_the_database_and_ids_are_checked() {
        let path = AuditTrail::path_for(Path::new("/data/i.db"), "abc-1").unwrap();
        assert_eq!(path, Path::new("/data/audit/abc-1.jsonl"));
        for bad in ["", "../x", "a/b", ".hidden", "a\\b", "a\nb"] {
            assert!(matches!(
                AuditTrail::path_for(Path::new("i.db"), bad),
                Err(AuditError::BadSessionId(_))
            ));
        }
    }

    #[test]
    fn stage_lines_pair_start_and_finish_and_skip_unaudited_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit").join("s.jsonl");
        let trail = AuditTrail::open(&path, "s", 4).unwrap();
        let sink = EventSink::none().with_observer(trail.clone());
        sink.emit(Event::Finished {
            reason: "early".into(),
        });
        sink.emit(Event::StageStarted {
            turn: 5,
            stage: Stage::Extraction,
        });
        sink.emit(Event::QuestionDelta {
            turn: 5,
            text: "Wh".into(),
        });
        sink.emit(Event::StageFinished {
            turn: 5,
            stage: Stage::Extraction,
            elapsed: Duration::from_millis(12),
            summary: "2 concepts".into(),
            resumed: false,
        });
        sink.emit(Event::TurnFailed {
            turn: 5,
            stage: Stage::GraphUpdate,
            error: "boom".into(),
        });
        trail.flush();
        let got = lines(&path);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0]["event"], "termination");
        assert_eq!(
            got[0]["turn"], 4,
            "session-level events use the turn given at open"
        );
        assert_eq!(got[1]["event"], "stage");
        assert_eq!(got[1]["name"], "extraction");
        assert_eq!(got[1]["number"], "3");
        assert_eq!(got[1]["elapsed_ms"], 12);
        assert_eq!(got[1]["outcome"], "ok");
        assert!(got[1]["started"].as_str().unwrap() <= got[1]["ts"].as_str().unwrap());
        assert_eq!(got[2]["outcome"], "failed");
        assert_eq!(got[2]["error"], "boom");
        assert!(trail.error().is_none());
    }

    #[test]
    fn an_override_is_a_researcher_decision_with_the_engine_ranking() {
        use crate::scoring::ScoredCandidate;
        let candidate = |strategy: &str, rank: u32, node: &str| ScoredCandidate {
            strategy: strategy.into(),
            node_id: node.into(),
            signal_contributions: Vec::new(),
            base_score: 1.0,
            phase_multiplier: 1.0,
            phase_bonus: 0.0,
            final_score: 10.0 - f64::from(rank),
            rank,
            selected: strategy == "b",
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let trail = AuditTrail::open(&path, "s", 3).unwrap();
        let sink = EventSink::none().with_observer(trail.clone());
        sink.emit(Event::Overridden {
            turn: 3,
            strategy: "d".into(),
            focus: None,
            score_decomposition: Some(vec![
                candidate("c", 3, ""),
                candidate("a", 1, ""),
                candidate("a", 1, "node-1"),
                candidate("d", 4, ""),
                candidate("b", 2, ""),
            ]),
            edited: false,
        });
        trail.flush();
        let got = lines(&path);
        assert_eq!(got[0]["event"], "strategy_decision");
        assert_eq!(got[0]["by"], "researcher");
        assert_eq!(got[0]["edited"], false);
        assert_eq!(got[0]["strategy"], "d");
        let ranked: Vec<&str> = got[0]["alternatives"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["strategy"].as_str().unwrap())
            .collect();
        assert_eq!(ranked, ["a", "b", "c"]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_write_error_is_reported_once_and_later_events_are_dropped() {
        let trail = AuditTrail::open(Path::new("/dev/full"), "s", 0).unwrap();
        let (tx, rx) = channel();
        let trail = trail.on_error(move |message| tx.send(message).unwrap());
        let sink = EventSink::none().with_observer(trail.clone());
        for _ in 0..3 {
            sink.emit(Event::Finished {
                reason: "done".into(),
            });
        }
        trail.flush();
        let message = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(message.contains("/dev/full"), "{message}");
        assert!(rx.try_recv().is_err(), "reported once");
        assert_eq!(trail.error(), Some(message));
    }
}
