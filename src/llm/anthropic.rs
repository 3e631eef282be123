//! The Anthropic provider: Claude models through the Messages API (`POST /v1/messages`),
//! streaming (server-sent events) and not.
//!
//! One call is one attempt; the router retries. `effort` is sent as
//! `output_config: {"effort": ...}`, the field the current Messages API documents (generally
//! available, no beta header; accepted by Claude Sonnet 4.6 and the Opus 4.5/4.6 models).
//! Extended thinking, tools and prompt caching are not used.

mod wire;

use std::time::Instant;

use futures::StreamExt;
use futures::future::BoxFuture;
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

use super::{ApiKey, DeltaSink, LlmError, LlmProvider, LlmRequest, LlmResponse, http};
use wire::{MessagesRequest, MessagesResponse, StreamDecoder};

/// The provider name recorded in usage rows.
const NAME: &str = "anthropic";

/// The API version every request declares.
const API_VERSION: &str = "2023-06-01";

/// Where and how to reach Anthropic.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// The API root without `/v1` (normally [`AnthropicConfig::DEFAULT_BASE_URL`]).
    pub base_url: String,
    pub api_key: ApiKey,
    pub model: String,
    /// `low`, `medium`, `high` or `max`, for models that accept it; `None` sends nothing.
    pub effort: Option<String>,
    /// USD per million tokens (input, output), when known.
    pub pricing: Option<(f64, f64)>,
}

impl AnthropicConfig {
    /// The public API.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";
}

/// Claude through the Messages API.
#[derive(Debug)]
pub struct AnthropicProvider {
    client: reqwest::Client,
    url: Url,
    /// `x-api-key`, `anthropic-version` and the content type, built once; the key's value is
    /// marked sensitive so no header dump shows it.
    headers: HeaderMap,
    key: ApiKey,
    model: String,
    effort: Option<String>,
    pricing: Option<(f64, f64)>,
}

impl AnthropicProvider {
    /// A provider for `config`; fails on an unusable base URL, model, effort or key.
    pub fn new(config: AnthropicConfig) -> Result<Self, LlmError> {
        let url = http::endpoint(NAME, &config.base_url, "/v1/messages")?;
        let model = config.model.trim().to_owned();
        if model.is_empty() {
            return Err(LlmError::config(NAME, "no model is set"));
        }
        let effort = match config.effort.as_deref().map(str::trim) {
            None => None,
            Some("") => return Err(LlmError::config(NAME, "effort is empty")),
            Some(e) => Some(e.to_owned()),
        };
        let mut key = HeaderValue::from_str(config.api_key.expose()).map_err(|_| {
            LlmError::config(
                NAME,
                "the API key has characters an HTTP header cannot carry",
            )
        })?;
        key.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", key);
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(Self {
            client: http::client(NAME)?,
            url,
            headers,
            key: config.api_key,
            model,
            effort,
            pricing: config.pricing,
        })
    }

    async fn post(
        &self,
        request: &LlmRequest,
        stream: bool,
    ) -> Result<reqwest::Response, LlmError> {
        let body = MessagesRequest::new(&self.model, self.effort.as_deref(), request, stream);
        let builder = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .json(&body);
        http::send(NAME, Some(&self.key), builder).await
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
            provider: NAME.to_owned(),
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
        let body: MessagesResponse = http::read_json(NAME, Some(&self.key), response).await?;
        let (text, tokens) = body.into_text(NAME)?;
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
            // A gateway that ignored `stream: true`: take the whole answer as one delta.
            let body: MessagesResponse = http::read_json(NAME, Some(&self.key), response).await?;
            let (text, tokens) = body.into_text(NAME)?;
            let _ = deltas.send(text.clone());
            return Ok(self.response(text, tokens, request, started));
        }
        let mut events = std::pin::pin!(http::events(NAME, response));
        let mut decoder = StreamDecoder::default();
        while let Some(event) = events.next().await {
            if let Some(delta) = decoder.on_event(NAME, &event?.data)? {
                // A closed receiver only means nobody is watching; the answer still counts.
                let _ = deltas.send(delta);
            }
            if decoder.finished() {
                break;
            }
        }
        let (text, tokens) = decoder.into_text(NAME)?;
        Ok(self.response(text, tokens, request, started))
    }
}

impl LlmProvider for AnthropicProvider {
    fn name(&self) -> &str {
        NAME
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
                .map_err(|e| e.scrubbed(Some(&self.key)))
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
                .map_err(|e| e.scrubbed(Some(&self.key)))
        })
    }

    fn pricing(&self) -> Option<(f64, f64)> {
        self.pricing
    }
}
