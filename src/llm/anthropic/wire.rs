//! The Messages API's JSON: the request body, the non-streaming response, and the decoder of
//! its server-sent events. Nothing here leaves the Anthropic adapter.

use serde::{Deserialize, Serialize};

use crate::llm::http::{Tokens, error_message};
use crate::llm::{LlmError, LlmRequest};

/// `POST /v1/messages` body.
#[derive(Debug, Serialize)]
pub(super) struct MessagesRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    temperature: f32,
    #[serde(skip_serializing_if = "str::is_empty")]
    system: &'a str,
    messages: [Message<'a>; 1],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<OutputConfig<'a>>,
}

#[derive(Debug, Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Debug, Serialize)]
struct OutputConfig<'a> {
    effort: &'a str,
}

impl<'a> MessagesRequest<'a> {
    pub(super) fn new(
        model: &'a str,
        effort: Option<&'a str>,
        request: &'a LlmRequest,
        stream: bool,
    ) -> Self {
        Self {
            model,
            max_tokens: request.max_tokens,
            temperature: request.temperature,
            system: request.system.as_str(),
            messages: [Message {
                role: "user",
                content: request.user.as_str(),
            }],
            stream,
            output_config: effort.map(|effort| OutputConfig { effort }),
        }
    }
}

/// A non-streaming response.
#[derive(Debug, Deserialize)]
pub(super) struct MessagesResponse {
    content: Vec<ContentBlock>,
    #[serde(default)]
    usage: Option<Usage>,
}

impl MessagesResponse {
    /// The text of the text blocks, and the usage.
    pub(super) fn into_text(self, provider: &str) -> Result<(String, Tokens), LlmError> {
        let text: String = self
            .content
            .into_iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text),
                ContentBlock::Other => None,
            })
            .collect();
        if text.trim().is_empty() {
            return Err(LlmError::empty(provider));
        }
        let usage = self.usage.unwrap_or_default();
        Ok((text, (usage.input(), usage.output_tokens)))
    }
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentBlock {
    Text {
        text: String,
    },
    /// Thinking, tool use and any block type added later: no answer text.
    #[serde(other)]
    Other,
}

// The field names are the API's.
#[allow(clippy::struct_field_names)]
#[derive(Debug, Default, Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl Usage {
    /// All prompt tokens: the uncached ones plus any cache writes and reads (none while no
    /// request sets `cache_control`, which this adapter never does).
    fn input(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }
}

/// One server-sent event's data, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: StartedMessage,
    },
    ContentBlockStart {
        content_block: ContentBlock,
    },
    ContentBlockDelta {
        delta: Delta,
    },
    MessageDelta {
        #[serde(default)]
        usage: Option<Usage>,
    },
    MessageStop,
    Error {
        error: serde_json::Value,
    },
    /// `ping`, `content_block_stop` and event types added later.
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct StartedMessage {
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    TextDelta {
        text: String,
    },
    /// Thinking, signature and tool-input deltas.
    #[serde(other)]
    Other,
}

/// Folds the events of one streamed message into its text and usage.
#[derive(Debug, Default)]
pub(super) struct StreamDecoder {
    text: String,
    tokens_in: Option<u64>,
    tokens_out: Option<u64>,
    stopped: bool,
}

impl StreamDecoder {
    /// Takes one event's data; returns text to forward, if the event carried any. An `error`
    /// event becomes the provider's error.
    pub(super) fn on_event(
        &mut self,
        provider: &str,
        data: &str,
    ) -> Result<Option<String>, LlmError> {
        let event: StreamEvent = serde_json::from_str(data)
            .map_err(|e| LlmError::malformed(provider, format!("unreadable stream event ({e})")))?;
        let text = match event {
            StreamEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.tokens_in = usage.input().or(self.tokens_in);
                    self.tokens_out = usage.output_tokens.or(self.tokens_out);
                }
                None
            }
            StreamEvent::ContentBlockStart {
                content_block: ContentBlock::Text { text },
            }
            | StreamEvent::ContentBlockDelta {
                delta: Delta::TextDelta { text },
            } => Some(text).filter(|t| !t.is_empty()),
            StreamEvent::MessageDelta { usage: Some(usage) } => {
                // Counts here are cumulative for the message.
                self.tokens_out = usage.output_tokens.or(self.tokens_out);
                self.tokens_in = usage.input().filter(|n| *n > 0).or(self.tokens_in);
                None
            }
            StreamEvent::MessageStop => {
                self.stopped = true;
                None
            }
            StreamEvent::Error { error } => {
                let message = error_message(&error)
                    .unwrap_or_else(|| "an error event without a message".to_owned());
                return Err(LlmError::reported(provider, message));
            }
            StreamEvent::ContentBlockStart { .. }
            | StreamEvent::ContentBlockDelta { .. }
            | StreamEvent::MessageDelta { usage: None }
            | StreamEvent::Other => None,
        };
        if let Some(t) = &text {
            self.text.push_str(t);
        }
        Ok(text)
    }

    /// Whether `message_stop` has arrived.
    pub(super) fn finished(&self) -> bool {
        self.stopped
    }

    /// The whole text and usage; a stream cut before `message_stop` is an error (the answer
    /// may be incomplete), as is one without text.
    pub(super) fn into_text(self, provider: &str) -> Result<(String, Tokens), LlmError> {
        if !self.stopped {
            return Err(LlmError::malformed(
                provider,
                format!(
                    "the stream ended before message_stop after {} characters of text",
                    self.text.chars().count()
                ),
            ));
        }
        if self.text.trim().is_empty() {
            return Err(LlmError::empty(provider));
        }
        Ok((self.text, (self.tokens_in, self.tokens_out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(events: &[&str]) -> (Vec<String>, Result<(String, Tokens), LlmError>) {
        let mut decoder = StreamDecoder::default();
        let mut deltas = Vec::new();
        for data in events {
            match decoder.on_event("anthropic", data) {
                Ok(Some(d)) => deltas.push(d),
                Ok(None) => {}
                Err(e) => return (deltas, Err(e)),
            }
        }
        (deltas, decoder.into_text("anthropic"))
    }

    #[test]
    fn a_stream_folds_into_text_and_usage() {
        let (deltas, result) = decode(&[
            r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":25,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert_eq!(deltas, ["Hello", " there"]);
        assert_eq!(
            result.unwrap(),
            ("Hello there".to_owned(), (Some(25), Some(15)))
        );
    }

    #[test]
    fn error_events_and_cut_streams_are_errors() {
        let (_, result) = decode(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":3}}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ]);
        assert_eq!(
            result.unwrap_err().to_string(),
            "anthropic: the provider reported an error: overloaded_error: Overloaded"
        );
        let (deltas, result) = decode(&[
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hal"}}"#,
        ]);
        assert_eq!(deltas, ["Hal"]);
        assert!(
            matches!(result, Err(LlmError::MalformedResponse { ref message, .. }) if message.contains("before message_stop")),
            "{result:?}"
        );
        let (_, result) = decode(&["not json"]);
        assert!(matches!(result, Err(LlmError::MalformedResponse { .. })));
        let (_, result) = decode(&[r#"{"type":"message_stop"}"#]);
        assert!(matches!(result, Err(LlmError::EmptyResponse { .. })));
    }

    #[test]
    fn the_request_body_omits_what_is_unset() {
        let request = LlmRequest {
            role: crate::llm::Role::Extraction,
            system: String::new(),
            user: "hi".into(),
            temperature: 0.3,
            max_tokens: 64,
            turn: 1,
            schema: None,
        };
        let body = serde_json::to_value(MessagesRequest::new("m", None, &request, false)).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"model": "m", "max_tokens": 64, "temperature": 0.3_f32,
                "messages": [{"role": "user", "content": "hi"}]})
        );
        let body =
            serde_json::to_value(MessagesRequest::new("m", Some("low"), &request, true)).unwrap();
        assert_eq!(body["output_config"]["effort"], "low");
        assert_eq!(body["stream"], true);
    }
}
