//! The sentence embedder's hot loops: the f32 products of a BERT layer's weights with the few
//! tokens a turn embeds, its layer normalisation, its GELU, and its attention.
//!
//! A turn embeds a handful of short labels (about 15 tokens in all), so a general matrix
//! product's setup (candle's packs the weight matrix again on every call) costs more than the
//! arithmetic. [`DenseWeights`] lays a matrix out once, at load, in panels of outputs stored
//! as f16 (half of the 42 MB MiniLM's layers take in f32, and small enough for a large
//! last-level cache to keep between calls); [`dense`] widens a panel at a time and multiplies
//! it with tiles of tokens held in registers: 50 to 85 GMAC/s on one AVX-512 core for 5 to 40
//! tokens, where a weight row at a time against each token managed 15 to 26.

use pulp::{Arch, Simd, WithSimd};

use crate::ShapeError;

/// Outputs a panel holds: one AVX-512 vector, two AVX2 ones.
const PANEL: usize = 16;
/// Tokens a tile multiplies at once: each token's panel of sums is its own chain of
/// multiply-adds (with AVX2, two), so the chains overlap, and all of them stay in registers.
const TILE: usize = 6;

/// A weight matrix (one output per row, as `PyTorch` stores a linear layer) laid out once for
/// [`dense`]: in panels of [`PANEL`] outputs, each panel input by input (`cols × PANEL`
/// values), as f16 bit patterns. A product then reads the weights front to back, and no call
/// lays them out again.
pub struct DenseWeights {
    rows: usize,
    cols: usize,
    /// Panel by panel; the last panel's missing rows are zeros.
    panels: Vec<u16>,
}

impl DenseWeights {
    /// `bits` holds `rows × cols` f16 bit patterns, row by row.
    pub fn from_f16(bits: &[u16], rows: usize, cols: usize) -> Result<Self, ShapeError> {
        Self::laid_out(bits.len(), rows, cols, bits.iter().copied())
    }

    /// `values` holds `rows × cols` f32 weights, row by row; they are rounded to f16 (exact for
    /// weights a model stored as f16) as they are laid out, with no copy of the whole.
    pub fn from_f32(values: &[f32], rows: usize, cols: usize) -> Result<Self, ShapeError> {
        Self::laid_out(
            values.len(),
            rows,
            cols,
            values.iter().map(|v| half::f16::from_f32(*v).to_bits()),
        )
    }

    /// The panels of `count` f16 bit patterns given row by row.
    fn laid_out(
        count: usize,
        rows: usize,
        cols: usize,
        bits: impl Iterator<Item = u16>,
    ) -> Result<Self, ShapeError> {
        if rows == 0 || cols == 0 || count != rows * cols {
            return Err(ShapeError(format!(
                "{count} weights are not a matrix of {rows} × {cols}"
            )));
        }
        let mut panels = vec![0u16; rows.div_ceil(PANEL) * cols * PANEL];
        for (i, bits) in bits.enumerate() {
            let (r, c) = (i / cols, i % cols);
            if let Some(slot) = panels.get_mut((r / PANEL) * cols * PANEL + r % PANEL + c * PANEL) {
                *slot = bits;
            }
        }
        Ok(Self { rows, cols, panels })
    }

    /// Outputs (rows of the matrix).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Inputs (columns of the matrix).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Writes row `row`'s weights, widened to f32, into `out` (`cols` values): a tied
    /// embedding reads its token vectors from the matrix that projects onto the vocabulary.
    /// `false` (and `out` untouched) when there is no such row or `out` is not `cols` long.
    pub fn row(&self, row: usize, out: &mut [f32]) -> bool {
        if row >= self.rows || out.len() != self.cols {
            return false;
        }
        let base = (row / PANEL) * self.cols * PANEL + row % PANEL;
        let Some(panel) = self.panels.get(base..) else {
            return false;
        };
        for (wide, bits) in out.iter_mut().zip(panel.iter().step_by(PANEL)) {
            *wide = half::f16::from_bits(*bits).to_f32();
        }
        true
    }
}

/// A linear layer for [`dense`]: its weights laid out once, and one bias per output.
pub struct DenseLayer {
    weights: DenseWeights,
    bias: Vec<f32>,
}

impl DenseLayer {
    /// `bias` holds one value per row of `weights`.
    pub fn new(weights: DenseWeights, bias: Vec<f32>) -> Result<Self, ShapeError> {
        if bias.len() != weights.rows {
            return Err(ShapeError(format!(
                "{} biases for a layer of {} outputs",
                bias.len(),
                weights.rows
            )));
        }
        Ok(Self { weights, bias })
    }

    /// Values a token's output holds.
    pub fn outputs(&self) -> usize {
        self.weights.rows
    }

    /// Values a token's input holds.
    pub fn inputs(&self) -> usize {
        self.weights.cols
    }

    /// The layer applied to each of the tokens in `x` (`inputs` values a token), into `out`
    /// (`outputs` values a token).
    pub fn forward(&self, x: &[f32], out: &mut [f32]) -> Result<(), ShapeError> {
        dense(x, &self.weights, &self.bias, out)
    }
}

/// f32 values as f16 bit patterns, rounded to nearest.
pub fn f16_bits(values: &[f32]) -> Vec<u16> {
    use half::slice::HalfFloatSliceExt;
    let mut halves = vec![half::f16::ZERO; values.len()];
    halves.convert_from_f32_slice(values);
    halves.reinterpret_cast().to_vec()
}

/// `out[t × rows + r] = bias[r] + Σ_c x[t × cols + c] × weights[r][c]`: a linear layer
/// applied to each of the tokens in `x` (`cols` values a token).
pub fn dense(
    x: &[f32],
    weights: &DenseWeights,
    bias: &[f32],
    out: &mut [f32],
) -> Result<(), ShapeError> {
    let (rows, cols) = (weights.rows, weights.cols);
    let tokens = x.len() / cols;
    if bias.len() != rows || x.len() != tokens * cols || out.len() != tokens * rows {
        return Err(ShapeError(format!(
            "{} inputs, {} biases and {} outputs do not fit a {rows} × {cols} matrix",
            x.len(),
            bias.len(),
            out.len()
        )));
    }
    Arch::new().dispatch(Dense {
        x,
        weights,
        bias,
        out,
    });
    Ok(())
}

struct Dense<'a> {
    x: &'a [f32],
    weights: &'a DenseWeights,
    bias: &'a [f32],
    out: &'a mut [f32],
}

impl WithSimd for Dense<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self {
            x,
            weights,
            bias,
            out,
        } = self;
        let (rows, cols) = (weights.rows, weights.cols);
        let tokens = x.len() / cols;
        // The tokens in tiles, input by input: `tiles[g][c][k]` is token `g × TILE + k`'s
        // input `c` (zero past the last token).
        let tiles: Vec<Vec<[f32; TILE]>> = x
            .chunks(cols * TILE)
            .map(|group| {
                let mut tile = vec![[0.0; TILE]; cols];
                for (k, token) in group.chunks_exact(cols).enumerate() {
                    for (slot, value) in tile.iter_mut().zip(token) {
                        if let Some(s) = slot.get_mut(k) {
                            *s = *value;
                        }
                    }
                }
                tile
            })
            .collect();
        let mut wide = vec![[0.0f32; PANEL]; cols];
        for (p, panel) in weights.panels.chunks_exact(cols * PANEL).enumerate() {
            crate::widen_f16(panel, wide.as_flattened_mut());
            let first_row = p * PANEL;
            let width = PANEL.min(rows - first_row);
            let Some(bias) = bias.get(first_row..first_row + width) else {
                continue;
            };
            for (g, tile) in tiles.iter().enumerate() {
                let mut sums = [0.0f32; TILE * PANEL];
                tile_products(simd, &wide, tile, &mut sums);
                let count = tokens.saturating_sub(g * TILE).min(TILE);
                for (k, token_sums) in sums.chunks_exact(PANEL).take(count).enumerate() {
                    let first = (g * TILE + k) * rows + first_row;
                    if let Some(target) = out.get_mut(first..first + width) {
                        for ((t, s), b) in target.iter_mut().zip(token_sums).zip(bias) {
                            *t = s + b;
                        }
                    }
                }
            }
        }
    }
}

/// One panel of widened weights times one tile of tokens: `sums[k × PANEL + j]` is token
/// `k`'s product with the panel's output `j`.
#[inline(always)]
fn tile_products<S: Simd>(
    simd: S,
    wide: &[[f32; PANEL]],
    tile: &[[f32; TILE]],
    sums: &mut [f32; TILE * PANEL],
) {
    let (acc, _) = S::as_mut_simd_f32s(sums);
    let per_token = (acc.len() / TILE).max(1);
    for (w, inputs) in wide.iter().zip(tile) {
        let (w, _) = S::as_simd_f32s(w);
        for (acc, input) in acc.chunks_exact_mut(per_token).zip(inputs) {
            let input = simd.splat_f32s(*input);
            for (a, w) in acc.iter_mut().zip(w) {
                *a = simd.mul_add_f32s(input, *w, *a);
            }
        }
    }
}

/// Normalises each row of `width` values of `x` to zero mean and unit variance (with `eps`
/// added to the variance), then scales by `gamma` and shifts by `beta`, in place.
pub fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let width = gamma.len();
    if width == 0 || beta.len() != width {
        return;
    }
    Arch::new().dispatch(|| {
        for row in x.chunks_exact_mut(width) {
            let n = width as f32;
            let mean = row.iter().sum::<f32>() / n;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let scale = 1.0 / (var + eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
                *v = (*v - mean) * scale * g + b;
            }
        }
    });
}

/// GELU with the error function, in place: `x × (1 + erf(x / √2)) / 2`.
///
/// `erf` is Abramowitz and Stegun's formula 7.1.26 (absolute error below 1.5 × 10⁻⁷) with an
/// `exp` of our own, plain arithmetic the compiler vectorises under `pulp`'s dispatch (the
/// library's `exp` is a call per value).
pub fn gelu(x: &mut [f32]) {
    Arch::new().dispatch(|| {
        for v in x.iter_mut() {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    });
}

#[inline(always)]
fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [
        0.254_829_6,
        -0.284_496_74,
        1.421_413_7,
        -1.453_152_1,
        1.061_405_4,
    ];
    let a = x.abs();
    let t = 1.0 / (1.0 + P * a);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let magnitude = 1.0 - poly * exp(-a * a);
    magnitude.copysign(x)
}

/// `e^x` for `x ≤ 0` down to where it underflows (the only arguments [`erf`] gives): `x` split
/// into `n ln 2 + r` with `|r| ≤ ln 2 / 2`, `e^r` by its Taylor series to `r⁶` (relative error
/// below 2 × 10⁻⁷), and `2ⁿ` put into the exponent bits.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let x = x.max(-87.0);
    let n = (x * std::f32::consts::LOG2_E).round();
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    // n is in [-126, 0] here, so the biased exponent is a normal one.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bits = ((n as i32 + 127) as u32) << 23;
    p * f32::from_bits(bits)
}

/// Self-attention of one sequence: `qkv` holds each token's query, key and value (`3 × heads
/// × head_dim` values a token, in that order); `out` receives each token's attended values
/// (`heads × head_dim` a token). Scores are scaled by `1 / √head_dim`; every token sees every
/// other (a sequence carries no padding).
pub fn attend(
    qkv: &[f32],
    heads: usize,
    head_dim: usize,
    out: &mut [f32],
) -> Result<(), ShapeError> {
    let hidden = heads * head_dim;
    let tokens = if hidden == 0 {
        0
    } else {
        qkv.len() / (3 * hidden)
    };
    if hidden == 0 || qkv.len() != 3 * hidden * tokens || out.len() != hidden * tokens {
        return Err(ShapeError(format!(
            "{} projections and {} outputs are not tokens of {heads} heads × {head_dim}",
            qkv.len(),
            out.len()
        )));
    }
    let scale = 1.0 / (head_dim as f32).sqrt();
    Arch::new().dispatch(|| {
        let mut scores = vec![0.0f32; tokens];
        for h in 0..heads {
            let part = |token: usize, which: usize| {
                let start = token * 3 * hidden + which * hidden + h * head_dim;
                qkv.get(start..start + head_dim).unwrap_or_default()
            };
            for i in 0..tokens {
                let q = part(i, 0);
                for (j, score) in scores.iter_mut().enumerate() {
                    let k = part(j, 1);
                    *score = q.iter().zip(k).map(|(a, b)| a * b).sum::<f32>() * scale;
                }
                let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let mut total = 0.0;
                for s in &mut scores {
                    *s = (*s - max).exp();
                    total += *s;
                }
                let start = i * hidden + h * head_dim;
                let Some(target) = out.get_mut(start..start + head_dim) else {
                    continue;
                };
                target.fill(0.0);
                for (j, s) in scores.iter().enumerate() {
                    let weight = s / total;
                    for (t, v) in target.iter_mut().zip(part(j, 2)) {
                        *t += weight * v;
                    }
                }
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_matches_the_plain_sum_for_every_token_count() {
        // 37 rows: two full panels and a part; weights that f16 holds exactly.
        let (rows, cols) = (37, 45);
        let weights: Vec<f32> = (0..rows * cols)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 64.0)
            .collect();
        let bias: Vec<f32> = (0..rows).map(|r| r as f32 * 0.25).collect();
        let halves: Vec<u16> = weights
            .iter()
            .map(|w| half::f16::from_f32(*w).to_bits())
            .collect();
        let matrix = DenseWeights::from_f16(&halves, rows, cols).unwrap();
        for tokens in [1, 3, 5, 6, 7, 13] {
            let x: Vec<f32> = (0..tokens * cols)
                .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
                .collect();
            let mut out = vec![f32::NAN; tokens * rows];
            dense(&x, &matrix, &bias, &mut out).unwrap();
            for t in 0..tokens {
                for r in 0..rows {
                    let expected: f32 = bias[r]
                        + (0..cols)
                            .map(|c| x[t * cols + c] * weights[r * cols + c])
                            .sum::<f32>();
                    let got = out[t * rows + r];
                    assert!(
                        (got - expected).abs() < 1e-4,
                        "{tokens} tokens, [{t}, {r}]: {got} vs {expected}"
                    );
                }
            }
        }
        let mut out = vec![0.0; 3];
        assert!(dense(&[0.0; 10], &matrix, &bias, &mut out).is_err());
        assert!(DenseWeights::from_f16(&halves[1..], rows, cols).is_err());
        // The same matrix from f32, and each row read back as it was.
        let from_f32 = DenseWeights::from_f32(&weights, rows, cols).unwrap();
        assert_eq!((from_f32.rows(), from_f32.cols()), (rows, cols));
        let mut row = vec![f32::NAN; cols];
        for r in [0, 15, 16, 36] {
            assert!(from_f32.row(r, &mut row));
            assert_eq!(row, weights[r * cols..(r + 1) * cols], "row {r}");
        }
        assert!(!from_f32.row(rows, &mut row));
        assert!(!from_f32.row(0, &mut row[1..]));
        // As a layer: the same products, and a bias of the wrong length refused.
        let layer = DenseLayer::new(from_f32, bias.clone()).unwrap();
        assert_eq!((layer.outputs(), layer.inputs()), (rows, cols));
        let x = vec![0.5; 2 * cols];
        let (mut by_layer, mut by_dense) = (vec![0.0; 2 * rows], vec![0.0; 2 * rows]);
        layer.forward(&x, &mut by_layer).unwrap();
        dense(&x, &matrix, &bias, &mut by_dense).unwrap();
        assert_eq!(by_layer, by_dense);
        assert!(DenseLayer::new(matrix, bias[1..].to_vec()).is_err());
    }

    #[test]
    fn gelu_follows_the_error_function() {
        // GELU values from the definition, computed in f64.
        let cases = [
            (-6.0f32, -5.919_525_869e-9_f64),
            (-1.5, -0.100_210_801_9),
            (-0.5, -0.154_268_769_4),
            (0.0, 0.0),
            (0.3, 0.185_373_426_7),
            (1.0, 0.841_344_746_1),
            (2.5, 2.484_475_836_7),
            (9.0, 9.0),
        ];
        let mut x: Vec<f32> = cases.iter().map(|(x, _)| *x).collect();
        gelu(&mut x);
        for ((input, expected), got) in cases.iter().zip(&x) {
            assert!(
                (f64::from(*got) - expected).abs() < 2e-6,
                "gelu({input}) = {got}, not {expected}"
            );
        }
    }

    #[test]
    fn exp_is_close_over_the_range_erf_uses() {
        for i in 0..=1_740 {
            let x = -(i as f32) * 0.05;
            let (ours, std) = (exp(x), x.exp());
            assert!(
                (ours - std).abs() <= 3e-7 * std.max(f32::MIN_POSITIVE),
                "exp({x}): {ours} vs {std}"
            );
        }
    }

    #[test]
    fn layer_norm_gives_unit_rows() {
        let mut x = vec![1.0, 2.0, 3.0, 4.0, -2.0, 0.0, 2.0, 4.0];
        layer_norm(&mut x, &[1.0; 4], &[0.5; 4], 0.0);
        for row in x.chunks(4) {
            let mean: f32 = row.iter().map(|v| v - 0.5).sum::<f32>() / 4.0;
            let var: f32 = row.iter().map(|v| (v - 0.5 - mean).powi(2)).sum::<f32>() / 4.0;
            assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-5, "{row:?}");
        }
    }

    #[test]
    fn attention_of_one_token_is_its_value_and_weights_follow_scores() {
        // One head of two dimensions. Token 0's query matches token 1's key strongly.
        let qkv = [
            // q, k, v of token 0
            10.0, 0.0, 0.0, 0.0, 1.0, 2.0, //
            // token 1
            0.0, 0.0, 10.0, 0.0, 3.0, 4.0,
        ];
        let mut out = [0.0; 4];
        attend(&qkv, 1, 2, &mut out).unwrap();
        // Token 0: scores 0 and 100/√2, so nearly all weight on token 1's value.
        assert!(
            (out[0] - 3.0).abs() < 1e-4 && (out[1] - 4.0).abs() < 1e-4,
            "{out:?}"
        );
        // Token 1: both scores 0, so the mean of the values.
        assert!(
            (out[2] - 2.0).abs() < 1e-6 && (out[3] - 3.0).abs() < 1e-6,
            "{out:?}"
        );
        let mut single = [0.0; 2];
        attend(&qkv[..6], 1, 2, &mut single).unwrap();
        assert!((single[0] - 1.0).abs() < 1e-6 && (single[1] - 2.0).abs() < 1e-6);
        assert!(attend(&qkv[..5], 1, 2, &mut single).is_err());
    }
}
