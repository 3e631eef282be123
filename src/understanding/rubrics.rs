//! The LLM signal pool's six rubrics scored by transparent rules instead of a model.
//!
//! [`AnswerFeatures`] counts what the rubrics in `config/prompts/signals.md` ask about: words and
//! sentences (elaboration), causal links (SRL discourse relations of the causal, result and
//! purpose kinds plus causative verbs such as "makes" and "helps"), hedges, "not sure" markers
//! and certainty words, concrete details (numbers, names, occasions, examples, comparisons),
//! vague words, an affect lexicon with negation, reflection on one's own motives and values,
//! closing phrases, and whether the answer only echoes the question. Each rubric maps those
//! counts to 1–5 with a rule, and the rationale states the rule and its counts, e.g.
//! "2 causal links, 48 words, 3 sentences → deep". A short answer to a yes/no question is not
//! automatically shallow, as the rubric file asks.
//!
//! The rules read surface form only: irony, implied meaning and domain knowledge are beyond
//! them, which is why they state their evidence rather than claim a judgement.

use crate::config::Rubric;
use crate::domain::{LlmScores, RubricScore};
use crate::srl::{self, RelationKind, WordClass};

use super::lexicon;

/// Words an answer needs before it can count as more than a bare reply.
const BARE_REPLY_WORDS: usize = 3;
/// Share of an answer's content words also in the question above which it only echoes it.
const ECHO_SHARE: f64 = 0.8;

/// The counts the rubric rules read, for one answer to one question.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnswerFeatures {
    pub words: usize,
    pub sentences: usize,
    /// Causal, result and purpose relations, plus causative verbs outside them.
    pub causal_links: usize,
    /// Contrast and concession relations ("but", "although"): weighing alternatives.
    pub contrasts: usize,
    pub hedges: usize,
    /// "not sure", "I don't know", "no idea", …
    pub unsure: usize,
    pub certainty_markers: usize,
    /// Numbers, names, occasions, example phrases and comparisons.
    pub details: usize,
    pub vague: usize,
    /// Net affect: positive minus negative words, negation applied.
    pub affect: i32,
    /// Strong affect words, signed by their direction.
    pub strong_affect: i32,
    pub reflection: usize,
    pub closing: usize,
    /// The question asks yes or no ("Do you…?", "Is it…?").
    pub yes_no_question: bool,
    /// The answer's content words mostly repeat the question's.
    pub echoes_question: bool,
}

/// Counts the features of `answer` as a reply to `question`.
pub fn answer_features(question: &str, answer: &str) -> AnswerFeatures {
    let words = srl::tag_words(answer);
    let analysis = srl::analyze(answer);
    let norms: Vec<&str> = words
        .iter()
        .filter(|w| w.class != WordClass::Punctuation)
        .map(|w| w.norm.as_str())
        .collect();
    let causal_relations = analysis
        .discourse_relations
        .iter()
        .filter(|r| {
            matches!(
                r.kind,
                RelationKind::Causal | RelationKind::Result | RelationKind::Purpose
            )
        })
        .collect::<Vec<_>>();
    let causative_frames = analysis
        .srl_frames
        .iter()
        .filter(|f| lexicon::is_causative_verb(&f.lemma) && f.lemma != "give")
        .filter(|f| {
            !causal_relations
                .iter()
                .any(|r| r.marker.start <= f.predicate.start && f.predicate.end <= r.marker.end)
        })
        .count();
    let contrasts = analysis
        .discourse_relations
        .iter()
        .filter(|r| matches!(r.kind, RelationKind::Contrast | RelationKind::Concession))
        .count();
    let names = words
        .windows(2)
        .filter(|pair| match pair {
            [before, w] => {
                before.sentence == w.sentence
                    && w.norm != "i"
                    && answer
                        .get(w.start..w.end)
                        .and_then(|t| t.chars().next())
                        .is_some_and(char::is_uppercase)
            }
            _ => false,
        })
        .count();
    let numbers = words
        .iter()
        .filter(|w| w.class == WordClass::Number)
        .count();
    let comparisons = norms
        .iter()
        .filter(|w| matches!(**w, "than" | "unlike"))
        .count()
        + lexicon::count_phrases(&norms, &["instead of", "compared to", "compared with"]);
    let occasions = norms.iter().filter(|w| lexicon::is_occasion(w)).count()
        + lexicon::count_phrases(&norms, &lexicon::EXAMPLE_PHRASES);
    AnswerFeatures {
        words: norms.len(),
        sentences: words.last().map_or(0, |w| w.sentence + 1),
        causal_links: causal_relations.len() + causative_frames,
        contrasts,
        hedges: norms.iter().filter(|w| lexicon::is_hedge(w)).count()
            + lexicon::count_phrases(&norms, &lexicon::HEDGE_PHRASES),
        unsure: lexicon::count_phrases(&norms, &lexicon::UNSURE_PHRASES),
        certainty_markers: norms.iter().filter(|w| lexicon::is_certainty(w)).count(),
        details: numbers + names + occasions + comparisons,
        vague: norms.iter().filter(|w| lexicon::is_vague(w)).count(),
        affect: lexicon::affect(&norms),
        strong_affect: norms
            .iter()
            .filter(|w| lexicon::is_strong_affect(w))
            .map(|w| if lexicon::is_negative(w) { -1 } else { 1 })
            .sum(),
        reflection: norms.iter().filter(|w| lexicon::is_reflection(w)).count()
            + lexicon::count_phrases(&norms, &lexicon::REFLECTION_PHRASES),
        closing: lexicon::count_phrases(&norms, &lexicon::CLOSING_PHRASES),
        yes_no_question: is_yes_no(question),
        echoes_question: echoes(question, &norms),
    }
}

/// Stage 6 LLM pool offline: one [`RubricScore`] (1–5, rationale naming the rule that fired)
/// per rubric name. A rubric name no rule covers scores a neutral 3 and says so.
pub fn score_rubrics_offline(rubrics: &[Rubric], question: &str, answer: &str) -> LlmScores {
    let f = answer_features(question, answer);
    rubrics
        .iter()
        .map(|r| {
            let (score, rationale) = match r.name.as_str() {
                "response_depth" => response_depth(&f),
                "specificity" => specificity(&f),
                "certainty" => certainty(&f),
                "valence" => valence(&f),
                "engagement" => engagement(&f),
                "intellectual_engagement" => intellectual_engagement(&f),
                other => (
                    3,
                    format!("no offline rule exists for the rubric '{other}' → neutral"),
                ),
            };
            (r.name.clone(), RubricScore { score, rationale })
        })
        .collect()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn response_depth(f: &AnswerFeatures) -> (u8, String) {
    let links = plural(f.causal_links, "causal link", "causal links");
    let words = plural(f.words, "word", "words");
    let sentences = plural(f.sentences, "sentence", "sentences");
    let (score, level) = if f.words <= BARE_REPLY_WORDS && f.yes_no_question && f.unsure == 0 {
        (2, "a short reply to a yes/no question → shallow")
    } else if f.words <= BARE_REPLY_WORDS || (f.unsure > 0 && f.words <= 6) {
        (1, "no elaboration → surface")
    } else if f.causal_links == 0 && f.words < 15 {
        (2, "one short statement → shallow")
    } else if f.causal_links == 0 || (f.causal_links == 1 && f.words < 25) {
        (3, "explained a little → moderate")
    } else if (f.causal_links >= 3 && f.words >= 50) || (f.causal_links >= 2 && f.words >= 80) {
        (5, "layered and linked → deep (5)")
    } else {
        (4, "connected points → deep (4)")
    };
    (score, format!("{links}, {words}, {sentences}: {level}"))
}

fn specificity(f: &AnswerFeatures) -> (u8, String) {
    let details = plural(f.details, "concrete detail", "concrete details");
    let vague = plural(f.vague, "vague word", "vague words");
    let (score, level) = if f.details == 0 && (f.vague > 0 || f.words < 8) {
        (1, "nothing concrete → vague")
    } else if f.details == 0 {
        (2, "general statements only")
    } else if f.details == 1 {
        (3, "some concrete elements")
    } else if f.details <= 3 {
        (4, "clearly concrete")
    } else {
        (5, "highly particular")
    };
    (
        score,
        format!("{details} (numbers, names, occasions, comparisons), {vague}: {level}"),
    )
}

fn certainty(f: &AnswerFeatures) -> (u8, String) {
    let hedges = plural(f.hedges, "hedge", "hedges");
    let unsure = plural(f.unsure, "\"not sure\" marker", "\"not sure\" markers");
    let markers = plural(f.certainty_markers, "certainty word", "certainty words");
    let (score, level) = if f.unsure > 0 && f.words <= 8 {
        (1, "unsure and short → unsure")
    } else if f.unsure > 0 || f.hedges >= 3 {
        (2, "heavily hedged")
    } else if f.hedges == 2 || (f.hedges == 1 && f.words < 25) {
        (3, "mixed")
    } else if f.hedges == 1 || f.words < 6 {
        (4, "mostly confident")
    } else {
        (5, "plainly stated")
    };
    (score, format!("{unsure}, {hedges}, {markers}: {level}"))
}

fn valence(f: &AnswerFeatures) -> (u8, String) {
    let (score, level) = if f.affect >= 3 || (f.strong_affect > 0 && f.affect >= 2) {
        (5, "strongly positive")
    } else if f.affect >= 1 {
        (4, "mildly positive")
    } else if f.affect <= -3 || (f.strong_affect < 0 && f.affect <= -2) {
        (1, "strongly negative")
    } else if f.affect <= -1 {
        (2, "mildly negative")
    } else {
        (3, "neutral or balanced")
    };
    (
        score,
        format!(
            "net affect {:+} ({} strong): {level}",
            f.affect, f.strong_affect
        ),
    )
}

fn engagement(f: &AnswerFeatures) -> (u8, String) {
    let words = plural(f.words, "word", "words");
    let extras = f.details + f.causal_links + f.reflection;
    let (score, level) = if (f.closing > 0 && f.words < 15) || f.words <= BARE_REPLY_WORDS {
        (1, "minimal or closing the topic → disengaged")
    } else if f.words < 10 {
        (2, "answers briefly → passive")
    } else if f.echoes_question {
        (2, "repeats the question's words → passive")
    } else if f.words < 25 && f.details == 0 && f.causal_links == 0 {
        (3, "answers without adding → cooperative")
    } else if f.words >= 60 && extras >= 3 {
        (
            5,
            "expansive, volunteers detail and reasons → highly engaged",
        )
    } else {
        (4, "adds detail or reasons → involved")
    };
    (
        score,
        format!("{words}, {extras} details/reasons/reflections: {level}"),
    )
}

fn intellectual_engagement(f: &AnswerFeatures) -> (u8, String) {
    let links = plural(f.causal_links, "causal link", "causal links");
    let reflection = plural(f.reflection, "reflection cue", "reflection cues");
    let (score, level) = if f.causal_links == 0 && f.reflection == 0 {
        (1, "no reasoning")
    } else if f.causal_links == 0 && f.reflection >= 2 {
        (3, "values stated without a causal link")
    } else if f.causal_links == 0 || (f.causal_links == 1 && f.words < 12) {
        (2, "a reason named, not explained")
    } else if f.reflection >= 2 || (f.causal_links >= 2 && f.reflection >= 1) {
        (5, "reasons tied to personal values → deep reflection")
    } else if f.causal_links >= 2 || f.reflection >= 1 || f.contrasts >= 1 {
        (4, "connected or weighed reasons → reflective")
    } else {
        (3, "one cause-and-effect link")
    };
    (score, format!("{links}, {reflection}: {level}"))
}

fn is_yes_no(question: &str) -> bool {
    let first = question
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_lowercase();
    question.trim_end().ends_with('?')
        && matches!(
            first.as_str(),
            "do" | "does"
                | "did"
                | "is"
                | "are"
                | "was"
                | "were"
                | "have"
                | "has"
                | "can"
                | "could"
                | "would"
                | "will"
                | "should"
        )
}

/// Most of the answer's content words (more than three of them) appear in the question.
fn echoes(question: &str, answer: &[&str]) -> bool {
    let asked: Vec<String> = srl::tag_words(question)
        .into_iter()
        .map(|w| w.norm)
        .collect();
    let content: Vec<&&str> = answer
        .iter()
        .filter(|w| !lexicon::is_empty_word(w) && w.len() > 2)
        .collect();
    if content.len() <= 3 {
        return false;
    }
    let shared = content
        .iter()
        .filter(|w| asked.iter().any(|a| a == **w))
        .count();
    shared as f64 / content.len() as f64 >= ECHO_SHARE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::REQUIRED_RUBRICS;

    fn rubrics() -> Vec<Rubric> {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/prompts/signals.md"
        ))
        .unwrap();
        crate::config::parse_rubrics(&text).unwrap()
    }

    const RICH: &str = "I switched to oat milk because it's so creamy, which makes my morning \
        coffee feel like a treat. That matters to me, because on Monday mornings I have about \
        ten minutes before the 8:10 train, so a good coffee helps me start the day calm, and I \
        think being calm with my kids is the kind of parent I want to be.";

    #[test]
    fn one_word_and_rich_causal_answers_score_differently() {
        let q = "Why do you choose oat milk?";
        let bare = score_rubrics_offline(&rubrics(), q, "Taste.");
        let rich = score_rubrics_offline(&rubrics(), q, RICH);
        assert_eq!(bare.len(), 6);
        for name in REQUIRED_RUBRICS {
            assert!(bare.contains_key(name) && rich.contains_key(name), "{name}");
        }
        for name in [
            "response_depth",
            "specificity",
            "engagement",
            "intellectual_engagement",
        ] {
            assert!(
                rich[name].score > bare[name].score,
                "{name}: {:?} vs {:?}",
                rich[name],
                bare[name]
            );
        }
        assert_eq!(bare["response_depth"].score, 1);
        assert!(
            rich["response_depth"].score >= 4,
            "{:?}",
            rich["response_depth"]
        );
        assert!(rich["response_depth"].rationale.contains("causal links"));
        assert!(bare["response_depth"].rationale.contains("1 word"));
    }

    #[test]
    fn every_score_is_in_range_with_a_rationale() {
        for answer in ["", "Yes.", "Not sure. I just like it.", RICH] {
            for (name, s) in score_rubrics_offline(&rubrics(), "Is it good?", answer) {
                assert!((1..=5).contains(&s.score), "{name}: {s:?}");
                assert!(s.rationale.contains(':'), "{name}: {s:?}");
            }
        }
    }

    #[test]
    fn unknown_rubrics_are_neutral_and_say_why() {
        let extra = crate::config::parse_rubrics("humour: How funny?\n    1 = not\n").unwrap();
        let s = score_rubrics_offline(&extra, "", "A long and funny answer.");
        assert_eq!(s["humour"].score, 3);
        assert!(s["humour"].rationale.contains("no offline rule"));
    }

    #[test]
    fn hedges_and_unsure_lower_certainty() {
        let r = rubrics();
        let unsure = score_rubrics_offline(&r, "", "Not sure. I just like it.");
        let hedged = score_rubrics_offline(
            &r,
            "",
            "I guess it's maybe sort of cheaper, probably, I think.",
        );
        let plain = score_rubrics_offline(
            &r,
            "",
            "It froths well and keeps for a week in the fridge once it is open.",
        );
        assert_eq!(unsure["certainty"].score, 1);
        assert_eq!(hedged["certainty"].score, 2);
        assert_eq!(plain["certainty"].score, 5);
    }

    #[test]
    fn affect_sets_valence_with_negation() {
        let r = rubrics();
        let v = |a: &str| score_rubrics_offline(&r, "", a)["valence"].score;
        assert_eq!(v("I love it, it's creamy and tastes great."), 5);
        assert_eq!(v("It's fine."), 3);
        assert_eq!(v("The app was awful and I was stranded and worried."), 1);
        assert_eq!(v("It's not bad."), 4);
    }

    #[test]
    fn a_short_yes_to_a_yes_no_question_is_shallow_not_surface() {
        let s = score_rubrics_offline(&rubrics(), "Do you use it every day?", "Yes, daily.");
        assert_eq!(s["response_depth"].score, 2);
        assert!(s["response_depth"].rationale.contains("yes/no"));
    }

    #[test]
    fn features_count_links_details_and_reflection() {
        let f = answer_features("", RICH);
        assert!(f.causal_links >= 3, "{f:?}");
        assert!(f.details >= 3, "{f:?}");
        assert!(f.reflection >= 2, "{f:?}");
        assert!(f.hedges >= 1, "{f:?}");
        let echo = answer_features(
            "What does a creamy, frothy latte do for you in the morning?",
            "A creamy frothy latte in the morning.",
        );
        assert!(echo.echoes_question, "{echo:?}");
    }
}
