//! `interviewer interview`: a whole interview without the terminal UI.
//!
//! Questions go to stdout (or, with `--json`, one `TurnResult` per line); answers come from a
//! file or stdin, one paragraph per answer (paragraphs are separated by a blank line). The file's
//! k-th answer is turn k's answer, so re-running the same command with `--resume` after a
//! crash continues where it stopped. Progress and the session id go to stderr. The session
//! runs on the one session driver (`session::driver`), with the answers file as its source.

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal};

use clap::Args;

use super::setup::{LlmOptions, SessionChoice, StageFlags, open_interview, prepare};
use super::{CliError, emit};
use crate::config::ConfigDir;
use crate::pipeline::{Event, TurnError, TurnResult};
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
    #[arg(long, short = 'a', value_name = "FILE|-")]
    pub answers: String,
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
    let prepared = prepare(dir, llm, args.stages)?;
    let choice = SessionChoice {
        concept: args.concept.clone(),
        methodology: args.methodology.clone(),
        max_turns: args.max_turns,
        resume: args.resume.clone(),
        understanding: prepared.understanding,
    };
    let interview = open_interview(dir, db, &choice, prepared.services)?;
    let mut answers = AnswerFile::open(&args.answers)?;
    let id = interview.session_id().to_owned();
    eprintln!("session {id} (continue it with --resume {id})");
    let json = args.json;
    let mut write_error = None;
    let (_, ending) = crate::session::driver::run(interview, &mut answers, |event| {
        if write_error.is_some() {
            return;
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
        "[turn {} · {}{} · +{} nodes +{} edges · {} ms] {}\n",
        result.turn_number,
        result.strategy_selected,
        focus,
        result.nodes_added.len(),
        result.edges_added.len(),
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

/// Answers read one paragraph at a time, lazily, so a person can type them.
struct AnswerFile {
    reader: Box<dyn BufRead>,
    /// Answers read so far (the next one is answer `consumed + 1`).
    consumed: u32,
    /// Whether a person is typing (then nothing is skipped).
    interactive: bool,
    name: String,
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
            return Ok(Self {
                reader: Box::new(BufReader::new(stdin)),
                consumed: 0,
                interactive,
                name: "stdin".to_owned(),
            });
        }
        let file = File::open(spec)
            .map_err(|e| CliError::Input(format!("--answers {spec}: cannot open: {e}")))?;
        Ok(Self {
            reader: Box::new(BufReader::new(file)),
            consumed: 0,
            interactive: false,
            name: spec.to_owned(),
        })
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

    /// The next paragraph, or `None` at the end of input.
    fn next_answer(&mut self) -> Result<Option<String>, CliError> {
        let mut paragraph = String::new();
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line).map_err(|e| {
                CliError::Input(format!("--answers {}: cannot read: {e}", self.name))
            })?;
            if n == 0 {
                break;
            }
            if line.trim().is_empty() {
                if paragraph.is_empty() {
                    continue;
                }
                break;
            }
            paragraph.push_str(&line);
        }
        if paragraph.trim().is_empty() {
            return Ok(None);
        }
        self.consumed += 1;
        Ok(Some(paragraph.trim_end().to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> AnswerFile {
        AnswerFile {
            reader: Box::new(std::io::Cursor::new(text.to_owned())),
            consumed: 0,
            interactive: false,
            name: "test".to_owned(),
        }
    }

    #[test]
    fn paragraphs_are_answers() {
        let mut s = source("\n\nfirst line\nsecond line\n\n  \nthird\n\n");
        assert_eq!(s.next_answer().unwrap().unwrap(), "first line\nsecond line");
        assert_eq!(s.next_answer().unwrap().unwrap(), "third");
        assert_eq!(s.next_answer().unwrap(), None);
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
