//! Snapshots of every panel and of whole screens at 80×24, 120×36 and 160×48, drawn from the
//! events of a real scripted interview (the 10-turn oat milk script through the session task)
//! folded into the app — no hand-built panel state. The clock is fixed and the session id
//! pinned, so the snapshots hold no timings, ids or dates.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use crate::tui_support;

use crossterm::event::{Event as CtEvent, KeyCode, KeyEvent, KeyModifiers};
use interviewer::store::{Store, StoreOps};
use interviewer::tui::panels::signals;
use interviewer::tui::{
    App, AppEvent, ConceptEntry, GraphViewUi, Mode, PanelId, StartScreen, Theme, render_panel,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::OnceCell;
use tui_support::{Recording, answers, draw, example, failing_script, record};

/// The full interview, recorded once for every test in this file.
async fn recording() -> &'static Recording {
    static RECORDING: OnceCell<Recording> = OnceCell::const_new();
    RECORDING
        .get_or_init(|| async { record(&example("oat_milk_script.yaml"), 11, &answers()).await })
        .await
}

fn key(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    app.handle(AppEvent::Input(CtEvent::Key(KeyEvent::new(
        code, modifiers,
    ))));
}

fn panel(app: &App, id: PanelId, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| render_panel(app, id, f.area(), f.buffer_mut()))
        .unwrap();
    terminal
}

#[tokio::test]
async fn the_recording_is_a_whole_interview() {
    let rec = recording().await;
    assert_eq!(rec.ends.len(), 11, "the opening and ten turns");
    let app = rec.app(Mode::Respondent, 10);
    assert_eq!(app.model.turns_done, 10);
    assert_eq!(
        app.model.finished.as_deref(),
        Some("Closing strategy selected")
    );
}

#[tokio::test]
async fn panels_after_turn_five() {
    let rec = recording().await;
    let mut app = rec.app(Mode::Respondent, 5);
    insta::assert_snapshot!(
        "conversation_80x20",
        panel(&app, PanelId::Conversation, 80, 20).backend()
    );
    insta::assert_snapshot!(
        "graph_stats_72x28",
        panel(&app, PanelId::GraphStats, 72, 28).backend()
    );
    insta::assert_snapshot!(
        "focus_trace_60x10",
        panel(&app, PanelId::FocusTrace, 60, 10).backend()
    );

    // The decomposition with the winner expanded, as at 80 columns.
    key(&mut app, KeyCode::Char('3'), KeyModifiers::ALT);
    key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    insta::assert_snapshot!(
        "scores_80x22",
        panel(&app, PanelId::Scores, 80, 22).backend()
    );

    // The signals with the response depth rubric's rationale opened.
    key(&mut app, KeyCode::Char('2'), KeyModifiers::ALT);
    let rows = signals::row_keys(&app.model);
    let depth = rows.iter().position(|k| k == "llm.response_depth").unwrap();
    for _ in 0..depth {
        key(&mut app, KeyCode::Down, KeyModifiers::NONE);
    }
    key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    insta::assert_snapshot!(
        "signals_64x34",
        panel(&app, PanelId::Signals, 64, 34).backend()
    );
}

#[tokio::test]
async fn bars_and_answer_box() {
    let rec = recording().await;
    let mut app = rec.app(Mode::Respondent, 5);
    app.handle(AppEvent::Input(CtEvent::Paste(
        "It's the texture.\nAnd the price.".to_owned(),
    )));
    let mut t = Terminal::new(TestBackend::new(80, 7)).unwrap();
    t.draw(|f| {
        let area = f.area();
        let status = ratatui::layout::Rect::new(0, 0, 80, 1);
        let answer = ratatui::layout::Rect::new(0, 1, 80, 5);
        let hint = ratatui::layout::Rect::new(0, 6, 80, 1);
        let _ = area;
        f.render_widget(&interviewer::tui::panels::StatusBar::new(&app), status);
        f.render_widget(&interviewer::tui::panels::AnswerBox::new(&app), answer);
        f.render_widget(&interviewer::tui::panels::HintBar::new(&app), hint);
    })
    .unwrap();
    insta::assert_snapshot!("status_answer_hint_80x7", t.backend());
}

#[tokio::test]
async fn whole_screens_mid_interview() {
    let rec = recording().await;
    let mut app = rec.app(Mode::Respondent, 5);
    insta::assert_snapshot!("screen_mid_160x48", draw(&mut app, 160, 48).backend());
    insta::assert_snapshot!("screen_mid_120x36", draw(&mut app, 120, 36).backend());
    insta::assert_snapshot!("screen_mid_80x24", draw(&mut app, 80, 24).backend());
    // At 80×24 the panels are tabs; the decomposition tab is readable there.
    key(&mut app, KeyCode::Char('3'), KeyModifiers::ALT);
    key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    insta::assert_snapshot!("screen_mid_scores_80x24", draw(&mut app, 80, 24).backend());
}

#[tokio::test]
async fn end_graph_view_and_help() {
    let rec = recording().await;
    let mut app = rec.app(Mode::Respondent, 10);
    insta::assert_snapshot!("screen_end_160x48", draw(&mut app, 160, 48).backend());
    insta::assert_snapshot!("screen_end_80x24", draw(&mut app, 80, 24).backend());
    key(&mut app, KeyCode::Char('g'), KeyModifiers::NONE);
    assert_eq!(app.ui.graph_view, Some(GraphViewUi::default()));
    key(&mut app, KeyCode::Down, KeyModifiers::NONE);
    insta::assert_snapshot!("graph_view_160x48", draw(&mut app, 160, 48).backend());
    insta::assert_snapshot!("graph_view_80x24", draw(&mut app, 80, 24).backend());
    key(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    key(&mut app, KeyCode::F(1), KeyModifiers::NONE);
    insta::assert_snapshot!("help_160x48", draw(&mut app, 160, 48).backend());
    // Short terminals scroll the help.
    for _ in 0..12 {
        key(&mut app, KeyCode::Down, KeyModifiers::NONE);
    }
    insta::assert_snapshot!("help_scrolled_80x24", draw(&mut app, 80, 24).backend());
}

#[tokio::test]
async fn moderator_proposal_and_regenerate_picker() {
    let rec = recording().await;
    let mut app = rec.app(Mode::Moderator, 3);
    insta::assert_snapshot!(
        "moderator_proposal_160x48",
        draw(&mut app, 160, 48).backend()
    );
    key(&mut app, KeyCode::Char('r'), KeyModifiers::NONE);
    key(&mut app, KeyCode::Down, KeyModifiers::NONE);
    insta::assert_snapshot!(
        "moderator_regenerate_120x36",
        draw(&mut app, 120, 36).backend()
    );
}

/// `r` on a stage-2 row of the decomposition starts the picker on that strategy and node.
#[tokio::test]
async fn regenerating_from_a_node_row_preselects_it() {
    use interviewer::tui::Popup;
    use interviewer::tui::panels::score;
    let rec = recording().await;
    let mut app = rec.app(Mode::Moderator, 3);
    key(&mut app, KeyCode::Char('3'), KeyModifiers::ALT);
    let rows = score::item_keys(&app.model);
    let second_node = rows
        .iter()
        .filter(|k| k.starts_with("n:"))
        .nth(1)
        .unwrap()
        .clone();
    let at = rows.iter().position(|k| *k == second_node).unwrap();
    for _ in 0..at {
        key(&mut app, KeyCode::Down, KeyModifiers::NONE);
    }
    key(&mut app, KeyCode::Char('r'), KeyModifiers::NONE);
    let Some(Popup::Regenerate(state)) = app.ui.popups.first().cloned() else {
        panic!("the picker is open");
    };
    let winner = app.model.last.as_ref().unwrap().strategy_selected.clone();
    assert_eq!(state.strategies[state.strategy].name, winner);
    assert!(state.on_nodes);
    assert_eq!(
        format!("n:{}", state.nodes[state.node - 1].0),
        second_node,
        "the cursor is on the row's node"
    );
}

#[tokio::test]
async fn failed_turn_popup() {
    let dir = tempfile::tempdir().unwrap();
    let script = failing_script(dir.path(), 2);
    let rec = record(&script, 11, &answers()[..2]).await;
    let mut app = rec.app(Mode::Respondent, 2);
    assert!(app.model.failure.is_some());
    insta::assert_snapshot!("error_popup_100x30", draw(&mut app, 100, 30).backend());
}

#[tokio::test]
async fn start_screen_lists_concepts_and_sessions() {
    let rec = recording().await;
    let dir = tui_support::config();
    let concepts = dir
        .ids(interviewer::config::FileKind::Concept)
        .into_iter()
        .map(|id| {
            let c = dir.concept(&id).unwrap();
            ConceptEntry {
                id: c.id,
                name: c.name,
                methodology: c.methodology,
            }
        })
        .collect();
    let mut sessions = Store::open(rec.db()).unwrap().list_sessions().unwrap();
    // A simulated run beside the interview, marked as such.
    let mut simulated = sessions.first().unwrap().clone();
    simulated.id = "sim-00ff00ff00ff00ff".to_owned();
    simulated.status = interviewer::store::SessionStatus::Active;
    sessions.push(simulated);
    // The only value that depends on when the test ran.
    for s in &mut sessions {
        s.updated_at = "2026-01-02T03:04:05.000Z".to_owned();
    }
    let screen = StartScreen::new(
        concepts,
        dir.ids(interviewer::config::FileKind::Methodology),
        sessions,
        20,
        Theme::monochrome(),
    );
    for (w, h) in [(120, 30), (80, 24)] {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| f.render_widget(&screen, f.area())).unwrap();
        insta::assert_snapshot!(format!("start_{w}x{h}"), t.backend());
    }
}

/// The text of a terminal's rows.
fn screen_rows(t: &Terminal<TestBackend>) -> Vec<String> {
    let buf = t.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_owned())
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn every_signal_name_and_value_shows_whole_at_the_sizes_the_readme_claims() {
    use interviewer::domain::{SignalValue, format_number};
    use ratatui::layout::Rect;
    let rec = recording().await;
    for turn in [2, 5, 10] {
        let app = rec.app(Mode::Respondent, turn);
        let last = app.model.last.clone().unwrap();
        // The Signals panel's width in each wide layout, and in the tabbed ones.
        for (w, h) in [(160, 48), (140, 34), (120, 36), (80, 24)] {
            let area = interviewer::tui::areas(Rect::new(0, 0, w, h), PanelId::Signals)
                .panel(PanelId::Signals)
                .unwrap();
            let rows = screen_rows(&panel(&app, PanelId::Signals, area.width, 120));
            for (key, value) in &last.signals {
                let name = key.split_once('.').map_or(key.as_str(), |(_, rest)| rest);
                let shown = match value {
                    SignalValue::Number(n) => format_number(*n),
                    SignalValue::Bool(true) => "yes".to_owned(),
                    SignalValue::Bool(false) => "no".to_owned(),
                    SignalValue::Category(c) => c.clone(),
                };
                let at = rows
                    .iter()
                    .position(|r| r.split_whitespace().any(|word| word == name))
                    .unwrap_or_else(|| panic!("{w}×{h}, turn {turn}: {name} cut: {rows:#?}"));
                let here = format!("{} {}", rows[at], rows.get(at + 1).map_or("", |r| r));
                assert!(
                    here.split_whitespace().any(|word| word == shown),
                    "{w}×{h}, turn {turn}: {name} = {shown} cut: {here}"
                );
            }
        }
    }
}

#[tokio::test]
async fn the_end_screen_and_the_graph_panel_agree_on_the_longest_chain() {
    let rec = recording().await;
    let mut app = rec.app(Mode::Respondent, 10);
    assert!(app.model.finished.is_some());
    let end = screen_rows(&draw(&mut app, 120, 40)).join("\n");
    let graph = screen_rows(&panel(&app, PanelId::GraphStats, 70, 40)).join("\n");
    let nodes_after = |text: &str, label: &str| -> String {
        let start = text
            .find(label)
            .unwrap_or_else(|| panic!("no {label} in {text}"))
            + label.len();
        text[start..].split_whitespace().next().unwrap().to_owned()
    };
    let on_end = nodes_after(&end, "Longest chain");
    let on_panel = nodes_after(&graph, "longest chain");
    assert_eq!(on_end, on_panel, "{end}\n{graph}");
    assert!(on_end.parse::<usize>().unwrap() >= 2);
}

/// Time travel: after five turns, `[` four times (from the panels) shows turn 1 in every panel
/// with its own decomposition, the graph as it stood then, and a marker in the status bar;
/// `}` returns to the latest turn, and Alt+← steps back too.
#[tokio::test]
async fn stepping_back_shows_an_earlier_turn_in_every_panel() {
    let rec = recording().await;
    let mut app = rec.app(Mode::Respondent, 5);
    key(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    let latest = draw(&mut app, 160, 48).backend().to_string();
    for _ in 0..4 {
        key(&mut app, KeyCode::Char('['), KeyModifiers::NONE);
    }
    assert_eq!(app.model.viewing, Some(1));
    let screen = draw(&mut app, 160, 48).backend().to_string();
    assert!(
        screen.contains("viewing turn 1 of 5 — } to return"),
        "{screen}"
    );
    assert!(screen.contains("viewing this turn"), "{screen}");
    let shown = app.model.shown().unwrap();
    assert_eq!(shown.turn_number, 1);
    // Turn 1's own decomposition and signals, not turn 5's.
    let turn1 = rec
        .events
        .iter()
        .find_map(|e| match e.pipeline() {
            Some(interviewer::pipeline::Event::TurnCompleted(r)) if r.turn_number == 1 => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(shown.score_decomposition, turn1.score_decomposition);
    assert_eq!(shown.signals, turn1.signals);
    // The graph as it stood after turn 1: its nodes only.
    let graph = app.model.graph_snapshot().unwrap();
    assert!(graph.nodes.iter().all(|n| n.turn <= 1));
    assert_eq!(
        graph.nodes.len(),
        usize::try_from(turn1.graph_state.node_count).unwrap()
    );
    insta::assert_snapshot!("viewing_turn_1_160x48", screen);
    // One step forward, then back to the latest.
    key(&mut app, KeyCode::Char(']'), KeyModifiers::NONE);
    assert_eq!(app.model.viewing, Some(2));
    key(&mut app, KeyCode::Char('}'), KeyModifiers::NONE);
    assert_eq!(app.model.viewing, None);
    assert_eq!(draw(&mut app, 160, 48).backend().to_string(), latest);
    key(&mut app, KeyCode::Left, KeyModifiers::ALT);
    assert_eq!(app.model.viewing, Some(4));
}

/// What-if: `w` on a strategy in the Score panel opens its weights; raising its phase bonus
/// re-scores the viewed turn at once, flips the winner, and says how many of the session's
/// decisions the change alters; Esc discards.
#[tokio::test]
async fn a_weight_edit_flips_the_viewed_turns_winner() {
    use interviewer::tui::panels::score;
    let rec = recording().await;
    let mut app = rec.app(Mode::Respondent, 5);
    key(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    key(&mut app, KeyCode::Char('3'), KeyModifiers::ALT);
    let rows = score::item_keys(&app.model);
    let reflect = rows.iter().position(|k| k == "s:reflect").unwrap();
    for _ in 0..reflect {
        key(&mut app, KeyCode::Down, KeyModifiers::NONE);
    }
    key(&mut app, KeyCode::Char('w'), KeyModifiers::NONE);
    let state = app.ui.whatif.as_ref().expect("the editor opened");
    assert_eq!(state.strategy, "reflect");
    let bonus = state.rows.len() - 1;
    for _ in 0..bonus {
        key(&mut app, KeyCode::Down, KeyModifiers::NONE);
    }
    key(&mut app, KeyCode::Char('9'), KeyModifiers::NONE);
    let screen = draw(&mut app, 160, 48).backend().to_string();
    assert!(screen.contains("★ 1 reflect"), "{screen}");
    assert!(screen.contains("This change alters"), "{screen}");
    insta::assert_snapshot!("whatif_flips_turn_5_160x48", screen);
    // Esc discards: the session's own decision stands.
    key(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert!(app.ui.whatif.is_none());
    assert_eq!(app.model.shown().unwrap().strategy_selected, "lateral");
}
