//! The LLM seam: one async trait every provider implements, the five roles the engine asks
//! models to play, and the router that gives each role its own provider and settings.
//!
//! The pipeline never names a provider. It builds an [`LlmRequest`] for a [`Role`], hands it to
//! the [`LlmRouter`], and gets back text plus the facts the usage ledger needs (tokens,
//! latency, attempts). Streaming is part of the trait: a provider that cannot stream answers in
//! one delta.
//!
//! The router gives every provider the same call behaviour (see [`RetryPolicy`]): a per-attempt
//! timeout, one retry on a timeout or HTTP 429, and the `llm_*` log events.
//!
//! HTTP providers here: [`AnthropicProvider`] (Messages API) and [`OpenAiProvider`] (any
//! OpenAI-compatible chat completions endpoint: `OpenAI`, Kimi, `DeepSeek`, Ollama,
//! `llama.cpp`, vLLM). [`ScriptedProvider`] replies from a YAML/JSON file, for tests and demos.
//! [`NoneProvider`] has no model at all: a role bound to it is modelless
//! ([`LlmRouter::is_modelless`]) and the pipeline does that role's work without a model.

mod anthropic;
pub mod config;
mod error;
mod http;
pub mod local;
mod none;
mod openai;
mod retry;
mod scripted;
mod scrub;
mod secret;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use error::{LlmError, MAX_MESSAGE_CHARS};
pub use local::{
    LocalConfig, LocalError, LocalProvider, QUESTION_MAX_TOKENS, QUESTION_MAX_WORDS,
    QUESTION_MIN_WORDS, one_question_grammar,
};
pub use none::{NONE_PROVIDER, NoneProvider};
pub use openai::{OpenAiConfig, OpenAiProvider};
pub use retry::{LOG_TARGET, RetryPolicy};
pub use scripted::{SCRIPT_LOG_ENV, ScriptError, ScriptedProvider};
pub use secret::ApiKey;

/// What a model is asked to do. Each role is configured separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Concepts and relationships from an answer (stage 3).
    Extraction,
    /// Canonical slot proposals for new nodes (stage 4.5).
    SlotDiscovery,
    /// The six rubric scores of an answer (the LLM signal batch, awaited by stage 6).
    SignalScoring,
    /// The next question (stage 8 and the opening question).
    QuestionGeneration,
    /// A simulated respondent answering as a persona.
    Respondent,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Extraction,
        Role::SlotDiscovery,
        Role::SignalScoring,
        Role::QuestionGeneration,
        Role::Respondent,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Extraction => "extraction",
            Self::SlotDiscovery => "slot_discovery",
            Self::SignalScoring => "signal_scoring",
            Self::QuestionGeneration => "question_generation",
            Self::Respondent => "respondent",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Defaults per role: the seed's extraction and scoring clients run at 0.3; questions at
    /// 0.8 (the opening prompt raises it to 0.9); a simulated respondent at 0.9 for variety.
    pub fn default_settings(self) -> RoleSettings {
        let (temperature, max_tokens) = match self {
            Self::Extraction => (0.3, 2048),
            Self::SlotDiscovery => (0.3, 1024),
            Self::SignalScoring => (0.3, 512),
            Self::QuestionGeneration => (0.8, 1024),
            Self::Respondent => (0.9, 512),
        };
        RoleSettings {
            temperature,
            max_tokens,
            timeout: Duration::from_secs(30),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Sampling and limits for one role.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoleSettings {
    pub temperature: f32,
    pub max_tokens: u32,
    pub timeout: Duration,
}

impl RoleSettings {
    /// These settings with the role's environment overrides applied:
    /// `LLM_<ROLE>_TEMPERATURE` (0–2), `LLM_<ROLE>_MAX_TOKENS` (1–200,000) and
    /// `LLM_<ROLE>_TIMEOUT` (seconds, 1–3,600), e.g. `LLM_EXTRACTION_TIMEOUT=60`. `env` looks a
    /// variable up (the process environment in the CLI). A malformed value is an error naming
    /// the variable, never silently ignored.
    pub fn with_env(
        self,
        role: Role,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        let prefix = format!("LLM_{}_", role.as_str().to_uppercase());
        let read = |name: &str| {
            let var = format!("{prefix}{name}");
            env(&var)
                .filter(|v| !v.trim().is_empty())
                .map(|v| (var, v.trim().to_owned()))
        };
        let mut out = self;
        if let Some((var, v)) = read("TEMPERATURE") {
            out.temperature = v
                .parse::<f32>()
                .ok()
                .filter(|t| (0.0..=2.0).contains(t))
                .ok_or_else(|| format!("{var}='{v}': expected a number from 0 to 2"))?;
        }
        if let Some((var, v)) = read("MAX_TOKENS") {
            out.max_tokens = v
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=200_000).contains(n))
                .ok_or_else(|| format!("{var}='{v}': expected a whole number from 1 to 200000"))?;
        }
        if let Some((var, v)) = read("TIMEOUT") {
            let seconds = v
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=3_600).contains(n))
                .ok_or_else(|| format!("{var}='{v}': expected seconds from 1 to 3600"))?;
            out.timeout = Duration::from_secs(seconds);
        }
        Ok(out)
    }
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmRequest {
    pub role: Role,
    pub system: String,
    pub user: String,
    pub temperature: f32,
    pub max_tokens: u32,
    /// The turn the call serves (0 for the opening question), for usage records and scripts.
    pub turn: u32,
    /// What the reply must match: a JSON schema for the structured roles
    /// ([`LlmRequest::with_schema`]) or a grammar ([`LlmRequest::with_grammar`]). Providers that
    /// can constrain decoding (the local model) apply it; others ignore it and rely on the
    /// prompt and the parser. The field keeps the name it had when it could only hold a schema.
    #[serde(skip)]
    pub schema: Option<ReplyConstraint>,
}

/// A constraint on the text of a reply, applied while decoding by providers that can.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyConstraint {
    /// The reply is one JSON value matching this schema.
    JsonSchema(Arc<serde_json::Value>),
    /// The reply matches this llguidance Lark grammar (for example
    /// [`one_question_grammar`]).
    Grammar(Arc<String>),
}

impl LlmRequest {
    /// This request with a reply schema attached.
    #[must_use]
    pub fn with_schema(mut self, schema: Arc<serde_json::Value>) -> Self {
        self.schema = Some(ReplyConstraint::JsonSchema(schema));
        self
    }

    /// This request with a reply grammar attached (an llguidance Lark grammar): the local model
    /// decodes under it as it does under a schema; hosted providers ignore it.
    #[must_use]
    pub fn with_grammar(mut self, grammar: Arc<String>) -> Self {
        self.schema = Some(ReplyConstraint::Grammar(grammar));
        self
    }
}

/// A model's answer with the facts the usage ledger records.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmResponse {
    pub text: String,
    pub provider: String,
    pub model: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub latency: Duration,
    /// Attempts made, retries included (1 when the first attempt answered).
    pub attempts: u32,
}

/// Where streamed text deltas go.
pub type DeltaSink = UnboundedSender<String>;

/// A language model behind some API (or a script).
pub trait LlmProvider: Send + Sync {
    /// Provider name as recorded in usage rows (`anthropic`, `scripted`, ...).
    fn name(&self) -> &str;

    /// The model the provider calls.
    fn model(&self) -> &str;

    /// Answers `request` in full.
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>>;

    /// Answers `request`, sending text to `deltas` as it arrives. The returned response holds
    /// the whole text. The default sends the full answer as one delta.
    fn stream<'a>(
        &'a self,
        request: &'a LlmRequest,
        deltas: DeltaSink,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
        Box::pin(async move {
            let response = self.complete(request).await?;
            // A closed receiver only means nobody is watching; the answer still counts.
            let _ = deltas.send(response.text.clone());
            Ok(response)
        })
    }

    /// USD per million tokens (input, output), when known.
    fn pricing(&self) -> Option<(f64, f64)> {
        None
    }

    /// Whether there is no model behind this provider (the `none` provider): its roles are
    /// served without model calls, and a call fails at once.
    fn is_modelless(&self) -> bool {
        false
    }
}

/// A provider with the settings of the role it serves.
#[derive(Clone)]
pub struct RoleBinding {
    pub provider: Arc<dyn LlmProvider>,
    pub settings: RoleSettings,
}

impl fmt::Debug for RoleBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RoleBinding")
            .field("provider", &self.provider.name())
            .field("model", &self.provider.model())
            .field("settings", &self.settings)
            .finish()
    }
}

/// Routes each role to its provider, with the retry rules every call follows.
#[derive(Debug, Clone, Default)]
pub struct LlmRouter {
    roles: BTreeMap<Role, RoleBinding>,
    retry: RetryPolicy,
}

impl LlmRouter {
    /// Every role served by one provider with the role defaults.
    pub fn single(provider: &Arc<dyn LlmProvider>) -> Self {
        let roles = Role::ALL
            .into_iter()
            .map(|role| {
                (
                    role,
                    RoleBinding {
                        provider: Arc::clone(provider),
                        settings: role.default_settings(),
                    },
                )
            })
            .collect();
        Self {
            roles,
            retry: RetryPolicy::default(),
        }
    }

    /// This router with another retry policy (tests shorten the delays; the default is the
    /// seed's).
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The retry policy every call follows.
    pub fn retry(&self) -> RetryPolicy {
        self.retry
    }

    /// Applies every role's `LLM_<ROLE>_*` overrides (see [`RoleSettings::with_env`]).
    pub fn apply_env(&mut self, env: impl Fn(&str) -> Option<String>) -> Result<(), String> {
        for (role, binding) in &mut self.roles {
            binding.settings = binding.settings.with_env(*role, &env)?;
        }
        Ok(())
    }

    /// Replaces one role's binding.
    pub fn set(&mut self, role: Role, binding: RoleBinding) {
        self.roles.insert(role, binding);
    }

    pub fn binding(&self, role: Role) -> Result<&RoleBinding, LlmError> {
        self.roles.get(&role).ok_or(LlmError::NoProvider(role))
    }

    /// Whether `role` is bound to a provider without a model (`--provider none`): the
    /// pipeline then does that role's work itself (template questions, offline
    /// understanding) instead of calling it. A role with no binding at all is not modelless;
    /// calling it is a configuration error ([`LlmError::NoProvider`]).
    pub fn is_modelless(&self, role: Role) -> bool {
        self.roles
            .get(&role)
            .is_some_and(|b| b.provider.is_modelless())
    }

    /// A request for `role` with its configured limits; `temperature` overrides the role's
    /// when the prompt asks for its own (the opening question's 0.9).
    pub fn request(
        &self,
        role: Role,
        system: String,
        user: String,
        temperature: Option<f32>,
        turn: u32,
    ) -> Result<LlmRequest, LlmError> {
        let settings = self.binding(role)?.settings;
        Ok(LlmRequest {
            role,
            system,
            user,
            temperature: temperature.unwrap_or(settings.temperature),
            max_tokens: settings.max_tokens,
            turn,
            schema: None,
        })
    }

    /// Sends a request to its role's provider. Each attempt is bounded by the role's timeout;
    /// timeouts and rate limits are retried as the [`RetryPolicy`] says. The response (or
    /// error) counts every attempt, and its latency covers the whole call, backoff included.
    pub async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let binding = self.binding(request.role)?;
        retry::call(binding, self.retry, request, || {
            retry::complete_attempt(binding, request)
        })
        .await
    }

    /// Streams a request's answer to `deltas`, with the timeout and retries of
    /// [`LlmRouter::complete`]. An attempt that already streamed text is not retried, so the
    /// caller never sees the start of an answer twice.
    pub async fn stream(
        &self,
        request: &LlmRequest,
        deltas: DeltaSink,
    ) -> Result<LlmResponse, LlmError> {
        let binding = self.binding(request.role)?;
        retry::call(binding, self.retry, request, || {
            retry::stream_attempt(binding, request, &deltas)
        })
        .await
    }

    /// Cost of a call in USD, when the role's provider publishes prices.
    pub fn cost(&self, role: Role, tokens_in: u64, tokens_out: u64) -> Option<f64> {
        let (p_in, p_out) = self.binding(role).ok()?.provider.pricing()?;
        Some((tokens_in as f64 * p_in + tokens_out as f64 * p_out) / 1_000_000.0)
    }
}

/// A rough token count for providers that report none: one token per four characters, at
/// least one per non-empty text. Used by the scripted provider, and by OpenAI-compatible
/// servers that report no usage, so usage rows are not all zero.
pub fn estimate_tokens(text: &str) -> u64 {
    let chars = text.chars().count() as u64;
    if chars == 0 { 0 } else { chars.div_ceil(4) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn role_settings_take_environment_overrides() {
        let base = Role::Extraction.default_settings();
        let got = base
            .with_env(
                Role::Extraction,
                env(&[
                    ("LLM_EXTRACTION_TEMPERATURE", "0.1"),
                    ("LLM_EXTRACTION_TIMEOUT", "60"),
                    ("LLM_QUESTION_GENERATION_MAX_TOKENS", "9"),
                ]),
            )
            .unwrap();
        assert_eq!(got.temperature, 0.1);
        assert_eq!(got.timeout, Duration::from_secs(60));
        assert_eq!(got.max_tokens, base.max_tokens, "another role's variable");
    }

    #[test]
    fn malformed_overrides_name_the_variable() {
        let base = Role::SignalScoring.default_settings();
        for (var, value) in [
            ("LLM_SIGNAL_SCORING_TEMPERATURE", "hot"),
            ("LLM_SIGNAL_SCORING_TEMPERATURE", "3"),
            ("LLM_SIGNAL_SCORING_MAX_TOKENS", "0"),
            ("LLM_SIGNAL_SCORING_TIMEOUT", "-1"),
        ] {
            let err = base
                .with_env(Role::SignalScoring, env(&[(var, value)]))
                .unwrap_err();
            assert!(err.starts_with(var), "{err}");
        }
    }
}
