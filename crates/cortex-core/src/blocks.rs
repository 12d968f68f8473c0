//! The `blocks` edit format ([`EditFormat::Blocks`], Aider's SEARCH/REPLACE
//! blocks): the model is offered no `edit_file` and writes each change in
//! its reply as plain text,
//!
//! ```text
//! calc.py
//! <<<<<<< SEARCH
//!     return a - b
//! =======
//!     return a + b
//! >>>>>>> REPLACE
//! ```
//!
//! which the turn loop turns into `edit_file` calls (an empty SEARCH into a
//! `write_file` of a new file) before they are recorded and dispatched, so
//! that every gate, approval and check a call meets applies to them. The
//! reply's text keeps the blocks: the model reads its own edits back in the
//! format it writes them.

use cortex_protocol::{CallId, ToolCallRequest, ToolName};

/// What the system prompt adds in Agent mode for this format.
pub(crate) const RULES: &str = "To change a file, write in your reply one block per change: \
the file's path on its own line, then a line <<<<<<< SEARCH, the lines to replace copied exactly \
from the file, a line =======, the lines that replace them, and a line >>>>>>> REPLACE. An empty \
SEARCH part creates a new file.";

/// One change a reply asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    pub(crate) path: String,
    pub(crate) search: String,
    pub(crate) replace: String,
}

/// The blocks of `text`, in order. A block without a path line before it,
/// or not closed by its `>>>>>>> REPLACE` line, is not one (the model sees
/// that nothing ran and can write it again).
pub(crate) fn parse(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_marker(lines[i], '<', "SEARCH") {
            i += 1;
            continue;
        }
        let path = path_before(&lines[..i]);
        let Some(divider) = (i + 1..lines.len()).find(|&j| is_divider(lines[j])) else {
            break;
        };
        let Some(end) = (divider + 1..lines.len()).find(|&j| is_marker(lines[j], '>', "REPLACE"))
        else {
            break;
        };
        if let Some(path) = path {
            blocks.push(Block {
                path,
                search: joined(&lines[i + 1..divider]),
                replace: joined(&lines[divider + 1..end]),
            });
        }
        i = end + 1;
    }
    blocks
}

/// The calls `text`'s blocks ask for, with fresh ids: `edit_file` for a
/// block that quotes lines, `write_file` for one whose SEARCH part is empty.
pub(crate) fn calls(text: &str) -> Vec<ToolCallRequest> {
    parse(text)
        .into_iter()
        .map(|block| {
            let (name, arguments) = if block.search.trim().is_empty() {
                (
                    ToolName::WriteFile,
                    serde_json::json!({"path": block.path, "content": block.replace}),
                )
            } else {
                (
                    ToolName::EditFile,
                    serde_json::json!({"path": block.path, "old_string": block.search,
                        "new_string": block.replace}),
                )
            };
            ToolCallRequest {
                id: CallId(format!("block_{}", crate::new_id())),
                name: name.as_str().to_owned(),
                arguments: arguments.to_string(),
            }
        })
        .collect()
}

/// `<<<<<<< SEARCH` (5 to 9 marks, spaces allowed around the word).
fn is_marker(line: &str, mark: char, word: &str) -> bool {
    let line = line.trim();
    let rest = line.trim_start_matches(mark);
    (5..=9).contains(&(line.len() - rest.len())) && rest.trim() == word
}

/// `=======` (5 to 9 marks).
fn is_divider(line: &str) -> bool {
    let line = line.trim();
    (5..=9).contains(&line.len()) && line.chars().all(|c| c == '=')
}

/// The path a block names: the last non-blank line before it, past a code
/// fence's opening line, without backticks, quotes or a trailing colon.
fn path_before(lines: &[&str]) -> Option<String> {
    let line = lines
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !l.starts_with("```"))?;
    let path = line
        .trim_end_matches(':')
        .trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | '*'))
        .trim();
    let plausible = !path.is_empty()
        && !path.contains(char::is_whitespace)
        && !path.starts_with(['<', '>', '='])
        && path.contains(['.', '/']);
    plausible.then(|| path.to_owned())
}

/// Lines joined as a file holds them: each followed by a line break.
fn joined(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_read_with_their_paths() {
        let text = "I will fix it.\n\ncalc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n\
                    =======\n    return a + b\n>>>>>>> REPLACE\n```\n\n`notes/todo.md`:\n\
                    <<<<<<< SEARCH\n=======\n- ship it\n>>>>>>> REPLACE\n";
        assert_eq!(
            parse(text),
            [
                Block {
                    path: "calc.py".into(),
                    search: "    return a - b\n".into(),
                    replace: "    return a + b\n".into(),
                },
                Block {
                    path: "notes/todo.md".into(),
                    search: String::new(),
                    replace: "- ship it\n".into(),
                },
            ]
        );
        let calls = calls(text);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].name, "edit_file");
        assert_eq!(calls[1].name, "write_file");
        assert_ne!(calls[0].id, calls[1].id);
        let args: serde_json::Value = serde_json::from_str(&calls[0].arguments).expect("json");
        assert_eq!(args["old_string"], "    return a - b\n");
    }

    #[test]
    fn an_unfinished_or_unnamed_block_is_none() {
        assert!(parse("calc.py\n<<<<<<< SEARCH\nold\n=======\nnew\n").is_empty());
        assert!(parse("<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n").is_empty());
        assert!(
            parse("Here is the fix\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n")
                .is_empty()
        );
        assert!(parse("No blocks here.\n=======\n").is_empty());
    }
}
