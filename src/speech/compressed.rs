//! Compressed audio files: MP3, Ogg Vorbis, FLAC and AAC (in M4A/MP4 or ADTS), decoded by
//! symphonia, and Opus in Ogg (voice notes, `.opus`), demuxed by symphonia and decoded by
//! `opus-decoder` (both pure Rust, nothing linked at build time); mixed down to mono `f32`,
//! like the WAV reader. Opus's pre-skip and end trim, which the demuxer marks on each packet,
//! are cut from the decoded audio.
//!
//! The container is found from the bytes (the file's extension is only a hint). A stream that
//! breaks off mid-packet is a truncated file, not a shorter answer; a packet that fails to
//! decode is skipped the way players do, but a file none of whose packets decode is refused.
//! Decoding stops with an error as soon as the audio passes [`MAX_SECONDS`].

use std::io::Cursor;

use symphonia::core::audio::{Channels, GenericAudioBufferRef};
use symphonia::core::codecs::audio::well_known::{CODEC_ID_ALAC, CODEC_ID_OPUS};
use symphonia::core::codecs::audio::{AudioCodecId, AudioDecoder, AudioDecoderOptions};
use symphonia::core::errors::Error;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, FormatReader, TrackType};
use symphonia::core::io::{MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;

use super::wav::{Audio, MAX_SECONDS, WavProblem};

/// What the reader decodes, for error messages.
pub const FORMATS: &str = "WAV, MP3, Ogg Vorbis, Ogg Opus, FLAC and AAC (M4A)";

/// Decodes a compressed audio file held in memory; `extension` (without the dot) helps the
/// probe when the bytes are ambiguous.
pub fn decode(bytes: Vec<u8>, extension: Option<&str>) -> Result<Audio, WavProblem> {
    let Opened {
        mut format,
        mut decoder,
        track_id,
        declared,
    } = open(bytes, extension)?;
    let mut mono = Mixdown::default();
    let (mut packets, mut failed) = (0_usize, 0_usize);
    let mut last_problem = String::new();
    loop {
        let packet = match format.next_packet() {
            Ok(Some(packet)) => packet,
            Ok(None) => break,
            Err(Error::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(WavProblem::Truncated(format!(
                    "the stream breaks off after {:.1} s",
                    mono.seconds()
                )));
            }
            Err(e) => {
                return Err(WavProblem::Unsupported(format!(
                    "cannot read the stream after {:.1} s: {e}",
                    mono.seconds()
                )));
            }
        };
        if packet.track_id != track_id {
            continue;
        }
        let decoded = match &mut decoder {
            TrackDecoder::Symphonia(decoder) => match decoder.decode(&packet) {
                Ok(buffer) => mono.push(&buffer).map(|()| true),
                Err(Error::DecodeError(problem)) => {
                    problem.clone_into(&mut last_problem);
                    Ok(false)
                }
                Err(e) => {
                    return Err(WavProblem::Unsupported(format!(
                        "cannot decode the audio after {:.1} s: {e}",
                        mono.seconds()
                    )));
                }
            },
            TrackDecoder::Opus(opus) => match opus.channels_and(&packet) {
                Ok((channels, frames)) => mono
                    .push_interleaved(frames, channels, OPUS_RATE)
                    .map(|()| true),
                Err(problem) => {
                    last_problem = problem;
                    Ok(false)
                }
            },
        };
        if decoded? {
            packets += 1;
        } else {
            failed += 1;
        }
    }
    if packets == 0 && failed > 0 {
        return Err(WavProblem::Unsupported(format!(
            "none of its {failed} audio packets decodes ({last_problem})"
        )));
    }
    // A stream cut at a frame boundary ends cleanly; the length its header states tells.
    if let Some(declared) = declared.filter(|&d| (mono.samples.len() as f64) < 0.95 * d as f64) {
        return Err(WavProblem::Truncated(format!(
            "the file states {:.1} s of audio, {:.1} s are there",
            seconds(usize::try_from(declared).unwrap_or(usize::MAX), mono.rate),
            mono.seconds()
        )));
    }
    let sample_rate = mono
        .rate
        .filter(|_| !mono.samples.is_empty())
        .ok_or(WavProblem::Empty)?;
    Ok(Audio {
        sample_rate,
        samples: mono.samples,
    })
}

/// The rate Opus is decoded at (its native one; the pre-skip is counted in it).
const OPUS_RATE: u32 = 48_000;

/// The decoder of the audio track: symphonia's, or ours for Opus.
enum TrackDecoder {
    Symphonia(Box<dyn AudioDecoder>),
    Opus(Box<OpusTrack>),
}

/// An Opus track: the decoder and a buffer for one packet's interleaved frames.
struct OpusTrack {
    decoder: opus_decoder::OpusDecoder,
    channels: usize,
    pcm: Vec<f32>,
}

impl OpusTrack {
    fn new(channels: usize) -> Result<Self, WavProblem> {
        let decoder = opus_decoder::OpusDecoder::new(OPUS_RATE, channels)
            .map_err(|e| WavProblem::Unsupported(format!("Opus with {channels} channels: {e}")))?;
        let size = opus_decoder::OpusDecoder::MAX_FRAME_SIZE_48K * channels;
        Ok(Self {
            decoder,
            channels,
            pcm: vec![0.0; size],
        })
    }

    /// The channel count and the packet's frames, interleaved, with the trim the demuxer
    /// marked cut off.
    fn channels_and(
        &mut self,
        packet: &symphonia::core::packet::Packet,
    ) -> Result<(usize, &[f32]), String> {
        let frames = self
            .decoder
            .decode_float(&packet.data, &mut self.pcm, false)
            .map_err(|e| e.to_string())?;
        let trim = |d: symphonia::core::units::Duration| {
            usize::try_from(d.get()).unwrap_or(usize::MAX).min(frames)
        };
        let start = trim(packet.trim_start);
        let end = frames.saturating_sub(trim(packet.trim_end)).max(start);
        Ok((
            self.channels,
            self.pcm
                .get(start * self.channels..end * self.channels)
                .unwrap_or_default(),
        ))
    }
}

/// A probed file: its reader, the audio track's decoder and what the track declares.
struct Opened {
    format: Box<dyn FormatReader>,
    decoder: TrackDecoder,
    track_id: u32,
    /// Frames the container says the track has.
    declared: Option<u64>,
}

fn open(bytes: Vec<u8>, extension: Option<&str>) -> Result<Opened, WavProblem> {
    let mut hint = Hint::new();
    if let Some(extension) = extension {
        hint.with_extension(extension);
    }
    let stream = MediaSourceStream::new(
        Box::new(Cursor::new(bytes)),
        MediaSourceStreamOptions::default(),
    );
    let format = symphonia::default::get_probe()
        .probe(
            &hint,
            stream,
            FormatOptions::default(),
            MetadataOptions::default(),
        )
        .map_err(|_| {
            WavProblem::Unsupported(format!("not an audio file this app reads ({FORMATS})"))
        })?;
    let track = format
        .default_track(TrackType::Audio)
        .ok_or_else(|| WavProblem::Unsupported("the file has no audio track".into()))?;
    let params = track
        .codec_params
        .as_ref()
        .and_then(|p| p.audio())
        .ok_or_else(|| WavProblem::Unsupported("the audio track has no codec parameters".into()))?;
    let decoder = if params.codec == CODEC_ID_OPUS {
        let channels = params.channels.as_ref().map_or(1, Channels::count);
        if !(1..=2).contains(&channels) {
            return Err(WavProblem::Unsupported(format!(
                "Opus with {channels} channels; this app reads mono and stereo Opus"
            )));
        }
        TrackDecoder::Opus(Box::new(OpusTrack::new(channels)?))
    } else {
        TrackDecoder::Symphonia(
            symphonia::default::get_codecs()
                .make_audio_decoder(params, &AudioDecoderOptions::default())
                .map_err(|_| {
                    WavProblem::Unsupported(format!(
                        "{} audio; this app reads {FORMATS}",
                        codec_name(params.codec)
                    ))
                })?,
        )
    };
    let (track_id, declared) = (track.id, track.num_frames);
    Ok(Opened {
        format,
        decoder,
        track_id,
        declared,
    })
}

/// Decoded buffers mixed down to mono, bounded by [`MAX_SECONDS`].
#[derive(Default)]
struct Mixdown {
    samples: Vec<f32>,
    rate: Option<u32>,
    interleaved: Vec<f32>,
}

impl Mixdown {
    fn push(&mut self, buffer: &GenericAudioBufferRef<'_>) -> Result<(), WavProblem> {
        let spec = buffer.spec();
        let channels = spec.channels().count().max(1);
        let rate = spec.rate();
        let mut interleaved = std::mem::take(&mut self.interleaved);
        buffer.copy_to_vec_interleaved(&mut interleaved);
        let pushed = self.push_interleaved(&interleaved, channels, rate);
        self.interleaved = interleaved;
        pushed
    }

    /// Interleaved frames of `channels` at `rate`, mixed down.
    fn push_interleaved(
        &mut self,
        interleaved: &[f32],
        channels: usize,
        rate: u32,
    ) -> Result<(), WavProblem> {
        let channels = channels.max(1);
        match self.rate {
            None => self.rate = Some(rate),
            Some(r) if r != rate => {
                return Err(WavProblem::Unsupported(format!(
                    "the sample rate changes from {r} Hz to {rate} Hz mid-stream"
                )));
            }
            Some(_) => {}
        }
        let scale = 1.0 / channels as f32;
        self.samples.extend(
            interleaved
                .chunks_exact(channels)
                .map(|frame| frame.iter().sum::<f32>() * scale),
        );
        let seconds = self.seconds();
        if seconds > MAX_SECONDS {
            return Err(WavProblem::TooLong {
                seconds,
                max: MAX_SECONDS,
            });
        }
        Ok(())
    }

    fn seconds(&self) -> f64 {
        seconds(self.samples.len(), self.rate)
    }
}

fn seconds(samples: usize, rate: Option<u32>) -> f64 {
    samples as f64 / f64::from(rate.unwrap_or(1).max(1))
}

/// A readable name for codecs people have but this app does not decode.
fn codec_name(codec: AudioCodecId) -> String {
    match codec {
        CODEC_ID_OPUS => "Opus".into(),
        CODEC_ID_ALAC => "Apple Lossless (ALAC)".into(),
        other => format!("codec {other}"),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::speech::{SAMPLE_RATE, read_audio_file, to_model_rate};

    /// The same four seconds of synthesized speech in each format (`tests/fixtures/audio`).
    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/audio")
            .join(name)
    }

    /// Energy per 20 ms at the model's rate.
    fn envelope(audio: &Audio) -> Vec<f32> {
        to_model_rate(audio)
            .chunks(SAMPLE_RATE as usize / 50)
            .map(|c| (c.iter().map(|x| x * x).sum::<f32>() / c.len() as f32).sqrt())
            .collect()
    }

    fn correlation(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let mean = |x: &[f32]| x.iter().sum::<f32>() / n as f32;
        let (ma, mb) = (mean(a), mean(b));
        let cov: f32 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let var = |x: &[f32], m: f32| x.iter().map(|v| (v - m) * (v - m)).sum::<f32>();
        cov / (var(a, ma) * var(b, mb)).sqrt()
    }

    #[test]
    fn mp3_vorbis_and_aac_decode_to_the_speech_the_flac_holds() {
        let reference = read_audio_file(&fixture("answer.flac")).unwrap();
        assert_eq!(reference.sample_rate, 16_000);
        assert!((reference.duration_seconds() - 4.06).abs() < 0.02);
        let expected = envelope(&reference);
        for (name, rate) in [
            ("answer.mp3", 44_100),
            ("answer.ogg", 22_050),
            ("answer.m4a", 24_000),
            ("answer.opus", 48_000),
        ] {
            let audio = read_audio_file(&fixture(name)).unwrap();
            assert_eq!(audio.sample_rate, rate, "{name}");
            // Encoders pad the start and the end by a frame or two.
            let seconds = audio.duration_seconds();
            assert!((seconds - 4.06).abs() < 0.1, "{name}: {seconds} s");
            // MP3, Vorbis and Opus (its pre-skip cut) come back sample-aligned. AAC in MP4 keeps the encoder's priming
            // (1024 samples here: the edit list that says so is not applied), 43 ms of
            // near-silence before the speech, which does not change what is heard.
            let got = envelope(&audio);
            let (shift, r) = (0..=5)
                .map(|shift| (shift, correlation(&expected, &got[shift..])))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            assert!(r > 0.95, "{name}: envelope correlation {r}");
            let expected_shift = if name.ends_with("m4a") { 2 } else { 0 };
            assert_eq!(shift, expected_shift, "{name}");
        }
    }

    #[test]
    fn damaged_opus_files_are_errors_or_audio_never_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let opus = std::fs::read(fixture("answer.opus")).unwrap();
        let mut state = 0x9e37_79b9_u32;
        for round in 0..40 {
            let mut damaged = opus.clone();
            for _ in 0..=(round % 8) {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                let at = 200 + state as usize % (damaged.len() - 200);
                damaged[at] = state.to_le_bytes()[1];
            }
            let path = dir.path().join(format!("damaged-{round}.opus"));
            std::fs::write(&path, &damaged).unwrap();
            // Either outcome is fine; returning at all is the point.
            let _ = read_audio_file(&path);
        }
        // Past the container's checksums: random packets straight into the decoder.
        let mut track = OpusTrack::new(2).unwrap();
        for round in 0..400_usize {
            let packet: Vec<u8> = (0..=(round % 300))
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    state.to_le_bytes()[1]
                })
                .collect();
            let packet = symphonia::core::packet::Packet::new(
                0,
                symphonia::core::units::Timestamp::new(0),
                symphonia::core::units::Duration::new(0),
                packet.into_boxed_slice(),
            );
            let _ = track.channels_and(&packet);
        }
    }

    #[test]
    fn compressed_files_that_cannot_be_read_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let problem = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let Err(err) = read_audio_file(&path) else {
                panic!("{name} was read");
            };
            assert_eq!(err.path, path);
            err.to_string()
        };
        let opus = std::fs::read(fixture("answer.opus")).unwrap();
        let err = problem("cut.opus", &opus[..opus.len() / 2]);
        assert!(err.contains("cut.opus: "), "{err}");
        let err = problem("a.mp3", b"\x7fELF\x02\x01\x01 not audio at all, just bytes");
        assert!(err.contains("not an audio file this app reads"), "{err}");
        let err = problem("a.ogg", b"");
        assert!(err.contains("a.ogg: "), "{err}");
        let mp3 = std::fs::read(fixture("answer.mp3")).unwrap();
        let err = problem("cut.mp3", &mp3[..mp3.len() / 2 + 7]);
        assert!(
            err.contains("cut.mp3: truncated: the file states 4.1 s"),
            "{err}"
        );
        let flac = std::fs::read(fixture("answer.flac")).unwrap();
        let err = problem("cut.flac", &flac[..flac.len() / 2]);
        assert!(err.contains("truncated"), "{err}");
    }
}
