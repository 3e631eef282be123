//! The model's input: our mel filter bank adapted to candle's spectrum, Whisper's frame
//! centring, one window's mel frames, and the energy check for silent windows.

use candle_transformers::models::whisper as whisper_consts;

use super::SAMPLE_RATE;
use crate::speech::mel;

/// Our filter bank adjusted to candle's spectrum: `pcm_to_mel` (after whisper.cpp) adds each
/// bin's mirror image, doubling the power of bins 1 … `n_fft/2 − 1`, where Whisper's one-sided
/// STFT does not. Halving those filter weights gives Whisper's mel values exactly (otherwise
/// every log-mel value is 0.3 too high, an offset the model never saw in training).
pub(super) fn candle_filters(n_mels: usize) -> Vec<f32> {
    let bins = whisper_consts::N_FFT / 2 + 1;
    let mut filters = mel::filters(n_mels, whisper_consts::N_FFT, f64::from(SAMPLE_RATE));
    for row in filters.chunks_mut(bins) {
        for weight in row.iter_mut().take(bins - 1).skip(1) {
            *weight *= 0.5;
        }
    }
    filters
}

/// `samples` with `n_fft/2` samples reflected in front: Whisper's STFT centres frame `t` on
/// sample `160 t` (`center=True`), candle's starts it there, so this puts candle's frames where
/// Whisper's are. (The end needs no reflection: candle pads it with zeros and the window's
/// remainder is padding anyway.)
pub(super) fn centred(samples: &[f32]) -> Vec<f32> {
    let pad = whisper_consts::N_FFT / 2;
    let mut out = Vec::with_capacity(samples.len() + pad);
    out.extend(samples.iter().skip(1).take(pad).rev());
    out.extend_from_slice(samples);
    out
}

/// The 80 × 3000 mel frames of the window starting at `start`, padded with the spectrogram's
/// floor where the audio (and candle's own padding) ends.
pub(super) fn window_mel(
    mel: &[f32],
    n_mels: usize,
    frames: usize,
    start: usize,
    width: usize,
) -> Vec<f32> {
    let floor = mel.iter().copied().fold(f32::INFINITY, f32::min);
    let floor = if floor.is_finite() { floor } else { 0.0 };
    let mut out = Vec::with_capacity(n_mels * width);
    for row in 0..n_mels {
        let begin = row * frames + start;
        let end = row * frames + frames.min(start + width);
        let have = mel.get(begin..end.max(begin)).unwrap_or_default();
        out.extend_from_slice(have);
        out.resize((row + 1) * width, floor);
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
        let mel = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 0.5];
        let window = window_mel(&mel, 2, 4, 2, WINDOW_FRAMES);
        assert_eq!(window.len(), 2 * WINDOW_FRAMES);
        assert_eq!(&window[..3], &[3.0, 4.0, 0.5]);
        assert_eq!(&window[WINDOW_FRAMES..WINDOW_FRAMES + 3], &[7.0, 0.5, 0.5]);
        assert_eq!(rms(&[0.0; 10]), 0.0);
        assert!((rms(&[0.5, -0.5]) - 0.5).abs() < 1e-6);
    }
}
