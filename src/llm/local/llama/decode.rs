//! Attention of one new token over the cache, run by the kernel crate's [`Attention`] (which
//! the test builds optimise, as they do not this crate) on threads chosen here.
//!
//! From 1,024 cached positions the kernel's units are shared with candle's barrier pool, the
//! threads that run the weight products: between two products its workers spin waiting for the
//! next one, so they take units at once instead of taking the core from the caller. Spreading
//! the units over a rayon pool instead was slower on the 2-core machines this is measured on
//! (its worker and candle's spinning one were three threads on two cores). Measured in one
//! sitting after a 2,671-token prompt, five alternating runs each: 24.0–33.0 tokens/s (median
//! 24.7) on the calling thread alone, 28.1–37.7 (median 34.6) shared.

use std::sync::OnceLock;

use interviewer_kernels::{Attention, CachedLayer, HeadLayout, Partial};

/// Cached positions from which the units are shared with candle's barrier pool; below it a
/// layer's attention is too short to be worth splitting.
const PARALLEL_FROM: usize = 1024;

/// Softmax-weighted values of `queries` (`heads × head_dim`, rotary applied) over the cached
/// positions of `layer`; returns `heads × head_dim`.
pub(super) fn attend(queries: &[f32], layer: CachedLayer<'_>, heads: HeadLayout) -> Vec<f32> {
    let attention = Attention::new(queries, layer, heads);
    if layer.len < PARALLEL_FROM {
        return attention.run();
    }
    let units = attention.units();
    let slots: Vec<OnceLock<Partial>> = (0..units).map(|_| OnceLock::new()).collect();
    candle_core::utils::barrier_pool().execute_chunked(units, |range| {
        for unit in range {
            if let Some(slot) = slots.get(unit) {
                let _ = slot.set(attention.unit(unit));
            }
        }
    });
    let partials: Vec<Partial> = slots.into_iter().filter_map(OnceLock::into_inner).collect();
    attention.merge(&partials)
}

#[cfg(test)]
mod tests {
    use interviewer_kernels::{KvRows, kv_steps_per_row, quantize_rows};

    use super::*;

    #[test]
    fn units_shared_with_the_pool_give_what_the_calling_thread_alone_gives() {
        let heads = HeadLayout {
            queries: 9,
            kv: 3,
            size: 64,
        };
        let (capacity, len) = (1_400, PARALLEL_FROM + 300);
        let numbers = |seed: u32| -> Vec<f32> {
            (0..heads.kv * capacity * heads.size)
                .map(|i| {
                    let x = u32::try_from(i).unwrap_or(0).wrapping_mul(2_654_435_761) ^ seed;
                    f32::from(u16::try_from((x >> 8) % 4_001).unwrap_or(0)) / 1_000.0 - 2.0
                })
                .collect()
        };
        let quantized = |seed: u32| {
            let values = numbers(seed);
            let mut quants = vec![0; values.len()];
            let mut steps = vec![0.0; values.len() / heads.size * kv_steps_per_row(heads.size)];
            quantize_rows(&values, heads.size, &mut quants, &mut steps);
            (quants, steps)
        };
        let (keys, values) = (quantized(1), quantized(2));
        let layer = CachedLayer {
            keys: KvRows {
                quants: &keys.0,
                steps: &keys.1,
            },
            values: KvRows {
                quants: &values.0,
                steps: &values.1,
            },
            capacity,
            len,
        };
        let queries: Vec<f32> = numbers(3)
            .into_iter()
            .take(heads.queries * heads.size)
            .collect();
        let shared = attend(&queries, layer, heads);
        assert_eq!(shared.len(), heads.queries * heads.size);
        assert_eq!(shared, Attention::new(&queries, layer, heads).run());
    }
}
