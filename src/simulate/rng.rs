//! A small seeded random number generator (`SplitMix64`) and seed derivation.
//!
//! Simulations must be reproducible from one `--seed`, on every platform and Rust version, so
//! the generator is written out here rather than taken from a crate whose stream might change
//! between releases. `SplitMix64` passes `BigCrush` for this kind of use (a handful of draws per
//! turn) and its whole state is one `u64`, so a turn's generator can be derived from the seed
//! and the turn number alone: a resumed run draws exactly what the interrupted one drew.
//!
//! Not for anything security-related.

/// `SplitMix64` (Steele, Lea and Flood, 2014): a 64-bit counter passed through a mixing function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

/// The golden-ratio increment of `SplitMix64`.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The generator for one named stream and index of a seed, e.g. the respondent's draws for
    /// turn 3. Streams with different names or indices are unrelated.
    pub fn derived(seed: u64, stream: &str, index: u64) -> Self {
        let mut g = Self::new(seed ^ fnv1a(stream.as_bytes()));
        let base = g.next_u64();
        Self::new(mix(base ^ mix(index.wrapping_add(GAMMA))))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// A uniform float in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        // The top 53 bits fit an f64 mantissa exactly, so the conversion is lossless.
        #[allow(clippy::cast_precision_loss)]
        let numerator = (self.next_u64() >> 11) as f64;
        numerator / (1u64 << 53) as f64
    }

    /// A uniform integer in `lo..=hi` (`lo` when `hi < lo`).
    pub fn range_inclusive(&mut self, lo: u32, hi: u32) -> u32 {
        if hi <= lo {
            // Draw anyway so the stream's layout does not depend on the bounds.
            self.next_u64();
            return lo;
        }
        let span = u64::from(hi - lo) + 1;
        // Multiply-shift maps 64 random bits onto the span; the bias is below 2^-32 here.
        let offset = (u128::from(self.next_u64()) * u128::from(span)) >> 64;
        lo + u32::try_from(offset).unwrap_or(0)
    }
}

/// The `SplitMix64` output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, 64 bits: a fixed, platform-independent hash for seeds and ids.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01B3;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_splitmix64_stream() {
        // Reference values of SplitMix64 seeded with 1234567 (from the published C code).
        let mut g = SplitMix64::new(1_234_567);
        let got: Vec<u64> = (0..3).map(|_| g.next_u64()).collect();
        assert_eq!(
            got,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
    }

    #[test]
    fn floats_and_ranges_stay_in_bounds() {
        let mut g = SplitMix64::new(7);
        for _ in 0..10_000 {
            let f = g.next_f64();
            assert!((0.0..1.0).contains(&f));
            let r = g.range_inclusive(3, 9);
            assert!((3..=9).contains(&r));
        }
        assert_eq!(g.range_inclusive(5, 5), 5);
        assert_eq!(g.range_inclusive(5, 2), 5);
    }

    #[test]
    fn every_value_of_a_small_range_is_drawn() {
        let mut g = SplitMix64::new(11);
        let mut seen = [false; 4];
        for _ in 0..200 {
            seen[g.range_inclusive(0, 3) as usize] = true;
        }
        assert_eq!(seen, [true; 4]);
    }

    #[test]
    fn derived_streams_are_stable_and_distinct() {
        let a = SplitMix64::derived(42, "respondent", 1).next_u64();
        assert_eq!(a, SplitMix64::derived(42, "respondent", 1).next_u64());
        assert_ne!(a, SplitMix64::derived(42, "respondent", 2).next_u64());
        assert_ne!(a, SplitMix64::derived(43, "respondent", 1).next_u64());
        assert_ne!(a, SplitMix64::derived(42, "other", 1).next_u64());
    }

    #[test]
    fn fnv1a_matches_known_vectors() {
        assert_eq!(fnv1a(b""), 0xCBF2_9CE4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xAF63_DC4C_8601_EC8C);
    }
}
