//! The local language model's hot loops: the weight products of a `Q4_1` model (and of its
//! `Q8_0` token embedding) and the widening of f16 bit patterns they and the KV cache need.
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

mod q4_1;
mod q8_0;

pub use q4_1::{Activations, BLOCK, Q41Matrix, ShapeError, TOKENS_PER_PASS};
pub use q8_0::Q80Matrix;

/// The f32 values of f16 bit patterns, written so the compiler vectorises it under the SIMD
/// level `pulp` chose: exponent and mantissa moved into place and rescaled by 2¹¹² (which also
/// makes subnormals exact), then the sign put back. An f16 infinity or NaN, which neither the
/// weights' scales nor a KV cache of a model whose activations stay within f16's range hold,
/// widens to a finite number at or above 65,536 instead.
#[inline(always)]
pub fn widen_f16(halves: &[u16], out: &mut [f32]) {
    let rescale = f32::from_bits(0x7780_0000);
    for (half, wide) in halves.iter().zip(out.iter_mut()) {
        let bits = u32::from(*half);
        let magnitude = f32::from_bits((bits & 0x7fff) << 13) * rescale;
        *wide = f32::from_bits(magnitude.to_bits() | ((bits & 0x8000) << 16));
    }
}

/// [`widen_f16`] by AVX-512's conversion instruction, one per 16 values (the portable version
/// takes about eight), and exact for every f16, infinities and NaNs included.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn widen_f16_avx512(simd: pulp::x86::V4, halves: &[u16], out: &mut [f32]) {
    const LANES: usize = 16;
    let whole = halves.len().min(out.len()) / LANES * LANES;
    let (halves, rest) = halves.split_at(whole);
    let (wide, wide_rest) = out.split_at_mut(whole);
    for (half, wide) in halves.chunks_exact(LANES).zip(wide.chunks_exact_mut(LANES)) {
        if let (Ok(half), Ok(wide)) = (
            <&[u16; LANES]>::try_from(half),
            <&mut [f32; LANES]>::try_from(wide),
        ) {
            *wide = pulp::cast(simd.avx512f._mm512_cvtph_ps(pulp::cast(*half)));
        }
    }
    widen_f16(rest, wide_rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_widenings_agree_with_half_on_every_f16() {
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
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V4::try_new() {
            let mut widened = vec![0.0; all.len()];
            simd.vectorize(|| widen_f16_avx512(simd, &all, &mut widened));
            for (bits, wide) in all.iter().zip(&widened) {
                let expected = half::f16::from_bits(*bits).to_f32();
                assert!(
                    wide.to_bits() == expected.to_bits() || (wide.is_nan() && expected.is_nan()),
                    "{bits:#06x}: {wide} vs {expected}"
                );
            }
            // A length off the vector width: the last few go the portable way.
            let finite = &all[1..0x7c00];
            let mut widened = vec![0.0; finite.len()];
            simd.vectorize(|| widen_f16_avx512(simd, finite, &mut widened));
            for (bits, wide) in finite.iter().zip(&widened) {
                assert_eq!(
                    wide.to_bits(),
                    half::f16::from_bits(*bits).to_f32().to_bits()
                );
            }
        }
    }
}
