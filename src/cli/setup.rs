//! What every interview-running command shares: the model options, the optional pipeline
//! stages, building the pipeline's services, and opening a new or existing session.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use super::CliError;
use crate::config::ConfigDir;
use crate::domain::Understanding;
use crate::embed::{CachedEmbedder, Embedder, MiniLmEmbedder};
use crate::llm::config::{
    FlagLayer, LlmConfig, LlmConfigError, PRICING_FILE, PricingTable, SettingsFile, build_router,
    parse_understanding, resolve, settings_path,
};
use crate::llm::{LlmRouter, LocalProvider};
use crate::model_files::FetchConfig;
use crate::pipeline::{Interview, InterviewSpec, PipelineError, PipelineSettings, Services};
use crate::signals::Catalog;
use crate::speech::ModelChoice;
use crate::speech::live::ListenConfig;
use crate::speech::voice::Voice;
use crate::store::Store;

/// Which models serve the LLM roles. Global: every command accepts these.
#[derive(Debug, Clone, Default, Args)]
pub struct LlmOptions {
    /// Provider for every role at once (anthropic, openai, kimi, deepseek, ollama, local,
    /// scripted, none); overrides the settings file and the environment. `none` runs without
    /// any model: template questions and offline understanding.
    #[arg(long, global = true, value_name = "NAME")]
    pub provider: Option<String>,
    /// How a new session understands answers: `llm` (model calls) or `offline` (the program
    /// itself). Default: `INTERVIEWER_UNDERSTANDING`, the settings file's `understanding`,
    /// else offline on the local and none providers and llm on the others.
    #[arg(long, global = true, value_name = "llm|offline", value_parser = parse_understanding)]
    pub understanding: Option<Understanding>,
    /// LLM settings file (default: ~/.config/interviewer/config.yaml when it exists).
    #[arg(long = "config", global = true, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Scripted LLM replies (YAML/JSON; see the README's "Scripted provider"); implies
    /// `--provider scripted`.
    #[arg(long, global = true, env = "INTERVIEWER_SCRIPT", value_name = "FILE")]
    pub script: Option<PathBuf>,
}

/// Switches for the pipeline's optional stages.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct StageFlags {
    /// Skip stage 2.5 (discourse relations and predicate frames).
    #[arg(long)]
    pub no_srl: bool,
    /// Skip stage 4.5 (canonical slots).
    #[arg(long)]
    pub no_canonical_slots: bool,
    /// Run slot discovery inside the turn, before state computation (the seeds' order),
    /// instead of after the question while the respondent types.
    #[arg(long)]
    pub inline_slot_discovery: bool,
}

impl StageFlags {
    pub fn settings(self) -> PipelineSettings {
        PipelineSettings {
            enable_srl: !self.no_srl,
            enable_canonical_slots: !self.no_canonical_slots,
            inline_slot_discovery: self.inline_slot_discovery,
            ..PipelineSettings::default()
        }
    }
}

/// Every role's provider settings from the layers: defaults, the settings file, the
/// environment and the flags (see [`crate::llm::config`]).
pub fn llm_config(dir: &ConfigDir, options: &LlmOptions) -> Result<LlmConfig, CliError> {
    let env = |var: &str| std::env::var(var).ok();
    let path = settings_path(options.settings.as_deref(), &env);
    let file = path.as_deref().map(SettingsFile::load).transpose()?;
    let pricing_path = dir.root().join(PRICING_FILE);
    let pricing = if pricing_path.is_file() {
        PricingTable::load(&pricing_path)?
    } else {
        PricingTable::default()
    };
    let flags = FlagLayer {
        provider: options.provider.clone(),
        script: options.script.clone(),
        understanding: options.understanding,
    };
    resolve(path.as_deref().zip(file.as_ref()), &env, &flags, pricing)
        .map_err(|e| CliError::Usage(e.to_string()))
}

/// Builds the providers of a resolved configuration. The local model, when a role uses it, is
/// resolved and loaded here (once).
pub fn router_for(config: &LlmConfig) -> Result<LlmRouter, CliError> {
    let env = |var: &str| std::env::var(var).ok();
    let mut local_error = None;
    let built = build_router(config, &env, &mut |local| {
        LocalProvider::load(local).map_err(|e| {
            let message = format!("local model: {e}");
            local_error = Some(message.clone());
            LlmConfigError(message)
        })
    });
    match built {
        Ok(router) => Ok(router),
        // A model that cannot be loaded is a runtime failure, not a usage mistake.
        Err(e) if local_error.is_some() => Err(CliError::Llm(e.to_string())),
        Err(e) => Err(CliError::Usage(e.to_string())),
    }
}

/// The embedding model (MiniLM, resolved as the README describes) behind a text cache. Its
/// weights load on a background thread while the opening question is asked; the first turn's
/// embeddings wait for them if they are not in yet.
pub fn embedder() -> Result<Arc<dyn Embedder>, CliError> {
    let model: Arc<dyn Embedder> =
        Arc::new(MiniLmEmbedder::spawn_default().map_err(|e| CliError::Input(e.to_string()))?);
    Ok(Arc::new(CachedEmbedder::new(model)))
}

/// The settings file's `audio` section (empty without a settings file).
fn audio_settings(options: &LlmOptions) -> Result<crate::llm::config::AudioSection, CliError> {
    let env = |var: &str| std::env::var(var).ok();
    let path = settings_path(options.settings.as_deref(), &env);
    Ok(path
        .as_deref()
        .map(SettingsFile::load)
        .transpose()?
        .map(|f| f.audio)
        .unwrap_or_default())
}

/// The voice that reads questions aloud (`--speak`), or `None` without the flag.
pub fn voice(options: &LlmOptions, speak: bool) -> Result<Option<Voice>, CliError> {
    if !speak {
        return Ok(None);
    }
    let audio = audio_settings(options)?;
    Voice::choose(audio.speak.as_deref())
        .map(Some)
        .map_err(|e| CliError::Usage(e.to_string()))
}

/// How the terminal app listens (F2): the settings file's `audio` section, the speech model
/// fetched quietly on first use (the app owns the terminal).
///
/// The language is the settings file's `audio.language`, else the concept's `language`; a
/// language other than English picks the multilingual model unless `audio.model` names one.
pub fn listen_config(
    options: &LlmOptions,
    concept: Option<&crate::config::Concept>,
) -> Result<ListenConfig, CliError> {
    let audio = audio_settings(options)?;
    let language = audio
        .language
        .as_deref()
        .or(concept.and_then(|c| c.language.as_deref()))
        .map(|l| l.trim().to_ascii_lowercase())
        .filter(|l| !l.is_empty());
    let model = match (&audio.model, &language) {
        (Some(m), _) => ModelChoice::parse(m.trim()),
        (None, Some(l)) if l != "en" => ModelChoice::Base,
        (None, _) => ModelChoice::TinyEn,
    };
    Ok(ListenConfig {
        command: audio.command,
        model,
        language,
        fetch: FetchConfig {
            progress: false,
            ..FetchConfig::from_env()
        },
        partial_every: std::time::Duration::from_secs(1),
        keep: None,
    })
}

/// The study's context a speech model hears whole answers in (`interview --answers-audio`): the
/// concept's name and description, as Whisper's initial prompt. The live listener does not
/// prompt: on the short pieces it decodes while the respondent speaks, a prompt made tiny.en
/// repeat a sentence (`tests/speech.rs`'s live answer, heard "… before work. And that will
/// sleep in a good mood before work.").
pub fn speech_context(concept: &crate::config::Concept) -> String {
    format!("{}. {}", concept.name.trim(), concept.description.trim())
}

/// What an interview-running command sets up before it opens a session.
pub struct Prepared {
    /// Everything the pipeline needs to run a turn.
    pub services: Services,
    /// The understanding mode a new session gets (a resumed one keeps its own), resolved from
    /// `--understanding`, the environment, the settings file and the providers.
    pub understanding: Understanding,
}

/// Resolves the LLM configuration once and builds the pipeline's services from it.
pub fn prepare(
    dir: &ConfigDir,
    options: &LlmOptions,
    flags: StageFlags,
) -> Result<Prepared, CliError> {
    let config = llm_config(dir, options)?;
    Ok(Prepared {
        services: Services {
            llm: Arc::new(router_for(&config)?),
            embedder: embedder()?,
            settings: flags.settings(),
        },
        understanding: config.understanding.value,
    })
}

/// Which session to run: a new one for a concept, or an existing one by id (or `latest`).
#[derive(Debug, Clone, Default)]
pub struct SessionChoice {
    pub concept: Option<String>,
    pub methodology: Option<String>,
    pub max_turns: u32,
    pub resume: Option<Resume>,
    /// The understanding mode of a new session; a resumed one keeps its own.
    pub understanding: Understanding,
}

/// A stored session to reopen, as the user named it (see [`super::sessions::resolve`]).
#[derive(Debug, Clone)]
pub struct Resume {
    /// An id, the start of one, or `latest`.
    pub typed: String,
    /// Where it was typed (`"--resume"`), or empty for a positional argument.
    pub argument: &'static str,
}

/// The chosen session with everything checked that needs no model: the configuration files,
/// and for a resumed session its database and stored record. Commands resolve before they
/// load the models, so a mistyped id, a missing `--db` or a folder passed as a methodology is
/// reported at once, not after a model download.
pub struct Resolved {
    /// The database of a resumed session (a new session's is opened with the interview).
    store: Option<Store>,
    resume_id: Option<String>,
    spec: InterviewSpec,
}

impl Resolved {
    /// The interview's concept.
    pub fn concept(&self) -> &crate::config::Concept {
        &self.spec.concept
    }

    /// The configuration a new session of this choice runs with.
    pub fn into_spec(self) -> InterviewSpec {
        self.spec
    }
}

/// Resolves `choice` against the config folder and, when resuming, the database at `db`.
pub fn resolve_session(
    dir: &ConfigDir,
    db: &Path,
    choice: &SessionChoice,
) -> Result<Resolved, CliError> {
    let (store, existing) = match &choice.resume {
        // Resuming from a file that does not exist is a mistake in `--db`, not a request for
        // an empty database.
        Some(resume) => {
            let store = super::export::open_existing(db).map_err(|e| {
                let quoted = super::sessions::quoted(resume.argument, &resume.typed);
                CliError::Usage(format!("{quoted}: {e}"))
            })?;
            let record = super::sessions::resolve(&store, db, resume.argument, &resume.typed)?;
            (Some(store), Some(record))
        }
        None => (None, None),
    };
    let concept_ref = choice
        .concept
        .clone()
        .or_else(|| existing.as_ref().map(|s| s.concept.clone()))
        .ok_or_else(|| CliError::Usage("--concept is required".to_owned()))?;
    let concept = dir.concept(&concept_ref)?;
    let methodology_ref = choice
        .methodology
        .clone()
        .or_else(|| existing.as_ref().map(|s| s.methodology.clone()))
        .unwrap_or_else(|| concept.methodology.clone());
    let methodology = dir.methodology(&methodology_ref, &Catalog)?;
    if let Some(s) = &existing
        && (s.concept != concept.id || s.methodology != methodology.method.name)
    {
        return Err(CliError::Usage(format!(
            "session {} runs concept '{}' with '{}', not '{}' with '{}'",
            s.id, s.concept, s.methodology, concept.id, methodology.method.name
        )));
    }
    let spec = InterviewSpec {
        methodology,
        concept,
        rubrics: dir.rubrics()?,
        max_turns: choice.max_turns,
        understanding: choice.understanding,
    };
    Ok(Resolved {
        store,
        resume_id: existing.map(|s| s.id),
        spec,
    })
}

/// Creates or reopens the resolved session; a new one gets `understanding` (a resumed one
/// keeps its own).
pub fn open_resolved(
    resolved: Resolved,
    db: &Path,
    understanding: Understanding,
    services: Services,
) -> Result<Interview, CliError> {
    let Resolved {
        store,
        resume_id,
        spec,
    } = resolved;
    let spec = InterviewSpec {
        understanding,
        ..spec
    };
    let store = match store {
        Some(store) => store,
        None => Store::open(db).map_err(|e| CliError::Input(e.to_string()))?,
    };
    match resume_id {
        Some(id) => Interview::open(store, &id, spec, services),
        None => Interview::create(store, spec, services, None),
    }
    .map_err(pipeline_error)
}

/// Resolves and opens the chosen session in one step (the models are already loaded).
pub fn open_interview(
    dir: &ConfigDir,
    db: &Path,
    choice: &SessionChoice,
    services: Services,
) -> Result<Interview, CliError> {
    let resolved = resolve_session(dir, db, choice)?;
    open_resolved(resolved, db, choice.understanding, services)
}

/// A pipeline error as a command failure: config (2), model (3), anything else (1).
pub fn pipeline_error(e: PipelineError) -> CliError {
    match e {
        PipelineError::Config(c) => CliError::Config(c),
        e if e.is_llm() => CliError::Llm(e.to_string()),
        e => CliError::Input(e.to_string()),
    }
}
