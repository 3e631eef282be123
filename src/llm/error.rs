//! [`LlmError`]: why a model call produced no answer, with what the failed call cost.
//!
//! Every variant that comes from a real exchange carries the attempts made and the time spent
//! (backoff included), so a failed call's usage row is as exact as a successful one's. A
//! provider fills in one attempt; the router overwrites both with the facts of the whole call.
//! Messages name the provider and never contain a prompt or an API key.

use std::time::Duration;

use super::Role;

/// Why a call produced no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// No answer within the role's timeout (or the connection could not be opened in time).
    #[error("{provider}: {}{}", timed_out(*.timeout), after(*.attempts))]
    Timeout {
        provider: String,
        /// The limit one attempt had.
        timeout: Duration,
        attempts: u32,
        elapsed: Duration,
    },
    /// HTTP 429 (or a simulated rate limit) on the last attempt.
    #[error("{provider}: rate limited (HTTP 429, {}){}", count(*.attempts), wait(*.retry_after))]
    RateLimited {
        provider: String,
        /// What the server's `retry-after` header asked for, when it sent one.
        retry_after: Option<Duration>,
        attempts: u32,
        elapsed: Duration,
    },
    /// A status other than 2xx and 429, with the provider's own message (at most
    /// [`MAX_MESSAGE_CHARS`] characters) or the status's reason when the body had none.
    #[error("{provider}: HTTP {status}: {message}{}", after(*.attempts))]
    Http {
        provider: String,
        status: u16,
        message: String,
        attempts: u32,
        elapsed: Duration,
    },
    /// The request could not be sent or the response body could not be read.
    #[error("{provider}: request failed: {message}{}", after(*.attempts))]
    Connection {
        provider: String,
        message: String,
        attempts: u32,
        elapsed: Duration,
    },
    /// A 2xx response whose body is not what the API documents.
    #[error("{provider}: malformed response: {message}{}", after(*.attempts))]
    MalformedResponse {
        provider: String,
        message: String,
        attempts: u32,
        elapsed: Duration,
    },
    /// A well-formed response without any text.
    #[error("{provider}: empty response (the model returned no text){}", after(*.attempts))]
    EmptyResponse {
        provider: String,
        attempts: u32,
        elapsed: Duration,
    },
    /// An error the provider reported inside a successful response: an SSE `error` event, or
    /// an `error` object in a stream chunk or a 200 body.
    #[error("{provider}: the provider reported an error: {message}{}", after(*.attempts))]
    ProviderError {
        provider: String,
        message: String,
        attempts: u32,
        elapsed: Duration,
    },
    /// A provider that cannot be built from its configuration.
    #[error("{provider}: invalid configuration: {message}")]
    Config { provider: String, message: String },
    /// A failure outside any HTTP exchange (a simulated one, or a stage's own).
    #[error("{provider}: {message}")]
    Transport { provider: String, message: String },
    #[error("script: {0}")]
    Script(String),
    #[error("no provider is configured for the {0} role")]
    NoProvider(Role),
}

/// The longest provider message kept in an [`LlmError::Http`] (characters).
///
/// Long enough for any real API's explanation, short enough that an HTML error page from a
/// proxy does not flood the terminal or the usage table.
pub const MAX_MESSAGE_CHARS: usize = 300;

impl LlmError {
    /// A connection failure of one attempt.
    pub(crate) fn connection(provider: &str, message: String) -> Self {
        Self::Connection {
            provider: provider.to_owned(),
            message,
            attempts: 1,
            elapsed: Duration::ZERO,
        }
    }

    /// A body that is not what the API documents, on one attempt.
    pub(crate) fn malformed(provider: &str, message: String) -> Self {
        Self::MalformedResponse {
            provider: provider.to_owned(),
            message,
            attempts: 1,
            elapsed: Duration::ZERO,
        }
    }

    /// A response without text, on one attempt.
    pub(crate) fn empty(provider: &str) -> Self {
        Self::EmptyResponse {
            provider: provider.to_owned(),
            attempts: 1,
            elapsed: Duration::ZERO,
        }
    }

    /// An error the provider reported in a successful response, on one attempt.
    pub(crate) fn reported(provider: &str, message: String) -> Self {
        Self::ProviderError {
            provider: provider.to_owned(),
            message,
            attempts: 1,
            elapsed: Duration::ZERO,
        }
    }

    /// A provider configuration that cannot work.
    pub(crate) fn config(provider: &str, message: impl Into<String>) -> Self {
        Self::Config {
            provider: provider.to_owned(),
            message: message.into(),
        }
    }

    /// Whether the router may try again: only timeouts and rate limits, as the seed says.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Timeout { .. } | Self::RateLimited { .. })
    }

    /// Attempts the failed call made: 0 when no provider was found, 1 for failures that carry
    /// no count.
    pub fn attempts(&self) -> u32 {
        match self {
            Self::Timeout { attempts, .. }
            | Self::RateLimited { attempts, .. }
            | Self::Http { attempts, .. }
            | Self::Connection { attempts, .. }
            | Self::MalformedResponse { attempts, .. }
            | Self::EmptyResponse { attempts, .. }
            | Self::ProviderError { attempts, .. } => *attempts,
            Self::NoProvider(_) | Self::Config { .. } => 0,
            Self::Transport { .. } | Self::Script(_) => 1,
        }
    }

    /// Time the failed call took, retries and backoff included; zero for failures outside an
    /// exchange.
    pub fn elapsed(&self) -> Duration {
        match self {
            Self::Timeout { elapsed, .. }
            | Self::RateLimited { elapsed, .. }
            | Self::Http { elapsed, .. }
            | Self::Connection { elapsed, .. }
            | Self::MalformedResponse { elapsed, .. }
            | Self::EmptyResponse { elapsed, .. }
            | Self::ProviderError { elapsed, .. } => *elapsed,
            Self::NoProvider(_)
            | Self::Config { .. }
            | Self::Transport { .. }
            | Self::Script(_) => Duration::ZERO,
        }
    }

    /// Records the facts of the whole call (set by the router after its last attempt).
    pub(crate) fn set_call_facts(&mut self, total_attempts: u32, total_elapsed: Duration) {
        match self {
            Self::Timeout {
                attempts, elapsed, ..
            }
            | Self::RateLimited {
                attempts, elapsed, ..
            }
            | Self::Http {
                attempts, elapsed, ..
            }
            | Self::Connection {
                attempts, elapsed, ..
            }
            | Self::MalformedResponse {
                attempts, elapsed, ..
            }
            | Self::EmptyResponse {
                attempts, elapsed, ..
            }
            | Self::ProviderError {
                attempts, elapsed, ..
            } => {
                *attempts = total_attempts;
                *elapsed = total_elapsed;
            }
            Self::NoProvider(_)
            | Self::Config { .. }
            | Self::Transport { .. }
            | Self::Script(_) => {}
        }
    }

    /// The HTTP status behind the error, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Http { status, .. } => Some(*status),
            Self::RateLimited { .. } => Some(429),
            _ => None,
        }
    }
}

/// A duration as people read it: whole seconds from 1 s up, milliseconds below.
pub(crate) fn human(d: Duration) -> String {
    if d >= Duration::from_secs(1) && d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else if d >= Duration::from_secs(1) {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}

fn timed_out(timeout: Duration) -> String {
    if timeout.is_zero() {
        "timed out".to_owned()
    } else {
        format!("no answer within {}", human(timeout))
    }
}

fn after(attempts: u32) -> String {
    if attempts > 1 {
        format!(" ({attempts} attempts)")
    } else {
        String::new()
    }
}

fn count(attempts: u32) -> String {
    if attempts == 1 {
        "1 attempt".to_owned()
    } else {
        format!("{attempts} attempts")
    }
}

fn wait(retry_after: Option<Duration>) -> String {
    retry_after.map_or_else(String::new, |d| {
        format!("; the server asked to wait {}", human(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_provider_and_the_attempts() {
        let err = LlmError::RateLimited {
            provider: "kimi".into(),
            retry_after: Some(Duration::from_secs(2)),
            attempts: 2,
            elapsed: Duration::from_secs(3),
        };
        assert_eq!(
            err.to_string(),
            "kimi: rate limited (HTTP 429, 2 attempts); the server asked to wait 2 s"
        );
        let err = LlmError::Timeout {
            provider: "anthropic".into(),
            timeout: Duration::from_millis(250),
            attempts: 1,
            elapsed: Duration::from_millis(250),
        };
        assert_eq!(err.to_string(), "anthropic: no answer within 250 ms");
        assert!(err.is_retryable());
    }

    #[test]
    fn the_router_overwrites_call_facts() {
        let mut err = LlmError::Http {
            provider: "openai".into(),
            status: 500,
            message: "boom".into(),
            attempts: 1,
            elapsed: Duration::ZERO,
        };
        err.set_call_facts(2, Duration::from_millis(1500));
        assert_eq!(err.attempts(), 2);
        assert_eq!(err.elapsed(), Duration::from_millis(1500));
        assert_eq!(err.status(), Some(500));
        assert!(!err.is_retryable());
        assert_eq!(err.to_string(), "openai: HTTP 500: boom (2 attempts)");
        assert_eq!(LlmError::NoProvider(Role::Extraction).attempts(), 0);
    }
}
