//! Taking over the terminal and giving it back on every exit path: normal return, error
//! (the [`TerminalGuard`]'s drop) and panic (a hook that runs before ratatui's own).
//!
//! Besides ratatui's raw mode and alternate screen, the app turns on bracketed paste (pasted
//! text arrives as one event), mouse capture (wheel scrolling) and, where the terminal supports
//! it, the keyboard protocol that tells Shift+Enter from Enter.

use std::io::{self, stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use ratatui::DefaultTerminal;

/// Whether the keyboard enhancement flags were pushed (and must be popped).
static ENHANCED: AtomicBool = AtomicBool::new(false);

/// Restores the terminal when dropped.
#[derive(Debug)]
pub struct TerminalGuard {
    _private: (),
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        leave();
    }
}

/// Enters the app's terminal mode and returns the terminal with a guard that leaves it.
pub fn enter() -> io::Result<(DefaultTerminal, TerminalGuard)> {
    // ratatui installs its own panic hook (restore raw mode and screen) here.
    let terminal = ratatui::try_init()?;
    let guard = TerminalGuard { _private: () };
    execute!(stdout(), EnableBracketedPaste, EnableMouseCapture)?;
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false) {
        execute!(
            stdout(),
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED.store(true, Ordering::SeqCst);
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        leave_extras();
        previous(info);
    }));
    Ok((terminal, guard))
}

/// Turns off what [`enter`] turned on beyond ratatui's part.
fn leave_extras() {
    // Best effort on the way out: a failure here leaves nothing better to do.
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout(), PopKeyboardEnhancementFlags);
    }
    let _ = execute!(stdout(), DisableMouseCapture, DisableBracketedPaste);
}

/// Gives the terminal back: extras off, raw mode off, main screen.
pub fn leave() {
    leave_extras();
    ratatui::restore();
}
