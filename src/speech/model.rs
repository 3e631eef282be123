//! [`SpeechModel`]: a Whisper model loaded from a `CTranslate2` directory, and transcription
//! of 16 kHz audio in 30-second windows by beam search (or greedy decoding).
//!
//! Per window: the log-mel spectrogram (`features`, over the audio's frames only), candle's
//! encoder once over the window's audio plus two seconds of padding (not a full 30 seconds:
//! on the 22 spoken answers of `tests/speech.rs` this cut tiny.en's time by 2.5× and its word
//! error rate from 19.5 % to 18.3 %, base's from 19.1 % to 15.8 %, both greedy), then the
//! decoder (`decoder`, ours, with a self-attention cache and f16 weights multiplied by the
//! kernels crate's `dense`) from an optional prompt
//! (`<|startofprev|>` and the prompt's last tokens, [`SpeechModel::set_prompt`]),
//! `<|startoftranscript|>` (plus language and `<|transcribe|>` for a multilingual model) and
//! `<|notimestamps|>`. At temperature 0 it searches 5 hypotheses (Whisper's beam search;
//! [`SpeechModel::set_beam_size`] 1 decodes greedily): on those answers tiny.en's word error
//! rate went from 18.3 % to 14.5 % and base's from 15.8 % to 11.6 %. Each window is one
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
//! The number of tokens per window is bounded by the audio's length ([`max_tokens`]) and by
//! the decoder's 448 positions, prompt included.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::{DType, Device, IndexOp, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::whisper::{
    self as whisper_consts, Config,
    model::{AudioEncoder, Whisper},
};
use tokenizers::Tokenizer;

mod decoder;
mod features;
mod sampling;
mod vocab;

use decoder::{Cache, Cross, Decoder};
pub(crate) use features::rms;
use features::{Spectrogram, window_mel};
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
/// Hypotheses beam search keeps by default (Whisper's command line: 5).
pub const BEAM_SIZE: usize = 5;
/// Tokens of a prompt kept (its end): Whisper keeps up to half the text context; fewer keep
/// the prompt's pass and each step's self-attention over it short.
pub const MAX_PROMPT_TOKENS: usize = 64;
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

/// Where the decoder's tensors are named.
const DECODER: &str = "model.decoder.";

/// A model's tensors for a `VarBuilder`, each handed out once and then forgotten, so that one
/// laid out into another form (our decoder's f16 panels) is freed as soon as that is done
/// instead of when loading ends (base's peak while loading: 374 MB added when they were all
/// held to the end). Names under `zeros` get zeros that take no memory (a single value
/// broadcast): candle's `Whisper::load` builds a decoder we never run.
struct Handover {
    tensors: std::sync::Mutex<HashMap<String, Tensor>>,
    zeros: Option<&'static str>,
}

impl candle_nn::var_builder::SimpleBackend for Handover {
    fn get(
        &self,
        shape: candle_core::Shape,
        name: &str,
        _: candle_nn::Init,
        dtype: DType,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        if self.zeros.is_some_and(|prefix| name.starts_with(prefix)) {
            return Tensor::zeros((), dtype, device)?.broadcast_as(shape);
        }
        let tensor = self.get_unchecked(name, dtype, device)?;
        if tensor.shape() == &shape {
            Ok(tensor)
        } else {
            Err(candle_core::Error::Msg(format!(
                "{name} has shape {:?}, not {shape:?}",
                tensor.shape()
            )))
        }
    }

    fn get_unchecked(&self, name: &str, dtype: DType, _: &Device) -> candle_core::Result<Tensor> {
        let taken = self
            .tensors
            .lock()
            .map_err(|_| candle_core::Error::Msg("the model's tensors were poisoned".into()))?
            .remove(name);
        taken
            .ok_or_else(|| candle_core::Error::Msg(format!("variable {name} is missing")))?
            .to_dtype(dtype)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.zeros.is_some_and(|prefix| name.starts_with(prefix))
            || self
                .tensors
                .lock()
                .is_ok_and(|tensors| tensors.contains_key(name))
    }
}

/// A loaded Whisper model.
pub struct SpeechModel {
    /// candle's audio encoder.
    encoder: AudioEncoder,
    config: Config,
    /// The text decoder, with a self-attention cache.
    decoder: Decoder,
    tokenizer: Tokenizer,
    spectrogram: Spectrogram,
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
    /// `<|startofprev|>` and the prompt's tokens: text the decoder is conditioned on before
    /// each window (Whisper's `initial_prompt`), empty for none.
    prompt: Vec<u32>,
    /// Hypotheses kept by beam search at temperature 0 (1: greedy).
    beam_size: usize,
    /// Retry a decode that fails a guard at higher temperatures ([`TEMPERATURES`]).
    fallback: bool,
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
        let model_error = |e: candle_core::Error| SpeechError::Model {
            path: model_path.clone(),
            problem: e.to_string(),
        };
        // Our decoder first, from the decoder's tensors alone, each freed once it is laid out;
        // then candle's model for its encoder.
        let (decoder_tensors, encoder_tensors): (HashMap<_, _>, HashMap<_, _>) = tensors
            .into_iter()
            .partition(|(name, _)| name.starts_with(DECODER));
        let handover = |tensors, zeros| {
            let backend = Handover {
                tensors: std::sync::Mutex::new(tensors),
                zeros,
            };
            VarBuilder::from_backend(Box::new(backend), DType::F32, device.clone())
        };
        let decoder =
            Decoder::load(&handover(decoder_tensors, None), &config).map_err(model_error)?;
        let vb = handover(encoder_tensors, Some(DECODER));
        let Whisper { encoder, .. } = Whisper::load(&vb, config.clone()).map_err(model_error)?;
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
            spectrogram: Spectrogram::new(config.num_mel_bins, &device).map_err(model_error)?,
            // Whisper's own rule: the multilingual vocabulary has 51 865 tokens or more.
            multilingual: config.vocab_size >= 51_865,
            timestamps: false,
            prompt: Vec::new(),
            beam_size: BEAM_SIZE,
            fallback: true,
            encoder,
            config,
            decoder,
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

    /// Hypotheses beam search keeps at temperature 0; 1 decodes greedily. Retries at higher
    /// temperatures always sample one hypothesis.
    pub fn set_beam_size(&mut self, beams: usize) {
        self.beam_size = beams.max(1);
    }

    /// Whether a decode that loops, compresses too well or scores low is retried at higher
    /// temperatures (on by default). Off, the first decode stands, its loop cut and text that
    /// compresses too well dropped as always: for a preview that is decoded again anyway, where
    /// five retries of a clipped word cost the live listener up to 1.2 s.
    pub fn set_fallback(&mut self, on: bool) {
        self.fallback = on;
    }

    /// Conditions decoding on `text` (Whisper's initial prompt): words the speaker is likely
    /// to say, such as the question just asked and the study's topic, so that its names and
    /// terms are heard as such. Only the last [`MAX_PROMPT_TOKENS`] tokens are kept; an empty
    /// text clears the prompt. A model whose vocabulary has no `<|startofprev|>` ignores it.
    pub fn set_prompt(&mut self, text: &str) -> Result<(), SpeechError> {
        self.prompt.clear();
        // Control characters (escape sequences included) never reach the model.
        let text = text
            .split(char::is_control)
            .flat_map(str::split_whitespace)
            .collect::<Vec<_>>()
            .join(" ");
        let Some(sot_prev) = self.specials.sot_prev else {
            return Ok(());
        };
        if text.is_empty() {
            return Ok(());
        }
        let encoding = self
            .tokenizer
            .encode(format!(" {text}"), false)
            .map_err(|e| self.inference(&e))?;
        let ids = encoding.get_ids();
        let eot = self.specials.eot;
        let kept = ids
            .get(ids.len().saturating_sub(MAX_PROMPT_TOKENS)..)
            .unwrap_or_default()
            .iter()
            .copied()
            .filter(|id| *id < eot);
        self.prompt.push(sot_prev);
        self.prompt.extend(kept);
        Ok(())
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
        let config = self.config.clone();
        let mel = self
            .spectrogram
            .log_mel(samples)
            .map_err(|e| self.inference(&e))?;
        let n_mels = config.num_mel_bins;
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
                let window = window_mel(&mel, n_mels, start_frame, width);
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
            .encoder
            .forward(mel, true)
            .map_err(|e| self.inference(&e))?;
        let cross = self
            .decoder
            .cross(&features)
            .map_err(|e| self.inference(&e))?;
        let (language, detected) = match (self.multilingual, language_token) {
            (false, _) => (None, None),
            (true, Some(token)) => (Some(token), None),
            (true, None) => {
                let (token, code) = self.detect_language(&cross)?;
                (Some(token), Some(code))
            }
        };
        let mut prompt = self.prompt.clone();
        let sot_at = prompt.len();
        prompt.push(self.specials.sot);
        if self.multilingual {
            prompt.extend(language);
            prompt.extend(self.specials.transcribe);
        }
        if !self.timestamps {
            prompt.push(self.specials.no_timestamps);
        }
        let limit =
            max_tokens(end - start).min(self.decoder.context().saturating_sub(prompt.len()));
        let mut rng = XorShift::new(seed as u64);
        let mut last = None;
        let tries = if self.fallback { TEMPERATURES.len() } else { 1 };
        for temperature in TEMPERATURES.into_iter().take(tries) {
            let decoded = if temperature > 0.0 || self.beam_size == 1 {
                self.decode(&cross, &prompt, sot_at, temperature, limit, &mut rng)?
            } else {
                self.beam_search(&cross, &prompt, sot_at, limit)?
            };
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
    fn detect_language(&mut self, cross: &Cross) -> Result<(u32, String), SpeechError> {
        let (logits, _) = self.start(cross, &[self.specials.sot], 0, &mut Cache::default())?;
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

    /// Runs `prompt` (batch 1) into `cache`: the logits after its last token and the
    /// `<|nospeech|>` probability at `sot_at`.
    fn start(
        &self,
        cross: &Cross,
        prompt: &[u32],
        sot_at: usize,
        cache: &mut Cache,
    ) -> Result<(Vec<f32>, f64), SpeechError> {
        let mut run = || -> candle_core::Result<(Vec<f32>, Vec<f32>)> {
            let input = Tensor::new(prompt, &self.device)?.unsqueeze(0)?;
            let hidden = self.decoder.forward(&input, cache, cross)?;
            let last = hidden.dim(1)?.saturating_sub(1);
            let rows = Tensor::cat(
                &[hidden.i((0, sot_at..=sot_at))?, hidden.i((0, last..))?],
                0,
            )?;
            let mut logits = self.decoder.project(&rows)?;
            let last = logits.pop().unwrap_or_default();
            Ok((last, logits.pop().unwrap_or_default()))
        };
        let (logits, at_start) = run().map_err(|e| self.inference(&e))?;
        let no_speech = self.specials.no_speech.map_or(0.0, |token| {
            let probabilities = sampling::log_softmax(&at_start);
            probabilities.get(token as usize).map_or(0.0, |lp| lp.exp())
        });
        Ok((logits, no_speech))
    }

    /// Feeds one token per hypothesis (`tokens`, in `cache`'s batch order) and returns each
    /// one's next logits.
    fn next(
        &self,
        cross: &Cross,
        tokens: &[u32],
        cache: &mut Cache,
    ) -> Result<Vec<Vec<f32>>, SpeechError> {
        let mut run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let input = Tensor::new(tokens, &self.device)?.unsqueeze(1)?;
            let hidden = self.decoder.forward(&input, cache, cross)?;
            self.decoder.project(&hidden.squeeze(1)?)
        };
        run().map_err(|e| self.inference(&e))
    }

    /// Masks what may not follow `generated` and returns the log-probabilities.
    fn constrain(&self, logits: &mut [f32], generated: &[u32]) -> Vec<f64> {
        self.mask(logits, generated.is_empty());
        if self.timestamps {
            timestamps::apply_rules(
                logits,
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
        log_softmax(logits)
    }

    /// One decode of a window at `temperature` (0: greedy), one hypothesis.
    fn decode(
        &mut self,
        cross: &Cross,
        prompt: &[u32],
        sot_at: usize,
        temperature: f64,
        limit: usize,
        rng: &mut XorShift,
    ) -> Result<Decoded, SpeechError> {
        let mut cache = Cache::default();
        let (mut logits, no_speech_prob) = self.start(cross, prompt, sot_at, &mut cache)?;
        let mut tokens = prompt.to_vec();
        let mut sum_logprob = 0.0;
        let mut looped = false;
        for _ in 0..limit {
            let logprobs =
                self.constrain(&mut logits, tokens.get(prompt.len()..).unwrap_or_default());
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
            logits = self
                .next(cross, &[next], &mut cache)?
                .pop()
                .unwrap_or_default();
        }
        let generated = tokens.split_off(prompt.len());
        self.decoded(generated, sum_logprob, no_speech_prob, looped, temperature)
    }

    /// Beam search at temperature 0 (Whisper's): each step extends every hypothesis by its
    /// `beam + 1` likeliest tokens and keeps the `beam` best by summed log-probability; a
    /// hypothesis that ends is set aside, and the search stops once `beam` have ended. The
    /// winner has the best log-probability per token.
    ///
    /// A window that is probably not speech (`<|nospeech|>` above its threshold) is decoded
    /// greedily instead: the silence guard weighs the no-speech probability against the
    /// text's log-probability, and a search for the likeliest text finds likelier nonsense in
    /// noise (base heard "1,5,5,5,5,5,5" in white noise at −0.97 where greedy decoding scored
    /// below −1 and was judged silence).
    fn beam_search(
        &mut self,
        cross: &Cross,
        prompt: &[u32],
        sot_at: usize,
        limit: usize,
    ) -> Result<Decoded, SpeechError> {
        let beam = self.beam_size;
        let mut cache = Cache::default();
        let (logits, no_speech_prob) = self.start(cross, prompt, sot_at, &mut cache)?;
        if no_speech_prob > NO_SPEECH_THRESHOLD {
            let mut unused = XorShift::new(0);
            return self.decode(cross, prompt, sot_at, 0.0, limit, &mut unused);
        }
        let mut rows = vec![logits];
        let mut live: Vec<(Vec<u32>, f64)> = vec![(Vec::new(), 0.0)];
        let mut ended: Vec<(Vec<u32>, f64)> = Vec::new();
        for _ in 0..limit {
            let mut candidates: Vec<(usize, u32, f64)> = Vec::new();
            for (from, ((generated, sum), logits)) in live.iter().zip(rows.iter_mut()).enumerate() {
                let logprobs = self.constrain(logits, generated);
                for (token, lp) in sampling::top_k(&logprobs, beam + 1) {
                    candidates.push((from, token, sum + lp));
                }
            }
            candidates.sort_by(|a, b| b.2.total_cmp(&a.2));
            let mut next_live = Vec::with_capacity(beam);
            let mut sources = Vec::with_capacity(beam);
            for (from, token, score) in candidates {
                let Some((generated, _)) = live.get(from) else {
                    continue;
                };
                if token == self.specials.eot {
                    if ended.len() < beam {
                        ended.push((generated.clone(), score));
                    }
                } else {
                    let mut extended = generated.clone();
                    extended.push(token);
                    let text: Vec<u32> = extended
                        .iter()
                        .copied()
                        .filter(|t| *t < self.specials.eot)
                        .collect();
                    if token < self.specials.eot && guards::doubled_tail(&text) {
                        continue;
                    }
                    next_live.push((extended, score));
                    sources.push(u32::try_from(from).unwrap_or(0));
                    if next_live.len() == beam {
                        break;
                    }
                }
            }
            live = next_live;
            if ended.len() >= beam || live.is_empty() {
                break;
            }
            let last: Vec<u32> = live
                .iter()
                .filter_map(|(generated, _)| generated.last().copied())
                .collect();
            cache = cache.select(&sources).map_err(|e| self.inference(&e))?;
            rows = self.next(cross, &last, &mut cache)?;
        }
        if ended.is_empty() {
            ended = live;
        }
        let best = ended.into_iter().max_by(|a, b| {
            let per_token = |(tokens, sum): &(Vec<u32>, f64)| sum / tokens.len().max(1) as f64;
            per_token(a).total_cmp(&per_token(b))
        });
        let (mut generated, sum_logprob) = best.unwrap_or_default();
        let looped = self.cut_loop(&mut generated, 0);
        self.decoded(generated, sum_logprob, no_speech_prob, looped, 0.0)
    }

    /// The scores of a finished decode of `generated` (text and timestamp tokens).
    fn decoded(
        &self,
        generated: Vec<u32>,
        sum_logprob: f64,
        no_speech_prob: f64,
        looped: bool,
        temperature: f64,
    ) -> Result<Decoded, SpeechError> {
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
