//! Attention of one new token over the cache: the step that decides generation speed after a
//! long prompt.
//!
//! Generating a token reads every cached key and value of every layer once (SmolLM2-135M: 13 KB
//! per cached token in the 8-bit cache, 35 MB after a 2,700-token prompt). Done as two candle
//! matrix products over an f32 cache it was the larger half of a token's time after such a
//! prompt (24 tokens/s): products three rows tall pack the cache before reading it. Here each
//! KV head's positions are read once, straight from the cache, in chunks: a block of four rows
//! is widened into a stack buffer and multiplied against the group's queries with four
//! independent chains of multiply-adds, with SIMD chosen at run time (`pulp`). Each chunk keeps
//! its own softmax maximum and sum, so chunks merge exactly as one softmax (the "online
//! softmax" rescaling).
//!
//! With AVX-512 and 64-wide heads (SmolLM2's) a chunk runs on [`avx512`] instead, which
//! keeps the rows and the weighted sums in registers and reads ahead of the rows it uses.
//!
//! The chunks are independent units of work ([`Attention::unit`]); the caller decides which
//! threads run them (the model shares long layers with the threads of its weight products) and
//! hands their results back in order to [`Attention::merge`].

use pulp::{Arch, Simd, WithSimd};

use crate::KvRows;

#[cfg(target_arch = "x86_64")]
mod avx512;

/// Positions per chunk: bounds the scores a chunk keeps (`group × CHUNK` floats, in L1).
pub const CHUNK: usize = 256;

/// One layer's cache, `(kv_heads, capacity)` rows of keys and of values, of which the first
/// `len` positions are read.
#[derive(Clone, Copy)]
pub struct CachedLayer<'a> {
    pub keys: KvRows<'a>,
    pub values: KvRows<'a>,
    pub capacity: usize,
    pub len: usize,
}

/// How many query and KV heads there are, and their size.
#[derive(Clone, Copy)]
pub struct HeadLayout {
    pub queries: usize,
    pub kv: usize,
    pub size: usize,
}

/// The attention of one token's queries (`heads × head_dim`, rotary applied) over a layer's
/// cached positions, cut into units of one KV head's chunk of positions. Query head `h` reads
/// KV head `h / group`.
pub struct Attention<'a> {
    queries: &'a [f32],
    layer: CachedLayer<'a>,
    heads: HeadLayout,
    path: ChunkPath,
    group: usize,
    chunks: usize,
    scale: f32,
    arch: Arch,
}

impl<'a> Attention<'a> {
    /// The attention on the fastest instructions this CPU has.
    #[must_use]
    pub fn new(queries: &'a [f32], layer: CachedLayer<'a>, heads: HeadLayout) -> Self {
        Self::on(queries, layer, heads, ChunkPath::fastest())
    }

    /// The attention on the instructions `path` names.
    fn on(queries: &'a [f32], layer: CachedLayer<'a>, heads: HeadLayout, path: ChunkPath) -> Self {
        #[allow(clippy::cast_precision_loss)]
        let scale = 1.0 / (heads.size as f32).sqrt();
        Self {
            queries,
            layer,
            heads,
            path,
            group: heads.queries / heads.kv.max(1),
            chunks: layer.len.div_ceil(CHUNK).max(1),
            scale,
            arch: Arch::new(),
        }
    }

    /// How many units there are: KV heads × chunks of positions.
    #[must_use]
    pub fn units(&self) -> usize {
        self.heads.kv * self.chunks
    }

    /// Unit `index`: the chunk `index % chunks` of KV head `index / chunks` against the query
    /// heads of its group.
    #[must_use]
    pub fn unit(&self, index: usize) -> Partial {
        let head_dim = self.heads.size;
        let (kv, chunk) = (index / self.chunks, index % self.chunks);
        let start = chunk * CHUNK;
        let rows = CHUNK.min(self.layer.len.saturating_sub(start));
        let first_row = kv * self.layer.capacity + start;
        let first = kv * self.group * head_dim;
        let chunk = Chunk {
            queries: self
                .queries
                .get(first..first + self.group * head_dim)
                .unwrap_or(&[]),
            keys: self.layer.keys.range(first_row, rows, head_dim),
            values: self.layer.values.range(first_row, rows, head_dim),
            group: self.group,
            head_dim,
            scale: self.scale,
            path: self.path,
        };
        match self.path {
            ChunkPath::Portable => self.arch.dispatch(chunk),
            #[cfg(target_arch = "x86_64")]
            ChunkPath::Avx512(simd) => Simd::vectorize(simd, chunk),
        }
    }

    /// The softmax-weighted values, `heads × head_dim`, from every unit's result in order.
    #[must_use]
    pub fn merge(&self, partials: &[Partial]) -> Vec<f32> {
        let (group, head_dim) = (self.group, self.heads.size);
        let mut out = vec![0.0; self.heads.queries * head_dim];
        for (kv, units) in partials.chunks(self.chunks).enumerate() {
            for member in 0..group {
                let head = kv * group + member;
                let Some(target) = out.get_mut(head * head_dim..(head + 1) * head_dim) else {
                    continue;
                };
                merge(units, member, head_dim, target);
            }
        }
        out
    }

    /// Every unit on the calling thread, merged.
    #[must_use]
    pub fn run(&self) -> Vec<f32> {
        let partials: Vec<Partial> = (0..self.units()).map(|unit| self.unit(unit)).collect();
        self.merge(&partials)
    }
}

/// Combines the chunks' results for one query head of their group into `target`.
fn merge(units: &[Partial], member: usize, head_dim: usize, target: &mut [f32]) {
    let max = units
        .iter()
        .filter_map(|unit| unit.max.get(member))
        .fold(f32::NEG_INFINITY, |a, b| a.max(*b));
    let mut total = 0.0;
    for unit in units {
        let (Some(m), Some(sum)) = (unit.max.get(member), unit.sum.get(member)) else {
            continue;
        };
        if !m.is_finite() {
            continue;
        }
        let rescale = (m - max).exp();
        total += sum * rescale;
        let part = unit
            .out
            .get(member * head_dim..(member + 1) * head_dim)
            .unwrap_or(&[]);
        for (t, o) in target.iter_mut().zip(part) {
            *t += o * rescale;
        }
    }
    if total > 0.0 {
        for t in target.iter_mut() {
            *t /= total;
        }
    }
}

/// One unit's softmax state for each query head of a group: the largest score, the sum of
/// `exp(score − max)`, and the values weighted by those exponentials (not yet divided).
pub struct Partial {
    max: Vec<f32>,
    sum: Vec<f32>,
    out: Vec<f32>,
}

/// The instructions a chunk runs on. With AVX-512, 64-wide heads in groups of up to four take
/// the register-resident kernel of [`avx512`]; other shapes and CPUs the portable kernel.
#[derive(Clone, Copy)]
enum ChunkPath {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx512(pulp::x86::V4),
}

impl ChunkPath {
    fn fastest() -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V4::try_new() {
            return Self::Avx512(simd);
        }
        Self::Portable
    }
}

/// Widens `$rows` (each `$width` long) into `$buffer`, four at a time, then one at a time for
/// the rest, and runs `$body` on each block with the index of its first row. A macro rather
/// than a function taking a closure: the closure was not inlined into `pulp`'s dispatch, lost
/// its SIMD level and ran 7× slower.
macro_rules! for_each_block {
    ($rows:expr, $width:expr, $buffer:expr, |$first:ident, $block:ident| $body:block) => {{
        let total = $rows.count($width);
        let whole = total / 4 * 4;
        for $first in (0..whole).step_by(4) {
            if let Some(wide) = $buffer.get_mut(..4 * $width) {
                $rows
                    .range($first, 4, $width)
                    .dequantize_in_dispatch($width, wide);
                let $block = Block::Four(split4(wide, $width));
                $body
            }
        }
        for $first in whole..total {
            if let Some(wide) = $buffer.get_mut(..$width) {
                $rows
                    .range($first, 1, $width)
                    .dequantize_in_dispatch($width, wide);
                let $block = Block::One(wide);
                $body
            }
        }
    }};
}

/// One KV head's chunk of positions against the query heads of its group.
struct Chunk<'a> {
    /// `group × head_dim`.
    queries: &'a [f32],
    /// `rows` rows of `head_dim` each.
    keys: KvRows<'a>,
    values: KvRows<'a>,
    group: usize,
    head_dim: usize,
    scale: f32,
    path: ChunkPath,
}

impl WithSimd for Chunk<'_> {
    type Output = Partial;

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Partial {
        let Self {
            queries,
            keys,
            values,
            group,
            head_dim,
            scale,
            path,
        } = self;
        let width = head_dim.max(1);
        let rows = keys.count(width);
        // Scores, head-major: `scores[member * rows + row]`.
        let mut scores = vec![0.0f32; group * rows];
        #[cfg(target_arch = "x86_64")]
        if let ChunkPath::Avx512(simd) = path
            && head_dim == avx512::HEAD
            && group <= avx512::MAX_GROUP
        {
            avx512::scores(simd, queries, keys, scale, &mut scores);
            let (max, sum) = softmax_parts(simd, &mut scores, group, rows);
            let mut out = vec![0.0f32; group * head_dim];
            match group {
                1 => avx512::weighted_values::<1>(simd, &scores, values, &mut out),
                2 => avx512::weighted_values::<2>(simd, &scores, values, &mut out),
                3 => avx512::weighted_values::<3>(simd, &scores, values, &mut out),
                _ => avx512::weighted_values::<{ avx512::MAX_GROUP }>(
                    simd, &scores, values, &mut out,
                ),
            }
            return Partial { max, sum, out };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = path;
        // One buffer for the widened rows of a block, reused by both passes.
        let mut buffer = vec![0.0f32; 4 * width];
        for_each_block!(keys, width, buffer, |first_row, block| {
            for (member, query) in queries.chunks_exact(width).enumerate() {
                let base = member * rows + first_row;
                match block {
                    Block::Four(four) => {
                        let dots = dot4(simd, query, four);
                        if let Some(slots) = scores.get_mut(base..base + 4) {
                            for (slot, dot) in slots.iter_mut().zip(dots) {
                                *slot = dot * scale;
                            }
                        }
                    }
                    Block::One(key) => {
                        if let Some(slot) = scores.get_mut(base) {
                            *slot = dot(simd, query, key) * scale;
                        }
                    }
                }
            }
        });
        let (max, sum) = softmax_parts(simd, &mut scores, group, rows);
        let mut out = vec![0.0f32; group * head_dim];
        for_each_block!(values, width, buffer, |first_row, block| {
            for (member, target) in out.chunks_exact_mut(width).enumerate() {
                let base = member * rows + first_row;
                match block {
                    Block::Four(four) => {
                        if let Some(&[a, b, c, d]) = scores.get(base..base + 4) {
                            axpy4(simd, [a, b, c, d], four, target);
                        }
                    }
                    Block::One(value) => {
                        let weight = scores.get(base).copied().unwrap_or(0.0);
                        axpy(simd, weight, value, target);
                    }
                }
            }
        });
        Partial { max, sum, out }
    }
}

/// Replaces each query head's scores (`group` runs of `rows`) with `exp(score − max)`; returns
/// each head's maximum and sum of exponentials.
#[inline(always)]
fn softmax_parts<S: Simd>(
    simd: S,
    scores: &mut [f32],
    group: usize,
    rows: usize,
) -> (Vec<f32>, Vec<f32>) {
    let mut max = vec![f32::NEG_INFINITY; group];
    let mut sum = vec![0.0f32; group];
    for (member, row_scores) in scores.chunks_exact_mut(rows.max(1)).enumerate() {
        let m = max_of(simd, row_scores);
        let total = exp_shifted(simd, row_scores, m);
        if let (Some(slot), Some(s)) = (max.get_mut(member), sum.get_mut(member)) {
            *slot = m;
            *s = total;
        }
    }
    (max, sum)
}

/// The largest of `values` (−∞ for none).
#[inline(always)]
fn max_of<S: Simd>(simd: S, values: &[f32]) -> f32 {
    let (head, tail) = S::as_simd_f32s(values);
    let mut acc = simd.splat_f32s(f32::NEG_INFINITY);
    for lane in head {
        acc = simd.max_f32s(acc, *lane);
    }
    tail.iter()
        .fold(simd.reduce_max_f32s(acc), |a, b| a.max(*b))
}

/// Replaces every score `s` with `exp(s − max)` and returns their sum. The exponentials are
/// the vectorised [`exp_nonpositive`]: `f32::exp` is a call per score, and after a
/// 2,700-token prompt a token takes about 740 thousand of them.
#[inline(always)]
fn exp_shifted<S: Simd>(simd: S, scores: &mut [f32], max: f32) -> f32 {
    for score in scores.iter_mut() {
        *score = exp_nonpositive(*score - max);
    }
    let (head, tail) = S::as_simd_f32s(scores);
    let mut acc = simd.splat_f32s(0.0);
    for lane in head {
        acc = simd.add_f32s(acc, *lane);
    }
    simd.reduce_sum_f32s(acc) + tail.iter().sum::<f32>()
}

/// `exp(x)` for `x ≤ 0`, within a few units in the last place, in straight-line arithmetic
/// the compiler vectorises: `x = n·ln 2 + r` with `n` rounded to nearest (by adding 1.5 × 2²³)
/// and `|r| ≤ ln 2 / 2`, `exp(r)` by its Taylor series to the 6th power (truncation error
/// below 1.2 × 10⁻⁷), and `2ⁿ` added straight into the exponent bits. Inputs below −86 give
/// about `exp(−86)` ≈ 4 × 10⁻³⁸ instead of a smaller number, which no softmax sum notices.
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0;
    const ROUND_BITS: u32 = 0x4b40_0000;
    // ln 2 split so that `n × LN2_HIGH` is exact for the `n` that occur.
    const LN2_HIGH: f32 = 0.693_359_4;
    const LN2_LOW: f32 = -2.121_944_4e-4;
    let x = x.max(-86.0);
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = x - n * LN2_HIGH - n * LN2_LOW;
    let series = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let exponent = shifted.to_bits().wrapping_sub(ROUND_BITS) << 23;
    f32::from_bits(series.to_bits().wrapping_add(exponent))
}

/// Rows of a chunk, widened: four at once, or one of the last few.
#[derive(Clone, Copy)]
enum Block<'a> {
    Four([&'a [f32]; 4]),
    One(&'a [f32]),
}

/// Four consecutive rows of `width` from a slice of `4 × width`.
#[inline(always)]
fn split4(quad: &[f32], width: usize) -> [&[f32]; 4] {
    let (a, rest) = quad.split_at(width.min(quad.len()));
    let (b, rest) = rest.split_at(width.min(rest.len()));
    let (c, d) = rest.split_at(width.min(rest.len()));
    [a, b, c, d]
}

/// `query · row` for four rows at once: four independent chains of multiply-adds.
#[inline(always)]
fn dot4<S: Simd>(simd: S, query: &[f32], rows: [&[f32]; 4]) -> [f32; 4] {
    let (lanes, query_tail) = S::as_simd_f32s(query);
    let [first, second, third, fourth] = rows.map(|row| S::as_simd_f32s(row));
    let zero = simd.splat_f32s(0.0);
    let mut acc = [zero; 4];
    let columns = lanes
        .iter()
        .zip(first.0)
        .zip(second.0)
        .zip(third.0)
        .zip(fourth.0);
    for ((((lane, k0), k1), k2), k3) in columns {
        acc[0] = simd.mul_add_f32s(*lane, *k0, acc[0]);
        acc[1] = simd.mul_add_f32s(*lane, *k1, acc[1]);
        acc[2] = simd.mul_add_f32s(*lane, *k2, acc[2]);
        acc[3] = simd.mul_add_f32s(*lane, *k3, acc[3]);
    }
    let tails = [first.1, second.1, third.1, fourth.1];
    let mut dots = [0.0; 4];
    for ((dot, acc), tail) in dots.iter_mut().zip(acc).zip(tails) {
        let rest: f32 = query_tail.iter().zip(tail).map(|(x, y)| x * y).sum();
        *dot = simd.reduce_sum_f32s(acc) + rest;
    }
    dots
}

/// `target += Σ weights[i] × rows[i]` over four rows, each element updated once.
#[inline(always)]
fn axpy4<S: Simd>(simd: S, weights: [f32; 4], rows: [&[f32]; 4], target: &mut [f32]) {
    let [w0, w1, w2, w3] = weights.map(|w| simd.splat_f32s(w));
    let [first, second, third, fourth] = rows.map(|row| S::as_simd_f32s(row));
    let (lanes, target_tail) = S::as_mut_simd_f32s(target);
    let columns = lanes
        .iter_mut()
        .zip(first.0)
        .zip(second.0)
        .zip(third.0)
        .zip(fourth.0);
    for ((((lane, v0), v1), v2), v3) in columns {
        let low = simd.mul_add_f32s(w1, *v1, simd.mul_f32s(w0, *v0));
        let high = simd.mul_add_f32s(w3, *v3, simd.mul_f32s(w2, *v2));
        *lane = simd.add_f32s(*lane, simd.add_f32s(low, high));
    }
    let tails = [first.1, second.1, third.1, fourth.1];
    for (index, slot) in target_tail.iter_mut().enumerate() {
        for (weight, tail) in weights.iter().zip(tails) {
            *slot += weight * tail.get(index).copied().unwrap_or(0.0);
        }
    }
}

/// `a · b` over equal-length slices.
#[inline(always)]
fn dot<S: Simd>(simd: S, a: &[f32], b: &[f32]) -> f32 {
    let (a_head, a_tail) = S::as_simd_f32s(a);
    let (b_head, b_tail) = S::as_simd_f32s(b);
    let mut acc = simd.splat_f32s(0.0);
    for (x, y) in a_head.iter().zip(b_head) {
        acc = simd.mul_add_f32s(*x, *y, acc);
    }
    let tail: f32 = a_tail.iter().zip(b_tail).map(|(x, y)| x * y).sum();
    simd.reduce_sum_f32s(acc) + tail
}

/// `target += weight × value`.
#[inline(always)]
fn axpy<S: Simd>(simd: S, weight: f32, value: &[f32], target: &mut [f32]) {
    let factor = simd.splat_f32s(weight);
    let (v_head, v_tail) = S::as_simd_f32s(value);
    let (t_head, t_tail) = S::as_mut_simd_f32s(target);
    for (t, v) in t_head.iter_mut().zip(v_head) {
        *t = simd.mul_add_f32s(factor, *v, *t);
    }
    for (t, v) in t_tail.iter_mut().zip(v_tail) {
        *t += weight * v;
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)]
mod tests {
    use crate::{kv_steps_per_row, quantize_rows};

    use super::*;

    /// Plain attention, one query head at a time, in f64.
    fn reference(queries: &[f32], layer: &CachedLayer<'_>, heads: HeadLayout) -> Vec<f32> {
        let HeadLayout {
            queries: count,
            kv: kv_heads,
            size: head_dim,
        } = heads;
        let group = count / kv_heads;
        let mut out = Vec::new();
        for head in 0..count {
            let kv = head / group;
            let query = &queries[head * head_dim..(head + 1) * head_dim];
            // Each value is its 8-bit integer times the step of its block of 32, read here
            // without the kernels' helpers.
            let row = |data: KvRows<'_>, pos: usize| {
                let index = kv * layer.capacity + pos;
                let per_row = head_dim.div_ceil(32);
                let steps = &data.steps[index * per_row..(index + 1) * per_row];
                data.quants[index * head_dim..(index + 1) * head_dim]
                    .iter()
                    .enumerate()
                    .map(|(column, q)| (f64::from(*q) * f64::from(steps[column / 32])) as f32)
                    .collect::<Vec<_>>()
            };
            let scores: Vec<f64> = (0..layer.len)
                .map(|pos| {
                    let key = row(layer.keys, pos);
                    let dot: f64 = query.iter().zip(&key).map(|(q, k)| f64::from(q * k)).sum();
                    dot / (head_dim as f64).sqrt()
                })
                .collect();
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let total: f64 = weights.iter().sum();
            for d in 0..head_dim {
                let mixed: f64 = (0..layer.len)
                    .map(|pos| weights[pos] * f64::from(row(layer.values, pos)[d]))
                    .sum();
                out.push((mixed / total) as f32);
            }
        }
        out
    }

    #[test]
    fn the_vectorised_exponential_matches_the_library_one() {
        let mut worst: f64 = 0.0;
        for step in 0..=86_000 {
            let x = -(step as f32) / 1_000.0;
            let exact = f64::from(x).exp();
            let relative = (f64::from(exp_nonpositive(x)) - exact).abs() / exact;
            worst = worst.max(relative);
        }
        assert!(worst < 1e-6, "worst relative error {worst:e}");
        assert!((exp_nonpositive(0.0) - 1.0).abs() < f32::EPSILON);
        let tiny = exp_nonpositive(-1_000.0);
        assert!(tiny > 0.0 && tiny < 1e-37, "{tiny:e}");
    }

    /// Rows of `width` in the cache's format.
    struct Quantized {
        quants: Vec<i8>,
        steps: Vec<f32>,
    }

    impl Quantized {
        fn new(numbers: &[f32], width: usize) -> Self {
            let mut quants = vec![0; numbers.len()];
            let mut steps = vec![0.0; numbers.len() / width * kv_steps_per_row(width)];
            quantize_rows(numbers, width, &mut quants, &mut steps);
            Self { quants, steps }
        }

        fn rows(&self) -> KvRows<'_> {
            KvRows {
                quants: &self.quants,
                steps: &self.steps,
            }
        }
    }

    /// Deterministic values in about ±2 that differ per index.
    fn filler(len: usize, seed: u32) -> Vec<f32> {
        (0..len)
            .map(|i| {
                let x = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8;
                (x % 4_001) as f32 / 1_000.0 - 2.0
            })
            .collect()
    }

    fn check(len: usize, capacity: usize, heads: HeadLayout) {
        let size = heads.kv * capacity * heads.size;
        let keys = Quantized::new(&filler(size, 1), heads.size);
        let values = Quantized::new(&filler(size, 2), heads.size);
        let queries = filler(heads.queries * heads.size, 3);
        let layer = CachedLayer {
            keys: keys.rows(),
            values: values.rows(),
            capacity,
            len,
        };
        let expected = reference(&queries, &layer, heads);
        for path in [ChunkPath::Portable, ChunkPath::fastest()] {
            let ours = Attention::on(&queries, layer, heads, path).run();
            assert_eq!(ours.len(), expected.len());
            let worst = ours
                .iter()
                .zip(&expected)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            let path = match path {
                ChunkPath::Portable => "portable",
                #[cfg(target_arch = "x86_64")]
                ChunkPath::Avx512(_) => "AVX-512",
            };
            assert!(worst < 1e-4, "{path}, len {len}: differs by {worst}");
        }
    }

    #[test]
    fn matches_plain_attention_within_one_chunk_and_across_many() {
        let smollm = HeadLayout {
            queries: 9,
            kv: 3,
            size: 64,
        };
        for len in [1, 7, CHUNK, CHUNK + 1, 3 * CHUNK + 17, 4 * CHUNK + 300] {
            check(len, 1_400, smollm);
        }
    }

    #[test]
    fn every_group_size_of_64_wide_heads_works() {
        for group in 1..=6 {
            let heads = HeadLayout {
                queries: 2 * group,
                kv: 2,
                size: 64,
            };
            check(CHUNK + 6, 300, heads);
        }
    }

    #[test]
    fn head_sizes_off_the_simd_width_and_one_head_per_group_work() {
        let odd = HeadLayout {
            queries: 4,
            kv: 4,
            size: 20,
        };
        check(300, 300, odd);
        let wide = HeadLayout {
            queries: 2,
            kv: 1,
            size: 320,
        };
        check(9, 16, wide);
    }

    #[test]
    fn positions_past_the_length_are_not_read() {
        let heads = HeadLayout {
            queries: 2,
            kv: 1,
            size: 8,
        };
        let mut keys = Quantized::new(&filler(16 * 8, 1), 8);
        let mut values = Quantized::new(&filler(16 * 8, 2), 8);
        let queries = filler(16, 3);
        let layer = |keys: &Quantized, values: &Quantized| {
            let layer = CachedLayer {
                keys: keys.rows(),
                values: values.rows(),
                capacity: 16,
                len: 5,
            };
            Attention::new(&queries, layer, heads).run()
        };
        let before = layer(&keys, &values);
        for (part, poison) in [(&mut keys, f32::INFINITY), (&mut values, f32::NAN)] {
            part.quants.iter_mut().skip(5 * 8).for_each(|q| *q = 127);
            part.steps.iter_mut().skip(5).for_each(|s| *s = poison);
        }
        assert_eq!(before, layer(&keys, &values));
    }
}
