//! [`Interview`]: one session driven through the pipeline — opening question, turns (fresh or
//! resumed), a researcher's override of the pending question, and ending early.

use std::sync::Arc;

use serde_json::{Value, json};

use super::crash::CrashPoint;
use super::ports::{AskedQuestion, saved_question};
use super::runner::{LoadingRecord, TurnRun};
use super::session_data::SessionData;
use super::{
    Event, EventSink, PipelineError, PipelineSettings, Stage, TurnError, TurnResult, clean_answer,
};
use crate::config::{Concept, Methodology, Rubric};
use crate::domain::{SessionState, Speaker, Understanding};
use crate::embed::Embedder;
use crate::llm::{LlmRouter, Role};
use crate::signals::Registry;
use crate::store::{LlmUsage, NewSession, SessionLock, SessionStatus, Store, StoreOps};

/// Checkpoint name of the opening question (turn 0).
pub(crate) const OPENING_CHECKPOINT: &str = "opening";
/// Checkpoint name of a researcher's override of a turn's question.
pub(crate) const OVERRIDE_CHECKPOINT: &str = "question_override";

/// What an interview runs on besides its own configuration.
#[derive(Clone)]
pub struct Services {
    pub llm: Arc<LlmRouter>,
    pub embedder: Arc<dyn Embedder>,
    pub settings: PipelineSettings,
}

/// The configuration one interview runs with.
#[derive(Debug, Clone)]
pub struct InterviewSpec {
    pub methodology: Methodology,
    pub concept: Concept,
    pub rubrics: Vec<Rubric>,
    pub max_turns: u32,
    /// Who understands answers (extraction, rubric scoring, slot discovery): the LLM or the
    /// program. Stored with the session; a reopened session keeps the mode it was created with.
    pub understanding: Understanding,
}

/// What the session is waiting for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    /// No opening question has been asked yet.
    Opening,
    /// The question of turn `turn − 1` is on screen; the answer will be turn `turn`.
    Answer {
        turn: u32,
        question: String,
    },
    /// Turn `turn` stopped part-way. `answer` is the saved answer, when one was saved.
    Resume {
        turn: u32,
        answer: Option<String>,
    },
    Finished {
        reason: String,
    },
}

/// One interview session, driven through the pipeline. Holds the session's lock while open.
pub struct Interview {
    pub(crate) store: Store,
    pub(crate) spec: Arc<InterviewSpec>,
    pub(crate) services: Services,
    pub(crate) registry: Registry,
    /// The detectors the methodology's `signals:` section (and its weights) ask for, closed
    /// over their dependencies, in run order; `None` runs every detector (a methodology that
    /// lists no signals).
    pub(crate) signal_plan: Option<Vec<&'static str>>,
    pub(crate) crash: Option<CrashPoint>,
    pub(crate) data: SessionData,
    /// The methodology's node types embedded for offline extraction, built on first use.
    pub(crate) type_index: tokio::sync::OnceCell<Arc<crate::understanding::TypeIndex>>,
    /// The last turn, kept in memory when its slot discovery was deferred, so the discovery
    /// runs on the turn's outputs as they are instead of reading every checkpoint back.
    pub(crate) deferred_run: Option<TurnRun>,
    /// The last turn whose slot discovery is known to be committed (or to have nothing to
    /// do), so that the check before the next turn needs no query.
    pub(crate) slots_current_at: Option<u32>,
    /// The next turn, when this process knows nothing of it is saved yet (the previous turn,
    /// or the opening question, completed here; the session lock keeps other processes
    /// out), so starting it needs no look for a saved answer or checkpoints.
    pub(crate) unstarted_turn: Option<u32>,
    /// How the answer being processed was heard, when it was spoken; saved with it.
    pub(crate) pending_speech: Option<crate::domain::AnswerSpeech>,
    _lock: SessionLock,
}

impl std::fmt::Debug for Interview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interview")
            .field("session_id", &self.data.session_id)
            .field("turn_count", &self.data.state.turn_count)
            .finish_non_exhaustive()
    }
}

impl Interview {
    /// Creates a session for `spec` and opens it.
    pub fn create(
        store: Store,
        spec: InterviewSpec,
        services: Services,
        session_id: Option<String>,
    ) -> Result<Self, PipelineError> {
        let id = session_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let state = SessionState {
            methodology: spec.methodology.method.name.clone(),
            concept_id: spec.concept.id.clone(),
            concept_name: spec.concept.name.clone(),
            understanding: spec.understanding,
            ..SessionState::default()
        };
        store.create_session(&NewSession {
            id: id.clone(),
            methodology: spec.methodology.method.name.clone(),
            concept: spec.concept.id.clone(),
            max_turns: spec.max_turns,
            state,
        })?;
        Self::open(store, &id, spec, services)
    }

    /// Opens an existing session. `spec.max_turns` is ignored: the session keeps its own.
    pub fn open(
        store: Store,
        session_id: &str,
        spec: InterviewSpec,
        services: Services,
    ) -> Result<Self, PipelineError> {
        let crash = CrashPoint::from_env()?;
        let lock = store.lock_session(session_id)?;
        let data = SessionData::load(&store, session_id)?;
        let registry = Registry::standard();
        let signal_plan = registry.plan_for(&spec.methodology);
        let rubrics = asked_rubrics(spec.rubrics, &spec.methodology, signal_plan.as_deref());
        let spec = InterviewSpec {
            max_turns: data.max_turns,
            understanding: data.state.understanding,
            rubrics,
            ..spec
        };
        Ok(Self {
            store,
            spec: Arc::new(spec),
            services,
            registry,
            signal_plan,
            crash,
            data,
            type_index: tokio::sync::OnceCell::new(),
            deferred_run: None,
            slots_current_at: None,
            unstarted_turn: None,
            pending_speech: None,
            _lock: lock,
        })
    }

    pub fn session_id(&self) -> &str {
        &self.data.session_id
    }

    pub fn spec(&self) -> &InterviewSpec {
        &self.spec
    }

    /// What the researcher should know on opening the session: its last turn failed (seed
    /// 004's ERROR state, with stage and message), or a stored node tracker could not be read
    /// and was replaced by a fresh one; empty for a session read as stored.
    pub fn load_warnings(&self) -> &[String] {
        &self.data.load_warnings
    }

    /// Completed turns.
    pub fn turn_count(&self) -> u32 {
        self.data.state.turn_count
    }

    pub fn state(&self) -> &SessionState {
        &self.data.state
    }

    /// The store, for read-only views (exports, the TUI's graph panel).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Copies the store's write-ahead log into the database file (see
    /// [`Store::flush_journal`]). Drivers call it between turns, while the respondent reads
    /// and answers. A failure is logged, never fatal: the log itself stays valid.
    pub fn flush_journal(&self) {
        if let Err(e) = self.store.flush_journal() {
            tracing::warn!(error = %e, "write-ahead log not flushed");
        }
    }

    /// What the session waits for next.
    pub fn pending(&self) -> Result<Pending, PipelineError> {
        let id = self.session_id();
        if self.data.status == SessionStatus::Finished {
            return Ok(Pending::Finished {
                reason: self.data.termination_reason.clone().unwrap_or_default(),
            });
        }
        let Some(opening) = self.store.utterance(id, 0, Speaker::Interviewer)? else {
            return Ok(Pending::Opening);
        };
        let turn = self.data.state.turn_count + 1;
        let checkpoints = self.store.checkpoints_for_turn(id, turn)?;
        if !checkpoints.is_empty() {
            return Ok(Pending::Resume {
                turn,
                answer: self.saved_answer(turn)?,
            });
        }
        let question = if turn == 1 {
            opening.text
        } else {
            self.store
                .utterance(id, turn - 1, Speaker::Interviewer)?
                .map(|u| u.text)
                .ok_or_else(|| {
                    PipelineError::State(format!(
                        "session {id}: turn {} completed without a saved question",
                        turn - 1
                    ))
                })?
        };
        Ok(Pending::Answer { turn, question })
    }

    /// The question asked at the end of `turn` (0: the opening question).
    pub fn question_of(&self, turn: u32) -> Result<String, PipelineError> {
        saved_question(&self.store, self.session_id(), turn)
    }

    /// The answer of an unfinished turn: the saved utterance, else the input kept with the
    /// context-loading checkpoint.
    pub(super) fn saved_answer(&self, turn: u32) -> Result<Option<String>, PipelineError> {
        let id = self.session_id();
        if let Some(u) = self.store.utterance(id, turn, Speaker::Respondent)? {
            return Ok(Some(u.text));
        }
        Ok(self
            .store
            .checkpoint(id, turn, Stage::ContextLoading.name())?
            .and_then(|mut c| {
                let extra = c.output.get_mut("extra").map(Value::take)?;
                serde_json::from_value::<LoadingRecord>(extra).ok()
            })
            .map(|record| record.user_input))
    }

    pub(super) fn ensure_active(&self) -> Result<(), PipelineError> {
        if self.data.status == SessionStatus::Finished {
            return Err(PipelineError::Finished {
                id: self.session_id().to_owned(),
                reason: self.data.termination_reason.clone().unwrap_or_default(),
            });
        }
        Ok(())
    }

    /// Asks (or returns the already saved) opening question.
    pub async fn opening(&mut self, events: &EventSink) -> Result<String, TurnError> {
        let result = self.ask_opening(events).await;
        if let Err(e) = &result {
            self.record_failure(e, events);
        }
        result
    }

    async fn ask_opening(&mut self, events: &EventSink) -> Result<String, TurnError> {
        let fail = |error| TurnError {
            turn: 0,
            stage: Stage::QuestionGeneration,
            error,
        };
        let id = self.session_id().to_owned();
        if let Some(u) = self
            .store
            .utterance(&id, 0, Speaker::Interviewer)
            .map_err(|e| fail(e.into()))?
        {
            return Ok(u.text);
        }
        self.ensure_active().map_err(fail)?;
        let template = || {
            crate::prompts::render_template(&crate::prompts::TemplateInput {
                templates: &self.spec.methodology.method.opening_templates,
                focus: None,
                topic: self.spec.concept.topic(),
                turn: 0,
                session_seed: &self.spec.concept.id,
                asked: &[],
                echo: None,
            })
        };
        let asked = {
            let ports = self.ports(events);
            if self.services.llm.is_modelless(Role::QuestionGeneration) {
                AskedQuestion::template(template(), None)
            } else if ports.small_question_model() {
                // The opening builds on no answer, and the small embedded model's openings were
                // generic or off the topic ("What's the answer to that?"): the methodology's
                // own opening is the better first question, and it costs no model call.
                AskedQuestion {
                    source: "template (the methodology's opening; the small local model writes \
                             the questions that follow an answer)"
                        .to_owned(),
                    ..AskedQuestion::template(template(), None)
                }
            } else {
                let (methodology, concept) = (&self.spec.methodology, &self.spec.concept);
                let prompt = crate::prompts::opening_prompt(methodology, concept);
                let request = ports.question_request(prompt, 0).map_err(fail)?;
                ports
                    .checked_question(&request, 0, template)
                    .await
                    .map_err(fail)?
            }
        };
        let question = asked.text;
        let envelope = json!({"output": {"question": question, "question_source": asked.source}});
        let usage: Vec<LlmUsage> = asked
            .calls
            .iter()
            .map(|c| super::ports::usage_row(&id, &self.services.llm, 0, c))
            .collect();
        self.store
            .transaction(|tx| {
                tx.insert_utterance_with_id(
                    &super::ids::single(&id, 0, "question"),
                    &id,
                    0,
                    Speaker::Interviewer,
                    &question,
                )?;
                for row in &usage {
                    tx.insert_llm_usage(row)?;
                }
                tx.set_session_failure(&id, None)?;
                tx.put_checkpoint(&id, 0, OPENING_CHECKPOINT, &envelope)
            })
            .map_err(|e| fail(e.into()))?;
        self.unstarted_turn = Some(1);
        events.emit(Event::Question {
            turn: 0,
            text: question.clone(),
            closing: false,
        });
        Ok(question)
    }

    /// [`Interview::answer`] for an answer that was spoken: `speech` (how it was heard) is
    /// saved with the answer, in the same transaction.
    pub async fn answer_spoken(
        &mut self,
        raw: &str,
        speech: crate::domain::AnswerSpeech,
        events: &EventSink,
    ) -> Result<TurnResult, TurnError> {
        self.pending_speech = Some(speech);
        let result = self.answer(raw, events).await;
        self.pending_speech = None;
        result
    }

    /// Processes an answer as the next turn. If the next turn stopped part-way, it resumes
    /// instead, and `raw` is used only where the saved turn has no answer yet.
    pub async fn answer(&mut self, raw: &str, events: &EventSink) -> Result<TurnResult, TurnError> {
        let turn = self.data.state.turn_count + 1;
        let saved = if self.unstarted_turn == Some(turn) {
            Ok(None)
        } else {
            self.saved_answer(turn)
        };
        let input = match saved {
            Ok(Some(saved)) => saved,
            Ok(None) => clean_answer(raw).map_err(|error| TurnError {
                turn,
                stage: Stage::UtteranceSaving,
                error,
            })?,
            Err(error) => {
                return Err(TurnError {
                    turn,
                    stage: Stage::ContextLoading,
                    error,
                });
            }
        };
        self.run_turn(input, events).await
    }

    /// Continues an unfinished turn with its saved answer.
    pub async fn resume(&mut self, events: &EventSink) -> Result<TurnResult, TurnError> {
        let turn = self.data.state.turn_count + 1;
        let saved = self.saved_answer(turn).map_err(|error| TurnError {
            turn,
            stage: Stage::ContextLoading,
            error,
        })?;
        let input = saved.ok_or_else(|| TurnError {
            turn,
            stage: Stage::UtteranceSaving,
            error: PipelineError::State(format!(
                "turn {turn} has no saved answer to resume with; answer it again"
            )),
        })?;
        self.run_turn(input, events).await
    }

    /// Ends an imported interview after its last answer. The engine's question after that
    /// answer was never asked: it becomes the interviewer's `closing` remark (recorded as an
    /// edit, like every imported question), or is removed when the transcript ends with the
    /// answer. The engine's choice stays in the turn's decision and checkpoints.
    pub fn end_transcript(
        &mut self,
        closing: Option<&str>,
        events: &EventSink,
    ) -> Result<(), TurnError> {
        let turn = self.data.state.turn_count;
        let fail = |error| TurnError {
            turn,
            stage: Stage::QuestionGeneration,
            error,
        };
        if let Some(text) = closing {
            self.edit_question(text, events)?;
            return self.end_now(super::TRANSCRIPT_ENDED, events).map_err(fail);
        }
        self.ensure_active().map_err(fail)?;
        let id = self.data.session_id.clone();
        self.store
            .transaction(|tx| {
                tx.delete_utterance(&id, turn, Speaker::Interviewer)?;
                tx.finish_session(&id, super::TRANSCRIPT_ENDED)
            })
            .map_err(|e| fail(e.into()))?;
        self.data.status = SessionStatus::Finished;
        self.data.termination_reason = Some(super::TRANSCRIPT_ENDED.to_owned());
        events.emit(Event::Finished {
            reason: super::TRANSCRIPT_ENDED.to_owned(),
        });
        Ok(())
    }

    /// Ends the interview now, keeping everything said so far.
    pub fn end_now(&mut self, reason: &str, events: &EventSink) -> Result<(), PipelineError> {
        self.ensure_active()?;
        self.store.finish_session(&self.data.session_id, reason)?;
        self.data.status = SessionStatus::Finished;
        self.data.termination_reason = Some(reason.to_owned());
        events.emit(Event::Finished {
            reason: reason.to_owned(),
        });
        Ok(())
    }
}

/// The rubrics the signal-scoring call asks for: those the methodology lists or weighs, and
/// those a planned detector reads (`llm.response_depth` for node exhaustion); every rubric when
/// the methodology lists no signals.
pub(crate) fn asked_rubrics(
    rubrics: Vec<Rubric>,
    methodology: &Methodology,
    plan: Option<&[&'static str]>,
) -> Vec<Rubric> {
    rubrics
        .into_iter()
        .filter(|r| {
            methodology.wants_rubric(&r.name)
                || plan.is_some_and(|p| {
                    p.iter()
                        .any(|d| d.strip_prefix("llm.") == Some(r.name.as_str()))
                })
        })
        .collect()
}
