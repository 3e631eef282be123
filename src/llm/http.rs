//! Shared HTTP plumbing for the hosted providers: one `reqwest` client for the process, the
//! request/response round trip with status mapping, JSON bodies and server-sent events.
//!
//! This layer makes exactly one attempt; timeouts and retries belong to the router. Error
//! messages carry the provider's own explanation, never request headers (where the keys are).

mod status;

use std::sync::OnceLock;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::{RequestBuilder, Response, Url};
use serde::de::DeserializeOwned;

use super::{ApiKey, LlmError, LlmRequest, estimate_tokens};

pub(crate) use status::{error_message, truncate};

/// Time allowed to open a connection. The role's timeout bounds the whole attempt; this one
/// only makes an unreachable host fail as a timeout well before that.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest body excerpt quoted in a malformed-response error (characters).
const SNIPPET_CHARS: usize = 120;

static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();

/// The process-wide client (connection pool, TLS set-up), built on first use.
pub(crate) fn client(provider: &str) -> Result<reqwest::Client, LlmError> {
    if let Some(client) = CLIENT.get() {
        return Ok(client.clone());
    }
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("interviewer/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| LlmError::config(provider, format!("cannot build the HTTP client: {e}")))?;
    // Two first calls may race; either client works and the loser is dropped.
    Ok(CLIENT.get_or_init(|| client).clone())
}

/// `base_url` (trailing slashes ignored) joined with `path`, checked to be an http(s) URL.
pub(crate) fn endpoint(provider: &str, base_url: &str, path: &str) -> Result<Url, LlmError> {
    let base = base_url.trim().trim_end_matches('/');
    let url = Url::parse(&format!("{base}{path}")).map_err(|e| {
        LlmError::config(
            provider,
            format!("base URL '{base_url}' is not a valid URL: {e}"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(LlmError::config(
            provider,
            format!("base URL '{base_url}' must start with http:// or https://"),
        ));
    }
    Ok(url)
}

/// Sends `request`; a 2xx response is returned for its body to be read, anything else
/// becomes a typed error (429 → rate limited with its `retry-after`; other statuses → HTTP
/// error with the provider's message, with `key` redacted from it).
pub(crate) async fn send(
    provider: &str,
    key: Option<&ApiKey>,
    request: RequestBuilder,
) -> Result<Response, LlmError> {
    let response = request
        .send()
        .await
        .map_err(|e| transport_error(provider, &e))?;
    if response.status().is_success() {
        Ok(response)
    } else {
        Err(status::error_for_status(provider, key, response).await)
    }
}

/// The whole body parsed as `T`; a body that is not the expected JSON is a malformed
/// response quoting what serde found wrong and how the body starts.
pub(crate) async fn read_json<T: DeserializeOwned>(
    provider: &str,
    key: Option<&ApiKey>,
    response: Response,
) -> Result<T, LlmError> {
    let body = response
        .text()
        .await
        .map_err(|e| transport_error(provider, &e))?;
    parse_json(provider, key, &body)
}

/// `body` parsed as `T`, or a malformed-response error quoting the body's start, redacted
/// before it is cut.
pub(crate) fn parse_json<T: DeserializeOwned>(
    provider: &str,
    key: Option<&ApiKey>,
    body: &str,
) -> Result<T, LlmError> {
    serde_json::from_str(body).map_err(|e| {
        let start = truncate(
            super::scrub::redact(body.trim(), key).as_str(),
            SNIPPET_CHARS,
        );
        LlmError::malformed(
            provider,
            format!("expected the API's JSON ({e}); the body starts: {start:?}"),
        )
    })
}

/// Whether the response is a server-sent event stream (some OpenAI-compatible servers answer
/// a streaming request with one JSON body instead).
pub(crate) fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

/// The response body as server-sent events.
pub(crate) fn events(
    provider: &str,
    response: Response,
) -> impl Stream<Item = Result<Event, LlmError>> + Send + use<> {
    let provider = provider.to_owned();
    response.bytes_stream().eventsource().map(move |item| {
        item.map_err(|e| match e {
            EventStreamError::Transport(e) => transport_error(&provider, &e),
            EventStreamError::Utf8(e) => {
                LlmError::malformed(&provider, format!("the event stream is not UTF-8: {e}"))
            }
            EventStreamError::Parser(e) => {
                LlmError::malformed(&provider, format!("invalid server-sent event: {e}"))
            }
        })
    })
}

/// Token counts as a provider reported them: (input, output).
pub(crate) type Tokens = (Option<u64>, Option<u64>);

/// The reported counts, with [`estimate_tokens`] standing in for any the server left out
/// (Ollama and some OpenAI-compatible servers send no usage when streaming). The estimate is
/// logged at debug level; usage rows do not mark it.
pub(crate) fn tokens_or_estimate(tokens: Tokens, request: &LlmRequest, text: &str) -> (u64, u64) {
    let (reported_in, reported_out) = tokens;
    if reported_in.is_none() || reported_out.is_none() {
        tracing::debug!(
            target: super::LOG_TARGET,
            role = request.role.as_str(),
            turn = request.turn,
            input_reported = reported_in.is_some(),
            output_reported = reported_out.is_some(),
            "llm_usage_estimated"
        );
    }
    (
        reported_in
            .unwrap_or_else(|| estimate_tokens(&request.system) + estimate_tokens(&request.user)),
        reported_out.unwrap_or_else(|| estimate_tokens(text)),
    )
}

/// A `reqwest` failure: a timeout (connecting took too long) or a connection error with its
/// cause chain ("connection refused", ...).
fn transport_error(provider: &str, error: &reqwest::Error) -> LlmError {
    if error.is_timeout() {
        return LlmError::Timeout {
            provider: provider.to_owned(),
            timeout: CONNECT_TIMEOUT,
            attempts: 1,
            elapsed: CONNECT_TIMEOUT,
        };
    }
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    LlmError::connection(provider, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_join_and_reject_bad_bases() {
        let url = endpoint("openai", "http://127.0.0.1:11434/v1/", "/chat/completions").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:11434/v1/chat/completions");
        let err = endpoint("kimi", "ftp://example.com", "/x").unwrap_err();
        assert!(err.to_string().contains("must start with http"), "{err}");
        let err = endpoint("kimi", "not a url", "/x").unwrap_err();
        assert!(err.to_string().contains("'not a url'"), "{err}");
    }

    #[test]
    fn malformed_bodies_say_what_was_wrong() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Expected {
            choices: Vec<u8>,
        }
        let err = parse_json::<Expected>("openai", None, "<html>Bad gateway</html>").unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("openai: malformed response: expected"),
            "{text}"
        );
        assert!(text.contains("<html>Bad gateway"), "{text}");
        let err = parse_json::<Expected>("openai", None, "{}").unwrap_err();
        assert!(err.to_string().contains("missing field `choices`"), "{err}");
    }
}
