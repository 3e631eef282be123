//! [`SpeechModel`]: a Whisper model loaded from a `CTranslate2` directory, and greedy
//! transcription of 16 kHz audio in 30-second windows.
//!
//! Per window: the log-mel spectrogram (candle's `pcm_to_mel` with our filter bank), the
//! encoder once over the window's audio plus two seconds of padding (not a full 30 seconds:
//! on the 22 spoken answers of `tests/speech.rs` this cut tiny.en's time by 2.5× and its word
//! error rate from 19.5 % to 18.3 %, base's from 19.1 % to 15.8 %), then the decoder token by token from `<|startoftranscript|>` (plus language
//! and `<|transcribe|>` for a multilingual model) and `<|notimestamps|>`: each window is one
//! segment. With [`SpeechModel::set_timestamps`] the decoder writes timestamp tokens instead
//! (`timestamps`) and segments are the timed pieces inside each window. Windows are fixed
//! 30-second steps; a word cut by a window's end may be lost or garbled (Whisper instead seeks
//! to the last complete piece).
//!
//! The guards, in Whisper's order: a window quieter than [`SILENCE_RMS`] is silence without
//! running the model; a window whose `<|nospeech|>` probability after the start token exceeds
//! 0.6 while its text scores an average log-probability below −1 is silence too; a decode
//! that loops ([`guards::repeated_tail`]), compresses too well (ratio above 2.4) or scores
//! below −1 is retried at temperatures 0.2 … 1.0 (seeded, so runs are repeatable); a result
//! that still compresses too well is dropped. Special tokens and the non-speech symbols listed
//! in the model's `config.json` (`suppress_ids`) are never emitted, nor a blank or the end
//! token first (`suppress_ids_begin`).
//!
//! The decoder has no self-attention cache in candle 0.11, so each step re-reads the tokens so
//! far; the number of tokens per window is therefore bounded by the audio's length
//! ([`max_tokens`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::{D, DType, Device, IndexOp, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::whisper::{self as whisper_consts, audio, model::Whisper};
use tokenizers::Tokenizer;

mod features;
mod sampling;
mod vocab;

pub(crate) use features::rms;
use features::{candle_filters, centred, window_mel};
use sampling::{XorShift, argmax, log_softmax, sample};
use vocab::{Specials, specials, suppress_lists};

use super::{Segment, SpeechError, Transcript, ct2, guards, timestamps, weights};

/// Whisper's input rate.
pub const SAMPLE_RATE: u32 = 16_000;

/// A window with less energy than this (RMS, about −80 dBFS) is silence: the model would only
/// hallucinate in it.
pub const SILENCE_RMS: f32 = 1e-4;

/// `<|nospeech|>` probability above which a window is silence if its text also scores low.
const NO_SPEECH_THRESHOLD: f64 = 0.6;
/// Average log-probability below which a decode is retried (and, with a high no-speech
/// probability, judged silence).
const LOGPROB_THRESHOLD: f64 = -1.0;
/// Retry temperatures after greedy decoding fails a guard (Whisper's schedule).
const TEMPERATURES: [f64; 6] = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
/// Upper bound on tokens per window (Whisper's `sample_len`, half the text context).
const MAX_TOKENS: usize = 224;
/// Tokens allowed per second of audio: fast speech is about 4 words (5 tokens) a second.
const TOKENS_PER_SECOND: f64 = 8.0;
/// Mel frames per 30-second window.
const WINDOW_FRAMES: usize = whisper_consts::N_FRAMES;
/// Samples per mel frame.
const HOP: usize = whisper_consts::HOP_LENGTH;

/// Frames of padding after the audio in a short window (two seconds of the silence floor).
const SHORT_WINDOW_PAD: usize = 200;

/// Mel frames fed to the encoder for a window holding `remaining` frames of audio: a window
/// of the audio plus [`SHORT_WINDOW_PAD`] (even, for the encoder's stride-2 convolution),
/// not a full 30 seconds of padding. The encoder's cost grows with its input, so a short
/// answer costs a fraction of a full window.
fn window_width(remaining: usize) -> usize {
    (remaining + SHORT_WINDOW_PAD)
        .div_ceil(2)
        .saturating_mul(2)
        .min(WINDOW_FRAMES)
}

/// A loaded Whisper model.
pub struct SpeechModel {
    whisper: Whisper,
    /// The token embedding (vocabulary × width), shared with the decoder: the output
    /// projection. candle's `final_linear` multiplies by its transpose broadcast over the
    /// batch, which copies all 80 MB (tiny) at every step; `embedding · hidden` does not.
    embedding: Tensor,
    tokenizer: Tokenizer,
    filters: Vec<f32>,
    specials: Specials,
    /// Token ids never emitted (non-speech symbols from `config.json`).
    suppress: Vec<u32>,
    /// Never emitted as the first token.
    suppress_begin: Vec<u32>,
    multilingual: bool,
    /// Decode with timestamp tokens (timed pieces) rather than `<|notimestamps|>` (one
    /// segment per window). Off by default: on the spoken answers of `tests/speech.rs` it costs
    /// tiny.en about 3 points of WER, as it does faster-whisper on the same audio.
    timestamps: bool,
    name: String,
    dir: PathBuf,
    device: Device,
}

impl std::fmt::Debug for SpeechModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechModel")
            .field("name", &self.name)
            .field("dir", &self.dir)
            .field("multilingual", &self.multilingual)
            .finish_non_exhaustive()
    }
}

/// One window's decode.
#[derive(Debug, Clone)]
struct Decoded {
    /// Text and timestamp tokens, prompt excluded.
    tokens: Vec<u32>,
    avg_logprob: f64,
    no_speech_prob: f64,
    compression_ratio: f64,
    looped: bool,
    temperature: f64,
}

impl SpeechModel {
    /// Loads `model.bin`, `tokenizer.json` and (if present) `config.json` from `dir`; `name` is
    /// what transcripts report.
    pub fn load(dir: &Path, name: &str) -> Result<Self, SpeechError> {
        let model_path = dir.join("model.bin");
        let model = ct2::read(&model_path)?;
        let device = Device::Cpu;
        let (config, tensors) =
            weights::load(model, &device).map_err(|problem| SpeechError::Model {
                path: model_path.clone(),
                problem,
            })?;
        let embedding = tensors
            .get("model.decoder.embed_tokens.weight")
            .cloned()
            .ok_or_else(|| SpeechError::Model {
                path: model_path.clone(),
                problem: "no token embedding".to_owned(),
            })?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let whisper = Whisper::load(&vb, config.clone()).map_err(|e| SpeechError::Model {
            path: model_path.clone(),
            problem: e.to_string(),
        })?;
        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(|e| SpeechError::Model {
            path: tokenizer_path.clone(),
            problem: e.to_string(),
        })?;
        let specials = specials(&tokenizer).map_err(|problem| SpeechError::Model {
            path: tokenizer_path,
            problem,
        })?;
        let (suppress, suppress_begin) = suppress_lists(&dir.join("config.json"))?;
        Ok(Self {
            filters: candle_filters(config.num_mel_bins),
            // Whisper's own rule: the multilingual vocabulary has 51 865 tokens or more.
            multilingual: config.vocab_size >= 51_865,
            timestamps: false,
            whisper,
            embedding,
            tokenizer,
            specials,
            suppress,
            suppress_begin,
            name: name.to_owned(),
            dir: dir.to_path_buf(),
            device,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn is_multilingual(&self) -> bool {
        self.multilingual
    }

    /// Decode with timestamp tokens: segments become the timed pieces Whisper marks inside
    /// each window instead of whole windows.
    pub fn set_timestamps(&mut self, on: bool) {
        self.timestamps = on;
    }

    /// Transcribes 16 kHz mono samples. `language` is a code such as `en` or `de`; `None`
    /// detects it on each window (multilingual models) or means English (`.en` models).
    pub fn transcribe(
        &mut self,
        samples: &[f32],
        language: Option<&str>,
    ) -> Result<Transcript, SpeechError> {
        let started = Instant::now();
        let language_token = self.language_token(language)?;
        let config = self.whisper.config.clone();
        let mel = audio::pcm_to_mel(&config, &centred(samples), &self.filters);
        let n_mels = config.num_mel_bins;
        let frames = mel.len() / n_mels.max(1);
        let audio_frames = samples.len().div_ceil(HOP);
        let duration = samples.len() as f64 / f64::from(SAMPLE_RATE);
        let mut segments = Vec::new();
        let mut detected = None;
        let mut start_frame = 0;
        while start_frame < audio_frames {
            let start = start_frame as f64 * HOP as f64 / f64::from(SAMPLE_RATE);
            let end = (start + whisper_consts::CHUNK_LENGTH as f64).min(duration);
            let window_samples = samples
                .get(start_frame * HOP..(start_frame + WINDOW_FRAMES) * HOP)
                .or_else(|| samples.get(start_frame * HOP..))
                .unwrap_or_default();
            if rms(window_samples) < SILENCE_RMS {
                segments.push(Segment::silent(start, end, 1.0));
            } else {
                let width = window_width(audio_frames - start_frame);
                let window = window_mel(&mel, n_mels, frames, start_frame, width);
                let window = Tensor::from_vec(window, (1, n_mels, width), &self.device)
                    .map_err(|e| self.inference(&e))?;
                let (found, language) =
                    self.decode_window(&window, language_token, start, end, start_frame)?;
                detected = detected.or(language);
                segments.extend(found);
            }
            start_frame += WINDOW_FRAMES;
        }
        tracing::debug!(
            model = %self.name,
            seconds = duration,
            elapsed_ms = started.elapsed().as_millis(),
            "transcribed"
        );
        Ok(Transcript {
            model: self.name.clone(),
            language: language
                .map(str::to_owned)
                .or(detected)
                .or_else(|| (!self.multilingual).then(|| "en".to_owned())),
            duration_seconds: duration,
            segments,
        })
    }

    fn inference(&self, error: &dyn std::fmt::Display) -> SpeechError {
        SpeechError::Inference {
            model: self.name.clone(),
            problem: error.to_string(),
        }
    }

    /// The language token to force, or `None` (English-only model, or detect).
    fn language_token(&self, language: Option<&str>) -> Result<Option<u32>, SpeechError> {
        let Some(code) = language else {
            return Ok(None);
        };
        let code = code.trim().to_ascii_lowercase();
        if !self.multilingual {
            return if code == "en" {
                Ok(None)
            } else {
                Err(SpeechError::Language(format!(
                    "{} is an English-only model; use a multilingual one (--model base) for '{code}'",
                    self.name
                )))
            };
        }
        self.specials
            .languages
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, token)| Some(*token))
            .ok_or_else(|| {
                let known: Vec<&str> = self
                    .specials
                    .languages
                    .iter()
                    .map(|(c, _)| c.as_str())
                    .collect();
                SpeechError::Language(format!(
                    "'{code}' is not a language of {} (known: {})",
                    self.name,
                    known.join(", ")
                ))
            })
    }

    /// Decodes one window with the guards; returns its segments (at least one, perhaps
    /// without text) and the detected language.
    fn decode_window(
        &mut self,
        mel: &Tensor,
        language_token: Option<u32>,
        start: f64,
        end: f64,
        seed: usize,
    ) -> Result<(Vec<Segment>, Option<String>), SpeechError> {
        let features = self
            .whisper
            .encoder
            .forward(mel, true)
            .map_err(|e| self.inference(&e))?;
        let (language, detected) = match (self.multilingual, language_token) {
            (false, _) => (None, None),
            (true, Some(token)) => (Some(token), None),
            (true, None) => {
                let (token, code) = self.detect_language(&features)?;
                (Some(token), Some(code))
            }
        };
        let mut prompt = vec![self.specials.sot];
        if self.multilingual {
            prompt.extend(language);
            prompt.extend(self.specials.transcribe);
        }
        if !self.timestamps {
            prompt.push(self.specials.no_timestamps);
        }
        let limit = max_tokens(end - start);
        let mut rng = XorShift::new(seed as u64);
        let mut last = None;
        for temperature in TEMPERATURES {
            let decoded = self.decode(&features, &prompt, temperature, limit, &mut rng)?;
            if decoded.no_speech_prob > NO_SPEECH_THRESHOLD
                && decoded.avg_logprob < LOGPROB_THRESHOLD
            {
                // Silence: no text, but the scores that said so.
                let silent = Segment {
                    avg_logprob: decoded.avg_logprob,
                    temperature,
                    ..Segment::silent(start, end, decoded.no_speech_prob)
                };
                return Ok((vec![silent], detected));
            }
            let failed = decoded.looped
                || decoded.compression_ratio > guards::COMPRESSION_RATIO_LIMIT
                || decoded.avg_logprob < LOGPROB_THRESHOLD;
            last = Some(decoded);
            if !failed {
                break;
            }
        }
        let Some(decoded) = last else {
            return Ok((vec![Segment::silent(start, end, 0.0)], detected));
        };
        Ok((self.segments(&decoded, start, end)?, detected))
    }

    /// The timed segments of an accepted decode; one segment without text when it has none
    /// or still compresses too well after every retry.
    fn segments(
        &self,
        decoded: &Decoded,
        start: f64,
        end: f64,
    ) -> Result<Vec<Segment>, SpeechError> {
        let segment = |from: f64, to: f64, text: String, tokens: usize| Segment {
            start: from,
            end: to,
            text,
            avg_logprob: decoded.avg_logprob,
            no_speech_prob: decoded.no_speech_prob,
            compression_ratio: decoded.compression_ratio,
            temperature: decoded.temperature,
            tokens,
        };
        let pieces = if decoded.compression_ratio > guards::COMPRESSION_RATIO_LIMIT {
            Vec::new()
        } else {
            timestamps::pieces(
                &decoded.tokens,
                self.specials.eot,
                self.specials.timestamp_begin,
                end - start,
            )
        };
        let mut out = Vec::new();
        for piece in pieces {
            let text = self
                .tokenizer
                .decode(&piece.tokens, true)
                .map_err(|e| self.inference(&e))?;
            let text = text.trim();
            if !text.is_empty() {
                out.push(segment(
                    start + piece.start,
                    (start + piece.end).min(end),
                    text.to_owned(),
                    piece.tokens.len(),
                ));
            }
        }
        if out.is_empty() {
            out.push(segment(start, end, String::new(), 0));
        }
        Ok(out)
    }

    /// The most likely language token after `<|startoftranscript|>`.
    fn detect_language(&mut self, features: &Tensor) -> Result<(u32, String), SpeechError> {
        let logits = self.step(&[self.specials.sot], features, true, false)?.0;
        self.specials
            .languages
            .iter()
            .filter_map(|(code, token)| {
                logits
                    .get(*token as usize)
                    .map(|l| (code.clone(), *token, *l))
            })
            .max_by(|a, b| a.2.total_cmp(&b.2))
            .map(|(code, token, _)| (token, code))
            .ok_or_else(|| self.inference(&"the tokenizer has no language tokens"))
    }

    /// Logits of the last position (and, with `first`, the `<|nospeech|>` probability at the
    /// start token) for `tokens`.
    fn step(
        &mut self,
        tokens: &[u32],
        features: &Tensor,
        flush: bool,
        first: bool,
    ) -> Result<(Vec<f32>, f64), SpeechError> {
        let embedding = &self.embedding;
        let project = |hidden: &Tensor, at: usize| -> candle_core::Result<Tensor> {
            // (vocabulary × width) · (width × 1): the logits of position `at`.
            let row = hidden.i((0, at))?.unsqueeze(1)?.contiguous()?;
            embedding.matmul(&row)?.flatten_all()
        };
        let run = |model: &mut Whisper| -> candle_core::Result<(Vec<f32>, Option<Vec<f32>>)> {
            let input = Tensor::new(tokens, features.device())?.unsqueeze(0)?;
            let hidden = model.decoder.forward(&input, features, flush)?;
            let len = hidden.dim(1)?;
            let logits = project(&hidden, len - 1)?.to_vec1()?;
            let at_start = if first {
                let probs = candle_nn::ops::softmax(&project(&hidden, 0)?, D::Minus1)?;
                Some(probs.to_vec1()?)
            } else {
                None
            };
            Ok((logits, at_start))
        };
        let (logits, at_start) = run(&mut self.whisper).map_err(|e| self.inference(&e))?;
        let no_speech = if let (Some(probs), Some(token)) = (at_start, self.specials.no_speech) {
            probs.get(token as usize).copied().map_or(0.0, f64::from)
        } else {
            0.0
        };
        Ok((logits, no_speech))
    }

    /// One decode of a window at `temperature` (0: greedy).
    fn decode(
        &mut self,
        features: &Tensor,
        prompt: &[u32],
        temperature: f64,
        limit: usize,
        rng: &mut XorShift,
    ) -> Result<Decoded, SpeechError> {
        let mut tokens = prompt.to_vec();
        let mut sum_logprob = 0.0;
        let mut no_speech_prob = 0.0;
        let mut looped = false;
        for i in 0..limit {
            let (mut logits, no_speech) = self.step(&tokens, features, i == 0, i == 0)?;
            if i == 0 {
                no_speech_prob = no_speech;
            }
            self.mask(&mut logits, i == 0);
            if self.timestamps {
                let generated = tokens.get(prompt.len()..).unwrap_or_default();
                timestamps::apply_rules(
                    &mut logits,
                    generated,
                    self.specials.eot,
                    self.specials.timestamp_begin,
                );
            } else {
                let first_timestamp = self.specials.timestamp_begin as usize;
                for value in logits.iter_mut().skip(first_timestamp) {
                    *value = f32::NEG_INFINITY;
                }
            }
            let logprobs = log_softmax(&logits);
            let next = if temperature > 0.0 {
                sample(&logits, temperature, rng)
            } else {
                argmax(&logits)
            };
            sum_logprob += logprobs
                .get(next as usize)
                .copied()
                .unwrap_or(f64::NEG_INFINITY);
            if next == self.specials.eot {
                break;
            }
            tokens.push(next);
            if next < self.specials.eot && self.cut_loop(&mut tokens, prompt.len()) {
                looped = true;
                break;
            }
        }
        let generated = tokens.split_off(prompt.len());
        let text_tokens: Vec<u32> = generated
            .iter()
            .copied()
            .filter(|t| *t < self.specials.eot)
            .collect();
        let text = self
            .tokenizer
            .decode(&text_tokens, true)
            .map_err(|e| self.inference(&e))?;
        Ok(Decoded {
            avg_logprob: sum_logprob / (generated.len() + 1) as f64,
            compression_ratio: guards::compression_ratio(&text),
            tokens: generated,
            no_speech_prob,
            looped,
            temperature,
        })
    }

    /// Whether the text tokens decoded after `prompt_len` end in a loop; if so, cuts `tokens`
    /// after the loop's first copy.
    fn cut_loop(&self, tokens: &mut Vec<u32>, prompt_len: usize) -> bool {
        let eot = self.specials.eot;
        let generated = tokens.get(prompt_len..).unwrap_or_default();
        let positions: Vec<usize> = (0..generated.len())
            .filter(|&i| generated.get(i).is_some_and(|t| *t < eot))
            .collect();
        let text: Vec<u32> = positions
            .iter()
            .filter_map(|&i| generated.get(i).copied())
            .collect();
        let Some(cut) = guards::repeated_tail(&text) else {
            return false;
        };
        let keep = positions.get(cut).map_or(generated.len(), |&i| i);
        tokens.truncate(prompt_len + keep);
        true
    }

    /// Sets every token that may not come next to −∞, timestamp rules aside.
    fn mask(&self, logits: &mut [f32], first: bool) {
        let eot = self.specials.eot as usize;
        let first_timestamp = self.specials.timestamp_begin as usize;
        // Between the end token and the timestamps: start, languages, tasks, no-speech.
        for value in logits.iter_mut().take(first_timestamp).skip(eot + 1) {
            *value = f32::NEG_INFINITY;
        }
        let begin = if first {
            self.suppress_begin.as_slice()
        } else {
            &[]
        };
        for &id in self.suppress.iter().chain(begin) {
            if let Some(value) = logits.get_mut(id as usize) {
                *value = f32::NEG_INFINITY;
            }
        }
    }
}

/// Tokens allowed for a window of `seconds` of audio.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // clamped to 0..=224 first
fn max_tokens(seconds: f64) -> usize {
    let bound = (seconds.max(0.0) * TOKENS_PER_SECOND).ceil() + 8.0;
    bound.min(MAX_TOKENS as f64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_budget_follows_the_audio_length() {
        assert_eq!(max_tokens(0.0), 8);
        assert_eq!(max_tokens(2.0), 24);
        assert_eq!(max_tokens(30.0), 224);
    }
}
