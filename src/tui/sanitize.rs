//! Makes untrusted text safe to draw: respondents' answers, model output, labels and error
//! messages never reach the terminal with a control character in them.
//!
//! Control characters are not removed but shown as their Unicode "control pictures" (ESC as
//! `␛`, BEL as `␇`), so `\x1b]0;title\x07` is drawn as the inert text `␛]0;title␇` and a
//! reader can still see that something odd was typed. Newlines are kept (callers split lines);
//! tabs become spaces; C1 controls and bidirectional overrides, which some terminals obey and
//! which can reorder what is shown, become `�`.

/// Spaces a tab expands to.
const TAB: &str = "    ";

/// Replacement for characters that have no printable picture.
const REPLACEMENT: char = '\u{fffd}';

/// `text` with every control character made visible and inert; newlines kept.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_clean(&mut out, c, true);
    }
    out
}

/// [`clean`] for one-line fields (labels, names): newlines become spaces too.
pub fn clean_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_clean(&mut out, c, false);
    }
    out
}

fn push_clean(out: &mut String, c: char, keep_newline: bool) {
    match c {
        '\n' if keep_newline => out.push('\n'),
        '\n' => out.push(' '),
        '\r' => {}
        '\t' => out.push_str(TAB),
        // C0 controls map onto the Control Pictures block at the same offset.
        '\u{0}'..='\u{1f}' => {
            out.push(char::from_u32(0x2400 + u32::from(c)).unwrap_or(REPLACEMENT));
        }
        '\u{7f}' => out.push('\u{2421}'),
        '\u{80}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200e}'
        | '\u{200f}' => out.push(REPLACEMENT),
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible_text() {
        assert_eq!(clean("a\u{1b}]0;title\u{7}b"), "a␛]0;title␇b");
        assert_eq!(clean("\u{1b}[2J"), "␛[2J");
        assert!(
            !clean("\u{1b}[31mred\u{9b}31m")
                .chars()
                .any(char::is_control)
        );
    }

    #[test]
    fn layout_characters_are_kept_or_expanded() {
        assert_eq!(clean("one\r\ntwo\tthree"), "one\ntwo    three");
        assert_eq!(clean_line("one\ntwo"), "one two");
        assert_eq!(clean("\u{202e}evil"), "\u{fffd}evil");
        assert_eq!(clean("déjà vu ☕"), "déjà vu ☕");
    }
}
