//! Choosing the next token: greedy, or sampled at a temperature from a seeded generator.

pub(super) fn argmax(logits: &[f32]) -> u32 {
    logits
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .and_then(|(i, _)| u32::try_from(i).ok())
        .unwrap_or(0)
}

pub(super) fn log_softmax(logits: &[f32]) -> Vec<f64> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|l| f64::from(l - max).exp()).sum();
    let log_sum = sum.ln();
    logits
        .iter()
        .map(|l| f64::from(l - max) - log_sum)
        .collect()
}

/// The `k` likeliest tokens with their log-probabilities, likeliest first; tokens at −∞ are
/// never chosen.
pub(super) fn top_k(logprobs: &[f64], k: usize) -> Vec<(u32, f64)> {
    let mut ranked: Vec<(u32, f64)> = logprobs
        .iter()
        .enumerate()
        .filter(|(_, lp)| lp.is_finite())
        .filter_map(|(i, lp)| u32::try_from(i).ok().map(|i| (i, *lp)))
        .collect();
    let k = k.min(ranked.len());
    if k == 0 {
        return Vec::new();
    }
    ranked.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
    ranked.truncate(k);
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranked
}

pub(super) fn sample(logits: &[f32], temperature: f64, rng: &mut XorShift) -> u32 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let weights: Vec<f64> = logits
        .iter()
        .map(|l| (f64::from(l - max) / temperature).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut target = rng.next_f64() * total;
    for (i, w) in weights.iter().enumerate() {
        target -= w;
        if target <= 0.0 {
            return u32::try_from(i).unwrap_or(0);
        }
    }
    argmax(logits)
}

/// A small deterministic generator for temperature fallback: the same audio gives the same
/// transcript on every run.
pub(super) struct XorShift(u64);

impl XorShift {
    pub(super) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(super) fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_ranks_the_likeliest_and_skips_the_impossible() {
        let logprobs = [-2.0, f64::NEG_INFINITY, -0.5, -1.0, -3.0];
        assert_eq!(top_k(&logprobs, 3), vec![(2, -0.5), (3, -1.0), (0, -2.0)]);
        assert_eq!(top_k(&logprobs, 9).len(), 4);
        assert!(top_k(&[f64::NEG_INFINITY], 2).is_empty());
    }

    #[test]
    fn sampling_and_helpers() {
        let logits = [0.0, 5.0, 1.0];
        assert_eq!(argmax(&logits), 1);
        let lp = log_softmax(&logits);
        assert!((lp.iter().map(|l| l.exp()).sum::<f64>() - 1.0).abs() < 1e-9);
        let mut rng = XorShift::new(3);
        let picks: Vec<u32> = (0..200).map(|_| sample(&logits, 0.5, &mut rng)).collect();
        assert!(picks.iter().filter(|&&p| p == 1).count() > 190);
    }
}
