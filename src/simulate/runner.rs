//! Driving one simulated session: open (create or reopen) it, then alternate the pipeline's
//! questions with the respondent's answers until the interview ends.
//!
//! The session runs on the one session driver (`session::driver`), which asks what the session
//! waits for before every step, so a session interrupted anywhere (before the opening question,
//! between turns, inside a turn) continues where it stopped; the persona is its answer source. The respondent's calls are recorded in the session's LLM usage like the
//! pipeline's, under the `respondent` role.

use std::path::Path;

use futures::FutureExt;
use futures::future::LocalBoxFuture;

use super::respondent::{Answer, PersonaRespondent, RespondentError};
use super::summary::{RunSummary, summarize};
use super::{SimulationError, SimulationSpec};
use crate::domain::Speaker;
use crate::llm::{LlmRouter, Role};
use crate::pipeline::{Event, EventSink, Interview, Services};
use crate::session::{AnswerSource, Command, Ending, SourceError, Waiting};
use crate::store::{LlmUsage, SessionStatus, Store, StoreOps};

/// What [`run_one`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub summary: RunSummary,
    /// The session existed before this run (resumed, or found finished).
    pub existed: bool,
    /// The session was already finished; nothing ran.
    pub already_finished: bool,
}

/// Creates the session `id` for `spec`, or reopens it when it exists.
///
/// An existing session must be for the same concept and methodology; its own number of turns
/// is kept.
pub fn open_session(
    store: Store,
    spec: &SimulationSpec,
    services: Services,
    id: &str,
) -> Result<(Interview, bool), SimulationError> {
    let concept = &spec.interview.concept;
    let methodology = &spec.interview.methodology.method.name;
    let Some(found) = store.get_session(id)? else {
        let interview =
            Interview::create(store, spec.interview.clone(), services, Some(id.to_owned()))?;
        return Ok((interview, false));
    };
    if found.concept != concept.id || &found.methodology != methodology {
        return Err(SimulationError::Mismatch {
            id: id.to_owned(),
            concept: concept.id.clone(),
            methodology: methodology.clone(),
            found_concept: found.concept,
            found_methodology: found.methodology,
        });
    }
    let interview = Interview::open(store, id, spec.interview.clone(), services)?;
    Ok((interview, true))
}

/// Runs the session `id` of `spec` in the database at `db` to its end on the calling thread,
/// reporting every session event to `observe`, and summarises it.
///
/// A finished session is summarised without running anything. The call builds its own
/// single-threaded runtime (the session's database connection stays on this thread), so it
/// must not be called from inside an async runtime; a matrix calls it from worker threads.
pub fn run_one(
    db: &Path,
    spec: &SimulationSpec,
    services: &Services,
    id: &str,
    observe: impl FnMut(&crate::session::SessionEvent),
) -> Result<RunReport, SimulationError> {
    let store = Store::open(db)?;
    let llm = std::sync::Arc::clone(&services.llm);
    let (mut interview, existed) = open_session(store, spec, services.clone(), id)?;
    // Recorded on every run, so a session simulated before personas were stored gains it too.
    interview
        .store()
        .set_session_persona(id, &spec.persona.id, spec.seed)?;
    let already_finished =
        interview.store().get_session(id)?.map(|s| s.status) == Some(SessionStatus::Finished);
    if !already_finished {
        let topic = spec.interview.concept.topic().to_owned();
        let mut persona = Persona {
            respondent: PersonaRespondent::new(spec.persona.clone(), topic, spec.seed),
            llm,
        };
        let (returned, ending) = crate::session::driver::run(interview, &mut persona, observe)
            .map_err(|e| SimulationError::Runtime(std::io::Error::other(e.to_string())))?;
        interview = returned;
        let id = interview.session_id().to_owned();
        match ending {
            // A finished interview, or a stop asked for: the session says which.
            Ending::Finished(_) | Ending::Shutdown => {}
            Ending::Failed(e) => return Err(e.into()),
            Ending::Source(e) => {
                return Err(match e.downcast::<SimulationError>() {
                    Ok(e) => *e,
                    Err(other) => SimulationError::State {
                        id,
                        message: other.to_string(),
                    },
                });
            }
            Ending::OutOfAnswers { turn } => {
                return Err(SimulationError::State {
                    id,
                    message: format!("the simulated respondent gave no answer for turn {turn}"),
                });
            }
            Ending::Fatal(message) => return Err(SimulationError::State { id, message }),
            Ending::Stuck { steps } => {
                return Err(SimulationError::State {
                    id,
                    message: format!(
                        "still running after {steps} steps of a {}-turn interview",
                        interview.spec().max_turns
                    ),
                });
            }
        }
    }
    let summary = summarize(
        interview.store(),
        id,
        &spec.interview.methodology,
        &spec.persona.id,
        spec.seed,
    )?;
    Ok(RunReport {
        summary,
        existed,
        already_finished,
    })
}

/// A simulated respondent as the session driver's answer source.
struct Persona {
    respondent: PersonaRespondent,
    llm: std::sync::Arc<LlmRouter>,
}

impl AnswerSource for Persona {
    fn next<'a>(
        &'a mut self,
        waiting: &'a Waiting<'a>,
    ) -> LocalBoxFuture<'a, Result<Option<Command>, SourceError>> {
        async move {
            let answer = respond(
                waiting.interview,
                &self.respondent,
                &self.llm,
                waiting.turn,
                waiting.events,
            )
            .await
            .map_err(|e| Box::new(e) as SourceError)?;
            Ok(Some(Command::Answer(answer.text)))
        }
        .boxed_local()
    }
}

/// The respondent's answer for `turn`, recorded in the session's LLM usage either way.
async fn respond(
    interview: &Interview,
    respondent: &PersonaRespondent,
    llm: &LlmRouter,
    turn: u32,
    events: &EventSink,
) -> Result<Answer, SimulationError> {
    let id = interview.session_id().to_owned();
    // Only what was said before this answer: earlier answers and every question so far.
    let conversation: Vec<(Speaker, String)> = interview
        .store()
        .utterances(&id)?
        .into_iter()
        .filter(|u| u.turn < turn)
        .map(|u| (u.speaker, u.text))
        .collect();
    match respondent.answer(llm, turn, &conversation).await {
        Ok(answer) => {
            let r = &answer.response;
            let cost = llm.cost(Role::Respondent, r.tokens_in, r.tokens_out);
            interview.store().insert_llm_usage(&LlmUsage {
                session_id: id,
                turn,
                role: Role::Respondent.as_str().to_owned(),
                provider: r.provider.clone(),
                model: r.model.clone(),
                tokens_in: r.tokens_in,
                tokens_out: r.tokens_out,
                latency_ms: u64::try_from(r.latency.as_millis()).unwrap_or(u64::MAX),
                attempts: r.attempts,
                outcome: "ok".to_owned(),
                cost_usd: cost,
            })?;
            events.emit(Event::LlmCall {
                turn,
                role: Role::Respondent,
                provider: r.provider.clone(),
                model: r.model.clone(),
                tokens_in: r.tokens_in,
                tokens_out: r.tokens_out,
                latency: r.latency,
                attempts: r.attempts,
                cost_usd: cost,
                outcome: "ok".to_owned(),
            });
            Ok(answer)
        }
        Err(error) => {
            record_failure(interview, llm, turn, &error, events);
            Err(error.into())
        }
    }
}

/// Records and reports a failed respondent call (a rejected reply counts as one).
fn record_failure(
    interview: &Interview,
    llm: &LlmRouter,
    turn: u32,
    error: &RespondentError,
    events: &EventSink,
) {
    let (provider, model) = llm.binding(Role::Respondent).map_or_else(
        |_| (String::new(), String::new()),
        |b| (b.provider.name().to_owned(), b.provider.model().to_owned()),
    );
    let outcome = format!("error: {error}");
    // A rejected reply was still a call the provider answered and billed.
    let (tokens_in, tokens_out) = match error {
        RespondentError::Reply {
            tokens_in,
            tokens_out,
            ..
        } => (*tokens_in, *tokens_out),
        RespondentError::Llm { .. } => (0, 0),
    };
    let cost = llm.cost(Role::Respondent, tokens_in, tokens_out);
    // Failing to record the failure must not hide the failure itself.
    let _ = interview.store().insert_llm_usage(&LlmUsage {
        session_id: interview.session_id().to_owned(),
        turn,
        role: Role::Respondent.as_str().to_owned(),
        provider: provider.clone(),
        model: model.clone(),
        tokens_in,
        tokens_out,
        latency_ms: 0,
        attempts: 1,
        outcome: outcome.clone(),
        cost_usd: cost,
    });
    events.emit(Event::LlmCall {
        turn,
        role: Role::Respondent,
        provider,
        model,
        tokens_in,
        tokens_out,
        latency: std::time::Duration::ZERO,
        attempts: 1,
        cost_usd: cost,
        outcome,
    });
}
