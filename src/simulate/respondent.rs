//! [`PersonaRespondent`]: answers an interviewer's questions in character through the
//! `respondent` LLM role.
//!
//! Before each answer the respondent makes its plan ([`AnswerPlan`]): a length class drawn from
//! the persona's `response_patterns` (shifted toward short answers once a fatiguing persona
//! tires), a target word count within the class, and whether to deflect. Every draw comes from a
//! generator derived from the simulation seed and the turn number only, so a turn's plan is the
//! same in a resumed run, and every persona and methodology of a matrix run with one seed faces
//! the same dice (common random numbers: differences between cells are not luck).

use crate::config::Persona;
use crate::domain::Speaker;
use crate::llm::{LlmError, LlmResponse, LlmRouter, Role};
use crate::prompts::{AnswerLength, Line, RespondentInput, parse_respondent_reply};

use super::rng::SplitMix64;

/// Name of the respondent's random stream (see [`SplitMix64::derived`]).
const STREAM: &str = "respondent";
/// Share of the shifted probability mass that fatigue moves to acknowledgments; the rest goes
/// to brief answers. Half and half: a tired respondent gives one-liners and "yeah" alike.
const FATIGUE_TO_ACKNOWLEDGMENT: f64 = 0.5;
/// How much fatigue shrinks a target within its class: at full fatigue a target is half its
/// rested length, so even a tired "detailed" answer is visibly shorter.
const FATIGUE_WORD_SHRINK: f64 = 0.5;

/// What the respondent will do for one question.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerPlan {
    pub turn: u32,
    pub length: AnswerLength,
    /// Words to aim for; the reply is cut at about 1.5 times this.
    pub target_words: u32,
    /// `Some` when the answer deflects: one of the persona's deflection patterns as an example,
    /// or `None` inside when the persona lists none.
    pub deflection: Option<Option<String>>,
    /// How tired the respondent is, in [0, 1] (see [`fatigue_level`]).
    pub fatigue: f64,
}

/// One answer with the call that produced it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub plan: AnswerPlan,
    pub response: LlmResponse,
}

/// Why the respondent produced no answer.
#[derive(Debug, thiserror::Error)]
pub enum RespondentError {
    #[error("respondent (turn {turn}): {source}")]
    Llm {
        turn: u32,
        #[source]
        source: LlmError,
    },
    /// The model answered, but its reply is not a usable answer (empty, no words).
    #[error("respondent (turn {turn}): unusable reply: {source}")]
    Reply {
        turn: u32,
        #[source]
        source: crate::reply_json::ContractError,
        /// Tokens of the rejected call, for the usage record.
        tokens_in: u64,
        tokens_out: u64,
    },
}

/// Fatigue at `turn`, in [0, 1]: 0 before the persona's `fatigue.start_turn` (or without
/// fatigue), then `brevity_increase_per_turn` more every turn from `start_turn` on.
pub fn fatigue_level(persona: &Persona, turn: u32) -> f64 {
    let Some(f) = persona.fatigue else {
        return 0.0;
    };
    if turn < f.start_turn {
        return 0.0;
    }
    let tired_turns = f64::from(turn - f.start_turn + 1);
    (tired_turns * f.brevity_increase_per_turn).clamp(0.0, 1.0)
}

/// The length distribution at `turn`, shortest class first.
///
/// Fatigue `s` keeps `1 − s` of the detailed and medium shares and moves the rest to brief and
/// acknowledgment answers (half each), so the shares still sum to the persona's total.
pub fn length_weights(persona: &Persona, turn: u32) -> [(AnswerLength, f64); 4] {
    let p = persona.response_patterns;
    let s = fatigue_level(persona, turn);
    let moved = (p.detailed + p.medium) * s;
    [
        (
            AnswerLength::Acknowledgment,
            p.acknowledgment + moved * FATIGUE_TO_ACKNOWLEDGMENT,
        ),
        (
            AnswerLength::Brief,
            p.brief + moved * (1.0 - FATIGUE_TO_ACKNOWLEDGMENT),
        ),
        (AnswerLength::Medium, p.medium * (1.0 - s)),
        (AnswerLength::Detailed, p.detailed * (1.0 - s)),
    ]
}

/// The target word range of `length` at fatigue `s`.
fn word_range(length: AnswerLength, s: f64) -> (u32, u32) {
    let (lo, hi) = length.word_range();
    let scale = |n: u32| {
        let scaled = (f64::from(n) * (1.0 - FATIGUE_WORD_SHRINK * s)).round();
        // Ranges are tens of words and the scale is in [0.5, 1], so this stays in u32.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let scaled = scaled as u32;
        scaled.max(1)
    };
    (scale(lo), scale(hi))
}

/// The mean target word count at `turn`: what fatigue does to answers on average.
pub fn expected_target_words(persona: &Persona, turn: u32) -> f64 {
    let s = fatigue_level(persona, turn);
    let total: f64 = length_weights(persona, turn).iter().map(|(_, w)| w).sum();
    if total <= 0.0 {
        return 0.0;
    }
    length_weights(persona, turn)
        .iter()
        .map(|(length, w)| {
            let (lo, hi) = word_range(*length, s);
            w / total * f64::from(lo + hi) / 2.0
        })
        .sum()
}

/// Draws the plan for `turn` from `rng`.
///
/// The draws are always made in the same order and number (deflection, length, words,
/// pattern), so one choice never shifts the randomness of another. The length is found by
/// walking the cumulative distribution from the shortest class, so with the same draws a more
/// tired respondent never picks a longer class.
pub fn plan_answer(persona: &Persona, turn: u32, rng: &mut SplitMix64) -> AnswerPlan {
    let deflect_draw = rng.next_f64();
    let length_draw = rng.next_f64();
    let fatigue = fatigue_level(persona, turn);
    let weights = length_weights(persona, turn);
    let total: f64 = weights.iter().map(|(_, w)| w).sum();
    let mut cumulative = 0.0;
    let mut length = AnswerLength::Detailed;
    for (class, w) in weights {
        cumulative += w / total.max(f64::MIN_POSITIVE);
        if length_draw < cumulative {
            length = class;
            break;
        }
    }
    let (lo, hi) = word_range(length, fatigue);
    let target_words = rng.range_inclusive(lo, hi);
    let patterns = &persona.deflection_patterns;
    let last = u32::try_from(patterns.len().saturating_sub(1)).unwrap_or(u32::MAX);
    let pattern_index = rng.range_inclusive(0, last) as usize;
    let deflection =
        (deflect_draw < persona.deflection_rate).then(|| patterns.get(pattern_index).cloned());
    AnswerPlan {
        turn,
        length,
        target_words,
        deflection,
        fatigue,
    }
}

/// A synthetic respondent: a persona, the topic it was recruited for, and a seed.
#[derive(Debug, Clone)]
pub struct PersonaRespondent {
    persona: Persona,
    topic: String,
    seed: u64,
}

impl PersonaRespondent {
    pub fn new(persona: Persona, topic: impl Into<String>, seed: u64) -> Self {
        Self {
            persona,
            topic: topic.into(),
            seed,
        }
    }

    pub fn persona(&self) -> &Persona {
        &self.persona
    }

    /// The plan for `turn`, from the generator of this seed and turn.
    pub fn plan(&self, turn: u32) -> AnswerPlan {
        let mut rng = SplitMix64::derived(self.seed, STREAM, u64::from(turn));
        plan_answer(&self.persona, turn, &mut rng)
    }

    /// The prompt for `plan`, given the conversation so far (which ends with the question).
    pub fn prompt(
        &self,
        plan: &AnswerPlan,
        conversation: &[(Speaker, String)],
    ) -> crate::prompts::Prompt {
        let lines: Vec<Line<'_>> = conversation
            .iter()
            .map(|(speaker, text)| Line {
                speaker: *speaker,
                text,
            })
            .collect();
        crate::prompts::respondent_prompt(&RespondentInput {
            persona: &self.persona,
            topic: &self.topic,
            conversation: &lines,
            length: plan.length,
            target_words: plan.target_words,
            deflection: plan.deflection.as_ref().map(Option::as_deref),
            fatigue: plan.fatigue,
        })
    }

    /// Answers the last question of `conversation` as the answer of `turn`.
    ///
    /// The request uses the role's configured temperature (`LLM_RESPONDENT_TEMPERATURE`
    /// overrides it), not the prompt's default.
    pub async fn answer(
        &self,
        llm: &LlmRouter,
        turn: u32,
        conversation: &[(Speaker, String)],
    ) -> Result<Answer, RespondentError> {
        let plan = self.plan(turn);
        let prompt = self.prompt(&plan, conversation);
        let request = llm
            .request(Role::Respondent, prompt.system, prompt.user, None, turn)
            .map_err(|source| RespondentError::Llm { turn, source })?;
        let response = llm
            .complete(&request)
            .await
            .map_err(|source| RespondentError::Llm { turn, source })?;
        let text = parse_respondent_reply(&response.text, plan.target_words).map_err(|source| {
            RespondentError::Reply {
                turn,
                source,
                tokens_in: response.tokens_in,
                tokens_out: response.tokens_out,
            }
        })?;
        Ok(Answer {
            text,
            plan,
            response,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigDir;

    fn persona(id: &str) -> Persona {
        ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
            .persona(id)
            .unwrap()
    }

    #[test]
    fn weights_keep_their_sum_under_fatigue() {
        let p = persona("fatiguing");
        for turn in [1, 5, 6, 9, 20, 40] {
            let sum: f64 = length_weights(&p, turn).iter().map(|(_, w)| w).sum();
            assert!((sum - 1.0).abs() < 1e-9, "turn {turn}: {sum}");
        }
        assert_eq!(fatigue_level(&p, 5), 0.0);
        assert!((fatigue_level(&p, 6) - 0.1).abs() < 1e-12);
        assert_eq!(fatigue_level(&p, 40), 1.0);
        let tired = length_weights(&p, 40);
        assert_eq!(
            tired[2].1 + tired[3].1,
            0.0,
            "no medium or detailed answers left"
        );
    }

    #[test]
    fn personas_without_fatigue_do_not_tire() {
        let p = persona("cooperative");
        assert_eq!(length_weights(&p, 1), length_weights(&p, 30));
        assert_eq!(expected_target_words(&p, 1), expected_target_words(&p, 30));
    }

    #[test]
    fn the_same_draws_never_give_a_tired_respondent_a_longer_answer() {
        let p = persona("fatiguing");
        for seed in 0..500 {
            let rested = plan_answer(&p, 1, &mut SplitMix64::new(seed));
            let tired = plan_answer(&p, 12, &mut SplitMix64::new(seed));
            assert!(tired.length <= rested.length, "seed {seed}");
            assert!(tired.target_words <= rested.target_words, "seed {seed}");
        }
    }

    #[test]
    fn deflection_follows_the_rate() {
        let p = persona("hedging");
        let deflected = (0..2000)
            .filter(|seed| {
                plan_answer(&p, 1, &mut SplitMix64::new(*seed))
                    .deflection
                    .is_some()
            })
            .count();
        // deflection_rate 0.35: 700 expected; ±100 is over four standard deviations.
        assert!((600..=800).contains(&deflected), "{deflected}");
        let never = persona("cooperative");
        let plan = plan_answer(
            &Persona {
                deflection_rate: 0.0,
                ..never
            },
            1,
            &mut SplitMix64::new(3),
        );
        assert_eq!(plan.deflection, None);
    }

    #[test]
    fn deflections_carry_one_of_the_personas_patterns() {
        let p = Persona {
            deflection_rate: 1.0,
            ..persona("skeptical")
        };
        for seed in 0..50 {
            let plan = plan_answer(&p, 2, &mut SplitMix64::new(seed));
            let example = plan.deflection.unwrap().unwrap();
            assert!(p.deflection_patterns.contains(&example));
        }
        let bare = Persona {
            deflection_patterns: Vec::new(),
            ..p
        };
        let plan = plan_answer(&bare, 2, &mut SplitMix64::new(1));
        assert_eq!(plan.deflection, Some(None));
    }

    #[test]
    fn targets_lie_in_their_class_range() {
        let p = persona("verbose_tangential");
        for seed in 0..300 {
            let plan = plan_answer(&p, 1, &mut SplitMix64::new(seed));
            let (lo, hi) = plan.length.word_range();
            assert!((lo..=hi).contains(&plan.target_words), "{plan:?}");
        }
    }
}
