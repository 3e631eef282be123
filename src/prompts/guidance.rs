//! Methodology guidance (free-form YAML: a string, a list or a mapping) as prompt text.
//!
//! [`Guidance::render`](crate::config::Guidance::render) serves the config checks; prompts use
//! this variant, which keeps list items that are mappings on their bullet line
//! (`- text: …` / `  source: …`) the way a person would write them, instead of a bare `-` line.

use serde_json::Value;

use crate::config::Guidance;

/// The guidance as indented plain text; empty when absent.
pub(super) fn render_guidance(guidance: &Guidance) -> String {
    let mut lines = Vec::new();
    render(&guidance.0, 0, &mut lines);
    lines.join("\n").trim_end().to_owned()
}

fn render(value: &Value, indent: usize, out: &mut Vec<String>) {
    let pad = "  ".repeat(indent);
    match value {
        Value::Null => {}
        Value::String(s) => out.extend(s.lines().map(|l| format!("{pad}{l}"))),
        Value::Bool(_) | Value::Number(_) => out.push(format!("{pad}{value}")),
        Value::Array(items) => {
            for item in items {
                let start = out.len();
                render(item, indent + 1, out);
                // Turn the item's first line's indentation into the bullet.
                if let Some(first) = out.get_mut(start) {
                    let text = first.get(pad.len() + 2..).unwrap_or_default();
                    *first = format!("{pad}- {text}");
                }
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                match item {
                    Value::String(s) if !s.contains('\n') => out.push(format!("{pad}{key}: {s}")),
                    Value::Bool(_) | Value::Number(_) => out.push(format!("{pad}{key}: {item}")),
                    Value::Null => out.push(format!("{pad}{key}:")),
                    _ => {
                        out.push(format!("{pad}{key}:"));
                        render(item, indent + 1, out);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(json: &str) -> String {
        render_guidance(&Guidance(serde_json::from_str(json).unwrap()))
    }

    #[test]
    fn renders_each_shape() {
        assert_eq!(text("null"), "");
        assert_eq!(text(r#""line one\nline two\n""#), "line one\nline two");
        assert_eq!(text(r#"["a", 2, true]"#), "- a\n- 2\n- true");
        assert_eq!(
            text(r#"[{"text": "I buy it", "source": "creamy"}, "plain"]"#),
            "- text: I buy it\n  source: creamy\n- plain"
        );
        assert_eq!(
            text(r#"{"good": ["x", "y"], "note": "multi\nline", "n": 1}"#),
            "good:\n  - x\n  - y\nnote:\n  multi\n  line\nn: 1"
        );
        assert_eq!(text(r#"[["a", "b"], "c"]"#), "- - a\n  - b\n- c");
    }
}
