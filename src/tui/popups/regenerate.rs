//! Moderator mode's "what would it ask if…": pick a strategy and, for node-bound strategies, a
//! focus node (or let the engine rank nodes), then regenerate the pending question.

use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::window;
use crate::tui::app::{App, SessionInfo};
use crate::tui::model::Model;
use crate::tui::panels::{follow, frame, frame_for_popup, scrolled};
use crate::tui::sanitize::clean_line;
use crate::tui::text::truncate;

/// A strategy on offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyChoice {
    pub name: String,
    pub node_bound: bool,
    /// Its stage-1 final score this turn, formatted, when it was ranked.
    pub score: Option<String>,
}

/// The picker's choices and cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegenerateState {
    pub strategies: Vec<StrategyChoice>,
    pub strategy: usize,
    /// `(tracking key, label)` of the nodes on offer; index 0 of the cursor is "engine ranks".
    pub nodes: Vec<(String, String)>,
    pub node: usize,
    /// Whether the node list has the cursor.
    pub on_nodes: bool,
}

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Still choosing.
    Open,
    Cancel,
    /// Regenerate with this strategy and node (`None`: the engine ranks nodes).
    Confirm {
        strategy: String,
        node_id: Option<String>,
    },
}

impl RegenerateState {
    /// Strategies in this turn's rank order (unranked ones after), nodes in the stage-2 order
    /// (then the rest in creation order); `strategy` and `node` (a tracking key) put the cursors
    /// on a choice.
    pub fn new(
        info: &SessionInfo,
        model: &Model,
        strategy: Option<&str>,
        node: Option<&str>,
    ) -> Self {
        let mut ranked: Vec<(u32, String, String)> = model
            .last
            .as_ref()
            .map(|l| {
                l.score_decomposition
                    .iter()
                    .filter(|c| c.stage() == 1)
                    .map(|c| (c.rank, c.strategy.clone(), format!("{:.2}", c.final_score)))
                    .collect()
            })
            .unwrap_or_default();
        ranked.sort_by_key(|(rank, _, _)| *rank);
        let mut strategies: Vec<StrategyChoice> = ranked
            .iter()
            .map(|(_, name, score)| StrategyChoice {
                name: name.clone(),
                node_bound: info
                    .strategies
                    .iter()
                    .any(|s| &s.name == name && s.node_bound),
                score: Some(score.clone()),
            })
            .collect();
        for s in &info.strategies {
            if !strategies.iter().any(|c| c.name == s.name) {
                strategies.push(StrategyChoice {
                    name: s.name.clone(),
                    node_bound: s.node_bound,
                    score: None,
                });
            }
        }
        let strategy = strategy
            .and_then(|p| strategies.iter().position(|s| s.name == p))
            .unwrap_or(0);
        let nodes = node_choices(model);
        // Cursor 0 is "the engine ranks"; node `i` sits at `i + 1`.
        let node = node
            .and_then(|n| nodes.iter().position(|(k, _)| k == n))
            .map_or(0, |i| i + 1);
        Self {
            strategies,
            strategy,
            nodes,
            node,
            on_nodes: node > 0,
        }
    }

    fn chosen(&self) -> Option<&StrategyChoice> {
        self.strategies.get(self.strategy)
    }

    /// Handles a key.
    pub fn key(&mut self, code: KeyCode) -> Outcome {
        let node_bound = self.chosen().is_some_and(|s| s.node_bound);
        match code {
            KeyCode::Esc => return Outcome::Cancel,
            KeyCode::Enter => {
                let Some(strategy) = self.chosen().map(|s| s.name.clone()) else {
                    return Outcome::Cancel;
                };
                let node_id = if node_bound && self.node > 0 {
                    self.nodes.get(self.node - 1).map(|(k, _)| k.clone())
                } else {
                    None
                };
                return Outcome::Confirm { strategy, node_id };
            }
            KeyCode::Tab | KeyCode::BackTab | KeyCode::Left | KeyCode::Right => {
                self.on_nodes = node_bound && !self.on_nodes;
            }
            KeyCode::Down | KeyCode::Char('j') => {
                if self.on_nodes {
                    self.node = (self.node + 1).min(self.nodes.len());
                } else {
                    self.strategy =
                        (self.strategy + 1).min(self.strategies.len().saturating_sub(1));
                }
            }
            KeyCode::Up | KeyCode::Char('k') => {
                if self.on_nodes {
                    self.node = self.node.saturating_sub(1);
                } else {
                    self.strategy = self.strategy.saturating_sub(1);
                }
            }
            _ => {}
        }
        Outcome::Open
    }
}

/// Nodes a researcher may focus: this turn's stage-2 ranking first, then every other tracked
/// node, one entry per tracking key.
fn node_choices(model: &Model) -> Vec<(String, String)> {
    let mut keys: Vec<String> = model
        .last
        .as_ref()
        .map(|l| {
            let mut nodes: Vec<_> = l
                .score_decomposition
                .iter()
                .filter(|c| c.stage() == 2)
                .collect();
            nodes.sort_by_key(|c| c.rank);
            nodes.into_iter().map(|c| c.node_id.clone()).collect()
        })
        .unwrap_or_default();
    if let Some(s) = &model.snapshot {
        for n in s
            .nodes
            .iter()
            .filter(|n| !n.superseded && n.state.is_some())
        {
            if !keys.contains(&n.tracking_key) {
                keys.push(n.tracking_key.clone());
            }
        }
    }
    keys.into_iter()
        .map(|k| {
            let label = model.graph.label(&k).to_owned();
            (k, label)
        })
        .collect()
}

/// The picker.
#[derive(Debug)]
pub struct RegeneratePopup<'a> {
    app: &'a App,
    state: &'a RegenerateState,
}

impl<'a> RegeneratePopup<'a> {
    pub fn new(app: &'a App, state: &'a RegenerateState) -> Self {
        Self { app, state }
    }
}

impl Widget for &RegeneratePopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = &self.app.theme;
        let s = self.state;
        let rect = window(area, 96, 20, buf);
        let block = frame_for_popup("Regenerate the question", theme);
        let inner = block.inner(rect);
        block.render(rect, buf);
        let [lists, help] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(inner);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(lists);
        let left_block = frame("Strategy", theme, !s.on_nodes);
        let left_inner = left_block.inner(left);
        left_block.render(left, buf);
        let width = usize::from(left_inner.width);
        let lines: Vec<Line<'static>> = s
            .strategies
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let score = c.score.clone().unwrap_or_default();
                let bound = if c.node_bound { "◎" } else { " " };
                let text = format!("{bound} {} {score}", clean_line(&c.name));
                let mut line = Line::from(truncate(&text, width));
                if i == s.strategy {
                    line = line.style(theme.selected);
                }
                line
            })
            .collect();
        scrolled(
            lines,
            follow(s.strategy, usize::from(left_inner.height)),
            left_inner,
            buf,
        );
        let node_bound = s.chosen().is_some_and(|c| c.node_bound);
        let right_block = frame("Focus node", theme, s.on_nodes);
        let right_inner = right_block.inner(right);
        right_block.render(right, buf);
        let width = usize::from(right_inner.width);
        let lines: Vec<Line<'static>> = if node_bound {
            std::iter::once("engine ranks the nodes".to_owned())
                .chain(s.nodes.iter().map(|(_, label)| clean_line(label)))
                .enumerate()
                .map(|(i, text)| {
                    let mut line = Line::from(truncate(&text, width));
                    if i == s.node {
                        line = line.style(if s.on_nodes {
                            theme.selected
                        } else {
                            theme.winner
                        });
                    }
                    line
                })
                .collect()
        } else {
            vec![Line::from(Span::styled(
                "this strategy targets no node",
                theme.dim,
            ))]
        };
        scrolled(
            lines,
            follow(s.node, usize::from(right_inner.height)),
            right_inner,
            buf,
        );
        Line::from(Span::styled(
            "↑↓ choose · Tab strategy/node · Enter regenerate · Esc cancel · ◎ node-bound",
            theme.key,
        ))
        .render(help, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::app::StrategyInfo;

    fn info() -> SessionInfo {
        SessionInfo {
            phases: crate::domain::PhaseBoundaries::default(),
            rules: None,
            understanding: "llm".to_owned(),
            session_id: "s".into(),
            concept_id: "c".into(),
            concept_name: "C".into(),
            methodology: "m".into(),
            max_turns: 10,
            provider: "p".into(),
            model: "m".into(),
            strategies: vec![
                StrategyInfo {
                    name: "deepen".into(),
                    node_bound: true,
                },
                StrategyInfo {
                    name: "reflect".into(),
                    node_bound: false,
                },
            ],
        }
    }

    #[test]
    fn node_free_strategies_send_no_node() {
        let mut s = RegenerateState::new(&info(), &Model::default(), Some("reflect"), None);
        assert_eq!(s.strategy, 1);
        assert_eq!(s.key(KeyCode::Tab), Outcome::Open);
        assert!(!s.on_nodes, "a node-free strategy has no node column");
        assert_eq!(
            s.key(KeyCode::Enter),
            Outcome::Confirm {
                strategy: "reflect".into(),
                node_id: None
            }
        );
        assert_eq!(s.key(KeyCode::Esc), Outcome::Cancel);
    }
}
