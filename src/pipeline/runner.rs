//! The turn runner: runs a turn's stages in order, each in its own `tracing` span, and alone
//! commits what they return: each stage's output, effects, checkpoint and usage rows in one
//! transaction, with the crash switch on both sides, then the effects applied to the session
//! in memory. It emits the stage events, restores the checkpointed stages of an interrupted
//! turn instead of running them again, starts the rubric scores beside stages 2.5–5, and runs
//! slot discovery after the question unless the settings ask for the seeds' order.

use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use super::context::{StageOutput, TurnContext};
use super::crash::{self, CrashSide};
use super::interview::Interview;
use super::ports::{Ports, usage_row};
use super::stages::{Effects, Extra, Staged, s06_strategy_selection};
use super::{Event, EventSink, PipelineError, Stage, TurnError, TurnResult};
use crate::graph::node_state::NodeStateTracker;
use crate::llm::{LlmError, LlmRequest, LlmResponse};
use crate::store::{LlmUsage, StoreError, StoreOps, Tx};

impl Interview {
    pub(super) async fn run_turn(
        &mut self,
        input: String,
        events: &EventSink,
    ) -> Result<TurnResult, TurnError> {
        let span = tracing::info_span!(
            "turn",
            session = %self.data.session_id,
            turn = self.data.state.turn_count + 1,
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
    pub(super) fn record_failure(&mut self, e: &TurnError, events: &EventSink) {
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
            .set_session_failure(&self.data.session_id, Some(&failure))
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
        let turn = self.data.state.turn_count + 1;
        let fail = |stage, error| TurnError { turn, stage, error };
        self.ensure_active()
            .map_err(|e| fail(Stage::ContextLoading, e))?;
        // A previous turn whose deferred slot discovery never ran (the driver stopped first)
        // catches up before this turn computes its state.
        self.discover_deferred_slots(events).await?;
        let mut run = if self.unstarted_turn.take() == Some(turn) {
            TurnRun::new(self.data.session_id.clone(), turn, input)
        } else {
            self.restore_run(turn, input)
                .map_err(|(stage, e)| fail(stage, e))?
        };
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
                let scoring = s06_strategy_selection::start_scoring(
                    run.ctx.context_loading().map_err(|e| fail(stage, e))?,
                    run.ctx.utterance_saving().map_err(|e| fail(stage, e))?,
                    &self.ports(events),
                )
                .map_err(|e| fail(stage, e))?;
                run.scoring = Some(scoring);
            }
            events.emit(Event::StageStarted { turn, stage });
            let t = Instant::now();
            let span = stage_span(&self.data.session_id, turn, stage);
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
        if result.should_continue {
            self.unstarted_turn = Some(turn + 1);
        }
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
        } else {
            self.slots_current_at = Some(turn);
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
        let turn = self.data.state.turn_count;
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
            // Known to be done: no need to ask the store.
            _ if self.slots_current_at == Some(turn) => return Ok(()),
            _ => {
                let stages = self
                    .store
                    .checkpointed_stages(&self.data.session_id, turn)
                    .map_err(|e| fail(e.into()))?;
                let done = stages.iter().any(|s| s == Stage::SlotDiscovery.name());
                let updated = stages.iter().any(|s| s == Stage::GraphUpdate.name());
                if done || !updated {
                    self.slots_current_at = Some(turn);
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
        let span = stage_span(&self.data.session_id, turn, Stage::SlotDiscovery);
        let outcome = self
            .run_stage(Stage::SlotDiscovery, &mut run, events)
            .instrument(span.clone())
            .await;
        close_span(&span, t, outcome.as_ref().map(|_| "ok, after the question"));
        drop(span);
        let summary = outcome.map_err(fail)?;
        self.slots_current_at = Some(turn);
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
        let mut run = TurnRun::new(self.data.session_id.clone(), turn, input);
        let checkpoints = self
            .store
            .checkpoints_for_turn(&self.data.session_id, turn)
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

    /// Runs one stage on its input from the turn's context and commits what it returns.
    async fn run_stage(
        &mut self,
        stage: Stage,
        run: &mut TurnRun,
        events: &EventSink,
    ) -> Result<String, PipelineError> {
        use super::stages::{
            s01_context_loading as s01, s02_5_srl_preprocessing as s02_5,
            s02_utterance_saving as s02, s03_extraction as s03, s04_5_slot_discovery as s04_5,
            s04_graph_update as s04, s05_state_computation as s05, s06_strategy_selection as s06,
            s07_continuation as s07, s08_question_generation as s08, s09_response_saving as s09,
            s10_scoring_persistence as s10,
        };
        let turn = run.turn;
        match stage {
            Stage::ContextLoading => {
                let staged = s01::run(
                    &s01::Input {
                        answer: &run.ctx.user_input,
                    },
                    &self.ports(events),
                )?;
                self.commit(run, staged)
            }
            Stage::UtteranceSaving => {
                let input = s02::Input {
                    turn,
                    answer: &run.ctx.user_input,
                    speech: self.pending_speech.clone(),
                };
                let staged = s02::run(&input, &self.ports(events))?;
                self.commit(run, staged)
            }
            Stage::SrlPreprocessing => {
                let staged = s02_5::run(
                    &s02_5::Input {
                        answer: &run.ctx.user_input,
                    },
                    &self.ports(events),
                )?;
                self.commit(run, staged)
            }
            Stage::Extraction => {
                let staged = s03::run(&s03::Input::from_turn(run)?, &self.ports(events)).await?;
                self.commit(run, staged)
            }
            Stage::GraphUpdate => {
                let staged = s04::run(&s04::Input::from_turn(run)?, &self.ports(events))?;
                self.commit(run, staged)
            }
            Stage::SlotDiscovery => {
                let staged =
                    s04_5::run(&s04_5::Input::from_turn(run)?, &self.ports(events)).await?;
                self.commit(run, staged)
            }
            Stage::StateComputation => {
                let staged = s05::run(&s05::Input::from_turn(run)?, &self.ports(events))?;
                self.commit(run, staged)
            }
            Stage::StrategySelection => {
                let scoring = run.scoring.take().ok_or_else(|| {
                    PipelineError::State("the LLM signal batch was never started".to_owned())
                })?;
                let staged =
                    s06::run(&s06::Input::from_turn(run)?, scoring, &self.ports(events)).await?;
                let (output, summary, extra) = self.persist(turn, staged)?;
                output.store(&mut run.ctx);
                if let Some(Extra::Decision(record)) = extra {
                    run.decision = Some(record);
                }
                Ok(summary)
            }
            Stage::Continuation => {
                let staged = s07::run(&s07::Input::from_turn(run)?, &self.ports(events))?;
                self.commit(run, staged)
            }
            Stage::QuestionGeneration => {
                let staged = s08::run(&s08::Input::from_turn(run)?, &self.ports(events)).await?;
                self.commit(run, staged)
            }
            Stage::ResponseSaving => {
                let input = s09::Input {
                    turn,
                    question: run.ctx.question_generation()?,
                };
                let staged = s09::run(&input, &self.ports(events))?;
                self.commit(run, staged)
            }
            Stage::ScoringPersistence => {
                // The decision row borrows this turn's outputs, so the output is filed after
                // the transaction.
                let (output, summary, _) = {
                    let staged = s10::run(&s10::Input::from_turn(run)?, &self.ports(events))?;
                    self.persist(turn, staged)?
                };
                output.store(&mut run.ctx);
                Ok(summary)
            }
        }
    }

    /// Commits a stage's output and files it in the turn's context; returns its summary.
    fn commit<O: StageOutput>(
        &mut self,
        run: &mut TurnRun,
        staged: Staged<'_, O>,
    ) -> Result<String, PipelineError> {
        let (output, summary, _) = self.persist(run.turn, staged)?;
        output.store(&mut run.ctx);
        Ok(summary)
    }

    /// The commit of a stage: its effects, its checkpoint and its usage rows in one
    /// transaction, with the crash switch on both sides; then its effects applied to the
    /// session in memory. Returns the output, summary and extra data for the caller to file.
    fn persist<O: StageOutput>(
        &mut self,
        turn: u32,
        staged: Staged<'_, O>,
    ) -> Result<(O, String, Option<Extra>), PipelineError> {
        let stage = O::STAGE;
        let Staged {
            output,
            summary,
            effects,
            extra,
            calls,
        } = staged;
        // Serialised straight to text: building a `Value` tree first cost a tenth of a turn.
        let envelope = Envelope {
            output: &output,
            extra: extra.as_ref(),
        };
        crash::check(self.crash, stage, CrashSide::Before);
        let id = self.data.session_id.clone();
        let usage: Vec<LlmUsage> = calls
            .iter()
            .map(|c| usage_row(&id, &self.services.llm, turn, c))
            .collect();
        self.store.transaction(|tx| {
            write_effects(tx, &id, turn, &effects, &self.data.tracker)?;
            for row in &usage {
                tx.insert_llm_usage(row)?;
            }
            tx.put_checkpoint(&id, turn, stage.name(), &envelope)
        })?;
        crash::check(self.crash, stage, CrashSide::After);
        self.data.apply(effects);
        Ok((output, summary, extra))
    }

    /// The ports a stage of this interview runs with.
    pub(crate) fn ports<'a>(&'a self, events: &'a EventSink) -> Ports<'a> {
        Ports {
            spec: &self.spec,
            services: &self.services,
            store: &self.store,
            data: &self.data,
            events,
            registry: &self.registry,
            signal_plan: self.signal_plan.as_deref(),
            type_index: &self.type_index,
        }
    }
}

/// Writes a stage's effects in its transaction. The session state is saved with the tracker
/// the stage leaves (its own, or the session's unchanged one).
fn write_effects(
    tx: &Tx<'_>,
    session_id: &str,
    turn: u32,
    effects: &Effects<'_>,
    tracker: &NodeStateTracker,
) -> Result<(), StoreError> {
    if let Some(u) = &effects.utterance {
        tx.insert_utterance_with_id(&u.id, session_id, turn, u.speaker, &u.text)?;
        if let Some(speech) = &u.speech {
            tx.insert_utterance_speech(&u.id, speech)?;
        }
    }
    if !effects.nodes_created.is_empty() || !effects.nodes_updated.is_empty() {
        let changed: Vec<_> = effects
            .nodes_created
            .iter()
            .chain(&effects.nodes_updated)
            .cloned()
            .collect();
        tx.upsert_nodes(&changed)?;
    }
    if !effects.edges_created.is_empty() {
        tx.insert_edges(&effects.edges_created)?;
    }
    if !effects.edges_updated.is_empty() {
        tx.update_edges(&effects.edges_updated)?;
    }
    if !effects.slots_created.is_empty() || !effects.slots_updated.is_empty() {
        let changed: Vec<_> = effects
            .slots_created
            .iter()
            .chain(&effects.slots_updated)
            .cloned()
            .collect();
        tx.upsert_slots(&changed)?;
    }
    if !effects.mappings.is_empty() {
        tx.upsert_mappings(&effects.mappings)?;
    }
    if let Some(edges) = &effects.canonical_edges {
        tx.upsert_canonical_edges(edges)?;
    }
    if let Some(record) = &effects.scoring {
        tx.insert_scoring(record)?;
    }
    let tracker = effects.tracker.as_ref().unwrap_or(tracker);
    match &effects.state {
        Some(state) => tx.update_session_state(session_id, state, &tracker.persisted())?,
        None if effects.tracker.is_some() => tx.update_tracker(session_id, &tracker.persisted())?,
        None => {}
    }
    if let Some(reason) = &effects.finish {
        tx.finish_session(session_id, reason)?;
    }
    Ok(())
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

impl TurnRun {
    /// Turn `turn` of a session with no stage run yet.
    pub(crate) fn new(session_id: String, turn: u32, input: String) -> Self {
        Self {
            ctx: TurnContext::new(session_id, input),
            turn,
            decision: None,
            scoring: None,
        }
    }
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
    extra: Option<&'a Extra>,
}
