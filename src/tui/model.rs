//! The session as the app knows it: pipeline [`Event`]s folded into plain data. Nothing here
//! draws or reads keys; whoever produced the events (the session task with a person typing, a
//! simulation with a synthetic respondent, a test replaying a run) the same fold applies.
//!
//! Every text that came from a respondent or a model is sanitised here, on the way in, so the
//! panels only ever hold drawable text.

mod graph;

use std::sync::Arc;
use std::time::Instant;

use crate::domain::Speaker;
use crate::pipeline::{Event, Stage, TurnResult};
use crate::session::SessionEvent;
use crate::session::views::{SessionHistory, SessionSnapshot};

pub use graph::GraphIndex;

use super::sanitize::{clean, clean_line};

/// One utterance on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub turn: u32,
    pub speaker: Speaker,
    pub text: String,
    /// Why the text is not the engine's own (an override), or that it closes the interview.
    pub note: Option<String>,
}

/// What the session is busy with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// The opening question is being generated (or an interrupted turn resumed).
    Starting,
    /// A turn runs on an answer.
    Turn,
    /// A researcher's regeneration or edit of the pending question.
    Override,
}

/// Work in progress: which turn, which stage, since when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    pub work: Work,
    pub turn: u32,
    pub stage: Option<Stage>,
    /// When the work (the whole turn) began.
    pub since: Instant,
    /// When the current stage began (`since` until the first stage starts).
    pub stage_since: Instant,
}

/// A failed turn or override, as the error popup shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub turn: u32,
    pub stage: Stage,
    pub error: String,
    pub work: Work,
}

/// Tokens and cost so far: the store's totals from the last snapshot plus calls since.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: Option<f64>,
}

impl Usage {
    fn add(&mut self, tokens_in: u64, tokens_out: u64, cost: Option<f64>) {
        self.tokens_in = self.tokens_in.saturating_add(tokens_in);
        self.tokens_out = self.tokens_out.saturating_add(tokens_out);
        if let Some(c) = cost {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }
}

/// The folded session.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub conversation: Vec<Message>,
    /// The question being streamed: its turn and the text so far.
    pub streaming: Option<(u32, String)>,
    /// The turn whose question waits for an answer.
    pub question_turn: Option<u32>,
    pub running: Option<Running>,
    /// The latest completed turn (adjusted by overrides).
    pub last: Option<Box<TurnResult>>,
    /// Every completed turn before the latest, oldest first (adjusted by overrides): what
    /// stepping back through the session shows.
    pub earlier: Vec<TurnResult>,
    /// The turn the panels show after the researcher stepped back (`[`); `None` follows the
    /// latest turn. Live events still fold in meanwhile.
    pub viewing: Option<u32>,
    /// The snapshot as it stood after the viewed turn (nodes, edges and slots by provenance)
    /// with its lookups; `None` while following the latest turn.
    pub viewed_graph: Option<(Box<SessionSnapshot>, GraphIndex)>,
    pub snapshot: Option<Arc<SessionSnapshot>>,
    /// Lookups over the snapshot's graph, rebuilt with each snapshot.
    pub graph: GraphIndex,
    pub usage: Usage,
    /// Provider and model of the latest call (the question model's once known).
    pub provider: Option<(String, String)>,
    pub failure: Option<Failure>,
    pub finished: Option<String>,
    pub fatal: Option<String>,
    /// The latest warning that does not stop the interview (shown in the status bar).
    pub warning: Option<String>,
    /// Completed turns.
    pub turns_done: u32,
    /// The pipeline's event stream ended (the session task stopped).
    pub closed: bool,
}

impl Model {
    /// The turn the panels show: the one stepped back to, else the latest.
    pub fn shown(&self) -> Option<&TurnResult> {
        match self.viewing {
            Some(turn) => self
                .earlier
                .iter()
                .find(|r| r.turn_number == turn)
                .or_else(|| self.last.as_deref().filter(|l| l.turn_number == turn)),
            None => self.last.as_deref(),
        }
    }

    /// The snapshot the graph panels draw: as of the viewed turn, else the latest.
    pub fn graph_snapshot(&self) -> Option<&SessionSnapshot> {
        match &self.viewed_graph {
            Some((snapshot, _)) => Some(snapshot),
            None => self.snapshot.as_deref(),
        }
    }

    /// The lookups over [`Model::graph_snapshot`].
    pub fn graph_index(&self) -> &GraphIndex {
        self.viewed_graph.as_ref().map_or(&self.graph, |(_, g)| g)
    }

    /// Rebuilds the as-of-turn graph after the view or the snapshot changed.
    fn refresh_view(&mut self) {
        self.viewed_graph = match (self.viewing, self.snapshot.as_deref()) {
            (Some(turn), Some(snapshot)) => {
                let past = graph::as_of(snapshot, turn);
                let index = GraphIndex::build(&past);
                Some((Box::new(past), index))
            }
            _ => None,
        };
    }

    /// Completed turn numbers, oldest first.
    pub fn turn_numbers(&self) -> Vec<u32> {
        self.earlier
            .iter()
            .map(|r| r.turn_number)
            .chain(self.last.as_ref().map(|l| l.turn_number))
            .collect()
    }

    /// Steps the view one completed turn back or forward; stepping forward from the latest
    /// does nothing, and reaching the latest follows it again.
    pub fn step_view(&mut self, back: bool) {
        let turns = self.turn_numbers();
        let Some(&latest) = turns.last() else {
            return;
        };
        let at = self
            .viewing
            .and_then(|v| turns.iter().position(|t| *t == v))
            .unwrap_or(turns.len() - 1);
        let to = if back {
            at.saturating_sub(1)
        } else {
            (at + 1).min(turns.len() - 1)
        };
        let turn = turns.get(to).copied().unwrap_or(latest);
        self.viewing = (turn != latest).then_some(turn);
        self.refresh_view();
    }

    /// Jumps the view to the first completed turn, or back to the latest (`None`).
    pub fn view_first(&mut self, first: bool) {
        let turns = self.turn_numbers();
        self.viewing = if first && turns.len() > 1 {
            turns.first().copied()
        } else {
            None
        };
        self.refresh_view();
    }

    /// Marks work the app just asked for, so sending is disabled before the first event.
    pub fn begin(&mut self, work: Work, turn: u32, now: Instant) {
        self.failure = None;
        self.running = Some(Running {
            work,
            turn,
            stage: None,
            since: now,
            stage_since: now,
        });
    }

    /// Folds one event; `now` stamps stage starts.
    pub fn apply(&mut self, event: impl Into<SessionEvent>, now: Instant) {
        match event.into() {
            SessionEvent::Pipeline(event) => self.apply_pipeline(event, now),
            SessionEvent::Resumed(history) => self.resumed(*history),
            SessionEvent::AnswerReceived { turn, text } => {
                self.upsert(turn, Speaker::Respondent, clean(text.trim()), None);
                self.question_turn = None;
                if self.running.is_none_or(|r| r.turn != turn) {
                    self.begin(Work::Turn, turn, now);
                }
            }
            SessionEvent::Snapshot(snapshot) => self.snapshot(snapshot),
            SessionEvent::Fatal { error } => {
                self.running = None;
                self.fatal = Some(clean(&error));
            }
        }
    }

    /// Folds one of the pipeline's events.
    fn apply_pipeline(&mut self, event: Event, now: Instant) {
        match event {
            // A completed turn's slot discovery runs after its question, while the respondent
            // types: it is no turn in progress, and sending stays open.
            Event::StageStarted {
                turn,
                stage: Stage::SlotDiscovery,
            } if turn <= self.turns_done => {}
            Event::StageStarted { turn, stage } => {
                let (work, since) = match self.running {
                    Some(r) if r.turn == turn => (r.work, r.since),
                    _ => (Work::Turn, now),
                };
                self.running = Some(Running {
                    work,
                    turn,
                    stage: Some(stage),
                    since,
                    stage_since: now,
                });
            }
            Event::StageFinished { .. } => {}
            Event::TurnCompleted(result) => self.completed(result),
            Event::LlmCall {
                role,
                provider,
                model,
                tokens_in,
                tokens_out,
                cost_usd,
                ..
            } => {
                self.usage.add(tokens_in, tokens_out, cost_usd);
                if self.provider.is_none() || role == crate::llm::Role::QuestionGeneration {
                    self.provider = Some((clean_line(&provider), clean_line(&model)));
                }
                // A question call has ended: what streamed was checked, and a reply that failed
                // the check is asked for again, so the next deltas start a new text.
                if role == crate::llm::Role::QuestionGeneration {
                    self.streaming = None;
                }
            }
            Event::QuestionDelta { turn, text } => match &mut self.streaming {
                Some((t, so_far)) if *t == turn => so_far.push_str(&clean(&text)),
                _ => self.streaming = Some((turn, clean(&text))),
            },
            Event::Question {
                turn,
                text,
                closing,
            } => self.question(turn, &text, closing),
            Event::TurnFailed { turn, stage, error } => {
                let work = self.running.map_or(Work::Turn, |r| r.work);
                self.running = None;
                self.streaming = None;
                self.failure = Some(Failure {
                    turn,
                    stage,
                    error: clean(&error),
                    work,
                });
            }
            Event::Finished { reason } => {
                self.running = None;
                self.question_turn = None;
                self.finished = Some(clean_line(&reason));
            }
            Event::Warning { message } => self.warning = Some(clean_line(&message)),
            Event::Overridden { .. } => self.overridden(event, now),
        }
    }

    fn completed(&mut self, result: Box<TurnResult>) {
        self.turns_done = result.turn_number;
        if let Some(previous) = self.last.take()
            && previous.turn_number < result.turn_number
        {
            self.earlier.push(*previous);
        }
        self.last = Some(result);
    }

    fn resumed(&mut self, history: SessionHistory) {
        if self.conversation.is_empty() {
            for line in history.transcript {
                self.upsert(line.turn, line.speaker, clean(line.text.trim()), None);
            }
        }
        let mut turns = history.turns;
        if let Some(last) = turns.pop() {
            self.turns_done = last.turn_number;
            self.last = Some(Box::new(last));
            self.earlier = turns;
        }
    }

    fn question(&mut self, turn: u32, text: &str, closing: bool) {
        let note = if closing {
            Some("closing question".to_owned())
        } else {
            self.conversation
                .iter()
                .find(|m| m.turn == turn && m.speaker == Speaker::Interviewer)
                .and_then(|m| m.note.clone())
                .filter(|_| self.running.is_some_and(|r| r.work == Work::Override))
        };
        self.upsert(turn, Speaker::Interviewer, clean(text.trim()), note);
        self.streaming = None;
        self.running = None;
        self.failure = None;
        self.question_turn = (!closing && self.finished.is_none()).then_some(turn);
    }

    fn overridden(&mut self, event: Event, now: Instant) {
        let Event::Overridden {
            turn,
            strategy,
            focus,
            score_decomposition,
            edited,
        } = event
        else {
            return;
        };
        let focus_label = focus.as_ref().map(|f| clean_line(&f.label));
        let note = if edited {
            "edited by the researcher".to_owned()
        } else {
            match &focus_label {
                Some(label) => format!("regenerated: {} → {label}", clean_line(&strategy)),
                None => format!("regenerated: {}", clean_line(&strategy)),
            }
        };
        if let Some(last) = self.last.as_mut().filter(|l| l.turn_number == turn) {
            last.strategy_selected = strategy;
            last.focus = focus;
            if let Some(d) = score_decomposition {
                last.score_decomposition = d;
            }
        }
        // The Question event that follows must keep this note.
        self.running = Some(Running {
            work: Work::Override,
            turn,
            stage: None,
            since: self.running.map_or(now, |r| r.since),
            stage_since: now,
        });
        if let Some(m) = self
            .conversation
            .iter_mut()
            .find(|m| m.turn == turn && m.speaker == Speaker::Interviewer)
        {
            m.note = Some(note);
        }
    }

    fn snapshot(&mut self, snapshot: Arc<SessionSnapshot>) {
        self.usage = Usage {
            tokens_in: snapshot.usage.tokens_in,
            tokens_out: snapshot.usage.tokens_out,
            cost_usd: snapshot.usage.cost_usd,
        };
        if let Some(reason) = &snapshot.finished {
            self.finished = Some(clean_line(reason));
            self.question_turn = None;
        }
        self.turns_done = self.turns_done.max(snapshot.turn_count);
        self.graph = GraphIndex::build(&snapshot);
        self.snapshot = Some(snapshot);
        if self.viewing.is_some() {
            self.refresh_view();
        }
    }

    /// Inserts or replaces the utterance of `speaker` in `turn`, keeping turn order.
    fn upsert(&mut self, turn: u32, speaker: Speaker, text: String, note: Option<String>) {
        if let Some(m) = self
            .conversation
            .iter_mut()
            .find(|m| m.turn == turn && m.speaker == speaker)
        {
            m.text = text;
            m.note = note;
            return;
        }
        let rank = |m: &Message| (m.turn, u8::from(m.speaker == Speaker::Interviewer));
        let new = Message {
            turn,
            speaker,
            text,
            note,
        };
        let at = self
            .conversation
            .iter()
            .position(|m| rank(m) > rank(&new))
            .unwrap_or(self.conversation.len());
        self.conversation.insert(at, new);
    }

    /// Whether the focus entry of `turn` was overridden by a researcher.
    pub fn overridden_turn(&self, turn: u32) -> bool {
        self.snapshot.as_ref().is_some_and(|s| {
            s.focus_history
                .iter()
                .any(|e| e.turn == turn && e.overridden)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_discovery_after_the_question_leaves_sending_open() {
        let mut m = Model::default();
        let now = Instant::now();
        m.turns_done = 1;
        m.apply(
            Event::StageStarted {
                turn: 1,
                stage: Stage::SlotDiscovery,
            },
            now,
        );
        assert!(m.running.is_none(), "the deferred stage is no running turn");
        // Inside a turn (the seeds' order) it is part of the turn as before.
        m.apply(
            Event::StageStarted {
                turn: 2,
                stage: Stage::SlotDiscovery,
            },
            now,
        );
        assert!(m.running.is_some());
    }

    #[test]
    fn answers_and_questions_stay_in_turn_order_and_are_sanitised() {
        let mut m = Model::default();
        let now = Instant::now();
        m.apply(
            Event::Question {
                turn: 0,
                text: "Opening?".into(),
                closing: false,
            },
            now,
        );
        assert_eq!(m.question_turn, Some(0));
        m.apply(
            SessionEvent::AnswerReceived {
                turn: 1,
                text: "hi \u{1b}[2J".into(),
            },
            now,
        );
        assert!(m.running.is_some());
        assert_eq!(m.question_turn, None);
        m.apply(
            Event::QuestionDelta {
                turn: 1,
                text: "Why".into(),
            },
            now,
        );
        m.apply(
            Event::QuestionDelta {
                turn: 1,
                text: "?".into(),
            },
            now,
        );
        assert_eq!(m.streaming, Some((1, "Why?".to_owned())));
        m.apply(
            Event::Question {
                turn: 1,
                text: "Why?".into(),
                closing: false,
            },
            now,
        );
        let texts: Vec<(u32, &str)> = m
            .conversation
            .iter()
            .map(|m| (m.turn, m.text.as_str()))
            .collect();
        assert_eq!(texts, [(0, "Opening?"), (1, "hi ␛[2J"), (1, "Why?")]);
        assert_eq!(m.streaming, None);
        assert_eq!(m.running, None);
        assert_eq!(m.question_turn, Some(1));
    }

    #[test]
    fn a_failure_stops_the_work_and_keeps_the_stage() {
        let mut m = Model::default();
        let now = Instant::now();
        m.begin(Work::Turn, 3, now);
        m.apply(
            Event::TurnFailed {
                turn: 3,
                stage: Stage::Extraction,
                error: "extraction call failed: timeout".into(),
            },
            now,
        );
        assert_eq!(m.running, None);
        let f = m.failure.clone().unwrap();
        assert_eq!(
            (f.turn, f.stage, f.work),
            (3, Stage::Extraction, Work::Turn)
        );
    }
}
