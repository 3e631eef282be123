//! The one session driver: every front end (the terminal app, the headless `interview`
//! command, `simulate`) runs an interview through [`run`], and differs only in where the
//! answers come from ([`AnswerSource`]) and what it does with the events.
//!
//! The driver owns the session's runtime (a current-thread one: the interview's `SQLite`
//! connection stays on the calling thread while its model calls still overlap), the audit trail
//! and the store handle (inside the [`Interview`]). It brings the session to a waiting state
//! (the opening question, an interrupted turn resumed, or the pending question repeated),
//! then alternates commands from the source with pipeline turns, runs the deferred slot
//! discovery while the respondent reads the question, and publishes a snapshot of the graph
//! after every command.
//!
//! A person at the keyboard ([`AnswerSource::interactive`]) keeps the session open after a
//! failed turn (to retry) and after the end (to look around); a headless source ends the run
//! at the first failure, at the end of the interview, or when it has no more answers.

use futures::future::LocalBoxFuture;

use tokio::sync::mpsc::UnboundedSender;

use super::{Command, SessionEvent, snapshot};
use crate::audit::AuditTrail;
use crate::pipeline::events::EventObserver;
use crate::pipeline::{Event, EventSink, Interview, Pending, TurnError};

/// Steps past twice `max_turns` after which a headless run gives up: the pipeline ends every
/// interview at its last turn, so reaching this means a bug, and a run must never loop forever.
const SPARE_STEPS: u32 = 4;

/// What the session waits for when a source is asked for its next command.
pub struct Waiting<'a> {
    pub interview: &'a Interview,
    /// The turn the next answer makes.
    pub turn: u32,
    /// The question on screen (empty when the session has finished or none was asked).
    pub question: &'a str,
    /// Where a source reports what it does itself (a simulated respondent's model calls).
    pub events: &'a EventSink,
}

/// Why a source could not give a command.
pub type SourceError = Box<dyn std::error::Error + Send + Sync>;

/// Where the commands of a session come from: the keyboard, an answers file, a persona.
pub trait AnswerSource {
    /// The next command; `Ok(None)` when the source has nothing more (the session stays
    /// resumable).
    fn next<'a>(
        &'a mut self,
        waiting: &'a Waiting<'a>,
    ) -> LocalBoxFuture<'a, Result<Option<Command>, SourceError>>;

    /// Whether a person drives the session: then a failed turn waits for a retry and a
    /// finished interview for the person to leave, instead of ending the run.
    fn interactive(&self) -> bool {
        false
    }
}

/// How a run ended.
#[derive(Debug)]
pub enum Ending {
    /// The interview finished, for this reason.
    Finished(String),
    /// The source had no answer for `turn`.
    OutOfAnswers { turn: u32 },
    /// A turn failed (a headless run stops at the first failure).
    Failed(TurnError),
    /// The source failed.
    Source(SourceError),
    /// The store could not say what the session waits for.
    Fatal(String),
    /// A headless run went on past its turns; a bug, reported instead of looping.
    Stuck { steps: u32 },
    /// The source asked to stop (the session stays resumable).
    Shutdown,
}

/// Why the driver could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the session runtime: {0}")]
pub struct RuntimeError(#[from] std::io::Error);

/// Runs `interview` with commands from `source` on the calling thread until the run ends,
/// handing every event to `observe` as it happens (the audit trail's write warnings arrive as
/// pipeline [`Event::Warning`]s). Returns the interview (for a summary) and how the run ended.
///
/// Builds its own runtime, so it must not be called from inside one.
pub fn run(
    mut interview: Interview,
    source: &mut dyn AnswerSource,
    mut observe: impl FnMut(&SessionEvent),
) -> Result<(Interview, Ending), RuntimeError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let ending = runtime.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let warn = tx.clone();
        // The audit trail is never a reason to stop: without it the interview runs, and a
        // later write error is reported once.
        let (events, trail) = crate::audit::attach(
            EventSink::none().with_observer(Forward(tx.clone())),
            interview.store(),
            interview.session_id(),
            move |message| {
                let _ = warn.send(SessionEvent::Pipeline(Event::Warning { message }));
            },
        );
        let reports = Reports {
            tx,
            trail: trail.clone(),
        };
        let ending = {
            let drive = drive(&mut interview, source, &events, &reports);
            let mut drive = std::pin::pin!(drive);
            loop {
                // Events first: the driver yields before it asks its source, so whatever the
                // session said (the question above all) is shown before a source that blocks
                // on its input (stdin) is asked.
                tokio::select! {
                    biased;
                    Some(event) = rx.recv() => observe(&event),
                    ending = &mut drive => break ending,
                }
            }
        };
        // Events sent just before the run ended; not waiting for the channel to close, so a
        // sender kept elsewhere cannot hold the run open.
        while let Ok(event) = rx.try_recv() {
            observe(&event);
        }
        if let Some(trail) = trail {
            trail.flush();
        }
        ending
    });
    Ok((interview, ending))
}

/// Hands the pipeline's events to the driver's channel, beside the driver's own.
#[derive(Debug)]
struct Forward(UnboundedSender<SessionEvent>);

impl EventObserver for Forward {
    fn observe(&self, event: &Event) {
        let _ = self.0.send(SessionEvent::Pipeline(event.clone()));
    }
}

/// Where the driver's own events go: the same channel as the pipeline's, so a view sees an
/// answer before the turn it starts. A fatal error is also written to the audit trail.
pub struct Reports {
    tx: UnboundedSender<SessionEvent>,
    trail: Option<AuditTrail>,
}

impl Reports {
    /// Reports that go nowhere but `tx` (no audit trail).
    pub fn new(tx: UnboundedSender<SessionEvent>) -> Self {
        Self { tx, trail: None }
    }

    pub(super) fn send(&self, event: SessionEvent) {
        // Nobody watching is fine: the session runs the same unwatched.
        let _ = self.tx.send(event);
    }

    fn fatal(&self, error: String) {
        if let Some(trail) = &self.trail {
            trail.fatal(&error);
        }
        self.send(SessionEvent::Fatal { error });
    }
}

/// The driver's loop; see the module documentation.
pub async fn drive(
    interview: &mut Interview,
    source: &mut dyn AnswerSource,
    events: &EventSink,
    reports: &Reports,
) -> Ending {
    let interactive = source.interactive();
    reports.send(SessionEvent::Resumed(Box::new(snapshot::history(
        interview,
    ))));
    for message in interview.load_warnings() {
        events.emit(Event::Warning {
            message: message.clone(),
        });
    }
    snapshot::publish(interview, reports);
    let mut failure = settle(interview, events, reports).await;
    if let Some(e) = &failure {
        events.emit(failed(e));
    }
    snapshot::publish(interview, reports);
    let max_steps = interview.spec().max_turns.saturating_mul(2) + SPARE_STEPS;
    let mut steps = 0;
    loop {
        if !interactive {
            if let Some(e) = failure.take() {
                return Ending::Failed(e);
            }
            steps += 1;
            if steps > max_steps {
                return Ending::Stuck { steps };
            }
        }
        let (turn, question) = match interview.pending() {
            Err(e) => {
                reports.fatal(e.to_string());
                return Ending::Fatal(e.to_string());
            }
            Ok(Pending::Finished { reason }) if !interactive => return Ending::Finished(reason),
            Ok(Pending::Finished { .. }) => (interview.turn_count() + 1, String::new()),
            Ok(Pending::Opening) => (0, String::new()),
            Ok(Pending::Resume { turn, .. }) => (turn, String::new()),
            Ok(Pending::Answer { turn, question }) => (turn, question),
        };
        let waiting = Waiting {
            interview,
            turn,
            question: &question,
            events,
        };
        // Let the runner show this step's events before the source is asked: a source may
        // block its thread until the respondent answers the question those events carry.
        tokio::task::yield_now().await;
        let command = match source.next(&waiting).await {
            Ok(Some(command)) => command,
            Ok(None) => return Ending::OutOfAnswers { turn },
            Err(e) => return Ending::Source(e),
        };
        failure = match command {
            Command::Answer(text) => {
                reports.send(SessionEvent::AnswerReceived {
                    turn: interview.turn_count() + 1,
                    text: text.clone(),
                });
                match interview.answer(&text, events).await {
                    Ok(_) => discover(interview, events).await,
                    Err(e) => Some(e),
                }
            }
            Command::SpokenAnswer { text, speech } => {
                reports.send(SessionEvent::AnswerReceived {
                    turn: interview.turn_count() + 1,
                    text: text.clone(),
                });
                match interview.answer_spoken(&text, speech, events).await {
                    Ok(_) => discover(interview, events).await,
                    Err(e) => Some(e),
                }
            }
            Command::Retry => settle(interview, events, reports).await,
            Command::EditQuestion(text) => interview.edit_question(&text, events).err(),
            Command::Regenerate { strategy, node_id } => interview
                .regenerate(&strategy, node_id.as_deref(), events)
                .await
                .err(),
            Command::EndNow => {
                if let Err(e) = interview.end_now("Ended by researcher", events) {
                    reports.fatal(e.to_string());
                }
                None
            }
            Command::Shutdown => return Ending::Shutdown,
        };
        if let Some(e) = &failure {
            events.emit(failed(e));
        }
        snapshot::publish(interview, reports);
        interview.flush_journal();
    }
}

/// The question is out: the deferred slot discovery runs while the respondent reads and types.
async fn discover(interview: &mut Interview, events: &EventSink) -> Option<TurnError> {
    interview.discover_deferred_slots(events).await.err()
}

/// Brings the session to a state where it waits for an answer (or is finished); returns the
/// failure of a turn it had to run.
async fn settle(
    interview: &mut Interview,
    events: &EventSink,
    reports: &Reports,
) -> Option<TurnError> {
    let pending = match interview.pending() {
        Ok(p) => p,
        Err(e) => {
            reports.fatal(e.to_string());
            return None;
        }
    };
    match pending {
        Pending::Opening => interview.opening(events).await.err(),
        Pending::Resume {
            answer: Some(_), ..
        } => match interview.resume(events).await {
            Ok(_) => discover(interview, events).await,
            Err(e) => Some(e),
        },
        Pending::Resume { turn, answer: None } => {
            // Interrupted before the answer was saved: ask the same question again.
            if let Ok(question) = interview.question_of(turn.saturating_sub(1)) {
                events.emit(Event::Question {
                    turn: turn - 1,
                    text: question,
                    closing: false,
                });
            }
            None
        }
        Pending::Answer { turn, question } => {
            events.emit(Event::Question {
                turn: turn - 1,
                text: question,
                closing: false,
            });
            None
        }
        Pending::Finished { reason } => {
            events.emit(Event::Finished { reason });
            None
        }
    }
}

fn failed(e: &TurnError) -> Event {
    Event::TurnFailed {
        turn: e.turn,
        stage: e.stage,
        error: e.error.to_string(),
    }
}
