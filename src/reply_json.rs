//! Lenient extraction of the JSON object inside an LLM reply.
//!
//! Models wrap JSON in code fences or add a sentence before or after it. We accept that, and
//! nothing more: the first balanced `{...}` that parses is the reply. Callers then validate it
//! strictly against their contract. Input size and nesting are bounded so a hostile reply
//! cannot exhaust memory or the stack.

/// Replies longer than this are refused before parsing; the largest legitimate contract (an
/// extraction of a long answer) is a few KiB.
pub const MAX_REPLY_BYTES: usize = 256 * 1024;
/// Deepest nesting accepted; our contracts nest four levels at most.
pub const MAX_DEPTH: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    #[error("reply is empty")]
    Empty,
    #[error("reply is {0} bytes; the limit is {MAX_REPLY_BYTES}")]
    TooLarge(usize),
    #[error("no JSON object found in reply: {0}")]
    NoJson(String),
    #[error("JSON nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("{field}: {reason} (got {found})")]
    Invalid {
        field: String,
        reason: String,
        found: String,
    },
}

impl ContractError {
    pub fn invalid(
        field: impl Into<String>,
        reason: impl Into<String>,
        found: &serde_json::Value,
    ) -> Self {
        Self::Invalid {
            field: field.into(),
            reason: reason.into(),
            found: quote(&found.to_string()),
        }
    }
}

/// Shortens `text` for an error message, keeping its start.
pub fn quote(text: &str) -> String {
    const MAX: usize = 120;
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= MAX {
        format!("'{one_line}'")
    } else {
        format!("'{}…'", one_line.chars().take(MAX).collect::<String>())
    }
}

/// The first JSON object in `reply`.
pub fn extract_object(
    reply: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, ContractError> {
    if reply.trim().is_empty() {
        return Err(ContractError::Empty);
    }
    if reply.len() > MAX_REPLY_BYTES {
        return Err(ContractError::TooLarge(reply.len()));
    }
    let mut search_from = 0;
    let mut saw_deep = false;
    while let Some(offset) = reply.get(search_from..).and_then(|s| s.find('{')) {
        let start = search_from + offset;
        match balanced_end(reply, start) {
            Balanced::End(end) => {
                if let Some(candidate) = reply.get(start..end)
                    && let Ok(serde_json::Value::Object(map)) = serde_json::from_str(candidate)
                {
                    return Ok(map);
                }
            }
            Balanced::TooDeep => saw_deep = true,
            Balanced::Unclosed => break,
        }
        search_from = start + 1;
    }
    if saw_deep {
        return Err(ContractError::TooDeep);
    }
    Err(ContractError::NoJson(quote(reply)))
}

enum Balanced {
    End(usize),
    TooDeep,
    Unclosed,
}

/// Finds the byte after the `}` closing the `{` at `start`, honouring strings and escapes.
fn balanced_end(text: &str, start: usize) -> Balanced {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    // Scanning from `start` (not from the beginning) keeps a reply of many `{` linear: each
    // scan ends within MAX_DEPTH characters.
    let Some(rest) = text.get(start..) else {
        return Balanced::Unclosed;
    };
    for (offset, c) in rest.char_indices() {
        let i = start + offset;
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Balanced::TooDeep;
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Balanced::End(i + c.len_utf8());
                }
            }
            _ => {}
        }
    }
    Balanced::Unclosed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_json_in_fences_and_prose() {
        let reply = "Sure! Here it is:\n```json\n{\"a\": {\"b\": \"}\"}}\n```\nHope that helps {";
        let map = extract_object(reply).unwrap();
        assert_eq!(map["a"]["b"], "}");
    }

    #[test]
    fn skips_broken_candidates() {
        let map = extract_object("{not json} then {\"ok\": 1}").unwrap();
        assert_eq!(map["ok"], 1);
    }

    #[test]
    fn refuses_empty_huge_and_deep() {
        assert_eq!(extract_object("  "), Err(ContractError::Empty));
        assert!(matches!(
            extract_object(&"x".repeat(MAX_REPLY_BYTES + 1)),
            Err(ContractError::TooLarge(_))
        ));
        let deep = format!("{}{}", "{\"a\":".repeat(100), "}".repeat(100));
        assert_eq!(extract_object(&deep), Err(ContractError::TooDeep));
        assert!(matches!(
            extract_object("no braces here"),
            Err(ContractError::NoJson(_))
        ));
    }
}
