//! The one-line summary of a tool call's arguments for its row.

use crate::text;
use cortex_protocol::CallSummary;

/// Longest summary kept (the row truncates further to fit its width).
const MAX_CHARS: usize = 200;

/// The argument that identifies a call ([`CallSummary`]), with the count
/// of a command's further lines, as one terminal-safe line.
pub fn summarize(name: &str, arguments: &str) -> String {
    let summary = CallSummary::of(name, arguments);
    match summary.more_lines {
        0 => one_line(&summary.text),
        more => one_line(&format!("{} (+{more} lines)", summary.text)),
    }
}

fn one_line(raw: &str) -> String {
    let cleaned = text::clean_line(raw);
    text::truncate(&cleaned, MAX_CHARS).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_identifying_argument() {
        assert_eq!(summarize("read_file", r#"{"path":"src/a.rs"}"#), "src/a.rs");
        assert_eq!(
            summarize("bash", r#"{"command":"cargo test\nmore\nlines"}"#),
            "cargo test (+2 lines)"
        );
        assert_eq!(
            summarize("grep", r#"{"pattern":"fn","path":"src"}"#),
            "fn in src"
        );
        assert_eq!(summarize("bash", "{not json"), "{not json");
        assert_eq!(summarize("todo_write", r#"{"todos":[{},{}]}"#), "2 items");
    }

    #[test]
    fn hostile_arguments_stay_on_one_line() {
        let s = summarize(
            "bash",
            "{\"command\":\"echo \\u001b[2J\\u001b]0;pwned\\u0007\"}",
        );
        assert!(!s.contains('\x1b') && !s.contains('\x07'), "{s}");
        assert_eq!(summarize("x", "a\nb"), "a\\nb");
    }
}
