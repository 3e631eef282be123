//! Shared set-up for the terminal app's tests: the scripted oat milk interview run through the
//! real session task (with the deterministic hash embedder), its events recorded in order and
//! folded into an [`App`] on demand.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use interviewer::embed::HashEmbedder;
use interviewer::llm::RetryPolicy;
use interviewer::pipeline::{Event, Interview, Services};
use interviewer::session::{self, Command, SessionControl, SessionEvent, SessionFeed};
use interviewer::store::Store;
use interviewer::tui::{App, FixedClock, Mode, SessionInfo, Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub use crate::common::{answers, config, example};
use crate::common::{scripted_services, spec};

/// Session id of every recorded interview, so ids drawn on screen are stable.
pub const SESSION_ID: &str = "tui-test";

/// Longest wait for one command's events.
pub const WAIT: Duration = Duration::from_secs(60);

/// One attempt and no delays: a scripted failure shows at once.
const NO_RETRY: RetryPolicy = RetryPolicy {
    max_attempts: 1,
    base_delay: Duration::ZERO,
    max_retry_after: Duration::ZERO,
};

/// The scripted provider for `script` and the deterministic hash embedder; no retries.
pub fn services(script: &Path) -> Services {
    scripted_services(script, Arc::new(HashEmbedder::default()), NO_RETRY)
}

/// The oat milk script with extraction failing in `turn`.
pub fn failing_script(dir: &Path, turn: u32) -> PathBuf {
    let text = std::fs::read_to_string(example("oat_milk_script.yaml")).unwrap();
    let failing = text.replacen(
        "extraction:\n",
        &format!("extraction:\n  - turn: {turn}\n    error: \"model unavailable (HTTP 503)\"\n"),
        1,
    );
    assert_ne!(failing, text, "the script has an extraction section");
    let path = dir.join("failing_script.yaml");
    std::fs::write(&path, failing).unwrap();
    path
}

/// A session on a fresh database in `dir`, started on the session task.
pub fn start(
    dir: &Path,
    script: &Path,
    max_turns: u32,
) -> (SessionInfo, SessionFeed, SessionControl) {
    let store = Store::open(dir.join("interviews.db")).unwrap();
    let interview = Interview::create(
        store,
        spec(max_turns),
        services(script),
        Some(SESSION_ID.to_owned()),
    )
    .unwrap();
    let handle = session::spawn(interview).unwrap();
    let info = handle.info.clone();
    let (events, control) = handle.into_parts();
    (info, events, control)
}

/// Every event of one interview, and where each command's events end.
pub struct Recording {
    pub info: SessionInfo,
    pub events: Vec<SessionEvent>,
    /// `ends[0]`: the end of the opening; `ends[k]`: the end of answer `k`'s turn.
    pub ends: Vec<usize>,
    dir: tempfile::TempDir,
}

impl Recording {
    /// The events up to the end of turn `turn` (0: the opening question).
    pub fn until(&self, turn: usize) -> &[SessionEvent] {
        let end = self.ends.get(turn).copied().unwrap_or(self.events.len());
        &self.events[..end]
    }

    /// The database the interview ran on.
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("interviews.db")
    }

    /// An app of `mode` with the events up to turn `turn` folded in.
    pub fn app(&self, mode: Mode, turn: usize) -> App {
        let mut app = app(&self.info, mode);
        for e in self.until(turn) {
            app.apply(e.clone());
        }
        app
    }
}

/// An app with a fixed clock and the colourless theme.
pub fn app(info: &SessionInfo, mode: Mode) -> App {
    App::new(
        info.clone(),
        mode,
        Theme::monochrome(),
        Arc::new(FixedClock(Instant::now())),
    )
}

/// Runs `answers` through a scripted session and records every event.
pub async fn record(script: &Path, max_turns: u32, answers: &[String]) -> Recording {
    let dir = tempfile::tempdir().unwrap();
    let (info, mut rx, control) = start(dir.path(), script, max_turns);
    let mut events = Vec::new();
    let mut ends = Vec::new();
    // The start publishes a snapshot before and after settling on the opening question; the
    // feed may deliver only the second (latest wins).
    collect_snapshot_after(&mut rx, &mut events, |e| {
        matches!(e.pipeline(), Some(Event::Question { turn: 0, .. }))
    })
    .await;
    ends.push(events.len());
    for answer in answers {
        if events.iter().any(|e| {
            matches!(
                e.pipeline(),
                Some(Event::Finished { .. } | Event::TurnFailed { .. })
            )
        }) {
            break;
        }
        control
            .commands
            .try_send(Command::Answer(answer.clone()))
            .unwrap();
        // Every earlier snapshot was taken: the next is the one after this command.
        collect_snapshot_after(&mut rx, &mut events, |_| true).await;
        ends.push(events.len());
    }
    control.shutdown();
    Recording {
        info,
        events,
        ends,
        dir,
    }
}

/// Receives events until a snapshot arrives after an event that `after` accepts.
async fn collect_snapshot_after(
    feed: &mut SessionFeed,
    into: &mut Vec<SessionEvent>,
    after: impl Fn(&SessionEvent) -> bool,
) {
    let mut armed = false;
    loop {
        let event = tokio::time::timeout(WAIT, feed.next())
            .await
            .expect("the session answers in time")
            .expect("the session is running");
        let done = armed && matches!(event, SessionEvent::Snapshot(_));
        armed = armed || after(&event);
        into.push(event);
        if done {
            return;
        }
    }
}

/// Draws `app` on a test terminal of `width` × `height`.
pub fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    app.ui.area = ratatui::layout::Rect::new(0, 0, width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(&*app, frame.area()))
        .unwrap();
    terminal
}

/// The screen as text, one line per row.
pub fn screen(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}
