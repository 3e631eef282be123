//! The study screen (from the start screen, `a`): the finished interviews of a concept read
//! together (see [`crate::study`]), the map's dominant chains with their respondent counts,
//! the codes of the highlighted chain, and the respondents' words for the highlighted code.
//! The caller analyses; this screen only shows.

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
use super::text::{pad, truncate, wrap};
use super::theme::Theme;
use crate::study::{Code, Study};

/// Which list the arrows move in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pane {
    Chains,
    Codes,
}

/// The study screen's state.
#[derive(Debug, Clone)]
pub struct StudyScreen {
    study: Study,
    pane: Pane,
    chain: usize,
    code: usize,
    /// Every code instead of the highlighted chain's.
    all_codes: bool,
    theme: Theme,
}

impl StudyScreen {
    pub fn new(study: Study, theme: Theme) -> Self {
        Self {
            all_codes: study.chains.is_empty(),
            pane: if study.chains.is_empty() {
                Pane::Codes
            } else {
                Pane::Chains
            },
            study,
            chain: 0,
            code: 0,
            theme,
        }
    }

    /// Handles a key; `true` when the screen is done.
    pub fn key(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return true,
            KeyCode::Char('c') if ctrl => return true,
            KeyCode::Tab | KeyCode::BackTab | KeyCode::Left | KeyCode::Right
                if !self.study.chains.is_empty() =>
            {
                self.pane = match self.pane {
                    Pane::Chains => Pane::Codes,
                    Pane::Codes => Pane::Chains,
                };
            }
            KeyCode::Char('a') => {
                self.all_codes = !self.all_codes || self.study.chains.is_empty();
                self.code = 0;
            }
            KeyCode::Down | KeyCode::Char('j') => self.step(true),
            KeyCode::Up | KeyCode::Char('k') => self.step(false),
            _ => {}
        }
        false
    }

    fn step(&mut self, down: bool) {
        let codes = self.codes().len();
        let (cursor, len) = match self.pane {
            Pane::Chains => (&mut self.chain, self.study.chains.len()),
            Pane::Codes => (&mut self.code, codes),
        };
        *cursor = if down {
            (*cursor + 1).min(len.saturating_sub(1))
        } else {
            cursor.saturating_sub(1)
        };
        if self.pane == Pane::Chains {
            self.code = 0;
        }
    }

    /// The codes listed: the highlighted chain's, in order, or every code.
    fn codes(&self) -> Vec<&Code> {
        if self.all_codes {
            return self.study.codes.iter().collect();
        }
        self.study
            .chains
            .get(self.chain)
            .map(|chain| {
                chain
                    .codes
                    .iter()
                    .filter_map(|id| self.study.codes.iter().find(|c| c.id == *id))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn name(&self, id: &str) -> String {
        self.study
            .codes
            .iter()
            .find(|c| c.id == id)
            .map_or_else(|| id.to_owned(), |c| clean_line(&c.name))
    }
}

impl Widget for &StudyScreen {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = &self.theme;
        let [title, body, hint] = Layout::vertical([
            Constraint::Length(2),
            Constraint::Min(6),
            Constraint::Length(1),
        ])
        .areas(area);
        let s = &self.study;
        let finished = s.sessions.iter().filter(|x| x.finished).count();
        Line::from(vec![
            Span::styled(" Study ", theme.title),
            Span::raw(truncate(
                &clean_line(&format!(
                    "{} · {} · {} interviews ({finished} finished) · {} codes · map: links made by ≥ {} respondent{}",
                    s.concepts.join(", "),
                    s.methodology,
                    s.sessions.len(),
                    s.codes.len(),
                    s.cutoff,
                    if s.cutoff == 1 { "" } else { "s" }
                )),
                usize::from(title.width).saturating_sub(8),
            )),
        ])
        .render(title, buf);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(body);
        let [chains, interviews] =
            Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(left);
        let [codes, quotes] =
            Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(right);
        self.render_chains(chains, buf);
        self.render_interviews(interviews, buf);
        self.render_codes(codes, buf);
        self.render_quotes(quotes, buf);
        Line::from(Span::styled(
            truncate(
                " ↑↓ move · Tab chains/codes · a all codes/chain · Esc back",
                usize::from(hint.width),
            ),
            theme.dim,
        ))
        .render(hint, buf);
    }
}

impl StudyScreen {
    fn render_chains(&self, area: Rect, buf: &mut Buffer) {
        let theme = &self.theme;
        let block = frame("Dominant chains", theme, self.pane == Pane::Chains);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let mut lines = Vec::new();
        for (i, chain) in self.study.chains.iter().enumerate() {
            let path: Vec<String> = chain.codes.iter().map(|id| self.name(id)).collect();
            let text = format!("{:>3}  {}", chain.respondents, path.join(" → "));
            let mut line = Line::from(truncate(&text, width));
            if i == self.chain && !self.all_codes {
                line = line.style(if self.pane == Pane::Chains {
                    theme.selected
                } else {
                    theme.winner
                });
            }
            lines.push(line);
        }
        if lines.is_empty() {
            lines.push(Line::from(Span::styled(
                truncate(
                    "no chain on the map: no respondent made two linked steps",
                    width,
                ),
                theme.dim,
            )));
        }
        scrolled(
            lines,
            follow(self.chain, usize::from(inner.height)),
            inner,
            buf,
        );
    }

    fn render_interviews(&self, area: Rect, buf: &mut Buffer) {
        let theme = &self.theme;
        let block = frame("Interviews", theme, false);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let ids: Vec<&str> = self.study.sessions.iter().map(|x| x.id.as_str()).collect();
        let short = crate::store::short_ids(&ids, 8);
        let mut lines = vec![Line::from(Span::styled(
            truncate("id        turns  codes  coverage", width),
            theme.dim,
        ))];
        for (x, id) in self.study.sessions.iter().zip(&short) {
            let text = format!(
                "{} {:>5}  {:>5}  {:>7.0}%{}",
                pad(&clean_line(id), 8),
                x.turns,
                x.codes,
                x.coverage * 100.0,
                if x.finished { "" } else { "  unfinished" }
            );
            lines.push(Line::from(truncate(&text, width)));
        }
        scrolled(lines, 0, inner, buf);
    }

    fn render_codes(&self, area: Rect, buf: &mut Buffer) {
        let theme = &self.theme;
        let title = if self.all_codes {
            "Codes (all)"
        } else {
            "Codes of the chain"
        };
        let block = frame(title, theme, self.pane == Pane::Codes);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let mut lines = Vec::new();
        for (i, code) in self.codes().iter().enumerate() {
            let text = format!(
                "{:<4} {} · {} · {} resp.",
                code.id,
                clean_line(&code.name),
                clean_line(&code.node_type),
                code.respondents()
            );
            let mut line = Line::from(truncate(&text, width));
            if i == self.code {
                line = line.style(if self.pane == Pane::Codes {
                    theme.selected
                } else {
                    theme.winner
                });
            }
            lines.push(line);
        }
        scrolled(
            lines,
            follow(self.code, usize::from(inner.height)),
            inner,
            buf,
        );
    }

    fn render_quotes(&self, area: Rect, buf: &mut Buffer) {
        let theme = &self.theme;
        let codes = self.codes();
        let code = codes.get(self.code);
        let title = code.map_or_else(
            || "Quotes".to_owned(),
            |c| format!("Quotes · {}", clean_line(&c.name)),
        );
        let block = frame(&title, theme, false);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width).max(8);
        let Some(code) = code else {
            return;
        };
        let ids: Vec<&str> = self.study.sessions.iter().map(|x| x.id.as_str()).collect();
        let short = crate::store::short_ids(&ids, 8);
        let short_of = |session: &str| {
            ids.iter()
                .position(|id| *id == session)
                .and_then(|i| short.get(i))
                .cloned()
                .unwrap_or_else(|| session.to_owned())
        };
        let mut lines = Vec::new();
        for member in &code.members {
            for quote in &member.quotes {
                for (i, row) in wrap(&format!("“{}”", clean_line(quote.text.trim())), width - 2)
                    .into_iter()
                    .enumerate()
                {
                    lines.push(Line::from(if i == 0 { row } else { format!(" {row}") }));
                }
                lines.push(Line::from(Span::styled(
                    truncate(
                        &format!(
                            "   — {}, turn {}",
                            clean_line(&short_of(&member.session)),
                            quote.turn
                        ),
                        width,
                    ),
                    theme.dim,
                )));
            }
        }
        if lines.is_empty() {
            lines.push(Line::from(Span::styled("no quote kept", theme.dim)));
        }
        scrolled(lines, 0, inner, buf);
    }
}

/// Shows `screen` until the user goes back.
pub(super) async fn run(
    terminal: &mut DefaultTerminal,
    inputs: &mut UnboundedReceiver<CtEvent>,
    screen: &mut StudyScreen,
) -> Result<(), TuiError> {
    draw(terminal, screen)?;
    while let Some(event) = inputs.recv().await {
        if let CtEvent::Key(key) = event
            && key.kind != KeyEventKind::Release
            && screen.key(key)
        {
            return Ok(());
        }
        draw(terminal, screen)?;
    }
    Ok(())
}

fn draw(terminal: &mut DefaultTerminal, screen: &StudyScreen) -> Result<(), TuiError> {
    terminal
        .draw(|f| f.render_widget(screen, f.area()))
        .map_err(|e| TuiError::Terminal(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::study::{Chain, CodeMember, Quote, SessionSummary};

    fn code(id: &str, name: &str, node_type: &str, quotes: &[(&str, &str)]) -> Code {
        let members: Vec<CodeMember> = quotes
            .iter()
            .map(|(session, text)| CodeMember {
                session: (*session).into(),
                key: format!("{id}-{session}"),
                name: name.into(),
                labels: vec![name.into()],
                quotes: vec![Quote {
                    turn: 2,
                    text: (*text).into(),
                }],
            })
            .collect();
        Code {
            id: id.into(),
            name: name.into(),
            node_type: node_type.into(),
            level: 1,
            sessions: members
                .iter()
                .map(|m| m.session.clone())
                .collect::<BTreeSet<_>>(),
            members,
        }
    }

    fn study() -> Study {
        let session = |id: &str| SessionSummary {
            id: id.into(),
            concept: "oat_milk".into(),
            source: "a.db".into(),
            finished: true,
            imported: false,
            turns: 6,
            codes: 3,
            coverage: 0.75,
        };
        Study {
            methodology: "means_end_chain".into(),
            concepts: vec!["oat_milk".into()],
            sessions: vec![session("aaaaaaaa-1"), session("bbbbbbbb-2")],
            threshold: 0.6,
            codes: vec![
                code(
                    "c1",
                    "froths_well",
                    "attribute",
                    &[
                        ("aaaaaaaa-1", "it froths well"),
                        ("bbbbbbbb-2", "nice froth"),
                    ],
                ),
                code(
                    "c2",
                    "feels_like_a_treat",
                    "functional_consequence",
                    &[("aaaaaaaa-1", "a treat")],
                ),
                code(
                    "c3",
                    "good_for_the_planet",
                    "terminal_value",
                    &[("bbbbbbbb-2", "better for the planet")],
                ),
            ],
            links: Vec::new(),
            cutoff: 2,
            cutoff_shares: Vec::new(),
            chains: vec![Chain {
                codes: vec!["c1".into(), "c2".into()],
                respondents: 2,
            }],
            co_occurrence: Vec::new(),
            strategies: BTreeMap::new(),
            terminations: BTreeMap::new(),
        }
    }

    fn text(screen: &StudyScreen) -> String {
        let area = Rect::new(0, 0, 120, 30);
        let mut buf = Buffer::empty(area);
        screen.render(area, &mut buf);
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    + "\n"
            })
            .collect()
    }

    fn press(screen: &mut StudyScreen, code: KeyCode) -> bool {
        screen.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    #[test]
    fn chains_with_counts_then_a_codes_quotes() {
        let mut screen = StudyScreen::new(study(), Theme::monochrome());
        let shown = text(&screen);
        assert!(
            shown.contains("2  froths_well → feels_like_a_treat"),
            "{shown}"
        );
        assert!(
            shown.contains("2 interviews (2 finished) · 3 codes"),
            "{shown}"
        );
        assert!(shown.contains("aaaaaaaa"), "{shown}");
        // The chain's first code's words, from both respondents.
        assert!(shown.contains("“it froths well”"), "{shown}");
        assert!(shown.contains("“nice froth”"), "{shown}");
        assert!(
            !shown.contains("good_for_the_planet"),
            "not on the chain: {shown}"
        );
        // Into the codes, down to the second: its quote replaces the first's.
        assert!(!press(&mut screen, KeyCode::Tab));
        press(&mut screen, KeyCode::Down);
        let shown = text(&screen);
        assert!(shown.contains("Quotes · feels_like_a_treat"), "{shown}");
        assert!(
            shown.contains("“a treat”") && !shown.contains("“nice froth”"),
            "{shown}"
        );
        // Every code, then back to the start screen.
        press(&mut screen, KeyCode::Char('a'));
        assert!(text(&screen).contains("good_for_the_planet"));
        assert!(press(&mut screen, KeyCode::Esc));
    }

    #[test]
    fn a_study_without_chains_lists_every_code() {
        let mut study = study();
        study.chains.clear();
        let screen = StudyScreen::new(study, Theme::monochrome());
        let shown = text(&screen);
        assert!(shown.contains("no chain on the map"), "{shown}");
        assert!(
            shown.contains("Codes (all)") && shown.contains("good_for_the_planet"),
            "{shown}"
        );
    }
}
