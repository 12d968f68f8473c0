//! Timeline events to ACP `session/update` notifications, without I/O.
//!
//! [`Mapper`] remembers each tool call's name and arguments between its
//! `tool.call` and its `tool.result`, since the result carries neither and
//! the editor's diff is built from the arguments of `write_file` and
//! `edit_file`. Everything else maps one event to at most one update.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, Diff, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionMode, SessionModeState, SessionUpdate, StopReason, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};
use cortex_protocol::{CallId, EventKind, Mode, TodoStatus, ToolStatus};
use serde_json::Value;
use std::collections::HashMap;

/// A tool call seen and not yet finished.
#[derive(Debug, Clone)]
struct Pending {
    name: String,
    arguments: Value,
    /// Whether an `in_progress` update was sent already.
    running: bool,
}

/// Maps one session's events, in timeline order, to the updates an ACP
/// client is sent.
#[derive(Debug, Default)]
pub struct Mapper {
    calls: HashMap<CallId, Pending>,
}

impl Mapper {
    pub fn new() -> Mapper {
        Mapper::default()
    }

    /// The updates for `event` (none for events an editor has no use for,
    /// such as `model.request` or `usage`). `replay`: the event is part of
    /// a stored history, so the user's own messages are sent back too.
    pub fn map(&mut self, event: &EventKind, replay: bool) -> Vec<SessionUpdate> {
        match event {
            EventKind::TurnStarted { message, .. } if replay => {
                vec![SessionUpdate::UserMessageChunk(chunk(message))]
            }
            EventKind::MessageDelta { text } => {
                vec![SessionUpdate::AgentMessageChunk(chunk(text))]
            }
            EventKind::ThinkingDelta { text } => {
                vec![SessionUpdate::AgentThoughtChunk(chunk(text))]
            }
            EventKind::ToolCall {
                call_id,
                name,
                arguments,
            } => vec![self.call(call_id, name, arguments)],
            EventKind::ToolOutputDelta { call_id, .. } => match self.calls.get_mut(call_id) {
                Some(pending) if !pending.running => {
                    pending.running = true;
                    vec![update(
                        call_id,
                        ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
                    )]
                }
                _ => Vec::new(),
            },
            EventKind::ToolRefused {
                call_id, reason, ..
            } => {
                self.calls.remove(call_id);
                vec![update(
                    call_id,
                    ToolCallUpdateFields::new()
                        .status(ToolCallStatus::Failed)
                        .content(vec![text_content(reason)]),
                )]
            }
            EventKind::ToolResult {
                call_id,
                status,
                output,
                ..
            } => vec![self.result(call_id, *status, output)],
            EventKind::TodoUpdated { todos } => vec![SessionUpdate::Plan(Plan::new(
                todos
                    .iter()
                    .map(|todo| {
                        PlanEntry::new(
                            todo.content.clone(),
                            PlanEntryPriority::Medium,
                            match todo.status {
                                TodoStatus::Pending => PlanEntryStatus::Pending,
                                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                                TodoStatus::Completed => PlanEntryStatus::Completed,
                            },
                        )
                    })
                    .collect(),
            ))],
            EventKind::ModeChanged { to, .. } => vec![SessionUpdate::CurrentModeUpdate(
                CurrentModeUpdate::new(to.as_str()),
            )],
            _ => Vec::new(),
        }
    }

    fn call(&mut self, call_id: &CallId, name: &str, arguments: &str) -> SessionUpdate {
        // Arguments that are not JSON still make a call the editor shows;
        // the tool's own error follows as its result.
        let arguments: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let path = arguments.get("path").and_then(Value::as_str);
        let title = match (name, path, arguments.get("command").and_then(Value::as_str)) {
            ("bash", _, Some(command)) => format!("bash: {command}"),
            (_, Some(path), _) => format!("{name} {path}"),
            _ => name.to_owned(),
        };
        let mut call = ToolCall::new(call_id.0.clone(), title)
            .kind(kind(name))
            .status(ToolCallStatus::Pending)
            .raw_input(arguments.clone());
        if let Some(path) = path {
            call = call.locations(vec![ToolCallLocation::new(path)]);
        }
        self.calls.insert(
            call_id.clone(),
            Pending {
                name: name.to_owned(),
                arguments,
                running: false,
            },
        );
        SessionUpdate::ToolCall(call)
    }

    fn result(&mut self, call_id: &CallId, status: ToolStatus, output: &str) -> SessionUpdate {
        let pending = self.calls.remove(call_id);
        let ok = status == ToolStatus::Ok;
        let mut content = Vec::new();
        if let Some(diff) = pending.as_ref().filter(|_| ok).and_then(edit_diff) {
            content.push(ToolCallContent::Diff(diff));
        }
        if !output.is_empty() {
            content.push(text_content(output));
        }
        update(
            call_id,
            ToolCallUpdateFields::new()
                .status(if ok {
                    ToolCallStatus::Completed
                } else {
                    ToolCallStatus::Failed
                })
                .content(content),
        )
    }
}

/// The diff an editor shows for a finished `write_file` (the whole new
/// text) or `edit_file` (the replaced text and its replacement).
fn edit_diff(pending: &Pending) -> Option<Diff> {
    let field = |name: &str| pending.arguments.get(name).and_then(Value::as_str);
    let path = field("path")?;
    match pending.name.as_str() {
        "write_file" => Some(Diff::new(path, field("content")?)),
        "edit_file" => Some(Diff::new(path, field("new_string")?).old_text(field("old_string")?)),
        _ => None,
    }
}

fn kind(tool: &str) -> ToolKind {
    match tool {
        "read_file" | "todo_read" => ToolKind::Read,
        "write_file" | "edit_file" => ToolKind::Edit,
        "glob" | "grep" => ToolKind::Search,
        "bash" => ToolKind::Execute,
        "plan" | "todo_write" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text))
}

fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::from(text))
}

fn update(call_id: &CallId, fields: ToolCallUpdateFields) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.0.clone(), fields))
}

/// How a turn that ended with `event` answers `session/prompt`: a stop
/// reason, or the error to answer with; `None` for an event that does not
/// end a turn.
pub fn stop_reason(event: &EventKind) -> Option<Result<StopReason, String>> {
    match event {
        EventKind::TurnCompleted { .. } => Some(Ok(StopReason::EndTurn)),
        EventKind::TurnStopped { .. } => Some(Ok(StopReason::Cancelled)),
        EventKind::TurnFailed { error } => Some(Err(error.clone())),
        _ => None,
    }
}

/// The session's modes as ACP advertises them, `current` selected.
pub fn modes(current: Mode) -> SessionModeState {
    SessionModeState::new(
        current.as_str(),
        Mode::ALL
            .into_iter()
            .map(|mode| SessionMode::new(mode.as_str(), title(mode)).description(describe(mode)))
            .collect(),
    )
}

fn title(mode: Mode) -> &'static str {
    match mode {
        Mode::Ask => "Ask",
        Mode::Plan => "Plan",
        Mode::Spec => "Spec",
        Mode::Agent => "Agent",
    }
}

fn describe(mode: Mode) -> &'static str {
    match mode {
        Mode::Ask => "Read-only: answers questions about the code",
        Mode::Plan => "Read-only, proposes a plan",
        Mode::Spec => "Read-only, writes a spec",
        Mode::Agent => "Reads, edits and runs commands in the sandbox",
    }
}

#[cfg(test)]
mod tests;
