//! The start screen (`interviewer` with no subcommand): a new interview (concept, methodology
//! defaulting to the concept's, max turns) or a stored session to resume, and the moderator
//! switch, or the study of a concept's interviews (`a`). It only chooses; opening the session
//! or analysing the study is the caller's.

use crossterm::event::{Event as CtEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::DefaultTerminal;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use tokio::sync::mpsc::UnboundedReceiver;

use super::panels::{follow, frame, scrolled};
use super::runner::TuiError;
use super::sanitize::clean_line;
use super::text::{pad, truncate};
use super::theme::Theme;
use crate::store::{SessionSummary, short_ids};

/// Bounds of the max-turns field (the CLI accepts the same range).
const TURNS: std::ops::RangeInclusive<u32> = 1..=500;

/// A concept on offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConceptEntry {
    pub id: String,
    pub name: String,
    /// The concept's own methodology, the default.
    pub methodology: String,
}

/// What to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartChoice {
    pub concept: Option<String>,
    /// `None`: the concept's methodology.
    pub methodology: Option<String>,
    pub max_turns: u32,
    /// A session id to resume instead of a new interview.
    pub resume: Option<String>,
    pub moderator: bool,
}

/// How the start screen ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartOutcome {
    Open(StartChoice),
    /// The study screen for this concept's finished interviews.
    Study(String),
    Quit,
}

/// The start screen's state.
#[derive(Debug, Clone)]
pub struct StartScreen {
    concepts: Vec<ConceptEntry>,
    methodologies: Vec<String>,
    sessions: Vec<SessionSummary>,
    on_resume: bool,
    concept: usize,
    /// Index into `methodologies`; `None` keeps the concept's default.
    methodology: Option<usize>,
    max_turns: u32,
    moderator: bool,
    session: usize,
    message: Option<String>,
    theme: Theme,
}

impl StartScreen {
    pub fn new(
        concepts: Vec<ConceptEntry>,
        methodologies: Vec<String>,
        sessions: Vec<SessionSummary>,
        max_turns: u32,
        theme: Theme,
    ) -> Self {
        Self {
            on_resume: concepts.is_empty() && !sessions.is_empty(),
            concepts,
            methodologies,
            sessions,
            concept: 0,
            methodology: None,
            max_turns: max_turns.clamp(*TURNS.start(), *TURNS.end()),
            moderator: false,
            session: 0,
            message: None,
            theme,
        }
    }

    /// A line shown under the lists (an error opening the last choice, or progress).
    pub fn set_message(&mut self, message: Option<String>) {
        self.message = message.map(|m| clean_line(&m));
    }

    fn methodology_name(&self) -> String {
        match self.methodology.and_then(|i| self.methodologies.get(i)) {
            Some(m) => m.clone(),
            None => self
                .concepts
                .get(self.concept)
                .map_or_else(String::new, |c| {
                    format!("{} (the concept's)", c.methodology)
                }),
        }
    }

    /// Handles a key; `Some` when the screen is done.
    pub fn key(&mut self, key: KeyEvent) -> Option<StartOutcome> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => return Some(StartOutcome::Quit),
            KeyCode::Char('q') | KeyCode::Esc => return Some(StartOutcome::Quit),
            KeyCode::Tab | KeyCode::BackTab => {
                self.on_resume = !self.on_resume;
            }
            KeyCode::Char('m') => self.moderator = !self.moderator,
            KeyCode::Char('a') => return self.study_concept().map(StartOutcome::Study),
            KeyCode::Enter => return self.choice().map(StartOutcome::Open),
            KeyCode::Down | KeyCode::Char('j') => self.move_cursor(true),
            KeyCode::Up | KeyCode::Char('k') => self.move_cursor(false),
            KeyCode::Right | KeyCode::Left if !self.on_resume => {
                self.cycle_methodology(key.code == KeyCode::Right);
            }
            KeyCode::Char('+' | '=') => self.max_turns = (self.max_turns + 1).min(*TURNS.end()),
            KeyCode::Char('-') => self.max_turns = self.max_turns.saturating_sub(1).max(1),
            _ => {}
        }
        None
    }

    fn move_cursor(&mut self, down: bool) {
        let (cursor, len) = if self.on_resume {
            (&mut self.session, self.sessions.len())
        } else {
            (&mut self.concept, self.concepts.len())
        };
        *cursor = if down {
            (*cursor + 1).min(len.saturating_sub(1))
        } else {
            cursor.saturating_sub(1)
        };
        if !self.on_resume {
            self.methodology = None;
        }
    }

    /// ←/→ cycle: the concept's default, then every methodology.
    fn cycle_methodology(&mut self, forward: bool) {
        let n = self.methodologies.len();
        if n == 0 {
            return;
        }
        self.methodology = match (self.methodology, forward) {
            (None, true) => Some(0),
            (None, false) => Some(n - 1),
            (Some(i), true) if i + 1 < n => Some(i + 1),
            (Some(i), false) if i > 0 => Some(i - 1),
            _ => None,
        };
    }

    /// The concept whose study `a` opens: the highlighted session's, or the highlighted
    /// concept.
    fn study_concept(&mut self) -> Option<String> {
        let concept = if self.on_resume {
            self.sessions.get(self.session).map(|s| s.concept.clone())
        } else {
            self.concepts.get(self.concept).map(|c| c.id.clone())
        };
        if concept.is_none() {
            self.message = Some("nothing highlighted to analyse".to_owned());
        }
        concept
    }

    fn choice(&mut self) -> Option<StartChoice> {
        if self.on_resume {
            let Some(s) = self.sessions.get(self.session) else {
                self.message = Some("no stored sessions; Tab to start a new one".to_owned());
                return None;
            };
            return Some(StartChoice {
                concept: None,
                methodology: None,
                max_turns: self.max_turns,
                resume: Some(s.id.clone()),
                moderator: self.moderator,
            });
        }
        let Some(c) = self.concepts.get(self.concept) else {
            self.message = Some("no concepts in the config directory".to_owned());
            return None;
        };
        Some(StartChoice {
            concept: Some(c.id.clone()),
            methodology: self
                .methodology
                .and_then(|i| self.methodologies.get(i))
                .cloned(),
            max_turns: self.max_turns,
            resume: None,
            moderator: self.moderator,
        })
    }
}

impl Widget for &StartScreen {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = &self.theme;
        let [title, body, message, hint] = Layout::vertical([
            Constraint::Length(2),
            Constraint::Min(6),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(area);
        Line::from(vec![
            Span::styled(" interviewer ", theme.title),
            Span::styled(
                "adaptive, knowledge-graph-based qualitative interviews",
                theme.dim,
            ),
        ])
        .render(title, buf);
        let wide = area.width >= 110;
        let [new_area, resume_area] = if wide {
            Layout::horizontal([Constraint::Percentage(42), Constraint::Percentage(58)]).areas(body)
        } else {
            Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(body)
        };
        render_new(self, new_area, buf);
        render_resume(self, resume_area, buf);
        // Under the lists: a message of this screen's, else why the highlighted session's
        // last turn failed (seed 004's ERROR state), as `interviewer sessions` says it.
        let failure = self
            .sessions
            .get(self.session)
            .filter(|_| self.on_resume)
            .and_then(|x| x.failure.as_ref())
            .map(|f| clean_line(&f.describe()));
        if let Some(m) = self.message.clone().or(failure) {
            Line::from(Span::styled(
                truncate(&format!(" {m}"), usize::from(message.width)),
                theme.warning,
            ))
            .render(message, buf);
        }
        let keys = if self.on_resume {
            " ↑↓ session · Enter resume · a study of its concept · m moderator · Tab new interview · q quit"
        } else {
            " ↑↓ concept · ←→ methodology · -/+ max turns · m moderator · Enter start · a study · Tab resume · q quit"
        };
        Line::from(Span::styled(
            truncate(keys, usize::from(hint.width)),
            theme.dim,
        ))
        .render(hint, buf);
    }
}

fn render_new(s: &StartScreen, area: Rect, buf: &mut Buffer) {
    let theme = &s.theme;
    let block = frame("New interview", theme, !s.on_resume);
    let inner = block.inner(area);
    block.render(area, buf);
    let [list, fields] = Layout::vertical([Constraint::Min(2), Constraint::Length(4)]).areas(inner);
    let width = usize::from(list.width);
    let mut lines = vec![Line::from(Span::styled("Concept", theme.dim))];
    for (i, c) in s.concepts.iter().enumerate() {
        let text = format!(" {} — {}", clean_line(&c.id), clean_line(&c.name));
        let mut line = Line::from(truncate(&text, width));
        if i == s.concept {
            line = line.style(if s.on_resume {
                theme.winner
            } else {
                theme.selected
            });
        }
        lines.push(line);
    }
    if s.concepts.is_empty() {
        lines.push(Line::from(Span::styled(" no concepts found", theme.dim)));
    }
    scrolled(
        lines,
        follow(s.concept + 1, usize::from(list.height)),
        list,
        buf,
    );
    let check = if s.moderator { "[x]" } else { "[ ]" };
    let rows = vec![
        Line::default(),
        field(
            "Methodology",
            format!("◂ {} ▸", clean_line(&s.methodology_name())),
            theme,
        ),
        field("Max turns", format!("- {} +", s.max_turns), theme),
        field(
            "Moderator",
            format!("{check} researcher conducts (m)"),
            theme,
        ),
    ];
    for (i, line) in rows.into_iter().enumerate() {
        let y = fields.y + u16::try_from(i).unwrap_or(0);
        if y < fields.bottom() {
            buf.set_line(fields.x, y, &line, fields.width);
        }
    }
}

fn field(label: &str, value: String, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(pad(label, 13), theme.dim),
        Span::raw(value),
    ])
}

/// Characters of a session id the resume list shows at least (more where two ids share them).
const SHORT_ID: usize = 8;

fn render_resume(s: &StartScreen, area: Rect, buf: &mut Buffer) {
    let theme = &s.theme;
    let block = frame("Resume a session", theme, s.on_resume);
    let inner = block.inner(area);
    block.render(area, buf);
    let width = usize::from(inner.width);
    let ids: Vec<&str> = s.sessions.iter().map(|x| x.id.as_str()).collect();
    let short = short_ids(&ids, SHORT_ID);
    let id_width = short
        .iter()
        .map(|id| id.chars().count())
        .max()
        .unwrap_or(0)
        .max(SHORT_ID);
    let mut lines = vec![Line::from(Span::styled(
        truncate(
            &format!(
                "{} {} {} {:>5}  {} {} last activity",
                pad("id", id_width),
                pad("status", 8),
                pad("", 3),
                "turns",
                pad("concept", 16),
                pad("methodology", 18),
            ),
            width,
        ),
        theme.dim,
    ))];
    for (i, (x, id)) in s.sessions.iter().zip(&short).enumerate() {
        // Status in the words of `interviewer sessions`, so the two lists read alike; the
        // columns that matter most for choosing come first, so a narrow panel cuts the rest.
        let simulated = if x.is_simulation() { "sim" } else { "" };
        let text = format!(
            "{} {} {} {:>5}  {} {} {}",
            pad(&clean_line(id), id_width),
            pad(x.status_word(), 8),
            pad(simulated, 3),
            x.turns,
            pad(&clean_line(&x.concept), 16),
            pad(&clean_line(&x.methodology), 18),
            activity(&x.updated_at),
        );
        let mut line = Line::from(truncate(&text, width));
        if i == s.session && s.on_resume {
            line = line.style(theme.selected);
        }
        lines.push(line);
    }
    if s.sessions.is_empty() {
        lines.push(Line::from(Span::styled("no stored sessions", theme.dim)));
    }
    scrolled(
        lines,
        follow(s.session + 1, usize::from(inner.height)),
        inner,
        buf,
    );
}

/// `2026-11-22T09:15:02.120Z` as `2026-11-22 09:15`.
fn activity(stamp: &str) -> String {
    let s = clean_line(stamp);
    match (s.get(..10), s.get(11..16)) {
        (Some(date), Some(time)) => format!("{date} {time}"),
        _ => s,
    }
}

/// Draws the start screen once.
pub(super) fn draw(terminal: &mut DefaultTerminal, screen: &StartScreen) -> Result<(), TuiError> {
    terminal
        .draw(|f| f.render_widget(screen, f.area()))
        .map_err(|e| TuiError::Terminal(e.to_string()))?;
    Ok(())
}

/// Runs the start screen until a choice or quit.
pub(super) async fn run(
    terminal: &mut DefaultTerminal,
    inputs: &mut UnboundedReceiver<CtEvent>,
    screen: &mut StartScreen,
) -> Result<StartOutcome, TuiError> {
    draw(terminal, screen)?;
    while let Some(event) = inputs.recv().await {
        if let CtEvent::Key(key) = event
            && key.kind != KeyEventKind::Release
        {
            if let Some(outcome) = screen.key(key) {
                return Ok(outcome);
            }
            screen.message = None;
        }
        draw(terminal, screen)?;
    }
    Ok(StartOutcome::Quit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn screen() -> StartScreen {
        StartScreen::new(
            vec![
                ConceptEntry {
                    id: "oat_milk".into(),
                    name: "Oat milk".into(),
                    methodology: "means_end_chain".into(),
                },
                ConceptEntry {
                    id: "coffee_jtbd".into(),
                    name: "Coffee".into(),
                    methodology: "jobs_to_be_done".into(),
                },
            ],
            vec!["critical_incident".into(), "means_end_chain".into()],
            Vec::new(),
            20,
            Theme::monochrome(),
        )
    }

    #[test]
    fn a_new_interview_defaults_to_the_concepts_methodology() {
        let mut s = screen();
        s.key(key(KeyCode::Down));
        s.key(key(KeyCode::Char('+')));
        s.key(key(KeyCode::Char('m')));
        assert_eq!(
            s.key(key(KeyCode::Enter)),
            Some(StartOutcome::Open(StartChoice {
                concept: Some("coffee_jtbd".into()),
                methodology: None,
                max_turns: 21,
                resume: None,
                moderator: true,
            }))
        );
        s.key(key(KeyCode::Right));
        let Some(StartOutcome::Open(c)) = s.key(key(KeyCode::Enter)) else {
            panic!("expected a choice");
        };
        assert_eq!(c.methodology.as_deref(), Some("critical_incident"));
    }

    #[test]
    fn a_opens_the_study_of_the_highlighted_concept() {
        let mut s = screen();
        assert_eq!(
            s.key(key(KeyCode::Char('a'))),
            Some(StartOutcome::Study("oat_milk".to_owned()))
        );
    }

    #[test]
    fn resume_without_sessions_says_so() {
        let mut s = screen();
        s.key(key(KeyCode::Tab));
        assert_eq!(s.key(key(KeyCode::Enter)), None);
        assert!(s.message.is_some());
        assert_eq!(s.key(key(KeyCode::Char('q'))), Some(StartOutcome::Quit));
    }

    /// A highlighted session whose last turn failed says where and why under the lists.
    #[test]
    fn a_failed_session_says_why_when_highlighted() {
        let failed = SessionSummary {
            id: "0c1d2e3f-aaaa-bbbb-cccc-000000000000".into(),
            concept: "oat_milk".into(),
            methodology: "means_end_chain".into(),
            turns: 2,
            status: crate::store::SessionStatus::Active,
            failure: Some(crate::store::TurnFailure {
                turn: 3,
                stage: "3 extraction".into(),
                message: "extraction call failed: timed out".into(),
                at: "2026-11-26T10:00:00Z".into(),
            }),
            updated_at: "2026-11-26T10:00:00.000Z".into(),
        };
        let s = StartScreen::new(
            Vec::new(),
            Vec::new(),
            vec![failed],
            20,
            Theme::monochrome(),
        );
        let area = Rect::new(0, 0, 120, 16);
        let mut buf = Buffer::empty(area);
        (&s).render(area, &mut buf);
        let text: String = (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf.cell((x, y)).map_or(" ", |c| c.symbol()).to_owned())
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        assert!(text.contains("failed"), "{text}");
        assert!(
            text.contains("failed at stage 3 extraction in turn 3: extraction call failed"),
            "{text}"
        );
    }
}
