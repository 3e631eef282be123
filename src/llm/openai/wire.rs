//! The chat completions JSON: the request body, the non-streaming response, and the decoder
//! of streamed chunks. Nothing here leaves the OpenAI-compatible adapter.

use serde::{Deserialize, Serialize};

use crate::llm::http::{Tokens, error_message};
use crate::llm::{LlmError, LlmRequest};

/// The data line that ends an `OpenAI` stream.
const DONE: &str = "[DONE]";

/// `POST /chat/completions` body.
#[derive(Debug, Serialize)]
pub(super) struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<ChatMessage<'a>>,
    temperature: f32,
    max_tokens: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Debug, Serialize)]
struct ChatMessage<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl<'a> ChatRequest<'a> {
    pub(super) fn new(
        model: &'a str,
        request: &'a LlmRequest,
        stream: bool,
        include_usage: bool,
    ) -> Self {
        let mut messages = Vec::with_capacity(2);
        if !request.system.is_empty() {
            messages.push(ChatMessage {
                role: "system",
                content: &request.system,
            });
        }
        messages.push(ChatMessage {
            role: "user",
            content: &request.user,
        });
        Self {
            model,
            messages,
            temperature: request.temperature,
            max_tokens: request.max_tokens,
            stream,
            stream_options: (stream && include_usage).then_some(StreamOptions {
                include_usage: true,
            }),
        }
    }
}

/// A non-streaming response (or a 200 body that carries an `error` instead).
#[derive(Debug, Deserialize)]
pub(super) struct ChatResponse {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Debug, Deserialize)]
struct ChoiceMessage {
    /// `null` when the model answered with tool calls or a refusal only.
    #[serde(default)]
    content: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

impl ChatResponse {
    /// The first choice's text and the usage.
    pub(super) fn into_text(self, provider: &str) -> Result<(String, Tokens), LlmError> {
        if let Some(error) = self.error.filter(|e| !e.is_null()) {
            return Err(reported(provider, &error));
        }
        let choices = self
            .choices
            .ok_or_else(|| LlmError::malformed(provider, "the body has no `choices`".to_owned()))?;
        let text = choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .unwrap_or_default();
        if text.trim().is_empty() {
            return Err(LlmError::empty(provider));
        }
        let usage = self.usage.unwrap_or_default();
        Ok((text, (usage.prompt_tokens, usage.completion_tokens)))
    }
}

/// One streamed chunk.
#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Option<ChunkDelta>,
    /// Set on the choice's last chunk (`stop`, `length`, …).
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ChunkDelta {
    #[serde(default)]
    content: Option<String>,
}

/// Folds the chunks of one streamed completion into its text and usage.
#[derive(Debug, Default)]
pub(super) struct StreamDecoder {
    text: String,
    tokens: Tokens,
    done: bool,
    /// Whether a chunk carried a `finish_reason`: the reply is complete even if `[DONE]`
    /// never comes.
    finished_choice: bool,
}

impl StreamDecoder {
    /// Takes one event's data; returns text to forward, if the chunk carried any. An `error`
    /// object becomes the provider's error.
    pub(super) fn on_event(
        &mut self,
        provider: &str,
        data: &str,
    ) -> Result<Option<String>, LlmError> {
        if data.trim() == DONE {
            self.done = true;
            return Ok(None);
        }
        let chunk: Chunk = serde_json::from_str(data)
            .map_err(|e| LlmError::malformed(provider, format!("unreadable stream chunk ({e})")))?;
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            return Err(reported(provider, &error));
        }
        if let Some(usage) = chunk.usage {
            self.tokens = (
                usage.prompt_tokens.or(self.tokens.0),
                usage.completion_tokens.or(self.tokens.1),
            );
        }
        let choice = chunk.choices.into_iter().next();
        if choice.as_ref().is_some_and(|c| c.finish_reason.is_some()) {
            self.finished_choice = true;
        }
        let text = choice
            .and_then(|c| c.delta)
            .and_then(|d| d.content)
            .filter(|t| !t.is_empty());
        if let Some(t) = &text {
            self.text.push_str(t);
        }
        Ok(text)
    }

    /// Whether `[DONE]` has arrived.
    pub(super) fn finished(&self) -> bool {
        self.done
    }

    /// The whole text and usage. A stream that closed before `[DONE]` is accepted only when a
    /// chunk gave the reply's `finish_reason` (some compatible servers close the connection
    /// right after it); otherwise the reply may be cut mid-sentence, and it is an error, as a
    /// cut Anthropic stream is.
    pub(super) fn into_text(self, provider: &str) -> Result<(String, Tokens), LlmError> {
        if !self.done && !self.finished_choice {
            return Err(LlmError::malformed(
                provider,
                format!(
                    "the stream ended before [DONE] and without a finish_reason after {} \
                     characters of text (the reply may be cut)",
                    self.text.chars().count()
                ),
            ));
        }
        if self.text.trim().is_empty() {
            return Err(LlmError::empty(provider));
        }
        Ok((self.text, self.tokens))
    }
}

fn reported(provider: &str, error: &serde_json::Value) -> LlmError {
    let message = error_message(error).unwrap_or_else(|| error.to_string());
    // Shortened later, after redaction (`LlmError::scrubbed`).
    LlmError::reported(provider, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(events: &[&str]) -> (Vec<String>, bool, Result<(String, Tokens), LlmError>) {
        let mut decoder = StreamDecoder::default();
        let mut deltas = Vec::new();
        for data in events {
            match decoder.on_event("kimi", data) {
                Ok(Some(d)) => deltas.push(d),
                Ok(None) => {}
                Err(e) => return (deltas, false, Err(e)),
            }
        }
        let done = decoder.finished();
        (deltas, done, decoder.into_text("kimi"))
    }

    #[test]
    fn chunks_fold_into_text_and_the_final_usage() {
        let (deltas, done, result) = decode(&[
            r#"{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":"Why"}}]}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":" oat?"},"finish_reason":"stop"}]}"#,
            r#"{"id":"c","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#,
            "[DONE]",
        ]);
        assert_eq!(deltas, ["Why", " oat?"]);
        assert!(done);
        assert_eq!(
            result.unwrap(),
            ("Why oat?".to_owned(), (Some(12), Some(3)))
        );
    }

    #[test]
    fn streams_without_done_or_with_errors() {
        // Closed after the finish_reason but before [DONE]: complete.
        let (_, done, result) = decode(&[
            r#"{"choices":[{"delta":{"content":"Hi"}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        ]);
        assert!(!done);
        assert_eq!(result.unwrap(), ("Hi".to_owned(), (None, None)));
        // Closed mid-reply: the cut question is not taken for a whole one.
        let (_, _, result) = decode(&[r#"{"choices":[{"delta":{"content":"Q3: why does"}}]}"#]);
        let err = result.unwrap_err();
        assert!(matches!(err, LlmError::MalformedResponse { .. }), "{err:?}");
        assert!(
            err.to_string()
                .contains("ended before [DONE] and without a finish_reason after 12 characters"),
            "{err}"
        );
        let (_, _, result) = decode(&[]);
        assert!(matches!(result, Err(LlmError::MalformedResponse { .. })));
        let (_, _, result) = decode(&["[DONE]"]);
        assert!(matches!(result, Err(LlmError::EmptyResponse { .. })));
        let (_, _, result) =
            decode(&[r#"{"error":{"message":"server overloaded","type":"server_error"}}"#]);
        assert_eq!(
            result.unwrap_err().to_string(),
            "kimi: the provider reported an error: server_error: server overloaded"
        );
    }

    #[test]
    fn bodies_give_text_or_typed_errors() {
        let ok: ChatResponse = serde_json::from_str(
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}"#,
        )
        .unwrap();
        assert_eq!(
            ok.into_text("openai").unwrap(),
            ("Hello".to_owned(), (Some(5), Some(1)))
        );
        let null: ChatResponse =
            serde_json::from_str(r#"{"choices":[{"message":{"content":null}}]}"#).unwrap();
        assert!(matches!(
            null.into_text("openai"),
            Err(LlmError::EmptyResponse { .. })
        ));
        let error: ChatResponse =
            serde_json::from_str(r#"{"error":{"message":"bad model"}}"#).unwrap();
        assert!(matches!(
            error.into_text("openai"),
            Err(LlmError::ProviderError { ref message, .. }) if message == "bad model"
        ));
    }

    #[test]
    fn the_request_body_has_system_only_when_set() {
        let mut request = LlmRequest {
            role: crate::llm::Role::SignalScoring,
            system: String::new(),
            user: "rate".into(),
            temperature: 0.3,
            max_tokens: 512,
            turn: 1,
            schema: None,
        };
        let body = serde_json::to_value(ChatRequest::new("k2", &request, false, true)).unwrap();
        assert_eq!(body["messages"].as_array().unwrap().len(), 1);
        assert!(body.get("stream_options").is_none());
        request.system = "be brief".into();
        let body = serde_json::to_value(ChatRequest::new("k2", &request, true, true)).unwrap();
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["stream_options"]["include_usage"], true);
        let body = serde_json::to_value(ChatRequest::new("k2", &request, true, false)).unwrap();
        assert!(body.get("stream_options").is_none());
    }
}
