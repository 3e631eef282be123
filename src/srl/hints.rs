//! Rendering an analysis as compact text for the extraction prompt.

use super::{ArgRole, DiscourseRelation, RelationKind, SrlAnalysis, SrlFrame};

/// Longest argument text shown in a hint line, in characters; longer spans are clipped with
/// "…" so one run-on clause cannot take the whole budget.
const MAX_ARG_CHARS: usize = 80;

impl SrlAnalysis {
    /// Compact text for the extraction prompt, at most `max_chars` characters, e.g.
    ///
    /// ```text
    /// Discourse relations:
    /// - causal (because): "I buy oat milk" <- "it tastes better"
    /// Predicate frames:
    /// - buy: ARG0=I, ARG1=oat milk
    /// ```
    ///
    /// `<-` points from cause to effect for causal relations, `->` for results; other kinds
    /// separate their arguments with `|`. Lines are never cut: whole lines are dropped from
    /// the end and a last line says how many were omitted. Empty when there is nothing to say
    /// (or not even the omission note fits).
    pub fn hints(&self, max_chars: usize) -> String {
        let mut lines: Vec<(String, bool)> = Vec::new();
        if !self.discourse_relations.is_empty() {
            lines.push(("Discourse relations:".to_string(), false));
            lines.extend(
                self.discourse_relations
                    .iter()
                    .map(|r| (relation_line(r), true)),
            );
        }
        if !self.srl_frames.is_empty() {
            lines.push(("Predicate frames:".to_string(), false));
            lines.extend(self.srl_frames.iter().map(|f| (frame_line(f), true)));
        }
        fit(&lines, max_chars)
    }
}

/// The longest prefix of `lines` (plus an omission note) within `max_chars`.
fn fit(lines: &[(String, bool)], max_chars: usize) -> String {
    let items = lines.iter().filter(|(_, item)| *item).count();
    for take in (0..=lines.len()).rev() {
        let mut kept = lines.get(..take).unwrap_or_default();
        while let Some(((_, false), rest)) = kept.split_last() {
            kept = rest;
        }
        let shown = kept.iter().filter(|(_, item)| *item).count();
        let note = match items - shown {
            0 => String::new(),
            omitted => format!("({omitted} more omitted)\n"),
        };
        let size = kept
            .iter()
            .map(|(line, _)| line.chars().count() + 1)
            .sum::<usize>()
            + note.chars().count();
        if size <= max_chars {
            let mut out: String = kept
                .iter()
                .flat_map(|(line, _)| [line.as_str(), "\n"])
                .collect();
            out.push_str(&note);
            return out;
        }
    }
    String::new()
}

fn relation_line(r: &DiscourseRelation) -> String {
    let arg1 = if r.arg1_unstated() {
        "(before this answer)".to_string()
    } else {
        format!("\"{}\"", clip(&r.arg1.text))
    };
    let link = match r.kind {
        RelationKind::Causal => "<-",
        RelationKind::Result => "->",
        _ => "|",
    };
    format!(
        "- {} ({}): {arg1} {link} \"{}\"",
        r.kind.as_str(),
        clip(&r.marker.text).to_lowercase(),
        clip(&r.arg2.text)
    )
}

fn frame_line(f: &SrlFrame) -> String {
    let negated = if f.negated { " (negated)" } else { "" };
    let args: Vec<String> = f
        .arguments
        .iter()
        .filter(|a| !(f.negated && a.role == ArgRole::Neg))
        .map(|a| format!("{}={}", a.role.as_str(), clip(&a.span.text)))
        .collect();
    format!("- {}{negated}: {}", f.lemma, args.join(", "))
}

/// One line of at most [`MAX_ARG_CHARS`] characters: whitespace runs become one space.
fn clip(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= MAX_ARG_CHARS {
        return flat;
    }
    let kept: String = flat.chars().take(MAX_ARG_CHARS - 1).collect();
    format!("{kept}\u{2026}")
}
