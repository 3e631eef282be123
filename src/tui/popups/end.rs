//! The end screen: why the interview ended and what it produced.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::window;
use crate::domain::counted;
use crate::graph::records::SlotStatus;
use crate::tui::app::App;
use crate::tui::panels::frame_for_popup;
use crate::tui::panels::graph_stats::longest_chain;
use crate::tui::sanitize::clean_line;
use crate::tui::text::pad;

/// Width of the summary's label column.
const LABEL: usize = 22;

/// The end screen.
#[derive(Debug)]
pub struct EndPopup<'a> {
    app: &'a App,
}

impl<'a> EndPopup<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &EndPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        let m = &app.model;
        let reason = m.finished.clone().unwrap_or_default();
        // Only `import` ends a session with its transcript: a person's interview, shown
        // read-only, each question of theirs recorded as an edit of the engine's.
        let imported = reason == crate::pipeline::TRANSCRIPT_ENDED;
        let row = |label: &str, value: String| {
            Line::from(vec![
                Span::styled(pad(label, LABEL), theme.dim),
                Span::raw(value),
            ])
        };
        let mut lines = vec![
            Line::from(vec![
                Span::styled("Reason  ", theme.dim),
                Span::styled(reason, theme.title),
            ]),
            Line::default(),
            row(
                "Turns",
                format!("{} of {}", m.turns_done, app.info.max_turns),
            ),
        ];
        if let Some(s) = &m.snapshot {
            let live = s.nodes.iter().filter(|n| !n.superseded).count();
            let active = s
                .slots
                .iter()
                .filter(|x| x.status == SlotStatus::Active)
                .count();
            let overrides = s.focus_history.iter().filter(|e| e.overridden).count();
            lines.push(row(
                "Concepts",
                format!(
                    "{} · {}",
                    counted(live, "node"),
                    counted(s.edges.len(), "edge")
                ),
            ));
            lines.push(row(
                "Canonical slots",
                format!("{active} active · {} candidate", s.slots.len() - active),
            ));
            // The figure of the Graph panel: the pipeline's longest chain of the last turn.
            let longest = m.last.as_deref().map_or(0, longest_chain);
            lines.push(row("Longest chain", counted(longest, "node")));
            if imported {
                lines.push(row("Questions they asked", overrides.to_string()));
            } else {
                lines.push(row("Researcher overrides", overrides.to_string()));
            }
        }
        let cost = m
            .usage
            .cost_usd
            .map_or_else(|| "n/a".to_owned(), |c| format!("${c:.4}"));
        lines.push(row(
            "Tokens",
            format!(
                "{} in · {} out · cost {cost}",
                m.usage.tokens_in, m.usage.tokens_out
            ),
        ));
        lines.push(row("Session", clean_line(&app.info.session_id)));
        if imported {
            lines.push(row(
                "Imported",
                format!(
                    "a person's interview, read-only; `interviewer coach {}` reviews its \
                     questions beside the engine's",
                    clean_line(app.info.session_id.get(..8).unwrap_or(&app.info.session_id))
                ),
            ));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "Esc browse the panels · g graph view · q quit",
            theme.key,
        )));
        let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
        let rect = window(area, 68, height, buf);
        let block = frame_for_popup(
            if imported {
                "Imported interview"
            } else {
                "Interview finished"
            },
            theme,
        );
        let inner = block.inner(rect);
        block.render(rect, buf);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }
}
