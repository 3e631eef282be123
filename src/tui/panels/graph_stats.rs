//! Graph statistics after the latest turn: surface and canonical counts, depth and the longest
//! chain, the edge/node ratio, the saturation metrics with the two meta saturation scores, and
//! a sparkline of new nodes per turn.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::{bar, empty_note, frame, has_focus, scrolled};
use crate::domain::{SignalValue, counted, format_number};
use crate::graph::records::SlotStatus;
use crate::pipeline::TurnResult;
use crate::tui::app::App;
use crate::tui::layout::PanelId;
use crate::tui::sanitize::clean_line;
use crate::tui::strings;
use crate::tui::text::{pad, width as text_width, wrap};
use crate::tui::theme::Theme;

/// Sparkline levels, lowest first.
const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Width of the label column.
const LABEL: usize = 15;

/// The graph statistics panel.
#[derive(Debug)]
pub struct GraphStatsPanel<'a> {
    app: &'a App,
}

impl<'a> GraphStatsPanel<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &GraphStatsPanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let focused = has_focus(app, PanelId::GraphStats);
        let block = frame(strings::GRAPH_STATS, &app.theme, focused);
        let inner = block.inner(area);
        block.render(area, buf);
        if app.model.shown().is_none() {
            empty_note(inner, buf, strings::NO_TURN_YET, &app.theme);
            return;
        }
        let lines = lines(app, usize::from(inner.width));
        scrolled(lines, app.ui.graph_stats_scroll, inner, buf);
    }
}

/// Rows the panel has at `width` (for scroll bounds).
pub fn line_count(app: &App, width: usize) -> usize {
    lines(app, width).len()
}

fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let Some(last) = app.model.shown() else {
        return Vec::new();
    };
    let g = &last.graph_state;
    let mut out = Vec::new();
    row(
        &mut out,
        "Surface",
        &format!(
            "{} · {} · {}",
            counted(g.node_count, "node"),
            counted(g.edge_count, "edge"),
            counted(g.orphan_count, "orphan")
        ),
        width,
        theme,
    );
    let by_type: Vec<String> = nodes_by_type(app, last)
        .into_iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    row(&mut out, "  by type", &by_type.join(" · "), width, theme);
    row(&mut out, "Canonical", &canonical(app, last), width, theme);
    let chain_nodes = g.longest_chain_path.len();
    row(
        &mut out,
        "Depth",
        &format!(
            "max {} · longest chain {} · avg {:.2}",
            g.max_depth,
            counted(longest_chain(last), "node"),
            g.avg_depth
        ),
        width,
        theme,
    );
    let ratio = if g.node_count == 0 {
        0.0
    } else {
        f64::from(g.edge_count) / f64::from(g.node_count)
    };
    row(
        &mut out,
        "Edge/node",
        &format!(
            "{ratio:.2} · chains complete {:.0}%",
            g.chain_completion_ratio * 100.0
        ),
        width,
        theme,
    );
    saturation(&mut out, last, width, theme);
    out.push(sparkline(app, theme));
    if chain_nodes > 1 {
        let chain: Vec<&str> = g
            .longest_chain_path
            .iter()
            .map(|id| app.model.graph_index().label(id))
            .collect();
        row(
            &mut out,
            "Longest",
            &clean_line(&chain.join(" → ")),
            width,
            theme,
        );
    }
    out
}

/// Indent of a value set under its label.
const INDENT: &str = "  ";

/// Nodes on the longest chain of the turn's graph: the one figure the Graph panel and the end
/// screen both show.
pub(crate) fn longest_chain(last: &TurnResult) -> usize {
    last.graph_state.longest_chain_path.len()
}

/// A labelled row; a value wider than the panel wraps under itself. Where one of its words
/// (a long node type) is wider than the room beside the label, the value goes under the label
/// across the whole panel instead, so no word is broken.
fn row(out: &mut Vec<Line<'static>>, label: &str, value: &str, width: usize, theme: &Theme) {
    let room = width.saturating_sub(LABEL).max(8);
    let longest_word = value.split_whitespace().map(text_width).max().unwrap_or(0);
    if longest_word > room && width > LABEL {
        out.push(Line::from(Span::styled(label.to_owned(), theme.dim)));
        for part in wrap(value, width.saturating_sub(INDENT.len())) {
            out.push(Line::from(vec![Span::raw(INDENT), Span::raw(part)]));
        }
        return;
    }
    for (i, part) in wrap(value, room).into_iter().enumerate() {
        let head = if i == 0 { label } else { "" };
        out.push(Line::from(vec![
            Span::styled(pad(head, LABEL), theme.dim),
            Span::raw(part),
        ]));
    }
}

/// Node counts by type, in ontology level order when the snapshot knows the levels.
fn nodes_by_type(app: &App, last: &TurnResult) -> Vec<(String, u32)> {
    let by_type = &last.graph_state.nodes_by_type;
    let mut out: Vec<(String, u32)> = app
        .model
        .graph
        .levels
        .iter()
        .filter_map(|l| by_type.get(&l.node_type).map(|n| (l.node_type.clone(), *n)))
        .collect();
    for (t, n) in by_type {
        if !out.iter().any(|(known, _)| known == t) {
            out.push((clean_line(t), *n));
        }
    }
    out
}

fn canonical(app: &App, last: &TurnResult) -> String {
    let (active, candidate) = app.model.graph_snapshot().map_or((0, 0), |s| {
        let active = s
            .slots
            .iter()
            .filter(|x| x.status == SlotStatus::Active)
            .count();
        (active, s.slots.len() - active)
    });
    match &last.canonical_graph {
        Some(c) => format!(
            "{active} active · {} · {} · {} · depth {}",
            counted(candidate, "candidate slot"),
            counted(c.edge_count, "edge"),
            counted(c.orphan_count, "orphan"),
            c.max_depth
        ),
        None => "off (stage 4.5 disabled)".to_owned(),
    }
}

fn saturation(out: &mut Vec<Line<'static>>, last: &TurnResult, width: usize, theme: &Theme) {
    let s = &last.saturation_metrics;
    out.push(Line::from(Span::styled("Saturation", theme.title)));
    out.push(meter("  chao1", s.chao1_ratio, theme));
    out.push(meter("  new info", s.new_info_rate, theme));
    row(
        out,
        "  streaks",
        &format!(
            "low-info {} · shallow {} · plateau {}",
            s.consecutive_low_info, s.consecutive_shallow, s.consecutive_depth_plateau
        ),
        width,
        theme,
    );
    row(
        out,
        "  saturated",
        if s.is_saturated { "yes" } else { "no" },
        width,
        theme,
    );
    out.push(Line::from(Span::styled("Meta saturation", theme.title)));
    for (label, key) in [
        ("  conversation", "meta.conversation.saturation"),
        ("  canonical", "meta.canonical.saturation"),
    ] {
        match last.signals.get(key) {
            Some(SignalValue::Number(n)) => out.push(meter(label, *n, theme)),
            _ => row(out, label, "n/a", width, theme),
        }
    }
}

fn meter(label: &str, value: f64, theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::styled(pad(label, LABEL), theme.dim)];
    spans.extend(bar(value, 8, theme));
    spans.push(Span::raw(format!(" {}", format_number(value))));
    Line::from(spans)
}

fn sparkline(app: &App, theme: &Theme) -> Line<'static> {
    let counts = app
        .model
        .snapshot
        .as_ref()
        .map(|s| s.new_nodes_per_turn.clone())
        .unwrap_or_default();
    let max = counts.iter().copied().max().unwrap_or(0);
    let spark: String = counts
        .iter()
        .map(|&n| {
            if max == 0 {
                SPARKS[0]
            } else {
                let i = (n as usize * (SPARKS.len() - 1)).div_ceil(max as usize);
                SPARKS.get(i).copied().unwrap_or('█')
            }
        })
        .collect();
    let numbers: Vec<String> = counts.iter().map(u32::to_string).collect();
    Line::from(vec![
        Span::styled(pad("New/turn", LABEL), theme.dim),
        Span::styled(spark, theme.bar),
        Span::styled(format!("  {}", numbers.join(" ")), theme.dim),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::CanonicalGraphState;
    use crate::pipeline::Event;
    use crate::session::views::SlotView;
    use crate::tui::app::Mode;
    use crate::tui::panels::fixture::{self, draw, inside, rows};

    fn panel(app: &App, width: u16, height: u16) -> Buffer {
        draw(&GraphStatsPanel::new(app), width, height)
    }

    #[test]
    fn counts_depth_saturation_and_new_nodes_per_turn_with_their_labels() {
        let app = fixture::app(Mode::Respondent);
        let buf = panel(&app, 60, 20);
        assert!(rows(&buf)[0].starts_with("╭ Graph "), "{}", rows(&buf)[0]);
        let expected = [
            "Surface        4 nodes · 3 edges · 1 orphan",
            // Types in ontology level order; a value too wide for the row wraps under itself.
            "  by type      attribute 2 · functional_consequence 1 ·",
            "               terminal_value 1",
            "Canonical      off (stage 4.5 disabled)",
            "Depth          max 2 · longest chain 3 nodes · avg 1.25",
            "Edge/node      0.75 · chains complete 50%",
            "Saturation",
            "  chao1        ████░░░░ 0.5",
            "  new info     ████████ 1",
            "  streaks      low-info 0 · shallow 1 · plateau 0",
            "  saturated    no",
            "Meta saturation",
            "  conversation ██░░░░░░ 0.25",
            "  canonical    n/a",
            // Three new nodes in turn 1, one in turn 2.
            "New/turn       █▄  3 1",
            "Longest        oat milk → creamy texture → calm morning",
            "",
            "",
        ];
        assert_eq!(inside(&buf), expected);
    }

    #[test]
    fn canonical_counts_come_from_the_turn_and_the_snapshots_slots() {
        let mut app = fixture::app(Mode::Respondent);
        let mut turn = fixture::turn();
        turn.canonical_graph = Some(CanonicalGraphState {
            concept_count: 1,
            edge_count: 0,
            orphan_count: 1,
            max_depth: 0,
            avg_support: 2.0,
        });
        let slot = |id: &str, status: SlotStatus| SlotView {
            id: id.to_owned(),
            name: format!("slot {id}"),
            node_type: "attribute".to_owned(),
            status,
            support_count: 2,
            first_seen_turn: 1,
            promoted_turn: None,
            members: vec!["n1".to_owned()],
        };
        let mut snapshot = fixture::snapshot();
        snapshot.slots = vec![
            slot("s1", SlotStatus::Active),
            slot("s2", SlotStatus::Candidate),
        ];
        app.apply(Event::TurnCompleted(Box::new(turn)));
        app.apply(crate::session::SessionEvent::Snapshot(std::sync::Arc::new(
            snapshot,
        )));
        let rows = inside(&panel(&app, 80, 20));
        assert_eq!(
            rows[2],
            "Canonical      1 active · 1 candidate slot · 0 edges · 1 orphan · depth 0"
        );
    }

    #[test]
    fn narrow_panels_wrap_values_under_their_label() {
        let app = fixture::app(Mode::Respondent);
        let rows = inside(&panel(&app, 36, 24));
        assert_eq!(rows[0], "Surface        4 nodes · 3 edges ·");
        assert_eq!(rows[1], "               1 orphan");
    }

    #[test]
    fn before_the_first_turn_the_panel_says_when_statistics_appear() {
        let rows = inside(&panel(&fixture::empty_app(Mode::Respondent), 40, 5));
        assert_eq!(rows[0], strings::NO_TURN_YET);
    }
}
