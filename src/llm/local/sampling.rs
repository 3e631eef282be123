//! Choosing the next token: sampling settings, the schema mask, the closing steering and the
//! repetition penalty. Pure functions over logits, so they are tested without a model.

use candle_core::{Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use toktrie::SimpleVob;

use super::LocalError;
use super::tokenizer::TextTokenizer;

/// Sampling keeps the 40 likeliest tokens, then the nucleus of 95% probability: small models
/// derail on the long tail of a 49k vocabulary at the interview's temperatures.
const TOP_K: usize = 40;
const TOP_P: f64 = 0.95;
/// Temperatures at or below this are greedy decoding.
const GREEDY_BELOW: f32 = 1e-3;
/// llama.cpp's default repetition penalty over the last 64 reply tokens; the 135M model
/// otherwise loops ("I'm not sure about the price either, but I'm not sure about…"). Only
/// tokens that carry words are penalised, so JSON punctuation stays as likely as ever.
const REPEAT_PENALTY: f32 = 1.1;
const REPEAT_WINDOW: usize = 64;

/// The sampling for a request's temperature.
pub(super) fn sampling(temperature: f32) -> Sampling {
    if temperature <= GREEDY_BELOW || !temperature.is_finite() {
        Sampling::ArgMax
    } else {
        Sampling::TopKThenTopP {
            k: TOP_K,
            p: TOP_P,
            temperature: f64::from(temperature),
        }
    }
}

/// Draws the next token from `logits`.
pub(super) fn sample(sampler: &mut LogitsProcessor, logits: Vec<f32>) -> Result<u32, LocalError> {
    let len = logits.len();
    Tensor::from_vec(logits, len, &Device::Cpu)
        .and_then(|t| sampler.sample(&t))
        .map_err(|e| LocalError::Inference(format!("sampling: {e}")))
}

/// Raises the logits of `tokens` by `bonus` (forbidden ones stay at −∞).
pub(super) fn favour(logits: &mut [f32], tokens: &[u32], bonus: f32) {
    for token in tokens {
        if let Some(logit) = logits.get_mut(*token as usize) {
            *logit += bonus;
        }
    }
}

/// The token with the largest logit (greedy decoding), if any.
pub(super) fn argmax(logits: &[f32]) -> Option<u32> {
    logits
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .and_then(|(i, _)| u32::try_from(i).ok())
}

/// Sets every token the mask forbids to −∞; an empty mask is an error rather than a sample
/// from nothing.
pub(super) fn apply_mask(logits: &mut [f32], mask: &SimpleVob) -> Result<(), LocalError> {
    let allowed = mask.len().min(logits.len());
    let mut any = false;
    for (index, logit) in logits.iter_mut().enumerate() {
        if index < allowed && mask.get(index) {
            any = true;
        } else {
            *logit = f32::NEG_INFINITY;
        }
    }
    if any {
        Ok(())
    } else {
        Err(LocalError::Schema(
            "no token of the vocabulary can continue the reply".to_owned(),
        ))
    }
}

/// The allowed token with the highest logit from the first closer group that has one, else the
/// allowed token with the highest logit: the quickest way to a reply the schema accepts.
pub(super) fn close_or_greedy(logits: &[f32], closer_groups: &[&[u32]]) -> Result<u32, LocalError> {
    let best = |ids: &mut dyn Iterator<Item = u32>| {
        ids.filter_map(|id| logits.get(id as usize).map(|l| (id, *l)))
            .filter(|(_, l)| l.is_finite())
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(id, _)| id)
    };
    closer_groups
        .iter()
        .find_map(|group| best(&mut group.iter().copied()))
        .or_else(|| best(&mut (0..logits.len()).filter_map(|i| u32::try_from(i).ok())))
        .ok_or_else(|| LocalError::Schema("no token can continue the reply".to_owned()))
}

/// llama.cpp's repetition penalty over the recent reply tokens that carry words.
pub(super) fn penalise_repeats(logits: &mut [f32], reply: &[u32], tokenizer: &TextTokenizer) {
    let recent = reply
        .get(reply.len().saturating_sub(REPEAT_WINDOW)..)
        .unwrap_or_default();
    let mut seen = std::collections::HashSet::with_capacity(recent.len());
    for token in recent {
        if seen.insert(*token)
            && tokenizer.is_wordy(*token)
            && let Some(logit) = logits.get_mut(*token as usize)
        {
            *logit = if *logit >= 0.0 {
                *logit / REPEAT_PENALTY
            } else {
                *logit * REPEAT_PENALTY
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_forbids_and_refuses_an_empty_mask() {
        let mut mask = SimpleVob::alloc(4);
        mask.allow_token(2);
        let mut logits = vec![1.0, 2.0, 3.0, 4.0, 5.0];
        apply_mask(&mut logits, &mask).unwrap();
        assert_eq!(logits[2], 3.0);
        assert!(
            logits
                .iter()
                .enumerate()
                .all(|(i, l)| i == 2 || *l == f32::NEG_INFINITY)
        );
        let empty = SimpleVob::alloc(4);
        assert!(apply_mask(&mut logits, &empty).is_err());
    }

    #[test]
    fn closing_prefers_closers_then_the_best_allowed_token() {
        let inf = f32::NEG_INFINITY;
        let logits = [3.0, 1.0, 0.5, 2.0];
        assert_eq!(close_or_greedy(&logits, &[&[1, 3]]).unwrap(), 3);
        assert_eq!(close_or_greedy(&logits, &[&[2], &[1, 3]]).unwrap(), 2);
        assert_eq!(
            close_or_greedy(&[3.0, inf, 0.5, inf], &[&[1, 3]]).unwrap(),
            0
        );
        assert!(close_or_greedy(&[inf, inf], &[&[0]]).is_err());
    }

    #[test]
    fn favouring_raises_only_the_named_allowed_tokens() {
        let mut logits = vec![1.0, f32::NEG_INFINITY, 3.0];
        favour(&mut logits, &[0, 1, 7], 2.5);
        assert_eq!(logits, vec![3.5, f32::NEG_INFINITY, 3.0]);
        assert_eq!(argmax(&logits), Some(0));
    }

    #[test]
    fn zero_temperature_is_greedy() {
        assert_eq!(sampling(0.0), Sampling::ArgMax);
        assert!(matches!(sampling(0.8), Sampling::TopKThenTopP { .. }));
    }
}
