//! The `Q4_1` products with AVX2 integer instructions, the path every x86-64 machine of the
//! last decade takes.
//!
//! Widening nibbles to f32 and multiplying in f32 costs about twenty instructions per block,
//! which kept the portable kernel at about a third of the speed memory allows. Here the
//! activations are rounded to 8 bits per block ([`super::Activations`] does it once per product) and a
//! block's 32 nibble × activation products are summed by two integer instructions
//! (`vpmaddubsw`, then `vpmaddwd`), about ten instructions per block in all. The rounding is
//! the one llama.cpp and candle apply to activations for their 4-bit kernels; the minimum term
//! `m × Σ xᵢ` still uses the exact f32 sums.

use std::arch::x86_64::{__m128i, __m256, __m256i};

use pulp::Simd;
use pulp::x86::V3;

use super::{BLOCK, NIBBLE_BYTES, Pass, RowProducts, RowWeights, TOKENS_PER_PASS};

/// The AVX2 products, with the per-row scratch they need.
pub(super) struct Kernel {
    simd: V3,
    /// Per block of the row: its scale times the activations' step.
    factor: Vec<f32>,
}

impl Kernel {
    pub(super) fn new(simd: V3, blocks_per_row: usize) -> Self {
        Self {
            simd,
            factor: vec![0.0; blocks_per_row],
        }
    }
}

impl RowProducts for Kernel {
    #[inline(always)]
    fn one_token(&mut self, row: &RowWeights<'_>, pass: &Pass<'_>) -> f32 {
        for ((f, d), step) in self.factor.iter_mut().zip(row.scale).zip(pass.steps) {
            *f = d * step;
        }
        let offset = minimum_term(self.simd, row.minimum, pass.sums);
        one_token(self.simd, row.nibbles, &self.factor, pass.quantized) + offset
    }

    #[inline(always)]
    fn several_tokens(&mut self, row: &RowWeights<'_>, pass: &Pass<'_>, target: &mut [f32]) {
        several_tokens(self.simd, row, pass, target);
    }
}

/// `Σ m_b × Σ x` over a row's blocks for one token: the part of the product the minimums
/// contribute, in eight lanes rather than a chain of scalar additions.
#[inline(always)]
pub(super) fn minimum_term<S: Simd>(simd: S, minimum: &[f32], sums: &[f32]) -> f32 {
    let (m_lanes, m_tail) = S::as_simd_f32s(minimum);
    let (s_lanes, s_tail) = S::as_simd_f32s(sums);
    let mut acc = simd.splat_f32s(0.0);
    for (m, s) in m_lanes.iter().zip(s_lanes) {
        acc = simd.mul_add_f32s(*m, *s, acc);
    }
    let tail: f32 = m_tail.iter().zip(s_tail).map(|(m, s)| m * s).sum();
    simd.reduce_sum_f32s(acc) + tail
}

/// Bytes of weights read ahead of the block being multiplied: one 4 KB page, the boundary the
/// processor's own prefetchers stop at.
const PREFETCH_AHEAD: usize = 4096;

/// Asks for the weights [`PREFETCH_AHEAD`] bytes past `at` to be loaded into the cache.
/// A product streams through its matrix once, and the hardware prefetchers alone kept two
/// threads at about 10 GB/s of the 18 GB/s this machine reads sequentially; with this, the
/// products of a generated token (84 MB, two threads) took 4.8–8.4 ms instead of 6.9–10.3 ms
/// (medians of 40 alternating runs in one process, three sittings). Past the end of the
/// matrix the address is never read: a prefetch cannot fault.
#[inline(always)]
pub(crate) fn read_ahead<T>(simd: V3, at: &T) {
    let ahead = std::ptr::from_ref(at)
        .cast::<i8>()
        .wrapping_add(PREFETCH_AHEAD);
    simd.sse
        ._mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ahead);
}

/// A block's 32 weights as bytes 0–15, in the order of its activations: the low nibbles in
/// the lower 128 bits, the high nibbles in the upper.
#[inline(always)]
pub(super) fn unpack(simd: V3, bytes: &[u8; NIBBLE_BYTES]) -> __m256i {
    let low: __m128i = pulp::cast(*bytes);
    let high = simd.sse2._mm_srli_epi16::<4>(low);
    let both = simd.avx._mm256_set_m128i(high, low);
    simd.avx2
        ._mm256_and_si256(both, simd.avx._mm256_set1_epi8(0x0f))
}

/// `Σ qᵢxᵢ` of a block in eight f32 lanes still to be added up.
#[inline(always)]
pub(super) fn block_dot(simd: V3, weights: __m256i, activations: &[i8; BLOCK]) -> __m256 {
    let activations: __m256i = pulp::cast(*activations);
    // Unsigned nibble times signed activation, adjacent pairs added: 16 sums within ±3,810.
    let pairs = simd.avx2._mm256_maddubs_epi16(weights, activations);
    let quads = simd
        .avx2
        ._mm256_madd_epi16(pairs, simd.avx._mm256_set1_epi16(1));
    simd.avx._mm256_cvtepi32_ps(quads)
}

#[inline(always)]
pub(crate) fn lanes_sum(lanes: __m256) -> f32 {
    let values: [f32; 8] = pulp::cast(lanes);
    values.iter().sum()
}

/// One row times one token: `Σ_b factor_b × Σ qᵢxᵢ` over the row's blocks, with two
/// accumulators so that consecutive blocks do not wait on each other's multiply-add.
#[inline(always)]
fn one_token(
    simd: V3,
    nibbles: &[[u8; NIBBLE_BYTES]],
    factor: &[f32],
    quantized: &[[i8; BLOCK]],
) -> f32 {
    let mut even = simd.avx._mm256_setzero_ps();
    let mut odd = simd.avx._mm256_setzero_ps();
    let pairs = nibbles
        .chunks_exact(2)
        .zip(factor.chunks_exact(2))
        .zip(quantized.chunks_exact(2));
    for ((bytes, factors), activations) in pairs {
        if let ([b0, b1], [f0, f1], [x0, x1]) = (bytes, factors, activations) {
            read_ahead(simd, b0);
            let d0 = block_dot(simd, unpack(simd, b0), x0);
            let d1 = block_dot(simd, unpack(simd, b1), x1);
            even = simd
                .fma
                ._mm256_fmadd_ps(simd.avx._mm256_set1_ps(*f0), d0, even);
            odd = simd
                .fma
                ._mm256_fmadd_ps(simd.avx._mm256_set1_ps(*f1), d1, odd);
        }
    }
    let last = nibbles
        .chunks_exact(2)
        .remainder()
        .iter()
        .zip(factor.chunks_exact(2).remainder())
        .zip(quantized.chunks_exact(2).remainder());
    for ((bytes, f), activations) in last {
        let d = block_dot(simd, unpack(simd, bytes), activations);
        even = simd
            .fma
            ._mm256_fmadd_ps(simd.avx._mm256_set1_ps(*f), d, even);
    }
    lanes_sum(simd.avx._mm256_add_ps(even, odd))
}

/// One row times the 2–8 tokens of a pass: each block unpacked once for all of them.
#[inline(always)]
pub(super) fn several_tokens(simd: V3, row: &RowWeights<'_>, pass: &Pass<'_>, target: &mut [f32]) {
    let count = target.len();
    let mut acc = [simd.avx._mm256_setzero_ps(); TOKENS_PER_PASS];
    let mut offset = [0.0f32; TOKENS_PER_PASS];
    let blocks = row
        .nibbles
        .iter()
        .zip(row.scale.iter().zip(row.minimum))
        .zip(pass.quantized.chunks_exact(count))
        .zip(
            pass.steps
                .chunks_exact(count)
                .zip(pass.sums.chunks_exact(count)),
        );
    for (((bytes, (d, m)), activations), (steps, sums)) in blocks {
        read_ahead(simd, bytes);
        let weights = unpack(simd, bytes);
        let per_token = acc
            .iter_mut()
            .zip(offset.iter_mut())
            .zip(activations.iter().zip(steps.iter().zip(sums)));
        for ((acc, offset), (x, (step, sum))) in per_token {
            let dot = block_dot(simd, weights, x);
            *acc = simd
                .fma
                ._mm256_fmadd_ps(simd.avx._mm256_set1_ps(d * step), dot, *acc);
            *offset += m * sum;
        }
    }
    for ((slot, acc), offset) in target.iter_mut().zip(acc).zip(offset) {
        *slot = lanes_sum(acc) + offset;
    }
}
