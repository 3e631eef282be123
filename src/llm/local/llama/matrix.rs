//! A weight matrix of the llama model: `Q4_1` and `Q8_0` multiplied by our own kernels, any
//! other format by candle.
//!
//! candle 0.11 has no SIMD kernel for `Q4_1`, the format of the shipped SmolLM2-135M; the
//! loader used to requantize it to `Q8_0`, which made every generated token read 143 MB of
//! weights instead of 84 MB. `interviewer_kernels` multiplies the file's blocks as they are
//! ([`Q41Matrix`]), and the `Q8_0` token embedding too ([`Q80Matrix`]: candle's kernel for it
//! does not read ahead, ours does); this module shapes candle tensors for them and shares the
//! rows among the
//! threads of candle's barrier pool, the threads that run every other product and spin between
//! them. The same matrix serves as the token embedding (rows dequantized on demand) when the
//! file ties the two, so no weight is held twice.

use std::sync::{Arc, OnceLock};

use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{Device, Module, Result, Tensor};
use interviewer_kernels::{Activations, Q41Matrix, Q80Matrix, ShapeError};

/// Rows per unit of work handed to a thread: large enough that a product of a 576-wide layer is
/// a handful of units (each a small allocation and a turn at the pool's shared cursor).
const ROWS_PER_UNIT: usize = 64;

/// Weight-times-token products from which the rows are shared among threads; below it the
/// hand-off costs more than it saves.
const PARALLEL_FROM: usize = 1 << 16;

/// One weight matrix, `(rows, cols)`: products take `(…, cols)` and give `(…, rows)`.
#[derive(Clone)]
pub(super) enum Matrix {
    /// A format candle multiplies well (or at all).
    Candle(QMatMul),
    /// `Q4_1`, multiplied by our kernel.
    Q41(Arc<Q41Matrix>),
    /// `Q8_0`, multiplied by our kernel.
    Q80(Arc<Q80Matrix>),
}

/// What [`product`] and [`Matrix::embedding`] need of one of our matrices.
trait Rows: Sync {
    fn rows(&self) -> usize;
    fn cols(&self) -> usize;
    fn multiply(
        &self,
        input: &Activations,
        rows: std::ops::Range<usize>,
        out: &mut [f32],
    ) -> std::result::Result<(), ShapeError>;
    fn dequantize_row(&self, row: usize, out: &mut [f32]) -> bool;
}

/// Implements [`Rows`] for a kernel matrix type by delegating to its methods of those names.
macro_rules! rows_by_kernel {
    ($matrix:ty) => {
        impl Rows for $matrix {
            fn rows(&self) -> usize {
                <$matrix>::rows(self)
            }
            fn cols(&self) -> usize {
                <$matrix>::cols(self)
            }
            fn multiply(
                &self,
                input: &Activations,
                rows: std::ops::Range<usize>,
                out: &mut [f32],
            ) -> std::result::Result<(), ShapeError> {
                <$matrix>::multiply(self, input, rows, out)
            }
            fn dequantize_row(&self, row: usize, out: &mut [f32]) -> bool {
                <$matrix>::dequantize_row(self, row, out)
            }
        }
    };
}

rows_by_kernel!(Q41Matrix);
rows_by_kernel!(Q80Matrix);

impl Matrix {
    /// The matrix for a tensor: `Q4_1` and `Q8_0` with whole blocks per row go to our
    /// kernels.
    pub(super) fn new(tensor: QTensor) -> Result<Self> {
        let dims = tensor.shape().dims().to_vec();
        let kernel = |e: ShapeError| candle_core::Error::Msg(e.to_string());
        match (tensor.dtype(), dims.as_slice()) {
            (GgmlDType::Q4_1, &[rows, cols]) if cols % interviewer_kernels::BLOCK == 0 => {
                let matrix = Q41Matrix::from_ggml(&tensor.data()?, rows, cols).map_err(kernel)?;
                Ok(Self::Q41(Arc::new(matrix)))
            }
            (GgmlDType::Q8_0, &[rows, cols]) if cols % interviewer_kernels::BLOCK == 0 => {
                let matrix = Q80Matrix::from_ggml(&tensor.data()?, rows, cols).map_err(kernel)?;
                Ok(Self::Q80(Arc::new(matrix)))
            }
            _ => QMatMul::from_qtensor(tensor).map(Self::Candle),
        }
    }

    /// Whether our `Q4_1` kernel multiplies this matrix.
    pub(super) fn is_q4_1(&self) -> bool {
        matches!(self, Self::Q41(_))
    }

    /// Whether our `Q8_0` kernel multiplies this matrix.
    pub(super) fn is_q8_0(&self) -> bool {
        matches!(self, Self::Q80(_))
    }

    /// Whether the two are the same matrix of ours (a tied embedding and output).
    pub(super) fn is_shared_with(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Q41(a), Self::Q41(b)) => Arc::ptr_eq(a, b),
            (Self::Q80(a), Self::Q80(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// `x × Wᵀ`.
    pub(super) fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Self::Candle(product) => product.forward(x),
            Self::Q41(matrix) => product(matrix.as_ref(), x),
            Self::Q80(matrix) => product(matrix.as_ref(), x),
        }
    }

    /// Rows `ids` (the token embedding), dequantized: `(…ids, cols)`.
    pub(super) fn embedding(&self, ids: &Tensor) -> Result<Tensor> {
        match self {
            Self::Candle(product) => product.embedding(ids),
            Self::Q41(matrix) => embedding(matrix.as_ref(), ids),
            Self::Q80(matrix) => embedding(matrix.as_ref(), ids),
        }
    }

    /// Rows of the matrix.
    #[cfg(test)]
    pub(super) fn rows(&self) -> Result<usize> {
        match self {
            Self::Candle(QMatMul::QTensor(tensor)) => Ok(tensor.shape().dims2()?.0),
            Self::Candle(QMatMul::Tensor(tensor) | QMatMul::TensorF16(tensor)) => {
                Ok(tensor.dims2()?.0)
            }
            Self::Q41(matrix) => Ok(matrix.rows()),
            Self::Q80(matrix) => Ok(matrix.rows()),
        }
    }
}

/// Rows `ids` of `matrix`, dequantized: `(…ids, cols)`.
fn embedding(matrix: &dyn Rows, ids: &Tensor) -> Result<Tensor> {
    let cols = matrix.cols();
    let wanted = ids.flatten_all()?.to_vec1::<u32>()?;
    let mut out = vec![0.0f32; wanted.len() * cols];
    for (id, row) in wanted.iter().zip(out.chunks_exact_mut(cols)) {
        let index = usize::try_from(*id).unwrap_or(usize::MAX);
        if !matrix.dequantize_row(index, row) {
            candle_core::bail!(
                "token {id} is outside the embedding's {} rows",
                matrix.rows()
            );
        }
    }
    let mut shape = ids.dims().to_vec();
    shape.push(cols);
    Tensor::from_vec(out, shape, &Device::Cpu)
}

/// `x × Wᵀ` by our kernel, the bands of rows shared among candle's barrier pool when the
/// product is big enough to be worth it. (Handing a layer's query, key and value matrices,
/// which read the same input, over together measured no faster than one at a time.)
fn product(matrix: &dyn Rows, x: &Tensor) -> Result<Tensor> {
    let dims = x.dims().to_vec();
    let Some((&cols, leading)) = dims.split_last() else {
        candle_core::bail!("a product with a scalar");
    };
    let tokens: usize = leading.iter().product();
    let values = x.flatten_all()?.to_dtype(candle_core::DType::F32)?;
    let values = values.to_vec1::<f32>()?;
    let input = Activations::new(&values, tokens, cols)
        .map_err(|e| candle_core::Error::Msg(e.to_string()))?;
    let rows = matrix.rows();
    // Units of work: a band of rows.
    let units: Vec<std::ops::Range<usize>> = (0..rows.div_ceil(ROWS_PER_UNIT))
        .map(|unit| {
            let start = unit * ROWS_PER_UNIT;
            start..rows.min(start + ROWS_PER_UNIT)
        })
        .collect();
    let work = |unit: usize| -> std::result::Result<Vec<f32>, String> {
        let Some(range) = units.get(unit) else {
            return Err(format!("no unit {unit}"));
        };
        let mut out = vec![0.0; range.len() * tokens];
        matrix
            .multiply(&input, range.clone(), &mut out)
            .map_err(|e| e.to_string())?;
        Ok(out)
    };
    let parts: Vec<std::result::Result<Vec<f32>, String>> =
        if rows * matrix.cols() * tokens >= PARALLEL_FROM {
            let slots: Vec<OnceLock<_>> = units.iter().map(|_| OnceLock::new()).collect();
            candle_core::utils::barrier_pool().execute_chunked(units.len(), |range| {
                for unit in range {
                    if let Some(slot) = slots.get(unit) {
                        let _ = slot.set(work(unit));
                    }
                }
            });
            slots.into_iter().filter_map(OnceLock::into_inner).collect()
        } else {
            (0..units.len()).map(work).collect()
        };
    if parts.len() != units.len() {
        candle_core::bail!(
            "{} of {} parts of a product came back",
            parts.len(),
            units.len()
        );
    }
    // Each part is its rows × tokens; the result is tokens × rows.
    let mut out = Vec::with_capacity(rows * tokens);
    if tokens > 1 {
        out.resize(rows * tokens, 0.0);
    }
    for (range, part) in units.iter().zip(parts) {
        let part = part.map_err(candle_core::Error::Msg)?;
        if tokens == 1 {
            // One token: the parts are the rows in order.
            out.extend(part);
            continue;
        }
        for (offset, products) in part.chunks_exact(tokens.max(1)).enumerate() {
            let row = range.start + offset;
            for (token, value) in products.iter().enumerate() {
                if let Some(slot) = out.get_mut(token * rows + row) {
                    *slot = *value;
                }
            }
        }
    }
    let mut shape = leading.to_vec();
    shape.push(rows);
    Tensor::from_vec(out, shape, &Device::Cpu)
}
