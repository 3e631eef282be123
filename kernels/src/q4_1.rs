//! Products of `Q4_1` weight matrices with f32 activations.
//!
//! A `Q4_1` block holds 32 weights as 4-bit integers `q` with an f16 scale `d` and minimum `m`:
//! weight = `d × q + m`. candle 0.11 multiplies this format without SIMD, so the loader used to
//! requantize it to `Q8_0` (34 bytes per block instead of 20): generating a token then read
//! 143 MB of SmolLM2-135M's weights instead of 84 MB, and after a long prompt, when the cache
//! is read too, it made about 35–42 tokens/s on the 2-core machines this is measured on.
//!
//! Here the weights stay as they are in the file, split into three arrays (scales, minimums,
//! nibbles) so that a row's scales widen in one vectorised pass. A block's product with an
//! activation block is `d × Σ qᵢxᵢ + m × Σ xᵢ`, with `Σ xᵢ` computed once per product
//! ([`Activations`]). On x86-64 with AVX2 `Σ qᵢxᵢ` is an integer product against activations
//! rounded to 8 bits per block, as llama.cpp and candle do for 4-bit weights (`avx2`);
//! elsewhere the nibbles are widened to f32 and multiplied in f32 (exact to float rounding, and
//! the reference the tests hold the integer path to). Either way a block's nibbles are
//! unpacked once for up to [`TOKENS_PER_PASS`] tokens.
//!
//! Measured on the 2-core machines (SmolLM2-135M, 30 layers of 7 matrices), against the
//! requantized `Q8_0` in alternating runs: loading takes 0.45–0.66 s instead of 1.3–1.8 s,
//! resident memory after loading is 148 MB instead of 220, prompts are read 1.4–1.7× faster,
//! and generation is 5–20% faster, less than the bytes saved suggest: a token's products are
//! bound by the instructions per block more than by the bytes read, and `Q4_1` takes nearly as
//! many per block as candle's `Q8_0` kernel.

use std::fmt;
use std::ops::Range;

use pulp::{Simd, WithSimd};

use crate::job::{self, Format, Job, Products};
use crate::widen_f16;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) use avx2::{lanes_sum, read_ahead};

/// Weights per block.
pub const BLOCK: usize = 32;
/// Bytes of one block in a GGUF file: f16 scale, f16 minimum, 16 bytes of nibbles.
const BLOCK_BYTES: usize = 20;
/// Bytes of nibbles per block.
const NIBBLE_BYTES: usize = BLOCK / 2;
/// Tokens multiplied per pass over a row's weights: a prompt of more reads them again per
/// pass, a generated token reads them once.
pub const TOKENS_PER_PASS: usize = 8;

/// A matrix or an input that does not have the shape it claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError(pub(crate) String);

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ShapeError {}

/// The number of blocks in a GGUF tensor of `format` (`block_bytes` per block) holding `rows ×
/// cols` weights, or what does not fit.
pub(crate) fn blocks_in(
    bytes: &[u8],
    rows: usize,
    cols: usize,
    block_bytes: usize,
    format: &str,
) -> Result<usize, ShapeError> {
    if cols == 0 || !cols.is_multiple_of(BLOCK) {
        return Err(ShapeError(format!(
            "a {format} row of {cols} weights is not a whole number of {BLOCK}-weight blocks"
        )));
    }
    let blocks = rows * (cols / BLOCK);
    if bytes.len() != blocks * block_bytes {
        return Err(ShapeError(format!(
            "{} bytes do not hold {rows} × {cols} {format} weights ({} bytes)",
            bytes.len(),
            blocks * block_bytes
        )));
    }
    Ok(blocks)
}

/// A `Q4_1` matrix of `rows × cols` weights (`cols` a multiple of [`BLOCK`]).
pub struct Q41Matrix {
    rows: usize,
    cols: usize,
    /// f16 bits of each block's scale, row by row.
    scales: Vec<u16>,
    /// f16 bits of each block's minimum.
    minimums: Vec<u16>,
    /// Per block: weight `i < 16` in the low nibble of byte `i`, weight `16 + i` in its high
    /// nibble.
    nibbles: Vec<[u8; NIBBLE_BYTES]>,
}

impl Q41Matrix {
    /// The matrix from a GGUF tensor's bytes.
    pub fn from_ggml(bytes: &[u8], rows: usize, cols: usize) -> Result<Self, ShapeError> {
        let blocks = blocks_in(bytes, rows, cols, BLOCK_BYTES, "Q4_1")?;
        let mut scales = Vec::with_capacity(blocks);
        let mut minimums = Vec::with_capacity(blocks);
        let mut nibbles = Vec::with_capacity(blocks);
        for block in bytes.chunks_exact(BLOCK_BYTES) {
            let (head, quants) = block.split_at(4);
            if let &[d0, d1, m0, m1] = head {
                scales.push(u16::from_le_bytes([d0, d1]));
                minimums.push(u16::from_le_bytes([m0, m1]));
            }
            nibbles.push(quants.try_into().unwrap_or_default());
        }
        Ok(Self {
            rows,
            cols,
            scales,
            minimums,
            nibbles,
        })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Memory the weights occupy.
    pub fn bytes(&self) -> usize {
        2 * (self.scales.len() + self.minimums.len()) + self.nibbles.len() * NIBBLE_BYTES
    }

    fn blocks_per_row(&self) -> usize {
        self.cols / BLOCK
    }

    /// Row `row`'s nibbles, with its scales and minimums widened into `scale` and `minimum`
    /// (`cols / 32` each); `None` past the last row.
    #[inline(always)]
    fn widened_row(
        &self,
        row: usize,
        scale: &mut [f32],
        minimum: &mut [f32],
    ) -> Option<&[[u8; NIBBLE_BYTES]]> {
        let per_row = self.blocks_per_row();
        let span = row * per_row..(row + 1) * per_row;
        let nibbles = self.nibbles.get(span.clone())?;
        widen_f16(self.scales.get(span.clone())?, scale);
        widen_f16(self.minimums.get(span)?, minimum);
        Some(nibbles)
    }

    /// Row `row` as f32 weights into `out` (`cols` long); `false` when there is no such row
    /// or `out` has another length.
    pub fn dequantize_row(&self, row: usize, out: &mut [f32]) -> bool {
        let per_row = self.blocks_per_row();
        let mut scale = vec![0.0; per_row];
        let mut minimum = vec![0.0; per_row];
        let Some(nibbles) = self.widened_row(row, &mut scale, &mut minimum) else {
            return false;
        };
        if out.len() != self.cols {
            return false;
        }
        let blocks = out
            .chunks_exact_mut(BLOCK)
            .zip(nibbles)
            .zip(scale.iter().zip(&minimum));
        for ((weights, bytes), (d, m)) in blocks {
            let (low, high) = weights.split_at_mut(NIBBLE_BYTES);
            for ((l, h), byte) in low.iter_mut().zip(high.iter_mut()).zip(bytes) {
                *l = d * f32::from(byte & 0xf) + m;
                *h = d * f32::from(byte >> 4) + m;
            }
        }
        true
    }

    /// Products of rows `rows` with every token of `input`: `out[r × tokens + t]` is row
    /// `rows.start + r` times token `t`. Rows past the matrix and an `out` of another length
    /// are an error; the caller splits the rows across threads.
    pub fn multiply(
        &self,
        input: &Activations,
        rows: Range<usize>,
        out: &mut [f32],
    ) -> Result<(), ShapeError> {
        input.check(self.cols, self.rows, &rows, out.len())?;
        job::run(Job {
            matrix: self,
            input,
            rows,
            out,
        })
    }
}

impl Format for Q41Matrix {
    #[cfg(target_arch = "x86_64")]
    fn avx2(job: Job<'_, Self>, simd: pulp::x86::V3) {
        let kernel = avx2::Kernel::new(simd, job.matrix.blocks_per_row());
        Simd::vectorize(simd, Products { kernel, job });
    }

    #[inline(always)]
    fn portable<S: Simd>(job: Job<'_, Self>, simd: S) {
        Products {
            kernel: PortableKernel { simd },
            job,
        }
        .with_simd(simd);
    }
}

/// The instructions a product runs on. An input is laid out for one of them
/// ([`Activations::new`] picks the faster where the CPU has it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// 256-bit integer products, one block per instruction (x86-64 with AVX2 and FMA).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// f32 products with whatever SIMD `pulp` finds: every other machine, and the exact
    /// reference the integer path is tested against.
    Portable,
}

impl Path {
    fn fastest() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if pulp::x86::V3::try_new().is_some() {
                return Self::Avx2;
            }
        }
        Self::Portable
    }

    /// The paths this CPU can take.
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Self> {
        let mut paths = vec![Self::Portable];
        #[cfg(target_arch = "x86_64")]
        if pulp::x86::V3::try_new().is_some() {
            paths.push(Self::Avx2);
        }
        paths
    }

    /// Whether products on this path read the activations rounded to 8 bits (else as f32).
    pub(crate) fn is_integer(self) -> bool {
        self != Self::Portable
    }
}

/// Tokens' activations laid out for [`Q41Matrix::multiply`]: in passes of up to
/// [`TOKENS_PER_PASS`] tokens, and within a pass block by block, so that one block of weights
/// meets every token of the pass in consecutive memory; with each block's sum.
pub struct Activations {
    cols: usize,
    tokens: usize,
    /// The path the products will take; the layouts below are those it reads.
    path: Path,
    /// Portable path: per pass, per block, per token of the pass: the block's 32 activations.
    values: Vec<f32>,
    /// Per pass, per block, per token: the sum of those activations.
    sums: Vec<f32>,
    /// Integer path: the blocks of `values` rounded to 8 bits (`value ≈ step × q`).
    quantized: Vec<[i8; BLOCK]>,
    /// Each quantized block's step.
    steps: Vec<f32>,
}

impl Activations {
    /// `values` holds `tokens` rows of `cols` activations, laid out for the fastest path this
    /// CPU has.
    pub fn new(values: &[f32], tokens: usize, cols: usize) -> Result<Self, ShapeError> {
        Self::for_path(values, tokens, cols, Path::fastest())
    }

    pub(crate) fn for_path(
        values: &[f32],
        tokens: usize,
        cols: usize,
        path: Path,
    ) -> Result<Self, ShapeError> {
        if cols == 0 || !cols.is_multiple_of(BLOCK) || values.len() != tokens * cols {
            return Err(ShapeError(format!(
                "{} activations are not {tokens} tokens of {cols} in {BLOCK}-value blocks",
                values.len()
            )));
        }
        let blocks = values.len() / BLOCK;
        let integer = path.is_integer();
        let mut laid = Vec::with_capacity(if integer { 0 } else { values.len() });
        let mut sums = Vec::with_capacity(blocks);
        let mut quantized = Vec::with_capacity(if integer { blocks } else { 0 });
        let mut steps = Vec::with_capacity(if integer { blocks } else { 0 });
        for pass in values.chunks(TOKENS_PER_PASS * cols) {
            for block in 0..cols / BLOCK {
                for token in pass.chunks_exact(cols) {
                    let part = token.get(block * BLOCK..(block + 1) * BLOCK).unwrap_or(&[]);
                    sums.push(part.iter().sum());
                    if integer {
                        let (rounded, step) = round_to_8_bits(part);
                        quantized.push(rounded);
                        steps.push(step);
                    } else {
                        laid.extend_from_slice(part);
                    }
                }
            }
        }
        Ok(Self {
            cols,
            tokens,
            path,
            values: laid,
            sums,
            quantized,
            steps,
        })
    }

    pub fn tokens(&self) -> usize {
        self.tokens
    }

    pub(crate) fn path(&self) -> Path {
        self.path
    }

    /// Whether these activations fit a product by rows `rows` of a matrix of `matrix_rows ×
    /// cols` into `outputs` values.
    pub(crate) fn check(
        &self,
        cols: usize,
        matrix_rows: usize,
        rows: &Range<usize>,
        outputs: usize,
    ) -> Result<(), ShapeError> {
        if self.cols != cols {
            return Err(ShapeError(format!(
                "an input of {} values per token for rows of {cols}",
                self.cols
            )));
        }
        if rows.end > matrix_rows || outputs != rows.len() * self.tokens {
            return Err(ShapeError(format!(
                "rows {rows:?} of {matrix_rows} into {outputs} outputs for {} tokens",
                self.tokens
            )));
        }
        Ok(())
    }

    /// Each pass of up to [`TOKENS_PER_PASS`] tokens.
    pub(crate) fn passes(&self) -> impl Iterator<Item = Pass<'_>> {
        let per_block = self.cols / BLOCK;
        let per_pass = TOKENS_PER_PASS * per_block;
        let passes = self.tokens.div_ceil(TOKENS_PER_PASS);
        (0..passes).map(move |index| {
            let first = index * TOKENS_PER_PASS;
            let count = TOKENS_PER_PASS.min(self.tokens - first);
            let blocks = index * per_pass..index * per_pass + count * per_block;
            let values = blocks.start * BLOCK..blocks.end * BLOCK;
            Pass {
                first,
                count,
                values: self.values.get(values).unwrap_or(&[]),
                sums: self.sums.get(blocks.clone()).unwrap_or(&[]),
                quantized: self.quantized.get(blocks.clone()).unwrap_or(&[]),
                steps: self.steps.get(blocks).unwrap_or(&[]),
            }
        })
    }
}

/// Some tokens' activations, block by block and within a block token by token.
pub(crate) struct Pass<'a> {
    /// The pass's first token.
    pub(crate) first: usize,
    /// Its tokens.
    pub(crate) count: usize,
    pub(crate) values: &'a [f32],
    pub(crate) sums: &'a [f32],
    pub(crate) quantized: &'a [[i8; BLOCK]],
    pub(crate) steps: &'a [f32],
}

/// A block of activations as 8-bit integers and the step that scales them back: the largest
/// magnitude maps to ±127.
#[allow(clippy::cast_possible_truncation)]
fn round_to_8_bits(block: &[f32]) -> ([i8; BLOCK], f32) {
    let largest = block.iter().fold(0.0f32, |a, x| a.max(x.abs()));
    let mut rounded = [0i8; BLOCK];
    if largest > 0.0 && largest.is_finite() {
        let inverse = 127.0 / largest;
        for (q, x) in rounded.iter_mut().zip(block) {
            // Half away from zero, then truncated: rounding without a call to `roundf` per
            // value. Within ±127 by construction; `as` saturates anyway.
            let scaled = x * inverse;
            *q = (scaled + 0.5f32.copysign(scaled)) as i8;
        }
    }
    (rounded, largest / 127.0)
}

/// What one instruction set does with a row of weights: multiply it by the token of a pass of
/// one, or by the 2–8 tokens of a pass.
trait RowProducts {
    fn one_token(&mut self, row: &RowWeights<'_>, pass: &Pass<'_>) -> f32;
    fn several_tokens(&mut self, row: &RowWeights<'_>, pass: &Pass<'_>, target: &mut [f32]);
}

/// The products of some rows by one kernel, as one SIMD dispatch: each row's scales and
/// minimums are widened once for all the passes.
impl<K: RowProducts> WithSimd for Products<'_, K, Q41Matrix> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        let Self {
            mut kernel,
            job:
                Job {
                    matrix,
                    input,
                    rows,
                    out,
                },
        } = self;
        let per_row = matrix.blocks_per_row();
        let tokens = input.tokens;
        let mut scale = vec![0.0f32; per_row];
        let mut minimum = vec![0.0f32; per_row];
        let passes: Vec<Pass<'_>> = input.passes().collect();
        for (row, target) in rows.zip(out.chunks_exact_mut(tokens.max(1))) {
            let Some(nibbles) = matrix.widened_row(row, &mut scale, &mut minimum) else {
                continue;
            };
            let weights = RowWeights {
                nibbles,
                scale: &scale,
                minimum: &minimum,
            };
            for pass in &passes {
                let Some(target) = target.get_mut(pass.first..pass.first + pass.count) else {
                    continue;
                };
                if pass.count == 1 {
                    if let Some(slot) = target.first_mut() {
                        *slot = kernel.one_token(&weights, pass);
                    }
                } else {
                    kernel.several_tokens(&weights, pass, target);
                }
            }
        }
    }
}

/// f32 products: nibbles widened to f32 and multiplied by the f32 activations.
struct PortableKernel<S> {
    simd: S,
}

impl<S: Simd> RowProducts for PortableKernel<S> {
    #[inline(always)]
    fn one_token(&mut self, row: &RowWeights<'_>, pass: &Pass<'_>) -> f32 {
        one_token(self.simd, row, pass.values, pass.sums)
    }

    #[inline(always)]
    fn several_tokens(&mut self, row: &RowWeights<'_>, pass: &Pass<'_>, target: &mut [f32]) {
        several_tokens(self.simd, row, pass.values, pass.sums, target);
    }
}

/// One row's nibbles with its scales and minimums widened.
struct RowWeights<'a> {
    nibbles: &'a [[u8; NIBBLE_BYTES]],
    scale: &'a [f32],
    minimum: &'a [f32],
}

/// A block's 32 weights as the f32 integers 0–15 (its scale and minimum not yet applied).
#[inline(always)]
fn unpack(bytes: &[u8; NIBBLE_BYTES]) -> [f32; BLOCK] {
    let mut weights = [0.0f32; BLOCK];
    let (low, high) = weights.split_at_mut(NIBBLE_BYTES);
    for ((l, h), byte) in low.iter_mut().zip(high.iter_mut()).zip(bytes) {
        *l = f32::from(byte & 0xf);
        *h = f32::from(byte >> 4);
    }
    weights
}

/// `Σ wᵢxᵢ` of a block as a SIMD vector still to be reduced, and the part past the last full
/// vector (none at the widths `pulp` picks on the machines we know, whose lanes divide 32).
#[inline(always)]
fn block_dot<S: Simd>(simd: S, weights: &[f32; BLOCK], activations: &[f32]) -> (S::f32s, f32) {
    let (w_lanes, w_tail) = S::as_simd_f32s(weights);
    let (x_lanes, x_tail) = S::as_simd_f32s(activations);
    let mut dot = simd.splat_f32s(0.0);
    for (w, x) in w_lanes.iter().zip(x_lanes) {
        dot = simd.mul_add_f32s(*w, *x, dot);
    }
    let tail = w_tail.iter().zip(x_tail).map(|(w, x)| w * x).sum();
    (dot, tail)
}

/// One row times one token: the generation step, where all that matters is reading the
/// weights once at full speed.
#[inline(always)]
fn one_token<S: Simd>(simd: S, row: &RowWeights<'_>, values: &[f32], sums: &[f32]) -> f32 {
    let mut acc = simd.splat_f32s(0.0);
    let mut rest = 0.0f32;
    let blocks = row
        .nibbles
        .iter()
        .zip(row.scale.iter().zip(row.minimum))
        .zip(values.chunks_exact(BLOCK).zip(sums));
    for ((bytes, (d, m)), (activations, sum)) in blocks {
        let weights = unpack(bytes);
        let (dot, tail) = block_dot(simd, &weights, activations);
        acc = simd.mul_add_f32s(simd.splat_f32s(*d), dot, acc);
        rest += m * sum + d * tail;
    }
    simd.reduce_sum_f32s(acc) + rest
}

/// One row times the 2–8 tokens of a pass: each block's weights widened once for all of them.
#[inline(always)]
fn several_tokens<S: Simd>(
    simd: S,
    row: &RowWeights<'_>,
    values: &[f32],
    sums: &[f32],
    target: &mut [f32],
) {
    let count = target.len();
    let mut acc = [simd.splat_f32s(0.0); TOKENS_PER_PASS];
    let mut rest = [0.0f32; TOKENS_PER_PASS];
    let blocks = row
        .nibbles
        .iter()
        .zip(row.scale.iter().zip(row.minimum))
        .zip(
            values
                .chunks_exact(BLOCK * count)
                .zip(sums.chunks_exact(count)),
        );
    for ((bytes, (d, m)), (activations, block_sums)) in blocks {
        let weights = unpack(bytes);
        let scale = simd.splat_f32s(*d);
        let per_token = acc
            .iter_mut()
            .zip(rest.iter_mut())
            .zip(activations.chunks_exact(BLOCK).zip(block_sums));
        for ((acc, rest), (activations, sum)) in per_token {
            let (dot, tail) = block_dot(simd, &weights, activations);
            *acc = simd.mul_add_f32s(scale, dot, *acc);
            *rest += m * sum + d * tail;
        }
    }
    for ((slot, acc), rest) in target.iter_mut().zip(acc).zip(rest) {
        *slot = simd.reduce_sum_f32s(acc) + rest;
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)]
mod tests {
    use super::*;

    /// A block from its scale, minimum and 32 integers 0–15, as GGUF stores it.
    fn block(d: f32, m: f32, quants: &[u8; 32]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(BLOCK_BYTES);
        bytes.extend_from_slice(&half::f16::from_f32(d).to_bits().to_le_bytes());
        bytes.extend_from_slice(&half::f16::from_f32(m).to_bits().to_le_bytes());
        for i in 0..16 {
            bytes.push(quants[i] | (quants[i + 16] << 4));
        }
        bytes
    }

    /// A deterministic matrix of `rows × cols` with varied scales, minimums and nibbles.
    fn matrix(rows: usize, cols: usize) -> (Q41Matrix, Vec<u8>) {
        let mut bytes = Vec::new();
        for index in 0..rows * cols / BLOCK {
            let mut quants = [0u8; 32];
            for (i, q) in quants.iter_mut().enumerate() {
                *q = ((index * 7 + i * 13) % 16) as u8;
            }
            let d = 0.01 + (index % 11) as f32 * 0.003;
            let m = -0.05 + (index % 5) as f32 * 0.02;
            bytes.extend(block(d, m, &quants));
        }
        (Q41Matrix::from_ggml(&bytes, rows, cols).unwrap(), bytes)
    }

    fn activations(tokens: usize, cols: usize) -> Vec<f32> {
        (0..tokens * cols)
            .map(|i| ((i * 2_654_435_761) % 2_001) as f32 / 1_000.0 - 1.0)
            .collect()
    }

    /// The weights from the bytes by the format's definition, in f64.
    fn reference_row(bytes: &[u8], row: usize, cols: usize) -> Vec<f64> {
        let per_row = cols / BLOCK;
        let mut out = Vec::with_capacity(cols);
        for block in bytes[row * per_row * BLOCK_BYTES..(row + 1) * per_row * BLOCK_BYTES]
            .chunks_exact(BLOCK_BYTES)
        {
            let d = f64::from(half::f16::from_bits(u16::from_le_bytes([
                block[0], block[1],
            ])));
            let m = f64::from(half::f16::from_bits(u16::from_le_bytes([
                block[2], block[3],
            ])));
            let quants = &block[4..];
            let mut weights = vec![0.0; BLOCK];
            for i in 0..16 {
                weights[i] = d * f64::from(quants[i] & 0xf) + m;
                weights[i + 16] = d * f64::from(quants[i] >> 4) + m;
            }
            out.extend(weights);
        }
        out
    }

    /// Every path this CPU has against the definition: the portable one to f32 rounding, the
    /// integer one
    /// (8-bit activations) to 1% of the products' magnitude.
    fn check_products(rows: usize, cols: usize, tokens: usize) {
        let (matrix, bytes) = matrix(rows, cols);
        let values = activations(tokens, cols);
        for path in Path::available() {
            let input = Activations::for_path(&values, tokens, cols, path).unwrap();
            let mut out = vec![0.0; rows * tokens];
            matrix.multiply(&input, 0..rows, &mut out).unwrap();
            for row in 0..rows {
                let weights = reference_row(&bytes, row, cols);
                for token in 0..tokens {
                    let x = &values[token * cols..(token + 1) * cols];
                    let expected: f64 = weights.iter().zip(x).map(|(w, x)| w * f64::from(*x)).sum();
                    let magnitude: f64 = weights
                        .iter()
                        .zip(x)
                        .map(|(w, x)| (w * f64::from(*x)).abs())
                        .sum();
                    let got = f64::from(out[row * tokens + token]);
                    let allowed = if path.is_integer() {
                        1e-2 * magnitude + 1e-4
                    } else {
                        1e-4 * (1.0 + magnitude)
                    };
                    assert!(
                        (got - expected).abs() < allowed,
                        "{path:?}, row {row} token {token} of {tokens}: {got} vs {expected}"
                    );
                }
            }
        }
    }

    #[test]
    fn products_match_the_formats_definition_for_one_token_and_for_several_passes() {
        for tokens in [1, 2, 7, 8, 9, 17] {
            check_products(5, 96, tokens);
            check_products(3, 160, tokens);
        }
        // SmolLM2-135M's widths.
        check_products(3, 576, 1);
        check_products(2, 1536, 1);
        check_products(2, 1536, 9);
    }

    #[test]
    fn a_row_range_gives_the_same_products_as_the_whole_matrix() {
        let (matrix, _) = matrix(10, 64);
        let values = activations(3, 64);
        let input = Activations::new(&values, 3, 64).unwrap();
        let mut whole = vec![0.0; 30];
        matrix.multiply(&input, 0..10, &mut whole).unwrap();
        let mut part = vec![0.0; 12];
        matrix.multiply(&input, 4..8, &mut part).unwrap();
        assert_eq!(part, whole[12..24]);
    }

    #[test]
    fn dequantized_rows_are_the_formats_weights() {
        let (matrix, bytes) = matrix(4, 64);
        let mut row = vec![0.0; 64];
        assert!(matrix.dequantize_row(2, &mut row));
        for (got, expected) in row.iter().zip(reference_row(&bytes, 2, 64)) {
            assert!(
                (f64::from(*got) - expected).abs() < 1e-6,
                "{got} vs {expected}"
            );
        }
        assert!(!matrix.dequantize_row(4, &mut row));
        assert!(!matrix.dequantize_row(0, &mut [0.0; 32]));
    }

    #[test]
    fn shapes_that_do_not_fit_are_errors() {
        let (matrix, bytes) = matrix(2, 64);
        assert!(Q41Matrix::from_ggml(&bytes, 2, 48).is_err());
        assert!(Q41Matrix::from_ggml(&bytes[1..], 2, 64).is_err());
        assert!(Activations::new(&[0.0; 63], 1, 63).is_err());
        assert!(Activations::new(&[0.0; 64], 2, 64).is_err());
        let input = Activations::new(&[0.0; 32], 1, 32).unwrap();
        assert!(matrix.multiply(&input, 0..2, &mut [0.0; 2]).is_err());
        let input = Activations::new(&[0.0; 64], 1, 64).unwrap();
        assert!(matrix.multiply(&input, 0..3, &mut [0.0; 3]).is_err());
        assert!(matrix.multiply(&input, 0..2, &mut [0.0; 1]).is_err());
        assert_eq!(matrix.bytes(), bytes.len());
    }
}
