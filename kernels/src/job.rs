//! What the formats' products share: one call's work ([`Job`]) and its dispatch to the
//! instruction set the activations were laid out for. Each format ([`Format`]) says only how
//! its AVX2 and portable kernels run a job.

use std::ops::Range;

use pulp::{Arch, Simd, WithSimd};

use crate::ShapeError;
use crate::q4_1::{Activations, Path};

/// Some rows of a matrix times every token of the activations: `out[r × tokens + t]` is row
/// `rows.start + r` times token `t`.
pub(crate) struct Job<'a, M> {
    pub(crate) matrix: &'a M,
    pub(crate) input: &'a Activations,
    pub(crate) rows: Range<usize>,
    pub(crate) out: &'a mut [f32],
}

/// A weight format's kernels.
pub(crate) trait Format: Sized {
    /// Runs `job` with AVX2 integer products.
    #[cfg(target_arch = "x86_64")]
    fn avx2(job: Job<'_, Self>, simd: pulp::x86::V3);

    /// Runs `job` with f32 products on the SIMD level `pulp` picked; called inside its
    /// dispatch, so implementations must be inlined.
    fn portable<S: Simd>(job: Job<'_, Self>, simd: S);
}

/// Checks nothing: runs `job` on the path its activations were laid out for, or fails where
/// they were laid out for AVX2 and this CPU lacks it.
pub(crate) fn run<M: Format>(job: Job<'_, M>) -> Result<(), ShapeError> {
    match job.input.path() {
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => {
            let Some(simd) = pulp::x86::V3::try_new() else {
                return Err(ShapeError(
                    "an input laid out for AVX2, which this CPU does not have".to_owned(),
                ));
            };
            M::avx2(job, simd);
        }
        Path::Portable => Arch::new().dispatch(Portable(job)),
    }
    Ok(())
}

/// The portable path's dispatch: its kernel needs the SIMD level `pulp` picks.
struct Portable<'a, M>(Job<'a, M>);

impl<M: Format> WithSimd for Portable<'_, M> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        M::portable(self.0, simd);
    }
}

/// A job with the kernel of one instruction set; each format's row loop is its `WithSimd`.
pub(crate) struct Products<'a, K, M> {
    pub(crate) kernel: K,
    pub(crate) job: Job<'a, M>,
}
