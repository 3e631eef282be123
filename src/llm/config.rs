//! Which provider, model and settings each LLM role uses, and where each setting came from.
//!
//! Layers, lowest first: built-in defaults < settings file (`~/.config/interviewer/config.yaml`
//! or `--config FILE`) < environment < the `--provider` flag. [`resolve`] reads every layer
//! through arguments (the environment is a lookup function), so tests never touch the process
//! environment; [`LlmConfig::describe`] says, per role, which layer set each value, which is
//! what `interviewer doctor` prints.
//!
//! With nothing configured a role uses the seed's provider for it (Anthropic for extraction and
//! questions, Kimi for scoring and slot discovery) when that provider's key is in the
//! environment, else the first provider with a key (Anthropic, OpenAI, Kimi, DeepSeek), else
//! the embedded local model. A model or base URL set in a lower layer than the role's provider
//! belongs to a different provider and is dropped.
//!
//! The session's understanding mode (`llm` or `offline`) is resolved here too, by the same
//! layers (see [`understanding`]): its default follows the providers.

mod build;
mod file;
mod pricing;
mod understanding;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use build::build_router;
pub use file::{AudioSection, LocalSection, RoleSection, SettingsFile};
pub use pricing::{PRICING_FILE, Price, PricingTable};
pub use understanding::{UNDERSTANDING_ENV, parse_understanding};

use super::{ApiKey, Role, RoleSettings};
use crate::domain::Understanding;

/// Names the settings file when `--config` is not given.
pub const SETTINGS_ENV: &str = "INTERVIEWER_LLM_CONFIG";

/// The kind of client a provider name maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Anthropic,
    OpenAi,
    Local,
    Scripted,
    /// No model: template questions and offline understanding.
    None,
}

/// A provider name with its endpoint, key variable and default model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub kind: ProviderKind,
    pub base_url: &'static str,
    /// Environment variable holding the key; `None` for providers that need none.
    pub key_env: Option<&'static str>,
    pub default_model: &'static str,
    /// Whether the endpoint accepts `stream_options.include_usage`.
    pub include_usage: bool,
}

/// Every provider name the configuration accepts.
pub const PRESETS: [Preset; 8] = [
    Preset {
        name: "anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com",
        key_env: Some("ANTHROPIC_API_KEY"),
        default_model: "claude-sonnet-4-6",
        include_usage: false,
    },
    Preset {
        name: "openai",
        kind: ProviderKind::OpenAi,
        base_url: "https://api.openai.com/v1",
        key_env: Some("OPENAI_API_KEY"),
        default_model: "gpt-4.1-mini",
        include_usage: true,
    },
    Preset {
        name: "kimi",
        kind: ProviderKind::OpenAi,
        base_url: "https://api.moonshot.ai/v1",
        key_env: Some("KIMI_API_KEY"),
        default_model: "kimi-k2-0905-preview",
        include_usage: false,
    },
    Preset {
        name: "deepseek",
        kind: ProviderKind::OpenAi,
        base_url: "https://api.deepseek.com",
        key_env: Some("DEEPSEEK_API_KEY"),
        default_model: "deepseek-chat",
        include_usage: true,
    },
    Preset {
        name: "ollama",
        kind: ProviderKind::OpenAi,
        base_url: "http://localhost:11434/v1",
        key_env: None,
        default_model: "llama3.2",
        include_usage: true,
    },
    Preset {
        name: "local",
        kind: ProviderKind::Local,
        base_url: "",
        key_env: None,
        default_model: "",
        include_usage: false,
    },
    Preset {
        name: "scripted",
        kind: ProviderKind::Scripted,
        base_url: "",
        key_env: None,
        default_model: "",
        include_usage: false,
    },
    Preset {
        name: "none",
        kind: ProviderKind::None,
        base_url: "",
        key_env: None,
        default_model: "",
        include_usage: false,
    },
];

/// The default timeout of a role on the local model: prompts of a few thousand tokens take tens
/// of seconds on a laptop CPU, where a hosted model answers in a few.
pub const LOCAL_TIMEOUT: Duration = Duration::from_secs(180);

/// Reply budgets on the local model. The small model rambles rather than stopping: a question
/// is cut to about 96 tokens (under the parser's 600 characters), and the structured replies,
/// whose JSON the constrained decoder closes as the budget runs out, get what a turn's worth
/// of concepts, slots or scores needs.
fn local_max_tokens(role: Role) -> u32 {
    match role {
        Role::Extraction => 384,
        Role::SlotDiscovery | Role::SignalScoring => 256,
        Role::QuestionGeneration => 96,
        Role::Respondent => 160,
    }
}

/// Providers tried, in order, for a role whose own default has no key.
const KEYED_FALLBACK_ORDER: [&str; 4] = ["anthropic", "openai", "kimi", "deepseek"];

impl Preset {
    pub fn find(name: &str) -> Option<&'static Preset> {
        PRESETS.iter().find(|p| p.name == name)
    }

    fn names() -> String {
        PRESETS
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The seed's provider for each role ("three-client architecture").
fn seed_provider(role: Role) -> &'static str {
    match role {
        Role::SignalScoring | Role::SlotDiscovery => "kimi",
        Role::Extraction | Role::QuestionGeneration | Role::Respondent => "anthropic",
    }
}

/// The seed's Sonnet effort per role: medium for extraction, low for questions.
fn seed_effort(role: Role) -> Option<&'static str> {
    match role {
        Role::Extraction => Some("medium"),
        Role::QuestionGeneration => Some("low"),
        _ => None,
    }
}

/// The layer a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Built in.
    Default,
    /// Built in, chosen because this variable holds a key.
    KeyPresent(&'static str),
    /// The settings file.
    File(PathBuf),
    /// An environment variable.
    Env(String),
    /// A command-line flag.
    Flag(&'static str),
    /// Built in, following the named provider (the understanding mode's default).
    Provider(String),
}

impl Source {
    /// Higher layers override lower ones.
    fn rank(&self) -> u8 {
        match self {
            Self::Default | Self::KeyPresent(_) | Self::Provider(_) => 0,
            Self::File(_) => 1,
            Self::Env(_) => 2,
            Self::Flag(_) => 3,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("default"),
            Self::KeyPresent(var) => write!(f, "default ({var} is set)"),
            Self::File(p) => write!(f, "file {}", p.display()),
            Self::Env(var) => write!(f, "env {var}"),
            Self::Flag(flag) => write!(f, "flag {flag}"),
            Self::Provider(name) => write!(f, "default for provider {name}"),
        }
    }
}

/// A value and the layer that set it.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Setting<T> {
    fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }
}

/// One role's resolved configuration.
#[derive(Debug, Clone)]
pub struct RoleConfig {
    pub role: Role,
    pub preset: &'static Preset,
    pub provider: Setting<String>,
    /// Empty for the local and scripted providers, which name their model when loaded.
    pub model: Setting<String>,
    pub base_url: Setting<String>,
    pub temperature: Setting<f32>,
    pub max_tokens: Setting<u32>,
    pub timeout: Setting<Duration>,
    /// Anthropic's effort level; `None` for other providers.
    pub effort: Option<Setting<String>>,
}

impl RoleConfig {
    pub fn settings(&self) -> RoleSettings {
        RoleSettings {
            temperature: self.temperature.value,
            max_tokens: self.max_tokens.value,
            timeout: self.timeout.value,
        }
    }
}

/// Every role's configuration plus what the local and scripted providers need.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    pub roles: Vec<RoleConfig>,
    pub local: LocalSection,
    pub script: Option<PathBuf>,
    pub pricing: PricingTable,
    /// The settings file read, if any.
    pub file: Option<PathBuf>,
    /// How new sessions understand answers: model calls or the program itself.
    pub understanding: Setting<Understanding>,
}

/// What the command line contributes.
#[derive(Debug, Clone, Default)]
pub struct FlagLayer {
    pub provider: Option<String>,
    pub script: Option<PathBuf>,
    /// `--understanding`.
    pub understanding: Option<Understanding>,
}

/// A configuration that cannot be used, with where the offending value came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LlmConfigError(pub String);

impl LlmConfig {
    pub fn role(&self, role: Role) -> Option<&RoleConfig> {
        self.roles.iter().find(|r| r.role == role)
    }

    /// Questions written from the methodology's templates, no model call: what `import` uses,
    /// where the engine's question is only recorded beside the one the interviewer asked
    /// (its strategy and focus are what count). `why` names the command.
    pub fn template_questions(&mut self, why: &'static str) {
        let Some(none) = PRESETS.iter().find(|p| p.name == "none") else {
            return;
        };
        for r in self
            .roles
            .iter_mut()
            .filter(|r| r.role == Role::QuestionGeneration)
        {
            r.preset = none;
            r.provider = Setting::new(none.name.to_owned(), Source::Flag(why));
            r.model = Setting::new(String::new(), Source::Flag(why));
        }
    }

    /// The API key a role needs, from its provider's variable; an error names the role, the
    /// provider and where the provider was chosen.
    pub fn api_key(
        &self,
        role: &RoleConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<ApiKey>, LlmConfigError> {
        let Some(var) = role.preset.key_env else {
            return Ok(None);
        };
        match env(var).and_then(ApiKey::new) {
            Some(key) => Ok(Some(key)),
            None => Err(LlmConfigError(format!(
                "the {} role uses {} ({}) but {var} is not set",
                role.role, role.provider.value, role.provider.source
            ))),
        }
    }

    /// A report of every role's settings and their sources.
    pub fn describe(&self) -> String {
        let mut text = String::new();
        if let Some(f) = &self.file {
            text.push_str(&format!("settings file: {}\n", f.display()));
        } else {
            text.push_str("settings file: none\n");
        }
        text.push_str(&format!(
            "understanding: {:<34} {}\n",
            self.understanding.value.as_str(),
            self.understanding.source
        ));
        for r in &self.roles {
            text.push_str(&format!("{}\n", r.role));
            let line = |name: &str, value: &str, source: &Source| {
                format!("  {name:<12} {value:<34} {source}\n")
            };
            text.push_str(&line("provider", &r.provider.value, &r.provider.source));
            let model = if r.preset.kind == ProviderKind::None {
                "(no model)"
            } else if r.model.value.is_empty() {
                "(named when loaded)"
            } else {
                &r.model.value
            };
            text.push_str(&line("model", model, &r.model.source));
            if !r.base_url.value.is_empty() {
                text.push_str(&line("base_url", &r.base_url.value, &r.base_url.source));
            }
            text.push_str(&line(
                "temperature",
                &r.temperature.value.to_string(),
                &r.temperature.source,
            ));
            text.push_str(&line(
                "max_tokens",
                &r.max_tokens.value.to_string(),
                &r.max_tokens.source,
            ));
            text.push_str(&line(
                "timeout",
                &format!("{} s", r.timeout.value.as_secs()),
                &r.timeout.source,
            ));
            if let Some(e) = &r.effort {
                text.push_str(&line("effort", &e.value, &e.source));
            }
        }
        text
    }
}

/// The settings file to read: `--config FILE`, else `$INTERVIEWER_LLM_CONFIG`, else
/// `~/.config/interviewer/config.yaml` when it exists.
pub fn settings_path(
    explicit: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = env(SETTINGS_ENV).filter(|v| !v.trim().is_empty()) {
        return Some(PathBuf::from(p));
    }
    let home = dirs::config_dir()?.join("interviewer").join("config.yaml");
    home.is_file().then_some(home)
}

/// Resolves every role from the layers. `file` is the parsed settings file with its path;
/// `pricing` the table shipped in the config directory (the file may add entries).
pub fn resolve(
    file: Option<(&Path, &SettingsFile)>,
    env: &dyn Fn(&str) -> Option<String>,
    flags: &FlagLayer,
    mut pricing: PricingTable,
) -> Result<LlmConfig, LlmConfigError> {
    let mut roles = Vec::new();
    for role in Role::ALL {
        roles.push(resolve_role(role, file, env, flags)?);
    }
    let mut local = LocalSection::default();
    let mut script = None;
    if let Some((path, f)) = file {
        local = f.local.clone().relative_to(path);
        script = f.script.as_ref().map(|s| relative(path, s));
        pricing.extend(f.pricing.iter().map(|(k, v)| (k.clone(), *v)));
    }
    if let Some(s) = &flags.script {
        script = Some(s.clone());
    }
    let uses_script = roles
        .iter()
        .any(|r| r.preset.kind == ProviderKind::Scripted);
    if uses_script && script.is_none() {
        return Err(LlmConfigError(
            "the scripted provider needs a script: pass --script FILE or set INTERVIEWER_SCRIPT"
                .to_owned(),
        ));
    }
    let understanding = understanding::resolve(&roles, file, env, flags)?;
    Ok(LlmConfig {
        roles,
        local,
        script,
        pricing,
        file: file.map(|(p, _)| p.to_path_buf()),
        understanding,
    })
}

/// Temperature, max tokens and timeout.
type Limits = (Setting<f32>, Setting<u32>, Setting<Duration>);

/// The layers as seen by one role.
struct RoleLayers<'a> {
    role: Role,
    file: Option<(&'a Path, &'a SettingsFile)>,
    section: Option<&'a RoleSection>,
    env: &'a dyn Fn(&str) -> Option<String>,
    /// The role's name in environment variables (`EXTRACTION`).
    upper: String,
}

impl RoleLayers<'_> {
    /// `LLM_<ROLE>_<name>` when set and not blank, with its source.
    fn env_var(&self, name: &str) -> Option<(String, Source)> {
        self.env_named(format!("LLM_{}_{name}", self.upper))
    }

    fn env_named(&self, var: String) -> Option<(String, Source)> {
        (self.env)(&var)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .map(|v| (v, Source::Env(var)))
    }

    /// A value from the settings file, with its source.
    fn in_file<T>(&self, pick: impl Fn(&RoleSection) -> Option<T>) -> Option<Setting<T>> {
        let (path, _) = self.file?;
        self.section
            .and_then(pick)
            .map(|v| Setting::new(v, Source::File(path.to_path_buf())))
    }

    fn has_key(&self, var: &str) -> bool {
        (self.env)(var).is_some_and(|v| !v.trim().is_empty())
    }

    /// Default → file (all roles, then the role) → seed env → role env → flag.
    fn provider(&self, flags: &FlagLayer) -> Setting<String> {
        let seed = seed_provider(self.role);
        let mut provider = match seed_preset_key(seed) {
            Some(var) if self.has_key(var) => {
                Setting::new(seed.to_owned(), Source::KeyPresent(var))
            }
            _ => KEYED_FALLBACK_ORDER
                .iter()
                .filter_map(|name| Preset::find(name))
                .find_map(|p| {
                    p.key_env
                        .filter(|var| self.has_key(var))
                        .map(|var| Setting::new(p.name.to_owned(), Source::KeyPresent(var)))
                })
                .unwrap_or_else(|| Setting::new("local".to_owned(), Source::Default)),
        };
        if let Some((path, f)) = self.file
            && let Some(p) = &f.provider
        {
            provider = Setting::new(p.clone(), Source::File(path.to_path_buf()));
        }
        if let Some(p) = self.in_file(|s| s.provider.clone()) {
            provider = p;
        }
        if let Some((v, s)) = seed_env_var(self.role).and_then(|var| self.env_named(var.to_owned()))
        {
            provider = Setting::new(v, s);
        }
        if let Some((v, s)) = self.env_var("PROVIDER") {
            provider = Setting::new(v, s);
        }
        if let Some(p) = &flags.provider {
            provider = Setting::new(p.clone(), Source::Flag("--provider"));
        } else if flags.script.is_some() {
            provider = Setting::new("scripted".to_owned(), Source::Flag("--script"));
        }
        provider
    }

    /// A provider-specific value (model, base URL): only from layers at or above the
    /// provider's, else the provider's default.
    fn provider_specific(
        &self,
        provider: &Setting<String>,
        pick: impl Fn(&RoleSection) -> Option<String>,
        name: &str,
        default: &str,
    ) -> Setting<String> {
        let mut out = Setting::new(default.to_owned(), Source::Default);
        if let Some(v) = self.in_file(pick) {
            out = v;
        }
        if let Some((v, s)) = self.env_var(name) {
            out = Setting::new(v, s);
        }
        if out.source.rank() < provider.source.rank() {
            out = Setting::new(default.to_owned(), Source::Default);
        }
        out
    }

    /// Temperature, max tokens and timeout: defaults → file → environment.
    fn limits(&self) -> Result<Limits, LlmConfigError> {
        let defaults = self.role.default_settings();
        let mut temperature = self
            .in_file(|s| s.temperature)
            .unwrap_or_else(|| Setting::new(defaults.temperature, Source::Default));
        let mut max_tokens = self
            .in_file(|s| s.max_tokens)
            .unwrap_or_else(|| Setting::new(defaults.max_tokens, Source::Default));
        let mut timeout = self
            .in_file(|s| s.timeout.map(Duration::from_secs))
            .unwrap_or_else(|| Setting::new(defaults.timeout, Source::Default));
        // Parsing and range checks are `RoleSettings::with_env`'s; here we only record sources.
        let parsed = defaults
            .with_env(self.role, |var| (self.env)(var))
            .map_err(LlmConfigError)?;
        if let Some((_, s)) = self.env_var("TEMPERATURE") {
            temperature = Setting::new(parsed.temperature, s);
        }
        if let Some((_, s)) = self.env_var("MAX_TOKENS") {
            max_tokens = Setting::new(parsed.max_tokens, s);
        }
        if let Some((_, s)) = self.env_var("TIMEOUT") {
            timeout = Setting::new(parsed.timeout, s);
        }
        Ok((temperature, max_tokens, timeout))
    }

    /// Anthropic's effort: the seed's per role → file → environment, checked.
    fn effort(&self) -> Result<Option<Setting<String>>, LlmConfigError> {
        let mut effort =
            seed_effort(self.role).map(|e| Setting::new(e.to_owned(), Source::Default));
        if let Some(e) = self.in_file(|s| s.effort.clone()) {
            effort = Some(e);
        }
        if let Some((v, s)) = self.env_var("EFFORT") {
            effort = Some(Setting::new(v, s));
        }
        match &effort {
            Some(e) if !["low", "medium", "high"].contains(&e.value.as_str()) => {
                Err(LlmConfigError(format!(
                    "{}: effort '{}' for the {} role must be low, medium or high",
                    e.source, e.value, self.role
                )))
            }
            _ => Ok(effort),
        }
    }
}

/// One role's settings from every layer.
fn resolve_role(
    role: Role,
    file: Option<(&Path, &SettingsFile)>,
    env: &dyn Fn(&str) -> Option<String>,
    flags: &FlagLayer,
) -> Result<RoleConfig, LlmConfigError> {
    let layers = RoleLayers {
        role,
        file,
        section: file.and_then(|(_, f)| f.roles.get(role.as_str())),
        env,
        upper: role.as_str().to_uppercase(),
    };
    let provider = layers.provider(flags);
    let preset = Preset::find(&provider.value).ok_or_else(|| {
        LlmConfigError(format!(
            "{}: unknown provider '{}' for the {role} role (known: {})",
            provider.source,
            provider.value,
            Preset::names()
        ))
    })?;
    let model = layers.provider_specific(
        &provider,
        |s| s.model.clone(),
        "MODEL",
        preset.default_model,
    );
    let base_url = layers.provider_specific(
        &provider,
        |s| s.base_url.clone(),
        "BASE_URL",
        preset.base_url,
    );
    if preset.kind == ProviderKind::OpenAi
        && !(base_url.value.starts_with("http://") || base_url.value.starts_with("https://"))
    {
        return Err(LlmConfigError(format!(
            "{}: base URL '{}' for the {role} role must start with http:// or https://",
            base_url.source, base_url.value
        )));
    }
    let (temperature, mut max_tokens, mut timeout) = layers.limits()?;
    if preset.kind == ProviderKind::Local {
        if timeout.source == Source::Default {
            timeout = Setting::new(LOCAL_TIMEOUT, Source::Default);
        }
        if max_tokens.source == Source::Default {
            max_tokens = Setting::new(local_max_tokens(role), Source::Default);
        }
    }
    let effort = if preset.kind == ProviderKind::Anthropic {
        layers.effort()?
    } else {
        None
    };
    Ok(RoleConfig {
        role,
        preset,
        provider,
        model,
        base_url,
        temperature,
        max_tokens,
        timeout,
        effort,
    })
}

fn seed_preset_key(name: &str) -> Option<&'static str> {
    Preset::find(name).and_then(|p| p.key_env)
}

/// The seed's provider variables that are not also a role's own: scoring (signal scoring and
/// slot discovery) and generation. (`LLM_EXTRACTION_PROVIDER` is the extraction role's own.)
fn seed_env_var(role: Role) -> Option<&'static str> {
    match role {
        Role::SignalScoring | Role::SlotDiscovery => Some("LLM_SCORING_PROVIDER"),
        Role::QuestionGeneration => Some("LLM_GENERATION_PROVIDER"),
        Role::Extraction | Role::Respondent => None,
    }
}

/// A path from the settings file, relative to the file's directory.
fn relative(file: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        file.parent().map_or_else(|| p.to_path_buf(), |d| d.join(p))
    }
}

#[cfg(test)]
mod tests;
