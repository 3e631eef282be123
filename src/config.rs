//! Configuration: methodology, concept and persona YAML and the signal rubrics, loaded from a
//! config directory and validated before anything uses them.
//!
//! Layout of a config directory: `methodologies/*.yaml`, `concepts/*.yaml`, `personas/*.yaml`,
//! `prompts/signals.md`. Wherever a command takes an id it also takes a path to a YAML file.

mod concept;
mod error;
mod methodology;
mod persona;
mod rubric;
mod signal_names;
pub(crate) mod yaml;

use std::path::{Path, PathBuf};

pub use concept::{Concept, ConceptContext};
pub use error::{ConfigError, Problem, display_path};
pub use methodology::{
    DepthNormalisation, EdgeType, FocusMode, Guidance, MethodInfo, Methodology, NodeBinding,
    NodeType, Ontology, PhaseConfig, Strategy, Thresholds,
};
pub use persona::{Fatigue, Persona, ResponsePatterns};
pub use rubric::{REQUIRED_RUBRICS, Rubric, check_required, parse_rubrics, reply_key_aliases};

/// What a path that is not a regular file is, in words.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
pub(crate) use signal_names::AnySignals;
pub use signal_names::SignalNames;

/// A methodology the project ships in `config/`, for unit tests (signal names are checked by
/// the loader's own tests, not here).
#[cfg(test)]
pub(crate) fn shipped_methodology(name: &str) -> Methodology {
    ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
        .methodology(name, &AnySignals)
        .unwrap()
}
pub use yaml::MAX_CONFIG_BYTES;

/// Environment variable naming the config directory when `--config-dir` is not given.
pub const CONFIG_DIR_ENV: &str = "INTERVIEWER_CONFIG_DIR";

/// A config directory on disk.
#[derive(Debug, Clone)]
pub struct ConfigDir {
    root: PathBuf,
}

/// The kinds of file a config directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Methodology,
    Concept,
    Persona,
    Rubrics,
}

impl FileKind {
    fn subdir(self) -> &'static str {
        match self {
            Self::Methodology => "methodologies",
            Self::Concept => "concepts",
            Self::Persona => "personas",
            Self::Rubrics => "prompts",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Self::Methodology => "methodology",
            Self::Concept => "concept",
            Self::Persona => "persona",
            Self::Rubrics => "rubric file",
        }
    }
}

/// Ids that the seeds and the original system use for files we ship under other names:
/// `(kind, their id, our id)`. Resolution tries a file of their id first, so a config tree in
/// the original's layout keeps its own files.
pub const ALIASES: &[(FileKind, &str, &str)] = &[
    (FileKind::Concept, "oat_milk_v2", "oat_milk"),
    (FileKind::Concept, "coffee_jtbd_v2", "coffee_jtbd"),
    (FileKind::Concept, "coffee_jtbd_legacy", "coffee_jtbd"),
    (FileKind::Concept, "headphones_mec", "headphones"),
    (FileKind::Persona, "skeptical_analyst", "skeptical"),
    (FileKind::Persona, "baseline_cooperative", "cooperative"),
    (FileKind::Persona, "brief_responder", "brief"),
    (FileKind::Persona, "fatiguing_responder", "fatiguing"),
    (FileKind::Persona, "uncertain_hedger", "hedging"),
];

impl ConfigDir {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The directory to use: an explicit one, else `$INTERVIEWER_CONFIG_DIR`, else `./config`,
    /// else the `config/` shipped beside the crate's sources (useful for `cargo run` anywhere).
    pub fn discover(explicit: Option<&Path>) -> Self {
        if let Some(p) = explicit {
            return Self::new(p);
        }
        if let Some(p) = std::env::var_os(CONFIG_DIR_ENV) {
            return Self::new(PathBuf::from(p));
        }
        let local = PathBuf::from("config");
        if local.join("methodologies").is_dir() {
            return Self::new(local);
        }
        Self::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("config"))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves an id or a path to a file of `kind`: a path as given, an id as
    /// `<kind folder>/<id>.yaml`, else an id of the seeds or the original system through
    /// [`ALIASES`].
    pub fn resolve(&self, kind: FileKind, id_or_path: &str) -> Result<PathBuf, ConfigError> {
        let as_path = Path::new(id_or_path);
        let looks_like_path = id_or_path.contains(std::path::MAIN_SEPARATOR)
            || id_or_path.contains('/')
            || Path::new(id_or_path).extension().is_some();
        if looks_like_path {
            return match std::fs::metadata(as_path) {
                Ok(meta) if meta.is_file() => Ok(as_path.to_path_buf()),
                Ok(meta) => Err(ConfigError::Io {
                    path: as_path.to_path_buf(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("is {}, not a {} file", file_kind(&meta), kind.noun()),
                    ),
                }),
                Err(e) => Err(ConfigError::Io {
                    path: as_path.to_path_buf(),
                    source: e,
                }),
            };
        }
        let candidate = self
            .root
            .join(kind.subdir())
            .join(format!("{id_or_path}.yaml"));
        if candidate.is_file() {
            return Ok(candidate);
        }
        // The seeds' and the original system's ids name shipped files of ours; a file of the
        // alias's own name (above) still wins.
        if let Some((_, _, shipped)) = ALIASES
            .iter()
            .find(|(k, alias, _)| *k == kind && *alias == id_or_path)
        {
            let target = self
                .root
                .join(kind.subdir())
                .join(format!("{shipped}.yaml"));
            if target.is_file() {
                return Ok(target);
            }
        }
        Err(ConfigError::NotFound {
            kind: kind.noun(),
            name: id_or_path.to_owned(),
            dir: self.root.join(kind.subdir()),
            available: self.ids(kind),
        })
    }

    /// Ids of every file of `kind`, sorted.
    pub fn ids(&self, kind: FileKind) -> Vec<String> {
        let mut ids: Vec<String> = yaml_files(&self.root.join(kind.subdir()))
            .iter()
            .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
            .collect();
        ids.sort();
        ids
    }

    /// Loads a methodology by id or path, its signal names checked against `signals`.
    pub fn methodology(
        &self,
        id_or_path: &str,
        signals: &dyn SignalNames,
    ) -> Result<Methodology, ConfigError> {
        load_methodology(&self.resolve(FileKind::Methodology, id_or_path)?, signals)
    }

    pub fn concept(&self, id_or_path: &str) -> Result<Concept, ConfigError> {
        load_concept(&self.resolve(FileKind::Concept, id_or_path)?)
    }

    pub fn persona(&self, id_or_path: &str) -> Result<Persona, ConfigError> {
        load_persona(&self.resolve(FileKind::Persona, id_or_path)?)
    }

    /// `prompts/signals.md`, or `signals.md` at the root in a tree laid out as the original
    /// system's (`methodologies/`, `concepts/`, `personas/`, `signals.md`).
    pub fn rubrics_path(&self) -> PathBuf {
        let ours = self.root.join("prompts").join("signals.md");
        let theirs = self.root.join("signals.md");
        if !ours.is_file() && theirs.is_file() {
            return theirs;
        }
        ours
    }

    pub fn rubrics(&self) -> Result<Vec<Rubric>, ConfigError> {
        load_rubrics(&self.rubrics_path())
    }

    /// Every file `check` looks at, with its kind, in a stable order.
    pub fn all_files(&self) -> Vec<(FileKind, PathBuf)> {
        let mut files = Vec::new();
        for kind in [FileKind::Methodology, FileKind::Concept, FileKind::Persona] {
            let mut paths = yaml_files(&self.root.join(kind.subdir()));
            paths.sort();
            files.extend(paths.into_iter().map(|p| (kind, p)));
        }
        files.push((FileKind::Rubrics, self.rubrics_path()));
        files
    }
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect()
}

fn finish<T>(path: &Path, value: T, problems: Vec<Problem>) -> Result<T, ConfigError> {
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(ConfigError::invalid(path, problems))
    }
}

/// Loads and validates a methodology file, its signal names checked against `signals`.
pub fn load_methodology(
    path: &Path,
    signals: &dyn SignalNames,
) -> Result<Methodology, ConfigError> {
    let m: Methodology = yaml::load(path)?;
    let problems = m.validate(signals);
    finish(path, m, problems)
}

/// Parses and validates methodology text (used by tests and fuzzing).
pub fn parse_methodology(
    path: &Path,
    text: &str,
    signals: &dyn SignalNames,
) -> Result<Methodology, ConfigError> {
    let m: Methodology = yaml::parse(path, text)?;
    let problems = m.validate(signals);
    finish(path, m, problems)
}

pub fn load_concept(path: &Path) -> Result<Concept, ConfigError> {
    let text = read(path)?;
    parse_concept(path, &text)
}

pub fn parse_concept(path: &Path, text: &str) -> Result<Concept, ConfigError> {
    let c: Concept = yaml::parse(path, text)?;
    let problems = c.validate();
    finish(path, c, problems)
}

pub fn load_persona(path: &Path) -> Result<Persona, ConfigError> {
    let text = read(path)?;
    parse_persona(path, &text)
}

pub fn parse_persona(path: &Path, text: &str) -> Result<Persona, ConfigError> {
    let p: Persona = yaml::parse(path, text)?;
    let problems = p.validate();
    finish(path, p, problems)
}

pub fn load_rubrics(path: &Path) -> Result<Vec<Rubric>, ConfigError> {
    let text = read(path)?;
    let rubrics = parse_rubrics(&text).map_err(|p| ConfigError::invalid(path, p))?;
    let missing = check_required(&rubrics);
    finish(path, rubrics, missing)
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Loads a file of any kind, guessing the kind from its parent directory name when possible
/// and otherwise from its content. Used by `interviewer check PATH`; a methodology's signal
/// names are checked against `signals`.
pub fn check_file(
    path: &Path,
    kind: Option<FileKind>,
    signals: &dyn SignalNames,
) -> Result<String, ConfigError> {
    let kind = kind.unwrap_or_else(|| guess_kind(path));
    match kind {
        FileKind::Methodology => load_methodology(path, signals).map(|m| {
            format!(
                "methodology '{}': {} node types, {} strategies",
                m.method.name,
                m.ontology.nodes.len(),
                m.strategies.len()
            )
        }),
        FileKind::Concept => {
            load_concept(path).map(|c| format!("concept '{}' ({})", c.id, c.methodology))
        }
        FileKind::Persona => load_persona(path).map(|p| format!("persona '{}'", p.id)),
        FileKind::Rubrics => load_rubrics(path).map(|r| format!("{} rubrics", r.len())),
    }
}

fn guess_kind(path: &Path) -> FileKind {
    if path.extension().is_some_and(|e| e == "md") {
        return FileKind::Rubrics;
    }
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    match parent {
        "methodologies" => return FileKind::Methodology,
        "concepts" => return FileKind::Concept,
        "personas" => return FileKind::Persona,
        _ => {}
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    if text.lines().any(|l| l.starts_with("method:")) {
        FileKind::Methodology
    } else if text.lines().any(|l| l.starts_with("response_patterns:")) {
        FileKind::Persona
    } else {
        FileKind::Concept
    }
}
