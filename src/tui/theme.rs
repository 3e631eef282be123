//! Every style the app draws with, in one place, and the colourless variant `NO_COLOR` asks for
//! (<https://no-color.org>): the same distinctions made with bold, dim, italic and reverse.

use ratatui::style::{Color, Modifier, Style};

/// The app's styles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    pub text: Style,
    pub dim: Style,
    pub title: Style,
    pub border: Style,
    pub border_focused: Style,
    pub interviewer: Style,
    pub respondent: Style,
    pub streaming: Style,
    pub proposal: Style,
    pub selected: Style,
    pub winner: Style,
    pub positive: Style,
    pub negative: Style,
    pub error: Style,
    pub warning: Style,
    pub key: Style,
    pub bar: Style,
    pub bar_empty: Style,
    pub status: Style,
    pub status_accent: Style,
    pub tab: Style,
    pub tab_active: Style,
    pub category: Style,
}

impl Theme {
    /// The colour theme, or the colourless one when `NO_COLOR` is set to anything non-empty.
    pub fn from_env() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        if no_color {
            Self::monochrome()
        } else {
            Self::colour()
        }
    }

    /// Colours on the terminal's default background.
    pub fn colour() -> Self {
        let fg = |c: Color| Style::new().fg(c);
        Self {
            text: Style::new(),
            dim: fg(Color::DarkGray),
            title: fg(Color::Cyan).add_modifier(Modifier::BOLD),
            border: fg(Color::DarkGray),
            border_focused: fg(Color::Cyan),
            interviewer: fg(Color::LightBlue).add_modifier(Modifier::BOLD),
            respondent: fg(Color::LightGreen).add_modifier(Modifier::BOLD),
            streaming: fg(Color::Blue).add_modifier(Modifier::ITALIC),
            proposal: fg(Color::Yellow).add_modifier(Modifier::BOLD),
            selected: Style::new()
                .bg(Color::Rgb(40, 44, 60))
                .add_modifier(Modifier::BOLD),
            winner: fg(Color::Yellow).add_modifier(Modifier::BOLD),
            positive: fg(Color::Green),
            negative: fg(Color::Red),
            error: fg(Color::LightRed).add_modifier(Modifier::BOLD),
            warning: fg(Color::Yellow),
            key: fg(Color::Cyan).add_modifier(Modifier::BOLD),
            bar: fg(Color::Cyan),
            bar_empty: fg(Color::DarkGray),
            status: Style::new().bg(Color::Rgb(30, 32, 44)).fg(Color::Gray),
            status_accent: Style::new()
                .bg(Color::Rgb(30, 32, 44))
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            tab: fg(Color::DarkGray),
            tab_active: fg(Color::Cyan).add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            category: fg(Color::Magenta),
        }
    }

    /// No colours at all: emphasis by modifiers only.
    pub fn monochrome() -> Self {
        let m = |m: Modifier| Style::new().add_modifier(m);
        Self {
            text: Style::new(),
            dim: m(Modifier::DIM),
            title: m(Modifier::BOLD),
            border: Style::new(),
            border_focused: m(Modifier::BOLD),
            interviewer: m(Modifier::BOLD),
            respondent: m(Modifier::BOLD | Modifier::ITALIC),
            streaming: m(Modifier::ITALIC),
            proposal: m(Modifier::BOLD | Modifier::UNDERLINED),
            selected: m(Modifier::REVERSED),
            winner: m(Modifier::BOLD),
            positive: Style::new(),
            negative: Style::new(),
            error: m(Modifier::BOLD),
            warning: m(Modifier::BOLD),
            key: m(Modifier::BOLD),
            bar: Style::new(),
            bar_empty: m(Modifier::DIM),
            status: m(Modifier::REVERSED),
            status_accent: m(Modifier::REVERSED | Modifier::BOLD),
            tab: m(Modifier::DIM),
            tab_active: m(Modifier::BOLD | Modifier::UNDERLINED),
            category: m(Modifier::ITALIC),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monochrome_sets_no_colour() {
        let t = Theme::monochrome();
        for style in [t.text, t.selected, t.winner, t.status, t.error, t.bar] {
            assert_eq!(style.fg, None);
            assert_eq!(style.bg, None);
        }
        assert_ne!(Theme::colour().winner.fg, None);
    }
}
