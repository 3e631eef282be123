//! The status bar (concept, methodology, phase, turn, the running stage with a spinner and its
//! elapsed time, provider and model, tokens and cost), the key hint line, and the answer box
//! with the reason it does not send.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::frame;
use crate::pipeline::{MAX_ANSWER_CHARS, answer_chars};
use crate::tui::app::{App, KeyFocus, Mode, Popup, SpeechPhase, SpeechUi};
use crate::tui::model::Work;
use crate::tui::sanitize::clean_line;
use crate::tui::strings;
use crate::tui::text::{truncate, width};

/// Spinner frames, one per tick.
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The one-line status bar.
#[derive(Debug)]
pub struct StatusBar<'a> {
    app: &'a App,
}

impl<'a> StatusBar<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &StatusBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        buf.set_style(area, theme.status);
        let left = left_part(app);
        let space = usize::from(area.width);
        let mut spans = Vec::new();
        match app.mode {
            Mode::Moderator => spans.push(Span::styled(" MODERATOR ", theme.status_accent)),
            Mode::Watch => spans.push(Span::styled(" WATCH ", theme.status_accent)),
            Mode::Respondent => {}
        }
        if let Some(s) = &app.ui.speech {
            spans.push(Span::styled(listening(s), theme.status_accent));
        }
        // Stepped back through the session: say so first, and how to return.
        if let Some(turn) = app.model.viewing {
            spans.push(Span::styled(
                format!(
                    " viewing turn {turn} of {} — }} to return ",
                    app.model.turns_done
                ),
                theme.status_accent,
            ));
        }
        spans.push(Span::styled(format!(" {left} "), theme.status));
        let fixed: usize = spans.iter().map(Span::width).sum();
        // Narrow terminals drop the model's name first, then tokens and cost, then the mode.
        // A warning is shortened before anything is dropped. (Both parts
        // end in a space, so they may meet.)
        // A tier fits when the activity keeps enough of itself to be read (a warning may lose
        // its end, not most of itself).
        let readable = width(&activity(app, usize::MAX)).min(READABLE_WARNING);
        let fits = |right: String| {
            let room = space.saturating_sub(fixed + width(&right));
            (room >= readable).then(|| (activity(app, room), right))
        };
        let (now, right) = [Detail::Model, Detail::Mode, Detail::ModeOnly, Detail::Usage]
            .into_iter()
            .find_map(|detail| fits(right_part(app, detail)))
            .unwrap_or_else(|| (activity(app, space.saturating_sub(fixed)), String::new()));
        spans.push(Span::styled(now, theme.status_accent));
        let used: usize = spans.iter().map(Span::width).sum();
        let right = if used + width(&right) <= space {
            right
        } else {
            String::new()
        };
        let right_width = width(&right);
        if right_width > 0 {
            let gap = space - used - right_width;
            spans.push(Span::styled(" ".repeat(gap), theme.status));
            spans.push(Span::styled(right, theme.status));
        }
        Line::from(spans).render(area, buf);
    }
}

/// ` ● listening 0:07 ▁▃▅▆▇    ` (or loading, finishing), with an eight-step level meter over
/// −60…0 dBFS.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // clamped to 0..=8 and ≥ 0
fn listening(s: &SpeechUi) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let what = match s.phase {
        SpeechPhase::Starting | SpeechPhase::Loading => "loading speech model",
        SpeechPhase::Listening => "listening",
        SpeechPhase::Finishing => "transcribing",
    };
    let db = 20.0 * f64::from(s.level.max(1e-6)).log10();
    let steps = ((db + 60.0) / 60.0 * 8.0).clamp(0.0, 8.0) as usize;
    let meter: String = BARS.iter().take(steps).collect();
    let total = s.seconds.max(0.0) as u64;
    format!(" ● {what} {}:{:02} {meter:<8} ", total / 60, total % 60)
}

fn left_part(app: &App) -> String {
    let info = &app.info;
    let m = &app.model;
    let max = info.max_turns.max(1);
    let turn = if m.finished.is_some() {
        format!("turn {}/{max} done", m.turns_done)
    } else {
        format!("turn {}/{max}", (m.turns_done + 1).min(max))
    };
    let phase = info.phases.phase(m.turns_done + 1, max);
    format!(
        "{} · {} · phase {phase} · {turn}",
        clean_line(&info.concept_id),
        clean_line(&info.methodology)
    )
}

/// The running stage with spinner and its own elapsed time, then the whole turn's, or what
/// the session waits for: `⠋ 4.5 slot_discovery 0.9s · turn 66.0s`. A warning is shortened
/// to `room` columns (to 48 at most, and not below 16).
fn activity(app: &App, room: usize) -> String {
    let m = &app.model;
    if let Some(r) = m.running {
        let frame_index = usize::try_from(app.ui.tick % SPINNER.len() as u64).unwrap_or(0);
        let spinner = SPINNER.get(frame_index).copied().unwrap_or("⠿");
        let now = app.now();
        let seconds = |since| now.saturating_duration_since(since).as_secs_f64();
        let what = match (r.stage, r.work) {
            (Some(s), _) => format!("{} {}", s.number(), s.name()),
            (None, Work::Override) => "regenerating".to_owned(),
            (None, Work::Starting) => "starting".to_owned(),
            (None, Work::Turn) => "sending".to_owned(),
        };
        let (stage, turn) = (seconds(r.stage_since), seconds(r.since));
        return match r.work {
            Work::Turn => format!("{spinner} {what} {stage:.1}s · turn {turn:.1}s "),
            Work::Override | Work::Starting => format!("{spinner} {what} {stage:.1}s "),
        };
    }
    if m.fatal.is_some() {
        "✗ session stopped ".to_owned()
    } else if let Some(w) = &m.warning {
        format!("⚠ {} ", truncate(w, room.saturating_sub(3).clamp(16, 48)))
    } else if m.finished.is_some() {
        "✓ finished ".to_owned()
    } else if m.failure.is_some() {
        "✗ turn failed ".to_owned()
    } else if app.proposal_pending() {
        "● proposal ".to_owned()
    } else if m.question_turn.is_some() {
        "● ready ".to_owned()
    } else {
        "○ starting ".to_owned()
    }
}

/// Columns of a warning the status bar keeps before it drops detail on the right.
const READABLE_WARNING: usize = 40;

/// How much the right part of the status bar says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    /// The understanding mode, the question model and its name, then usage.
    Model,
    /// The understanding mode and the question model's provider, then usage.
    Mode,
    /// The understanding mode and the question model's provider (usage returns when the
    /// turn's stage and times leave room).
    ModeOnly,
    /// Tokens and cost only.
    Usage,
}

fn right_part(app: &App, detail: Detail) -> String {
    let m = &app.model;
    let (provider, model) = m
        .provider
        .clone()
        .unwrap_or_else(|| (clean_line(&app.info.provider), clean_line(&app.info.model)));
    let tokens = m.usage.tokens_in.saturating_add(m.usage.tokens_out);
    let cost = m
        .usage
        .cost_usd
        .map_or_else(|| "cost n/a".to_owned(), |c| format!("${c:.4}"));
    let usage = format!("{} tok · {cost} ", thousands(tokens));
    if detail == Detail::Usage {
        return usage;
    }
    // What understands the answers and what writes the questions, e.g. `offline
    // understanding · local question model (SmolLM2-135M-Instruct)`.
    let model = if model.is_empty() || detail != Detail::Model {
        String::new()
    } else {
        format!(" ({model})")
    };
    let mode = format!(
        "{} understanding · {provider} question model{model}",
        clean_line(&app.info.understanding)
    );
    if detail == Detail::ModeOnly {
        format!("{} ", truncate(&mode, 64))
    } else {
        format!("{} · {usage}", truncate(&mode, 64))
    }
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The key hint line under the screen.
#[derive(Debug)]
pub struct HintBar<'a> {
    app: &'a App,
}

impl<'a> HintBar<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &HintBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let hint = if let Some(popup) = app.ui.popups.first() {
            popup_hint(app, popup)
        } else if app.ui.graph_view.is_some() {
            strings::HINT_GRAPH
        } else if app.mode == Mode::Watch {
            strings::HINT_WATCH
        } else if app.model.finished.is_some() || app.model.fatal.is_some() {
            strings::HINT_FINISHED
        } else if app.ui.editing {
            strings::HINT_EDIT
        } else if app.proposal_pending() && app.ui.focus == KeyFocus::Answer {
            strings::HINT_PROPOSAL
        } else if app.ui.speech.is_some() {
            strings::HINT_LISTENING
        } else if app.ui.focus == KeyFocus::Answer && app.ui.speech_available {
            strings::HINT_TYPING_SPEECH
        } else if app.ui.focus == KeyFocus::Answer {
            strings::HINT_TYPING
        } else {
            strings::HINT_PANELS
        };
        let text = truncate(hint, usize::from(area.width));
        Line::from(Span::styled(text, app.theme.dim)).render(area, buf);
    }
}

/// Answers this long get a live count in the answer box's border (80% of the limit).
const COUNT_FROM: usize = MAX_ANSWER_CHARS / 5 * 4;

/// ` 4,812 / 5,000 ` once the answer nears the limit, and whether it is over it.
fn length_note(app: &App) -> Option<(String, bool)> {
    if app.ui.editing {
        return None;
    }
    let chars = answer_chars(&app.input_text());
    (chars >= COUNT_FROM).then(|| {
        let limit = u64::try_from(MAX_ANSWER_CHARS).unwrap_or(u64::MAX);
        let count = u64::try_from(chars).unwrap_or(u64::MAX);
        (
            format!(" {} / {} ", thousands(count), thousands(limit)),
            chars > MAX_ANSWER_CHARS,
        )
    })
}

/// The keys of the popup on top.
fn popup_hint(app: &App, popup: &Popup) -> &'static str {
    match popup {
        Popup::Help => strings::HINT_POPUP_HELP,
        Popup::Quit => strings::HINT_POPUP_QUIT,
        Popup::EndConfirm => strings::HINT_POPUP_END_CONFIRM,
        Popup::End => strings::HINT_POPUP_END,
        Popup::Regenerate(_) => strings::HINT_POPUP_REGENERATE,
        Popup::WhatIf => strings::HINT_POPUP_WHATIF,
        Popup::Error if app.model.fatal.is_some() => strings::HINT_POPUP_FATAL,
        Popup::Error => match &app.model.failure {
            Some(f) if f.work == Work::Override => strings::HINT_POPUP_OVERRIDE_FAILED,
            _ => strings::HINT_POPUP_FAILED,
        },
    }
}

/// The answer box: the text being typed, titled with why it does not send when it cannot.
#[derive(Debug)]
pub struct AnswerBox<'a> {
    app: &'a App,
}

impl<'a> AnswerBox<'a> {
    pub fn new(app: &'a App) -> Self {
        Self { app }
    }
}

impl Widget for &AnswerBox<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        let focused = app.ui.focus == KeyFocus::Answer;
        let title = if app.ui.editing {
            strings::EDIT_QUESTION
        } else {
            strings::ANSWER
        };
        let mut block = frame(title, theme, focused);
        let notice = app
            .ui
            .flash
            .clone()
            .map(|f| (f, theme.warning))
            .or_else(|| {
                (!app.ui.editing)
                    .then(|| app.send_blocked())
                    .flatten()
                    .map(|r| (r.to_owned(), theme.dim))
            });
        if let Some((text, style)) = notice {
            let room = usize::from(area.width).saturating_sub(width(title) + 8);
            block = block.title(
                Line::from(Span::styled(format!(" {} ", truncate(&text, room)), style))
                    .right_aligned(),
            );
        }
        if let Some((count, over)) = length_note(app) {
            let style = if over { theme.warning } else { theme.dim };
            block = block.title_bottom(Line::from(Span::styled(count, style)).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        // Nothing more can be sent: an empty box (and its placeholder) would invite typing.
        if app.mode == Mode::Watch || app.model.finished.is_some() || app.model.fatal.is_some() {
            return;
        }
        if app.input.is_empty() && app.send_blocked().is_some() && !app.ui.editing {
            // The title says why nothing can be sent; a placeholder would say the opposite.
            return;
        }
        if focused {
            (&app.input).render(inner, buf);
        } else {
            // The cursor block only where the keys go.
            let mut input = app.input.clone();
            input.set_cursor_style(ratatui::style::Style::new());
            (&input).render(inner, buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::pipeline::{Event, Stage};
    use crate::tui::Running;
    use crate::tui::panels::fixture::{self, draw, rows};

    fn bar(app: &App, width: u16) -> String {
        rows(&draw(&StatusBar::new(app), width, 1)).remove(0)
    }

    const LEFT: &str = " oat_milk · means_end_chain · phase mid · turn 3/10 ● ready";

    #[test]
    fn concept_methodology_phase_turn_activity_mode_and_usage() {
        let app = fixture::app(Mode::Respondent);
        let line = bar(&app, 160);
        assert!(line.starts_with(LEFT), "{line}");
        // The snapshot's usage: 1,000 in + 234 out.
        assert!(
            line.ends_with(
                "   offline understanding · scripted question model (script-1) · 1,234 tok · $0.0012"
            ),
            "{line}"
        );
    }

    #[test]
    fn narrow_bars_drop_the_provider_first_then_the_usage() {
        let app = fixture::app(Mode::Respondent);
        let medium = bar(&app, 90);
        assert!(medium.starts_with(LEFT), "{medium}");
        assert!(medium.ends_with("   1,234 tok · $0.0012"), "{medium}");
        assert!(!medium.contains("scripted"), "{medium}");
        assert_eq!(bar(&app, 70), LEFT);
    }

    #[test]
    fn a_running_stage_shows_its_number_name_and_elapsed_time() {
        let mut app = fixture::app(Mode::Moderator);
        app.apply(crate::session::SessionEvent::AnswerReceived {
            turn: 3,
            text: "Because I work better.".to_owned(),
        });
        app.apply(Event::StageStarted {
            turn: 3,
            stage: Stage::Extraction,
        });
        // The clock is fixed, so the stage has run 0.0 s; the spinner is on its first frame.
        let line = bar(&app, 140);
        assert!(
            line.starts_with(
                " MODERATOR  oat_milk · means_end_chain · phase mid · turn 3/10 ⠋ 3 extraction \
                 0.0s · turn 0.0s"
            ),
            "{line}"
        );
    }

    fn hint(app: &App) -> String {
        rows(&draw(&HintBar::new(app), 120, 1))
            .remove(0)
            .trim_end()
            .to_owned()
    }

    #[test]
    fn hints_describe_the_popup_on_top_and_stop_offering_answers_after_the_end() {
        use crate::tui::{Action, AppEvent};
        use crossterm::event::{Event as CtEvent, KeyCode, KeyEvent, KeyModifiers};
        let mut app = fixture::app(Mode::Respondent);
        for (popup, expected) in [
            (Popup::Help, strings::HINT_POPUP_HELP),
            (Popup::Quit, strings::HINT_POPUP_QUIT),
            (Popup::EndConfirm, strings::HINT_POPUP_END_CONFIRM),
            (Popup::End, strings::HINT_POPUP_END),
        ] {
            app.ui.popups = vec![popup];
            assert_eq!(hint(&app), expected);
        }
        app.ui.popups.clear();
        app.apply(Event::Finished {
            reason: "Maximum turns reached".to_owned(),
        });
        assert_eq!(app.ui.popups.first(), Some(&Popup::End));
        assert_eq!(hint(&app), strings::HINT_POPUP_END);
        let key = |code| AppEvent::Input(CtEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
        app.handle(key(KeyCode::Esc));
        assert!(app.ui.popups.is_empty());
        let after = hint(&app);
        assert_eq!(after, strings::HINT_FINISHED);
        assert!(
            !after.contains("i answer") && !after.contains("x end"),
            "{after}"
        );
        // `q` on the end screen quits at once: the interview is over and stored.
        app.ui.popups = vec![Popup::End];
        assert_eq!(app.handle(key(KeyCode::Char('q'))), vec![Action::Quit]);
    }

    #[test]
    fn the_understanding_mode_stays_in_view_beside_a_long_warning_or_a_running_stage() {
        let mut app = fixture::app(Mode::Respondent);
        app.model.warning = Some(
            "turn 1: asked the strategy's template question: template (the model's questions \
             failed the check: is not put to the respondent)"
                .to_owned(),
        );
        let line = bar(&app, 160);
        assert!(
            line.contains(" understanding · scripted question model"),
            "{line}"
        );
        app.model.warning = None;
        let now = app.now();
        app.model.running = Some(Running {
            work: Work::Turn,
            turn: 3,
            stage: Some(Stage::QuestionGeneration),
            since: now,
            stage_since: now,
        });
        let line = bar(&app, 160);
        assert!(
            line.contains(" understanding · scripted question model"),
            "{line}"
        );
    }

    #[test]
    fn the_stage_time_and_the_turn_time_are_shown_apart() {
        let mut app = fixture::app(Mode::Respondent);
        let now = app.now();
        let ago = |seconds: f64| now.checked_sub(Duration::from_secs_f64(seconds)).unwrap();
        app.model.running = Some(Running {
            work: Work::Turn,
            turn: 3,
            stage: Some(Stage::SlotDiscovery),
            since: ago(66.0),
            stage_since: ago(0.9),
        });
        let line = bar(&app, 160);
        assert!(
            line.contains("⠋ 4.5 slot_discovery 0.9s · turn 66.0s"),
            "{line}"
        );
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
