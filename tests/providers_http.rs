//! The HTTP providers against fake servers on loopback: answers streamed and not, usage, the
//! request each sends, the router's retries (429, timeouts, `retry-after`), typed errors, and
//! keys that never show.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use interviewer::llm::{
    AnthropicConfig, AnthropicProvider, ApiKey, LlmError, LlmProvider, LlmRequest, LlmResponse,
    LlmRouter, OpenAiConfig, OpenAiProvider, RetryPolicy, Role, RoleBinding, RoleSettings,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-0123456789abcdef";
const SYSTEM: &str = "You extract concepts.";
const USER: &str = "The respondent said: oat milk froths well.";

/// Short delays for tests that are not about the delays.
const FAST: RetryPolicy = RetryPolicy {
    max_attempts: 2,
    base_delay: Duration::from_millis(50),
    max_retry_after: Duration::from_secs(30),
};

#[derive(Clone, Copy, Debug)]
enum Kind {
    Anthropic,
    OpenAi,
}

impl Kind {
    fn path(self) -> &'static str {
        match self {
            Self::Anthropic => "/v1/messages",
            Self::OpenAi => "/v1/chat/completions",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "kimi",
        }
    }

    fn provider(self, server: &MockServer) -> Arc<dyn LlmProvider> {
        let key = ApiKey::new(KEY).unwrap();
        match self {
            Self::Anthropic => Arc::new(
                AnthropicProvider::new(AnthropicConfig {
                    base_url: server.uri(),
                    api_key: key,
                    model: "claude-sonnet-4-6".into(),
                    effort: Some("medium".into()),
                    pricing: Some((3.0, 15.0)),
                })
                .unwrap(),
            ),
            Self::OpenAi => Arc::new(
                OpenAiProvider::new(OpenAiConfig {
                    name: "kimi".into(),
                    base_url: format!("{}/v1/", server.uri()),
                    api_key: Some(key),
                    model: "kimi-k2-0905-preview".into(),
                    include_usage: true,
                    pricing: Some((0.6, 2.5)),
                })
                .unwrap(),
            ),
        }
    }

    /// A complete non-streaming answer with usage 21 in / 7 out.
    fn ok(self, text: &str) -> ResponseTemplate {
        let body = match self {
            Self::Anthropic => json!({
                "id": "msg_1", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-6", "stop_reason": "end_turn",
                "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": 21, "output_tokens": 7}
            }),
            Self::OpenAi => json!({
                "id": "c1", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28}
            }),
        };
        ResponseTemplate::new(200).set_body_json(body)
    }

    /// A streamed answer in `pieces`, usage 21 in / 7 out.
    fn stream(self, pieces: &[&str]) -> ResponseTemplate {
        let mut body = String::new();
        let mut event = |name: &str, data: Value| {
            if !name.is_empty() {
                body.push_str(&format!("event: {name}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        };
        match self {
            Self::Anthropic => {
                event(
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "m", "type": "message",
                        "role": "assistant", "content": [], "model": "claude-sonnet-4-6",
                        "usage": {"input_tokens": 21, "output_tokens": 1}}}),
                );
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}}),
                );
                event("ping", json!({"type": "ping"}));
                for piece in pieces {
                    event(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": 0,
                            "delta": {"type": "text_delta", "text": piece}}),
                    );
                }
                event(
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                );
                event(
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                        "usage": {"output_tokens": 7}}),
                );
                event("message_stop", json!({"type": "message_stop"}));
            }
            Self::OpenAi => {
                event(
                    "",
                    json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
                );
                for piece in pieces {
                    event(
                        "",
                        json!({"choices": [{"index": 0, "delta": {"content": piece}}]}),
                    );
                }
                event(
                    "",
                    json!({"choices": [], "usage": {"prompt_tokens": 21, "completion_tokens": 7}}),
                );
                body.push_str("data: [DONE]\n\n");
            }
        }
        sse(body)
    }
}

fn sse(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// The extraction role on `provider` with temperature 0.3, 77 max tokens and `timeout`.
fn router(provider: Arc<dyn LlmProvider>, timeout: Duration, retry: RetryPolicy) -> LlmRouter {
    let mut router = LlmRouter::single(&provider).with_retry(retry);
    router.set(
        Role::Extraction,
        RoleBinding {
            provider,
            settings: RoleSettings {
                temperature: 0.3,
                max_tokens: 77,
                timeout,
            },
        },
    );
    router
}

fn request(router: &LlmRouter) -> LlmRequest {
    router
        .request(Role::Extraction, SYSTEM.into(), USER.into(), None, 3)
        .unwrap()
}

async fn server_with(mocks: Vec<Mock>) -> MockServer {
    let server = MockServer::start().await;
    for mock in mocks {
        mock.mount(&server).await;
    }
    server
}

fn once(kind: Kind, response: ResponseTemplate) -> Mock {
    Mock::given(method("POST"))
        .and(path(kind.path()))
        .respond_with(response)
        .up_to_n_times(1)
}

fn always(kind: Kind, response: ResponseTemplate) -> Mock {
    Mock::given(method("POST"))
        .and(path(kind.path()))
        .respond_with(response)
}

async fn requests(server: &MockServer) -> Vec<wiremock::Request> {
    server.received_requests().await.unwrap()
}

async fn complete(
    kind: Kind,
    server: &MockServer,
    retry: RetryPolicy,
) -> (Result<LlmResponse, LlmError>, Duration) {
    let router = router(kind.provider(server), Duration::from_secs(10), retry);
    let started = Instant::now();
    let result = router.complete(&request(&router)).await;
    (result, started.elapsed())
}

async fn answers_in_full(kind: Kind) {
    let server = server_with(vec![always(kind, kind.ok("Creamy texture."))]).await;
    let (result, _) = complete(kind, &server, FAST).await;
    let response = result.unwrap();
    assert_eq!(response.text, "Creamy texture.");
    assert_eq!((response.tokens_in, response.tokens_out), (21, 7));
    assert_eq!(response.attempts, 1);
    assert_eq!(response.provider, kind.name());

    // The request: key header, model, temperature, max tokens, system and user text.
    let received = requests(&server).await;
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    let body: Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(body["max_tokens"], 77);
    assert!(
        (body["temperature"].as_f64().unwrap() - 0.3).abs() < 1e-6,
        "{body}"
    );
    assert!(body.get("stream").is_none(), "{body}");
    let header = |name: &str| {
        sent.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    match kind {
        Kind::Anthropic => {
            assert_eq!(header("x-api-key").as_deref(), Some(KEY));
            assert_eq!(header("anthropic-version").as_deref(), Some("2023-06-01"));
            assert_eq!(body["model"], "claude-sonnet-4-6");
            assert_eq!(body["system"], SYSTEM);
            assert_eq!(body["messages"], json!([{"role": "user", "content": USER}]));
            assert_eq!(body["output_config"], json!({"effort": "medium"}));
        }
        Kind::OpenAi => {
            assert_eq!(header("authorization"), Some(format!("Bearer {KEY}")));
            assert_eq!(body["model"], "kimi-k2-0905-preview");
            assert_eq!(
                body["messages"],
                json!([{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}])
            );
        }
    }
    assert!(
        header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
}

#[tokio::test]
async fn anthropic_answers_in_full() {
    answers_in_full(Kind::Anthropic).await;
}

#[tokio::test]
async fn openai_answers_in_full() {
    answers_in_full(Kind::OpenAi).await;
}

async fn streams_deltas_in_order(kind: Kind) {
    let pieces = ["What ", "does ", "creaminess ", "do for you?"];
    let server = server_with(vec![always(kind, kind.stream(&pieces))]).await;
    let router = router(kind.provider(&server), Duration::from_secs(10), FAST);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let response = router.stream(&request(&router), tx).await.unwrap();
    let mut deltas = Vec::new();
    while let Some(d) = rx.recv().await {
        deltas.push(d);
    }
    assert_eq!(deltas, pieces);
    assert_eq!(response.text, "What does creaminess do for you?");
    assert_eq!((response.tokens_in, response.tokens_out), (21, 7));
    assert_eq!(response.attempts, 1);
    let body: Value = serde_json::from_slice(&requests(&server).await[0].body).unwrap();
    assert_eq!(body["stream"], true);
    if let Kind::OpenAi = kind {
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    }
}

#[tokio::test]
async fn anthropic_streams_deltas_in_order() {
    streams_deltas_in_order(Kind::Anthropic).await;
}

#[tokio::test]
async fn openai_streams_deltas_in_order() {
    streams_deltas_in_order(Kind::OpenAi).await;
}

async fn rate_limit_then_success(kind: Kind) {
    let server = server_with(vec![
        once(kind, ResponseTemplate::new(429)),
        always(kind, kind.ok("Second time lucky.")),
    ])
    .await;
    // The retry waits the policy's backoff (the seed's 1 s is checked on paused time in the
    // router's unit tests; this one talks to a real socket, so it keeps real time short).
    let (result, elapsed) = complete(kind, &server, FAST).await;
    let response = result.unwrap();
    assert_eq!(response.text, "Second time lucky.");
    assert_eq!(response.attempts, 2);
    assert!(
        response.latency >= FAST.base_delay,
        "{:?}",
        response.latency
    );
    assert!(elapsed >= FAST.base_delay, "{elapsed:?}");
    assert_eq!(requests(&server).await.len(), 2);
}

#[tokio::test]
async fn anthropic_rate_limit_then_success() {
    rate_limit_then_success(Kind::Anthropic).await;
}

#[tokio::test]
async fn openai_rate_limit_then_success() {
    rate_limit_then_success(Kind::OpenAi).await;
}

async fn timeout_then_success(kind: Kind) {
    let server = server_with(vec![
        once(kind, kind.ok("Too late.").set_delay(Duration::from_secs(3))),
        always(kind, kind.ok("In time.")),
    ])
    .await;
    let router = router(kind.provider(&server), Duration::from_millis(300), FAST);
    let response = router.complete(&request(&router)).await.unwrap();
    // The second reply, so the first attempt gave up on the slow one.
    assert_eq!(response.text, "In time.");
    assert_eq!(response.attempts, 2);
    // One 300 ms timeout plus the 50 ms backoff, then a prompt answer.
    assert!(
        response.latency >= Duration::from_millis(350),
        "{:?}",
        response.latency
    );
    assert_eq!(requests(&server).await.len(), 2);
}

#[tokio::test]
async fn anthropic_timeout_then_success() {
    timeout_then_success(Kind::Anthropic).await;
}

#[tokio::test]
async fn openai_timeout_then_success() {
    timeout_then_success(Kind::OpenAi).await;
}

async fn rate_limited_twice(kind: Kind) {
    let server = server_with(vec![always(kind, ResponseTemplate::new(429))]).await;
    let (result, elapsed) = complete(kind, &server, FAST).await;
    let err = result.unwrap_err();
    let LlmError::RateLimited {
        provider,
        retry_after,
        attempts,
        elapsed: recorded,
    } = &err
    else {
        panic!("expected a rate limit, got {err:?}");
    };
    assert_eq!(provider, kind.name());
    assert_eq!(*retry_after, None);
    assert_eq!(*attempts, 2);
    assert_eq!(requests(&server).await.len(), 2, "exactly two attempts");
    // The one backoff between them.
    assert!(elapsed >= FAST.base_delay, "{elapsed:?}");
    assert!(*recorded >= FAST.base_delay, "{recorded:?}");
    assert_eq!(
        err.to_string(),
        format!("{}: rate limited (HTTP 429, 2 attempts)", kind.name())
    );
}

#[tokio::test]
async fn anthropic_rate_limited_twice() {
    rate_limited_twice(Kind::Anthropic).await;
}

#[tokio::test]
async fn openai_rate_limited_twice() {
    rate_limited_twice(Kind::OpenAi).await;
}

async fn server_error_fails_at_once(kind: Kind) {
    let body = match kind {
        Kind::Anthropic => {
            json!({"type": "error", "error": {"type": "api_error", "message": "Internal boom"}})
        }
        Kind::OpenAi => json!({"error": {"message": "Internal boom", "type": "server_error"}}),
    };
    let server = server_with(vec![always(
        kind,
        ResponseTemplate::new(500).set_body_json(body),
    )])
    .await;
    let (result, _) = complete(kind, &server, RetryPolicy::default()).await;
    let err = result.unwrap_err();
    assert!(
        matches!(&err, LlmError::Http { status: 500, message, attempts: 1, .. } if message.ends_with("Internal boom")),
        "{err:?}"
    );
    assert_eq!(requests(&server).await.len(), 1, "no retry after a 500");
}

#[tokio::test]
async fn anthropic_server_error_fails_at_once() {
    server_error_fails_at_once(Kind::Anthropic).await;
}

#[tokio::test]
async fn openai_server_error_fails_at_once() {
    server_error_fails_at_once(Kind::OpenAi).await;
}

async fn malformed_body(kind: Kind) {
    let broken = ResponseTemplate::new(200).set_body_raw("{\"choices\": [tru", "application/json");
    let server = server_with(vec![always(kind, broken)]).await;
    let (result, _) = complete(kind, &server, FAST).await;
    let err = result.unwrap_err();
    let LlmError::MalformedResponse {
        message, attempts, ..
    } = &err
    else {
        panic!("expected a malformed response, got {err:?}");
    };
    assert_eq!(*attempts, 1);
    assert!(message.contains("{\\\"choices\\\": [tru"), "{message}");
    assert_eq!(requests(&server).await.len(), 1);
}

#[tokio::test]
async fn anthropic_malformed_body() {
    malformed_body(Kind::Anthropic).await;
}

#[tokio::test]
async fn openai_malformed_body() {
    malformed_body(Kind::OpenAi).await;
}

#[tokio::test]
async fn anthropic_sse_error_event_is_a_typed_error() {
    let kind = Kind::Anthropic;
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n\
                event: ping\ndata: {\"type\": \"ping\"}\n\n\
                event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let server = server_with(vec![always(kind, sse(body.to_owned()))]).await;
    let router = router(kind.provider(&server), Duration::from_secs(10), FAST);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let err = router.stream(&request(&router), tx).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::ProviderError { message, .. } if message == "overloaded_error: Overloaded"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "anthropic: the provider reported an error: overloaded_error: Overloaded"
    );
    assert_eq!(requests(&server).await.len(), 1, "not retried");
}

#[tokio::test]
async fn openai_stream_stops_at_done_and_a_cut_stream_is_an_error() {
    let kind = Kind::OpenAi;
    // Whatever follows [DONE] is never read.
    let body = "data: {\"choices\":[{\"delta\":{\"content\":\"Why \"}}]}\n\n\
                data: {\"choices\":[{\"delta\":{\"content\":\"oat?\"}}]}\n\n\
                data: [DONE]\n\n\
                data: {\"choices\": [broken\n\n";
    let server = server_with(vec![always(kind, sse(body.to_owned()))]).await;
    let done = router(kind.provider(&server), Duration::from_secs(10), FAST);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let response = done.stream(&request(&done), tx).await.unwrap();
    assert_eq!(response.text, "Why oat?");
    // No usage chunk: the counts are estimates, not zeros.
    assert!(
        response.tokens_in > 0 && response.tokens_out > 0,
        "{response:?}"
    );

    // A stream that closes after the finish_reason but before [DONE] is complete.
    let server = server_with(vec![always(
        kind,
        sse("data: {\"choices\":[{\"delta\":{\"content\":\"Whole.\"},\"finish_reason\":\"stop\"}]}\n\n"
            .to_owned()),
    )])
    .await;
    let closed = router(kind.provider(&server), Duration::from_secs(10), FAST);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    assert_eq!(
        closed.stream(&request(&closed), tx).await.unwrap().text,
        "Whole."
    );

    // One that closes mid-reply, with neither, is a cut reply: an error, never a question.
    let server = server_with(vec![always(
        kind,
        sse("data: {\"choices\":[{\"delta\":{\"content\":\"Q3: why does\"}}]}\n\n".to_owned()),
    )])
    .await;
    let cut = router(kind.provider(&server), Duration::from_secs(10), FAST);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let err = cut.stream(&request(&cut), tx).await.unwrap_err();
    assert!(matches!(err, LlmError::MalformedResponse { .. }), "{err:?}");
    assert!(err.to_string().contains("the reply may be cut"), "{err}");
}

#[tokio::test]
async fn retry_after_is_read_and_honoured() {
    let kind = Kind::OpenAi;
    let limited = || ResponseTemplate::new(429).insert_header("retry-after", "2");
    // The header becomes the error's wait.
    let server = server_with(vec![always(kind, limited())]).await;
    let one_attempt = RetryPolicy {
        max_attempts: 1,
        ..FAST
    };
    let (result, _) = complete(kind, &server, one_attempt).await;
    let err = result.unwrap_err();
    assert!(
        matches!(err, LlmError::RateLimited { retry_after: Some(wait), .. } if wait == Duration::from_secs(2)),
        "{err:?}"
    );
    // And the retry waits it: here capped at 200 ms, which is longer than the 50 ms backoff
    // (the uncapped 2 s wait is checked on paused time in the router's unit tests).
    let server = server_with(vec![
        once(kind, limited()),
        always(kind, kind.ok("After the wait.")),
    ])
    .await;
    let capped = RetryPolicy {
        max_retry_after: Duration::from_millis(200),
        ..FAST
    };
    let (result, elapsed) = complete(kind, &server, capped).await;
    let response = result.unwrap();
    assert_eq!(response.attempts, 2);
    assert!(elapsed >= Duration::from_millis(200), "{elapsed:?}");
    assert!(response.latency >= Duration::from_millis(200));
}

/// Collects formatted log lines.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn keys_never_show_in_debug_errors_or_logs() {
    let kind = Kind::OpenAi;
    // A server that echoes the key in its complaint, as some do.
    let unauthorized = ResponseTemplate::new(401).set_body_json(json!({
        "error": {"message": format!("Incorrect API key provided: {KEY}."), "type": "invalid_request_error"}
    }));
    let server = server_with(vec![
        once(kind, ResponseTemplate::new(429)),
        always(kind, unauthorized),
    ])
    .await;
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    // While only one scoped subscriber exists, tracing decides whether a call site is
    // wanted from the subscriber of the thread that reaches it first: a test running beside
    // this one, with none, would switch the shared call sites off. A second live subscriber
    // makes tracing ask every live subscriber instead.
    let _second = tracing::Dispatch::new(tracing_subscriber::registry());

    let provider = kind.provider(&server);
    let router = router(Arc::clone(&provider), Duration::from_secs(10), FAST);
    let err = router.complete(&request(&router)).await.unwrap_err();
    assert!(
        matches!(
            &err,
            LlmError::Http {
                status: 401,
                attempts: 2,
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("Incorrect API key provided: ***."),
        "{message}"
    );

    let config = AnthropicConfig {
        base_url: AnthropicConfig::DEFAULT_BASE_URL.into(),
        api_key: ApiKey::new(KEY).unwrap(),
        model: "claude-sonnet-4-6".into(),
        effort: None,
        pricing: None,
    };
    let anthropic = AnthropicProvider::new(config.clone()).unwrap();
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let shown = [
        format!("{:?}", ApiKey::new(KEY).unwrap()),
        ApiKey::new(KEY).unwrap().to_string(),
        format!("{config:?}"),
        format!("{anthropic:?}"),
        format!("{router:?}"),
        format!("{err:?}"),
        message,
        logs.clone(),
    ];
    for text in &shown {
        assert!(!text.contains(KEY), "the key leaked into: {text}");
        assert!(
            !text.contains("0123456789abcdef"),
            "part of the key leaked into: {text}"
        );
    }
    assert_eq!(shown[0], "ApiKey(***)");

    // The structured events of this call, in order, without the prompt.
    for event in [
        "llm_call_start",
        "llm_rate_limit",
        "llm_retry_after_rate_limit",
        "llm_http_error",
    ] {
        assert!(logs.contains(event), "{event} missing from:\n{logs}");
    }
    assert!(
        logs.contains("role=\"extraction\"") || logs.contains("role=extraction"),
        "{logs}"
    );
    assert!(logs.contains("status=401"), "{logs}");
    assert!(
        !logs.contains(USER) && !logs.contains(SYSTEM),
        "prompt text in logs:\n{logs}"
    );
}

#[tokio::test]
async fn an_unreachable_server_fails_at_once_with_the_cause() {
    // A loopback port nobody listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let provider: Arc<dyn LlmProvider> = Arc::new(
        OpenAiProvider::new(OpenAiConfig {
            name: "ollama".into(),
            base_url: format!("http://{address}/v1"),
            api_key: None,
            model: "llama3.2".into(),
            include_usage: false,
            pricing: None,
        })
        .unwrap(),
    );
    let router = router(provider, Duration::from_secs(10), RetryPolicy::default());
    let err = router.complete(&request(&router)).await.unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, LlmError::Connection { attempts: 1, .. }),
        "{err:?}"
    );
    assert!(message.starts_with("ollama: request failed: "), "{message}");
    assert!(message.to_lowercase().contains("connect"), "{message}");
}

#[test]
fn bad_configurations_are_refused_with_the_reason() {
    let key = || ApiKey::new(KEY).unwrap();
    let err = AnthropicProvider::new(AnthropicConfig {
        base_url: "api.anthropic.com".into(),
        api_key: key(),
        model: "claude-sonnet-4-6".into(),
        effort: None,
        pricing: None,
    })
    .unwrap_err();
    assert!(matches!(err, LlmError::Config { .. }), "{err:?}");
    assert!(err.to_string().contains("'api.anthropic.com'"), "{err}");
    let err = OpenAiProvider::new(OpenAiConfig {
        name: "deepseek".into(),
        base_url: "https://api.deepseek.com".into(),
        api_key: Some(key()),
        model: "  ".into(),
        include_usage: true,
        pricing: None,
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "deepseek: invalid configuration: no model is set"
    );
}

/// What a hostile or broken server can send back on each path, quoting the key (raw, as
/// `Bearer …` and as `x-api-key`) and carrying escape sequences that retitle and clear a
/// terminal: for both providers, the error must hold neither.
#[tokio::test]
async fn no_key_or_escape_sequence_survives_any_error_path() {
    let hostile = format!(
        "\u{1b}]0;owned\u{7}\u{1b}[2Jproxy saw Authorization: Bearer {KEY} and x-api-key: {KEY} ({KEY})"
    );
    for kind in [Kind::OpenAi, Kind::Anthropic] {
        let html = format!("<html><body><pre>{hostile}</pre></body></html>");
        let stream_error = match kind {
            Kind::OpenAi => format!(
                "data: {}\n\n",
                json!({"error": {"message": hostile, "type": "server_error"}})
            ),
            Kind::Anthropic => format!(
                "event: error\ndata: {}\n\n",
                json!({"type": "error", "error": {"type": "overloaded_error", "message": hostile}})
            ),
        };
        let paths = [
            (
                "a JSON error body",
                ResponseTemplate::new(401).set_body_json(
                    json!({"error": {"message": hostile, "type": "invalid_request_error"}}),
                ),
            ),
            (
                "a plain-text error body",
                ResponseTemplate::new(502).set_body_string(hostile.clone()),
            ),
            (
                "a 200 body that is not JSON",
                ResponseTemplate::new(200).set_body_raw(html, "text/html"),
            ),
            (
                "a 200 JSON error object",
                ResponseTemplate::new(200).set_body_json(
                    json!({"type": "error", "error": {"type": "api_error", "message": hostile}}),
                ),
            ),
            ("a streamed error", sse(stream_error)),
        ];
        for (what, response) in paths {
            let server = server_with(vec![always(kind, response)]).await;
            let router = router(kind.provider(&server), Duration::from_secs(10), FAST);
            let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
            let errors = [
                router.complete(&request(&router)).await.unwrap_err(),
                router.stream(&request(&router), tx).await.unwrap_err(),
            ];
            for err in errors {
                for text in [err.to_string(), format!("{err:?}")] {
                    assert!(
                        !text.contains("0123456789abcdef"),
                        "{kind:?}, {what}: the key leaked into {text}"
                    );
                    assert!(
                        !text.contains('\u{1b}') && !text.contains('\u{7}'),
                        "{kind:?}, {what}: an escape sequence passed into {text:?}"
                    );
                }
            }
        }
    }
}
