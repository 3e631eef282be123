//! A progress bar per simulated session, fed by the pipeline's events: completed turns out of
//! the maximum, the stage running now and the size of the graph.
//!
//! Bars draw on stderr and only when it is a terminal (indicatif's default target), so piped or
//! captured output carries the summary alone and stays reproducible. Where stderr is not a
//! terminal (a CI log, `2> run.log`), each completed or failed turn is a plain line there
//! instead, so a long run still shows it is moving.

use indicatif::{ProgressBar, ProgressStyle};

use crate::domain::counted;
use crate::pipeline::Event;

/// Bar layout: the run's name, the bar, turns done of the maximum, then the message.
const TEMPLATE: &str = "{prefix} [{bar:24.cyan/blue}] {pos}/{len} turns  {msg}";

/// The style of simulation bars.
pub fn progress_style() -> ProgressStyle {
    ProgressStyle::with_template(TEMPLATE)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// One run's bar and what it has seen so far.
#[derive(Debug, Clone)]
pub struct RunProgress {
    bar: ProgressBar,
    stage: String,
    nodes: u32,
    tokens: u64,
}

impl RunProgress {
    /// Follows a run on `bar`, whose length should be the run's maximum turns.
    pub fn new(bar: ProgressBar) -> Self {
        Self {
            bar,
            stage: "starting".to_owned(),
            nodes: 0,
            tokens: 0,
        }
    }

    pub fn bar(&self) -> &ProgressBar {
        &self.bar
    }

    /// Updates the bar for one event; where the bar is not drawn, prints the event's
    /// [`Self::turn_line`] on stderr.
    pub fn observe(&mut self, event: &Event) {
        self.update(event);
        if self.bar.is_hidden()
            && let Some(line) = self.turn_line(event)
        {
            eprintln!("{line}");
        }
    }

    /// The plain line for a completed or failed turn (after [`Self::observe`] saw it):
    /// `<prefix>: turn 3/10 · deepen → froths well · 7 nodes · 1234 tokens`.
    pub fn turn_line(&self, event: &Event) -> Option<String> {
        let prefix = self.bar.prefix();
        let of = self
            .bar
            .length()
            .map_or_else(String::new, |n| format!("/{n}"));
        match event {
            Event::TurnCompleted(result) => {
                let focus = result
                    .focus
                    .as_ref()
                    .map_or_else(String::new, |f| format!(" → {}", f.label));
                Some(format!(
                    "{prefix}: turn {}{of} · {}{focus} · {} · {}",
                    result.turn_number,
                    result.strategy_selected,
                    counted(self.nodes, "node"),
                    counted(self.tokens, "token")
                ))
            }
            Event::TurnFailed { turn, .. } => {
                Some(format!("{prefix}: turn {turn}{of} · {}", self.stage))
            }
            _ => None,
        }
    }

    fn update(&mut self, event: &Event) {
        match event {
            Event::StageStarted { turn, stage } => {
                self.stage = format!("turn {turn} · {stage}");
            }
            Event::Question { turn: 0, .. } => "opening asked".clone_into(&mut self.stage),
            Event::TurnCompleted(result) => {
                self.bar.set_position(u64::from(result.turn_number));
                self.nodes = result.graph_state.node_count;
                self.stage = format!("turn {} done", result.turn_number);
            }
            Event::LlmCall {
                tokens_in,
                tokens_out,
                ..
            } => self.tokens += tokens_in + tokens_out,
            Event::TurnFailed { turn, stage, error } => {
                self.stage = format!("turn {turn} failed in {stage}: {error}");
            }
            Event::Finished { reason } => {
                self.stage = format!("finished: {reason}");
            }
            _ => return,
        }
        self.bar.set_message(self.message());
    }

    /// The bar's message: stage, nodes and tokens so far.
    pub fn message(&self) -> String {
        format!(
            "{} · {} · {}",
            self.stage,
            counted(self.nodes, "node"),
            counted(self.tokens, "token")
        )
    }

    /// Replaces the bar with one plain line, `<prefix>: <message>`, so that what follows on
    /// stdout starts on a line of its own.
    pub fn finish(&self, message: &str) {
        self.bar
            .println(format!("{}: {message}", self.bar.prefix()));
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::llm::Role;
    use crate::pipeline::Stage;

    #[test]
    fn events_move_the_bar() {
        let mut p = RunProgress::new(ProgressBar::hidden());
        p.bar().set_length(10);
        p.observe(&Event::StageStarted {
            turn: 2,
            stage: Stage::Extraction,
        });
        assert!(p.message().starts_with("turn 2 · extraction"));
        p.observe(&Event::LlmCall {
            turn: 2,
            role: Role::Extraction,
            provider: "scripted".to_owned(),
            model: "m".to_owned(),
            tokens_in: 30,
            tokens_out: 12,
            latency: Duration::ZERO,
            attempts: 1,
            cost_usd: None,
            outcome: "ok".to_owned(),
        });
        p.observe(&Event::Finished {
            reason: "Maximum turns reached".to_owned(),
        });
        assert_eq!(
            p.message(),
            "finished: Maximum turns reached · 0 nodes · 42 tokens"
        );
        assert_eq!(p.bar().message(), p.message());
    }
}
