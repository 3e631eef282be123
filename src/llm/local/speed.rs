//! Measuring the local model's speed: prompt tokens per second and generated tokens per second
//! at a chosen context length, for `models verify` and the benchmarks.
//!
//! A reply's own timings (`GenerationStats`) depend on when the model decides to stop and on
//! the constraint's masks; a measurement instead runs a prompt of the asked length from scratch
//! and then exactly the asked number of greedy tokens, so the figures are comparable between
//! runs and machines.

use std::time::Duration;

use super::LocalError;
use super::tokenizer::TextTokenizer;

/// Interview-like text the probe prompt repeats.
const PROBE_SENTENCE: &str = "I usually buy oat milk for my coffee because it foams well and \
                              tastes slightly sweet, and I feel it is better for the planet \
                              than dairy. ";

/// One speed measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Speed {
    /// Prompt tokens run (chat markup included).
    pub prompt_tokens: usize,
    /// Time to run the prompt.
    pub prefill: Duration,
    /// Tokens generated after it, one forward pass each.
    pub reply_tokens: usize,
    /// Time to generate them.
    pub decode: Duration,
}

impl Speed {
    /// Prompt tokens per second.
    pub fn prefill_per_second(&self) -> f64 {
        per_second(self.prompt_tokens, self.prefill)
    }

    /// Generated tokens per second.
    pub fn decode_per_second(&self) -> f64 {
        per_second(self.reply_tokens, self.decode)
    }
}

fn per_second(tokens: usize, time: Duration) -> f64 {
    let seconds = time.as_secs_f64();
    if seconds > 0.0 {
        tokens as f64 / seconds
    } else {
        0.0
    }
}

/// Text of about `tokens` tokens (at least one sentence), repeating [`PROBE_SENTENCE`].
pub(super) fn probe_text(tokenizer: &TextTokenizer, tokens: usize) -> Result<String, LocalError> {
    let per_sentence = tokenizer.encode(PROBE_SENTENCE)?.len().max(1);
    Ok(PROBE_SENTENCE.repeat(tokens.div_ceil(per_sentence).max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_divide_tokens_by_seconds_and_survive_zero_time() {
        let speed = Speed {
            prompt_tokens: 500,
            prefill: Duration::from_millis(250),
            reply_tokens: 30,
            decode: Duration::ZERO,
        };
        assert!((speed.prefill_per_second() - 2_000.0).abs() < 1e-9);
        assert!(speed.decode_per_second().abs() < f64::EPSILON);
    }
}
