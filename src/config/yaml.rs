//! Text → typed value, with the YAML path of the first structural mistake.
//!
//! YAML is first read into a generic tree, then deserialised into our types through
//! `serde_path_to_error`, so a wrong type or an unknown key is reported as
//! `strategies[1].signal_weights.llm.depth: invalid type ...` rather than a bare message.
//! Semantic checks (unknown signals, strategy names) run afterwards on the typed value.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::error::{ConfigError, Problem};

/// Upper bound on a configuration file's size; the largest shipped file is under 20 KiB, and
/// YAML alias expansion on a hostile file must not exhaust memory.
pub const MAX_CONFIG_BYTES: usize = 1024 * 1024;

/// Parses `text` (the contents of `path`) into `T`.
pub fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, ConfigError> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::Syntax {
            path: path.to_path_buf(),
            message: format!(
                "file is {} bytes; the limit is {MAX_CONFIG_BYTES}",
                text.len()
            ),
        });
    }
    let tree: serde_json::Value =
        serde_saphyr::from_str(text).map_err(|e| ConfigError::Syntax {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    if tree.is_null() {
        return Err(ConfigError::invalid(
            path,
            vec![Problem::new("", "the file is empty")],
        ));
    }
    serde_path_to_error::deserialize(tree).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { String::new() } else { at };
        ConfigError::invalid(path, vec![Problem::new(at, e.into_inner().to_string())])
    })
}

/// Reads and parses a file.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}
