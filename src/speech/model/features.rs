//! The model's input: Whisper's log-mel spectrogram of the audio, one window's frames of it,
//! and the energy check for silent windows.
//!
//! The spectrogram is Whisper's (a 400-point periodic Hann window every 160 samples, frames
//! centred on their sample by reflecting the start, the power of bins 0 … 200 through our mel
//! filter bank, `log10` floored at 10⁻¹⁰, clamped 8 below the maximum, then `(v + 4) / 4`),
//! computed only over the frames that hold audio and with the transform as two matrix
//! products. candle's `pcm_to_mel` pads every call to at least 30 seconds and transforms each
//! frame on its own: about 150 ms however short the audio, which the live path paid at every
//! update. Frames past the audio hold silence, which is the spectrogram's floor.

use candle_core::{Device, Result, Tensor};
use candle_transformers::models::whisper as whisper_consts;

use super::SAMPLE_RATE;
use crate::speech::mel;

const N_FFT: usize = whisper_consts::N_FFT;
const HOP: usize = whisper_consts::HOP_LENGTH;
/// Frequency bins of a frame's one-sided spectrum.
const BINS: usize = N_FFT / 2 + 1;

/// What turns audio into log-mel frames: the Hann-windowed transform as a matrix and the mel
/// filter bank, built once per model.
pub(super) struct Spectrogram {
    /// `N_FFT × 2·BINS`: each bin's cosine, then each bin's sine, times the window.
    transform: Tensor,
    /// `BINS × n_mels`: the filter bank, transposed.
    filters: Tensor,
}

/// A log-mel spectrogram: `n_mels` rows of `frames` values, and the value of silence.
pub(super) struct LogMel {
    pub(super) values: Vec<f32>,
    pub(super) frames: usize,
    pub(super) floor: f32,
}

impl Spectrogram {
    #[allow(clippy::cast_possible_truncation)] // f64 only for the accuracy of the tables
    pub(super) fn new(n_mels: usize, device: &Device) -> Result<Self> {
        let mut transform = vec![0.0_f32; N_FFT * 2 * BINS];
        for (t, row) in transform.chunks_exact_mut(2 * BINS).enumerate() {
            let phase = 2.0 * std::f64::consts::PI * t as f64 / N_FFT as f64;
            let window = 0.5 * (1.0 - phase.cos());
            for k in 0..BINS {
                let angle = phase * k as f64;
                if let Some(slot) = row.get_mut(k) {
                    *slot = (window * angle.cos()) as f32;
                }
                if let Some(slot) = row.get_mut(BINS + k) {
                    *slot = (window * angle.sin()) as f32;
                }
            }
        }
        let filters = mel::filters(n_mels, N_FFT, f64::from(SAMPLE_RATE));
        Ok(Self {
            transform: Tensor::from_vec(transform, (N_FFT, 2 * BINS), device)?,
            filters: Tensor::from_vec(filters, (n_mels, BINS), device)?
                .t()?
                .contiguous()?,
        })
    }

    /// The spectrogram of `samples`: every frame that holds some of the audio, one per
    /// [`HOP`] samples.
    pub(super) fn log_mel(&self, samples: &[f32]) -> Result<LogMel> {
        let audio = centred(samples);
        let frames = audio.len().div_ceil(HOP).max(1);
        let mut windows = vec![0.0_f32; frames * N_FFT];
        for (i, frame) in windows.chunks_exact_mut(N_FFT).enumerate() {
            let from = (i * HOP).min(audio.len());
            let have = audio.get(from..).unwrap_or_default();
            let n = have.len().min(N_FFT);
            if let (Some(to), Some(from)) = (frame.get_mut(..n), have.get(..n)) {
                to.copy_from_slice(from);
            }
        }
        let device = self.transform.device();
        let spectrum =
            Tensor::from_vec(windows, (frames, N_FFT), device)?.matmul(&self.transform)?;
        let power =
            (spectrum.narrow(1, 0, BINS)?.sqr()? + spectrum.narrow(1, BINS, BINS)?.sqr()?)?;
        let mel = power.matmul(&self.filters)?.t()?.contiguous()?;
        let mut values = mel.flatten_all()?.to_vec1::<f32>()?;
        for v in &mut values {
            *v = v.max(1e-10).log10();
        }
        // Frames of silence past the audio are 10⁻¹⁰ before the clamp.
        let max = values.iter().copied().fold(-10.0_f32, f32::max);
        let low = max - 8.0;
        for v in &mut values {
            *v = (v.max(low) + 4.0) / 4.0;
        }
        Ok(LogMel {
            values,
            frames,
            floor: ((-10.0_f32).max(low) + 4.0) / 4.0,
        })
    }
}

/// `samples` with `n_fft/2` samples reflected in front: Whisper's STFT centres frame `t` on
/// sample `160 t` (`center=True`); the frames above start there. (The end needs no reflection:
/// it is padded with zeros, and the window's remainder is padding anyway.)
fn centred(samples: &[f32]) -> Vec<f32> {
    let pad = N_FFT / 2;
    let mut out = Vec::with_capacity(samples.len() + pad);
    out.extend(samples.iter().skip(1).take(pad).rev());
    out.extend_from_slice(samples);
    out
}

/// The `width` mel frames of the window starting at frame `start`, padded with the
/// spectrogram's floor where the audio ends.
pub(super) fn window_mel(mel: &LogMel, n_mels: usize, start: usize, width: usize) -> Vec<f32> {
    let frames = mel.frames;
    let mut out = Vec::with_capacity(n_mels * width);
    for row in 0..n_mels {
        let begin = row * frames + start;
        let end = row * frames + frames.min(start + width);
        let have = mel.values.get(begin..end.max(begin)).unwrap_or_default();
        out.extend_from_slice(have);
        out.resize((row + 1) * width, mel.floor);
    }
    out
}

#[allow(clippy::cast_possible_truncation)] // an RMS of f32 samples fits an f32
pub(crate) fn rms(samples: &[f32]) -> f32 {
    if samples.is_empty() {
        return 0.0;
    }
    let energy: f64 = samples.iter().map(|s| f64::from(*s).powi(2)).sum();
    (energy / samples.len() as f64).sqrt() as f32
}

#[cfg(test)]
mod tests {
    use super::super::WINDOW_FRAMES;
    use super::*;

    #[test]
    fn the_window_is_padded_with_the_floor() {
        // 2 mels × 4 frames; a window needs 3000 frames per mel.
        let mel = LogMel {
            values: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 0.5],
            frames: 4,
            floor: 0.25,
        };
        let window = window_mel(&mel, 2, 2, WINDOW_FRAMES);
        assert_eq!(window.len(), 2 * WINDOW_FRAMES);
        assert_eq!(&window[..3], &[3.0, 4.0, 0.25]);
        assert_eq!(&window[WINDOW_FRAMES..WINDOW_FRAMES + 3], &[7.0, 0.5, 0.25]);
        assert_eq!(rms(&[0.0; 10]), 0.0);
        assert!((rms(&[0.5, -0.5]) - 0.5).abs() < 1e-6);
    }

    /// candle's `pcm_to_mel` (after whisper.cpp) adds each bin's mirror image, doubling the
    /// power of bins 1 … 199 where Whisper's one-sided STFT does not; halving those filter
    /// weights makes it compute Whisper's values.
    fn candle_filters(n_mels: usize) -> Vec<f32> {
        let mut filters = mel::filters(n_mels, N_FFT, f64::from(SAMPLE_RATE));
        for row in filters.chunks_mut(BINS) {
            for weight in row.iter_mut().take(BINS - 1).skip(1) {
                *weight *= 0.5;
            }
        }
        filters
    }

    #[test]
    fn the_spectrogram_is_candles_over_the_audio_and_its_floor_after() {
        // 1.3 s of a rising tone over a quieter one, with a silent stretch in the middle.
        let samples: Vec<f32> = (0..20_800)
            .map(|i| {
                let t = i as f32 / 16_000.0;
                if (8_000..9_600).contains(&i) {
                    0.0
                } else {
                    0.3 * (2.0 * std::f32::consts::PI * (300.0 + 900.0 * t) * t).sin()
                        + 0.02 * (2.0 * std::f32::consts::PI * 3_100.0 * t).sin()
                }
            })
            .collect();
        let config = candle_transformers::models::whisper::Config {
            num_mel_bins: 80,
            max_source_positions: 1500,
            d_model: 384,
            encoder_attention_heads: 6,
            encoder_layers: 4,
            vocab_size: 51_864,
            max_target_positions: 448,
            decoder_attention_heads: 6,
            decoder_layers: 4,
            suppress_tokens: Vec::new(),
        };
        let theirs =
            whisper_consts::audio::pcm_to_mel(&config, &centred(&samples), &candle_filters(80));
        let their_frames = theirs.len() / 80;
        let ours = Spectrogram::new(80, &Device::Cpu)
            .unwrap()
            .log_mel(&samples)
            .unwrap();
        assert_eq!(ours.frames, 132);
        let mut worst = 0.0_f32;
        for mel in 0..80 {
            for frame in 0..their_frames.min(ours.frames + 200) {
                let expected = theirs[mel * their_frames + frame];
                let got = ours
                    .values
                    .get(mel * ours.frames + frame)
                    .copied()
                    .filter(|_| frame < ours.frames)
                    .unwrap_or(ours.floor);
                worst = worst.max((got - expected).abs());
            }
        }
        assert!(worst < 1e-3, "largest difference {worst}");
    }
}
