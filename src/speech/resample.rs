//! Sample-rate conversion to Whisper's 16 kHz: a windowed-sinc low-pass evaluated at exact
//! rational positions (polyphase).
//!
//! With `g = gcd(in, out)`, output sample `n` sits at input position `n · (in/g) / (out/g)`, so
//! only `out/g` distinct fractional offsets exist (at most 16 000); one filter per offset is
//! computed once, and each output sample is a dot product. The filter is a sinc cut off at
//! 0.9 × the lower Nyquist frequency, Kaiser-windowed (β = 8.6, about 90 dB stop-band), with
//! 16 zero crossings each side; each phase is normalised to unit gain at DC. The filter is
//! linear-phase, so speech is not smeared in time. Linear interpolation would alias 8–24 kHz
//! content of 48 kHz recordings into the band Whisper listens to.

/// Zero crossings of the sinc on each side of the centre.
const ZERO_CROSSINGS: f64 = 16.0;
/// Cut-off as a fraction of the lower of the two Nyquist frequencies (leaves room for the
/// transition band).
const ROLLOFF: f64 = 0.9;
/// Kaiser window shape: about 90 dB of stop-band attenuation.
const KAISER_BETA: f64 = 8.6;

/// `samples` at `from` Hz, resampled to `to` Hz.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // tap counts are small and
// positive; samples are f32, accumulated in f64 for accuracy
pub fn resample(samples: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || samples.is_empty() || from == 0 || to == 0 {
        return samples.to_vec();
    }
    let g = gcd(from, to);
    let (step, phases) = (u64::from(from / g), u64::from(to / g));
    // Cut-off in cycles per input sample.
    let cutoff = 0.5 * ROLLOFF * (f64::from(to) / f64::from(from)).min(1.0);
    let half = (ZERO_CROSSINGS / (2.0 * cutoff)).ceil() as usize;
    let taps = 2 * half;
    let table = filters(phases, half, cutoff);
    let out_len = (samples.len() as u64 * phases).div_ceil(step);
    let mut out = Vec::with_capacity(usize::try_from(out_len).unwrap_or(0));
    for n in 0..out_len {
        let position = n * step;
        let base = usize::try_from(position / phases).unwrap_or(usize::MAX);
        let phase = usize::try_from(position % phases).unwrap_or(0);
        let Some(kernel) = table.get(phase * taps..(phase + 1) * taps) else {
            break;
        };
        // Tap k multiplies input sample base + 1 - half + k.
        let first = (base + 1).checked_sub(half);
        let value: f64 = match first.and_then(|f| samples.get(f..f + taps)) {
            Some(window) => window
                .iter()
                .zip(kernel)
                .map(|(x, h)| f64::from(*x) * h)
                .sum(),
            None => kernel
                .iter()
                .enumerate()
                .filter_map(|(k, h)| {
                    let index = (base + 1 + k).checked_sub(half)?;
                    samples.get(index).map(|x| f64::from(*x) * h)
                })
                .sum(),
        };
        out.push(value as f32);
    }
    out
}

/// `phases` filters of `2 · half` taps, flattened; filter `p` is the low-pass centred at
/// fractional input offset `p / phases`.
fn filters(phases: u64, half: usize, cutoff: f64) -> Vec<f64> {
    let taps = 2 * half;
    let mut table = Vec::with_capacity(usize::try_from(phases).unwrap_or(0) * taps);
    let reach = half as f64;
    for p in 0..phases {
        let frac = p as f64 / phases as f64;
        let start = table.len();
        for k in 0..taps {
            // Distance from the output position to input sample (base + 1 - half + k).
            let x = (k as f64 + 1.0 - reach) - frac;
            let window = kaiser(x / reach);
            table.push(2.0 * cutoff * sinc(2.0 * cutoff * x) * window);
        }
        if let Some(filter) = table.get_mut(start..) {
            let sum: f64 = filter.iter().sum();
            if sum.abs() > f64::EPSILON {
                for h in filter.iter_mut() {
                    *h /= sum;
                }
            }
        }
    }
    table
}

fn sinc(x: f64) -> f64 {
    if x.abs() < 1e-12 {
        1.0
    } else {
        let px = std::f64::consts::PI * x;
        px.sin() / px
    }
}

/// Kaiser window at `t` in −1…1 (0 outside).
fn kaiser(t: f64) -> f64 {
    if t.abs() > 1.0 {
        return 0.0;
    }
    bessel_i0(KAISER_BETA * (1.0 - t * t).sqrt()) / bessel_i0(KAISER_BETA)
}

/// Modified Bessel function of the first kind, order 0, by its power series.
fn bessel_i0(x: f64) -> f64 {
    let quarter = x * x / 4.0;
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..50 {
        term *= quarter / f64::from(k * k);
        sum += term;
        if term < sum * 1e-16 {
            break;
        }
    }
    sum
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    #![allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

    use super::*;

    fn sine(freq: f64, rate: u32, seconds: f64, amplitude: f64) -> Vec<f32> {
        let n = (f64::from(rate) * seconds) as usize;
        (0..n)
            .map(|i| {
                (amplitude * (2.0 * std::f64::consts::PI * freq * i as f64 / f64::from(rate)).sin())
                    as f32
            })
            .collect()
    }

    /// Frequency from upward zero crossings over the middle of the signal.
    fn frequency(samples: &[f32], rate: u32) -> f64 {
        let middle = &samples[samples.len() / 10..samples.len() * 9 / 10];
        let crossings: Vec<usize> = middle
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0] < 0.0 && w[1] >= 0.0)
            .map(|(i, _)| i)
            .collect();
        let span = (crossings.last().unwrap() - crossings[0]) as f64;
        (crossings.len() - 1) as f64 * f64::from(rate) / span
    }

    fn rms(samples: &[f32]) -> f64 {
        let middle = &samples[samples.len() / 10..samples.len() * 9 / 10];
        (middle.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>() / middle.len() as f64).sqrt()
    }

    #[test]
    fn a_sine_keeps_its_frequency_and_level() {
        for (rate, freq) in [
            (44_100, 440.0),
            (48_000, 1000.0),
            (22_050, 3000.0),
            (8000, 300.0),
        ] {
            let input = sine(freq, rate, 1.0, 0.5);
            let out = resample(&input, rate, 16_000);
            assert_eq!(out.len(), 16_000, "{rate}");
            let got = frequency(&out, 16_000);
            assert!(
                (got - freq).abs() < freq * 0.002,
                "{rate} Hz: {got} vs {freq}"
            );
            let level = rms(&out);
            assert!(
                (level - 0.5 / 2f64.sqrt()).abs() < 0.01,
                "{rate} Hz: rms {level}"
            );
        }
    }

    #[test]
    fn content_above_the_new_nyquist_is_removed() {
        let input = sine(11_000.0, 48_000, 1.0, 0.5);
        let out = resample(&input, 48_000, 16_000);
        assert!(rms(&out) < 0.005, "aliased rms {}", rms(&out));
    }

    #[test]
    fn same_rate_and_odd_rates() {
        let input = sine(200.0, 16_000, 0.1, 0.3);
        assert_eq!(resample(&input, 16_000, 16_000), input);
        let odd = resample(&sine(500.0, 11_025, 1.0, 0.5), 11_025, 16_000);
        assert_eq!(odd.len(), 16_000);
        assert!((frequency(&odd, 16_000) - 500.0).abs() < 1.0);
        assert_eq!(gcd(44_100, 16_000), 100);
        assert!((bessel_i0(1.0) - 1.266_065_877_752_008).abs() < 1e-12);
    }
}
