//! Provider text on its way into an error: credentials redacted and terminal control sequences
//! removed, on every path.
//!
//! A provider's error text is shown on stderr and in the terminal app, and stored in the usage
//! table, the audit trail, the log and the JSON export. It can quote the request: a proxy's
//! error page echoing the `Authorization` header, a streamed error repeating the key. And it
//! is bytes from the network, which may hold escape sequences that retitle or clear a
//! terminal. So every error a provider returns passes through [`LlmError::scrubbed`] before it
//! leaves the provider, whichever path made it (a status, a 2xx body that is not the API's
//! JSON, a stream chunk or event, a failed connection): the configured key and anything after
//! `Bearer ` or an `x-api-key`/`api_key` field become `***`, control characters become spaces
//! and escape sequences vanish. Text is redacted before it is ever shortened, so a cut cannot
//! leave half a key.

use super::{ApiKey, LlmError, MAX_MESSAGE_CHARS};

/// Markers after which a value is a credential, in lower case. Field names count only when a
/// `:` or `=` follows them, so prose such as "the `api_key` provided" keeps its words.
const MARKERS: [(&str, bool); 4] = [
    ("bearer ", false),
    ("x-api-key", true),
    ("api-key", true),
    ("api_key", true),
];

impl LlmError {
    /// This error with every text that came from the provider scrubbed (see the module notes);
    /// texts shown to users are at most [`MAX_MESSAGE_CHARS`] characters.
    #[must_use]
    pub(crate) fn scrubbed(self, key: Option<&ApiKey>) -> Self {
        let clean = |message: String| scrub(&message, key);
        let short = |message: String| super::http::truncate(&clean(message), MAX_MESSAGE_CHARS);
        match self {
            Self::Http {
                provider,
                status,
                message,
                attempts,
                elapsed,
            } => Self::Http {
                provider,
                status,
                message: short(message),
                attempts,
                elapsed,
            },
            Self::ProviderError {
                provider,
                message,
                attempts,
                elapsed,
            } => Self::ProviderError {
                provider,
                message: short(message),
                attempts,
                elapsed,
            },
            Self::Connection {
                provider,
                message,
                attempts,
                elapsed,
            } => Self::Connection {
                provider,
                message: clean(message),
                attempts,
                elapsed,
            },
            Self::MalformedResponse {
                provider,
                message,
                attempts,
                elapsed,
            } => Self::MalformedResponse {
                provider,
                message: clean(message),
                attempts,
                elapsed,
            },
            Self::Transport { provider, message } => Self::Transport {
                provider,
                message: clean(message),
            },
            Self::Config { provider, message } => Self::Config {
                provider,
                message: clean(message),
            },
            other => other,
        }
    }
}

/// `text` redacted and without control characters.
pub(crate) fn scrub(text: &str, key: Option<&ApiKey>) -> String {
    without_controls(&redact(text, key))
}

/// `text` with the configured key and marked credentials replaced by `***`.
pub(crate) fn redact(text: &str, key: Option<&ApiKey>) -> String {
    let text = key.map_or_else(|| text.to_owned(), |k| k.redact(text));
    redact_marked(&text)
}

fn redact_marked(text: &str) -> String {
    // ASCII lower-casing keeps every byte offset, so positions found in `lower` hold in `text`.
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    while let Some((at, marker, needs_separator)) = next_marker(&lower, pos) {
        let after = at + marker.len();
        let rest = text.get(after..).unwrap_or("");
        let gap = rest
            .find(|c: char| !matches!(c, ' ' | '\t' | '"' | '\'' | ':' | '='))
            .unwrap_or(rest.len());
        let separator = rest.get(..gap).unwrap_or("");
        let value = rest.get(gap..).unwrap_or("");
        let len = value
            .find(|c: char| !(c.is_ascii_alphanumeric() || "-._~+/=".contains(c)))
            .unwrap_or(value.len());
        out.push_str(text.get(pos..after + gap).unwrap_or(""));
        if len > 0 && (!needs_separator || separator.contains([':', '='])) {
            out.push_str("***");
        } else {
            out.push_str(value.get(..len).unwrap_or(""));
        }
        pos = after + gap + len;
    }
    out.push_str(text.get(pos..).unwrap_or(""));
    out
}

/// The first marker at or after `from`: its position, text and whether it needs a separator.
fn next_marker(lower: &str, from: usize) -> Option<(usize, &'static str, bool)> {
    let rest = lower.get(from..)?;
    MARKERS
        .iter()
        .filter_map(|(marker, needs)| rest.find(marker).map(|at| (from + at, *marker, *needs)))
        .min_by_key(|(at, _, _)| *at)
}

/// `text` with escape sequences (CSI, OSC, DCS and the other string sequences, two-character
/// escapes) removed and every other control character, line breaks included, made a space.
fn without_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Parameters and intermediates up to a CSI's final byte.
fn skip_csi(chars: &mut impl Iterator<Item = char>) {
    for c in chars {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
    }
}

/// A string sequence's body, up to BEL or the string terminator (`ESC \` or U+009C).
fn skip_string(chars: &mut std::iter::Peekable<impl Iterator<Item = char>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn key() -> ApiKey {
        ApiKey::new("sk-live-0123456789").unwrap()
    }

    #[test]
    fn keys_and_marked_credentials_are_redacted_wherever_they_appear() {
        let cases = [
            ("echo: sk-live-0123456789.", "echo: ***."),
            (
                "Authorization: Bearer abc.DEF-123_x",
                "Authorization: Bearer ***",
            ),
            (
                "authorization: bearer sk-other-key",
                "authorization: bearer ***",
            ),
            (r#"{"x-api-key":"sk-ant-zzz"}"#, r#"{"x-api-key":"***"}"#),
            ("X-Api-Key: sk-ant-zzz, next", "X-Api-Key: ***, next"),
            ("api_key=secret123&x=1", "api_key=***&x=1"),
            (
                "the api_key provided is wrong",
                "the api_key provided is wrong",
            ),
            ("Bearer ***", "Bearer ***"),
            ("no credential here", "no credential here"),
        ];
        for (text, expected) in cases {
            assert_eq!(redact(text, Some(&key())), expected, "{text}");
        }
    }

    #[test]
    fn escape_sequences_vanish_and_controls_become_spaces() {
        let text =
            "a\u{1b}]0;pwned\u{7}b\u{1b}[2Jc\u{1b}[31;1md\u{1b}P+q\u{1b}\\e\u{9b}2Jf\nline\u{0}";
        assert_eq!(scrub(text, None), "abcdef line ");
        assert_eq!(scrub("tab\there é", None), "tab here é");
        // An unterminated OSC swallows the rest rather than reaching a terminal.
        assert_eq!(scrub("ok\u{1b}]0;title never ends", None), "ok");
    }

    #[test]
    fn errors_are_scrubbed_field_by_field_and_shortened_after_redaction() {
        let long_tail = "x".repeat(400);
        let http = LlmError::Http {
            provider: "kimi".into(),
            status: 401,
            message: format!("{}sk-live-0123456789 \u{1b}[2J{long_tail}", "y".repeat(290)),
            attempts: 1,
            elapsed: Duration::ZERO,
        }
        .scrubbed(Some(&key()));
        let text = http.to_string();
        assert!(
            !text.contains("sk-live") && !text.contains('\u{1b}'),
            "{text}"
        );
        assert!(text.contains("***"), "redacted before the cut: {text}");
        let malformed = LlmError::malformed(
            "kimi",
            "expected the API's JSON; the body starts: \"<html>Bearer sk-live-0123456789\"".into(),
        )
        .scrubbed(Some(&key()));
        assert!(!malformed.to_string().contains("0123456789"), "{malformed}");
        let untouched = LlmError::empty("kimi").scrubbed(Some(&key()));
        assert_eq!(untouched, LlmError::empty("kimi"));
    }
}
