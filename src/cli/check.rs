//! `interviewer check [PATH...]`: validate the shipped config (default) or given files and
//! directories, one summary line per file, every problem listed under a failing file.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, emit};
use crate::config::{ConfigDir, ConfigError, FileKind, Problem, check_file};
use crate::signals::Catalog;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or directories to check; default: the whole config directory.
    pub paths: Vec<PathBuf>,
}

pub fn run(
    dir: &ConfigDir,
    args: &CheckArgs,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let files: Vec<(Option<FileKind>, PathBuf)> = if args.paths.is_empty() {
        dir.all_files()
            .into_iter()
            .map(|(k, p)| (Some(k), p))
            .collect()
    } else {
        let mut files = Vec::new();
        for p in &args.paths {
            collect(p, &mut files)?;
        }
        files
    };
    let mut failed = 0;
    for (kind, path) in &files {
        match check_file(path, *kind, &Catalog)
            .and_then(|summary| cross_check(dir, path, *kind).map(|()| summary))
        {
            Ok(summary) => emit(out, &format!("ok    {}  {summary}\n", path.display()))?,
            Err(e) => {
                failed += 1;
                emit(out, &format!("FAIL  {}\n", path.display()))?;
                for p in e.problems() {
                    emit(out, &format!("      {}: {p}\n", path.display()))?;
                }
            }
        }
    }
    emit(
        out,
        &format!("{} file(s) checked, {failed} failed\n", files.len()),
    )?;
    if failed > 0 {
        return Err(CliError::Reported(format!(
            "{failed} configuration file(s) have problems"
        )));
    }
    Ok(())
}

fn collect(path: &Path, files: &mut Vec<(Option<FileKind>, PathBuf)>) -> Result<(), CliError> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|source| ConfigError::Io {
                path: path.to_path_buf(),
                source,
            })?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            let checkable = e.is_dir()
                || e.extension()
                    .is_some_and(|x| x == "yaml" || x == "yml" || x == "md");
            if checkable {
                collect(&e, files)?;
            }
        }
        Ok(())
    } else if path.is_file() {
        files.push((None, path.to_path_buf()));
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "{}: no such file or directory",
            path.display()
        )))
    }
}

/// Checks that need the rest of the config directory: a concept's methodology must exist, and
/// a methodology's name must match its file name (ids are file stems).
fn cross_check(dir: &ConfigDir, path: &Path, kind: Option<FileKind>) -> Result<(), ConfigError> {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let in_dir = |sub: &str| {
        path.parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == sub)
    };
    if kind == Some(FileKind::Concept) || in_dir("concepts") {
        let c = crate::config::load_concept(path)?;
        if !dir.ids(FileKind::Methodology).contains(&c.methodology) {
            let reason = format!(
                "no methodology '{}' in {}",
                c.methodology,
                dir.root().join("methodologies").display()
            );
            return Err(ConfigError::invalid(
                path,
                vec![Problem::new("methodology", reason)],
            ));
        }
    }
    if kind == Some(FileKind::Methodology) || in_dir("methodologies") {
        let m = crate::config::load_methodology(path, &Catalog)?;
        if m.method.name != stem {
            let reason = format!(
                "name '{}' differs from the file name '{stem}'; ids are file names",
                m.method.name
            );
            return Err(ConfigError::invalid(
                path,
                vec![Problem::new("method.name", reason)],
            ));
        }
    }
    Ok(())
}
