//! From a resolved [`LlmConfig`] to a router: one provider per distinct configuration, the
//! local model loaded once and shared by every role that uses it.

use std::collections::HashMap;
use std::sync::Arc;

use super::{LlmConfig, LlmConfigError, ProviderKind, RoleConfig};
use crate::llm::{
    AnthropicConfig, AnthropicProvider, LlmProvider, LlmRouter, LocalConfig, LocalProvider,
    NoneProvider, OpenAiConfig, OpenAiProvider, RoleBinding, ScriptedProvider,
};

/// Builds every role's provider. `env` supplies API keys; `load_local` is called at most once,
/// when some role uses the local model (it is slow: it may fetch and load a GGUF).
pub fn build_router(
    config: &LlmConfig,
    env: &dyn Fn(&str) -> Option<String>,
    load_local: &mut dyn FnMut(&LocalConfig) -> Result<LocalProvider, LlmConfigError>,
) -> Result<LlmRouter, LlmConfigError> {
    let mut router = LlmRouter::default();
    let mut shared: HashMap<String, Arc<dyn LlmProvider>> = HashMap::new();
    for role in &config.roles {
        let key = identity(role);
        let provider = if let Some(p) = shared.get(&key) {
            Arc::clone(p)
        } else {
            let p = provider_for(config, role, env, load_local)?;
            shared.insert(key, Arc::clone(&p));
            p
        };
        router.set(
            role.role,
            RoleBinding {
                provider,
                settings: role.settings(),
            },
        );
    }
    Ok(router)
}

/// Roles with the same identity share one provider value.
fn identity(role: &RoleConfig) -> String {
    match role.preset.kind {
        ProviderKind::Local | ProviderKind::Scripted | ProviderKind::None => {
            role.preset.name.to_owned()
        }
        ProviderKind::OpenAi | ProviderKind::Anthropic => format!(
            "{}|{}|{}|{}",
            role.provider.value,
            role.model.value,
            role.base_url.value,
            role.effort.as_ref().map_or("", |e| e.value.as_str())
        ),
    }
}

fn provider_for(
    config: &LlmConfig,
    role: &RoleConfig,
    env: &dyn Fn(&str) -> Option<String>,
    load_local: &mut dyn FnMut(&LocalConfig) -> Result<LocalProvider, LlmConfigError>,
) -> Result<Arc<dyn LlmProvider>, LlmConfigError> {
    let price = config
        .pricing
        .price(&role.model.value)
        .map(|p| (p.input, p.output));
    let fail = |e: crate::llm::LlmError| {
        LlmConfigError(format!(
            "cannot set up {} for the {} role: {e}",
            role.provider.value, role.role
        ))
    };
    Ok(match role.preset.kind {
        ProviderKind::Anthropic => {
            let api_key = config
                .api_key(role, env)?
                .ok_or_else(|| LlmConfigError("anthropic needs an API key".to_owned()))?;
            Arc::new(
                AnthropicProvider::new(AnthropicConfig {
                    base_url: role.base_url.value.clone(),
                    api_key,
                    model: role.model.value.clone(),
                    effort: role.effort.as_ref().map(|e| e.value.clone()),
                    pricing: price,
                })
                .map_err(fail)?,
            )
        }
        ProviderKind::OpenAi => Arc::new(
            OpenAiProvider::new(OpenAiConfig {
                name: role.provider.value.clone(),
                base_url: role.base_url.value.clone(),
                api_key: config.api_key(role, env)?,
                model: role.model.value.clone(),
                include_usage: role.preset.include_usage,
                pricing: price,
            })
            .map_err(fail)?,
        ),
        ProviderKind::Local => {
            // The settings file's paths win over the environment's.
            let mut local = LocalConfig::from_env();
            if let Some(model) = &config.local.model {
                local.model = Some(model.clone());
            }
            if let Some(tokenizer) = &config.local.tokenizer {
                local.tokenizer = Some(tokenizer.clone());
            }
            local.threads = config.local.threads.or(local.threads);
            Arc::new(load_local(&local)?)
        }
        ProviderKind::Scripted => {
            let path = config.script.as_ref().ok_or_else(|| {
                LlmConfigError("the scripted provider needs --script FILE".to_owned())
            })?;
            Arc::new(ScriptedProvider::load(path).map_err(|e| LlmConfigError(e.to_string()))?)
        }
        ProviderKind::None => Arc::new(NoneProvider),
    })
}
