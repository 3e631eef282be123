//! Taking a model's decoration off a plain-text reply: a leading `Label:` and marks wrapping
//! the whole text, in any nesting (`Question: "…"`, `"Q: …"`). The question and respondent
//! parsers share the mechanism; each keeps its own labels and wrapper rules.

/// `text` without a leading `label:` (case-insensitive, optionally in Markdown emphasis or
/// after a heading marker: `**Question:** …`); `text` itself when no label leads it.
pub(super) fn strip_label<'t>(text: &'t str, labels: &[&str]) -> &'t str {
    let bare = text.trim_start_matches(['*', '#', ' ']);
    for label in labels {
        let Some(head) = bare.get(..label.len()) else {
            continue;
        };
        if !head.eq_ignore_ascii_case(label) {
            continue;
        }
        let after = bare.get(label.len()..).unwrap_or_default().trim_start();
        if let Some(rest) = after.strip_prefix(':') {
            return rest.trim_start_matches(['*', ' ']);
        }
    }
    text
}

/// Applies `step` (one layer of label and wrapper removal) until the text stops changing.
pub(super) fn strip_layers(text: &str, step: fn(&str) -> &str) -> String {
    let mut current = text.trim();
    loop {
        let next = step(current).trim();
        if next == current {
            return next.to_owned();
        }
        current = next;
    }
}
