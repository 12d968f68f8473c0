//! Text that came from the model or a tool, made safe to draw, and small
//! measuring helpers.
//!
//! Every string the timeline carries passes through [`clean`] or
//! [`clean_line`] when the fold stores it (see `state`), so nothing the model
//! or a tool produced reaches a terminal cell unsanitised: control characters
//! and escape sequences are shown escaped by the terminal-output sanitiser,
//! and tabs become spaces (a tab has no width of its own in a cell grid).

use std::borrow::Cow;
use unicode_width::UnicodeWidthChar;

/// Columns a tab stands for.
const TAB: &str = "    ";

/// Multi-line text from the model or a tool: escapes shown, newlines kept,
/// tabs expanded.
pub fn clean(text: &str) -> String {
    expand_tabs(sanitize(text, false))
}

/// A one-line field (a path, a command's first line, a title): newlines and
/// tabs are escaped too, so it cannot break the row around it.
pub fn clean_line(text: &str) -> String {
    sanitize(text, true).into_owned()
}

/// The one call site of the terminal-output sanitiser.
fn sanitize(text: &str, one_line: bool) -> Cow<'_, str> {
    if one_line {
        cortex_term::sanitize_line(text)
    } else {
        cortex_term::sanitize(text)
    }
}

fn expand_tabs(text: Cow<'_, str>) -> String {
    if text.contains('\t') {
        text.replace('\t', TAB)
    } else {
        text.into_owned()
    }
}

/// Cells `text` takes on screen.
pub fn width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// Cells one character takes (controls, which never get here unescaped,
/// take none).
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// `text` cut to at most `max` cells, with `…` when something was cut.
pub fn truncate(text: &str, max: usize) -> Cow<'_, str> {
    if width(text) <= max {
        return Cow::Borrowed(text);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    Cow::Owned(out)
}

/// A short human count: `950`, `1.2k`, `48k`, `1.3M`.
pub fn count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1_000.0),
        10_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// `… 1 more line`, `… 12 more lines`.
pub fn more_lines(n: usize) -> String {
    if n == 1 {
        "… 1 more line".to_owned()
    } else {
        format!("… {n} more lines")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_never_reach_the_screen() {
        let hostile = "ok\x1b]52;c;ZXZpbA==\x07 \x1b[2J\u{9b}31m\u{202e}txt.exe\r\n";
        let shown = clean(hostile);
        assert!(!shown.contains('\x1b') && !shown.contains('\u{9b}'));
        assert!(!shown.contains('\u{202e}') && !shown.contains('\x07'));
        assert!(shown.starts_with("ok^[]52;c;ZXZpbA==^G ^[[2J"), "{shown}");
        assert!(shown.ends_with("txt.exe\n"), "{shown}");
        assert_eq!(clean("a\tb"), "a    b");
        assert_eq!(clean_line("a\nb\tc"), "a\\nb\\tc");
    }

    #[test]
    fn truncation_counts_cells() {
        assert_eq!(truncate("hello", 5), "hello");
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("日本語テキスト", 5), "日本…");
        assert_eq!(width("日本"), 4);
    }

    #[test]
    fn counts_are_short() {
        assert_eq!(count(950), "950");
        assert_eq!(count(1_234), "1.2k");
        assert_eq!(count(48_000), "48k");
        assert_eq!(count(1_300_000), "1.3M");
    }
}
