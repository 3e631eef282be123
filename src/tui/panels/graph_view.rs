//! The graph view (toggled over the panels): the surface graph as chains and as nodes grouped
//! by ontology level, an inspector with the selected node's tracked state and provenance
//! quotes, and the canonical slots with their members.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::{empty_note, follow, frame, scrolled};
use crate::graph::records::SlotStatus;
use crate::session::views::{NodeView, SessionSnapshot};
use crate::tui::app::{App, GraphViewUi};
use crate::tui::sanitize::{clean, clean_line};
use crate::tui::strings;
use crate::tui::text::{truncate, wrap};

/// The graph view.
#[derive(Debug)]
pub struct GraphView<'a> {
    app: &'a App,
}

impl<'a> GraphView<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &GraphView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let ui = app.ui.graph_view.unwrap_or_default();
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(area);
        let [chains, nodes] =
            Layout::vertical([Constraint::Percentage(35), Constraint::Percentage(65)]).areas(left);
        let [inspector, slots] =
            Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(right);
        let Some(snapshot) = app.model.graph_snapshot() else {
            let block = frame(strings::GRAPH_VIEW, &app.theme, true);
            let inner = block.inner(area);
            block.render(area, buf);
            empty_note(inner, buf, strings::NO_NODES, &app.theme);
            return;
        };
        render_chains(app, snapshot, chains, buf);
        render_nodes(app, snapshot, ui, nodes, buf);
        render_inspector(app, snapshot, ui, inspector, buf);
        render_slots(app, snapshot, ui, slots, buf);
    }
}

fn render_chains(app: &App, snapshot: &SessionSnapshot, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let title = format!("Chains ({})", app.model.graph_index().chains.len());
    let block = frame(&title, theme, false);
    let inner = block.inner(area);
    block.render(area, buf);
    if app.model.graph_index().chains.is_empty() {
        empty_note(inner, buf, "No chains yet (no edges).", theme);
        return;
    }
    let width = usize::from(inner.width);
    let lines: Vec<Line<'static>> = app
        .model
        .graph
        .chains
        .iter()
        .map(|chain| {
            let labels: Vec<String> = chain
                .iter()
                .filter_map(|&i| snapshot.nodes.get(i))
                .map(|n| clean_line(&n.label))
                .collect();
            Line::from(truncate(&labels.join(" → "), width))
        })
        .collect();
    scrolled(lines, 0, inner, buf);
}

fn render_nodes(
    app: &App,
    snapshot: &SessionSnapshot,
    ui: GraphViewUi,
    area: Rect,
    buf: &mut Buffer,
) {
    let theme = &app.theme;
    let title = format!(
        "{} ({})",
        strings::GRAPH_VIEW,
        crate::domain::counted(snapshot.nodes.len(), "node")
    );
    let block = frame(&title, theme, !ui.on_slots);
    let inner = block.inner(area);
    block.render(area, buf);
    if snapshot.nodes.is_empty() {
        empty_note(inner, buf, strings::NO_NODES, theme);
        return;
    }
    let selected_node = app.model.graph_index().order.get(ui.node).copied();
    let width = usize::from(inner.width);
    let mut lines = Vec::new();
    let mut selected_line = 0;
    for group in &app.model.graph_index().levels {
        lines.push(Line::from(Span::styled(
            format!(
                "L{} {} ({})",
                group.level,
                group.node_type,
                group.nodes.len()
            ),
            theme.title,
        )));
        for &i in &group.nodes {
            let Some(n) = snapshot.nodes.get(i) else {
                continue;
            };
            if Some(i) == selected_node {
                selected_line = lines.len();
            }
            let mark = if n.slot_id.is_some() { "◆" } else { "•" };
            let style = if n.superseded { theme.dim } else { theme.text };
            let revised = if n.superseded { " (revised)" } else { "" };
            let text = truncate(&format!(" {mark} {}{revised}", clean_line(&n.label)), width);
            let mut line = Line::from(Span::styled(text, style));
            if Some(i) == selected_node && !ui.on_slots {
                line = line.style(theme.selected);
            }
            lines.push(line);
        }
    }
    let offset = follow(selected_line, usize::from(inner.height));
    scrolled(lines, offset, inner, buf);
}

fn render_inspector(
    app: &App,
    snapshot: &SessionSnapshot,
    ui: GraphViewUi,
    area: Rect,
    buf: &mut Buffer,
) {
    let theme = &app.theme;
    let block = frame(strings::INSPECTOR, theme, false);
    let inner = block.inner(area);
    block.render(area, buf);
    let node = app
        .model
        .graph
        .order
        .get(ui.node)
        .and_then(|&i| snapshot.nodes.get(i));
    let Some(node) = node else {
        empty_note(inner, buf, strings::NO_NODES, theme);
        return;
    };
    let lines = inspector_lines(app, snapshot, node, usize::from(inner.width));
    scrolled(lines, ui.inspector_scroll, inner, buf);
}

fn inspector_lines(
    app: &App,
    snapshot: &SessionSnapshot,
    node: &NodeView,
    width: usize,
) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let stance = match node.stance.signum() {
        1 => "+",
        -1 => "−",
        _ => "0",
    };
    let mut out = Vec::new();
    let mut text = |s: &str, style: Style, indent: usize| {
        for row in wrap(s, width.saturating_sub(indent)) {
            out.push(Line::from(Span::styled(
                format!("{}{row}", " ".repeat(indent)),
                style,
            )));
        }
    };
    text(&clean_line(&node.label), theme.title, 0);
    text(
        &format!(
            "{} · level {} · turn {} · stance {stance} · confidence {:.2}",
            clean_line(&node.node_type),
            node.level,
            node.turn,
            node.confidence
        ),
        theme.dim,
        0,
    );
    if node.superseded {
        text(
            "revised: a later answer replaced this concept",
            theme.warning,
            0,
        );
    }
    if let Some(slot) = node
        .slot_id
        .as_ref()
        .and_then(|id| snapshot.slots.iter().find(|s| &s.id == id))
    {
        text(
            &format!("slot {} ({})", clean_line(&slot.name), slot.status.as_str()),
            theme.text,
            0,
        );
    }
    text("State", theme.title, 0);
    for row in state_rows(app, node) {
        text(&row, theme.text, 2);
    }
    text("Provenance", theme.title, 0);
    if !node.source_quote.is_empty() {
        text(
            &format!("“{}”", clean(&node.source_quote)),
            theme.category,
            2,
        );
    }
    for mention in &node.mentions {
        text(
            &format!("A{}: {}", mention.turn, clean(&mention.text)),
            theme.text,
            2,
        );
    }
    out
}

/// The tracked state of a node and its latest node signals, as text rows.
fn state_rows(app: &App, node: &NodeView) -> Vec<String> {
    let Some(s) = &node.state else {
        return vec!["not tracked".to_owned()];
    };
    let signal = |name: &str| -> String {
        app.model
            .shown()
            .and_then(|l| l.node_signals.get(&node.tracking_key))
            .and_then(|v| v.get(name))
            .map_or_else(
                || "n/a".to_owned(),
                |v| match v {
                    serde_json::Value::Number(n) => n
                        .as_f64()
                        .map_or_else(|| n.to_string(), |f| format!("{f:.2}")),
                    serde_json::Value::String(s) => clean_line(s),
                    other => clean_line(&other.to_string()),
                },
            )
    };
    let mut rows = vec![
        format!(
            "focus count {} · streak {} · turns since focus {}",
            s.focus_count, s.current_focus_streak, s.turns_since_last_focus
        ),
        format!(
            "yields {} · turns since yield {} · yield rate {:.2}",
            s.yield_count, s.turns_since_last_yield, s.yield_rate
        ),
        format!(
            "edges in {} · out {} · depth {}",
            s.edge_count_incoming, s.edge_count_outgoing, s.depth
        ),
        format!(
            "exhaustion score {} · opportunity {}",
            signal("graph.node.exhaustion_score"),
            signal("meta.node.opportunity")
        ),
    ];
    if !s.strategy_usage_count.is_empty() {
        let used: Vec<String> = s
            .strategy_usage_count
            .iter()
            .map(|(k, v)| format!("{} {v}", clean_line(k)))
            .collect();
        rows.push(format!("strategies: {}", used.join(", ")));
    }
    rows
}

fn render_slots(
    app: &App,
    snapshot: &SessionSnapshot,
    ui: GraphViewUi,
    area: Rect,
    buf: &mut Buffer,
) {
    let theme = &app.theme;
    let title = format!("{} ({})", strings::SLOTS, snapshot.slots.len());
    let block = frame(&title, theme, ui.on_slots);
    let inner = block.inner(area);
    block.render(area, buf);
    if snapshot.slots.is_empty() {
        empty_note(inner, buf, strings::NO_SLOTS, theme);
        return;
    }
    let width = usize::from(inner.width);
    let mut lines = Vec::new();
    let mut selected_line = 0;
    for (i, slot) in snapshot.slots.iter().enumerate() {
        if i == ui.slot {
            selected_line = lines.len();
        }
        let (mark, style) = match slot.status {
            SlotStatus::Active => ("●", theme.text),
            SlotStatus::Candidate => ("○", theme.dim),
        };
        let promoted = slot
            .promoted_turn
            .map(|t| format!(" · active since T{t}"))
            .unwrap_or_default();
        let mut line = Line::from(vec![
            Span::styled(format!("{mark} {}", clean_line(&slot.name)), style),
            Span::styled(
                format!(
                    "  {} · support {} · seen T{}{promoted}",
                    clean_line(&slot.node_type),
                    slot.support_count,
                    slot.first_seen_turn
                ),
                theme.dim,
            ),
        ]);
        if i == ui.slot && ui.on_slots {
            line = line.style(theme.selected);
        }
        lines.push(line);
        let members: Vec<&str> = slot
            .members
            .iter()
            .map(|m| app.model.graph_index().label(m))
            .collect();
        for row in wrap(&members.join(", "), width.saturating_sub(4)) {
            lines.push(Line::from(Span::styled(
                format!("    {row}"),
                theme.category,
            )));
        }
    }
    let offset = follow(selected_line, usize::from(inner.height));
    scrolled(lines, offset, inner, buf);
}
