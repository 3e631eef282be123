//! API keys: read from the environment, shown as `ApiKey(***)` everywhere.

use std::fmt;

/// A provider's API key. It has no `Serialize`, and `Debug`/`Display` never print it; only
/// [`ApiKey::expose`] gives the text, for building the request's auth header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key from text; `None` when it is empty or blank.
    pub fn new(value: impl Into<String>) -> Option<Self> {
        let value = value.into();
        let trimmed = value.trim();
        (!trimmed.is_empty()).then(|| Self(trimmed.to_owned()))
    }

    /// The key in environment variable `var`, if set and not blank.
    pub fn from_env(var: &str) -> Option<Self> {
        std::env::var(var).ok().and_then(Self::new)
    }

    /// The key itself. Use only to build an auth header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `***`: for messages a server
    /// echoes back, such as an "invalid key" explanation.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_print() {
        let key = ApiKey::new(" sk-live-123 ").unwrap();
        assert_eq!(key.expose(), "sk-live-123");
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        assert_eq!(key.to_string(), "ApiKey(***)");
        assert!(!format!("{key:?} {key} {key:#?}").contains("sk-live"));
        assert!(ApiKey::new("  ").is_none());
        assert_eq!(
            key.redact("Incorrect API key provided: sk-live-123."),
            "Incorrect API key provided: ***."
        );
    }
}
