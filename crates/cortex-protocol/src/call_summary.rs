//! The argument that identifies a tool call, for the one-line row every
//! client shows for it (`cortex exec`'s output, the terminal UI's
//! transcript). It sits beside the tool names so that a tool added to the
//! catalog is summarised the same way by every client.

use crate::ToolName;

/// What identifies a call, read from its raw argument text. Neither
/// sanitised nor cut: the model wrote it, and each client makes it one
/// terminal-safe line of its own width.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallSummary {
    /// The path for file tools, the pattern for searches (`PATTERN in
    /// PATH` with a path), a command's first line, a plan's title, `N
    /// items` for a todo list; the raw text when the arguments are not
    /// JSON (a malformed call); empty for a tool with none of these (an
    /// MCP tool, `todo_read`).
    pub text: String,
    /// Lines of a `bash` command after its first, which `text` leaves out.
    pub more_lines: usize,
}

impl CallSummary {
    /// The summary of a call of tool `name` with `arguments`.
    pub fn of(name: &str, arguments: &str) -> CallSummary {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(arguments) else {
            return CallSummary {
                text: arguments.to_owned(),
                more_lines: 0,
            };
        };
        let field = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        let mut more_lines = 0;
        let text = match name.parse::<ToolName>() {
            Ok(ToolName::ReadFile | ToolName::WriteFile | ToolName::EditFile) => field("path"),
            Ok(ToolName::Glob) => field("pattern"),
            Ok(ToolName::Grep) => field("pattern").map(|p| match field("path") {
                Some(path) => format!("{p} in {path}"),
                None => p,
            }),
            Ok(ToolName::Bash) => field("command").map(|c| {
                let mut lines = c.lines();
                let first = lines.next().unwrap_or_default().to_owned();
                more_lines = lines.count();
                first
            }),
            Ok(ToolName::Plan) => field("title"),
            Ok(ToolName::Skill) => field("name"),
            Ok(ToolName::Task) => field("description").map(|d| match field("kind") {
                Some(kind) => format!("{kind}: {d}"),
                None => d,
            }),
            Ok(ToolName::BashOutput | ToolName::BashKill) => field("id"),
            Ok(ToolName::WebFetch) => field("url"),
            Ok(ToolName::WebSearch) => field("query"),
            Ok(ToolName::TodoWrite) => value
                .get("todos")
                .and_then(|t| t.as_array())
                .map(|t| format!("{} items", t.len())),
            Ok(ToolName::TodoRead | ToolName::Spec | ToolName::Goal) | Err(_) => None,
        };
        CallSummary {
            text: text.unwrap_or_default(),
            more_lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CallSummary;

    fn summary(text: &str, more_lines: usize) -> CallSummary {
        CallSummary {
            text: text.into(),
            more_lines,
        }
    }

    #[test]
    fn picks_the_identifying_argument() {
        assert_eq!(
            CallSummary::of("edit_file", r#"{"path":"src/a.rs","old_string":"x"}"#),
            summary("src/a.rs", 0)
        );
        assert_eq!(
            CallSummary::of("grep", r#"{"pattern":"fn"}"#),
            summary("fn", 0)
        );
        assert_eq!(
            CallSummary::of("bash", r#"{"command":"cargo test\nmore\nlines"}"#),
            summary("cargo test", 2)
        );
        assert_eq!(
            CallSummary::of("plan", r#"{"title":"Split the parser"}"#),
            summary("Split the parser", 0)
        );
        assert_eq!(
            CallSummary::of("todo_write", r#"{"todos":[{},{}]}"#),
            summary("2 items", 0)
        );
        assert_eq!(
            CallSummary::of("web_fetch", r#"{"url":"https://docs.rs/serde"}"#),
            summary("https://docs.rs/serde", 0)
        );
    }

    #[test]
    fn unknown_tools_and_malformed_calls() {
        assert_eq!(
            CallSummary::of("mcp__git__log", r#"{"path":"x"}"#),
            summary("", 0)
        );
        assert_eq!(
            CallSummary::of("bash", "{not json"),
            summary("{not json", 0)
        );
        assert_eq!(CallSummary::of("bash", r#"{"cmd":"ls"}"#), summary("", 0));
    }
}
