//! The terminal-output sanitiser: the one gate between what a model or a tool
//! produced and a terminal.
//!
//! Anything the model wrote (its text, tool arguments, file contents it put in
//! the workspace, command output, error messages quoting any of those) may be
//! an attack on the user's terminal: OSC 52 writes the clipboard, OSC 0 sets
//! the window title, CSI sequences move the cursor to hide or overwrite lines,
//! OSC 8 draws hyperlinks whose text lies about their target, a lone carriage
//! return overwrites what was shown, bidirectional overrides reorder what the
//! eye reads. Every human-facing writer in Cortex (the CLI's rows, `cortex
//! sessions`, the terminal UI) passes such text through [`sanitize`] (or
//! [`sanitize_line`] for one-line fields) and emits only its own styling.
//! Machine output (`--json`) is not sanitised: JSON escapes every control
//! character itself and must stay exact.
//!
//! What is shown escaped, so the user still sees that it was there:
//! - C0 controls other than newline and tab, in caret notation: ESC as `^[`,
//!   NUL as `^@`, a lone carriage return as `^M`; DEL as `^?`. A carriage
//!   return right before a newline is dropped (CRLF line endings are common in
//!   files and command output and move the cursor nowhere the newline does
//!   not).
//! - C1 controls (U+0080..=U+009F), which some terminals treat as 8-bit CSI,
//!   OSC and friends, as `\x9b`-style hex.
//! - Unicode bidirectional embedding, override and isolate controls
//!   (U+202A..=U+202E, U+2066..=U+2069), as `\u{202e}`-style escapes.
//!
//! Every escape is made of printable ASCII only, and each control character
//! is replaced on its own, so text that arrives in pieces (streamed deltas)
//! can be sanitised piece by piece: an escape sequence split across pieces is
//! still escaped. The one difference from sanitising the whole is a CRLF split
//! between two pieces, which shows as `^M` before the newline.

#![warn(missing_docs)]

use std::borrow::Cow;

/// `text` with every terminal control except newline and tab shown escaped.
///
/// Returns the input unchanged (borrowed, no allocation) when it holds nothing
/// to escape, which is the common case.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    escape(text, Keep::NewlineAndTab)
}

/// [`sanitize`] for a one-line field (a tool row's argument summary, a session
/// title, a file name): newlines and tabs are shown as `\n` and `\t` too, so
/// the field cannot break the layout around it.
pub fn sanitize_line(text: &str) -> Cow<'_, str> {
    escape(text, Keep::Nothing)
}

/// Whether [`sanitize`] would leave `text` as it is.
pub fn is_clean(text: &str) -> bool {
    matches!(sanitize(text), Cow::Borrowed(_))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    NewlineAndTab,
    Nothing,
}

fn needs_escape(c: char, keep: Keep) -> bool {
    match c {
        '\n' | '\t' => keep == Keep::Nothing,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

fn escape(text: &str, keep: Keep) -> Cow<'_, str> {
    let Some(first) = text.find(|c| needs_escape(c, keep)) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    let mut chars = text[first..].chars().peekable();
    while let Some(c) = chars.next() {
        if !needs_escape(c, keep) {
            out.push(c);
            continue;
        }
        match c {
            '\r' if keep == Keep::NewlineAndTab && chars.peek() == Some(&'\n') => {}
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\u{7f}' => out.push_str("^?"),
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                // Caret notation: 0x00 → '@', 0x1b → '[', 0x0d → 'M'.
                out.push(char::from(c as u8 + 0x40));
            }
            '\u{80}'..='\u{9f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            other => out.push_str(&format!("\\u{{{:x}}}", other as u32)),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a terminal would act on: any control except newline and tab, any
    /// C1 control, any bidi control.
    fn acts_on_terminal(text: &str) -> bool {
        text.chars().any(|c| needs_escape(c, Keep::NewlineAndTab))
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "fn main() {\n\tprintln!(\"héllo ✓\");\n}\n";
        assert!(matches!(sanitize(text), Cow::Borrowed(t) if t == text));
        assert!(is_clean(text));
    }

    #[test]
    fn known_attacks_are_shown_not_acted_on() {
        let attacks = [
            // OSC 52: write "rm -rf ~" to the clipboard.
            ("\x1b]52;c;cm0gLXJmIH4=\x07", "^[]52;c;cm0gLXJmIH4=^G"),
            // OSC 0: set the window title.
            ("\x1b]0;pwned\x1b\\", "^[]0;pwned^[\\"),
            // Cursor up two lines and erase them: hides what was printed.
            ("ok\x1b[2A\x1b[2K", "ok^[[2A^[[2K"),
            // OSC 8 hyperlink whose text lies about its target.
            (
                "\x1b]8;;https://evil.example\x1b\\docs.rs\x1b]8;;\x1b\\",
                "^[]8;;https://evil.example^[\\docs.rs^[]8;;^[\\",
            ),
            // A lone carriage return overwrites the line shown so far.
            ("safe command\rrm -rf /", "safe command^Mrm -rf /"),
            // 8-bit CSI.
            ("\u{9b}31m", "\\x9b31m"),
            // Bidi override reorders what the eye reads.
            ("a\u{202e}cba", "a\\u{202e}cba"),
            ("\0\x7f", "^@^?"),
        ];
        for (attack, shown) in attacks {
            let out = sanitize(attack);
            assert_eq!(out, shown, "{attack:?}");
            assert!(!acts_on_terminal(&out), "{out:?}");
        }
    }

    #[test]
    fn crlf_becomes_a_newline() {
        assert_eq!(sanitize("a\r\nb\r\n"), "a\nb\n");
        assert_eq!(sanitize("a\r\r\n"), "a^M\n");
    }

    #[test]
    fn a_line_field_keeps_no_newline_or_tab() {
        assert_eq!(
            sanitize_line("git status\n&& rm\tx"),
            "git status\\n&& rm\\tx"
        );
        assert_eq!(sanitize_line("a\r\nb"), "a^M\\nb");
        assert!(!sanitize_line("x\ny").contains('\n'));
    }

    #[test]
    fn every_char_below_0xa0_is_either_printable_or_escaped() {
        for code in 0u32..0xa0 {
            let c = char::from_u32(code).expect("a scalar value");
            let text = format!("a{c}b");
            let out = sanitize(&text);
            assert!(!acts_on_terminal(&out), "U+{code:04X} → {out:?}");
            assert!(out.starts_with('a') && out.ends_with('b'), "{out:?}");
            let line = sanitize_line(&text);
            assert!(
                line.chars().all(|c| !c.is_control()),
                "U+{code:04X} → {line:?}"
            );
        }
    }

    #[test]
    fn pieces_sanitise_like_the_whole() {
        let whole = "out\x1b]52;c;eA==\x07put\u{9b}2J\n";
        let pieces: String = whole
            .char_indices()
            .map(|(i, c)| sanitize(&whole[i..i + c.len_utf8()]).into_owned())
            .collect();
        assert_eq!(pieces, sanitize(whole));
    }
}
