//! Products of `Q8_0` weight matrices with f32 activations: SmolLM2-135M keeps its token
//! embedding in this format, and the embedding is also its output matrix (49,152 × 576, 30 MB
//! read for every generated token).
//!
//! A `Q8_0` block holds 32 weights as signed bytes `q` with an f16 scale `d`: weight = `d × q`.
//! On x86-64 with AVX2 a block's `Σ qᵢxᵢ` is an integer product against the activations
//! rounded to 8 bits per block (the rounding [`Activations`] already does for `Q4_1`): `vpmaddubsw`
//! multiplies unsigned by signed bytes, so the weights' signs move onto the activations first
//! (`vpsignb`). The matrix is read ahead as the `Q4_1` one is. Elsewhere the bytes are widened
//! to f32. candle has a kernel for this format too; ours differs in reading ahead: the output
//! product of a generated token (SmolLM2-135M, two threads) took 1.1–1.7 ms at the median of
//! 40 alternating runs instead of candle's 2.0–2.8 ms.

use std::ops::Range;

use pulp::{Simd, WithSimd};

use crate::job::{self, Format, Job, Products};
use crate::q4_1::{Activations, Pass};
use crate::{BLOCK, ShapeError, TOKENS_PER_PASS, widen_f16};

/// Bytes of one block in a GGUF file: f16 scale, 32 signed bytes.
const BLOCK_BYTES: usize = 2 + BLOCK;

/// A `Q8_0` matrix of `rows × cols` weights (`cols` a multiple of [`BLOCK`]).
pub struct Q80Matrix {
    rows: usize,
    cols: usize,
    /// f16 bits of each block's scale, row by row.
    scales: Vec<u16>,
    quants: Vec<[i8; BLOCK]>,
}

impl Q80Matrix {
    /// The matrix from a GGUF tensor's bytes.
    pub fn from_ggml(bytes: &[u8], rows: usize, cols: usize) -> Result<Self, ShapeError> {
        let blocks = crate::q4_1::blocks_in(bytes, rows, cols, BLOCK_BYTES, "Q8_0")?;
        let mut scales = Vec::with_capacity(blocks);
        let mut quants = Vec::with_capacity(blocks);
        for block in bytes.chunks_exact(BLOCK_BYTES) {
            let (head, values) = block.split_at(2);
            if let &[d0, d1] = head {
                scales.push(u16::from_le_bytes([d0, d1]));
            }
            let mut signed = [0i8; BLOCK];
            for (q, byte) in signed.iter_mut().zip(values) {
                *q = i8::from_le_bytes([*byte]);
            }
            quants.push(signed);
        }
        Ok(Self {
            rows,
            cols,
            scales,
            quants,
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
        2 * self.scales.len() + self.quants.len() * BLOCK
    }

    /// Row `row`'s blocks and their scales' f16 bits; `None` past the last row.
    fn row(&self, row: usize) -> Option<(&[[i8; BLOCK]], &[u16])> {
        let per_row = self.cols / BLOCK;
        let span = row * per_row..(row + 1) * per_row;
        Some((self.quants.get(span.clone())?, self.scales.get(span)?))
    }

    /// Row `row` as f32 weights into `out` (`cols` long); `false` when there is no such row
    /// or `out` has another length.
    pub fn dequantize_row(&self, row: usize, out: &mut [f32]) -> bool {
        let Some((quants, halves)) = self.row(row) else {
            return false;
        };
        if out.len() != self.cols {
            return false;
        }
        let mut scale = vec![0.0; halves.len()];
        widen_f16(halves, &mut scale);
        for ((weights, block), d) in out.chunks_exact_mut(BLOCK).zip(quants).zip(&scale) {
            for (w, q) in weights.iter_mut().zip(block) {
                *w = d * f32::from(*q);
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

impl Format for Q80Matrix {
    #[cfg(target_arch = "x86_64")]
    fn avx2(job: Job<'_, Self>, simd: pulp::x86::V3) {
        let kernel = avx2::Kernel::new(simd);
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

/// What one instruction set does with a row's blocks (their scales widened) and a pass of
/// tokens: the products into `target`, one per token.
trait PassProducts {
    fn products(
        &mut self,
        quants: &[[i8; BLOCK]],
        scale: &[f32],
        pass: &Pass<'_>,
        target: &mut [f32],
    );
}

/// The products of some rows by one kernel, as one SIMD dispatch: each row's scales are
/// widened once for all the passes.
impl<K: PassProducts> WithSimd for Products<'_, K, Q80Matrix> {
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
        let tokens = input.tokens();
        let mut scale = vec![0.0f32; matrix.cols / BLOCK];
        let passes: Vec<Pass<'_>> = input.passes().collect();
        for (row, target) in rows.zip(out.chunks_exact_mut(tokens.max(1))) {
            let Some((quants, halves)) = matrix.row(row) else {
                continue;
            };
            widen_f16(halves, &mut scale);
            for pass in &passes {
                if let Some(target) = target.get_mut(pass.first..pass.first + pass.count) {
                    kernel.products(quants, &scale, pass, target);
                }
            }
        }
    }
}

/// f32 products: each block widened to f32 once for the tokens of a pass.
struct PortableKernel<S> {
    simd: S,
}

impl<S: Simd> PassProducts for PortableKernel<S> {
    #[inline(always)]
    fn products(
        &mut self,
        quants: &[[i8; BLOCK]],
        scale: &[f32],
        pass: &Pass<'_>,
        target: &mut [f32],
    ) {
        let simd = self.simd;
        let mut acc = [simd.splat_f32s(0.0); TOKENS_PER_PASS];
        let blocks = quants
            .iter()
            .zip(scale)
            .zip(pass.values.chunks_exact(BLOCK * pass.count));
        for ((block, d), activations) in blocks {
            let mut weights = [0.0f32; BLOCK];
            for (w, q) in weights.iter_mut().zip(block) {
                *w = d * f32::from(*q);
            }
            let (w_lanes, _) = S::as_simd_f32s(&weights);
            for (acc, x) in acc.iter_mut().zip(activations.chunks_exact(BLOCK)) {
                let (x_lanes, _) = S::as_simd_f32s(x);
                for (w, x) in w_lanes.iter().zip(x_lanes) {
                    *acc = simd.mul_add_f32s(*w, *x, *acc);
                }
            }
        }
        for (slot, acc) in target.iter_mut().zip(acc) {
            *slot = simd.reduce_sum_f32s(acc);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! The `Q8_0` products with AVX2 integer instructions.

    use std::arch::x86_64::__m256i;

    use pulp::x86::V3;

    use super::{BLOCK, Pass, PassProducts, TOKENS_PER_PASS};
    use crate::q4_1::{lanes_sum, read_ahead};

    pub(super) struct Kernel {
        simd: V3,
    }

    impl Kernel {
        pub(super) fn new(simd: V3) -> Self {
            Self { simd }
        }
    }

    impl PassProducts for Kernel {
        #[inline(always)]
        fn products(
            &mut self,
            quants: &[[i8; BLOCK]],
            scale: &[f32],
            pass: &Pass<'_>,
            target: &mut [f32],
        ) {
            let simd = self.simd;
            let count = pass.count;
            let ones = simd.avx._mm256_set1_epi16(1);
            let mut acc = [simd.avx._mm256_setzero_ps(); TOKENS_PER_PASS];
            let blocks = quants.iter().zip(scale).zip(
                pass.quantized
                    .chunks_exact(count)
                    .zip(pass.steps.chunks_exact(count)),
            );
            for ((block, d), (activations, steps)) in blocks {
                read_ahead(simd, block);
                let weights: __m256i = pulp::cast(*block);
                // `vpmaddubsw` takes unsigned × signed bytes: the weights' magnitudes (-128
                // becomes 128 read unsigned) times the activations carrying the weights'
                // signs. Pairs stay within ±32,512.
                let magnitudes = simd.avx2._mm256_sign_epi8(weights, weights);
                let per_token = acc.iter_mut().zip(activations.iter().zip(steps));
                for (acc, (x, step)) in per_token {
                    let signed = simd.avx2._mm256_sign_epi8(pulp::cast(*x), weights);
                    let pairs = simd.avx2._mm256_maddubs_epi16(magnitudes, signed);
                    let sums = simd.avx2._mm256_madd_epi16(pairs, ones);
                    *acc = simd.fma._mm256_fmadd_ps(
                        simd.avx._mm256_set1_ps(d * step),
                        simd.avx._mm256_cvtepi32_ps(sums),
                        *acc,
                    );
                }
            }
            for (slot, acc) in target.iter_mut().zip(acc) {
                *slot = lanes_sum(acc);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
mod tests {
    use super::*;
    use crate::q4_1::Path;

    /// A deterministic `rows × cols` matrix as GGUF stores it, every byte value -128–127
    /// among its weights.
    fn bytes(rows: usize, cols: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        for index in 0..rows * cols / BLOCK {
            let d = 0.002 + (index % 13) as f32 * 0.0005;
            bytes.extend_from_slice(&half::f16::from_f32(d).to_bits().to_le_bytes());
            for i in 0..BLOCK {
                bytes.push(((index * 37 + i * 59) % 256) as u8);
            }
        }
        bytes
    }

    /// The weights from the bytes by the format's definition, in f64.
    fn reference_row(bytes: &[u8], row: usize, cols: usize) -> Vec<f64> {
        let per_row = cols / BLOCK;
        let span = row * per_row * BLOCK_BYTES..(row + 1) * per_row * BLOCK_BYTES;
        let mut out = Vec::with_capacity(cols);
        for block in bytes[span].chunks_exact(BLOCK_BYTES) {
            let d = f64::from(half::f16::from_bits(u16::from_le_bytes([
                block[0], block[1],
            ])));
            out.extend(block[2..].iter().map(|b| d * f64::from(*b as i8)));
        }
        out
    }

    fn activations(tokens: usize, cols: usize) -> Vec<f32> {
        (0..tokens * cols)
            .map(|i| ((i * 2_654_435_761) % 2_001) as f32 / 1_000.0 - 1.0)
            .collect()
    }

    /// Every path this CPU has against the definition: the portable one to f32 rounding, the
    /// integer one (8-bit activations) to 1% of the products' magnitude.
    fn check_products(rows: usize, cols: usize, tokens: usize) {
        let raw = bytes(rows, cols);
        let matrix = Q80Matrix::from_ggml(&raw, rows, cols).unwrap();
        let values = activations(tokens, cols);
        for path in Path::available() {
            let input = Activations::for_path(&values, tokens, cols, path).unwrap();
            let mut out = vec![0.0; rows * tokens];
            matrix.multiply(&input, 0..rows, &mut out).unwrap();
            for row in 0..rows {
                let weights = reference_row(&raw, row, cols);
                for token in 0..tokens {
                    let x = &values[token * cols..(token + 1) * cols];
                    let terms = weights.iter().zip(x).map(|(w, x)| w * f64::from(*x));
                    let expected: f64 = terms.clone().sum();
                    let magnitude: f64 = terms.map(f64::abs).sum();
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
        for tokens in [1, 2, 8, 9] {
            check_products(4, 96, tokens);
        }
        check_products(3, 576, 1);
    }

    #[test]
    fn dequantized_rows_are_the_formats_weights_and_rows_of_other_shapes_are_refused() {
        let raw = bytes(3, 64);
        let matrix = Q80Matrix::from_ggml(&raw, 3, 64).unwrap();
        assert_eq!(matrix.bytes(), raw.len());
        let mut row = vec![0.0; 64];
        assert!(matrix.dequantize_row(1, &mut row));
        for (got, expected) in row.iter().zip(reference_row(&raw, 1, 64)) {
            assert!(
                (f64::from(*got) - expected).abs() < 1e-6,
                "{got} vs {expected}"
            );
        }
        assert!(!matrix.dequantize_row(3, &mut row));
        assert!(!matrix.dequantize_row(0, &mut [0.0; 32]));
        assert!(Q80Matrix::from_ggml(&raw, 3, 48).is_err());
        assert!(Q80Matrix::from_ggml(&raw[1..], 3, 64).is_err());
        let input = Activations::new(&[0.0; 64], 1, 64).unwrap();
        assert!(matrix.multiply(&input, 0..4, &mut [0.0; 4]).is_err());
        assert!(matrix.multiply(&input, 0..3, &mut [0.0; 2]).is_err());
        let narrow = Activations::new(&[0.0; 32], 1, 32).unwrap();
        assert!(matrix.multiply(&narrow, 0..3, &mut [0.0; 3]).is_err());
    }
}
