//! Structured logs to a file, never to the terminal (the TUI owns it).
//!
//! Every command writes to `<data dir>/interviewer/logs/interviewer.log.<date>` (daily files),
//! or to the directory in `INTERVIEWER_LOG_DIR`. The level filter comes from `INTERVIEWER_LOG`
//! (`tracing` env-filter syntax, e.g. `interviewer::llm=debug`), default `info`. Writing goes
//! through a background thread, so a slow disk never stalls a turn or a frame.
//!
//! Logs name sessions, models and errors, so like the database they are private: the folder is
//! created 0700 and each day's file 0600 (on Unix), whatever the umask.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Names the log directory.
pub const LOG_DIR_ENV: &str = "INTERVIEWER_LOG_DIR";
/// Holds the level filter.
pub const LOG_FILTER_ENV: &str = "INTERVIEWER_LOG";

/// Where logs go.
pub fn log_dir() -> PathBuf {
    std::env::var_os(LOG_DIR_ENV).map_or_else(
        || {
            dirs::data_dir()
                .unwrap_or_else(std::env::temp_dir)
                .join("interviewer")
                .join("logs")
        },
        PathBuf::from,
    )
}

/// Installs the file logger. Keep the guard alive until the program ends: dropping it flushes
/// pending lines. Returns `None` (and logs nowhere) when the directory cannot be created or a
/// logger is already installed; logging must never stop the program.
pub fn init() -> Option<WorkerGuard> {
    let dir = log_dir();
    create_private_dir(&dir).ok()?;
    let (writer, guard) = tracing_appender::non_blocking(DailyFile::new(dir));
    let filter = EnvFilter::try_from_env(LOG_FILTER_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        // A line when a turn's or a stage's span closes, with its elapsed time and outcome.
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

/// Creates `dir` and its parents, 0700 on Unix; an existing folder keeps its mode.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Opens `path` for appending, creating it 0600 on Unix.
fn open_private_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// `interviewer.log.<UTC date>` in a folder, switching files when the date changes.
struct DailyFile {
    dir: PathBuf,
    day: String,
    file: Option<File>,
}

impl DailyFile {
    fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            day: String::new(),
            file: None,
        }
    }

    fn current(&mut self) -> io::Result<&mut File> {
        let now = crate::time::now_rfc3339();
        let day = now.get(..10).unwrap_or(&now);
        if self.file.is_none() || self.day != day {
            let path = self.dir.join(format!("interviewer.log.{day}"));
            self.file = Some(open_private_append(&path)?);
            day.clone_into(&mut self.day);
        }
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("no log file open"))
    }
}

impl Write for DailyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.current()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.file.as_mut() {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_folders_and_files_are_private_and_named_by_day() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/logs");
        create_private_dir(&dir).unwrap();
        let mut log = DailyFile::new(dir.clone());
        log.write_all(b"first line\n").unwrap();
        log.write_all(b"second line\n").unwrap();
        log.flush().unwrap();
        let files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1);
        let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
        let today = crate::time::now_rfc3339();
        assert_eq!(name, format!("interviewer.log.{}", &today[..10]));
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert_eq!(text, "first line\nsecond line\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&files[0]), 0o600);
            assert_eq!(mode(&dir), 0o700);
            assert_eq!(mode(&root.path().join("a")), 0o700);
        }
    }
}
