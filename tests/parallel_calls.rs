//! A pipeline turn against an OpenAI-compatible fake server that takes 300 ms per call: the
//! signal-scoring request reaches the server before extraction's reply comes back (the two
//! overlap), and a turn makes one call per role. The time saved is measured by the
//! `pipeline_turn` bench, not here. Also: a call that fails after its retry is recorded with the attempts and
//! time it really took.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use interviewer::llm::{LlmProvider, LlmRouter, OpenAiConfig, OpenAiProvider, Role};
use interviewer::pipeline::{Event, EventSink, Interview};
use interviewer::store::{Store, StoreOps};
use serde::Deserialize;
use serde_json::json;
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// How long the fake server takes to answer any call.
const CALL_DELAY: Duration = Duration::from_millis(300);

/// The scripted oat milk replies (`assets/examples/oat_milk_script.yaml`), reused as the fake
/// server's answers.
#[derive(Deserialize)]
struct Script {
    extraction: Vec<Rule>,
    slot_discovery: Vec<Rule>,
    signal_scoring: Vec<Rule>,
    question_generation: Vec<Rule>,
}

#[derive(Deserialize)]
struct Rule {
    turn: Option<u32>,
    contains: Option<String>,
    reply: String,
}

fn reply_for(rules: &[Rule], turn: Option<u32>) -> &str {
    &rules
        .iter()
        .find(|r| r.turn == turn && r.contains.is_none())
        .unwrap_or_else(|| panic!("no scripted reply for turn {turn:?}"))
        .reply
}

/// Answers after [`CALL_DELAY`] and notes when each request arrived, by role.
struct Timed {
    role: Role,
    response: ResponseTemplate,
    arrivals: Arc<Mutex<Vec<(Role, Instant)>>>,
}

impl Respond for Timed {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.arrivals
            .lock()
            .unwrap()
            .push((self.role, Instant::now()));
        self.response.clone().set_delay(CALL_DELAY)
    }
}

fn completion(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 400, "completion_tokens": 60}
    }))
}

fn streamed(text: &str) -> ResponseTemplate {
    let mut body = String::new();
    for piece in text.split_inclusive(' ') {
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": piece}}]});
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// The fake server: each role's prompt is recognised by a phrase only it contains.
/// `extraction` replaces the scripted extraction reply.
async fn fake_server(
    arrivals: &Arc<Mutex<Vec<(Role, Instant)>>>,
    extraction: Option<ResponseTemplate>,
) -> MockServer {
    let text = std::fs::read_to_string(common::example("oat_milk_script.yaml")).unwrap();
    let script: Script = serde_saphyr::from_str(&text).unwrap();
    let mut routes: Vec<(Role, String, ResponseTemplate)> = vec![
        (
            Role::Extraction,
            "as a small knowledge graph".into(),
            extraction.unwrap_or_else(|| completion(reply_for(&script.extraction, Some(1)))),
        ),
        (
            Role::SignalScoring,
            "against the rubrics below".into(),
            completion(reply_for(&script.signal_scoring, None)),
        ),
        (
            Role::QuestionGeneration,
            "opening an in-depth interview".into(),
            streamed(reply_for(&script.question_generation, Some(0))),
        ),
        (
            Role::QuestionGeneration,
            "conducting an in-depth interview".into(),
            streamed(reply_for(&script.question_generation, Some(1))),
        ),
    ];
    // Slot discovery is one call per turn for every node type.
    routes.push((
        Role::SlotDiscovery,
        "into canonical concepts".into(),
        completion(reply_for(&script.slot_discovery, None)),
    ));
    let server = MockServer::start().await;
    for (role, phrase, response) in routes {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .and(body_string_contains(phrase))
            .respond_with(Timed {
                role,
                response,
                arrivals: Arc::clone(arrivals),
            })
            .mount(&server)
            .await;
    }
    server
}

fn provider(server: &MockServer) -> Arc<dyn LlmProvider> {
    Arc::new(
        OpenAiProvider::new(OpenAiConfig {
            name: "openai-compatible".into(),
            base_url: format!("{}/v1", server.uri()),
            api_key: None,
            model: "fake-model".into(),
            include_usage: true,
            pricing: None,
        })
        .unwrap(),
    )
}

fn interview(server: &MockServer, db: &Path) -> Interview {
    let router = LlmRouter::single(&provider(server));
    Interview::create(
        Store::open(db).unwrap(),
        common::spec(10),
        common::services_with_router(router),
        Some("parallel".into()),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signal_scoring_overlaps_extraction() {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let server = fake_server(&arrivals, None).await;
    let tmp = tempfile::tempdir().unwrap();
    let mut interview = interview(&server, &tmp.path().join("i.db"));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let events = EventSink::new(tx);
    interview.opening(&events).await.unwrap();
    let answer = common::answers().into_iter().next().unwrap();

    let result = interview.answer(&answer, &events).await.unwrap();
    assert_eq!(result.turn_number, 1);

    drop(events);
    let mut calls = Vec::new();
    while let Some(event) = rx.recv().await {
        if let Event::LlmCall {
            turn: 1,
            role,
            latency,
            outcome,
            provider,
            ..
        } = event
        {
            assert_eq!(outcome, "ok");
            assert_eq!(provider, "openai-compatible");
            calls.push((role, latency));
        }
    }
    let roles: Vec<Role> = calls.iter().map(|(r, _)| *r).collect();
    for role in [
        Role::Extraction,
        Role::SignalScoring,
        Role::SlotDiscovery,
        Role::QuestionGeneration,
    ] {
        assert!(roles.contains(&role), "no {role} call in {roles:?}");
    }
    assert!(
        calls.iter().all(|(_, l)| *l >= CALL_DELAY),
        "every call waited for the server: {calls:?}"
    );

    // Scoring was sent before extraction's answer came back (and the other way round).
    let arrivals = arrivals.lock().unwrap().clone();
    let at = |role: Role| {
        arrivals
            .iter()
            .rev()
            .find(|(r, _)| *r == role)
            .map(|(_, t)| *t)
            .unwrap()
    };
    let (extraction, scoring) = (at(Role::Extraction), at(Role::SignalScoring));
    let gap = if scoring > extraction {
        scoring - extraction
    } else {
        extraction - scoring
    };
    assert!(gap < CALL_DELAY, "scoring and extraction {gap:?} apart");
    assert_eq!(calls.len(), 4, "one call per role: {roles:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_call_records_its_attempts_and_time() {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let server = fake_server(&arrivals, Some(ResponseTemplate::new(429))).await;
    let tmp = tempfile::tempdir().unwrap();
    let mut interview = interview(&server, &tmp.path().join("i.db"));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let events = EventSink::new(tx);
    interview.opening(&events).await.unwrap();
    let answer = common::answers().into_iter().next().unwrap();
    let err = interview.answer(&answer, &events).await.unwrap_err();
    assert!(err.to_string().contains("rate limited"), "{err}");

    let rows = interview.store().llm_usage("parallel").unwrap();
    let failed: Vec<_> = rows
        .iter()
        .map(|r| &r.usage)
        .filter(|u| u.role == "extraction")
        .collect();
    assert_eq!(failed.len(), 1, "{rows:?}");
    let row = failed[0];
    assert_eq!(row.attempts, 2);
    assert_eq!(row.provider, "openai-compatible");
    assert_eq!(
        row.outcome,
        "error: openai-compatible: rate limited (HTTP 429, 2 attempts)"
    );
    // Two 300 ms answers and the default policy's 1 s backoff between them.
    assert!(row.latency_ms >= 1_600, "{row:?}");
}
