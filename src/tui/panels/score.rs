//! "Why did it ask that?": the stage-1 ranking of every strategy as
//! `base × phase multiplier + bonus = final` with the chosen one starred, each expandable to its
//! per-signal contributions (largest |contribution| first), then the stage-2 ranking of nodes
//! for a node-bound strategy, also expandable.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::{empty_note, follow, frame, has_focus, scrolled};
use crate::domain::SignalValue;
use crate::scoring::{ScoredCandidate, SignalContribution};
use crate::tui::app::App;
use crate::tui::layout::PanelId;
use crate::tui::model::Model;
use crate::tui::sanitize::clean_line;
use crate::tui::strings;
use crate::tui::text::{pad, truncate};
use crate::tui::theme::Theme;

/// The score decomposition panel.
#[derive(Debug)]
pub struct ScorePanel<'a> {
    app: &'a App,
}

impl<'a> ScorePanel<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

/// One selectable row: a strategy (stage 1) or a node (stage 2).
fn items(model: &Model) -> Vec<&ScoredCandidate> {
    let Some(last) = model.shown() else {
        return Vec::new();
    };
    let mut strategies: Vec<&ScoredCandidate> = last
        .score_decomposition
        .iter()
        .filter(|c| c.stage() == 1)
        .collect();
    strategies.sort_by_key(|c| c.rank);
    let mut nodes: Vec<&ScoredCandidate> = last
        .score_decomposition
        .iter()
        .filter(|c| c.stage() == 2)
        .collect();
    nodes.sort_by_key(|c| c.rank);
    strategies.extend(nodes);
    strategies
}

fn key(c: &ScoredCandidate) -> String {
    if c.stage() == 1 {
        format!("s:{}", c.strategy)
    } else {
        format!("n:{}", c.node_id)
    }
}

/// Keys of the selectable rows, in display order (what Enter expands).
pub fn item_keys(model: &Model) -> Vec<String> {
    items(model).into_iter().map(key).collect()
}

/// The strategy of the selected row (a node row gives its strategy) and, for a node row, the
/// node: what the regenerate picker starts from.
pub fn selected_choice(model: &Model, selected: usize) -> Option<(String, Option<String>)> {
    items(model).get(selected).map(|c| {
        let node = (c.stage() == 2).then(|| c.node_id.clone());
        (c.strategy.clone(), node)
    })
}

impl Widget for &ScorePanel<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let focused = has_focus(app, PanelId::Scores);
        let mut block = frame(strings::SCORES, &app.theme, focused);
        if let Some(last) = app.model.shown() {
            block = block.title(Line::from(format!(" turn {} ", last.turn_number)).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        if app.model.shown().is_none() {
            empty_note(inner, buf, strings::NO_TURN_YET, &app.theme);
            return;
        }
        let (lines, selected_line) = lines(app, usize::from(inner.width), focused);
        let offset = follow(selected_line, usize::from(inner.height));
        scrolled(lines, offset, inner, buf);
    }
}

fn lines(app: &App, width: usize, focused: bool) -> (Vec<Line<'static>>, usize) {
    let theme = &app.theme;
    let model = &app.model;
    let Some(last) = model.shown() else {
        return (Vec::new(), 0);
    };
    let mut out = Vec::new();
    let phase = last
        .signals
        .get("meta.interview.phase")
        .map_or_else(|| "?".to_owned(), |v| clean_line(&v.to_string()));
    out.push(Line::from(vec![
        Span::styled(format!("phase {phase}"), theme.category),
        Span::styled(" · final = base × phase + bonus", theme.dim),
    ]));
    if model.overridden_turn(last.turn_number) {
        let focus = last
            .focus
            .as_ref()
            .map(|f| format!(" → {}", clean_line(&f.label)))
            .unwrap_or_default();
        out.push(Line::from(Span::styled(
            format!(
                "researcher override: {}{focus}",
                clean_line(&last.strategy_selected)
            ),
            theme.warning,
        )));
    }
    let all = items(model);
    let name_width = all
        .iter()
        .filter(|c| c.stage() == 1)
        .map(|c| c.strategy.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, width.saturating_sub(38).max(8));
    out.push(Line::from(Span::styled(
        format!(
            "    # {} {:>6}   {:>5}   {:>5}   {:>6}",
            pad("strategy", name_width),
            "base",
            "phase",
            "bonus",
            "final"
        ),
        theme.dim,
    )));
    let mut selected_line = 0;
    let mut stage2_header = false;
    for (i, c) in all.iter().enumerate() {
        if c.stage() == 2 && !stage2_header {
            stage2_header = true;
            out.push(Line::default());
            out.push(Line::from(Span::styled(
                format!("Stage 2 · nodes for {}", clean_line(&c.strategy)),
                theme.title,
            )));
        }
        let selected = i == app.ui.scores.selected;
        if selected {
            selected_line = out.len();
        }
        let expanded = app.ui.scores.expanded.contains(&key(c));
        let mut line = if c.stage() == 1 {
            strategy_line(c, expanded, name_width, theme)
        } else {
            node_line(c, expanded, model, width, theme)
        };
        if selected && focused {
            line = line.style(theme.selected);
        }
        out.push(line);
        if expanded {
            contributions(&mut out, &c.signal_contributions, width, theme);
        }
    }
    if !stage2_header {
        out.push(Line::default());
        out.push(Line::from(Span::styled(stage2_note(app), theme.dim)));
    }
    (out, selected_line)
}

/// Why there is no node ranking this turn.
fn stage2_note(app: &App) -> String {
    let Some(last) = app.model.shown() else {
        return String::new();
    };
    let strategy = clean_line(&last.strategy_selected);
    let bound = app
        .info
        .strategies
        .iter()
        .any(|s| s.name == last.strategy_selected && s.node_bound);
    if !bound {
        format!("Stage 2 · {strategy} targets no node")
    } else if last.turn_number <= 1 {
        "Stage 2 · no node selection in turn 1 (the question it answers saw an empty graph)"
            .to_owned()
    } else {
        format!("Stage 2 · no node signals for {strategy}")
    }
}

fn marker(c: &ScoredCandidate, expanded: bool) -> String {
    let open = if expanded { '▾' } else { '▸' };
    let star = if c.selected { '★' } else { ' ' };
    format!("{open}{star}")
}

fn strategy_line(
    c: &ScoredCandidate,
    expanded: bool,
    name_width: usize,
    theme: &Theme,
) -> Line<'static> {
    let style = if c.selected { theme.winner } else { theme.text };
    Line::from(vec![
        Span::styled(marker(c, expanded), theme.winner),
        Span::styled(format!(" {:>2} ", c.rank), theme.dim),
        Span::styled(pad(&clean_line(&c.strategy), name_width), style),
        Span::raw(format!(
            " {:>6.2} × {:>5.2} + {:>5.2} = ",
            c.base_score, c.phase_multiplier, c.phase_bonus
        )),
        Span::styled(format!("{:>6.2}", c.final_score), style),
    ])
}

fn node_line(
    c: &ScoredCandidate,
    expanded: bool,
    model: &Model,
    width: usize,
    theme: &Theme,
) -> Line<'static> {
    let style = if c.selected { theme.winner } else { theme.text };
    let label = model
        .shown()
        .and_then(|l| l.focus.as_ref())
        .filter(|f| f.node_id == c.node_id)
        .map_or_else(
            || model.graph.label(&c.node_id).to_owned(),
            |f| f.label.clone(),
        );
    let label_width = width.saturating_sub(15).max(8);
    Line::from(vec![
        Span::styled(marker(c, expanded), theme.winner),
        Span::styled(format!(" {:>2} ", c.rank), theme.dim),
        Span::styled(pad(&clean_line(&label), label_width), style),
        Span::styled(format!(" {:>6.2}", c.final_score), style),
    ])
}

fn contributions(
    out: &mut Vec<Line<'static>>,
    list: &[SignalContribution],
    width: usize,
    theme: &Theme,
) {
    if list.is_empty() {
        out.push(Line::from(Span::styled(
            "      no weighted signal was present",
            theme.dim,
        )));
        return;
    }
    let mut sorted: Vec<&SignalContribution> = list.iter().collect();
    sorted.sort_by(|a, b| b.contribution.abs().total_cmp(&a.contribution.abs()));
    let name_width = width.saturating_sub(34).clamp(10, 36);
    for s in sorted {
        let value = match &s.value {
            SignalValue::Number(n) => format!("{n:.2}"),
            other => clean_line(&other.to_string()),
        };
        let sign = if s.contribution >= 0.0 {
            theme.positive
        } else {
            theme.negative
        };
        out.push(Line::from(vec![
            Span::raw("      "),
            Span::styled(pad(&clean_line(&s.name), name_width), theme.dim),
            Span::raw(format!(
                " {:>7} × {:>5.2} = ",
                truncate(&value, 7),
                s.weight
            )),
            Span::styled(format!("{:>+6.2}", s.contribution), sign),
        ]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Event;
    use crate::tui::app::Mode;
    use crate::tui::panels::fixture::{self, draw, inside, rows};

    fn panel(app: &App, width: u16, height: u16) -> Buffer {
        draw(&ScorePanel::new(app), width, height)
    }

    #[test]
    fn both_stages_show_their_ranking_and_the_arithmetic_of_each_score() {
        let app = fixture::app(Mode::Respondent);
        let buf = panel(&app, 60, 12);
        let top = &rows(&buf)[0];
        assert!(
            top.starts_with("╭ Score decomposition ") && top.ends_with(" turn 2 ╮"),
            "{top}"
        );
        let expected = [
            "phase early · final = base × phase + bonus".to_owned(),
            "    # strategy   base   phase   bonus    final".to_owned(),
            "▸★  1 deepen     1.50 ×  1.30 +  0.20 =   2.15".to_owned(),
            "▸   2 broaden    0.40 ×  1.00 +  0.00 =   0.40".to_owned(),
            String::new(),
            "Stage 2 · nodes for deepen".to_owned(),
            // The focus node by the turn's focus label, the other by the snapshot's graph.
            format!("▸★  1 {:<43}   1.00", "creamy texture"),
            format!("▸   2 {:<43}   0.50", "oat milk"),
            String::new(),
            String::new(),
        ];
        assert_eq!(inside(&buf), expected);
    }

    #[test]
    fn an_expanded_strategy_lists_its_contributions_largest_first() {
        let mut app = fixture::app(Mode::Respondent);
        app.ui.scores.expanded.insert("s:deepen".to_owned());
        app.ui.scores.expanded.insert("s:broaden".to_owned());
        let rows = inside(&panel(&app, 60, 14));
        assert!(rows[2].starts_with("▾★  1 deepen"), "{}", rows[2]);
        assert_eq!(
            rows[3],
            format!(
                "      {:<24}    true ×  0.80 =  +0.80",
                "llm.response_depth.deep"
            )
        );
        assert_eq!(
            rows[4],
            format!(
                "      {:<24}    true ×  0.70 =  +0.70",
                "llm.engagement.high"
            )
        );
        assert!(rows[5].starts_with("▾   2 broaden"), "{}", rows[5]);
        assert_eq!(
            rows[6],
            format!("      {:<24}    3.00 × -0.20 =  -0.60", "graph.edge_count")
        );
    }

    #[test]
    fn a_node_free_winner_says_why_there_is_no_stage_two() {
        let mut app = fixture::app(Mode::Respondent);
        let mut turn = fixture::turn();
        turn.strategy_selected = "broaden".to_owned();
        turn.score_decomposition = vec![
            ScoredCandidate {
                rank: 1,
                selected: true,
                ..fixture::decomposition()[1].clone()
            },
            ScoredCandidate {
                rank: 2,
                selected: false,
                ..fixture::decomposition()[0].clone()
            },
        ];
        app.apply(Event::TurnCompleted(Box::new(turn)));
        let rows = inside(&panel(&app, 60, 10));
        assert!(rows[2].starts_with("▸★  1 broaden"), "{}", rows[2]);
        assert_eq!(rows[5], "Stage 2 · broaden targets no node");
    }

    #[test]
    fn narrow_panels_cut_node_labels_and_rows_at_the_frame() {
        let app = fixture::app(Mode::Respondent);
        let rows = inside(&panel(&app, 30, 12));
        // 28 columns: a strategy row is cut at the frame (mid-number, without a mark), not
        // wrapped; rank and name stay readable.
        assert_eq!(rows[2], "▸★  1 deepen     1.50 ×  1.3");
        assert_eq!(rows[3], "▸   2 broaden    0.40 ×  1.0");
        assert_eq!(rows[6], "▸★  1 creamy textu…   1.00");
    }

    #[test]
    fn before_the_first_turn_the_panel_says_when_scores_appear() {
        let rows = inside(&panel(&fixture::empty_app(Mode::Respondent), 40, 5));
        assert_eq!(rows[0], strings::NO_TURN_YET);
    }
}
