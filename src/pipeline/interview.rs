//! [`Interview`]: one session driven through the pipeline — opening question, turns (fresh or
//! resumed), a researcher's override of the pending question, and ending early.

use std::sync::Arc;
use std::time::Instant;

use tracing::Instrument;

use serde_json::{Value, json};

use super::context::{StageOutput, TurnContext};
use super::crash::{self, CrashPoint, CrashSide};
use super::world::World;
use super::{
    Event, EventSink, PipelineError, PipelineSettings, Stage, TurnError, TurnResult, clean_answer,
};
use crate::config::{Concept, Methodology, Rubric};
use crate::domain::{SessionState, Speaker, Understanding};
use crate::embed::Embedder;
use crate::llm::{LlmError, LlmRequest, LlmResponse, LlmRouter, Role};
use crate::signals::Registry;
use crate::store::{
    LlmUsage, NewSession, SessionLock, SessionStatus, Store, StoreError, StoreOps, Tx,
};

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
    pub(crate) world: World,
    /// The methodology's node types embedded for offline extraction, built on first use.
    pub(crate) type_index: Option<Arc<crate::understanding::TypeIndex>>,
    /// The last turn, kept in memory when its slot discovery was deferred, so the discovery
    /// runs on the turn's outputs as they are instead of reading every checkpoint back.
    deferred_run: Option<TurnRun>,
    _lock: SessionLock,
}

impl std::fmt::Debug for Interview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interview")
            .field("session_id", &self.world.session_id)
            .field("turn_count", &self.world.state.turn_count)
            .finish_non_exhaustive()
    }
}

/// Facts about one LLM call, gathered for the stage's commit.
pub(crate) struct CallRecord {
    pub role: Role,
    pub response: LlmResponse,
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
        let world = World::load(&store, session_id)?;
        let registry = Registry::standard();
        let signal_plan = registry.plan_for(&spec.methodology);
        let rubrics = asked_rubrics(spec.rubrics, &spec.methodology, signal_plan.as_deref());
        let spec = InterviewSpec {
            max_turns: world.max_turns,
            understanding: world.state.understanding,
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
            world,
            type_index: None,
            deferred_run: None,
            _lock: lock,
        })
    }

    pub fn session_id(&self) -> &str {
        &self.world.session_id
    }

    pub fn spec(&self) -> &InterviewSpec {
        &self.spec
    }

    /// What the researcher should know on opening the session: its last turn failed (seed
    /// 004's ERROR state, with stage and message), or a stored node tracker could not be read
    /// and was replaced by a fresh one; empty for a session read as stored.
    pub fn load_warnings(&self) -> &[String] {
        &self.world.load_warnings
    }

    /// Completed turns.
    pub fn turn_count(&self) -> u32 {
        self.world.state.turn_count
    }

    pub fn state(&self) -> &SessionState {
        &self.world.state
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
        if self.world.status == SessionStatus::Finished {
            return Ok(Pending::Finished {
                reason: self.world.termination_reason.clone().unwrap_or_default(),
            });
        }
        let Some(opening) = self.store.utterance(id, 0, Speaker::Interviewer)? else {
            return Ok(Pending::Opening);
        };
        let turn = self.world.state.turn_count + 1;
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
        self.store
            .utterance(self.session_id(), turn, Speaker::Interviewer)?
            .map(|u| u.text)
            .ok_or_else(|| PipelineError::State(format!("turn {turn} has no saved question")))
    }

    /// The answer of an unfinished turn: the saved utterance, else the input kept with the
    /// context-loading checkpoint.
    fn saved_answer(&self, turn: u32) -> Result<Option<String>, PipelineError> {
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

    fn ensure_active(&self) -> Result<(), PipelineError> {
        if self.world.status == SessionStatus::Finished {
            return Err(PipelineError::Finished {
                id: self.session_id().to_owned(),
                reason: self.world.termination_reason.clone().unwrap_or_default(),
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
            })
        };
        let asked = if self.services.llm.is_modelless(Role::QuestionGeneration) {
            AskedQuestion::template(template(), None)
        } else if self.small_question_model() {
            // The opening builds on no answer, and the small embedded model's openings were
            // generic or off the topic ("What's the answer to that?"): the methodology's own
            // opening is the better first question, and it costs no model call.
            AskedQuestion {
                source: "template (the methodology's opening; the small local model writes \
                         the questions that follow an answer)"
                    .to_owned(),
                ..AskedQuestion::template(template(), None)
            }
        } else {
            let (methodology, concept) = (&self.spec.methodology, &self.spec.concept);
            let prompt = crate::prompts::opening_prompt(methodology, concept);
            let request = self.question_request(prompt, 0).map_err(fail)?;
            self.checked_question(&request, 0, template, events)
                .await
                .map_err(fail)?
        };
        let question = asked.text;
        let envelope = json!({"output": {"question": question, "question_source": asked.source}});
        let usage: Vec<LlmUsage> = asked.calls.iter().map(|c| self.usage_row(0, c)).collect();
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
        events.emit(Event::Question {
            turn: 0,
            text: question.clone(),
            closing: false,
        });
        Ok(question)
    }

    /// Processes an answer as the next turn. If the next turn stopped part-way, it resumes
    /// instead, and `raw` is used only where the saved turn has no answer yet.
    pub async fn answer(&mut self, raw: &str, events: &EventSink) -> Result<TurnResult, TurnError> {
        let turn = self.world.state.turn_count + 1;
        let input = match self.saved_answer(turn) {
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
        let turn = self.world.state.turn_count + 1;
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

    /// Ends the interview now, keeping everything said so far.
    pub fn end_now(&mut self, reason: &str, events: &EventSink) -> Result<(), PipelineError> {
        self.ensure_active()?;
        self.store.finish_session(&self.world.session_id, reason)?;
        self.world.status = SessionStatus::Finished;
        self.world.termination_reason = Some(reason.to_owned());
        events.emit(Event::Finished {
            reason: reason.to_owned(),
        });
        Ok(())
    }

    async fn run_turn(
        &mut self,
        input: String,
        events: &EventSink,
    ) -> Result<TurnResult, TurnError> {
        let span = tracing::info_span!(
            "turn",
            session = %self.world.session_id,
            turn = self.world.state.turn_count + 1,
            elapsed_ms = tracing::field::Empty,
            outcome = tracing::field::Empty,
        );
        let started = Instant::now();
        let result = self
            .run_turn_stages(input, events)
            .instrument(span.clone())
            .await;
        close_span(
            &span,
            started,
            result.as_ref().map(|r| {
                if r.should_continue {
                    "ok"
                } else {
                    "ok, interview finished"
                }
            }),
        );
        if let Err(e) = &result {
            self.record_failure(e, events);
        }
        result
    }

    /// Seed 004's ERROR state: a turn that failed in a stage is stored with the stage, the
    /// message and the time, so `sessions`, the start screen and `resume` can say so; the next
    /// successful turn clears it. A finished session is not a failure, and a failure that
    /// cannot be stored (the database is what failed) is reported as a warning.
    fn record_failure(&mut self, e: &TurnError, events: &EventSink) {
        if matches!(
            e.error,
            PipelineError::Finished { .. }
                | PipelineError::EmptyAnswer
                | PipelineError::AnswerTooLong { .. }
        ) {
            return;
        }
        let failure = crate::store::TurnFailure {
            turn: e.turn,
            stage: format!("{} {}", e.stage.number(), e.stage.name()),
            message: e.error.to_string(),
            at: crate::time::now_rfc3339(),
        };
        if let Err(store_error) = self
            .store
            .set_session_failure(&self.world.session_id, Some(&failure))
        {
            events.emit(Event::Warning {
                message: format!("the turn's failure could not be recorded: {store_error}"),
            });
        }
    }

    /// The stages of one turn, in order, each in its own span.
    async fn run_turn_stages(
        &mut self,
        input: String,
        events: &EventSink,
    ) -> Result<TurnResult, TurnError> {
        let started = Instant::now();
        let turn = self.world.state.turn_count + 1;
        let fail = |stage, error| TurnError { turn, stage, error };
        self.ensure_active()
            .map_err(|e| fail(Stage::ContextLoading, e))?;
        // A previous turn whose deferred slot discovery never ran (the driver stopped first)
        // catches up before this turn computes its state.
        self.discover_deferred_slots(events).await?;
        let mut run = self
            .restore_run(turn, input)
            .map_err(|(stage, e)| fail(stage, e))?;
        let deferred = !self.services.settings.inline_slot_discovery;
        if let Ok(saved) = run.ctx.utterance_saving() {
            run.ctx.user_input = saved.user_utterance.clone();
        }
        for stage in Stage::ALL {
            if stage == Stage::SlotDiscovery && deferred {
                continue;
            }
            if run.ctx.has(stage) {
                events.emit(Event::StageFinished {
                    turn,
                    stage,
                    elapsed: std::time::Duration::ZERO,
                    summary: "restored from checkpoint".to_owned(),
                    resumed: true,
                });
                continue;
            }
            if stage > Stage::UtteranceSaving
                && stage <= Stage::StrategySelection
                && run.scoring.is_none()
            {
                run.scoring = Some(
                    self.start_signal_scoring(&run.ctx, turn)
                        .map_err(|e| fail(stage, e))?,
                );
            }
            events.emit(Event::StageStarted { turn, stage });
            let t = Instant::now();
            let span = stage_span(&self.world.session_id, turn, stage);
            let outcome = self
                .run_stage(stage, &mut run, events)
                .instrument(span.clone())
                .await;
            close_span(&span, t, outcome.as_ref().map(|_| "ok"));
            let summary = outcome.map_err(|e| fail(stage, e))?;
            events.emit(Event::StageFinished {
                turn,
                stage,
                elapsed: t.elapsed(),
                summary,
                resumed: false,
            });
        }
        let result = TurnResult::from_run(&run.ctx, started.elapsed())
            .map_err(|e| fail(Stage::ScoringPersistence, e))?;
        if let Ok(q) = run.ctx.question_generation() {
            events.emit(Event::Question {
                turn,
                text: q.question.clone(),
                closing: !result.should_continue,
            });
        }
        events.emit(Event::TurnCompleted(Box::new(result.clone())));
        if deferred && !run.ctx.has(Stage::SlotDiscovery) {
            self.deferred_run = Some(run);
        }
        if !result.should_continue {
            // No next answer to overlap with: the last turn's slots are discovered now, so
            // the finished session's canonical graph is complete.
            self.discover_deferred_slots(events).await?;
            events.emit(Event::Finished {
                reason: result.termination_reason.clone().unwrap_or_default(),
            });
        }
        Ok(result)
    }

    /// Runs the slot discovery the last completed turn deferred until after its question
    /// (see [`PipelineSettings::inline_slot_discovery`](super::PipelineSettings)), and commits
    /// it under that turn. Drivers call it while the respondent reads and answers; a turn that
    /// starts before it ran runs it first. Does nothing when there is nothing to discover.
    pub async fn discover_deferred_slots(&mut self, events: &EventSink) -> Result<(), TurnError> {
        let turn = self.world.state.turn_count;
        if turn == 0 {
            return Ok(());
        }
        let fail = |error| TurnError {
            turn,
            stage: Stage::SlotDiscovery,
            error,
        };
        let mut run = match self.deferred_run.take() {
            Some(run) if run.turn == turn => run,
            _ => {
                let stages = self
                    .store
                    .checkpointed_stages(&self.world.session_id, turn)
                    .map_err(|e| fail(e.into()))?;
                let done = stages.iter().any(|s| s == Stage::SlotDiscovery.name());
                let updated = stages.iter().any(|s| s == Stage::GraphUpdate.name());
                if done || !updated {
                    return Ok(());
                }
                self.restore_run(turn, String::new())
                    .map_err(|(_, e)| fail(e))?
            }
        };
        events.emit(Event::StageStarted {
            turn,
            stage: Stage::SlotDiscovery,
        });
        let t = Instant::now();
        let span = stage_span(&self.world.session_id, turn, Stage::SlotDiscovery);
        let outcome = self
            .slot_discovery(&mut run, events)
            .instrument(span.clone())
            .await;
        close_span(&span, t, outcome.as_ref().map(|_| "ok, after the question"));
        drop(span);
        let summary = outcome.map_err(fail)?;
        events.emit(Event::StageFinished {
            turn,
            stage: Stage::SlotDiscovery,
            elapsed: t.elapsed(),
            summary: format!("{summary} (after the question)"),
            resumed: false,
        });
        Ok(())
    }

    /// A turn with every checkpointed stage output (and its extra data) restored.
    pub(crate) fn restore_run(
        &self,
        turn: u32,
        input: String,
    ) -> Result<TurnRun, (Stage, PipelineError)> {
        let mut run = TurnRun {
            ctx: TurnContext::new(self.world.session_id.clone(), input),
            turn,
            decision: None,
            scoring: None,
        };
        let checkpoints = self
            .store
            .checkpoints_for_turn(&self.world.session_id, turn)
            .map_err(|e| (Stage::ContextLoading, e.into()))?;
        for cp in checkpoints {
            let Some(stage) = Stage::parse(&cp.stage) else {
                continue;
            };
            let mut envelope = cp.output;
            let output = envelope.get_mut("output").map_or(Value::Null, Value::take);
            run.ctx.restore(stage, output).map_err(|e| (stage, e))?;
            if stage == Stage::StrategySelection
                && let Some(extra) = envelope.get_mut("extra").map(Value::take)
            {
                let record = serde_json::from_value(extra).map_err(|e| {
                    (
                        stage,
                        PipelineError::State(format!(
                            "turn {turn}: the saved decision data cannot be read: {e}"
                        )),
                    )
                })?;
                run.decision = Some(record);
            }
        }
        Ok(run)
    }

    async fn run_stage(
        &mut self,
        stage: Stage,
        run: &mut TurnRun,
        events: &EventSink,
    ) -> Result<String, PipelineError> {
        match stage {
            Stage::ContextLoading => self.context_loading(run),
            Stage::UtteranceSaving => self.utterance_saving(run),
            Stage::SrlPreprocessing => self.srl_preprocessing(run),
            Stage::Extraction => self.extraction(run, events).await,
            Stage::GraphUpdate => self.graph_update(run),
            Stage::SlotDiscovery => self.slot_discovery(run, events).await,
            Stage::StateComputation => self.state_computation(run),
            Stage::StrategySelection => self.strategy_selection(run, events).await,
            Stage::Continuation => self.continuation(run),
            Stage::QuestionGeneration => self.question_generation(run, events).await,
            Stage::ResponseSaving => self.response_saving(run),
            Stage::ScoringPersistence => self.scoring_persistence(run),
        }
    }

    /// Commits a stage: its side effects, its checkpoint and its usage rows in one
    /// transaction, with the crash switch on both sides; then files the output in the context.
    pub(crate) fn commit<O: StageOutput>(
        &mut self,
        run: &mut TurnRun,
        output: O,
        extra: Option<&Value>,
        calls: &[CallRecord],
        effects: impl FnOnce(&Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<(), PipelineError> {
        self.persist(run.turn, &output, extra, calls, effects)?;
        output.store(&mut run.ctx);
        Ok(())
    }

    /// The transaction of [`Self::commit`], for a stage whose effects borrow the turn's
    /// context (the caller files the output afterwards).
    pub(crate) fn persist<O: StageOutput>(
        &mut self,
        turn: u32,
        output: &O,
        extra: Option<&Value>,
        calls: &[CallRecord],
        effects: impl FnOnce(&Tx<'_>) -> Result<(), StoreError>,
    ) -> Result<(), PipelineError> {
        let stage = O::STAGE;
        // Serialised straight to text: building a `Value` tree first cost a tenth of a turn.
        let envelope = Envelope { output, extra };
        crash::check(self.crash, stage, CrashSide::Before);
        let id = self.world.session_id.clone();
        let usage: Vec<LlmUsage> = calls.iter().map(|c| self.usage_row(turn, c)).collect();
        self.store.transaction(|tx| {
            effects(tx)?;
            for row in &usage {
                tx.insert_llm_usage(row)?;
            }
            tx.put_checkpoint(&id, turn, stage.name(), &envelope)
        })?;
        crash::check(self.crash, stage, CrashSide::After);
        Ok(())
    }

    /// The usage row of a successful call, to insert in the committing transaction.
    pub(crate) fn usage_row(&self, turn: u32, call: &CallRecord) -> LlmUsage {
        let r = &call.response;
        LlmUsage {
            session_id: self.world.session_id.clone(),
            turn,
            role: call.role.as_str().to_owned(),
            provider: r.provider.clone(),
            model: r.model.clone(),
            tokens_in: r.tokens_in,
            tokens_out: r.tokens_out,
            latency_ms: u64::try_from(r.latency.as_millis()).unwrap_or(u64::MAX),
            attempts: r.attempts,
            outcome: "ok".to_owned(),
            cost_usd: self.services.llm.cost(call.role, r.tokens_in, r.tokens_out),
        }
    }

    /// Records a failed call right away (it is part of no stage's commit) and reports it, with
    /// the attempts and time the error says the call took.
    pub(crate) fn record_failed_call(
        &self,
        turn: u32,
        request: &LlmRequest,
        error: &LlmError,
        events: &EventSink,
    ) {
        let binding = self.services.llm.binding(request.role).ok();
        let (provider, model) = binding.map_or_else(
            || (String::new(), String::new()),
            |b| (b.provider.name().to_owned(), b.provider.model().to_owned()),
        );
        let outcome = format!("error: {error}");
        let latency = error.elapsed();
        let attempts = error.attempts();
        // Failing to record a failure must not hide the failure itself.
        let _ = self.store.insert_llm_usage(&LlmUsage {
            session_id: self.world.session_id.clone(),
            turn,
            role: request.role.as_str().to_owned(),
            provider: provider.clone(),
            model: model.clone(),
            tokens_in: 0,
            tokens_out: 0,
            latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
            attempts,
            outcome: outcome.clone(),
            cost_usd: None,
        });
        events.emit(Event::LlmCall {
            turn,
            role: request.role,
            provider,
            model,
            tokens_in: 0,
            tokens_out: 0,
            latency,
            attempts,
            cost_usd: None,
            outcome,
        });
    }

    /// A request for `role` carrying a built prompt and its temperature.
    pub(crate) fn prompt_request(
        &self,
        role: Role,
        prompt: crate::prompts::Prompt,
        turn: u32,
    ) -> Result<LlmRequest, PipelineError> {
        self.services
            .llm
            .request(
                role,
                prompt.system,
                prompt.user,
                Some(prompt.temperature),
                turn,
            )
            .map_err(|e| llm_error(role, e))
    }

    /// A strategy of the methodology by name, or an error listing the known ones.
    pub(crate) fn strategy(&self, name: &str) -> Result<&crate::config::Strategy, PipelineError> {
        let methodology = &self.spec.methodology;
        methodology
            .strategy(name)
            .ok_or_else(|| PipelineError::UnknownStrategy {
                name: name.to_owned(),
                known: methodology
                    .strategies
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Makes one non-streaming call and reads its reply with `read` (see [`Self::read_reply`]).
    pub(crate) async fn call_and_read<T>(
        &self,
        request: &LlmRequest,
        events: &EventSink,
        read: impl FnOnce(&str) -> Result<T, PipelineError>,
    ) -> Result<(T, CallRecord), PipelineError> {
        match self.services.llm.complete(request).await {
            Ok(response) => self.read_reply(request, response, events, read),
            Err(e) => {
                self.record_failed_call(request.turn, request, &e, events);
                Err(llm_error(request.role, e))
            }
        }
    }

    /// Reads a call's reply with `read` and reports the call. A reply that breaks its contract
    /// still cost its tokens: its usage row is recorded at once with the outcome `rejected: …`
    /// (it belongs to no stage's commit), and so is its event; the error is returned.
    pub(crate) fn read_reply<T>(
        &self,
        request: &LlmRequest,
        response: LlmResponse,
        events: &EventSink,
        read: impl FnOnce(&str) -> Result<T, PipelineError>,
    ) -> Result<(T, CallRecord), PipelineError> {
        match read(&response.text) {
            Ok(value) => {
                emit_call(events, &self.services.llm, request, &response, "ok");
                let call = CallRecord {
                    role: request.role,
                    response,
                };
                Ok((value, call))
            }
            Err(e) => {
                let outcome = format!("rejected: {e}");
                let call = CallRecord {
                    role: request.role,
                    response,
                };
                let row = LlmUsage {
                    outcome: outcome.clone(),
                    ..self.usage_row(request.turn, &call)
                };
                // Failing to record the rejection must not hide the rejection itself.
                let _ = self.store.insert_llm_usage(&row);
                emit_call(
                    events,
                    &self.services.llm,
                    request,
                    &call.response,
                    &outcome,
                );
                Err(e)
            }
        }
    }

    /// What a small model's question at `turn` may refer to: what the respondent said (the
    /// answer of `turn`), and what the interview is about (the topic and the live concepts'
    /// labels).
    fn question_anchors(&self, turn: u32) -> (Vec<String>, Vec<String>) {
        let said = self
            .store
            .utterance(self.session_id(), turn, Speaker::Respondent)
            .ok()
            .flatten()
            .map(|u| u.text)
            .into_iter()
            .collect();
        let about = std::iter::once(self.spec.concept.topic().to_owned())
            .chain(self.world.live_nodes().map(|n| n.label.clone()))
            .collect();
        (said, about)
    }

    /// Whether the question model is the small embedded one, which gets the compact prompt.
    pub(crate) fn small_question_model(&self) -> bool {
        self.services
            .llm
            .binding(Role::QuestionGeneration)
            .is_ok_and(|b| b.provider.name() == "local")
    }

    /// A question request: the prompt, and the one-question grammar a local model decodes
    /// under (hosted providers ignore it).
    pub(crate) fn question_request(
        &self,
        prompt: crate::prompts::Prompt,
        turn: u32,
    ) -> Result<LlmRequest, PipelineError> {
        Ok(self
            .prompt_request(Role::QuestionGeneration, prompt, turn)?
            .with_grammar(Arc::new(crate::llm::one_question_grammar())))
    }

    /// Words no question may contain: signal names, strategy names and the methodology's node
    /// and edge type names, which only a prompt leak puts in a question.
    fn forbidden_terms(&self) -> Vec<String> {
        let methodology = &self.spec.methodology;
        crate::signals::catalog::SIGNALS
            .iter()
            .map(|s| s.name.to_owned())
            .chain(methodology.strategies.iter().map(|s| s.name.clone()))
            .chain(methodology.ontology.nodes.iter().map(|n| n.name.clone()))
            .filter(|t| t.contains('_') || t.contains('.'))
            .collect()
    }

    /// Asks for a question and checks it; a reply that fails the check (or its contract) is
    /// asked for once more, and a second failure is replaced by `template()`. Only a failed
    /// call fails the stage.
    pub(crate) async fn checked_question(
        &self,
        request: &LlmRequest,
        turn: u32,
        template: impl FnOnce() -> String,
        events: &EventSink,
    ) -> Result<AskedQuestion, PipelineError> {
        let forbidden = self.forbidden_terms();
        let forbidden: Vec<&str> = forbidden.iter().map(String::as_str).collect();
        // A small model's question must also belong to this interview: put to the respondent,
        // about the topic or a concept so far, quoting only what was said.
        let anchors = self
            .small_question_model()
            .then(|| self.question_anchors(turn));
        let anchor_refs = anchors.as_ref().map(|(said, about)| {
            (
                said.iter().map(String::as_str).collect::<Vec<_>>(),
                about.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        });
        let mut calls = Vec::new();
        let mut problems = Vec::new();
        for attempt in 0..2 {
            match self.ask_question(request, turn, events).await {
                Ok((question, call)) => {
                    calls.push(call);
                    let repeated = self
                        .question_of(turn.saturating_sub(1))
                        .ok()
                        .filter(|_| turn > 0)
                        .is_some_and(|last| mostly_the_same(&last, &question));
                    let checked = if repeated {
                        Err("repeats the previous question".to_owned())
                    } else {
                        crate::prompts::check_question(&question, &forbidden)
                            .map_err(|p| p.to_string())
                            .and_then(|()| match &anchor_refs {
                                Some((said, about)) => crate::prompts::check_small_model_question(
                                    &question,
                                    crate::prompts::Anchors { said, about },
                                )
                                .map_err(|p| p.to_string()),
                                None => Ok(()),
                            })
                    };
                    match checked {
                        Ok(()) => {
                            return Ok(AskedQuestion {
                                text: question,
                                calls,
                                source: if attempt == 0 {
                                    "model"
                                } else {
                                    "model, second try"
                                }
                                .to_owned(),
                                replaced_model: false,
                            });
                        }
                        Err(problem) => problems.push(problem),
                    }
                }
                Err(PipelineError::Contract { source, .. }) => problems.push(source.to_string()),
                Err(e) => return Err(e),
            }
        }
        let asked = AskedQuestion::template(template(), Some((&problems, calls)));
        events.emit(Event::Warning {
            message: format!(
                "turn {turn}: asked the strategy's template question: {}",
                asked.source
            ),
        });
        Ok(asked)
    }

    /// Streams a question, forwarding deltas as events, and checks the reply's contract.
    pub(crate) async fn ask_question(
        &self,
        request: &LlmRequest,
        turn: u32,
        events: &EventSink,
    ) -> Result<(String, CallRecord), PipelineError> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let forward = async {
            while let Some(text) = rx.recv().await {
                events.emit(Event::QuestionDelta { turn, text });
            }
        };
        let (result, ()) = futures::join!(self.services.llm.stream(request, tx), forward);
        let response = match result {
            Ok(r) => r,
            Err(e) => {
                self.record_failed_call(turn, request, &e, events);
                return Err(llm_error(request.role, e));
            }
        };
        self.read_reply(request, response, events, |text| {
            crate::prompts::parse_question_reply(text).map_err(|source| PipelineError::Contract {
                role: Role::QuestionGeneration,
                source,
            })
        })
    }
}

/// Whether two questions share at least four in five of their words (either way round): a
/// small model that copies the question it was shown changes a word or two at the end.
fn mostly_the_same(a: &str, b: &str) -> bool {
    let words = |s: &str| -> std::collections::HashSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (a, b) = (words(a), words(b));
    let shared = a.intersection(&b).count();
    let smaller = a.len().min(b.len());
    smaller > 0 && shared * 5 >= smaller * 4
}

/// The span of one stage of one turn; [`close_span`] fills in its elapsed time and outcome.
fn stage_span(session: &str, turn: u32, stage: Stage) -> tracing::Span {
    tracing::info_span!(
        "stage",
        session,
        turn,
        stage = stage.name(),
        elapsed_ms = tracing::field::Empty,
        outcome = tracing::field::Empty,
    )
}

/// Records a finished span's elapsed time (ms, two decimals) and outcome; the log writes both
/// when the span closes.
fn close_span<E: std::fmt::Display>(
    span: &tracing::Span,
    started: Instant,
    outcome: Result<&str, &E>,
) {
    let ms = (started.elapsed().as_secs_f64() * 1e5).round() / 100.0;
    span.record("elapsed_ms", ms);
    match outcome {
        Ok(ok) => span.record("outcome", ok),
        Err(e) => span.record("outcome", tracing::field::display(format!("error: {e}"))),
    };
}

fn emit_call(
    events: &EventSink,
    llm: &LlmRouter,
    request: &LlmRequest,
    response: &LlmResponse,
    outcome: &str,
) {
    events.emit(Event::LlmCall {
        turn: request.turn,
        role: request.role,
        provider: response.provider.clone(),
        model: response.model.clone(),
        tokens_in: response.tokens_in,
        tokens_out: response.tokens_out,
        latency: response.latency,
        attempts: response.attempts,
        cost_usd: llm.cost(request.role, response.tokens_in, response.tokens_out),
        outcome: outcome.to_owned(),
    });
}

pub(crate) fn llm_error(role: Role, source: LlmError) -> PipelineError {
    PipelineError::Llm { role, source }
}

/// The signal batch running beside stages 2.5–5; aborted if the turn stops first.
pub(crate) struct ScoringTask(
    pub tokio::task::JoinHandle<Result<LlmResponse, LlmError>>,
    pub LlmRequest,
);

impl Drop for ScoringTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A question ready to save, with the calls it took and where it came from.
pub(crate) struct AskedQuestion {
    pub text: String,
    pub calls: Vec<CallRecord>,
    pub source: String,
    /// The template replaced replies of a model that failed the question check.
    pub replaced_model: bool,
}

impl AskedQuestion {
    /// A template question: there is no model (`failures` is `None`), or the model's replies
    /// failed the check for the reasons given.
    pub(crate) fn template(text: String, failures: Option<(&[String], Vec<CallRecord>)>) -> Self {
        match failures {
            None => Self {
                text,
                calls: Vec::new(),
                source: "template (the provider has no model)".to_owned(),
                replaced_model: false,
            },
            Some((problems, calls)) => Self {
                text,
                calls,
                source: format!(
                    "template (the model's questions failed the check: {})",
                    problems.join("; ")
                ),
                replaced_model: true,
            },
        }
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

/// The rubric scores of a turn: a model call in flight, or (offline understanding) already
/// scored by rule.
pub(crate) enum Scoring {
    Call(ScoringTask),
    Ready(crate::domain::LlmScores),
}

/// One turn in progress.
pub(crate) struct TurnRun {
    pub ctx: TurnContext,
    pub turn: u32,
    /// What stage 6 keeps beside its output, once it has run or been restored.
    pub decision: Option<DecisionRecord>,
    pub scoring: Option<Scoring>,
}

/// What strategy selection (stage 6) keeps in its checkpoint beside its output contract: the
/// rubric scores it used (for the decision row), the answer's depth (for the session's depth
/// history) and the node tracker as it stood before the focus was applied (so a researcher's
/// override can apply another focus to the same state). Every field defaults, so a checkpoint
/// written without one still reads.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct DecisionRecord {
    #[serde(default)]
    pub llm_scores: crate::domain::LlmScores,
    #[serde(default)]
    pub response_depth: Option<crate::domain::ResponseDepth>,
    /// The tracker's own JSON form (`NodeStateTracker::to_json`).
    #[serde(default)]
    pub tracker_before_focus: Option<Value>,
}

/// What context loading (stage 1) keeps beside its output: the answer, so a turn interrupted
/// before stage 2 saved it resumes with it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct LoadingRecord {
    pub user_input: String,
}

/// A checkpoint's stored form: the stage output, and the extra data some stages keep for a
/// resumed turn (`{"output": …, "extra": …}`, as [`Interview::restore_run`] reads it).
#[derive(serde::Serialize)]
struct Envelope<'a, O> {
    output: &'a O,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<&'a Value>,
}

#[cfg(test)]
mod tests {
    use super::mostly_the_same;

    #[test]
    fn a_copied_question_with_a_changed_ending_is_the_same() {
        let shown = "What makes it different is that oat milk has a slightly sweeter flavor?";
        assert!(mostly_the_same(
            shown,
            "What makes it different is that oat milk has a slightly sweeter taste?"
        ));
        assert!(!mostly_the_same(
            shown,
            "Why does a sweeter flavor matter to you in the morning?"
        ));
        assert!(!mostly_the_same("", "Why?"));
    }
}
