//! The understanding mode new sessions get, resolved by the same layers as the providers.
//!
//! Highest first: the `--understanding` flag, `INTERVIEWER_UNDERSTANDING`, the settings file's
//! `understanding:` key, and a default that follows the providers of the three roles offline
//! understanding replaces (extraction, slot discovery, signal scoring): `offline` when any of
//! them runs on `local` (a small model whose JSON is junk) or `none` (no model), `llm`
//! otherwise. The mode belongs to a session once it is created; a resumed session keeps its
//! own whatever this says.

use std::path::Path;

use super::{FlagLayer, LlmConfigError, ProviderKind, RoleConfig, Setting, SettingsFile, Source};
use crate::domain::Understanding;
use crate::llm::Role;

/// Environment variable naming the understanding mode (`llm` or `offline`).
pub const UNDERSTANDING_ENV: &str = "INTERVIEWER_UNDERSTANDING";

/// The roles whose work offline understanding does instead of a model.
const UNDERSTANDING_ROLES: [Role; 3] = [Role::Extraction, Role::SlotDiscovery, Role::SignalScoring];

/// Parses a mode as written by a user; the error names the allowed values.
pub fn parse_understanding(value: &str) -> Result<Understanding, String> {
    Understanding::parse(value).ok_or_else(|| {
        format!(
            "'{}' is not an understanding mode (allowed: {})",
            value.trim(),
            Understanding::ALLOWED.join(", ")
        )
    })
}

/// The mode from every layer, with the layer that set it. `llm` with a modelless provider on
/// one of the understanding roles is refused: every answer would fail at extraction.
pub(super) fn resolve(
    roles: &[RoleConfig],
    file: Option<(&Path, &SettingsFile)>,
    env: &dyn Fn(&str) -> Option<String>,
    flags: &FlagLayer,
) -> Result<Setting<Understanding>, LlmConfigError> {
    let mut mode = by_provider(roles);
    if let Some((path, f)) = file
        && let Some(value) = &f.understanding
    {
        let value = parse_understanding(value)
            .map_err(|e| LlmConfigError(format!("file {}: understanding: {e}", path.display())))?;
        mode = Setting::new(value, Source::File(path.to_path_buf()));
    }
    if let Some(value) = env(UNDERSTANDING_ENV).filter(|v| !v.trim().is_empty()) {
        let value = parse_understanding(&value)
            .map_err(|e| LlmConfigError(format!("env {UNDERSTANDING_ENV}: {e}")))?;
        mode = Setting::new(value, Source::Env(UNDERSTANDING_ENV.to_owned()));
    }
    if let Some(value) = flags.understanding {
        mode = Setting::new(value, Source::Flag("--understanding"));
    }
    if mode.value == Understanding::Llm
        && let Some(r) = understanding_roles(roles).find(|r| r.preset.kind == ProviderKind::None)
    {
        return Err(LlmConfigError(format!(
            "understanding 'llm' ({}) needs a model for the {} role, but it uses the none \
             provider ({}); use --understanding offline or give the role a model",
            mode.source, r.role, r.provider.source
        )));
    }
    Ok(mode)
}

fn understanding_roles(roles: &[RoleConfig]) -> impl Iterator<Item = &RoleConfig> {
    roles
        .iter()
        .filter(|r| UNDERSTANDING_ROLES.contains(&r.role))
}

/// `offline` when an understanding role runs on `local` or `none`, else `llm`; the source
/// names the provider that decided.
fn by_provider(roles: &[RoleConfig]) -> Setting<Understanding> {
    let small = understanding_roles(roles)
        .find(|r| matches!(r.preset.kind, ProviderKind::Local | ProviderKind::None));
    if let Some(r) = small {
        return Setting::new(
            Understanding::Offline,
            Source::Provider(r.provider.value.clone()),
        );
    }
    let name = understanding_roles(roles)
        .next()
        .map_or_else(String::new, |r| r.provider.value.clone());
    Setting::new(Understanding::Llm, Source::Provider(name))
}
