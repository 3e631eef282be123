//! The Hugging Face Hub source: download the three model files and install them in our cache.
//!
//! hf-hub 1.0 is async; its blocking client needs a Cargo feature this crate does not enable, so
//! we do what that client does: run the requests on a current-thread tokio runtime owned by a
//! short-lived thread of our own. That is safe whether or not the caller is itself inside a tokio
//! runtime. Files go to hf-hub's usual cache first (shared with other tools) and are then
//! hard-linked or copied into ours.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hf_hub::HFClient;
use hf_hub::progress::{DownloadEvent, FileProgress, Progress, ProgressEvent, ProgressHandler};

use super::resolve::{MODEL_FILES, ResolveConfig, Transfer, install_files};

/// Hub repository owner of the model.
const OWNER: &str = "sentence-transformers";
/// Hub repository name of the model.
const NAME: &str = "all-MiniLM-L6-v2";
/// `owner/name`, for messages.
pub(super) const REPO_ID: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// One retry after the first failure: enough for a dropped connection, few enough that an
/// unreachable Hub fails within about a second.
const RETRIES: usize = 1;

/// Downloads (or, offline, looks up) the model files and installs them into `dest`.
pub(super) fn fetch(config: &ResolveConfig, dest: &Path) -> Result<(), String> {
    let config = config.clone();
    let worker = std::thread::Builder::new()
        .name("interviewer-hf-hub".to_string())
        .spawn(move || download_on_own_runtime(&config))
        .map_err(|e| format!("cannot start the download thread: {e}"))?;
    let paths = worker
        .join()
        .map_err(|_| "the download thread panicked".to_string())??;
    // hf-hub puts all files of one revision in the same snapshot directory; files from two
    // revisions (a push between our requests) must not be mixed.
    let snapshot = paths
        .first()
        .and_then(|path| path.parent())
        .ok_or_else(|| "hf-hub returned no file paths".to_string())?;
    if paths.iter().any(|path| path.parent() != Some(snapshot)) {
        return Err("the files came from different revisions; try again".to_string());
    }
    install_files(snapshot, dest, Transfer::Share)
}

fn download_on_own_runtime(config: &ResolveConfig) -> Result<Vec<PathBuf>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
    runtime.block_on(download(config))
}

/// Fetches [`MODEL_FILES`] in order, the small config.json first so a dead network shows up
/// before the 90 MB weights are requested.
async fn download(config: &ResolveConfig) -> Result<Vec<PathBuf>, String> {
    let mut builder = HFClient::builder().retry_max_attempts(RETRIES);
    if let Some(endpoint) = &config.hub_endpoint {
        builder = builder.endpoint(endpoint.clone());
    }
    let client = builder.build().map_err(|e| error_chain(&e))?;
    let repo = client.model(OWNER, NAME);
    let progress = config
        .progress
        .then(|| Progress::new(StderrProgress::default()));

    let mut paths = Vec::with_capacity(MODEL_FILES.len());
    for (index, name) in MODEL_FILES.into_iter().enumerate() {
        let request = repo
            .download_file()
            .filename(name)
            .local_files_only(config.hub_offline)
            .maybe_progress(progress.clone())
            .send();
        let result = if index == 0 {
            tokio::time::timeout(config.hub_timeout, request)
                .await
                .map_err(|_| format!("no answer within {} s", config.hub_timeout.as_secs_f32()))?
        } else {
            request.await
        };
        let path = result.map_err(|e| describe(&e, name, config.hub_offline))?;
        paths.push(path);
    }
    Ok(paths)
}

fn describe(err: &hf_hub::HFError, file: &str, offline: bool) -> String {
    match err {
        hf_hub::HFError::LocalEntryNotFound { .. } if offline => {
            format!("{file} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set")
        }
        other => format!("{file}: {}", error_chain(other)),
    }
}

/// An error and its sources joined by ": "; reqwest hides the useful part (DNS failure,
/// connection refused) in the source chain.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Prints each file's start and every further 10% on stderr.
#[derive(Debug, Default)]
struct StderrProgress {
    /// Highest tenth already printed for the current file; reset at each `Start`.
    printed_tenths: AtomicU64,
}

impl StderrProgress {
    fn report(&self, label: &str, done: u64, total: u64) {
        if total == 0 {
            return;
        }
        let tenths = done.saturating_mul(10) / total;
        if tenths > self.printed_tenths.fetch_max(tenths, Ordering::Relaxed) {
            eprintln!("interviewer:   {label}: {}%", tenths * 10);
        }
    }
}

impl ProgressHandler for StderrProgress {
    fn on_progress(&self, event: &ProgressEvent) {
        let ProgressEvent::Download(event) = event else {
            return;
        };
        match event {
            DownloadEvent::Start { total_bytes, .. } => {
                self.printed_tenths.store(0, Ordering::Relaxed);
                eprintln!(
                    "interviewer: downloading from Hugging Face {REPO_ID} ({:.1} MB)",
                    mebibytes(*total_bytes)
                );
            }
            DownloadEvent::Progress { files } => {
                for FileProgress {
                    filename,
                    bytes_completed,
                    total_bytes,
                    ..
                } in files
                {
                    self.report(filename, *bytes_completed, *total_bytes);
                }
            }
            DownloadEvent::AggregateProgress {
                bytes_completed,
                total_bytes,
                ..
            } => self.report("download", *bytes_completed, *total_bytes),
            DownloadEvent::Complete => {}
        }
    }
}

fn mebibytes(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn config(endpoint: &str, offline: bool) -> ResolveConfig {
        ResolveConfig {
            explicit_dir: None,
            cache_root: None,
            hub_offline: offline,
            hub_endpoint: Some(endpoint.to_string()),
            hub_timeout: Duration::from_secs(5),
            python: "python3".into(),
            progress: false,
        }
    }

    #[test]
    fn unreachable_hub_fails_fast_with_the_cause() {
        let dest = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        // Port 9 (discard) on loopback: nothing listens, so the connection is refused at once.
        let err = fetch(&config("http://127.0.0.1:9", false), dest.path()).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
        assert!(err.starts_with("config.json"), "{err}");
        assert!(super::super::missing_model_files(dest.path()).len() == 3);
    }

    #[test]
    fn progress_prints_each_tenth_once() {
        let progress = StderrProgress::default();
        progress.report("f", 55, 100);
        assert_eq!(progress.printed_tenths.load(Ordering::Relaxed), 5);
        progress.report("f", 40, 100);
        assert_eq!(progress.printed_tenths.load(Ordering::Relaxed), 5);
        progress.report("f", 100, 100);
        assert_eq!(progress.printed_tenths.load(Ordering::Relaxed), 10);
    }
}
