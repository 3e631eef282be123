//! Matrix runs: the `--matrix personas=a,b methodologies=x,y` specification and the manifest
//! that makes a matrix resumable.
//!
//! The manifest is a small JSON file listing every cell's persona, methodology, session id and
//! status. It is written before any run starts and after every change, atomically (a temporary
//! file renamed over the old one), so an interrupted matrix leaves an accurate record. A re-run
//! reads it, skips finished cells and resumes the others under their recorded session ids.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// Manifest file name inside `--out DIR`.
pub const MANIFEST_FILE: &str = "matrix-manifest.json";
/// Format version written to manifests; older or newer versions are refused, not guessed at.
const MANIFEST_VERSION: u32 = 1;

/// A matrix that cannot be run as given.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// The `--matrix` arguments are malformed.
    #[error("--matrix: {0}")]
    Spec(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Manifest { path: PathBuf, message: String },
}

/// Which personas and methodologies to combine (ids or YAML paths, as given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixSpec {
    pub personas: Vec<String>,
    /// Empty: the caller's default methodology only.
    pub methodologies: Vec<String>,
}

impl MatrixSpec {
    /// Parses `key=a,b,c` arguments; keys are `personas` and `methodologies` (singular
    /// accepted), each at most once. `personas` is required.
    pub fn parse(args: &[String]) -> Result<Self, MatrixError> {
        let mut personas = None;
        let mut methodologies = None;
        for arg in args {
            let (key, values) = arg.split_once('=').ok_or_else(|| {
                MatrixError::Spec(format!(
                    "'{arg}' is not KEY=A,B (e.g. personas=brief,hedging)"
                ))
            })?;
            let slot = match key.trim() {
                "personas" | "persona" => &mut personas,
                "methodologies" | "methodology" => &mut methodologies,
                other => {
                    return Err(MatrixError::Spec(format!(
                        "unknown key '{other}'; use personas= and methodologies="
                    )));
                }
            };
            if slot.is_some() {
                return Err(MatrixError::Spec(format!(
                    "'{}' is given twice",
                    key.trim()
                )));
            }
            *slot = Some(list(key.trim(), values)?);
        }
        let personas = personas.ok_or_else(|| {
            MatrixError::Spec("personas= is required (e.g. personas=brief,hedging)".to_owned())
        })?;
        Ok(Self {
            personas,
            methodologies: methodologies.unwrap_or_default(),
        })
    }
}

fn list(key: &str, values: &str) -> Result<Vec<String>, MatrixError> {
    let items: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect();
    if items.is_empty() {
        return Err(MatrixError::Spec(format!("{key}= lists nothing")));
    }
    let mut seen = BTreeSet::new();
    if let Some(dup) = items.iter().find(|i| !seen.insert(i.as_str())) {
        return Err(MatrixError::Spec(format!("{key}= lists '{dup}' twice")));
    }
    Ok(items)
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Pending,
    Running,
    Finished,
    Failed,
}

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestRun {
    /// The persona's id (from its YAML).
    pub persona: String,
    /// The methodology's name (from its YAML).
    pub methodology: String,
    pub session_id: String,
    pub status: RunStatus,
    /// Why the last attempt failed, while `status` is `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The parameters every cell shares; a manifest only serves the matrix it was written for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixParams {
    pub concept: String,
    pub seed: u64,
    pub turns: u32,
    pub srl: bool,
    pub canonical_slots: bool,
}

/// The resumable record of a matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub version: u32,
    pub params: MatrixParams,
    pub runs: Vec<ManifestRun>,
}

impl Manifest {
    pub fn new(params: MatrixParams) -> Self {
        Self {
            version: MANIFEST_VERSION,
            params,
            runs: Vec::new(),
        }
    }

    /// Reads the manifest at `path`; `None` when there is none yet.
    pub fn load(path: &Path) -> Result<Option<Self>, MatrixError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(MatrixError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let manifest: Self = serde_json::from_str(&text).map_err(|e| MatrixError::Manifest {
            path: path.to_path_buf(),
            message: format!("not a matrix manifest: {e}"),
        })?;
        if manifest.version != MANIFEST_VERSION {
            return Err(MatrixError::Manifest {
                path: path.to_path_buf(),
                message: format!(
                    "manifest version {} is not supported (this build writes {MANIFEST_VERSION})",
                    manifest.version
                ),
            });
        }
        Ok(Some(manifest))
    }

    /// The manifest at `path` for `params`, or a new one; a manifest written for other
    /// parameters is an error, since its session ids belong to another matrix.
    pub fn load_for(path: &Path, params: &MatrixParams) -> Result<Self, MatrixError> {
        match Self::load(path)? {
            None => Ok(Self::new(params.clone())),
            Some(m) if &m.params == params => Ok(m),
            Some(m) => Err(MatrixError::Manifest {
                path: path.to_path_buf(),
                message: format!(
                    "belongs to another matrix ({}); use another --out directory or the same \
                     parameters",
                    describe(&m.params)
                ),
            }),
        }
    }

    /// The cell of `persona` × `methodology`.
    pub fn run(&self, persona: &str, methodology: &str) -> Option<&ManifestRun> {
        self.runs
            .iter()
            .find(|r| r.persona == persona && r.methodology == methodology)
    }

    /// Adds a cell (pending) unless it is already listed; returns its session id, the
    /// recorded one when there is one.
    pub fn ensure(&mut self, persona: &str, methodology: &str, session_id: &str) -> String {
        if let Some(run) = self.run(persona, methodology) {
            return run.session_id.clone();
        }
        self.runs.push(ManifestRun {
            persona: persona.to_owned(),
            methodology: methodology.to_owned(),
            session_id: session_id.to_owned(),
            status: RunStatus::Pending,
            error: None,
        });
        session_id.to_owned()
    }

    /// Sets a cell's status (and error); unknown cells are ignored.
    pub fn set_status(
        &mut self,
        persona: &str,
        methodology: &str,
        status: RunStatus,
        error: Option<String>,
    ) {
        if let Some(run) = self
            .runs
            .iter_mut()
            .find(|r| r.persona == persona && r.methodology == methodology)
        {
            run.status = status;
            run.error = error;
        }
    }

    /// Writes the manifest atomically: a temporary file beside it, then a rename.
    pub fn save(&self, path: &Path) -> Result<(), MatrixError> {
        let io = |source| MatrixError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut text = serde_json::to_string_pretty(self).map_err(|e| MatrixError::Manifest {
            path: path.to_path_buf(),
            message: format!("cannot serialise: {e}"),
        })?;
        text.push('\n');
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

fn describe(p: &MatrixParams) -> String {
    format!(
        "concept {}, seed {}, {} turns, srl {}, canonical slots {}",
        p.concept, p.seed, p.turns, p.srl, p.canonical_slots
    )
}

/// Where a matrix's manifest lives: `--out DIR`'s [`MANIFEST_FILE`], or, without `--out`, a
/// file named after the matrix's parameters in a `simulations` folder beside the database.
pub fn manifest_path(
    out: Option<&Path>,
    db: &Path,
    params: &MatrixParams,
    cells: &[(String, String)],
) -> PathBuf {
    if let Some(out) = out {
        return out.join(MANIFEST_FILE);
    }
    let mut key = describe(params);
    for (persona, methodology) in cells {
        key.push_str(&format!("\u{1f}{persona}\u{1f}{methodology}"));
    }
    let dir = db
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    dir.join("simulations").join(format!(
        "matrix-{:016x}.json",
        super::rng::fnv1a(key.as_bytes())
    ))
}

/// A manifest shared by concurrent runs: every change is saved before the call returns.
#[derive(Debug)]
pub struct SharedManifest {
    path: PathBuf,
    inner: Mutex<Manifest>,
}

impl SharedManifest {
    pub fn new(path: PathBuf, manifest: Manifest) -> Self {
        Self {
            path,
            inner: Mutex::new(manifest),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Sets a cell's status and saves the manifest.
    pub fn set_status(
        &self,
        persona: &str,
        methodology: &str,
        status: RunStatus,
        error: Option<String>,
    ) -> Result<(), MatrixError> {
        let mut m = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        m.set_status(persona, methodology, status, error);
        m.save(&self.path)
    }

    /// A copy of the current manifest.
    pub fn snapshot(&self) -> Manifest {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn params() -> MatrixParams {
        MatrixParams {
            concept: "oat_milk".to_owned(),
            seed: 3,
            turns: 6,
            srl: true,
            canonical_slots: true,
        }
    }

    #[test]
    fn specs_parse() {
        let spec =
            MatrixSpec::parse(&args(&["personas=brief, hedging", "methodologies=a,b"])).unwrap();
        assert_eq!(spec.personas, ["brief", "hedging"]);
        assert_eq!(spec.methodologies, ["a", "b"]);
        let spec = MatrixSpec::parse(&args(&["persona=brief"])).unwrap();
        assert!(spec.methodologies.is_empty());
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        for (given, expected) in [
            (vec!["brief,hedging"], "is not KEY=A,B"),
            (vec!["colours=red"], "unknown key 'colours'"),
            (vec!["personas=a", "personas=b"], "given twice"),
            (vec!["personas=,"], "lists nothing"),
            (vec!["personas=a,a"], "lists 'a' twice"),
            (vec!["methodologies=x"], "personas= is required"),
        ] {
            let err = MatrixSpec::parse(&args(&given)).unwrap_err().to_string();
            assert!(err.starts_with("--matrix: "), "{err}");
            assert!(err.contains(expected), "{given:?}: {err}");
        }
    }

    #[test]
    fn manifests_round_trip_and_keep_recorded_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join(MANIFEST_FILE);
        let mut m = Manifest::load_for(&path, &params()).unwrap();
        assert_eq!(m.ensure("brief", "mec", "sim-1"), "sim-1");
        assert_eq!(m.ensure("brief", "mec", "sim-other"), "sim-1");
        m.set_status(
            "brief",
            "mec",
            RunStatus::Failed,
            Some("timeout".to_owned()),
        );
        m.save(&path).unwrap();
        let back = Manifest::load_for(&path, &params()).unwrap();
        assert_eq!(back, m);
        assert!(!path.with_extension("json.tmp").exists());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"status\": \"failed\""), "{text}");
    }

    #[test]
    fn a_manifest_of_another_matrix_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MANIFEST_FILE);
        Manifest::new(params()).save(&path).unwrap();
        let other = MatrixParams {
            seed: 4,
            ..params()
        };
        let err = Manifest::load_for(&path, &other).unwrap_err().to_string();
        assert!(
            err.contains("belongs to another matrix (concept oat_milk, seed 3"),
            "{err}"
        );
        std::fs::write(&path, "{\"version\": 1}").unwrap();
        let err = Manifest::load(&path).unwrap_err().to_string();
        assert!(err.contains("not a matrix manifest"), "{err}");
    }

    #[test]
    fn manifests_without_out_live_beside_the_database() {
        let cells = vec![("brief".to_owned(), "mec".to_owned())];
        let p = manifest_path(None, Path::new("/data/i.db"), &params(), &cells);
        assert!(p.starts_with("/data/simulations"));
        assert_ne!(
            p,
            manifest_path(None, Path::new("/data/i.db"), &params(), &[])
        );
        assert_eq!(
            manifest_path(Some(Path::new("out")), Path::new("i.db"), &params(), &cells),
            Path::new("out").join(MANIFEST_FILE)
        );
    }
}
