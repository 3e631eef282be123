//! The Hugging Face Hub source: download a repository's model files and install them in our
//! cache.
//!
//! hf-hub 1.0 is async; its blocking client needs a Cargo feature this crate does not enable, so
//! we do what that client does: run the requests on a current-thread tokio runtime owned by a
//! short-lived thread of our own. That is safe whether or not the caller is itself inside a tokio
//! runtime. Files go to hf-hub's usual cache first (shared with other tools) and are then
//! hard-linked or copied into ours. Progress is an indicatif bar on a terminal, and a line per
//! tenth otherwise (logs, CI).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hf_hub::HFClient;
use hf_hub::progress::{DownloadEvent, FileProgress, Progress, ProgressEvent, ProgressHandler};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::install::{Transfer, install_files};
use super::{FetchConfig, HubFiles};

/// One retry after the first failure: enough for a dropped connection, few enough that an
/// unreachable Hub fails within about a second.
const RETRIES: usize = 1;

/// Downloads (or, offline, looks up) `repo`'s files and installs them into `dest`.
pub(super) fn fetch(config: &FetchConfig, repo: &HubFiles, dest: &Path) -> Result<(), String> {
    let config = config.clone();
    let repo_files = *repo;
    let worker = std::thread::Builder::new()
        .name("interviewer-hf-hub".to_string())
        .spawn(move || download_on_own_runtime(&config, &repo_files))
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
    install_files(&paths, dest, Transfer::Share)
}

fn download_on_own_runtime(config: &FetchConfig, repo: &HubFiles) -> Result<Vec<PathBuf>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
    runtime.block_on(download(config, repo))
}

/// Fetches the files in order; the first request is bounded by the probe timeout so a dead
/// network shows up before a large file is requested.
async fn download(config: &FetchConfig, repo: &HubFiles) -> Result<Vec<PathBuf>, String> {
    let mut builder = HFClient::builder().retry_max_attempts(RETRIES);
    if let Some(endpoint) = &config.hub_endpoint {
        builder = builder.endpoint(endpoint.clone());
    }
    let client = builder.build().map_err(|e| error_chain(&e))?;
    let hub_repo = client.model(repo.owner, repo.name);
    let progress = config
        .progress
        .then(|| Progress::new(StderrProgress::new(repo.repo_id())));

    let mut paths = Vec::with_capacity(repo.files.len());
    for (index, name) in repo.files.iter().enumerate() {
        let request = hub_repo
            .download_file()
            .filename(*name)
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

/// Download progress on stderr: a bar on a terminal, else a line per file start and per tenth.
#[derive(Debug)]
struct StderrProgress {
    repo_id: String,
    /// The bar, when stderr is a terminal.
    bar: Option<ProgressBar>,
    /// Highest tenth already printed for the current file; reset at each `Start`.
    printed_tenths: AtomicU64,
}

impl StderrProgress {
    fn new(repo_id: String) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
                .with_style(style)
                .with_prefix(format!("interviewer: {repo_id}"))
        });
        Self {
            repo_id,
            bar,
            printed_tenths: AtomicU64::new(0),
        }
    }

    fn report(&self, label: &str, done: u64, total: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(total);
            bar.set_position(done);
            return;
        }
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
                match &self.bar {
                    Some(bar) => {
                        bar.set_length(*total_bytes);
                        bar.set_position(0);
                    }
                    None => eprintln!(
                        "interviewer: downloading from Hugging Face {} ({:.1} MB)",
                        self.repo_id,
                        mebibytes(*total_bytes)
                    ),
                }
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
            DownloadEvent::Complete => {
                if let Some(bar) = &self.bar {
                    bar.finish_and_clear();
                }
            }
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

    fn config(endpoint: &str, offline: bool) -> FetchConfig {
        FetchConfig {
            cache_root: None,
            hub_offline: offline,
            hub_endpoint: Some(endpoint.to_string()),
            hub_timeout: Duration::from_secs(5),
            python: "python3".into(),
            progress: false,
        }
    }

    const REPO: HubFiles = HubFiles {
        owner: "sentence-transformers",
        name: "all-MiniLM-L6-v2",
        files: &["config.json", "model.safetensors"],
    };

    #[test]
    fn unreachable_hub_fails_fast_with_the_cause() {
        let dest = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        // Port 9 (discard) on loopback: nothing listens, so the connection is refused at once.
        let err = fetch(&config("http://127.0.0.1:9", false), &REPO, dest.path()).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
        assert!(err.starts_with("config.json"), "{err}");
        assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
    }

    #[test]
    fn progress_prints_each_tenth_once() {
        let progress = StderrProgress {
            repo_id: "o/n".to_owned(),
            bar: None,
            printed_tenths: AtomicU64::new(0),
        };
        progress.report("f", 55, 100);
        assert_eq!(progress.printed_tenths.load(Ordering::Relaxed), 5);
        progress.report("f", 40, 100);
        assert_eq!(progress.printed_tenths.load(Ordering::Relaxed), 5);
        progress.report("f", 100, 100);
        assert_eq!(progress.printed_tenths.load(Ordering::Relaxed), 10);
    }
}
