//! A session's exchanges reviewed: each question the interviewer asked, beside the engine's
//! choice at that point, with the question flags, missed rungs and repeats; then talk share
//! and counts per session and across sessions.

use serde::Serialize;

use super::flags::{Flag, Flagged, flag};
use crate::config::{FocusMode, Methodology};
use crate::domain::Speaker;
use crate::export::SessionData;

/// One exchange: the respondent's answer and the question asked after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExchangeReview {
    pub turn: u32,
    pub answer: String,
    /// The question asked after the answer (empty when the interview ended there).
    pub question: String,
    pub engine_strategy: String,
    pub engine_focus: Option<String>,
    /// The engine's own question at this point (for a live session, the one asked unless a
    /// researcher replaced it).
    pub engine_question: String,
    /// The engine's top signal contributions to its strategy: `(signal, contribution)`.
    pub engine_reasons: Vec<(String, f64)>,
    /// Higher-level concepts (between the ontology's lowest and highest level) this answer
    /// added.
    pub new_rungs: Vec<String>,
    pub flags: Vec<Flagged>,
}

/// One session reviewed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionReview {
    pub session_id: String,
    pub concept: String,
    pub methodology: String,
    /// Imported from a transcript: the questions are a person's; otherwise the engine's.
    pub imported: bool,
    pub exchanges: Vec<ExchangeReview>,
    /// The interviewer's share of the talk, 0…1.
    pub talk_share: f64,
    /// What the share counts: `seconds` (cue times) or `words`.
    pub talk_basis: &'static str,
    /// Exchanges where the interviewer's question took the engine's focus (named its words).
    pub followed_engine_focus: usize,
}

impl SessionReview {
    /// How many questions carry `flag`.
    pub fn count(&self, flag: Flag) -> usize {
        self.exchanges
            .iter()
            .filter(|e| e.flags.iter().any(|f| f.flag == flag))
            .count()
    }

    /// Questions reviewed (the exchanges followed by a question).
    pub fn questions(&self) -> usize {
        self.exchanges
            .iter()
            .filter(|e| !e.question.is_empty())
            .count()
    }
}

/// Several sessions together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyReview {
    pub sessions: Vec<SessionReview>,
    pub questions: usize,
    /// `(flag, questions carrying it)`, every flag listed.
    pub flag_counts: Vec<(Flag, usize)>,
    pub mean_talk_share: f64,
}

/// The question's content words (four letters or more, lower-case, first five letters) for
/// overlap tests.
fn stems(text: &str) -> Vec<String> {
    const SKIP: [&str; 14] = [
        "that", "this", "with", "your", "what", "when", "where", "which", "would", "about", "have",
        "does", "there", "they",
    ];
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4 && !SKIP.contains(w))
        .map(|w| w.chars().take(5).collect())
        .collect()
}

/// Whether `question` takes up `label`: shares a content word with it, or is a laddering
/// probe about "that"/"it" (the last thing said: "Why does that matter to you?").
fn takes_up(question: &str, label: &str) -> bool {
    let q = stems(question);
    if stems(label).iter().any(|s| q.contains(s)) {
        return true;
    }
    let lower = question.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(3).any(|w| {
        matches!(w, [q, v, p]
            if matches!(*q, "why" | "what" | "how")
                && matches!(*v, "does" | "is" | "would" | "did" | "do" | "was" | "makes" | "about")
                && matches!(*p, "that" | "this" | "it"))
    })
}

fn same_question(a: &str, b: &str) -> bool {
    let (x, y) = (stems(a), stems(b));
    if x.is_empty() || y.is_empty() {
        return a.trim().eq_ignore_ascii_case(b.trim());
    }
    let shared = x.iter().filter(|s| y.contains(s)).count();
    let union = x.len() + y.len() - shared;
    union > 0 && shared * 5 >= union * 4
}

/// Reviews one session; `methodology` is the session's own (for which strategies want an open
/// question and which node types are rungs).
pub fn review_session(data: &SessionData, methodology: &Methodology) -> SessionReview {
    let (lo, hi) = methodology.level_range();
    let question_at = |turn: u32| {
        data.utterances
            .iter()
            .find(|u| u.turn == turn && u.speaker == Speaker::Interviewer)
            .map(|u| u.text.clone())
            .unwrap_or_default()
    };
    let mut exchanges = Vec::new();
    let mut heard = String::new();
    let mut asked: Vec<(u32, String)> = vec![(0, question_at(0))];
    let mut followed = 0;
    for record in &data.turns {
        let r = &record.result;
        let turn = record.turn;
        let answer = data
            .utterances
            .iter()
            .find(|u| u.turn == turn && u.speaker == Speaker::Respondent)
            .map(|u| u.text.clone())
            .unwrap_or_default();
        heard.push_str(&answer);
        heard.push('\n');
        let question = question_at(turn);
        let strategy = methodology.strategy(&r.strategy_selected);
        let wants_open = strategy
            .is_none_or(|s| !s.generates_closing_question && s.focus_mode != FocusMode::Summary);
        let new_rungs: Vec<String> = r
            .nodes_added
            .iter()
            .filter(|n| {
                methodology
                    .node_type(&n.node_type)
                    .is_some_and(|t| t.level > lo && t.level < hi)
            })
            .map(|n| n.label.clone())
            .collect();
        let mut flags = Vec::new();
        if !question.is_empty() {
            flags = flag(&question, &heard, wants_open);
            if !new_rungs.is_empty() && !new_rungs.iter().any(|l| takes_up(&question, l)) {
                flags.push(Flagged {
                    flag: Flag::MissedRung,
                    why: format!(
                        "the answer added {} and the question left {} unprobed",
                        new_rungs
                            .iter()
                            .map(|l| format!("\"{l}\""))
                            .collect::<Vec<_>>()
                            .join(", "),
                        if new_rungs.len() == 1 { "it" } else { "them" }
                    ),
                });
            }
            if let Some((earlier, _)) = asked.iter().find(|(_, q)| same_question(q, &question)) {
                flags.push(Flagged {
                    flag: Flag::Repeated,
                    why: format!("asked before, at turn {earlier}"),
                });
            }
            if let Some(f) = &r.focus
                && takes_up(&question, &f.label)
                && stems(&f.label).iter().any(|s| stems(&question).contains(s))
            {
                followed += 1;
            }
            asked.push((turn, question.clone()));
        }
        exchanges.push(ExchangeReview {
            turn,
            answer,
            question,
            engine_strategy: r.strategy_selected.clone(),
            engine_focus: r.focus.as_ref().map(|f| f.label.clone()),
            engine_question: r.next_question.clone(),
            engine_reasons: reasons(r),
            new_rungs,
            flags,
        });
    }
    let (talk_share, talk_basis) = talk_share(data);
    SessionReview {
        session_id: data.session.id.clone(),
        concept: data.session.concept.clone(),
        methodology: data.session.methodology.clone(),
        imported: data.import.is_some(),
        exchanges,
        talk_share,
        talk_basis,
        followed_engine_focus: followed,
    }
}

/// The selected strategy's three largest signal contributions.
fn reasons(r: &crate::pipeline::TurnResult) -> Vec<(String, f64)> {
    let Some(chosen) = r
        .score_decomposition
        .iter()
        .find(|c| c.selected && c.node_id.is_empty())
    else {
        return Vec::new();
    };
    let mut all: Vec<(String, f64)> = chosen
        .signal_contributions
        .iter()
        .filter(|c| c.contribution != 0.0)
        .map(|c| (c.name.clone(), c.contribution))
        .collect();
    all.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    all.truncate(3);
    all
}

/// The interviewer's share of the talk: by the transcript's times when it had them, else by
/// words.
fn talk_share(data: &SessionData) -> (f64, &'static str) {
    if let Some(i) = &data.import
        && let (Some(a), Some(b)) = (i.interviewer_seconds, i.respondent_seconds)
        && a + b > 0.0
    {
        return (a / (a + b), "seconds");
    }
    let count = |speaker: Speaker| -> usize {
        data.utterances
            .iter()
            .filter(|u| u.speaker == speaker)
            .map(|u| u.text.split_whitespace().count())
            .sum()
    };
    let (a, b) = (count(Speaker::Interviewer), count(Speaker::Respondent));
    if a + b == 0 {
        return (0.0, "words");
    }
    (a as f64 / (a + b) as f64, "words")
}

/// Totals over several sessions.
pub fn summarise(sessions: Vec<SessionReview>) -> StudyReview {
    let questions = sessions.iter().map(SessionReview::questions).sum();
    let flag_counts = Flag::ALL
        .iter()
        .map(|&f| (f, sessions.iter().map(|s| s.count(f)).sum()))
        .collect();
    let mean_talk_share = if sessions.is_empty() {
        0.0
    } else {
        sessions.iter().map(|s| s.talk_share).sum::<f64>() / sessions.len() as f64
    };
    StudyReview {
        sessions,
        questions,
        flag_counts,
        mean_talk_share,
    }
}
