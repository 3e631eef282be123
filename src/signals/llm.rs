//! LLM signal pool: the batch prompt, the strict parse of its reply, the mapping of 1–5 rubric
//! scores to signal values, and the session-scoped response trend.
//!
//! The LLM call itself belongs to the pipeline; this module only builds text and reads text.

use crate::config::Rubric;
use crate::domain::{LlmScores, ResponseDepth, RubricScore};
use crate::reply_json::{ContractError, extract_object};

use super::catalog::TREND_VALUES;

/// The respondent's answer is cut to this many characters in the batch prompt (seed: ~75 words).
pub const MAX_RESPONSE_CHARS: usize = 500;
/// The preceding question is cut to this many characters.
pub const MAX_QUESTION_CHARS: usize = 200;
/// Rationales longer than this are shortened when stored; they are for display only.
pub const MAX_RATIONALE_CHARS: usize = 500;

/// Continuous rubric score → [0, 1]: `(score − 1) / 4`.
pub fn normalise(score: u8) -> f64 {
    (f64::from(score.clamp(1, 5)) - 1.0) / 4.0
}

/// Cuts `text` to `max` characters (not bytes), marking the cut.
pub fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(max).collect();
        s.push('…');
        s
    }
}

/// The single prompt that scores all rubrics at once (seed 001 "Batch Detection").
pub fn batch_prompt(rubrics: &[Rubric], question: &str, response: &str) -> String {
    let mut p = String::from(
        "You rate one answer from a qualitative research interview against the rubrics below.\n\
         Score each rubric with an integer from 1 to 5 and give a one-sentence rationale.\n\n",
    );
    p.push_str("## Rubrics\n");
    for r in rubrics {
        p.push_str(&format!("\n{}: {}\n", r.reply_key(), r.question));
        for line in &r.body {
            p.push_str(&format!("    {line}\n"));
        }
    }
    p.push_str("\n## Interviewer's question\n");
    p.push_str(&truncate_chars(question.trim(), MAX_QUESTION_CHARS));
    p.push_str("\n\n## Respondent's answer\n");
    p.push_str(&truncate_chars(response.trim(), MAX_RESPONSE_CHARS));
    p.push_str(
        "\n\n## Reply\nReply with one JSON object and nothing else, with one key per rubric:\n{",
    );
    let keys: Vec<String> = rubrics
        .iter()
        .map(|r| {
            format!(
                "\"{}\": {{\"score\": 1-5, \"rationale\": \"...\"}}",
                r.reply_key()
            )
        })
        .collect();
    p.push_str(&keys.join(", "));
    p.push_str("}\n");
    p
}

/// Parses the batch reply: every rubric in `expected` must be present with an integer score
/// 1–5 and a string rationale. Extra keys are ignored.
pub fn parse_batch_reply(reply: &str, expected: &[&str]) -> Result<LlmScores, ContractError> {
    let map = extract_object(reply)?;
    let mut scores = LlmScores::new();
    for name in expected {
        // The original system's replies name the tone rubric `emotional_valence`.
        let entry = map
            .get(*name)
            .or_else(|| crate::config::reply_key_aliases(name).find_map(|k| map.get(k)));
        let entry = entry.ok_or_else(|| ContractError::Invalid {
            field: (*name).to_owned(),
            reason: "missing".to_owned(),
            found: crate::reply_json::quote(&serde_json::Value::Object(map.clone()).to_string()),
        })?;
        scores.insert((*name).to_owned(), parse_entry(name, entry)?);
    }
    Ok(scores)
}

fn parse_entry(name: &str, entry: &serde_json::Value) -> Result<RubricScore, ContractError> {
    // A bare number is accepted as a score without rationale; models do that.
    let (score_value, rationale) = match entry {
        serde_json::Value::Object(o) => (
            o.get("score").cloned().unwrap_or(serde_json::Value::Null),
            o.get("rationale")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        ),
        other => (other.clone(), String::new()),
    };
    let score = score_value
        .as_f64()
        .filter(|s| s.fract() == 0.0 && (1.0..=5.0).contains(s))
        .ok_or_else(|| {
            ContractError::invalid(
                format!("{name}.score"),
                "must be an integer from 1 to 5",
                &score_value,
            )
        })?;
    // Checked above: an integral value in 1..=5 fits u8.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let score = score as u8;
    Ok(RubricScore {
        score,
        rationale: truncate_chars(&rationale, MAX_RATIONALE_CHARS),
    })
}

/// Answers the trend looks at: the latest six (the original system's window; the seeds give
/// only the four values).
const TREND_WINDOW: usize = 6;
/// Fewer answers than this in the window read as `stable`.
const TREND_MIN_ANSWERS: usize = 4;
/// Surface or shallow answers in the window that make the respondent `fatigued`.
const FATIGUED_SHALLOW_ANSWERS: usize = 4;

/// Direction of answer depth over the session, from the depth history (oldest first), as the
/// original system computes it: over the latest six answers, fewer than four is `stable`; four
/// or more surface or shallow answers is `fatigued`; otherwise the mean depth rank of the newer
/// half against the older half: a rise of 0.5 or more is `deepening`, a fall of 0.5 or more
/// `shallowing`.
pub fn response_trend(history: &[ResponseDepth]) -> &'static str {
    let [deepening, stable, shallowing, fatigued] =
        [0, 1, 2, 3].map(|i| TREND_VALUES.get(i).copied().unwrap_or("stable"));
    let window = history
        .get(history.len().saturating_sub(TREND_WINDOW)..)
        .unwrap_or(history);
    if window.len() < TREND_MIN_ANSWERS {
        return stable;
    }
    let shallow = window
        .iter()
        .filter(|d| **d <= ResponseDepth::Shallow)
        .count();
    if shallow >= FATIGUED_SHALLOW_ANSWERS {
        return fatigued;
    }
    let (older, newer) = window.split_at(window.len() / 2);
    let mean = |xs: &[ResponseDepth]| {
        xs.iter().map(|d| f64::from(d.rank())).sum::<f64>() / xs.len().max(1) as f64
    };
    let delta = mean(newer) - mean(older);
    if delta >= 0.5 {
        deepening
    } else if delta <= -0.5 {
        shallowing
    } else {
        stable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ResponseDepth::{Deep as D, Moderate as M, Shallow as Sh, Surface as S};

    const SIX: [&str; 6] = crate::config::REQUIRED_RUBRICS;

    #[test]
    fn normalises_likert() {
        assert_eq!([1, 2, 3, 4, 5].map(normalise), [0.0, 0.25, 0.5, 0.75, 1.0]);
    }

    #[test]
    fn parses_the_seed_reply() {
        let reply = r#"```json
{"response_depth": {"score": 4, "rationale": "Detailed response with examples"},
 "specificity": {"score": 4, "rationale": "Concrete details"},
 "certainty": {"score": 5, "rationale": "Confident"},
 "valence": {"score": 4, "rationale": "Positive"},
 "engagement": {"score": 5, "rationale": "Volunteered context"},
 "intellectual_engagement": {"score": 4, "rationale": "Causal reasoning"}}
```"#;
        let s = parse_batch_reply(reply, &SIX).unwrap();
        assert_eq!(s["certainty"].score, 5);
        assert_eq!(
            s["response_depth"].rationale,
            "Detailed response with examples"
        );
    }

    #[test]
    fn reads_the_original_systems_emotional_valence_as_valence() {
        // A reply in the original's shape, scores as bare numbers and as objects.
        let reply = r#"{"response_depth": 3, "specificity": {"score": 2},
            "certainty": 4, "emotional_valence": {"score": 5, "rationale": "warm"},
            "engagement": 4, "intellectual_engagement": 3}"#;
        let scores = parse_batch_reply(reply, &SIX).unwrap();
        assert_eq!(scores["valence"].score, 5);
        assert_eq!(scores["valence"].rationale, "warm");
        // The rubrics file of the original names the rubric so; the prompt asks for that key.
        let rubrics = crate::config::parse_rubrics(
            "emotional_valence: What is the tone?\n    1 = negative\n    5 = positive\n",
        )
        .unwrap();
        let p = batch_prompt(&rubrics, "Why?", "Because.");
        assert!(p.contains("\"emotional_valence\": {\"score\""), "{p}");
        assert!(p.contains("\nemotional_valence: What is the tone?"), "{p}");
        assert!(!p.contains("\"valence\""), "{p}");
    }

    #[test]
    fn rejects_bad_scores_naming_the_field() {
        let reply = r#"{"response_depth": {"score": 7}, "specificity": 3}"#;
        let err = parse_batch_reply(reply, &["response_depth"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("response_depth.score: must be an integer from 1 to 5"),
            "{err}"
        );
        let err = parse_batch_reply(r#"{"specificity": 3}"#, &["response_depth"]).unwrap_err();
        assert!(
            err.to_string().starts_with("response_depth: missing"),
            "{err}"
        );
        assert!(parse_batch_reply(r#"{"specificity": 2.5}"#, &["specificity"]).is_err());
    }

    #[test]
    fn prompt_truncates_question_and_answer() {
        let rubrics =
            crate::config::parse_rubrics("specificity: How concrete?\n    1 = vague\n").unwrap();
        let p = batch_prompt(&rubrics, &"q".repeat(300), &"a".repeat(900));
        assert!(p.contains(&format!("{}…", "q".repeat(200))));
        assert!(!p.contains(&"q".repeat(201)));
        assert!(p.contains(&format!("{}…", "a".repeat(500))));
        assert!(!p.contains(&"a".repeat(501)));
        assert!(p.contains("1 = vague"));
    }

    #[test]
    fn trend_cases() {
        assert_eq!(response_trend(&[S, D, D]), "stable", "too few answers");
        assert_eq!(response_trend(&[S, S, Sh, M, D, D]), "deepening");
        assert_eq!(response_trend(&[D, D, M, Sh, M, Sh]), "shallowing");
        assert_eq!(response_trend(&[D, M, D, S, Sh, S]), "shallowing");
        assert_eq!(response_trend(&[D, M, S, S, Sh, S]), "fatigued");
        // Only the latest six count: eight deep answers before do not hide the fatigue.
        let long = [[D; 8].as_slice(), &[M, M, S, Sh, S, S]].concat();
        assert_eq!(response_trend(&long), "fatigued");
        assert_eq!(
            response_trend(&[S, S, Sh, S, S, Sh]),
            "fatigued",
            "four or more brief answers are fatigue, from the start too (the original's rule)"
        );
    }
}
