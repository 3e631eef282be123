//! The `Q4_1` products with AVX2 integer instructions, the path every x86-64 machine of the
//! last decade takes.
//!
//! Widening nibbles to f32 and multiplying in f32 costs about twenty instructions per block,
//! which kept the portable kernel at about a third of the speed memory allows. Here the
//! activations are rounded to 8 bits per block ([`Q41Input`] does it once per product) and a
//! block's 32 nibble × activation products are summed by two integer instructions
//! (`vpmaddubsw`, then `vpmaddwd`), about ten instructions per block in all. The rounding is
//! the one llama.cpp and candle apply to activations for their 4-bit kernels; the minimum term
//! `m × Σ xᵢ` still uses the exact f32 sums.

use std::arch::x86_64::{__m128i, __m256, __m256i};

use pulp::x86::V3;
use pulp::{Simd, WithSimd};

use super::{BLOCK, NIBBLE_BYTES, Pass, Q41Input, Q41Matrix, TOKENS_PER_PASS};

/// The products of some rows with AVX2.
pub(super) struct Products<'a> {
    pub(super) simd: V3,
    pub(super) matrix: &'a Q41Matrix,
    pub(super) input: &'a Q41Input,
    pub(super) rows: std::ops::Range<usize>,
    pub(super) out: &'a mut [f32],
}

impl WithSimd for Products<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        let Self {
            simd,
            matrix,
            input,
            rows,
            out,
        } = self;
        let per_row = matrix.blocks_per_row();
        let tokens = input.tokens;
        let mut scale = vec![0.0f32; per_row];
        let mut minimum = vec![0.0f32; per_row];
        let mut factor = vec![0.0f32; per_row];
        let passes: Vec<Pass<'_>> = input.passes().collect();
        for (row, target) in rows.zip(out.chunks_exact_mut(tokens.max(1))) {
            let Some(nibbles) = matrix.widened_row(row, &mut scale, &mut minimum) else {
                continue;
            };
            for pass in &passes {
                let Some(target) = target.get_mut(pass.first..pass.first + pass.count) else {
                    continue;
                };
                if pass.count == 1 {
                    for ((f, d), step) in factor.iter_mut().zip(&scale).zip(pass.steps) {
                        *f = d * step;
                    }
                    let offset: f32 = minimum.iter().zip(pass.sums).map(|(m, s)| m * s).sum();
                    if let Some(slot) = target.first_mut() {
                        *slot = one_token(simd, nibbles, &factor, pass.quantized) + offset;
                    }
                } else {
                    several_tokens(simd, nibbles, &scale, &minimum, pass, target);
                }
            }
        }
    }
}

/// A block's 32 weights as bytes 0–15, in the order of its activations: the low nibbles in
/// the lower 128 bits, the high nibbles in the upper.
#[inline(always)]
fn unpack(simd: V3, bytes: &[u8; NIBBLE_BYTES]) -> __m256i {
    let low: __m128i = pulp::cast(*bytes);
    let high = simd.sse2._mm_srli_epi16::<4>(low);
    let both = simd.avx._mm256_set_m128i(high, low);
    simd.avx2
        ._mm256_and_si256(both, simd.avx._mm256_set1_epi8(0x0f))
}

/// `Σ qᵢxᵢ` of a block in eight f32 lanes still to be added up.
#[inline(always)]
fn block_dot(simd: V3, weights: __m256i, activations: &[i8; BLOCK]) -> __m256 {
    let activations: __m256i = pulp::cast(*activations);
    // Unsigned nibble times signed activation, adjacent pairs added: 16 sums within ±3,810.
    let pairs = simd.avx2._mm256_maddubs_epi16(weights, activations);
    let quads = simd
        .avx2
        ._mm256_madd_epi16(pairs, simd.avx._mm256_set1_epi16(1));
    simd.avx._mm256_cvtepi32_ps(quads)
}

#[inline(always)]
fn lanes_sum(lanes: __m256) -> f32 {
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
fn several_tokens(
    simd: V3,
    nibbles: &[[u8; NIBBLE_BYTES]],
    scale: &[f32],
    minimum: &[f32],
    pass: &Pass<'_>,
    target: &mut [f32],
) {
    let count = target.len();
    let mut acc = [simd.avx._mm256_setzero_ps(); TOKENS_PER_PASS];
    let mut offset = [0.0f32; TOKENS_PER_PASS];
    let blocks = nibbles
        .iter()
        .zip(scale.iter().zip(minimum))
        .zip(pass.quantized.chunks_exact(count))
        .zip(
            pass.steps
                .chunks_exact(count)
                .zip(pass.sums.chunks_exact(count)),
        );
    for (((bytes, (d, m)), activations), (steps, sums)) in blocks {
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
