//! The one-line summary of a tool call's arguments for its row.

use crate::text;

/// Longest summary kept (the row truncates further to fit its width).
const MAX_CHARS: usize = 200;

/// The argument that identifies a call: the path for file tools, the
/// pattern for searches, the first line of a command. Arguments that are
/// not JSON (a malformed call) are shown as they are, on one line.
pub fn summarize(name: &str, arguments: &str) -> String {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(arguments) else {
        return one_line(arguments);
    };
    let field = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let summary = match name {
        "read_file" | "write_file" | "edit_file" => field("path"),
        "glob" => field("pattern"),
        "grep" => field("pattern").map(|p| match field("path") {
            Some(path) => format!("{p} in {path}"),
            None => p,
        }),
        "bash" => field("command").map(|c| {
            let mut lines = c.lines();
            let first = lines.next().unwrap_or_default().to_owned();
            match lines.count() {
                0 => first,
                more => format!("{first} (+{more} lines)"),
            }
        }),
        "plan" => field("title"),
        "todo_write" => value
            .get("todos")
            .and_then(|t| t.as_array())
            .map(|t| format!("{} items", t.len())),
        _ => None,
    };
    one_line(&summary.unwrap_or_default())
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
