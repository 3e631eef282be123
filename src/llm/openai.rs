//! The OpenAI-compatible provider: chat completions (`POST {base_url}/chat/completions`) for
//! `OpenAI`, Kimi, `DeepSeek` and local servers (Ollama, `llama.cpp`, vLLM), streaming and not.
//!
//! One call is one attempt; the router retries. The name recorded in usage rows comes from
//! the configuration (`kimi`, `ollama`, ...), since one adapter serves them all. Requests send
//! `max_tokens`, which every compatible server reads; `OpenAI`'s reasoning models, which want
//! `max_completion_tokens` instead, are not supported. Tools and JSON mode are not used.

mod wire;

use std::time::Instant;

use futures::StreamExt;
use futures::future::BoxFuture;
use reqwest::Url;

use super::{ApiKey, DeltaSink, LlmError, LlmProvider, LlmRequest, LlmResponse, http};
use wire::{ChatRequest, ChatResponse, StreamDecoder};

/// Where and how to reach an OpenAI-compatible server.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// The provider name recorded in usage rows: `openai`, `kimi`, `deepseek`, `ollama` or
    /// `openai-compatible`.
    pub name: String,
    /// The API root, including `/v1` where the service needs it
    /// (`https://api.openai.com/v1`, `http://localhost:11434/v1`).
    pub base_url: String,
    /// Sent as `Authorization: Bearer`; local servers need none.
    pub api_key: Option<ApiKey>,
    pub model: String,
    /// Whether to ask for `stream_options.include_usage` (servers that reject it get `false`).
    pub include_usage: bool,
    /// USD per million tokens (input, output), when known.
    pub pricing: Option<(f64, f64)>,
}

/// A model behind an OpenAI-compatible chat completions endpoint.
#[derive(Debug)]
pub struct OpenAiProvider {
    client: reqwest::Client,
    url: Url,
    name: String,
    key: Option<ApiKey>,
    model: String,
    include_usage: bool,
    pricing: Option<(f64, f64)>,
}

impl OpenAiProvider {
    /// A provider for `config`; fails on an unusable name, base URL or model.
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let name = config.name.trim().to_owned();
        if name.is_empty() {
            return Err(LlmError::config(
                "openai-compatible",
                "the provider name is empty",
            ));
        }
        let url = http::endpoint(&name, &config.base_url, "/chat/completions")?;
        let model = config.model.trim().to_owned();
        if model.is_empty() {
            return Err(LlmError::config(&name, "no model is set"));
        }
        if let Some(key) = &config.api_key
            && reqwest::header::HeaderValue::from_str(key.expose()).is_err()
        {
            return Err(LlmError::config(
                &name,
                "the API key has characters an HTTP header cannot carry",
            ));
        }
        Ok(Self {
            client: http::client(&name)?,
            url,
            key: config.api_key,
            name,
            model,
            include_usage: config.include_usage,
            pricing: config.pricing,
        })
    }

    async fn post(
        &self,
        request: &LlmRequest,
        stream: bool,
    ) -> Result<reqwest::Response, LlmError> {
        let body = ChatRequest::new(&self.model, request, stream, self.include_usage);
        let mut builder = self.client.post(self.url.clone()).json(&body);
        if let Some(key) = &self.key {
            // `bearer_auth` marks the header sensitive.
            builder = builder.bearer_auth(key.expose());
        }
        http::send(&self.name, self.key.as_ref(), builder).await
    }

    fn response(
        &self,
        text: String,
        tokens: http::Tokens,
        request: &LlmRequest,
        started: Instant,
    ) -> LlmResponse {
        let (tokens_in, tokens_out) = http::tokens_or_estimate(tokens, request, &text);
        LlmResponse {
            text,
            provider: self.name.clone(),
            model: self.model.clone(),
            tokens_in,
            tokens_out,
            latency: started.elapsed(),
            attempts: 1,
        }
    }

    async fn complete_once(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let started = Instant::now();
        let response = self.post(request, false).await?;
        let body: ChatResponse = http::read_json(&self.name, self.key.as_ref(), response).await?;
        let (text, tokens) = body.into_text(&self.name)?;
        Ok(self.response(text, tokens, request, started))
    }

    async fn stream_once(
        &self,
        request: &LlmRequest,
        deltas: DeltaSink,
    ) -> Result<LlmResponse, LlmError> {
        let started = Instant::now();
        let response = self.post(request, true).await?;
        if !http::is_event_stream(&response) {
            // A server that ignored `stream: true`: take the whole answer as one delta.
            let body: ChatResponse =
                http::read_json(&self.name, self.key.as_ref(), response).await?;
            let (text, tokens) = body.into_text(&self.name)?;
            let _ = deltas.send(text.clone());
            return Ok(self.response(text, tokens, request, started));
        }
        let mut events = std::pin::pin!(http::events(&self.name, response));
        let mut decoder = StreamDecoder::default();
        while let Some(event) = events.next().await {
            if let Some(delta) = decoder.on_event(&self.name, &event?.data)? {
                // A closed receiver only means nobody is watching; the answer still counts.
                let _ = deltas.send(delta);
            }
            if decoder.finished() {
                break;
            }
        }
        let (text, tokens) = decoder.into_text(&self.name)?;
        Ok(self.response(text, tokens, request, started))
    }
}

impl LlmProvider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
        // Every error leaves the provider scrubbed (`crate::llm::scrub`), whatever made it.
        Box::pin(async move {
            self.complete_once(request)
                .await
                .map_err(|e| e.scrubbed(self.key.as_ref()))
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a LlmRequest,
        deltas: DeltaSink,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
        Box::pin(async move {
            self.stream_once(request, deltas)
                .await
                .map_err(|e| e.scrubbed(self.key.as_ref()))
        })
    }

    fn pricing(&self) -> Option<(f64, f64)> {
        self.pricing
    }
}
