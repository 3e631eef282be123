//! Errors of configuration loading, written for the researcher who edits the YAML.
//!
//! Every problem names the file, the YAML path (`strategies[2].node_binding`) and the reason.
//! Validation collects all problems of a file before failing, so one run shows every mistake.

use std::fmt;
use std::path::{Path, PathBuf};

/// One thing wrong in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Dotted YAML path, `""` for the document root.
    pub path: String,
    pub reason: String,
}

impl Problem {
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not valid YAML: {message}", path.display())]
    Syntax { path: PathBuf, message: String },
    #[error("{}", render_invalid(path, problems))]
    Invalid {
        path: PathBuf,
        problems: Vec<Problem>,
    },
    #[error("no {kind} named '{name}' in {} (available: {})", dir.display(), available.join(", "))]
    NotFound {
        kind: &'static str,
        name: String,
        dir: PathBuf,
        available: Vec<String>,
    },
}

impl ConfigError {
    pub fn invalid(path: &Path, problems: Vec<Problem>) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            problems,
        }
    }

    /// The individual problems, for callers that want to count or filter them.
    pub fn problems(&self) -> Vec<Problem> {
        match self {
            Self::Invalid { problems, .. } => problems.clone(),
            Self::Syntax { message, .. } => vec![Problem::new("", message.clone())],
            Self::Io { source, .. } => vec![Problem::new("", source.to_string())],
            Self::NotFound { name, .. } => vec![Problem::new("", format!("'{name}' not found"))],
        }
    }
}

fn render_invalid(path: &Path, problems: &[Problem]) -> String {
    let mut out = format!("{}: {} problem(s)", path.display(), problems.len());
    for p in problems {
        out.push_str(&format!(
            "\n  {}: {}: {}",
            path.display(),
            display_path(&p.path),
            p.reason
        ));
    }
    out
}

/// Shows the document root as `(root)` rather than an empty string.
pub fn display_path(path: &str) -> &str {
    if path.is_empty() { "(root)" } else { path }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", display_path(&self.path), self.reason)
    }
}
