//! The LLM settings file: per-role providers and limits, the local model, extra prices.
//!
//! ```yaml
//! provider: local            # every role, unless a role says otherwise
//! understanding: offline     # llm | offline; default: offline on local and none, else llm
//! roles:
//!   extraction: { provider: anthropic, model: claude-sonnet-4-6, effort: medium }
//!   signal_scoring: { provider: kimi, timeout: 45 }
//!   question_generation: { provider: ollama, base_url: "http://gpu-box:11434/v1", model: llama3.1 }
//! local: { model: ~/models/Llama-3.2-1B-Instruct-Q8_0.gguf, threads: 4 }
//! pricing:
//!   "llama3.1": { input: 0, output: 0 }
//! audio: { command: "arecord -q -f S16_LE -r 16000 -c 1 -t raw", model: tiny.en, language: en }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::Price;
use crate::config::{ConfigError, Problem};
use crate::domain::Understanding;
use crate::llm::Role;

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsFile {
    /// Provider for every role.
    #[serde(default)]
    pub provider: Option<String>,
    /// How new sessions understand answers: `llm` or `offline`.
    #[serde(default)]
    pub understanding: Option<String>,
    /// Per-role settings keyed by role name (`extraction`, `slot_discovery`,
    /// `signal_scoring`, `question_generation`, `respondent`).
    #[serde(default)]
    pub roles: BTreeMap<String, RoleSection>,
    #[serde(default)]
    pub local: LocalSection,
    /// Script for the scripted provider (relative to this file).
    #[serde(default)]
    pub script: Option<PathBuf>,
    /// USD per million tokens by model name (a trailing `*` matches a prefix).
    #[serde(default)]
    pub pricing: BTreeMap<String, Price>,
    /// Speech: the recorder, the speech model and its language.
    #[serde(default)]
    pub audio: AudioSection,
}

/// Speech settings.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AudioSection {
    /// A shell command that writes 16 kHz mono s16le PCM to standard output; probed when
    /// absent (`speech::recorder::PROBES`).
    pub command: Option<String>,
    /// `tiny.en`, `base` or a directory with a `CTranslate2` Whisper model.
    pub model: Option<String>,
    /// Language code for a multilingual model (`de`, `fr`, …); picks `base` when not English.
    pub language: Option<String>,
    /// Text-to-speech command for `--speak` (the question is its last argument); probed when
    /// absent (`speech::voice::VOICES`).
    pub speak: Option<String>,
}

/// One role's settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleSection {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    /// Seconds.
    pub timeout: Option<u64>,
    pub effort: Option<String>,
}

/// The embedded local model.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LocalSection {
    /// A GGUF file; when absent the model is resolved (cache, Hugging Face Hub, pip).
    pub model: Option<PathBuf>,
    /// A tokenizer.json; when absent, the one beside the GGUF or the GGUF's own.
    pub tokenizer: Option<PathBuf>,
    /// Threads for inference (default: the machine's cores).
    pub threads: Option<usize>,
}

impl LocalSection {
    /// Paths made relative to the settings file's directory, `~` expanded.
    #[must_use]
    pub fn relative_to(self, file: &Path) -> Self {
        let fix = |p: PathBuf| super::relative(file, &expand_home(&p));
        Self {
            model: self.model.map(fix),
            tokenizer: self.tokenizer.map(fix),
            threads: self.threads,
        }
    }
}

fn expand_home(p: &Path) -> PathBuf {
    match (p.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => p.to_path_buf(),
    }
}

impl SettingsFile {
    /// Reads and validates a settings file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let file: Self = crate::config::yaml::load(path)?;
        file.validate(path)?;
        Ok(file)
    }

    /// Parses and validates settings text (`path` names it in errors).
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let file: Self = crate::config::yaml::parse(path, text)?;
        file.validate(path)?;
        Ok(file)
    }

    fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let mut problems = Vec::new();
        for (name, section) in &self.roles {
            let at = |field: &str| format!("roles.{name}.{field}");
            if Role::parse(name).is_none() {
                let known: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
                problems.push(Problem::new(
                    format!("roles.{name}"),
                    format!("unknown role (known: {})", known.join(", ")),
                ));
            }
            if let Some(t) = section.temperature
                && !(0.0..=2.0).contains(&t)
            {
                problems.push(Problem::new(at("temperature"), "must be from 0 to 2"));
            }
            if section
                .max_tokens
                .is_some_and(|n| !(1..=200_000).contains(&n))
            {
                problems.push(Problem::new(at("max_tokens"), "must be from 1 to 200000"));
            }
            if section.timeout.is_some_and(|n| !(1..=3_600).contains(&n)) {
                problems.push(Problem::new(at("timeout"), "seconds, from 1 to 3600"));
            }
        }
        if let Some(mode) = &self.understanding
            && Understanding::parse(mode).is_none()
        {
            problems.push(Problem::new(
                "understanding",
                format!(
                    "'{mode}' is not an understanding mode (allowed: {})",
                    Understanding::ALLOWED.join(", ")
                ),
            ));
        }
        if self.local.threads == Some(0) {
            problems.push(Problem::new("local.threads", "must be at least 1"));
        }
        for (model, price) in &self.pricing {
            if !(price.input >= 0.0 && price.output >= 0.0) {
                problems.push(Problem::new(
                    format!("pricing.{model}"),
                    "prices must be zero or more",
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::invalid(path, problems))
        }
    }
}
