//! What a stage works with besides its typed input: the interview's configuration, its
//! services (LLM router, embedder, settings), the store (read, and written only for LLM calls
//! that belong to no commit), the session's data as the last commit left it, and the event
//! sink. Stages never write their results through a port: they return them to the turn runner,
//! which commits them.
//!
//! The LLM helpers every calling stage shares live here: building requests, reading replies
//! against their contracts, recording usage and rejections, and the checked question.

use std::sync::Arc;

use super::interview::{InterviewSpec, Services};
use super::session_data::SessionData;
use super::{Event, EventSink, PipelineError};
use crate::domain::Speaker;
use crate::llm::{LlmError, LlmRequest, LlmResponse, LlmRouter, Role};
use crate::signals::Registry;
use crate::store::{LlmUsage, Store, StoreOps};
use crate::understanding::TypeIndex;

/// The ports of one stage run, borrowed from the interview for its duration.
pub(crate) struct Ports<'a> {
    pub spec: &'a InterviewSpec,
    pub services: &'a Services,
    pub store: &'a Store,
    pub data: &'a SessionData,
    pub events: &'a EventSink,
    pub registry: &'a Registry,
    /// The detectors the methodology asks for, in run order; `None` runs every detector.
    pub signal_plan: Option<&'a [&'static str]>,
    /// The methodology's node types embedded for offline typing, built on first use.
    pub type_index: &'a tokio::sync::OnceCell<Arc<TypeIndex>>,
}

/// Facts about one LLM call, gathered for the stage's commit.
pub(crate) struct CallRecord {
    pub role: Role,
    pub response: LlmResponse,
}

impl Ports<'_> {
    /// The usage row of a successful call, to insert in the committing transaction.
    pub(crate) fn usage_row(&self, turn: u32, call: &CallRecord) -> LlmUsage {
        usage_row(&self.data.session_id, &self.services.llm, turn, call)
    }

    /// Every question asked before the end of `turn`, oldest first (the opening question is
    /// turn 0's). A store that cannot be read gives none: the check against repeats is then
    /// only as good as the last question's, never a failed turn.
    pub(crate) fn asked_questions(&self, turn: u32) -> Vec<String> {
        self.store
            .utterances(&self.data.session_id)
            .map(|all| {
                all.into_iter()
                    .filter(|u| u.speaker == Speaker::Interviewer && u.turn < turn)
                    .map(|u| u.text)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Records a failed call right away (it is part of no stage's commit) and reports it, with
    /// the attempts and time the error says the call took.
    pub(crate) fn record_failed_call(&self, turn: u32, request: &LlmRequest, error: &LlmError) {
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
            session_id: self.data.session_id.clone(),
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
        self.events.emit(Event::LlmCall {
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
        read: impl FnOnce(&str) -> Result<T, PipelineError>,
    ) -> Result<(T, CallRecord), PipelineError> {
        match self.services.llm.complete(request).await {
            Ok(response) => self.read_reply(request, response, read),
            Err(e) => {
                self.record_failed_call(request.turn, request, &e);
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
        read: impl FnOnce(&str) -> Result<T, PipelineError>,
    ) -> Result<(T, CallRecord), PipelineError> {
        match read(&response.text) {
            Ok(value) => {
                emit_call(self.events, &self.services.llm, request, &response, "ok");
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
                    self.events,
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
            .utterance(&self.data.session_id, turn, Speaker::Respondent)
            .ok()
            .flatten()
            .map(|u| u.text)
            .into_iter()
            .collect();
        let about = std::iter::once(self.spec.concept.topic().to_owned())
            .chain(self.data.live_nodes().map(|n| n.label.clone()))
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
        // What the model was given: a thing its question names must come from somewhere.
        let given = format!("{}\n{}", request.system, request.user);
        // Read once: neither attempt adds a question to the store.
        let asked = self.asked_questions(turn);
        let mut calls = Vec::new();
        let mut problems = Vec::new();
        for attempt in 0..2 {
            // A small model's replies are mostly refused by the checks below: its text is
            // not streamed to the screen, where a refused question would show and then vanish.
            match self
                .ask_question(request, turn, anchor_refs.is_none())
                .await
            {
                Ok((question, call)) => {
                    calls.push(call);
                    let repeated = asked
                        .last()
                        .is_some_and(|last| mostly_the_same(last, &question));
                    let asked_before = asked.iter().any(|q| same_words(q, &question));
                    let checked = if repeated {
                        Err("repeats the previous question".to_owned())
                    } else if asked_before {
                        Err("was already asked in this interview".to_owned())
                    } else {
                        crate::prompts::check_question(&question, &forbidden)
                            .map_err(|p| p.to_string())
                            .and_then(|()| match &anchor_refs {
                                Some((said, about)) => crate::prompts::check_small_model_question(
                                    &question,
                                    crate::prompts::Anchors {
                                        said,
                                        about,
                                        topic: self.spec.concept.topic(),
                                        prompt: &given,
                                    },
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
        self.events.emit(Event::Warning {
            message: format!(
                "turn {turn}: asked the strategy's template question: {}",
                asked.source
            ),
        });
        Ok(asked)
    }

    /// Streams a question, forwarding deltas as events when `show` is set, and checks the
    /// reply's contract.
    pub(crate) async fn ask_question(
        &self,
        request: &LlmRequest,
        turn: u32,
        show: bool,
    ) -> Result<(String, CallRecord), PipelineError> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let forward = async {
            while let Some(text) = rx.recv().await {
                if show {
                    self.events.emit(Event::QuestionDelta { turn, text });
                }
            }
        };
        let (result, ()) = futures::join!(self.services.llm.stream(request, tx), forward);
        let response = match result {
            Ok(r) => r,
            Err(e) => {
                self.record_failed_call(turn, request, &e);
                return Err(llm_error(request.role, e));
            }
        };
        self.read_reply(request, response, |text| {
            crate::prompts::parse_question_reply(text).map_err(|source| PipelineError::Contract {
                role: Role::QuestionGeneration,
                source,
            })
        })
    }
}

/// The usage row of a successful call of session `session_id`.
pub(crate) fn usage_row(
    session_id: &str,
    llm: &LlmRouter,
    turn: u32,
    call: &CallRecord,
) -> LlmUsage {
    let r = &call.response;
    LlmUsage {
        session_id: session_id.to_owned(),
        turn,
        role: call.role.as_str().to_owned(),
        provider: r.provider.clone(),
        model: r.model.clone(),
        tokens_in: r.tokens_in,
        tokens_out: r.tokens_out,
        latency_ms: u64::try_from(r.latency.as_millis()).unwrap_or(u64::MAX),
        attempts: r.attempts,
        outcome: "ok".to_owned(),
        cost_usd: llm.cost(call.role, r.tokens_in, r.tokens_out),
    }
}

/// The question of session `session_id` asked at the end of `turn` (0: the opening question).
pub(crate) fn saved_question(
    store: &Store,
    session_id: &str,
    turn: u32,
) -> Result<String, PipelineError> {
    store
        .utterance(session_id, turn, Speaker::Interviewer)?
        .map(|u| u.text)
        .ok_or_else(|| PipelineError::State(format!("turn {turn} has no saved question")))
}

/// Whether two questions share at least four in five of their words (either way round): a
/// small model that copies the question it was shown changes a word or two at the end.
/// The same words in the same order, whatever the case and punctuation.
fn same_words(a: &str, b: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    words(a) == words(b)
}

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
