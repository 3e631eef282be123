//! `interviewer interview`: a whole interview without the terminal UI.
//!
//! Questions go to stdout (or, with `--json`, one `TurnResult` per line); answers come from a
//! file or stdin, one paragraph per answer (paragraphs are separated by a blank line). The file's
//! k-th answer is turn k's answer, so re-running the same command with `--resume` after a
//! crash continues where it stopped. Progress and the session id go to stderr. The session
//! runs on the one session driver (`session::driver`), with the answers file as its source.

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Read};

use clap::Args;

use super::setup::{
    LlmOptions, Resume, SessionChoice, StageFlags, open_resolved, prepare, resolve_session,
};
use super::{CliError, emit};
use crate::config::ConfigDir;
use crate::domain::{Understanding, counted};
use crate::pipeline::{Event, MAX_ANSWER_CHARS, TurnError, TurnResult, answer_chars};
use crate::session::{AnswerSource, Command, Ending, SourceError, Waiting};
use futures::FutureExt;
use futures::future::LocalBoxFuture;

/// Turns an interview runs when `--max-turns` is not given.
pub const DEFAULT_MAX_TURNS: u32 = 20;

#[derive(Debug, Args)]
pub struct InterviewArgs {
    /// Concept: an id from the config directory or a path to a concept YAML file.
    #[arg(long, short = 'c', required_unless_present = "resume")]
    pub concept: Option<String>,
    /// Methodology: an id or a YAML path (default: the concept's methodology).
    #[arg(long, short = 'm')]
    pub methodology: Option<String>,
    /// Maximum number of turns (new sessions only).
    #[arg(long, default_value_t = DEFAULT_MAX_TURNS, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub max_turns: u32,
    /// Answers, one paragraph each, separated by blank lines; `-` reads stdin.
    #[arg(
        long,
        short = 'a',
        value_name = "FILE|-",
        required_unless_present = "answers_audio",
        conflicts_with = "answers_audio"
    )]
    pub answers: Option<String>,
    /// Spoken answers, one audio file per answer in turn order (WAV, MP3, Ogg Vorbis, FLAC,
    /// M4A/AAC), transcribed offline with
    /// Whisper; each answer is saved with how it was heard (model, duration, mean
    /// log-probability).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub answers_audio: Vec<std::path::PathBuf>,
    /// Speech model for `--answers-audio`: `tiny.en`, `base` or a model directory (default:
    /// the settings file's `audio.model`, else `base` for a non-English `--language`, else
    /// `tiny.en`).
    #[arg(long, value_name = "NAME|DIR")]
    pub speech_model: Option<String>,
    /// Language of the spoken answers (`en`, `de`, …).
    #[arg(long, value_name = "CODE")]
    pub language: Option<String>,
    /// Keep each spoken answer's audio beside the database (`<db>.audio/<session>/`, files
    /// 0600), named in the JSON export and deleted with the session.
    #[arg(long, requires = "answers_audio")]
    pub keep_audio: bool,
    /// Read each question aloud with a text-to-speech program (`audio.speak`, else spd-say,
    /// espeak-ng or say).
    #[arg(long)]
    pub speak: bool,
    /// Print one `TurnResult` JSON object per line instead of the questions.
    #[arg(long)]
    pub json: bool,
    /// Continue a session: its id, or `latest` for the most recently active one.
    #[arg(long, value_name = "SESSION_ID|latest")]
    pub resume: Option<String>,
    #[command(flatten)]
    pub stages: StageFlags,
}

pub fn run(
    dir: &ConfigDir,
    db: &std::path::Path,
    llm: &LlmOptions,
    args: &InterviewArgs,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let choice = SessionChoice {
        concept: args.concept.clone(),
        methodology: args.methodology.clone(),
        max_turns: args.max_turns,
        resume: args.resume.clone().map(|typed| Resume {
            typed,
            argument: "--resume",
        }),
        understanding: Understanding::default(),
    };
    // Everything that needs no model first, so a mistake is reported before any download.
    let resolved = resolve_session(dir, db, &choice)?;
    let typed = args.answers.as_deref().map(AnswerFile::open).transpose()?;
    let mut spoken = match typed {
        Some(_) => None,
        None => Some(SpokenAnswers::open(llm, args, resolved.concept())?),
    };
    let mut voice = super::setup::voice(llm, args.speak)?;
    let prepared = prepare(dir, llm, args.stages)?;
    let interview = open_resolved(resolved, db, prepared.understanding, prepared.services)?;
    let id = interview.session_id().to_owned();
    if let Some(s) = spoken.as_mut().filter(|_| args.keep_audio) {
        s.keep = Some(crate::speech::kept_audio_dir(db, &id));
    }
    let mut answers: Box<dyn AnswerSource> = match (typed, spoken) {
        (Some(file), _) => Box::new(file),
        (None, Some(s)) => Box::new(s),
        (None, None) => return Err(CliError::Usage("no answers given".to_owned())),
    };
    eprintln!("session {id} (continue it with --resume {id})");
    let json = args.json;
    let mut write_error = None;
    let (_, ending) = crate::session::driver::run(interview, answers.as_mut(), |event| {
        let Some(event) = event.pipeline() else {
            return;
        };
        if write_error.is_some() {
            return;
        }
        if let Some(v) = voice.as_mut() {
            let question = match event {
                Event::Question { turn: 0, text, .. } => Some(text.as_str()),
                Event::TurnCompleted(result) => Some(result.next_question.as_str()),
                _ => None,
            };
            if let Some(q) = question.filter(|q| !q.is_empty()) {
                v.say(q);
                v.finish();
            }
        }
        let shown = match event {
            Event::Question { turn: 0, text, .. } => show_question(out, json, 0, text),
            Event::TurnCompleted(result) => show_result(out, json, result),
            Event::Warning { message } => {
                eprintln!("warning: {message}");
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = shown {
            write_error = Some(e);
        }
    })
    .map_err(|e| CliError::Input(e.to_string()))?;
    if let Some(e) = write_error {
        return Err(e);
    }
    match ending {
        Ending::Finished(reason) => {
            eprintln!("interview finished: {reason}");
            Ok(())
        }
        Ending::OutOfAnswers { turn } => {
            eprintln!("answers ran out before turn {turn}; session {id} stays resumable");
            Ok(())
        }
        Ending::Failed(e) => Err(turn_error(e)),
        Ending::Source(e) => Err(CliError::Input(e.to_string())),
        Ending::Fatal(message) => Err(CliError::Input(message)),
        Ending::Stuck { steps } => Err(CliError::Input(format!(
            "session {id}: still running after {steps} steps; this is a bug, please report it"
        ))),
        Ending::Shutdown => Ok(()),
    }
}

fn show_question(
    out: &mut dyn std::io::Write,
    json: bool,
    turn: u32,
    question: &str,
) -> Result<(), CliError> {
    if json {
        eprintln!("opening question: {question}");
        Ok(())
    } else {
        emit(out, &format!("[turn {turn}] {question}\n"))
    }
}

fn show_result(
    out: &mut dyn std::io::Write,
    json: bool,
    result: &TurnResult,
) -> Result<(), CliError> {
    if json {
        let line = serde_json::to_string(result)
            .map_err(|e| CliError::Input(format!("cannot serialise the turn result: {e}")))?;
        return emit(out, &format!("{line}\n"));
    }
    let focus = result
        .focus
        .as_ref()
        .map(|f| format!(" → {}", f.label))
        .unwrap_or_default();
    let mut text = format!(
        "[turn {} · {}{} · +{} +{} · {} ms] {}\n",
        result.turn_number,
        result.strategy_selected,
        focus,
        counted(result.nodes_added.len(), "node"),
        counted(result.edges_added.len(), "edge"),
        result.latency_ms,
        result.next_question
    );
    if let Some(reason) = &result.termination_reason {
        text.push_str(&format!("(interview ends: {reason})\n"));
    }
    emit(out, &text)
}

#[allow(clippy::needless_pass_by_value)] // consumes the error the way `map_err` hands it over
fn turn_error(e: TurnError) -> CliError {
    let message = e.to_string();
    if e.error.is_llm() {
        CliError::Llm(format!("{message}; run again with --resume to retry"))
    } else {
        CliError::Input(message)
    }
}

/// Spoken answers: one audio file per turn, each transcribed when its turn comes.
struct SpokenAnswers {
    files: Vec<std::path::PathBuf>,
    model: crate::speech::SpeechModel,
    language: Option<String>,
    /// Where the answers' audio is kept (`--keep-audio`).
    keep: Option<std::path::PathBuf>,
}

impl SpokenAnswers {
    /// Checks every file before the model loads (a missing or unreadable file is reported at
    /// once, naming it), then loads the speech model.
    fn open(
        llm: &LlmOptions,
        args: &InterviewArgs,
        concept: &crate::config::Concept,
    ) -> Result<Self, CliError> {
        // Decoded (not resampled) here to find a bad file before anything is stored; each is
        // decoded again at its turn rather than all held in memory.
        for path in &args.answers_audio {
            crate::speech::read_audio_file(path)
                .map_err(|e| CliError::Input(format!("--answers-audio {}: {e}", path.display())))?;
        }
        let mut listen = super::setup::listen_config(llm, Some(concept))?;
        if let Some(language) = &args.language {
            listen.language = Some(language.trim().to_ascii_lowercase());
            if listen.language.as_deref() != Some("en") && args.speech_model.is_none() {
                listen.model = crate::speech::ModelChoice::Base;
            }
        }
        if let Some(model) = &args.speech_model {
            listen.model = crate::speech::ModelChoice::parse(model);
        }
        let fetch = crate::model_files::FetchConfig::from_env();
        let mut model = listen
            .model
            .load(&fetch)
            .map_err(|e| CliError::Llm(format!("speech model: {e}")))?;
        // Each answer is heard in the study's context (Whisper's initial prompt).
        model
            .set_prompt(&super::setup::speech_context(concept))
            .map_err(|e| CliError::Llm(format!("speech model: {e}")))?;
        Ok(Self {
            files: args.answers_audio.clone(),
            model,
            language: listen.language,
            keep: None,
        })
    }
}

impl AnswerSource for SpokenAnswers {
    /// Turn `k`'s answer is file `k`: a resumed session skips the files of the turns it has.
    fn next<'a>(
        &'a mut self,
        waiting: &'a Waiting<'a>,
    ) -> LocalBoxFuture<'a, Result<Option<Command>, SourceError>> {
        let turn = waiting.turn;
        async move {
            let Some(path) = usize::try_from(turn)
                .ok()
                .and_then(|t| t.checked_sub(1))
                .and_then(|i| self.files.get(i))
            else {
                return Ok(None);
            };
            let name = path.display().to_string();
            let (samples, _) = crate::speech::read_audio(path)
                .map_err(|e| Box::new(CliError::Input(format!("{name}: {e}"))) as SourceError)?;
            let transcript = self
                .model
                .transcribe(&samples, self.language.as_deref())
                .map_err(|e| Box::new(CliError::Input(format!("{name}: {e}"))) as SourceError)?;
            let heard = crate::speech::live::Spoken::from_transcript(&transcript);
            if heard.text.trim().is_empty() {
                return Err(Box::new(CliError::Input(format!(
                    "{name}: no speech heard (silence or noise); the session stays resumable"
                ))) as SourceError);
            }
            eprintln!("[turn {turn}] heard ({name}): {}", heard.text);
            let audio_file = match &self.keep {
                Some(dir) => Some(crate::speech::keep_audio(path, dir, turn).map_err(|e| {
                    Box::new(CliError::Input(format!(
                        "{name}: cannot keep the audio in {}: {e}",
                        dir.display()
                    ))) as SourceError
                })?),
                None => None,
            };
            Ok(Some(Command::SpokenAnswer {
                text: heard.text,
                speech: crate::domain::AnswerSpeech {
                    model: heard.model,
                    duration_seconds: heard.duration_seconds,
                    mean_logprob: heard.mean_logprob,
                    audio_file,
                },
            }))
        }
        .boxed_local()
    }
}

/// Answers read one paragraph at a time, lazily, so a person can type them.
struct AnswerFile {
    reader: Box<dyn BufRead>,
    /// Answers read so far (the next one is answer `consumed + 1`).
    consumed: u32,
    /// Whether a person is typing (then nothing is skipped).
    interactive: bool,
    name: String,
    /// Whether the first line is still to come (a byte-order mark before it is dropped).
    at_start: bool,
}

impl AnswerSource for AnswerFile {
    /// The answer for the turn the session waits for: answer `k` belongs to turn `k`, so a
    /// resumed session skips the answers of the turns it already has.
    fn next<'a>(
        &'a mut self,
        waiting: &'a Waiting<'a>,
    ) -> LocalBoxFuture<'a, Result<Option<Command>, SourceError>> {
        let turn = waiting.turn;
        async move {
            self.skip_to(turn)?;
            Ok(self.next_answer()?.map(Command::Answer))
        }
        .boxed_local()
    }
}

impl AnswerFile {
    fn open(spec: &str) -> Result<Self, CliError> {
        if spec == "-" {
            let stdin = std::io::stdin();
            let interactive = stdin.is_terminal();
            if interactive {
                eprintln!(
                    "type each answer, then an empty line; Ctrl-D stops (the session stays resumable)"
                );
            }
            return Ok(Self::new(
                Box::new(BufReader::new(stdin)),
                interactive,
                "stdin",
            ));
        }
        let file = File::open(spec)
            .map_err(|e| CliError::Input(format!("--answers {spec}: cannot open: {e}")))?;
        Ok(Self::new(Box::new(BufReader::new(file)), false, spec))
    }

    fn new(reader: Box<dyn BufRead>, interactive: bool, name: &str) -> Self {
        Self {
            reader,
            consumed: 0,
            interactive,
            name: name.to_owned(),
            at_start: true,
        }
    }

    /// Discards answers before turn `turn` (they belong to turns already answered).
    fn skip_to(&mut self, turn: u32) -> Result<(), CliError> {
        if self.interactive {
            return Ok(());
        }
        while self.consumed + 1 < turn {
            if self.next_answer()?.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// The next paragraph, or `None` at the end of input. Reading stops once the paragraph is
    /// past [`MAX_ANSWER_CHARS`] (or [`ANSWER_BYTE_LIMIT`] bytes, for input of control bytes
    /// or without line breaks, such as `/dev/zero`), and the answer is refused: memory stays
    /// bounded whatever the file holds.
    fn next_answer(&mut self) -> Result<Option<String>, CliError> {
        let mut paragraph = String::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            let room = ANSWER_BYTE_LIMIT.saturating_sub(paragraph.len()) + 1;
            let n = (&mut self.reader)
                .take(u64::try_from(room).unwrap_or(u64::MAX))
                .read_until(b'\n', &mut line)
                .map_err(|e| {
                    CliError::Input(format!("--answers {}: cannot read: {e}", self.name))
                })?;
            if n == 0 {
                break;
            }
            // Editors on some systems start a UTF-8 file with a byte-order mark; it is not
            // part of the first answer.
            if std::mem::take(&mut self.at_start) && line.starts_with(BYTE_ORDER_MARK) {
                line.drain(..BYTE_ORDER_MARK.len());
            }
            if paragraph.len() + line.len() > ANSWER_BYTE_LIMIT {
                return Err(self.too_long());
            }
            let text = std::str::from_utf8(&line).map_err(|_| {
                CliError::Input(format!(
                    "--answers {}: answer {} is not UTF-8 text",
                    self.name,
                    self.consumed + 1
                ))
            })?;
            if text.trim().is_empty() {
                if paragraph.is_empty() {
                    continue;
                }
                break;
            }
            paragraph.push_str(text);
            if answer_chars(&paragraph) > MAX_ANSWER_CHARS {
                return Err(self.too_long());
            }
        }
        if paragraph.trim().is_empty() {
            return Ok(None);
        }
        self.consumed += 1;
        Ok(Some(paragraph.trim_end().to_owned()))
    }

    fn too_long(&self) -> CliError {
        CliError::Input(format!(
            "--answers {}: answer {} is longer than {MAX_ANSWER_CHARS} characters, the limit; \
             it was not read further. Shorten it or split it over two turns",
            self.name,
            self.consumed + 1
        ))
    }
}

/// U+FEFF in UTF-8.
const BYTE_ORDER_MARK: &[u8] = b"\xef\xbb\xbf";

/// Bytes one answer may take before it is refused unread: the longest answer of
/// [`MAX_ANSWER_CHARS`] four-byte characters, with room for line breaks.
const ANSWER_BYTE_LIMIT: usize = 4 * MAX_ANSWER_CHARS + 1_024;

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> AnswerFile {
        AnswerFile::new(
            Box::new(std::io::Cursor::new(text.to_owned())),
            false,
            "test",
        )
    }

    #[test]
    fn a_byte_order_mark_before_the_first_answer_is_dropped() {
        let mut s = source("\u{feff}first\n\n\u{feff}second\n");
        assert_eq!(s.next_answer().unwrap().unwrap(), "first");
        // Only the file's start is a byte-order mark; later it is the respondent's text.
        assert_eq!(s.next_answer().unwrap().unwrap(), "\u{feff}second");
    }

    #[test]
    fn paragraphs_are_answers() {
        let mut s = source("\n\nfirst line\nsecond line\n\n  \nthird\n\n");
        assert_eq!(s.next_answer().unwrap().unwrap(), "first line\nsecond line");
        assert_eq!(s.next_answer().unwrap().unwrap(), "third");
        assert_eq!(s.next_answer().unwrap(), None);
    }

    /// Counts the bytes taken from a long input.
    struct Counted<R> {
        inner: R,
        taken: std::rc::Rc<std::cell::Cell<usize>>,
    }

    impl<R: Read> Read for Counted<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.taken.set(self.taken.get() + n);
            Ok(n)
        }
    }

    /// 50 MB of one byte and no line break.
    fn one_long_line(byte: u8) -> (AnswerFile, std::rc::Rc<std::cell::Cell<usize>>) {
        let taken = std::rc::Rc::default();
        let reader = Counted {
            inner: std::io::repeat(byte).take(50_000_000),
            taken: std::rc::Rc::clone(&taken),
        };
        let file = AnswerFile::new(Box::new(BufReader::new(reader)), false, "/dev/zero");
        (file, taken)
    }

    #[test]
    fn a_huge_answer_is_refused_after_a_bounded_read() {
        // NUL bytes (as `/dev/zero` gives) and letters (a 50 MB one-line file).
        for byte in [0, b'a'] {
            let (mut file, taken) = one_long_line(byte);
            let err = file.next_answer().unwrap_err().to_string();
            assert!(
                err.contains("--answers /dev/zero: answer 1 is longer than 5000"),
                "{err}"
            );
            assert!(
                taken.get() <= ANSWER_BYTE_LIMIT + 16 * 1024,
                "read {}",
                taken.get()
            );
        }
    }

    #[test]
    fn the_limit_counts_what_the_pipeline_keeps() {
        let longest = "é".repeat(MAX_ANSWER_CHARS);
        let mut file = source(&format!("{longest}\r\n\r\n{longest}x\n"));
        assert!(
            file.next_answer().unwrap().unwrap() == longest,
            "the longest answer passes"
        );
        let err = file.next_answer().unwrap_err().to_string();
        assert!(err.contains("answer 2 is longer than 5000"), "{err}");
        let mut lines = source(&"short line\n".repeat(600));
        assert!(
            lines
                .next_answer()
                .unwrap_err()
                .to_string()
                .contains("answer 1")
        );
        let mut binary = source("caf\u{e9}\n");
        binary.reader = Box::new(std::io::Cursor::new(vec![0xff, 0xfe, b'\n']));
        let err = binary.next_answer().unwrap_err().to_string();
        assert!(err.contains("answer 1 is not UTF-8"), "{err}");
    }

    #[test]
    fn skipping_aligns_answer_k_with_turn_k() {
        let mut s = source("one\n\ntwo\n\nthree\n");
        s.skip_to(3).unwrap();
        assert_eq!(s.next_answer().unwrap().unwrap(), "three");
        // Already past: nothing more is skipped.
        s.skip_to(2).unwrap();
        assert_eq!(s.next_answer().unwrap(), None);
    }
}
