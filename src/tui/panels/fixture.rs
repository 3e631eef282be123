//! A small session written out in full for the panel tests: an app with a fixed clock and the
//! colourless theme, turn 2 of a means-end interview about oat milk (its signals, score
//! decomposition and graph state) and the snapshot that follows it (focus trace, four nodes,
//! usage). Every number a panel draws is chosen here, so a test can name the cell it expects.
//!
//! The state goes in through [`App::apply`], the same fold the session's events take; nothing
//! here reaches into the model behind the fold's back. [`draw`] renders one widget alone into
//! a fresh [`Buffer`]; [`rows`] reads it back as text, [`inside`] only what is inside the
//! panel's frame.

use std::sync::Arc;
use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use serde_json::Map;

use crate::domain::{FocusEntry, GraphState, RubricScore, SaturationMetrics, SignalValue, Signals};
use crate::pipeline::contracts::{Alternative, ExtractionResult, Focus};
use crate::pipeline::{Event, TurnResult};
use crate::scoring::{ScoredCandidate, SignalContribution};
use crate::session::SessionEvent;
use crate::session::views::{EdgeView, NodeView, SessionSnapshot};
use crate::store::UsageTotals;
use crate::tui::app::{App, FixedClock, Mode, SessionInfo, StrategyInfo};
use crate::tui::theme::Theme;

/// The session's facts: a 10-turn oat milk interview whose `deepen` strategy targets a node
/// and whose `broaden` does not.
pub(crate) fn info() -> SessionInfo {
    SessionInfo {
        phases: crate::domain::PhaseBoundaries::default(),
        rules: None,
        session_id: "fixture".into(),
        concept_id: "oat_milk".into(),
        concept_name: "Oat milk".into(),
        methodology: "means_end_chain".into(),
        max_turns: 10,
        provider: "scripted".into(),
        model: "script-1".into(),
        understanding: "offline".into(),
        strategies: vec![
            StrategyInfo {
                name: "deepen".into(),
                node_bound: true,
            },
            StrategyInfo {
                name: "broaden".into(),
                node_bound: false,
            },
        ],
    }
}

/// An app in `mode` that has seen nothing yet.
pub(crate) fn empty_app(mode: Mode) -> App {
    App::new(
        info(),
        mode,
        Theme::monochrome(),
        Arc::new(FixedClock(Instant::now())),
    )
}

/// An app after the opening question, two answers and the questions that followed them, turn
/// 2's result and the snapshot after it.
pub(crate) fn app(mode: Mode) -> App {
    let mut app = empty_app(mode);
    for event in conversation() {
        app.apply(event);
    }
    app.apply(Event::TurnCompleted(Box::new(turn())));
    app.apply(SessionEvent::Snapshot(Arc::new(snapshot())));
    app
}

/// Two turns of questions and answers; the question of turn 2 waits for its answer.
pub(crate) fn conversation() -> Vec<SessionEvent> {
    let question = |turn: u32, text: &str| {
        SessionEvent::from(Event::Question {
            turn,
            text: text.into(),
            closing: false,
        })
    };
    let answer = |turn: u32, text: &str| SessionEvent::AnswerReceived {
        turn,
        text: text.into(),
    };
    vec![
        question(0, "What comes to mind when you think about oat milk?"),
        answer(1, "It is creamy and it is cheaper than dairy where I live."),
        question(1, "What does the creamy texture give you?"),
        answer(2, "A calm start to the morning."),
        question(2, "Why does a calm morning matter to you?"),
    ]
}

fn number(n: f64) -> SignalValue {
    SignalValue::Number(n)
}

/// Turn 2's global signals: counts, unit values, a boolean and categories from four pools.
pub(crate) fn signals() -> Signals {
    [
        ("graph.node_count", number(4.0)),
        ("graph.edge_count", number(3.0)),
        (
            "graph.chain_completion.has_complete",
            SignalValue::Bool(true),
        ),
        ("llm.response_depth", SignalValue::category("deep")),
        ("llm.engagement", number(0.8)),
        ("temporal.strategy_repetition_count", number(0.4)),
        ("meta.interview.phase", SignalValue::category("early")),
        ("meta.conversation.saturation", number(0.25)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn contribution(
    name: &str,
    value: SignalValue,
    weight: f64,
    contribution: f64,
) -> SignalContribution {
    SignalContribution {
        name: name.into(),
        value,
        weight,
        contribution,
    }
}

fn candidate(strategy: &str, node_id: &str, rank: u32, scores: [f64; 4]) -> ScoredCandidate {
    let [base_score, phase_multiplier, phase_bonus, final_score] = scores;
    ScoredCandidate {
        strategy: strategy.into(),
        node_id: node_id.into(),
        signal_contributions: Vec::new(),
        base_score,
        phase_multiplier,
        phase_bonus,
        final_score,
        rank,
        selected: rank == 1,
    }
}

/// `deepen` (1.5 × 1.3 + 0.2 = 2.15) over `broaden` (0.4), then "creamy texture" over
/// "oat milk" in stage 2.
pub(crate) fn decomposition() -> Vec<ScoredCandidate> {
    let mut deepen = candidate("deepen", "", 1, [1.5, 1.3, 0.2, 2.15]);
    deepen.signal_contributions = vec![
        contribution("llm.engagement.high", SignalValue::Bool(true), 0.7, 0.7),
        contribution("llm.response_depth.deep", SignalValue::Bool(true), 0.8, 0.8),
    ];
    let mut broaden = candidate("broaden", "", 2, [0.4, 1.0, 0.0, 0.4]);
    broaden.signal_contributions = vec![contribution("graph.edge_count", number(3.0), -0.2, -0.6)];
    vec![
        deepen,
        broaden,
        candidate("deepen", "n2", 1, [1.0, 1.0, 0.0, 1.0]),
        candidate("deepen", "n1", 2, [0.5, 1.0, 0.0, 0.5]),
    ]
}

/// Turn 2: four nodes in a three-node chain with one orphan, `deepen` on "creamy texture".
pub(crate) fn turn() -> TurnResult {
    let graph_state = GraphState {
        node_count: 4,
        edge_count: 3,
        nodes_by_type: [
            ("attribute".to_owned(), 2),
            ("functional_consequence".to_owned(), 1),
            ("terminal_value".to_owned(), 1),
        ]
        .into_iter()
        .collect(),
        orphan_count: 1,
        max_depth: 2,
        avg_depth: 1.25,
        longest_chain_path: vec!["n1".into(), "n2".into(), "n3".into()],
        chain_completion_ratio: 0.5,
        has_complete_chain: true,
        turn_count: 2,
        ..GraphState::default()
    };
    TurnResult {
        turn_number: 2,
        extracted: ExtractionResult::default(),
        graph_state,
        // The scoring type is the pipeline's own; its JSON form is public.
        scoring: serde_json::from_value(serde_json::json!({"depth": 2.0, "saturation": 0.25}))
            .unwrap(),
        strategy_selected: "deepen".into(),
        next_question: "Why does a calm morning matter to you?".into(),
        should_continue: true,
        latency_ms: 0,
        signals: signals(),
        strategy_alternatives: vec![
            Alternative {
                strategy: "deepen".into(),
                score: 2.15,
            },
            Alternative {
                strategy: "broaden".into(),
                score: 0.4,
            },
        ],
        termination_reason: None,
        canonical_graph: None,
        graph_comparison: None,
        nodes_added: Vec::new(),
        edges_added: Vec::new(),
        saturation_metrics: SaturationMetrics {
            chao1_ratio: 0.5,
            new_info_rate: 1.0,
            consecutive_low_info: 0,
            consecutive_shallow: 1,
            consecutive_depth_plateau: 0,
            prev_max_depth: 1,
            is_saturated: false,
        },
        node_signals: Map::new(),
        score_decomposition: decomposition(),
        focus: Some(Focus {
            node_id: "n2".into(),
            label: "creamy texture".into(),
        }),
    }
}

fn node(id: &str, label: &str, node_type: &str, level: u32, turn: u32) -> NodeView {
    NodeView {
        id: id.into(),
        label: label.into(),
        node_type: node_type.into(),
        level,
        turn,
        stance: 1,
        confidence: 0.9,
        superseded: false,
        tracking_key: id.into(),
        slot_id: None,
        source_quote: label.into(),
        mentions: Vec::new(),
        state: None,
    }
}

fn edge(source: &str, target: &str, turn: u32) -> EdgeView {
    EdgeView {
        source: source.into(),
        target: target.into(),
        edge_type: "leads_to".into(),
        turn,
    }
}

/// The session after turn 2: the focus trace of both turns, the graph, a rubric score and the
/// usage so far.
pub(crate) fn snapshot() -> SessionSnapshot {
    SessionSnapshot {
        session_id: "fixture".into(),
        turn_count: 2,
        max_turns: 10,
        finished: None,
        focus_history: vec![
            FocusEntry {
                turn: 1,
                node_id: String::new(),
                label: String::new(),
                strategy: "broaden".into(),
                overridden: false,
            },
            FocusEntry {
                turn: 2,
                node_id: "n2".into(),
                label: "creamy texture".into(),
                strategy: "deepen".into(),
                overridden: false,
            },
        ],
        nodes: vec![
            node("n1", "oat milk", "attribute", 1, 1),
            node("n2", "creamy texture", "attribute", 1, 1),
            node("n3", "calm morning", "functional_consequence", 2, 2),
            node("n4", "cheaper than dairy", "terminal_value", 4, 1),
        ],
        edges: vec![
            edge("n1", "n2", 1),
            edge("n2", "n3", 2),
            edge("n1", "n3", 2),
        ],
        slots: Vec::new(),
        rubric_scores: [(
            "engagement".to_owned(),
            RubricScore {
                score: 4,
                rationale: "answers readily and adds detail".into(),
            },
        )]
        .into_iter()
        .collect(),
        new_nodes_per_turn: vec![3, 1],
        usage: UsageTotals {
            tokens_in: 1_000,
            tokens_out: 234,
            cost_usd: Some(0.0012),
            calls: 6,
            unpriced_calls: 0,
        },
    }
}

/// `widget` drawn alone into a fresh `width` × `height` buffer.
pub(crate) fn draw(widget: impl Widget, width: u16, height: u16) -> Buffer {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    widget.render(area, &mut buf);
    buf
}

/// The buffer's rows as text, trailing blanks removed.
pub(crate) fn rows(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (area.y..area.y + area.height)
        .map(|y| {
            let row: String = (area.x..area.x + area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect();
            row.trim_end().to_owned()
        })
        .collect()
}

/// The rows inside a panel's frame (one cell in from every edge), trailing blanks removed.
pub(crate) fn inside(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (area.y + 1..(area.y + area.height).saturating_sub(1))
        .map(|y| {
            let row: String = (area.x + 1..(area.x + area.width).saturating_sub(1))
                .map(|x| buf[(x, y)].symbol())
                .collect();
            row.trim_end().to_owned()
        })
        .collect()
}
