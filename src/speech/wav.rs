//! Reading WAV files: RIFF/WAVE with PCM integer samples (8, 16, 24, 32 bit) or IEEE float
//! (32, 64 bit), any sample rate, any number of channels, mixed down to mono `f32` in −1…1.
//!
//! Chunks other than `fmt ` and `data` (`LIST`, `fact`, …) are skipped. `WAVE_FORMAT_EXTENSIBLE`
//! is read through its sub-format. A `data` size of `0xFFFFFFFF` (what streaming writers put
//! before they know the length) means "to the end of the file"; any other size past the end
//! is a truncated file. Compressed formats (µ-law, ADPCM, MP3-in-WAV) are refused by name.

use std::path::PathBuf;

/// Longest audio accepted. An interview answer is minutes long; this bounds the memory a
/// mistaken file can take (30 minutes at 48 kHz stereo f32 is 0.7 GB decoded).
pub const MAX_SECONDS: f64 = 30.0 * 60.0;

/// Format tags of the `fmt ` chunk.
const PCM: u16 = 1;
const IEEE_FLOAT: u16 = 3;
const EXTENSIBLE: u16 = 0xFFFE;

/// Mono samples at their original rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    pub sample_rate: u32,
    /// Mean of the channels, −1…1.
    pub samples: Vec<f32>,
}

impl Audio {
    pub fn duration_seconds(&self) -> f64 {
        self.samples.len() as f64 / f64::from(self.sample_rate.max(1))
    }
}

/// What is wrong with a WAV file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WavProblem {
    #[error("cannot read: {0}")]
    Io(String),
    #[error("not a WAV file (no RIFF/WAVE header)")]
    NotRiff,
    #[error("no `fmt ` chunk before the audio data")]
    NoFormat,
    #[error("no `data` chunk")]
    NoData,
    #[error("unsupported format: {0}")]
    Unsupported(String),
    #[error("truncated: {0}")]
    Truncated(String),
    #[error("no audio samples")]
    Empty,
    #[error("{seconds:.0} s of audio is more than the {max:.0} s accepted")]
    TooLong { seconds: f64, max: f64 },
}

/// A WAV problem with the file it is in.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct WavError {
    pub path: PathBuf,
    pub problem: WavProblem,
}

/// Whether `bytes` start like a RIFF/WAVE file.
pub fn is_riff(bytes: &[u8]) -> bool {
    bytes.get(0..4) == Some(b"RIFF") && bytes.get(8..12) == Some(b"WAVE")
}

/// The `fmt ` chunk's fields we use.
#[derive(Debug, Clone, Copy)]
struct Format {
    float: bool,
    channels: u16,
    sample_rate: u32,
    bits: u16,
}

/// Decodes a whole WAV file held in memory.
pub fn parse(bytes: &[u8]) -> Result<Audio, WavProblem> {
    if !is_riff(bytes) {
        return Err(WavProblem::NotRiff);
    }
    let mut at = 12;
    let mut format = None;
    while let Some(header) = bytes.get(at..at + 8) {
        let (id, size) = header.split_at(4);
        let size = u32::from_le_bytes(size.try_into().unwrap_or_default());
        let start = at + 8;
        if id == b"data" {
            let format = format.ok_or(WavProblem::NoFormat)?;
            let end = if size == u32::MAX {
                bytes.len()
            } else {
                start + size as usize
            };
            let data = bytes.get(start..end).ok_or_else(|| {
                WavProblem::Truncated(format!(
                    "the data chunk claims {size} bytes, {} are left",
                    bytes.len() - start
                ))
            })?;
            return decode(data, format);
        }
        let body = bytes.get(start..start + size as usize).ok_or_else(|| {
            WavProblem::Truncated(format!(
                "the `{}` chunk claims {size} bytes, {} are left",
                String::from_utf8_lossy(id),
                bytes.len() - start
            ))
        })?;
        if id == b"fmt " {
            format = Some(read_format(body)?);
        }
        // Chunks are padded to an even size.
        at = start + size as usize + (size as usize & 1);
    }
    Err(if format.is_some() {
        WavProblem::NoData
    } else {
        WavProblem::NoFormat
    })
}

fn read_format(body: &[u8]) -> Result<Format, WavProblem> {
    let u16_at = |i: usize| {
        body.get(i..i + 2)
            .map(|b| u16::from_le_bytes(b.try_into().unwrap_or_default()))
    };
    let short = || WavProblem::Truncated(format!("the `fmt ` chunk has only {} bytes", body.len()));
    let mut tag = u16_at(0).ok_or_else(short)?;
    let channels = u16_at(2).ok_or_else(short)?;
    let sample_rate = body
        .get(4..8)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
        .ok_or_else(short)?;
    let bits = u16_at(14).ok_or_else(short)?;
    if tag == EXTENSIBLE {
        // The sub-format GUID starts with the plain format tag.
        tag = u16_at(24).ok_or_else(short)?;
    }
    let float = match (tag, bits) {
        (PCM, 8 | 16 | 24 | 32) => false,
        (IEEE_FLOAT, 32 | 64) => true,
        (PCM | IEEE_FLOAT, _) => {
            return Err(WavProblem::Unsupported(format!(
                "{bits}-bit {} samples",
                if tag == PCM { "integer" } else { "float" }
            )));
        }
        (other, _) => {
            return Err(WavProblem::Unsupported(format!(
                "format tag {other:#06x} ({}); only PCM and IEEE float are read",
                tag_name(other)
            )));
        }
    };
    if channels == 0 || sample_rate == 0 {
        return Err(WavProblem::Unsupported(format!(
            "{channels} channels at {sample_rate} Hz"
        )));
    }
    Ok(Format {
        float,
        channels,
        sample_rate,
        bits,
    })
}

fn tag_name(tag: u16) -> &'static str {
    match tag {
        2 => "Microsoft ADPCM",
        6 => "A-law",
        7 => "µ-law",
        0x11 => "IMA ADPCM",
        0x55 => "MP3",
        _ => "compressed",
    }
}

fn decode(data: &[u8], format: Format) -> Result<Audio, WavProblem> {
    let width = usize::from(format.bits / 8);
    let channels = usize::from(format.channels);
    let frame = width * channels;
    let frames = data.len() / frame;
    if frames == 0 {
        return Err(WavProblem::Empty);
    }
    let seconds = frames as f64 / f64::from(format.sample_rate);
    if seconds > MAX_SECONDS {
        return Err(WavProblem::TooLong {
            seconds,
            max: MAX_SECONDS,
        });
    }
    let sample = |bytes: &[u8]| -> f32 {
        match (format.float, bytes.len()) {
            (false, 1) => bytes
                .first()
                .map_or(0.0, |x| (f32::from(*x) - 128.0) / 128.0),
            (false, 2) => f32::from(i16::from_le_bytes(array(bytes))) / 32_768.0,
            (false, 3) => {
                let [x, y, z] = array(bytes);
                (i32::from_le_bytes([0, x, y, z]) >> 8) as f32 / 8_388_608.0
            }
            (false, 4) => i32::from_le_bytes(array(bytes)) as f32 / 2_147_483_648.0,
            (true, 4) => f32::from_le_bytes(array(bytes)),
            (true, 8) => narrow(f64::from_le_bytes(array(bytes))),
            _ => 0.0,
        }
    };
    let scale = 1.0 / channels as f32;
    let samples = data
        .chunks_exact(frame)
        .map(|frame| frame.chunks_exact(width).map(sample).sum::<f32>() * scale)
        .collect();
    Ok(Audio {
        sample_rate: format.sample_rate,
        samples,
    })
}

/// A sample's bytes as an array (the caller matched the length).
fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes.try_into().unwrap_or([0; N])
}

#[allow(clippy::cast_possible_truncation)] // 64-bit float samples are read as f32 like the rest
fn narrow(value: f64) -> f32 {
    value as f32
}

/// Test helper and bench helper: a WAV file's bytes with these format fields and sample bytes.
#[doc(hidden)]
pub fn encode(tag: u16, channels: u16, sample_rate: u32, bits: u16, data: &[u8]) -> Vec<u8> {
    let block = channels * (bits / 8);
    let data_len = u32::try_from(data.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(data.len() + 44);
    out.extend(b"RIFF");
    out.extend((36 + data_len).to_le_bytes());
    out.extend(b"WAVEfmt ");
    out.extend(16u32.to_le_bytes());
    out.extend(tag.to_le_bytes());
    out.extend(channels.to_le_bytes());
    out.extend(sample_rate.to_le_bytes());
    out.extend((sample_rate * u32::from(block)).to_le_bytes());
    out.extend(block.to_le_bytes());
    out.extend(bits.to_le_bytes());
    out.extend(b"data");
    out.extend(data_len.to_le_bytes());
    out.extend(data);
    out
}

/// 16-bit PCM mono WAV bytes of `samples` (−1…1), for tests and benches.
#[doc(hidden)]
#[allow(clippy::cast_possible_truncation)] // clamped to the i16 range first
pub fn encode_pcm16(sample_rate: u32, samples: &[f32]) -> Vec<u8> {
    let data: Vec<u8> = samples
        .iter()
        .flat_map(|s| ((s.clamp(-1.0, 1.0) * 32_767.0).round() as i16).to_le_bytes())
        .collect();
    encode(PCM, 1, sample_rate, 16, &data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f32], b: &[f32]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-3, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn every_sample_format_decodes_to_the_same_values() {
        let want = [0.0, 0.5, -0.5, -1.0];
        let pcm8 = [128u8, 192, 64, 0];
        let pcm16: Vec<u8> = [0i16, 16_384, -16_384, -32_768]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let pcm24: Vec<u8> = [0i32, 4_194_304, -4_194_304, -8_388_608]
            .iter()
            .flat_map(|v| v.to_le_bytes().into_iter().take(3))
            .collect();
        let pcm32: Vec<u8> = [0i32, 1 << 30, -(1 << 30), i32::MIN]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let f32s: Vec<u8> = want.iter().flat_map(|v: &f32| v.to_le_bytes()).collect();
        let f64s: Vec<u8> = want
            .iter()
            .flat_map(|v| f64::from(*v).to_le_bytes())
            .collect();
        for (tag, bits, data) in [
            (PCM, 8, pcm8.to_vec()),
            (PCM, 16, pcm16),
            (PCM, 24, pcm24),
            (PCM, 32, pcm32),
            (IEEE_FLOAT, 32, f32s),
            (IEEE_FLOAT, 64, f64s),
        ] {
            let audio = parse(&encode(tag, 1, 8000, bits, &data)).unwrap();
            assert_eq!(audio.sample_rate, 8000);
            close(&audio.samples, &want);
        }
    }

    #[test]
    fn stereo_is_mixed_down_and_other_chunks_are_skipped() {
        let data: Vec<u8> = [16_384i16, -16_384, 8192, 8192]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut bytes = encode(PCM, 2, 44_100, 16, &data);
        // A LIST chunk of odd size (padded) between fmt and data.
        let list = [b"LIST".as_slice(), &3u32.to_le_bytes(), b"abc\0"].concat();
        bytes.splice(36..36, list);
        let audio = parse(&bytes).unwrap();
        close(&audio.samples, &[0.0, 0.25]);
        assert!((audio.duration_seconds() - 2.0 / 44_100.0).abs() < 1e-9);
    }

    #[test]
    fn extensible_format_reads_its_sub_format() {
        let mut bytes = encode(EXTENSIBLE, 1, 16_000, 16, &[0, 64]);
        // Grow fmt to 40 bytes: cbSize, valid bits, channel mask, GUID starting with PCM.
        let mut ext = vec![22, 0, 16, 0, 4, 0, 0, 0];
        ext.extend(PCM.to_le_bytes());
        ext.extend([0; 14]);
        bytes.splice(36..36, ext);
        bytes.splice(16..20, 40u32.to_le_bytes());
        let audio = parse(&bytes).unwrap();
        close(&audio.samples, &[0.5]);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let ok = encode(PCM, 1, 16_000, 16, &[0; 8]);
        assert_eq!(
            parse(b"ID3\x04 mp3 bytes").unwrap_err(),
            WavProblem::NotRiff
        );
        let alaw = encode(6, 1, 8000, 8, &[0; 8]);
        assert!(parse(&alaw).unwrap_err().to_string().contains("A-law"));
        let odd = encode(PCM, 1, 8000, 12, &[0; 8]);
        assert_eq!(
            parse(&odd).unwrap_err().to_string(),
            "unsupported format: 12-bit integer samples"
        );
        let cut = ok.get(..ok.len() - 3).unwrap();
        assert!(
            matches!(parse(cut), Err(WavProblem::Truncated(m)) if m.contains("claims 8 bytes, 5 are left"))
        );
        assert_eq!(
            parse(&encode(PCM, 1, 16_000, 16, &[])),
            Err(WavProblem::Empty)
        );
        let no_data = ok.get(..36).unwrap();
        assert_eq!(parse(no_data), Err(WavProblem::NoData));
        let too_long = encode(PCM, 1, 1, 8, &vec![128; 1801]);
        assert!(matches!(parse(&too_long), Err(WavProblem::TooLong { .. })));
        let streaming = {
            let mut b = ok.clone();
            b.splice(40..44, u32::MAX.to_le_bytes());
            b
        };
        assert_eq!(parse(&streaming).unwrap().samples.len(), 4);
    }

    #[test]
    fn a_read_error_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answer.wav");
        std::fs::write(&path, b"not audio at all").unwrap();
        let err = crate::speech::read_audio_file(&path).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("answer.wav: not a WAV file (no RIFF/WAVE header)")
        );
        let err = crate::speech::read_audio_file(&dir.path().join("absent.wav")).unwrap_err();
        assert!(err.to_string().contains("absent.wav: cannot read"), "{err}");
    }
}
