//! Shared set-up for the tests: the shipped config, the scripted oat milk interview, the real
//! `MiniLM` model (cached under `target/test-cache`), and [`scripted_services`], the one
//! constructor of test [`Services`] (the TUI tests' `tui_support` builds on it too).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use interviewer::config::ConfigDir;
use interviewer::embed::{Embedder, MiniLmEmbedder, ResolveConfig};
use interviewer::llm::{LlmProvider, LlmRouter, RetryPolicy, ScriptedProvider};
use interviewer::pipeline::{InterviewSpec, PipelineSettings, Services};
use interviewer::signals::Catalog;

pub const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
pub const CACHE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache");

pub fn example(name: &str) -> PathBuf {
    Path::new(MANIFEST).join("assets/examples").join(name)
}

pub fn config() -> ConfigDir {
    ConfigDir::new(Path::new(MANIFEST).join("config"))
}

pub fn model() -> Arc<MiniLmEmbedder> {
    static MODEL: OnceLock<Arc<MiniLmEmbedder>> = OnceLock::new();
    Arc::clone(MODEL.get_or_init(|| {
        let config = ResolveConfig {
            cache_root: Some(CACHE_ROOT.into()),
            ..ResolveConfig::from_env(None)
        };
        Arc::new(MiniLmEmbedder::load_with(&config).unwrap_or_else(|e| panic!("{e}")))
    }))
}

pub fn spec(max_turns: u32) -> InterviewSpec {
    let dir = config();
    InterviewSpec {
        methodology: dir.methodology("means_end_chain", &Catalog).unwrap(),
        concept: dir.concept("oat_milk").unwrap(),
        rubrics: dir.rubrics().unwrap(),
        max_turns,
        understanding: interviewer::domain::Understanding::Llm,
    }
}

/// Services whose model calls play `script`, through a router with `retry`, embedding with
/// `embedder`, under the default pipeline settings.
pub fn scripted_services(
    script: &Path,
    embedder: Arc<dyn Embedder>,
    retry: RetryPolicy,
) -> Services {
    let provider = ScriptedProvider::load(script).unwrap_or_else(|e| panic!("{e}"));
    let router = LlmRouter::single(&(Arc::new(provider) as Arc<dyn LlmProvider>));
    Services {
        llm: Arc::new(router.with_retry(retry)),
        embedder,
        settings: seed_order(),
    }
}

/// The scripted `script` with the real model and the seed's retry policy.
pub fn services_with(script: &Path) -> Services {
    scripted_services(script, model(), RetryPolicy::default())
}

pub fn services() -> Services {
    services_with(&example("oat_milk_script.yaml"))
}

/// The scripted answers, one per turn.
pub fn answers() -> Vec<String> {
    let text = std::fs::read_to_string(example("oat_milk_answers.txt")).unwrap();
    text.split("\n\n")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Services whose model calls go through `router` (an HTTP provider against a fake server).
pub fn services_with_router(router: LlmRouter) -> Services {
    let embedder: Arc<dyn Embedder> = model();
    Services {
        llm: Arc::new(router),
        embedder,
        settings: seed_order(),
    }
}

/// The seeds' stage order (slot discovery inside the turn): the stage-by-stage tests check it;
/// the deferred order has tests of its own.
pub fn seed_order() -> PipelineSettings {
    PipelineSettings {
        inline_slot_discovery: true,
        ..PipelineSettings::default()
    }
}

/// Runs the `interviewer` binary with each of `dbs` as a `--db`, the shipped config and the
/// test model cache, and none of the environment that would change what it does.
pub fn run_binary(dbs: &[&Path], args: &[&str]) -> std::process::Output {
    run_binary_with(dbs, args, &[])
}

/// [`run_binary`] with these environment variables set as well.
pub fn run_binary_with(
    dbs: &[&Path],
    args: &[&str],
    envs: &[(&str, &str)],
) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_interviewer"));
    for db in dbs {
        command.arg("--db").arg(db);
    }
    command
        .arg("--config-dir")
        .arg(Path::new(MANIFEST).join("config"))
        .args(args)
        .env("INTERVIEWER_CACHE_DIR", CACHE_ROOT)
        .env_remove("INTERVIEWER_DB")
        .env_remove("INTERVIEWER_SCRIPT")
        .env_remove("INTERVIEWER_SCRIPT_LOG")
        .env_remove("INTERVIEWER_UNDERSTANDING")
        .env_remove("INTERVIEWER_CRASH_AT")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .envs(envs.iter().copied())
        .output()
        .expect("the binary runs")
}

/// The standard output of a run that must have succeeded (the whole run shown when not).
pub fn succeeded(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// A short live interview in `db` with the binary (`--provider none`, three laddering answers
/// to three turns, so it finishes); its answers file goes in `dir`.
pub fn live_oat_milk_interview(db: &Path, dir: &Path) {
    let answers = dir.join("live-answers.txt");
    std::fs::write(
        &answers,
        "I buy the barista oat milk because it froths well.\n\n\
         The foam makes my latte feel like a treat.\n\n\
         A treat in the morning puts me in a calmer mood before work.\n",
    )
    .unwrap();
    succeeded(&run_binary(
        &[db],
        &[
            "--provider",
            "none",
            "interview",
            "--concept",
            "oat_milk",
            "--max-turns",
            "3",
            "--answers",
            answers.to_str().unwrap(),
        ],
    ));
}

/// `import --concept oat_milk ARGS` with `--provider none` (offline understanding).
pub fn import(db: &Path, args: &[&str]) -> std::process::Output {
    import_with(db, args, &[])
}

/// [`import`] with these environment variables set as well.
pub fn import_with(db: &Path, args: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
    let mut all = vec!["--provider", "none", "import", "--concept", "oat_milk"];
    all.extend_from_slice(args);
    run_binary_with(&[db], &all, envs)
}
