//! Text measuring and wrapping in terminal columns, so panels know how many rows their content
//! takes before they draw it (scroll bounds, "more below" markers).

use ratatui::text::Span;

/// Display width of `s` in terminal columns (wide characters count two).
pub fn width(s: &str) -> usize {
    Span::raw(s).width()
}

/// Greedy word wrap of `text` to `max` columns. Newlines start new lines; a word wider than
/// the line is broken between characters. Always returns at least one (possibly empty) line.
pub fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        let mut line_width = 0;
        for word in paragraph.split(' ').filter(|w| !w.is_empty()) {
            let w = width(word);
            let gap = usize::from(line_width > 0);
            if line_width + gap + w <= max {
                if gap == 1 {
                    line.push(' ');
                }
                line.push_str(word);
                line_width += gap + w;
                continue;
            }
            if line_width > 0 {
                lines.push(std::mem::take(&mut line));
                line_width = 0;
            }
            if w <= max {
                line.push_str(word);
                line_width = w;
            } else {
                for c in word.chars() {
                    let cw = width(c.encode_utf8(&mut [0; 4]));
                    if line_width + cw > max && line_width > 0 {
                        lines.push(std::mem::take(&mut line));
                        line_width = 0;
                    }
                    line.push(c);
                    line_width += cw;
                }
            }
        }
        lines.push(line);
    }
    lines
}

/// `s` cut to `max` columns, ending in `…` when it was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = width(c.encode_utf8(&mut [0; 4]));
        if used + cw + 1 > max {
            break;
        }
        out.push(c);
        used += cw;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// `s` padded with spaces (or cut) to exactly `cols` columns.
pub fn pad(s: &str, cols: usize) -> String {
    let cut = truncate(s, cols);
    let w = width(&cut);
    format!("{cut}{}", " ".repeat(cols.saturating_sub(w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_on_words_and_breaks_long_ones() {
        assert_eq!(wrap("the quick brown fox", 9), ["the quick", "brown fox"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("a\n\nb", 10), ["a", "", "b"]);
        assert_eq!(wrap("", 10), [""]);
    }

    #[test]
    fn truncates_and_pads_in_columns() {
        assert_eq!(truncate("creamy texture", 8), "creamy …");
        assert_eq!(truncate("short", 8), "short");
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(width(pad("a long label", 6).as_str()), 6);
        assert_eq!(width("☕"), 2);
    }
}
