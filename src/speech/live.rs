//! Live transcription: a worker thread that owns the speech model, records on demand and
//! reports what it hears as [`LiveEvent`]s.
//!
//! While listening it reports the input level ten times a second and, about once a second
//! when new sound (above [`SPEECH_GATE`]) has arrived, decodes the audio again and reports the
//! text so far. Audio older than a completed 30-second window is decoded once and kept, so a
//! long answer costs one window per update, not the whole answer. On stop (or when the
//! recorder's output ends) the rest is decoded once more and reported as [`Spoken`], then, if
//! the recorder died, why: the text heard so far is never lost. The model loads on first use
//! and stays loaded; the worker never touches the terminal and the app never waits for it.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;

use super::recorder::{Recorder, RecorderCommand};
use super::{ModelChoice, SAMPLE_RATE, SpeechError, SpeechModel, Transcript};
use crate::model_files::FetchConfig;

/// How often the level is reported while listening.
const LEVEL_EVERY: Duration = Duration::from_millis(100);

/// Least new audio (seconds) worth decoding again.
const MIN_NEW_SECONDS: f64 = 0.3;

/// RMS of new audio below which nothing new was said (about −54 dBFS): no decode.
pub const SPEECH_GATE: f32 = 0.002;

/// Samples in one of Whisper's 30-second windows.
const WINDOW_SAMPLES: usize = 30 * SAMPLE_RATE as usize;

/// How to listen.
#[derive(Debug, Clone)]
pub struct ListenConfig {
    /// `audio.command` from the settings file; probing when `None`.
    pub command: Option<String>,
    pub model: ModelChoice,
    /// Forced language (multilingual models).
    pub language: Option<String>,
    pub fetch: FetchConfig,
    /// How often the growing answer is decoded again.
    pub partial_every: Duration,
    /// Where each answer's recording is kept (`--keep-audio`: the session's audio folder),
    /// `None` to keep nothing.
    pub keep: Option<std::path::PathBuf>,
}

/// An answer heard and transcribed: its text and how it was heard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spoken {
    pub text: String,
    pub model: String,
    pub duration_seconds: f64,
    /// Mean log-probability of the text's tokens (0 when nothing was said).
    pub mean_logprob: f64,
    /// The kept recording (`--keep-audio`), relative to the database's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_file: Option<String>,
}

impl Spoken {
    /// From a transcript: its text, with the segments' log-probabilities averaged by tokens.
    pub fn from_transcript(transcript: &Transcript) -> Self {
        Self::from_parts(
            transcript.text(),
            &transcript.model,
            transcript.duration_seconds,
            transcript
                .segments
                .iter()
                .filter(|s| s.tokens > 0)
                .map(|s| (s.avg_logprob, s.tokens)),
        )
    }

    fn from_parts(
        text: String,
        model: &str,
        duration_seconds: f64,
        pieces: impl Iterator<Item = (f64, usize)>,
    ) -> Self {
        let (sum, tokens) = pieces.fold((0.0, 0_usize), |(sum, n), (logprob, tokens)| {
            (sum + logprob * tokens as f64, n + tokens)
        });
        Self {
            text,
            model: model.to_owned(),
            duration_seconds,
            mean_logprob: if tokens == 0 {
                0.0
            } else {
                sum / tokens as f64
            },
            audio_file: None,
        }
    }
}

/// What the worker reports.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveEvent {
    /// The model is being loaded (first use; may fetch it).
    Loading { model: String },
    /// Recording has started with this command.
    Listening { recorder: String },
    /// Input level (RMS of the last tenth of a second) and seconds recorded.
    Level { level: f32, seconds: f64 },
    /// The text heard so far.
    Partial { text: String },
    /// Listening ended: the whole answer.
    Final(Spoken),
    /// Listening could not start, or ended badly (after [`LiveEvent::Final`] with what was
    /// heard).
    Failed { message: String },
}

enum Control {
    Start,
    Stop,
    /// The turn of the question now on screen: the next answer's recording is kept under the
    /// turn after it.
    Turn(u32),
}

/// The worker's handle: start and stop never block.
#[derive(Debug)]
pub struct Listener {
    control: Option<Sender<Control>>,
    worker: Option<JoinHandle<()>>,
}

impl Listener {
    /// Starts the worker; events go to `events`.
    pub fn spawn(config: ListenConfig, events: UnboundedSender<LiveEvent>) -> Self {
        let (control, rx) = mpsc::channel();
        let worker = std::thread::Builder::new()
            .name("listener".to_owned())
            .spawn(move || Worker::new(config, events).run(&rx))
            .ok();
        Self {
            control: Some(control),
            worker,
        }
    }

    pub fn start(&self) {
        self.send(Control::Start);
    }

    pub fn stop(&self) {
        self.send(Control::Stop);
    }

    /// The turn of the question the respondent is answering.
    pub fn set_turn(&self, turn: u32) {
        self.send(Control::Turn(turn));
    }

    fn send(&self, control: Control) {
        if let Some(tx) = &self.control {
            let _ = tx.send(control);
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        // Closing the channel ends the worker: it stops any recorder without decoding.
        self.control = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// Why a listen ended.
enum End {
    Asked,
    Ended,
    Shutdown,
}

struct Worker {
    config: ListenConfig,
    events: UnboundedSender<LiveEvent>,
    model: Option<SpeechModel>,
    /// The turn of the question on screen, from [`Listener::set_turn`].
    question_turn: u32,
}

/// Audio decoded so far in one listen: completed windows' text is kept.
#[derive(Default)]
struct Progress {
    /// Samples covered by `settled`, a multiple of [`WINDOW_SAMPLES`].
    settled_end: usize,
    settled: Vec<String>,
    /// Log-probability pieces of the settled windows.
    pieces: Vec<(f64, usize)>,
    /// The audio after `settled_end` holds speech: when the respondent goes quiet, one more
    /// decode settles it (so the final text is ready before anyone presses F2).
    unsettled_speech: bool,
}

impl Worker {
    fn new(config: ListenConfig, events: UnboundedSender<LiveEvent>) -> Self {
        Self {
            config,
            events,
            model: None,
            question_turn: 0,
        }
    }

    fn emit(&self, event: LiveEvent) {
        let _ = self.events.send(event);
    }

    fn run(mut self, control: &Receiver<Control>) {
        loop {
            match control.recv() {
                Ok(Control::Start) => {}
                Ok(Control::Stop) => continue,
                Ok(Control::Turn(turn)) => {
                    self.question_turn = turn;
                    continue;
                }
                Err(_) => return,
            }
            if let Err(message) = self.ensure_model() {
                self.emit(LiveEvent::Failed { message });
                continue;
            }
            let recorder = match RecorderCommand::choose(self.config.command.as_deref())
                .and_then(Recorder::start)
            {
                Ok(r) => r,
                Err(e) => {
                    self.emit(LiveEvent::Failed {
                        message: e.to_string(),
                    });
                    continue;
                }
            };
            self.emit(LiveEvent::Listening {
                recorder: recorder.command().to_owned(),
            });
            if matches!(self.listen(&recorder, control), End::Shutdown) {
                return;
            }
        }
    }

    fn ensure_model(&mut self) -> Result<(), String> {
        if self.model.is_some() {
            return Ok(());
        }
        self.emit(LiveEvent::Loading {
            model: self.config.model.name(),
        });
        let model = self
            .config
            .model
            .load(&self.config.fetch)
            .map_err(|e| e.to_string())?;
        self.model = Some(model);
        Ok(())
    }

    /// One listen, from a started recorder to the final text.
    fn listen(&mut self, recorder: &Recorder, control: &Receiver<Control>) -> End {
        let mut progress = Progress::default();
        let mut decoded_len = 0;
        let mut last_decode = Instant::now();
        let mut last_text = String::new();
        // The last decode's result and how much audio it covered.
        // Only a settling decode (beam search) is kept as the final text: a regular update's
        // greedy preview is decoded again.
        let mut last_spoken: Option<(Spoken, usize)> = None;
        let end = loop {
            match control.recv_timeout(LEVEL_EVERY) {
                Ok(Control::Stop) => break End::Asked,
                Err(RecvTimeoutError::Disconnected) => break End::Shutdown,
                // Kept under the turn it was asked for; the next listen takes this one.
                Ok(Control::Turn(turn)) => self.question_turn = turn,
                Ok(Control::Start) | Err(RecvTimeoutError::Timeout) => {}
            }
            let (len, level, ended) =
                recorder.with(|c| (c.samples.len(), c.level, c.ended.is_some() || c.full));
            self.emit(LiveEvent::Level {
                level,
                seconds: len as f64 / f64::from(SAMPLE_RATE),
            });
            if ended {
                break End::Ended;
            }
            let new_enough =
                len.saturating_sub(decoded_len) as f64 >= MIN_NEW_SECONDS * f64::from(SAMPLE_RATE);
            // The respondent just went quiet after speaking: decode at once rather than at
            // the next tick, so the answer's last words reach the box as soon as they can. The
            // speech may be in the new audio, or in what the last preview decoded greedily
            // and nothing has settled since.
            let unsettled_preview = last_spoken.is_none() && progress.unsettled_speech;
            let fell_quiet = new_enough
                && recorder.with(|c| {
                    fell_quiet(
                        c.samples.get(decoded_len..len).unwrap_or_default(),
                        unsettled_preview,
                    )
                });
            if (last_decode.elapsed() >= self.config.partial_every && new_enough) || fell_quiet {
                let heard = recorder
                    .with(|c| super::model::rms(c.samples.get(decoded_len..).unwrap_or_default()));
                decoded_len = len;
                last_decode = Instant::now();
                // Quiet since the last decode: decode only to settle what was said before, and
                // not again once it is settled (the text in the box stays as it is).
                let quiet = heard < SPEECH_GATE;
                if quiet && (!progress.unsettled_speech || last_spoken.is_some()) {
                    continue;
                }
                let quality = if fell_quiet || quiet {
                    Decoding::Settle
                } else {
                    Decoding::Preview
                };
                match self.decode(recorder, &mut progress, len, quality) {
                    Ok(spoken) => {
                        if spoken.text != last_text {
                            last_text.clone_from(&spoken.text);
                            self.emit(LiveEvent::Partial {
                                text: spoken.text.clone(),
                            });
                        }
                        last_spoken = (quality == Decoding::Settle).then_some((spoken, len));
                    }
                    // Said once: the final decode would only fail the same way.
                    Err(e) => {
                        self.emit(LiveEvent::Failed {
                            message: e.to_string(),
                        });
                        return End::Asked;
                    }
                }
            }
        };
        if matches!(end, End::Shutdown) {
            return end;
        }
        // Everything the recorder wrote, then the final decode, unless nothing was said since
        // the last one: then the text in the box is the answer, as the respondent saw it.
        let (len, died) = recorder.with(|c| {
            (
                c.samples.len(),
                c.ended.clone().flatten().map(|e| e.to_string()),
            )
        });
        let said_since = |covered: usize| {
            recorder.with(|c| has_speech(c.samples.get(covered..len).unwrap_or_default()))
        };
        let settled = match last_spoken {
            Some((spoken, covered)) if !said_since(covered) => Some(Spoken {
                duration_seconds: len as f64 / f64::from(SAMPLE_RATE),
                ..spoken
            }),
            _ => None,
        };
        match settled.map_or_else(
            || self.decode(recorder, &mut progress, len, Decoding::Settle),
            Ok,
        ) {
            Ok(spoken) => {
                let spoken = self.keep(recorder, len, spoken);
                self.emit(LiveEvent::Final(spoken));
            }
            Err(e) => self.emit(LiveEvent::Failed {
                message: e.to_string(),
            }),
        }
        if let Some(message) = died {
            self.emit(LiveEvent::Failed { message });
        }
        end
    }

    /// With `--keep-audio`, writes the listen's recording (its first `len` samples) into the
    /// session's audio folder under the answer's turn and names it on `spoken`; a recording
    /// that cannot be written is reported and the text still goes to the box.
    fn keep(&self, recorder: &Recorder, len: usize, mut spoken: Spoken) -> Spoken {
        let Some(dir) = self.config.keep.as_deref() else {
            return spoken;
        };
        if spoken.text.trim().is_empty() {
            return spoken;
        }
        let turn = self.question_turn + 1;
        let kept = recorder
            .with(|c| super::keep_samples(c.samples.get(..len).unwrap_or_default(), dir, turn));
        match kept {
            Ok(name) => spoken.audio_file = Some(name),
            Err(e) => self.emit(LiveEvent::Failed {
                message: format!("cannot keep the audio in {}: {e}", dir.display()),
            }),
        }
        spoken
    }

    /// The text of the first `len` samples. Audio up to the last pause (or a full 30-second
    /// window) is decoded once and settled; only the audio after it is decoded again, and not
    /// at all when nothing was said since. So when the respondent stops, the next update
    /// settles the whole answer and the final text needs no decoding.
    ///
    /// Settled pieces are always decoded by beam search; the audio after the last one is too
    /// when `quality` settles (the respondent fell quiet, or listening ended), and greedily for
    /// a regular update's preview, which costs about half as much and is not retried at higher
    /// temperatures, so an update running when the respondent stops delays the final text less.
    fn decode(
        &mut self,
        recorder: &Recorder,
        progress: &mut Progress,
        len: usize,
        quality: Decoding,
    ) -> Result<Spoken, SpeechError> {
        let language = self.config.language.clone();
        let Some(model) = self.model.as_mut() else {
            return Err(SpeechError::Unavailable(self.config.model.name()));
        };
        loop {
            let open = recorder.with(|c| {
                c.samples
                    .get(progress.settled_end..len)
                    .unwrap_or_default()
                    .to_vec()
            });
            let cut = if open.len() >= WINDOW_SAMPLES {
                Some(
                    last_pause(open.get(..WINDOW_SAMPLES).unwrap_or_default())
                        .unwrap_or(WINDOW_SAMPLES),
                )
            } else {
                last_pause(&open).or_else(|| quietest_gap(&open))
            };
            let Some(cut) = cut else {
                break;
            };
            let piece = open.get(..cut).unwrap_or_default();
            if super::model::rms(piece) >= SPEECH_GATE || has_speech(piece) {
                model.set_beam_size(super::model::BEAM_SIZE);
                model.set_fallback(true);
                let transcript = model.transcribe(piece, language.as_deref())?;
                let spoken = Spoken::from_transcript(&transcript);
                progress.settled.push(spoken.text.clone());
                progress.pieces.push((
                    spoken.mean_logprob,
                    transcript.segments.iter().map(|s| s.tokens).sum(),
                ));
            }
            progress.settled_end += cut;
        }
        let tail = recorder.with(|c| {
            c.samples
                .get(progress.settled_end..len)
                .unwrap_or_default()
                .to_vec()
        });
        let mut texts = progress.settled.clone();
        let mut pieces = progress.pieces.clone();
        progress.unsettled_speech = has_speech(&tail);
        if progress.unsettled_speech {
            model.set_beam_size(match quality {
                Decoding::Settle => super::model::BEAM_SIZE,
                Decoding::Preview => 1,
            });
            model.set_fallback(quality == Decoding::Settle);
            let transcript = model.transcribe(&tail, language.as_deref())?;
            let spoken = Spoken::from_transcript(&transcript);
            texts.push(spoken.text);
            pieces.push((
                spoken.mean_logprob,
                transcript.segments.iter().map(|s| s.tokens).sum(),
            ));
        }
        let text = texts
            .iter()
            .map(|t| t.trim())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Spoken::from_parts(
            text,
            model.name(),
            len as f64 / f64::from(SAMPLE_RATE),
            pieces.into_iter().filter(|(_, n)| *n > 0),
        ))
    }
}

/// Whether the audio since the last decode (`new`) ends in a pause ([`PAUSE_TENTHS`]) after
/// speech: speech in `new` before the pause, or `unsettled` speech decoded earlier.
fn fell_quiet(new: &[f32], unsettled: bool) -> bool {
    let quiet = PAUSE_TENTHS * TENTH;
    new.len() > quiet
        && super::model::rms(new.get(new.len() - quiet..).unwrap_or_default()) < SPEECH_GATE
        && (unsettled || has_speech(new.get(..new.len() - quiet).unwrap_or_default()))
}

/// How the audio after the last settled piece is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decoding {
    /// A regular update while the respondent speaks: greedy, and no retries at higher
    /// temperatures.
    Preview,
    /// The text that stays (the respondent fell quiet, or listening ended): beam search.
    Settle,
}

/// Samples per tenth of a second, the unit pauses are measured in.
const TENTH: usize = SAMPLE_RATE as usize / 10;

/// Tenths of quiet that make a pause between phrases.
const PAUSE_TENTHS: usize = 3;

/// Tenths of quiet after which the respondent has finished a thought (or the answer): the text
/// before is settled however short it is.
const LONG_PAUSE_TENTHS: usize = 8;

/// Tenths of audio a piece must hold before a short pause settles it: Whisper reads a phrase
/// better with the sentence around it.
const MIN_PIECE_TENTHS: usize = 40;

/// Whether any tenth of a second of `samples` is louder than [`SPEECH_GATE`].
fn has_speech(samples: &[f32]) -> bool {
    samples
        .chunks(TENTH)
        .any(|c| super::model::rms(c) >= SPEECH_GATE)
}

/// Where the audio can be cut between phrases: the last run of quiet tenths of a second, with
/// speech before it, that is either long ([`LONG_PAUSE_TENTHS`]) or a pause
/// ([`PAUSE_TENTHS`]) at least [`MIN_PIECE_TENTHS`] into the audio; cut in its middle, or at
/// its end when it ends the audio. `None` when there is no such pause (the respondent is
/// mid-phrase, or has said nothing).
fn last_pause(samples: &[f32]) -> Option<usize> {
    let loud: Vec<bool> = samples
        .chunks(TENTH)
        .map(|c| c.len() == TENTH && super::model::rms(c) >= SPEECH_GATE)
        .collect();
    let mut best = None;
    let mut run_start = None;
    let mut spoke = false;
    for (i, is_loud) in loud
        .iter()
        .copied()
        .chain(std::iter::once(true))
        .enumerate()
    {
        if is_loud {
            if let Some(start) = run_start.take()
                && spoke
            {
                let run = i - start;
                let end = if i >= loud.len() {
                    loud.len()
                } else {
                    usize::midpoint(start, i)
                };
                if run >= LONG_PAUSE_TENTHS || (run >= PAUSE_TENTHS && end >= MIN_PIECE_TENTHS) {
                    best = Some(end * TENTH);
                }
            }
            spoke = spoke || i < loud.len();
        } else if run_start.is_none() {
            run_start = Some(i);
        }
    }
    best.map(|b: usize| b.min(samples.len()))
}

/// Tenths of unsettled audio past which a shorter gap settles it: without a pause the text
/// after the last settled piece is decoded again at every update and once more at the end, so
/// it must not grow without bound.
const LONG_TAIL_TENTHS: usize = 60;

/// In audio of at least [`LONG_TAIL_TENTHS`] with no pause [`last_pause`] takes, the middle of
/// its longest quiet stretch (at least a tenth of a second, between words or sentences) that
/// leaves [`MIN_PIECE_TENTHS`] before it; the latest of equals. `None` when there is none.
fn quietest_gap(samples: &[f32]) -> Option<usize> {
    let quiet: Vec<bool> = samples
        .chunks(TENTH)
        .map(|c| c.len() == TENTH && super::model::rms(c) < SPEECH_GATE)
        .collect();
    if quiet.len() < LONG_TAIL_TENTHS {
        return None;
    }
    let mut best: Option<(usize, usize)> = None;
    let mut start = None;
    for (i, is_quiet) in quiet
        .iter()
        .copied()
        .chain(std::iter::once(false))
        .enumerate()
    {
        match (is_quiet, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                start = None;
                let middle = usize::midpoint(s, i);
                let run = i - s;
                if middle >= MIN_PIECE_TENTHS
                    && i < quiet.len()
                    && best.is_none_or(|(r, _)| run >= r)
                {
                    best = Some((run, middle));
                }
            }
            _ => {}
        }
    }
    best.map(|(_, middle)| middle * TENTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(tenths: usize) -> Vec<f32> {
        (0..tenths * TENTH)
            .map(|i| 0.1 * (i as f32 * 0.05).sin())
            .collect()
    }

    #[test]
    fn pauses_between_phrases_are_cut_points() {
        let quiet = |tenths: usize| vec![0.0_f32; tenths * TENTH];
        // Four seconds of speech, a pause of 0.4 s, more speech: cut in the pause's middle.
        let audio = [tone(40), quiet(4), tone(5)].concat();
        assert_eq!(last_pause(&audio), Some(42 * TENTH));
        // The same pause after one second of speech is too early to settle…
        assert_eq!(last_pause(&[tone(10), quiet(4), tone(5)].concat()), None);
        // …unless it is long: the respondent finished a thought.
        let audio = [tone(10), quiet(8), tone(5)].concat();
        assert_eq!(last_pause(&audio), Some(14 * TENTH));
        // Trailing quiet after speech: everything can be settled.
        let audio = [tone(10), quiet(9)].concat();
        assert_eq!(last_pause(&audio), Some(19 * TENTH));
        // A short breath is no pause; silence alone is nothing to settle.
        assert_eq!(last_pause(&[tone(50), quiet(2), tone(5)].concat()), None);
        assert_eq!(last_pause(&quiet(20)), None);
        assert!(!has_speech(&quiet(3)));
        assert!(has_speech(&tone(1)));
    }

    #[test]
    fn a_long_answer_without_pauses_is_cut_at_its_longest_gap() {
        let quiet = |tenths: usize| vec![0.0_f32; tenths * TENTH];
        // Short gaps only (no pause `last_pause` takes): under six seconds it waits…
        let short = [tone(30), quiet(1), tone(20)].concat();
        assert_eq!(last_pause(&short), None);
        assert_eq!(quietest_gap(&short), None);
        // …past six, the longest gap after four seconds of speech settles it.
        let long = [
            tone(20),
            quiet(2),
            tone(25),
            quiet(1),
            tone(10),
            quiet(2),
            tone(5),
        ]
        .concat();
        assert_eq!(last_pause(&long), None);
        assert_eq!(quietest_gap(&long), Some(59 * TENTH));
        // No gap at all: nothing to cut at.
        assert_eq!(quietest_gap(&tone(70)), None);
    }

    #[test]
    fn spoken_metadata_averages_log_probabilities_by_tokens() {
        let spoken = Spoken::from_parts(
            "a b".to_owned(),
            "m",
            2.0,
            [(-0.5, 10), (-1.0, 30)].into_iter(),
        );
        assert!((spoken.mean_logprob + 0.875).abs() < 1e-9);
        let silent = Spoken::from_parts(String::new(), "m", 1.0, std::iter::empty());
        assert!(silent.mean_logprob.abs() < f64::EPSILON);
    }

    #[test]
    fn a_listener_without_a_model_says_so_and_stays_usable() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let missing = tempfile::tempdir().unwrap();
        let listener = Listener::spawn(
            ListenConfig {
                command: Some("cat /dev/null".to_owned()),
                model: ModelChoice::Path(missing.path().join("nothing")),
                language: None,
                fetch: FetchConfig::from_env(),
                partial_every: Duration::from_secs(1),
                keep: None,
            },
            tx,
        );
        listener.start();
        let mut seen = Vec::new();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            match rx.try_recv() {
                Ok(LiveEvent::Failed { message }) => {
                    seen.push(message);
                    break;
                }
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].contains("nothing"), "{seen:?}");
        listener.stop();
        drop(listener);
    }
}
