//! The conversation's turns as `/rewind` lists them: each turn's id, its
//! prompt's first line and the files its tools wrote, folded from the
//! timeline like the rest of the state.
//!
//! The files are those whose tool result carried a diff (`write_file`,
//! `edit_file`, and any tool that reports one); what a command changed is
//! not in the timeline, so a turn that ran commands says how many, and the
//! rewind's preview (a dry run against the checkpoints) gives the exact
//! paths before anything is applied. A `session.rewound` of the
//! conversation drops the turns it rewound, as the session's history does.

use crate::text::clean_line;
use cortex_protocol::{EventKind, RewindScope, ToolStatus, TurnId};
use std::collections::HashMap;

/// Longest prompt line kept (the list truncates further to its width).
const PROMPT_CHARS: usize = 200;

/// Paths kept per turn (the preview has them all).
const FILES_CAP: usize = 50;

/// One turn of the conversation, its texts sanitised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEntry {
    /// The turn's id (the checkpoint taken before it has the same).
    pub id: String,
    /// The first line of its message.
    pub prompt: String,
    /// Files its tools wrote, in the order first written.
    pub files: Vec<String>,
    /// Commands it ran, whose changes only the preview can name.
    pub commands: u32,
}

/// The conversation's turns, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turns {
    /// Oldest first.
    pub list: Vec<TurnEntry>,
    /// A call's turn and the path its arguments name, until its result.
    calls: HashMap<String, (String, Option<String>)>,
}

impl Turns {
    /// Fold one event.
    pub fn apply(&mut self, kind: &EventKind, turn: Option<&TurnId>) {
        match kind {
            EventKind::TurnStarted { message, .. } => {
                let Some(turn) = turn else { return };
                let first = message.lines().next().unwrap_or_default();
                let prompt = crate::text::truncate(&clean_line(first), PROMPT_CHARS).into_owned();
                self.list.push(TurnEntry {
                    id: turn.0.clone(),
                    prompt,
                    files: Vec::new(),
                    commands: 0,
                });
            }
            EventKind::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                let Some(turn) = turn else { return };
                if name == "bash"
                    && let Some(entry) = self.entry(&turn.0)
                {
                    entry.commands += 1;
                }
                let path = serde_json::from_str::<serde_json::Value>(arguments)
                    .ok()
                    .and_then(|v| v.get("path")?.as_str().map(clean_line));
                self.calls
                    .insert(call_id.as_str().to_owned(), (turn.0.clone(), path));
            }
            EventKind::ToolResult {
                call_id,
                status,
                diff,
                ..
            } => {
                let Some((turn, path)) = self.calls.remove(call_id.as_str()) else {
                    return;
                };
                if *status != ToolStatus::Ok || diff.is_none() {
                    return;
                }
                if let (Some(path), Some(entry)) = (path, self.entry(&turn))
                    && !entry.files.contains(&path)
                    && entry.files.len() < FILES_CAP
                {
                    entry.files.push(path);
                }
            }
            EventKind::SessionRewound { turn_id, scope, .. } if *scope != RewindScope::Files => {
                if let Some(at) = self.list.iter().position(|t| t.id == *turn_id) {
                    self.list.truncate(at);
                }
            }
            _ => {}
        }
    }

    fn entry(&mut self, id: &str) -> Option<&mut TurnEntry> {
        self.list.iter_mut().rev().find(|t| t.id == id)
    }

    /// How many turns a conversation rewind to before `id` removes (it and
    /// every later one).
    pub fn going(&self, id: &str) -> usize {
        self.list
            .iter()
            .position(|t| t.id == id)
            .map_or(0, |at| self.list.len() - at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{CallId, Mode, RewindDiff};

    fn started(turns: &mut Turns, id: &str, message: &str) {
        turns.apply(
            &EventKind::TurnStarted {
                message: message.into(),
                mode: Mode::Agent,
            },
            Some(&TurnId::from(id)),
        );
    }

    fn call(turns: &mut Turns, turn: &str, id: &str, name: &str, args: &str, diff: bool) {
        let t = TurnId::from(turn);
        turns.apply(
            &EventKind::ToolCall {
                call_id: CallId::from(id),
                name: name.into(),
                arguments: args.into(),
            },
            Some(&t),
        );
        turns.apply(
            &EventKind::ToolResult {
                call_id: CallId::from(id),
                name: name.into(),
                status: ToolStatus::Ok,
                output: String::new(),
                ms: 1.0,
                diff: diff.then(|| "--- a\n+++ b\n".to_owned()),
                attachments: Vec::new(),
                steer: None,
            },
            Some(&t),
        );
    }

    #[test]
    fn lists_prompts_files_and_commands_and_forgets_rewound_turns() {
        let mut turns = Turns::default();
        started(&mut turns, "t1", "fix \x1b[31mit\nsecond line");
        call(
            &mut turns,
            "t1",
            "c1",
            "read_file",
            r#"{"path":"a.py"}"#,
            false,
        );
        call(
            &mut turns,
            "t1",
            "c2",
            "edit_file",
            r#"{"path":"a.py"}"#,
            true,
        );
        call(
            &mut turns,
            "t1",
            "c3",
            "write_file",
            r#"{"path":"a.py"}"#,
            true,
        );
        call(
            &mut turns,
            "t1",
            "c4",
            "bash",
            r#"{"command":"rm b"}"#,
            false,
        );
        started(&mut turns, "t2", "more");
        call(
            &mut turns,
            "t2",
            "c5",
            "write_file",
            r#"{"path":"n\u001b.txt"}"#,
            true,
        );
        let first = &turns.list[0];
        assert_eq!(first.prompt, "fix ^[[31mit");
        assert_eq!(first.files, ["a.py"]);
        assert_eq!(first.commands, 1);
        assert_eq!(turns.list[1].files, ["n^[.txt"]);
        assert_eq!(turns.going("t1"), 2);
        assert_eq!(turns.going("t2"), 1);

        let rewound = |scope| EventKind::SessionRewound {
            turn_id: "t2".into(),
            scope,
            diff: RewindDiff::default(),
            paths: 0,
            undo: None,
            forced: Vec::new(),
        };
        turns.apply(&rewound(RewindScope::Files), None);
        assert_eq!(turns.list.len(), 2, "a files rewind keeps the conversation");
        turns.apply(&rewound(RewindScope::Both), None);
        assert_eq!(turns.list.len(), 1);
        assert_eq!(turns.going("t2"), 0);
    }
}
