//! The local models' hot loops: the weight products of a `Q4_1` model (and of its `Q8_0`
//! token embedding), the widening of the f16 bit patterns of their steps, the 8-bit format of
//! the KV cache and the attention of a new token over it ([`Attention`]), and the sentence
//! embedder's layers ([`dense`], [`layer_norm`], [`gelu`], [`attend`]).
//!
//! They live in a crate of their own for one reason: the project's dev and test profiles
//! optimise dependencies but not the project itself, so that its own code builds quickly.
//! Written inside the main crate, these loops ran unoptimised in every test that runs the local
//! model; as a dependency (with its own profile override in the workspace manifest) they are
//! optimised in every build.
//!
//! Everything here is safe code: SIMD comes from `pulp`, which picks the instruction set at run
//! time (AVX-512, AVX2, NEON or plain scalar code) and applies it only to code inlined into its
//! dispatch, which is why the helpers are `#[inline(always)]`.

#![allow(clippy::inline_always)]

mod attention;
mod encoder;
mod job;
mod kv;
mod q4_1;
mod q8_0;

pub use attention::{Attention, CHUNK, CachedLayer, HeadLayout, Partial};
pub use encoder::{DenseLayer, DenseWeights, attend, dense, f16_bits, gelu, layer_norm};
pub use kv::{
    KV_BLOCK, KvRows, dequantize_rows, dequantize_rows_inline, kv_steps_per_row, quantize_rows,
};
pub use q4_1::{Activations, BLOCK, Q41Matrix, ShapeError, TOKENS_PER_PASS};
pub use q8_0::Q80Matrix;

/// The f32 values of f16 bit patterns, written so the compiler vectorises it under the SIMD
/// level `pulp` chose: exponent and mantissa moved into place and rescaled by 2¹¹² (which also
/// makes subnormals exact), then the sign put back. An f16 infinity or NaN, which the weights'
/// scales never hold, widens to a finite number at or above 65,536 instead.
#[inline(always)]
pub fn widen_f16(halves: &[u16], out: &mut [f32]) {
    let rescale = f32::from_bits(0x7780_0000);
    for (half, wide) in halves.iter().zip(out.iter_mut()) {
        let bits = u32::from(*half);
        let magnitude = f32::from_bits((bits & 0x7fff) << 13) * rescale;
        *wide = f32::from_bits(magnitude.to_bits() | ((bits & 0x8000) << 16));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_agrees_with_half_on_every_f16() {
        let all: Vec<u16> = (0..=u16::MAX).collect();
        let mut widened = vec![0.0; all.len()];
        pulp::Arch::new().dispatch(|| widen_f16(&all, &mut widened));
        for (bits, wide) in all.iter().zip(&widened) {
            let expected = half::f16::from_bits(*bits);
            if expected.is_finite() {
                assert_eq!(wide.to_bits(), expected.to_f32().to_bits(), "{bits:#06x}");
            } else {
                assert!(wide.is_finite() && wide.abs() >= 65_536.0, "{bits:#06x}");
            }
        }
    }
}
