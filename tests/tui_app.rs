//! The app driven like a user drives it: key and paste events into the real event loop on a
//! `TestBackend`, the scripted interview running on the session task, and assertions on what
//! the screen shows — a whole interview, moderator overrides, and answers full of escape
//! sequences drawn inert.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::too_many_lines
)]

use crate::tui_support;

use std::time::{Duration, Instant};

use crossterm::event::{
    Event as CtEvent, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind,
};
use interviewer::domain::Speaker;
use interviewer::session::Command;
use interviewer::store::{Store, StoreOps};
use interviewer::tui::{App, EventLoop, EventSources, Flow, KeyFocus, Mode, PanelId, Popup};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tui_support::{SESSION_ID, WAIT, answers, example, screen};

type Loop = EventLoop<TestBackend>;

fn press(tx: &UnboundedSender<CtEvent>, code: KeyCode, modifiers: KeyModifiers) {
    tx.send(CtEvent::Key(KeyEvent::new(code, modifiers)))
        .unwrap();
}

/// Types `text` key by key; a newline is typed as Alt+Enter.
fn type_text(tx: &UnboundedSender<CtEvent>, text: &str) {
    for c in text.chars() {
        if c == '\n' {
            press(tx, KeyCode::Enter, KeyModifiers::ALT);
        } else {
            press(tx, KeyCode::Char(c), KeyModifiers::NONE);
        }
    }
}

/// Runs the loop until `done` holds for the app.
async fn until(lp: &mut Loop, what: &str, done: impl Fn(&App) -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done(lp.app()) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        let flow = tokio::time::timeout(WAIT, lp.step())
            .await
            .expect("the loop keeps stepping")
            .unwrap();
        assert_eq!(flow, Flow::Continue, "quit while waiting for {what}");
    }
}

fn shown(lp: &Loop) -> String {
    screen(lp.terminal())
}

/// A loop over a fresh scripted session, its input sender and the session's control.
fn session_loop(
    dir: &std::path::Path,
    mode: Mode,
    width: u16,
    height: u16,
) -> (
    Loop,
    UnboundedSender<CtEvent>,
    interviewer::session::SessionControl,
) {
    let (info, events, control) = tui_support::start(dir, &example("oat_milk_script.yaml"), 11);
    let (tx, rx) = unbounded_channel();
    let app = tui_support::app(&info, mode);
    let terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let sources = EventSources::new(rx, events, Duration::from_millis(20));
    let lp = EventLoop::new(terminal, app, sources, Some(control.commands.clone()));
    (lp, tx, control)
}

#[tokio::test]
async fn a_whole_interview_by_keyboard() {
    let dir = tempfile::tempdir().unwrap();
    let (mut lp, tx, control) = session_loop(dir.path(), Mode::Respondent, 160, 48);
    lp.draw().unwrap();
    until(&mut lp, "the opening question", |a| {
        a.model.question_turn == Some(0)
    })
    .await;
    assert!(
        shown(&lp).contains("What comes to mind when you think about the milk"),
        "{}",
        shown(&lp)
    );
    assert!(shown(&lp).contains("● ready"));

    // Enter on an empty box sends nothing and says why.
    press(&tx, KeyCode::Enter, KeyModifiers::NONE);
    until(&mut lp, "the empty-answer notice", |a| a.ui.flash.is_some()).await;
    assert!(shown(&lp).contains("type an answer first"));

    let answers = answers();
    for (i, answer) in answers.iter().enumerate() {
        let turn = u32::try_from(i + 1).unwrap();
        if turn == 3 {
            // Pasted text arrives whole; its newline does not send.
            tx.send(CtEvent::Paste(answer.clone())).unwrap();
        } else {
            type_text(&tx, answer);
        }
        press(&tx, KeyCode::Enter, KeyModifiers::NONE);
        // While the turn runs, sending is disabled and the box says so.
        until(&mut lp, "the turn to start", |a| {
            a.model.running.is_some() || a.model.turns_done >= turn
        })
        .await;
        if lp.app().model.running.is_some() {
            assert!(shown(&lp).contains("sending disabled"), "{}", shown(&lp));
        }
        let last = i + 1 == answers.len();
        until(&mut lp, "the turn to finish", |a| {
            a.model.turns_done == turn
                && a.model.running.is_none()
                && (!last || a.model.finished.is_some())
                && a.model
                    .snapshot
                    .as_ref()
                    .is_some_and(|s| s.turn_count == turn)
        })
        .await;
        let app = lp.app();
        let said = app
            .model
            .conversation
            .iter()
            .find(|m| m.turn == turn && m.speaker == Speaker::Respondent)
            .unwrap();
        assert_eq!(
            said.text, *answer,
            "the answer arrives whole, newlines kept"
        );
        let question = app
            .model
            .conversation
            .iter()
            .find(|m| m.turn == turn && m.speaker == Speaker::Interviewer)
            .unwrap();
        let first_words: String = question.text.chars().take(30).collect();
        assert!(
            shown(&lp).contains(&first_words),
            "turn {turn}: {}",
            shown(&lp)
        );
        assert!(
            shown(&lp).contains(&format!("turn {turn} ")),
            "panels show turn {turn}"
        );
    }
    assert!(shown(&lp).contains("Interview finished"));
    assert!(shown(&lp).contains("Closing strategy selected"));
    assert!(
        shown(&lp).contains("T10"),
        "the focus trace reaches turn 10"
    );

    // Close the end screen; the mouse wheel over the conversation scrolls it back.
    press(&tx, KeyCode::Esc, KeyModifiers::NONE);
    tx.send(CtEvent::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: 10,
        row: 10,
        modifiers: KeyModifiers::NONE,
    }))
    .unwrap();
    until(&mut lp, "the wheel to scroll", |a| {
        a.ui.conversation_scroll == 3
    })
    .await;
    assert!(
        !shown(&lp).contains("Thank you, that was really helpful"),
        "scrolled up"
    );

    // Shrink to 80×24: the panels become tabs.
    lp.terminal_mut().backend_mut().resize(80, 24);
    tx.send(CtEvent::Resize(80, 24)).unwrap();
    press(&tx, KeyCode::Esc, KeyModifiers::NONE); // leave the answer box
    press(&tx, KeyCode::Char('3'), KeyModifiers::NONE); // the decomposition tab
    press(&tx, KeyCode::Enter, KeyModifiers::NONE); // expand the chosen strategy
    until(&mut lp, "the decomposition", |a| {
        !a.ui.scores.expanded.is_empty()
    })
    .await;
    let s = shown(&lp);
    assert_eq!(lp.app().ui.focus, KeyFocus::Panel(PanelId::Scores));
    assert!(s.contains("Score decomposition") && s.contains("★ "), "{s}");
    assert!(
        s.contains("validate_outcome"),
        "the closing strategy won: {s}"
    );
    assert!(s.contains("base × phase + bonus"), "{s}");
    assert!(
        s.contains(" × ") && s.contains(" = "),
        "contributions are listed: {s}"
    );

    press(&tx, KeyCode::Char('g'), KeyModifiers::NONE);
    until(&mut lp, "the graph view", |a| a.ui.graph_view.is_some()).await;
    let s = shown(&lp);
    assert!(s.contains("Chains") && s.contains("Canonical slots"), "{s}");
    assert!(
        s.contains("creamy texture") && s.contains("focus count"),
        "{s}"
    );
    // The inspector scrolls to the provenance quotes.
    press(&tx, KeyCode::PageDown, KeyModifiers::NONE);
    until(&mut lp, "the inspector to scroll", |a| {
        a.ui.graph_view.is_some_and(|g| g.inspector_scroll > 0)
    })
    .await;
    let s = shown(&lp);
    assert!(s.contains("Provenance") && s.contains("A1: "), "{s}");

    press(&tx, KeyCode::Esc, KeyModifiers::NONE);
    press(&tx, KeyCode::Char('q'), KeyModifiers::NONE);
    until(&mut lp, "the quit question", |a| {
        a.ui.popups.first() == Some(&Popup::Quit)
    })
    .await;
    assert!(shown(&lp).contains("Quit? (y/n)"));
    assert!(
        shown(&lp).contains(&format!("interviewer resume {SESSION_ID}"))
            || shown(&lp).contains("over and saved")
    );
    press(&tx, KeyCode::Char('y'), KeyModifiers::NONE);
    let flow = tokio::time::timeout(WAIT, lp.step())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(flow, Flow::Quit);
    control.shutdown();
}

#[tokio::test]
async fn escape_sequences_in_an_answer_are_drawn_inert() {
    let dir = tempfile::tempdir().unwrap();
    let (mut lp, tx, control) = session_loop(dir.path(), Mode::Respondent, 120, 36);
    lp.draw().unwrap();
    until(&mut lp, "the opening question", |a| {
        a.model.question_turn == Some(0)
    })
    .await;
    let hostile = "I like it\u{1b}]0;pwned title\u{7} a lot\u{1b}[2J\u{1b}[31m red";
    tx.send(CtEvent::Paste(hostile.to_owned())).unwrap();
    press(&tx, KeyCode::Enter, KeyModifiers::NONE);
    until(&mut lp, "turn 1", |a| {
        a.model.turns_done == 1 && a.model.running.is_none()
    })
    .await;

    let s = shown(&lp);
    assert!(
        s.contains("I like it␛]0;pwned title␇ a lot␛[2J␛[31m red"),
        "{s}"
    );
    let buffer = lp.terminal().backend().buffer();
    for cell in &buffer.content {
        assert!(
            !cell.symbol().chars().any(char::is_control),
            "a control character reached a cell: {:?}",
            cell.symbol()
        );
    }

    // The bytes a real terminal would receive hold no OSC title, bell or clear-screen.
    let bytes = render_to_bytes(lp.app());
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        !text.contains("\u{1b}]0;"),
        "an OSC sequence reached the terminal"
    );
    assert!(!text.contains('\u{7}'), "a bell reached the terminal");
    assert!(
        !text.contains("\u{1b}[2J"),
        "a clear-screen reached the terminal"
    );
    // (Unchanged blank cells are skipped with a cursor move, so look at words.)
    assert!(text.contains("␛]0;pwned"), "the sequence is shown as text");
    assert!(text.contains("title␇"), "the bell is shown as text");
    assert!(
        text.contains("lot␛[2J␛[31m"),
        "the CSI sequences are shown as text"
    );
    control.shutdown();
}

/// A writer whose bytes the test can read afterwards.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the crossterm backend writes for one frame of `app` at 120×36.
fn render_to_bytes(app: &App) -> Vec<u8> {
    use ratatui::backend::CrosstermBackend;
    use ratatui::layout::Rect;
    use ratatui::{TerminalOptions, Viewport};
    let captured = Captured::default();
    let backend = CrosstermBackend::new(captured.clone());
    let mut terminal = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, 120, 36)),
        },
    )
    .unwrap();
    terminal.draw(|f| f.render_widget(app, f.area())).unwrap();
    drop(terminal);
    captured.0.lock().unwrap().clone()
}

#[tokio::test]
async fn moderator_accepts_edits_and_regenerates() {
    let dir = tempfile::tempdir().unwrap();
    let (mut lp, tx, control) = session_loop(dir.path(), Mode::Moderator, 160, 48);
    lp.draw().unwrap();
    until(&mut lp, "the opening question", |a| {
        a.model.question_turn == Some(0)
    })
    .await;
    assert!(shown(&lp).contains("proposed"), "{}", shown(&lp));
    // Typing before accepting is refused with a reason.
    press(&tx, KeyCode::Char('x'), KeyModifiers::NONE);
    until(&mut lp, "the notice", |a| a.ui.flash.is_some()).await;
    assert!(lp.app().input_text().is_empty());

    // Accept, answer turn 1.
    press(&tx, KeyCode::Enter, KeyModifiers::NONE);
    type_text(&tx, &answers()[0]);
    press(&tx, KeyCode::Enter, KeyModifiers::NONE);
    until(&mut lp, "turn 1", |a| {
        a.model.turns_done == 1 && a.model.running.is_none()
    })
    .await;
    assert!(lp.app().proposal_pending());

    // Regenerate with another strategy from the picker.
    press(&tx, KeyCode::Char('r'), KeyModifiers::NONE);
    until(&mut lp, "the picker", |a| {
        matches!(a.ui.popups.first(), Some(Popup::Regenerate(_)))
    })
    .await;
    assert!(shown(&lp).contains("Regenerate the question"));
    let Some(Popup::Regenerate(state)) = lp.app().ui.popups.first().cloned() else {
        unreachable!()
    };
    let target = state
        .strategies
        .iter()
        .position(|s| s.name == "reflect")
        .unwrap();
    for _ in 0..target {
        press(&tx, KeyCode::Down, KeyModifiers::NONE);
    }
    press(&tx, KeyCode::Enter, KeyModifiers::NONE);
    until(&mut lp, "the regenerated question", |a| {
        a.model.running.is_none()
            && a.model
                .last
                .as_ref()
                .is_some_and(|l| l.strategy_selected == "reflect")
            && a.model.overridden_turn(1)
    })
    .await;
    let s = shown(&lp);
    assert!(s.contains("regenerated: reflect"), "{s}");
    assert!(s.contains("override"), "the focus trace marks it: {s}");

    // Edit the question by hand: select all the text and replace it.
    press(&tx, KeyCode::Char('e'), KeyModifiers::NONE);
    until(&mut lp, "the editor", |a| a.ui.editing).await;
    for _ in 0..400 {
        press(&tx, KeyCode::Backspace, KeyModifiers::NONE);
    }
    type_text(&tx, "What else do you put oat milk in?");
    press(&tx, KeyCode::Enter, KeyModifiers::NONE);
    until(&mut lp, "the edited question", |a| {
        a.model.running.is_none()
            && a.model
                .conversation
                .iter()
                .any(|m| m.text == "What else do you put oat milk in?")
    })
    .await;
    assert!(shown(&lp).contains("edited by the researcher"));
    assert!(
        lp.app().proposal_pending(),
        "an edited question is a proposal again"
    );

    // The override and the edit are kept in the session.
    let store = Store::open(dir.path().join("interviews.db")).unwrap();
    let session = store.get_session(SESSION_ID).unwrap().unwrap();
    let entry = session.state.focus_history.last().unwrap();
    assert!(entry.overridden);
    assert_eq!(entry.strategy, "reflect");
    let asked = store
        .utterance(SESSION_ID, 1, Speaker::Interviewer)
        .unwrap()
        .unwrap();
    assert_eq!(asked.text, "What else do you put oat milk in?");
    let record = store
        .scoring_history(SESSION_ID)
        .unwrap()
        .into_iter()
        .find(|r| r.turn == 1)
        .unwrap();
    assert_eq!(record.payload["override"]["edited"], true);
    drop(store);

    // End the interview from the panels.
    press(&tx, KeyCode::Esc, KeyModifiers::NONE);
    press(&tx, KeyCode::Char('x'), KeyModifiers::NONE);
    press(&tx, KeyCode::Char('y'), KeyModifiers::NONE);
    until(&mut lp, "the end", |a| a.model.finished.is_some()).await;
    assert!(shown(&lp).contains("Ended by researcher"));
    let _ = control.commands.try_send(Command::Shutdown);
    control.shutdown();
}

#[tokio::test]
async fn the_answer_box_edits_like_a_shell_and_counts_near_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (mut lp, tx, _control) = session_loop(dir.path(), Mode::Respondent, 160, 48);
    lp.draw().unwrap();
    until(&mut lp, "the opening question", |a| {
        a.model.question_turn == Some(0)
    })
    .await;
    type_text(&tx, "first line\nsecond line");
    until(&mut lp, "the typing", |a| a.input_text().ends_with("line")).await;
    // Ctrl+U deletes back to the start of the cursor's line only.
    press(&tx, KeyCode::Char('u'), KeyModifiers::CONTROL);
    until(&mut lp, "Ctrl+U", |a| a.input_text() == "first line\n").await;
    // Ctrl+Z undoes it.
    press(&tx, KeyCode::Char('z'), KeyModifiers::CONTROL);
    until(&mut lp, "Ctrl+Z", |a| {
        a.input_text() == "first line\nsecond line"
    })
    .await;
    assert!(
        !shown(&lp).contains(" / 5,000 "),
        "no count far from the limit"
    );
    // Near the limit a live count appears; past it, it stays and sending is refused.
    tx.send(CtEvent::Paste("x".repeat(4_500))).unwrap();
    until(&mut lp, "the paste", |a| a.input_text().len() > 4_000).await;
    lp.draw().unwrap();
    assert!(shown(&lp).contains(" 4,522 / 5,000 "), "{}", shown(&lp));
    tx.send(CtEvent::Paste("y".repeat(600))).unwrap();
    until(&mut lp, "the second paste", |a| {
        a.input_text().len() > 5_000
    })
    .await;
    lp.draw().unwrap();
    assert!(shown(&lp).contains(" 5,122 / 5,000 "), "{}", shown(&lp));
    press(&tx, KeyCode::Enter, KeyModifiers::NONE);
    until(&mut lp, "the refusal", |a| a.ui.flash.is_some()).await;
    assert!(lp.app().model.running.is_none(), "nothing was sent");
}

/// F2 listening as the app folds it, without a model: the transcript goes after what was
/// typed and is replaced as it grows; an edit while listening wins over later transcripts;
/// Enter while listening sends what is shown and stops; a failure keeps the text.
#[tokio::test]
async fn listening_fills_the_answer_box_and_the_moderators_edit_wins() {
    use interviewer::speech::live::{LiveEvent, Spoken};
    use interviewer::tui::{Action, AppEvent};

    let key = |code| AppEvent::Input(CtEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    let partial = |text: &str| {
        AppEvent::Speech(LiveEvent::Partial {
            text: text.to_owned(),
        })
    };
    let spoken = |text: &str| {
        AppEvent::Speech(LiveEvent::Final(Spoken {
            text: text.to_owned(),
            model: "whisper-tiny.en".to_owned(),
            duration_seconds: 3.0,
            mean_logprob: -0.3,
            audio_file: None,
        }))
    };
    let recording = tui_support::record(&example("oat_milk_script.yaml"), 11, &[]).await;

    // Without a listener, F2 says speech is off.
    let mut app = recording.app(Mode::Respondent, 0);
    assert!(app.handle(key(KeyCode::F(2))).is_empty());
    assert!(app.ui.flash.as_deref().unwrap().contains("speech is off"));

    let mut app = recording.app(Mode::Respondent, 0);
    app.ui.speech_available = true;
    for c in "Well,".chars() {
        app.handle(key(KeyCode::Char(c)));
    }
    assert_eq!(app.handle(key(KeyCode::F(2))), vec![Action::Listen(true)]);
    app.handle(AppEvent::Speech(LiveEvent::Listening {
        recorder: "arecord".to_owned(),
    }));
    app.handle(AppEvent::Speech(LiveEvent::Level {
        level: 0.1,
        seconds: 65.0,
    }));
    app.handle(partial("I like"));
    assert_eq!(app.input_text(), "Well, I like");
    app.handle(partial("I like the creamy texture"));
    assert_eq!(app.input_text(), "Well, I like the creamy texture");
    let mut drawn = tui_support::draw(&mut app, 120, 30);
    let screen = tui_support::screen(&drawn);
    // −20 dBFS is five of the eight steps over −60…0.
    assert!(screen.contains("● listening 1:05 ▁▂▃▄▅ "), "{screen}");
    assert!(screen.contains("F2 stop listening"), "{screen}");
    // F2 stops; the final text replaces the partial.
    assert_eq!(app.handle(key(KeyCode::F(2))), vec![Action::Listen(false)]);
    drawn = tui_support::draw(&mut app, 120, 30);
    assert!(tui_support::screen(&drawn).contains("● transcribing"));
    app.handle(spoken("I like the creamy texture, really."));
    assert_eq!(app.input_text(), "Well, I like the creamy texture, really.");
    assert!(app.ui.speech.is_none());

    // An edit while listening keeps the edit: later transcripts stay out.
    let mut app = recording.app(Mode::Respondent, 0);
    app.ui.speech_available = true;
    app.handle(key(KeyCode::F(2)));
    app.handle(partial("It froths well"));
    app.handle(key(KeyCode::Backspace));
    app.handle(key(KeyCode::Backspace));
    app.handle(key(KeyCode::Backspace));
    app.handle(key(KeyCode::Backspace));
    for c in "nicely".chars() {
        app.handle(key(KeyCode::Char(c)));
    }
    app.handle(partial("It froths well in my latte"));
    assert_eq!(app.input_text(), "It froths nicely");
    assert!(
        app.ui
            .flash
            .as_deref()
            .unwrap()
            .contains("transcript stays out")
    );
    app.handle(spoken("It froths well in my latte."));
    assert_eq!(app.input_text(), "It froths nicely");

    // Enter while listening sends what is shown and stops listening; a late transcript does
    // not refill the box.
    let mut app = recording.app(Mode::Respondent, 0);
    app.ui.speech_available = true;
    app.handle(key(KeyCode::F(2)));
    app.handle(partial("Creamy, mostly."));
    let actions = app.handle(key(KeyCode::Enter));
    assert_eq!(
        actions,
        vec![
            Action::Send(Command::Answer("Creamy, mostly.".to_owned())),
            Action::Listen(false)
        ]
    );
    app.handle(spoken("Creamy, mostly. And cheap."));
    assert_eq!(app.input_text(), "");

    // A recorder that dies keeps the text heard so far and says why.
    let mut app = recording.app(Mode::Respondent, 0);
    app.ui.speech_available = true;
    app.handle(key(KeyCode::F(2)));
    app.handle(partial("The price is"));
    app.handle(spoken("The price is high"));
    app.handle(AppEvent::Speech(LiveEvent::Failed {
        message: "the recorder `arecord` stopped: device unplugged".to_owned(),
    }));
    assert_eq!(app.input_text(), "The price is high");
    assert!(
        app.ui
            .flash
            .as_deref()
            .unwrap()
            .contains("device unplugged")
    );

    // Watching a simulated interview, there is nothing to answer.
    let mut app = recording.app(Mode::Watch, 0);
    app.ui.speech_available = true;
    assert!(app.handle(key(KeyCode::F(2))).is_empty());
}

/// An imported interview opens read-only: the conversation is the transcript's, the end screen
/// says it was imported, and typing sends nothing.
#[tokio::test]
async fn an_imported_interview_opens_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("imported.db");
    let transcript = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts/sarah.vtt");
    let out = crate::common::import(&db, &[transcript.to_str().unwrap()]);
    crate::common::succeeded(&out);
    let store = Store::open(&db).unwrap();
    let id = store.list_sessions().unwrap()[0].id.clone();
    let interview = interviewer::pipeline::Interview::open(
        store,
        &id,
        crate::common::spec(10),
        tui_support::services(&example("oat_milk_script.yaml")),
    )
    .unwrap();
    let handle = interviewer::session::spawn(interview).unwrap();
    let info = handle.info.clone();
    let (events, control) = handle.into_parts();
    let (tx, rx) = unbounded_channel();
    let app = tui_support::app(&info, Mode::Respondent);
    let terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    let sources = EventSources::new(rx, events, Duration::from_millis(20));
    let mut lp = EventLoop::new(terminal, app, sources, Some(control.commands.clone()));
    lp.draw().unwrap();
    // The stored state says "finished" first; the end screen opens on the session's event.
    until(&mut lp, "the end screen", |a| {
        a.ui.popups.first() == Some(&Popup::End)
    })
    .await;
    lp.draw().unwrap();
    let screen = shown(&lp);
    assert!(screen.contains("Imported interview"), "{screen}");
    assert!(screen.contains("transcript ended"), "{screen}");
    assert!(screen.contains("Questions they asked  6"), "{screen}");
    assert!(
        screen.contains("That's everything I wanted to ask"),
        "{screen}"
    );
    // Nothing typed reaches the session.
    press(&tx, KeyCode::Esc, KeyModifiers::NONE);
    type_text(&tx, "one more answer");
    press(&tx, KeyCode::Enter, KeyModifiers::NONE);
    for _ in 0..20 {
        let _ = tokio::time::timeout(WAIT, lp.step()).await;
    }
    assert_eq!(lp.app().model.turns_done, 6);
    assert!(lp.app().model.running.is_none());
    drop(control);
}
