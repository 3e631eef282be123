//! A transcript as the importer sees it: speaker turns in order, who interviewed, and the
//! exchanges (question, answer) the pipeline replays.

use std::fmt;

use super::ImportProblem;

/// Largest transcript file read (a two-hour interview is about 150 KB of text).
pub const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;
/// Most respondent answers one transcript may have.
pub const MAX_EXCHANGES: usize = 400;

/// The formats read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, Default)]
pub enum Format {
    /// From the file's extension and its first lines.
    #[default]
    Auto,
    /// Plain text with speaker labels (`Interviewer:`, `Q:`, a name), with or without times.
    Text,
    /// `WebVTT` captions (`<v Name>` voice tags or `Name:` prefixes).
    Vtt,
    /// `SubRip` captions (`Name:` prefixes).
    Srt,
    /// This app's JSON export.
    Json,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Text => "text",
            Self::Vtt => "WebVTT",
            Self::Srt => "SRT",
            Self::Json => "JSON export",
        })
    }
}

/// One stretch of one speaker: consecutive lines of a speaker are one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeakerTurn {
    pub speaker: String,
    pub text: String,
    /// Seconds from the start, when the transcript has times.
    pub start: Option<f64>,
    pub end: Option<f64>,
    /// Line of the file where the turn starts (1-based).
    pub line: usize,
}

/// Parsed speaker turns, before roles are assigned.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub format: Format,
    pub turns: Vec<SpeakerTurn>,
    /// The role a speaker's label names (`Interviewer`, `Q`, `Respondent`, `A`, …), when the
    /// format says (the JSON export always does).
    pub named_roles: Vec<(String, Role)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Interviewer,
    Respondent,
}

/// The role a label names by itself, if any.
pub fn role_of_label(label: &str) -> Option<Role> {
    let l = label.trim().to_lowercase();
    let l = l.trim_end_matches(|c: char| c.is_ascii_digit() || c == ' ');
    match l {
        "interviewer" | "moderator" | "researcher" | "facilitator" | "q" | "i" | "int" => {
            Some(Role::Interviewer)
        }
        "respondent" | "participant" | "interviewee" | "a" | "r" | "p" | "resp" => {
            Some(Role::Respondent)
        }
        _ => None,
    }
}

impl Parsed {
    /// Appends a line of `speaker`, joining it to the previous turn when the speaker is the
    /// same.
    pub fn push(
        &mut self,
        speaker: &str,
        text: &str,
        times: (Option<f64>, Option<f64>),
        line: usize,
    ) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        if let Some(last) = self.turns.last_mut()
            && last.speaker == speaker
        {
            last.text.push(' ');
            last.text.push_str(text);
            if times.1.is_some() {
                last.end = times.1;
            }
            return;
        }
        self.turns.push(SpeakerTurn {
            speaker: speaker.to_owned(),
            text: text.to_owned(),
            start: times.0,
            end: times.1,
            line,
        });
    }
}

/// Who interviewed and who answered, and how that was decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Roles {
    pub interviewer: String,
    pub respondent: String,
    /// How the interviewer was found, for the summary line.
    pub how: String,
    /// Turns of other speakers, left out.
    pub others_left_out: usize,
}

/// When something was said: seconds from the start of the recording, when the transcript has
/// times (the end, when its format gives one or the next turn's start does).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Span {
    pub start: Option<f64>,
    pub end: Option<f64>,
}

impl Span {
    fn of(turn: &SpeakerTurn) -> Self {
        Self {
            start: turn.start,
            end: turn.end,
        }
    }

    /// This span extended to the end of `later`.
    fn through(self, later: &SpeakerTurn) -> Self {
        Self {
            start: self.start.or(later.start),
            end: later.end.or(self.end),
        }
    }
}

/// One question and the answer to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The interviewer's question (several interviewer turns in a row are joined).
    pub question: String,
    pub question_line: usize,
    pub question_span: Span,
    pub answer: String,
    pub answer_line: usize,
    pub answer_span: Span,
}

/// A transcript ready to import.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub format: Format,
    pub roles: Roles,
    pub exchanges: Vec<Exchange>,
    /// What the interviewer said after the last answer (a closing remark), if anything.
    pub closing: Option<String>,
    pub closing_span: Span,
    /// Words each side spoke, and seconds when the transcript has times.
    pub interviewer_words: usize,
    pub respondent_words: usize,
    pub interviewer_seconds: Option<f64>,
    pub respondent_seconds: Option<f64>,
}

/// Assigns roles and pairs questions with answers.
pub fn build(
    parsed: Parsed,
    interviewer: Option<&str>,
    respondent: Option<&str>,
) -> Result<Transcript, ImportProblem> {
    let roles = roles(&parsed, interviewer, respondent)?;
    let mut exchanges: Vec<Exchange> = Vec::new();
    let mut question: Option<(String, usize, Span)> = None;
    let mut closing = None;
    let mut closing_span = Span::default();
    let (mut iw, mut rw) = (0, 0);
    let (mut is, mut rs) = (None::<f64>, None::<f64>);
    let add = |total: &mut Option<f64>, t: &SpeakerTurn| {
        if let (Some(s), Some(e)) = (t.start, t.end) {
            *total = Some(total.unwrap_or(0.0) + (e - s).max(0.0));
        }
    };
    for turn in parsed.turns {
        if turn.speaker == roles.interviewer {
            iw += words(&turn.text);
            add(&mut is, &turn);
            match question.as_mut() {
                Some((q, _, span)) => {
                    q.push(' ');
                    q.push_str(&turn.text);
                    *span = span.through(&turn);
                }
                None => question = Some((turn.text.clone(), turn.line, Span::of(&turn))),
            }
        } else if turn.speaker == roles.respondent {
            rw += words(&turn.text);
            add(&mut rs, &turn);
            match question.take() {
                Some((q, line, span)) => exchanges.push(Exchange {
                    question: q,
                    question_line: line,
                    question_span: span,
                    answer_span: Span::of(&turn),
                    answer: turn.text,
                    answer_line: turn.line,
                }),
                // The respondent went on after an aside by someone else, or spoke first.
                None => match exchanges.last_mut() {
                    Some(last) => {
                        last.answer.push(' ');
                        last.answer.push_str(&turn.text);
                        last.answer_span = last.answer_span.through(&turn);
                    }
                    None => {
                        return Err(ImportProblem::at(
                            turn.line,
                            format!(
                                "the respondent ({}) speaks before the interviewer asks anything",
                                roles.respondent
                            ),
                        ));
                    }
                },
            }
        }
    }
    if let Some((q, _, span)) = question {
        closing = Some(q);
        closing_span = span;
    }
    if exchanges.is_empty() {
        return Err(ImportProblem::whole(format!(
            "no answer by the respondent ({}) follows a question",
            roles.respondent
        )));
    }
    if exchanges.len() > MAX_EXCHANGES {
        return Err(ImportProblem::whole(format!(
            "{} answers; at most {MAX_EXCHANGES} are imported from one transcript",
            exchanges.len()
        )));
    }
    for e in &exchanges {
        let chars = crate::pipeline::answer_chars(&e.answer);
        if chars > crate::pipeline::MAX_ANSWER_CHARS {
            return Err(ImportProblem::at(
                e.answer_line,
                format!(
                    "this answer is {chars} characters; an answer may have at most {}",
                    crate::pipeline::MAX_ANSWER_CHARS
                ),
            ));
        }
    }
    Ok(Transcript {
        format: parsed.format,
        roles,
        exchanges,
        closing,
        closing_span,
        interviewer_words: iw,
        respondent_words: rw,
        interviewer_seconds: is,
        respondent_seconds: rs,
    })
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// The speakers in order of first appearance, with their turns and question counts.
fn speakers(parsed: &Parsed) -> Vec<(String, usize, usize, usize)> {
    let mut out: Vec<(String, usize, usize, usize)> = Vec::new();
    for t in &parsed.turns {
        let questions = t.text.matches('?').count().min(1);
        match out.iter_mut().find(|s| s.0 == t.speaker) {
            Some(s) => {
                s.1 += 1;
                s.2 += questions;
                s.3 += words(&t.text);
            }
            None => out.push((t.speaker.clone(), 1, questions, words(&t.text))),
        }
    }
    out
}

fn find<'a>(
    speakers: &'a [(String, usize, usize, usize)],
    name: &str,
    flag: &str,
) -> Result<&'a str, ImportProblem> {
    speakers
        .iter()
        .find(|s| s.0.eq_ignore_ascii_case(name.trim()))
        .map(|s| s.0.as_str())
        .ok_or_else(|| {
            ImportProblem::whole(format!(
                "{flag} {name:?} is not a speaker here; the speakers are {}",
                names(speakers)
            ))
        })
}

fn names(speakers: &[(String, usize, usize, usize)]) -> String {
    speakers
        .iter()
        .map(|s| s.0.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Who interviewed: `--interviewer`, else a label that names the role, else the speaker
/// whose turns ask the most questions, else the first speaker. The respondent:
/// `--respondent`, else the only other speaker (or the one labelled as such).
fn roles(
    parsed: &Parsed,
    interviewer: Option<&str>,
    respondent: Option<&str>,
) -> Result<Roles, ImportProblem> {
    let speakers = speakers(parsed);
    if speakers.is_empty() {
        return Err(ImportProblem::whole("no speaker labels found".to_owned()));
    }
    if speakers.len() == 1 {
        return Err(ImportProblem::whole(format!(
            "only one speaker ({}); an interview needs an interviewer and a respondent",
            names(&speakers)
        )));
    }
    let named = |role: Role| {
        parsed
            .named_roles
            .iter()
            .find(|(_, r)| *r == role)
            .map(|(s, _)| s.clone())
            .or_else(|| {
                speakers
                    .iter()
                    .find(|s| role_of_label(&s.0) == Some(role))
                    .map(|s| s.0.clone())
            })
    };
    let (interviewer, how) = if let Some(name) = interviewer {
        (
            find(&speakers, name, "--interviewer")?.to_owned(),
            "set with --interviewer".to_owned(),
        )
    } else if let Some(name) = named(Role::Interviewer) {
        (name, "its label says so".to_owned())
    } else if let Some(name) = respondent
        .and_then(|r| find(&speakers, r, "--respondent").ok())
        .filter(|_| speakers.len() == 2)
        .and_then(|r| speakers.iter().find(|s| s.0 != r))
        .map(|s| s.0.clone())
    {
        (name, "the speaker who is not --respondent".to_owned())
    } else {
        let most = speakers.iter().map(|s| s.2).max().unwrap_or(0);
        let askers: Vec<_> = speakers.iter().filter(|s| s.2 == most).collect();
        match askers.as_slice() {
            [only] if most > 0 => (
                only.0.clone(),
                format!("asks the most questions ({} of {} turns)", only.2, only.1),
            ),
            _ => (
                speakers.first().map(|s| s.0.clone()).unwrap_or_default(),
                "speaks first (no speaker asks more questions than the others)".to_owned(),
            ),
        }
    };
    let respondent = if let Some(name) = respondent {
        find(&speakers, name, "--respondent")?.to_owned()
    } else {
        let others: Vec<_> = speakers.iter().filter(|s| s.0 != interviewer).collect();
        match others.as_slice() {
            [only] => only.0.clone(),
            _ => match named(Role::Respondent).filter(|n| *n != interviewer) {
                Some(name) => name,
                None => {
                    return Err(ImportProblem::whole(format!(
                        "{} speakers ({}); name the respondent with --respondent",
                        speakers.len(),
                        names(&speakers)
                    )));
                }
            },
        }
    };
    if respondent == interviewer {
        return Err(ImportProblem::whole(format!(
            "{interviewer} cannot be both the interviewer and the respondent"
        )));
    }
    let others_left_out = parsed
        .turns
        .iter()
        .filter(|t| t.speaker != interviewer && t.speaker != respondent)
        .count();
    Ok(Roles {
        interviewer,
        respondent,
        how,
        others_left_out,
    })
}
