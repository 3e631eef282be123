//! A chunk's attention with AVX-512 for 64-wide heads (SmolLM2's, and most small llamas'): the
//! rows stay in registers instead of going through a buffer.
//!
//! The portable chunk widens four rows into a buffer, reduces every row's 16-lane dot product
//! on its own and adds each weighted value row into the output in memory: about 130
//! instructions per cached row and KV head of SmolLM2-135M. Here a row's 64 8-bit values are
//! widened straight from the cache (a sign extension and a conversion per 16, then a multiply
//! by the step of their block); the dot products of four rows are reduced together by one
//! shuffle tree; and the weighted values accumulate in registers (four per query head of the
//! group) for the whole chunk. Each row also asks for the rows 64 ahead of it to be loaded.
//!
//! Measured in one process, alternating, on a 2-core machine, over the f16 cache this path
//! first read: the attention of one token over 2,700 cached positions of 30 layers
//! (SmolLM2-135M's shape) took 8.0–10.0 ms (median of 40) by the portable chunk, 6.2–7.7 ms by
//! this one without reading ahead and 4.6–5.6 ms with it. That was about 13 GB/s of cache read:
//! what is left is memory bandwidth, which is why the cache is now 8-bit.

use std::arch::x86_64::{__m128, __m512};

use pulp::x86::V4;

use crate::KvRows;

/// Width of the heads this path takes.
pub(super) const HEAD: usize = 64;

/// Lanes of one vector.
const LANES: usize = 16;

/// Vectors per head.
const PARTS: usize = HEAD / LANES;

/// Steps per row (blocks of 32).
const STEPS: usize = HEAD / crate::KV_BLOCK;

/// Query heads per KV head this path takes (SmolLM2-135M and -360M have 3).
pub(super) const MAX_GROUP: usize = 4;

/// Bytes of the cache's integers read ahead of the row being used (64 rows); the steps are
/// read the same 64 rows ahead.
const PREFETCH_AHEAD: usize = 4096;

/// Asks for the integers and the steps of the row 64 past `row` to be loaded. A chunk streams
/// through its rows once; with the processor's prefetchers alone the attention of a token
/// after 2,700 positions (30 layers, 62 MB of f16 cache) took 6.2–7.7 ms, reading ahead
/// 4.6–5.6 ms (alternating runs on two threads). Past the end of the cache the address is never
/// read: a prefetch cannot fault.
#[inline(always)]
fn prefetch(simd: V4, quants: &[i8], steps: &[f32]) {
    let ahead = quants.as_ptr().wrapping_add(PREFETCH_AHEAD);
    simd.sse
        ._mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ahead);
    let steps_ahead = steps
        .as_ptr()
        .cast::<i8>()
        .wrapping_add(PREFETCH_AHEAD / HEAD * STEPS * std::mem::size_of::<f32>());
    simd.sse
        ._mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(steps_ahead);
}

/// One 64-wide row of 8-bit integers and its two steps, widened.
#[inline(always)]
fn widen_row(simd: V4, quants: &[i8], steps: &[f32]) -> [__m512; PARTS] {
    prefetch(simd, quants, steps);
    let wide = simd.avx512f;
    let mut parts = [wide._mm512_setzero_ps(); PARTS];
    // No closures here: one that is not inlined loses the SIMD level.
    let steps = [
        wide._mm512_set1_ps(steps.first().copied().unwrap_or(0.0)),
        wide._mm512_set1_ps(steps.get(1).copied().unwrap_or(0.0)),
    ];
    for (index, (part, lanes)) in parts.iter_mut().zip(quants.chunks_exact(LANES)).enumerate() {
        if let (Ok(lanes), Some(step)) = (
            <&[i8; LANES]>::try_from(lanes),
            steps.get(index * LANES / crate::KV_BLOCK),
        ) {
            let integers = wide._mm512_cvtepi8_epi32(pulp::cast(*lanes));
            *part = wide._mm512_mul_ps(wide._mm512_cvtepi32_ps(integers), *step);
        }
    }
    parts
}

/// One 64-wide row of f32, as vectors.
#[inline(always)]
fn load_row(simd: V4, row: &[f32]) -> [__m512; PARTS] {
    let mut parts = [simd.avx512f._mm512_setzero_ps(); PARTS];
    for (part, values) in parts.iter_mut().zip(row.chunks_exact(LANES)) {
        if let Ok(values) = <&[f32; LANES]>::try_from(values) {
            *part = pulp::cast(*values);
        }
    }
    parts
}

/// The 16 lanes of `query[p] × key[p]` summed over the parts, still to be reduced.
#[inline(always)]
fn products(simd: V4, query: &[__m512; PARTS], key: &[__m512; PARTS]) -> __m512 {
    let [q0, q1, q2, q3] = *query;
    let [k0, k1, k2, k3] = *key;
    let low = simd
        .avx512f
        ._mm512_fmadd_ps(q1, k1, simd.avx512f._mm512_mul_ps(q0, k0));
    let high = simd
        .avx512f
        ._mm512_fmadd_ps(q3, k3, simd.avx512f._mm512_mul_ps(q2, k2));
    simd.avx512f._mm512_add_ps(low, high)
}

/// The sums of four vectors' lanes, `[Σa, Σb, Σc, Σd]`, by one tree of shuffles instead of
/// four separate reductions.
#[inline(always)]
fn sum4(simd: V4, [a, b, c, d]: [__m512; 4]) -> [f32; 4] {
    let wide = simd.avx512f;
    // Per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3], and the same for c and d.
    let ab = wide._mm512_add_ps(wide._mm512_unpacklo_ps(a, b), wide._mm512_unpackhi_ps(a, b));
    let cd = wide._mm512_add_ps(wide._mm512_unpacklo_ps(c, d), wide._mm512_unpackhi_ps(c, d));
    // Per 128-bit lane: the lane's partial sums of a, b, c and d.
    let all = wide._mm512_add_ps(
        wide._mm512_shuffle_ps::<0b0100_0100>(ab, cd),
        wide._mm512_shuffle_ps::<0b1110_1110>(ab, cd),
    );
    let half = simd.avx._mm256_add_ps(
        wide._mm512_castps512_ps256(all),
        simd.avx512dq._mm512_extractf32x8_ps::<1>(all),
    );
    let quarter: __m128 = simd.sse._mm_add_ps(
        simd.avx._mm256_castps256_ps128(half),
        simd.avx._mm256_extractf128_ps::<1>(half),
    );
    pulp::cast(quarter)
}

/// Scaled scores of the group's queries (`group × 64`, at most [`MAX_GROUP`]) against the
/// chunk's keys, head-major: `scores[member × rows + row]`.
#[inline(always)]
pub(super) fn scores(simd: V4, queries: &[f32], keys: KvRows<'_>, scale: f32, scores: &mut [f32]) {
    let rows = keys.count(HEAD);
    let mut loaded = [[simd.avx512f._mm512_setzero_ps(); PARTS]; MAX_GROUP];
    for (slot, query) in loaded.iter_mut().zip(queries.chunks_exact(HEAD)) {
        *slot = load_row(simd, query);
    }
    let queries = loaded.get(..queries.len() / HEAD).unwrap_or(&[]);
    let whole = rows / 4 * 4;
    for first in (0..whole).step_by(4) {
        let k0 = row(simd, keys, first);
        let k1 = row(simd, keys, first + 1);
        let k2 = row(simd, keys, first + 2);
        let k3 = row(simd, keys, first + 3);
        for (member, query) in queries.iter().enumerate() {
            let dots = sum4(
                simd,
                [
                    products(simd, query, &k0),
                    products(simd, query, &k1),
                    products(simd, query, &k2),
                    products(simd, query, &k3),
                ],
            );
            let start = member * rows + first;
            if let Some(slots) = scores.get_mut(start..start + 4) {
                for (slot, dot) in slots.iter_mut().zip(dots) {
                    *slot = dot * scale;
                }
            }
        }
    }
    for index in whole..rows {
        let key = row(simd, keys, index);
        for (member, query) in queries.iter().enumerate() {
            let dot = simd
                .avx512f
                ._mm512_reduce_add_ps(products(simd, query, &key));
            if let Some(slot) = scores.get_mut(member * rows + index) {
                *slot = dot * scale;
            }
        }
    }
}

/// Row `index` of `rows`, widened.
#[inline(always)]
fn row(simd: V4, rows: KvRows<'_>, index: usize) -> [__m512; PARTS] {
    let quants = rows
        .quants
        .get(index * HEAD..(index + 1) * HEAD)
        .unwrap_or(&[]);
    let steps = rows
        .steps
        .get(index * STEPS..(index + 1) * STEPS)
        .unwrap_or(&[]);
    widen_row(simd, quants, steps)
}

/// `out[member] = Σ_row weights[member × rows + row] × value_row` for `G` query heads over the
/// chunk's values, the sums kept in registers throughout.
#[inline(always)]
pub(super) fn weighted_values<const G: usize>(
    simd: V4,
    weights: &[f32],
    values: KvRows<'_>,
    out: &mut [f32],
) {
    let rows = values.count(HEAD);
    let mut acc = [[simd.avx512f._mm512_setzero_ps(); PARTS]; G];
    for index in 0..rows {
        let value = row(simd, values, index);
        for (member, sums) in acc.iter_mut().enumerate() {
            let weight = weights.get(member * rows + index).copied().unwrap_or(0.0);
            let weight = simd.avx512f._mm512_set1_ps(weight);
            for (sum, part) in sums.iter_mut().zip(value) {
                *sum = simd.avx512f._mm512_fmadd_ps(weight, part, *sum);
            }
        }
    }
    for (target, sums) in out.chunks_exact_mut(HEAD).zip(acc) {
        for (lanes, sum) in target.chunks_exact_mut(LANES).zip(sums) {
            if let Ok(lanes) = <&mut [f32; LANES]>::try_from(lanes) {
                *lanes = pulp::cast(sum);
            }
        }
    }
}
