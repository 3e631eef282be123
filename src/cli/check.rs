//! `interviewer check [PATH...]`: validate the shipped config (default) or given files and
//! directories, one summary line per file, every problem listed under a failing file.
//!
//! Beyond each file's own validation, a methodology's question templates must pass the
//! question check once filled in: that check lives with the prompts, above the config layer,
//! so it is run from here.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, emit};
use crate::config::{ConfigDir, ConfigError, FileKind, Methodology, Problem, check_file};
use crate::prompts::check_question;
use crate::signals::{Catalog, Registry, catalog};

/// The focus a template is checked with: as long as the shipped labels get.
const SAMPLE_FOCUS: &str = "feel less guilty about my footprint";
/// The topic a template is checked with: the longest shipped topic.
const SAMPLE_TOPIC: &str = "oat milk as an alternative to dairy milk";

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
            .and_then(|summary| cross_check(dir, path, *kind).map(|notes| (summary, notes)))
        {
            Ok((summary, notes)) => {
                emit(out, &format!("ok    {}  {summary}\n", path.display()))?;
                for n in notes {
                    emit(out, &format!("      note: {}: {n}\n", path.display()))?;
                }
            }
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
/// a methodology's name must match its file name (ids are file stems). Returns what is worth
/// knowing but not wrong: weights on signals the methodology's `signals:` section leaves out.
fn cross_check(
    dir: &ConfigDir,
    path: &Path,
    kind: Option<FileKind>,
) -> Result<Vec<Problem>, ConfigError> {
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
        let mut problems = template_problems(&m);
        if m.method.name != stem {
            let reason = format!(
                "name '{}' differs from the file name '{stem}'; ids are file names",
                m.method.name
            );
            problems.insert(0, Problem::new("method.name", reason));
        }
        if !problems.is_empty() {
            return Err(ConfigError::invalid(path, problems));
        }
        let registry = Registry::standard();
        let plan = registry.plan_for(&m);
        return Ok(m.unlisted_weights(&|key| registry.computes(plan.as_deref(), key)));
    }
    Ok(Vec::new())
}

/// Every question template that, filled with [`SAMPLE_FOCUS`] and [`SAMPLE_TOPIC`], fails the
/// question check with the signal catalogue's and the methodology's strategy names forbidden.
fn template_problems(m: &Methodology) -> Vec<Problem> {
    let terms: Vec<&str> = catalog::SIGNALS
        .iter()
        .map(|s| s.name)
        .chain(m.strategies.iter().map(|s| s.name.as_str()))
        .collect();
    let opening = m
        .method
        .opening_templates
        .iter()
        .enumerate()
        .map(|(j, t)| (format!("method.opening_templates[{j}]"), t.as_str()));
    let strategies = m.strategies.iter().enumerate().flat_map(|(i, s)| {
        s.all_templates()
            .map(move |(key, j, t)| (format!("strategies[{i}].{key}[{j}]"), t))
    });
    opening
        .chain(strategies)
        .filter_map(|(at, template)| {
            let filled = template
                .replace("{focus}", SAMPLE_FOCUS)
                .replace("{topic}", SAMPLE_TOPIC);
            check_question(&filled, &terms).err().map(|problem| {
                Problem::new(
                    at,
                    format!(
                        "'{}' fails the question check: it {problem} (filled with focus \
                         '{SAMPLE_FOCUS}' and topic '{SAMPLE_TOPIC}')",
                        template.trim()
                    ),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn shipped_templates_pass_the_question_check() {
        let dir = ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"));
        for id in dir.ids(FileKind::Methodology) {
            let m = dir.methodology(&id, &crate::signals::Catalog).unwrap();
            let problems: Vec<String> = template_problems(&m)
                .iter()
                .map(ToString::to_string)
                .collect();
            assert!(problems.is_empty(), "{id}: {problems:?}");
        }
    }

    #[test]
    fn a_template_that_fails_the_check_is_named_with_its_reason() {
        let yaml = "method: {name: m, opening_templates: [\"What is your strategy for {topic}?\"]}\n\
            ontology: {nodes: [{name: attribute, level: 1}]}\n\
            strategies:\n  - name: deepen\n    signal_weights: {}\n    question_templates:\n\
            \u{20}     - 'Why is \"{focus}\" important to you?'\n\
            \u{20}     - 'Is \"{focus}\" worth weight 0.6 to you?'\n\
            \u{20}     - 'deepen: why?'\n";
        let m = crate::config::parse_methodology(Path::new("m.yaml"), yaml, &Catalog).unwrap();
        let problems: Vec<String> = template_problems(&m)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            problems[0].starts_with("method.opening_templates[0]: "),
            "{}",
            problems[0]
        );
        assert!(
            problems[0].contains("mentions 'strategy'"),
            "{}",
            problems[0]
        );
        assert!(
            problems[1].starts_with("strategies[0].question_templates[1]: ")
                && problems[1].contains("contains a weight or score"),
            "{}",
            problems[1]
        );
        assert!(
            problems[2].contains("names the signal or strategy 'deepen'"),
            "{}",
            problems[2]
        );
    }

    /// `check` notes a weight whose signal the `signals:` section leaves out (it never counts),
    /// and passes the file; the shipped methodologies have none.
    #[test]
    fn weights_on_unlisted_signals_are_noted_not_failed() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/config");
        let dir = ConfigDir::new(root);
        let mut out = Vec::new();
        run(&dir, &CheckArgs { paths: Vec::new() }, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("note:"), "{text}");

        let tmp = tempfile::tempdir().unwrap();
        let methodologies = tmp.path().join("methodologies");
        std::fs::create_dir(&methodologies).unwrap();
        let yaml = "method: {name: m, opening_templates: [\"What comes to mind about {topic}?\"]}\n\
            ontology: {nodes: [{name: attribute, level: 1}]}\n\
            signals: {llm: [llm.engagement]}\n\
            strategies:\n  - name: deepen\n    signal_weights: {llm.engagement.high: 1.0, \
            llm.valence.low: 0.5}\n";
        std::fs::write(methodologies.join("m.yaml"), yaml).unwrap();
        let mut out = Vec::new();
        run(
            &ConfigDir::new(tmp.path()),
            &CheckArgs {
                paths: vec![methodologies.join("m.yaml")],
            },
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("ok "), "{text}");
        assert_eq!(text.matches("note:").count(), 1, "{text}");
        assert!(
            text.contains("strategies[0].signal_weights.llm.valence.low"),
            "{text}"
        );
    }
}
