//! Rubrics for the LLM signal batch, parsed from `signals.md` by indentation.
//!
//! A header starts at column 0, contains `:` and is not a comment (`#`, `<!--`); the header is
//! `name: question`. Indented lines below belong to the current header. Blank lines are kept
//! inside a rubric only between content lines. Anything before the first header that is not a
//! comment is an error, so a lost indent cannot silently turn a scale line into a new rubric.

use serde::{Deserialize, Serialize};

use super::error::Problem;

/// The six rubrics the batch detector needs (seed 001 "Batch Detection").
pub const REQUIRED_RUBRICS: [&str; 6] = [
    "response_depth",
    "specificity",
    "certainty",
    "valence",
    "engagement",
    "intellectual_engagement",
];

/// Rubric names of files written for the original system, and the names they have here: its
/// `emotional_valence` is our `valence` (the same 1–5 tone scale).
pub const RUBRIC_ALIASES: [(&str, &str); 1] = [("emotional_valence", "valence")];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rubric {
    /// The rubric's name here, which the signal is named after (`valence` → `llm.valence`).
    pub name: String,
    /// The header's name as the file writes it, and the reply key the scoring prompt asks for
    /// (`emotional_valence` in a file written for the original system); empty when it is the
    /// name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
    /// The header's text after the colon.
    pub question: String,
    /// The indented scale lines, dedented.
    pub body: Vec<String>,
}

/// Parses rubric text. Returns the rubrics in file order, or every problem found.
pub fn parse_rubrics(text: &str) -> Result<Vec<Rubric>, Vec<Problem>> {
    let mut rubrics: Vec<Rubric> = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if !indented && (trimmed.starts_with('#') || trimmed.starts_with("<!--")) {
            continue;
        }
        if indented {
            match rubrics.last_mut() {
                Some(r) => r.body.push(trimmed.to_owned()),
                None => problems.push(Problem::new(
                    format!("line {lineno}"),
                    "indented text before the first rubric header",
                )),
            }
            continue;
        }
        match line.split_once(':') {
            Some((name, question)) if is_name(name.trim()) => rubrics.push(Rubric {
                name: canonical_name(name.trim()),
                key: Some(name.trim())
                    .filter(|n| canonical_name(n) != *n)
                    .map(str::to_owned)
                    .unwrap_or_default(),
                question: question.trim().to_owned(),
                body: Vec::new(),
            }),
            _ => problems.push(Problem::new(
                format!("line {lineno}"),
                format!(
                    "expected a header `name: question` or an indented line, found '{}'",
                    truncate(trimmed, 60)
                ),
            )),
        }
    }
    for (i, r) in rubrics.iter().enumerate() {
        if rubrics.iter().take(i).any(|o| o.name == r.name) {
            problems.push(Problem::new(r.name.clone(), "duplicate rubric"));
        }
        if r.body.is_empty() {
            problems.push(Problem::new(
                r.name.clone(),
                "rubric has no indented scale lines",
            ));
        }
    }
    if problems.is_empty() {
        Ok(rubrics)
    } else {
        Err(problems)
    }
}

impl Rubric {
    /// The key the scoring prompt asks for and the reply is read by: the header's own name.
    pub fn reply_key(&self) -> &str {
        if self.key.is_empty() {
            &self.name
        } else {
            &self.key
        }
    }
}

/// The other key a reply may give rubric `name` under: the original system's name for it
/// (`emotional_valence` for `valence`), or ours for one of its names.
pub fn reply_key_aliases(name: &str) -> impl Iterator<Item = &'static str> + '_ {
    RUBRIC_ALIASES.iter().filter_map(move |(theirs, ours)| {
        if *ours == name {
            Some(*theirs)
        } else if *theirs == name {
            Some(*ours)
        } else {
            None
        }
    })
}

/// Problems if any required rubric is missing.
pub fn check_required(rubrics: &[Rubric]) -> Vec<Problem> {
    REQUIRED_RUBRICS
        .iter()
        .filter(|name| !rubrics.iter().any(|r| r.name == **name))
        .map(|name| Problem::new(*name, "required rubric is missing"))
        .collect()
}

/// A rubric header's name as used here ([`RUBRIC_ALIASES`]).
fn canonical_name(name: &str) -> String {
    RUBRIC_ALIASES
        .iter()
        .find(|(theirs, _)| *theirs == name)
        .map_or(name, |(_, ours)| ours)
        .to_owned()
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file written for the original system names the tone rubric `emotional_valence`; it
    /// is read as `valence`, so the required set is complete and `llm.valence` is scored.
    #[test]
    fn the_originals_emotional_valence_is_valence() {
        let text = "emotional_valence: Tone?\n    1 = negative\n    5 = positive\n";
        let r = parse_rubrics(text).unwrap();
        assert_eq!(r[0].name, "valence");
        assert_eq!(
            r[0].reply_key(),
            "emotional_valence",
            "asked for by its own name"
        );
        assert_eq!(r[0].body, vec!["1 = negative", "5 = positive"]);
        let both = "valence: Tone?\n    1 = a\nemotional_valence: Tone?\n    1 = b\n";
        assert!(
            parse_rubrics(both).is_err(),
            "two tone rubrics are a duplicate"
        );
    }

    #[test]
    fn parses_headers_and_indented_scales() {
        let text = "# comment: not a header\nresponse_depth: How much?\n    1 = none\n\n    5 = rich\nvalence: Tone?\n  1 = negative\n";
        let r = parse_rubrics(text).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].name, "response_depth");
        assert_eq!(r[0].question, "How much?");
        assert_eq!(r[0].body, vec!["1 = none", "5 = rich"]);
        assert_eq!(r[1].body, vec!["1 = negative"]);
    }

    #[test]
    fn lost_indent_is_reported_with_line() {
        let err = parse_rubrics("depth: q\n    1 = a\n2 = b\n").unwrap_err();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0].path, "line 3");
    }

    #[test]
    fn missing_required_rubrics_are_named() {
        let r = parse_rubrics("response_depth: q\n  1 = a\n").unwrap();
        let missing = check_required(&r);
        assert_eq!(missing.len(), 5);
        assert!(missing.iter().any(|p| p.path == "intellectual_engagement"));
    }
}
