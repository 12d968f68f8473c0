//! The keep-set: what a compaction keeps besides the summary. Pure functions
//! over the history and the stored timeline, so they are tested alone.

use cortex_protocol::{CallId, Event, EventKind, Message, Role};
use cortex_tools::cap_middle;
use std::collections::{HashMap, HashSet};

/// What the timeline says that the keep-set restates.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Facts {
    /// The latest user message (of the latest turn).
    pub task: Option<String>,
    /// The latest plan: version, title, markdown.
    pub plan: Option<(u32, String, String)>,
    /// Files the session read, wrote or edited, newest first.
    pub touched: Vec<String>,
    /// (path, unified diff) of each change, newest first.
    pub diffs: Vec<(String, String)>,
}

/// The file a file-tool call named, if it is one.
fn file_of(name: &str, arguments: &str) -> Option<String> {
    if !matches!(name, "read_file" | "write_file" | "edit_file") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    Some(value.get("path")?.as_str()?.to_owned())
}

pub(crate) fn facts(events: &[Event]) -> Facts {
    let mut facts = Facts::default();
    let mut paths: HashMap<CallId, String> = HashMap::new();
    let mut touched: Vec<String> = Vec::new();
    for event in events {
        match &event.kind {
            EventKind::TurnStarted { message, .. } => facts.task = Some(message.clone()),
            EventKind::PlanProposed {
                version,
                title,
                markdown,
            } => facts.plan = Some((*version, title.clone(), markdown.clone())),
            EventKind::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                if let Some(path) = file_of(name, arguments) {
                    paths.insert(call_id.clone(), path);
                }
            }
            EventKind::ToolResult {
                call_id,
                name,
                diff,
                ..
            } => {
                // Only calls that ran count as touching a file.
                if let Some(path) = paths.get(call_id) {
                    touched.push(path.clone());
                    if let Some(diff) = diff {
                        facts.diffs.push((path.clone(), diff.clone()));
                    }
                } else if let Some(diff) = diff {
                    facts.diffs.push((name.clone(), diff.clone()));
                }
            }
            _ => {}
        }
    }
    let mut seen = HashSet::new();
    facts.touched = touched
        .into_iter()
        .rev()
        .filter(|path| seen.insert(path.clone()))
        .collect();
    facts.diffs.reverse();
    facts
}

/// Where the verbatim tail of the history starts: the last `keep` messages,
/// fewer while they pass `budget_bytes`, and never starting with a tool
/// result (its call would be summarised away, which providers refuse).
pub(crate) fn recent_start(history: &[Message], keep: usize, budget_bytes: usize) -> usize {
    let len = history.len();
    let mut start = len.saturating_sub(keep);
    let size = |m: &Message| serde_json::to_vec(m).map_or(0, |v| v.len());
    let mut bytes: usize = history[start..].iter().map(size).sum();
    while start < len && bytes > budget_bytes {
        bytes -= size(&history[start]);
        start += 1;
    }
    while start < len && history[start].role == Role::Tool {
        start += 1;
    }
    start
}

/// Items, newest first, while they fit in `budget` bytes; the first one that
/// does not fit is cut in the middle if a useful part of it still fits.
pub(crate) fn within_budget(items: Vec<(String, String)>, budget: usize) -> Vec<(String, String)> {
    /// Less than this left is not worth a cut item.
    const MIN_PART: usize = 256;
    let mut left = budget;
    let mut out = Vec::new();
    for (name, text) in items {
        if text.len() <= left {
            left -= text.len();
            out.push((name, text));
        } else {
            if left >= MIN_PART {
                out.push((name, cap_middle(&text, left)));
            }
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{Mode, ToolStatus};

    fn ev(kind: EventKind) -> Event {
        Event {
            seq: 0,
            ts: String::new(),
            session_id: "s".into(),
            turn_id: None,
            kind,
        }
    }

    fn call(id: &str, name: &str, path: &str) -> Event {
        ev(EventKind::ToolCall {
            call_id: id.into(),
            name: name.into(),
            arguments: serde_json::json!({ "path": path }).to_string(),
        })
    }

    fn result(id: &str, name: &str, diff: Option<&str>) -> Event {
        ev(EventKind::ToolResult {
            call_id: id.into(),
            name: name.into(),
            status: ToolStatus::Ok,
            output: String::new(),
            ms: 0.0,
            diff: diff.map(str::to_owned),
            attachments: Vec::new(),
            steer: None,
        })
    }

    #[test]
    fn facts_are_newest_first_and_unique() {
        let events = [
            ev(EventKind::TurnStarted {
                message: "first".into(),
                mode: Mode::Agent,
            }),
            call("1", "read_file", "a.rs"),
            result("1", "read_file", None),
            call("2", "edit_file", "b.rs"),
            result("2", "edit_file", Some("-x\n+y")),
            call("3", "read_file", "a.rs"),
            result("3", "read_file", None),
            call("4", "bash", "ignored"),
            result("4", "bash", None),
            ev(EventKind::TurnStarted {
                message: "second".into(),
                mode: Mode::Agent,
            }),
        ];
        let f = facts(&events);
        assert_eq!(f.task.as_deref(), Some("second"));
        assert_eq!(f.touched, ["a.rs", "b.rs"]);
        assert_eq!(f.diffs, [("b.rs".to_owned(), "-x\n+y".to_owned())]);
    }

    #[test]
    fn the_tail_never_starts_with_a_tool_result_and_keeps_to_its_budget() {
        let history = vec![
            Message::user("task"),
            Message::assistant("", Vec::new()),
            Message::tool("c".into(), "x".repeat(1000)),
            Message::assistant("a", Vec::new()),
            Message::tool("d".into(), "y"),
            Message::assistant("b", Vec::new()),
        ];
        assert_eq!(recent_start(&history, 2, usize::MAX), 5);
        assert_eq!(recent_start(&history, 3, usize::MAX), 3);
        assert_eq!(recent_start(&history, 4, usize::MAX), 3);
        assert_eq!(recent_start(&history, 5, usize::MAX), 1);
        // The 1000-byte result does not fit in 500 bytes.
        assert_eq!(recent_start(&history, 5, 500), 3);
        assert_eq!(recent_start(&history, 0, usize::MAX), 6);
    }

    #[test]
    fn budget_cuts_the_first_item_that_does_not_fit() {
        let items = vec![
            ("a".to_owned(), "1".repeat(300)),
            ("b".to_owned(), "2".repeat(2000)),
            ("c".to_owned(), "3".repeat(10)),
        ];
        let kept = within_budget(items, 1000);
        assert_eq!(kept.len(), 2);
        assert!(kept[1].1.len() <= 700);
        assert!(within_budget(vec![("a".into(), "1".repeat(300))], 100).is_empty());
    }
}
