//! Listening: F2 starts and stops the listener, and what it hears goes into the answer box
//! after whatever was typed before, replaced as the transcript grows. Editing the box while
//! listening keeps the edit: later transcripts stay out of it (the moderator's word wins).

use super::{Action, App, KeyFocus, Mode};
use crate::speech::live::LiveEvent;
use crate::tui::strings;

/// Where listening is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeechPhase {
    /// Asked to listen; the model may be loading.
    Starting,
    Loading,
    Listening,
    /// Asked to stop; the final transcript is on its way.
    Finishing,
}

/// The answer box while listening.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeechUi {
    pub phase: SpeechPhase,
    /// Input level, RMS of the last tenth of a second.
    pub level: f32,
    /// Seconds recorded.
    pub seconds: f64,
    /// The answer box's text when listening began: the transcript goes after it.
    pub prefix: String,
    /// The transcript last put in the box.
    pub shown: String,
    /// The box was edited while listening: transcripts no longer go into it.
    pub held: bool,
}

impl App {
    /// F2: start listening, or stop.
    pub(super) fn toggle_listening(&mut self) -> Vec<Action> {
        if self.mode == Mode::Watch {
            self.ui.flash = Some(strings::WAIT_WATCH.to_owned());
            return Vec::new();
        }
        if !self.ui.speech_available {
            self.ui.flash = Some(strings::SPEECH_OFF.to_owned());
            return Vec::new();
        }
        if self.ui.editing {
            self.ui.flash = Some("finish editing the question first".to_owned());
            return Vec::new();
        }
        match self.ui.speech.as_mut() {
            Some(s) if s.phase == SpeechPhase::Finishing => Vec::new(),
            Some(s) => {
                s.phase = SpeechPhase::Finishing;
                vec![Action::Listen(false)]
            }
            None => {
                self.ui.flash = None;
                self.ui.focus = KeyFocus::Answer;
                self.ui.speech = Some(SpeechUi {
                    phase: SpeechPhase::Starting,
                    level: 0.0,
                    seconds: 0.0,
                    prefix: self.input_text(),
                    shown: String::new(),
                    held: false,
                });
                vec![Action::Listen(true)]
            }
        }
    }

    /// Folds what the listener reports.
    pub(super) fn heard(&mut self, event: LiveEvent) {
        match event {
            LiveEvent::Failed { message } => {
                self.ui.speech = None;
                self.ui.flash = Some(format!("speech: {message}"));
            }
            LiveEvent::Final(spoken) => {
                if self.ui.speech.is_some() {
                    self.put_transcript(&spoken.text);
                    if spoken.text.trim().is_empty() {
                        self.ui.flash = Some("no speech heard".to_owned());
                    } else {
                        self.ui.heard = Some(crate::domain::AnswerSpeech {
                            model: spoken.model,
                            duration_seconds: spoken.duration_seconds,
                            mean_logprob: spoken.mean_logprob,
                            audio_file: spoken.audio_file,
                        });
                    }
                }
                self.ui.speech = None;
            }
            LiveEvent::Partial { text } => self.put_transcript(&text),
            LiveEvent::Loading { .. } => self.set_phase(SpeechPhase::Loading),
            LiveEvent::Listening { .. } => self.set_phase(SpeechPhase::Listening),
            LiveEvent::Level { level, seconds } => {
                if let Some(s) = self.ui.speech.as_mut() {
                    s.level = level;
                    s.seconds = seconds;
                }
            }
        }
    }

    fn set_phase(&mut self, phase: SpeechPhase) {
        if let Some(s) = self.ui.speech.as_mut()
            && s.phase != SpeechPhase::Finishing
        {
            s.phase = phase;
        }
    }

    /// Puts `text` after the prefix, unless the box was edited since the last transcript.
    fn put_transcript(&mut self, text: &str) {
        let current = self.input_text();
        let Some(s) = self.ui.speech.as_mut() else {
            return;
        };
        if s.held {
            return;
        }
        if current != joined(&s.prefix, &s.shown) {
            s.held = true;
            self.ui.flash = Some(strings::SPEECH_HELD.to_owned());
            return;
        }
        let clean = crate::tui::sanitize::clean(text.trim());
        s.shown.clone_from(&clean);
        let lines = joined(&s.prefix, &clean)
            .lines()
            .map(str::to_owned)
            .collect();
        self.reset_input(lines);
    }
}

/// The typed prefix and the transcript, a space between them.
fn joined(prefix: &str, transcript: &str) -> String {
    if prefix.trim().is_empty() {
        transcript.to_owned()
    } else if transcript.is_empty() {
        prefix.to_owned()
    } else {
        format!("{} {transcript}", prefix.trim_end())
    }
}
