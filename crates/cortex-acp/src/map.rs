//! Timeline events to ACP `session/update` notifications, without I/O.
//!
//! [`Mapper`] remembers each tool call's name and arguments between its
//! `tool.call` and its `tool.result`, since the result carries neither and
//! the editor's diff is built from the arguments of `write_file` and
//! `edit_file`; and the goal's steps and the todo list, which the editor
//! sees as one plan (the goal's steps first), each update replacing it.
//! Paths are made absolute against the session's repository, as the
//! protocol wants them.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, Diff, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionMode, SessionModeState, SessionUpdate, StopReason, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};
use cortex_protocol::{
    CallId, EventKind, GoalStep, Mode, STOPPED_BY_USER, Todo, TodoStatus, ToolName, ToolStatus,
    TurnFinish,
};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A tool call seen and not yet finished.
#[derive(Debug, Clone)]
struct Pending {
    name: String,
    arguments: Value,
    /// Whether an `in_progress` update was sent already.
    running: bool,
}

/// How a turn ended, as `session/prompt` answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// A stop reason.
    Stop(StopReason),
    /// The turn failed: a JSON-RPC error with this message.
    Failed(String),
}

/// Maps one session's events, in timeline order, to the updates an ACP
/// client is sent.
#[derive(Debug)]
pub struct Mapper {
    /// The session's repository: tool paths are relative to it.
    root: PathBuf,
    calls: HashMap<CallId, Pending>,
    goal: Vec<PlanEntry>,
    todos: Vec<PlanEntry>,
}

impl Mapper {
    /// A mapper for a session whose repository is `root`.
    pub fn new(root: PathBuf) -> Mapper {
        Mapper {
            root,
            calls: HashMap::new(),
            goal: Vec::new(),
            todos: Vec::new(),
        }
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
            EventKind::ToolOutputDelta { call_id, .. } => self.running(call_id),
            EventKind::ToolResult {
                call_id,
                status,
                output,
                ..
            } => vec![self.result(call_id, *status, output)],
            EventKind::TodoUpdated { todos } => {
                self.todos = todos.iter().map(todo_entry).collect();
                vec![self.plan()]
            }
            EventKind::GoalSet { objective, .. } => {
                self.goal = vec![PlanEntry::new(
                    objective.clone(),
                    PlanEntryPriority::High,
                    PlanEntryStatus::InProgress,
                )];
                vec![self.plan()]
            }
            EventKind::GoalUpdated { steps, .. } => {
                self.goal = goal_entries(steps);
                vec![self.plan()]
            }
            EventKind::GoalCleared {} => {
                self.goal.clear();
                vec![self.plan()]
            }
            EventKind::ModeChanged { to, .. } => vec![SessionUpdate::CurrentModeUpdate(
                CurrentModeUpdate::new(to.as_str()),
            )],
            // `tool.refused` is followed by the call's `tool.result`
            // (status `refused`, the reason as its output), which says it.
            _ => Vec::new(),
        }
    }

    fn plan(&self) -> SessionUpdate {
        let entries = self.goal.iter().chain(&self.todos).cloned().collect();
        SessionUpdate::Plan(Plan::new(entries))
    }

    /// The first output of a call: it runs.
    fn running(&mut self, call_id: &CallId) -> Vec<SessionUpdate> {
        match self.calls.get_mut(call_id) {
            Some(pending) if !pending.running => {
                pending.running = true;
                vec![update(
                    call_id,
                    ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
                )]
            }
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
            call = call.locations(vec![ToolCallLocation::new(self.absolute(path))]);
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
        if let Some(diff) = pending
            .as_ref()
            .filter(|_| ok)
            .and_then(|p| self.edit_diff(p))
        {
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

    /// The diff an editor shows for a finished `write_file` (the whole new
    /// text) or `edit_file` (the replaced text and its replacement).
    fn edit_diff(&self, pending: &Pending) -> Option<Diff> {
        let field = |name: &str| pending.arguments.get(name).and_then(Value::as_str);
        let path = self.absolute(field("path")?);
        match pending.name.parse::<ToolName>().ok()? {
            ToolName::WriteFile => Some(Diff::new(path, field("content")?)),
            ToolName::EditFile => {
                Some(Diff::new(path, field("new_string")?).old_text(field("old_string")?))
            }
            _ => None,
        }
    }

    /// A tool's path (relative to the workspace, or absolute) as an
    /// absolute path on the editor's side.
    fn absolute(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_owned()
        } else {
            self.root.join(path)
        }
    }
}

fn todo_entry(todo: &Todo) -> PlanEntry {
    PlanEntry::new(
        todo.content.clone(),
        PlanEntryPriority::Medium,
        match todo.status {
            TodoStatus::Pending => PlanEntryStatus::Pending,
            TodoStatus::InProgress => PlanEntryStatus::InProgress,
            TodoStatus::Completed => PlanEntryStatus::Completed,
        },
    )
}

/// The goal's steps: done ones completed, the first open one in progress.
fn goal_entries(steps: &[GoalStep]) -> Vec<PlanEntry> {
    let current = steps.iter().position(|step| !step.done);
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let status = if step.done {
                PlanEntryStatus::Completed
            } else if Some(i) == current {
                PlanEntryStatus::InProgress
            } else {
                PlanEntryStatus::Pending
            };
            PlanEntry::new(step.title.clone(), PlanEntryPriority::High, status)
        })
        .collect()
}

fn kind(tool: &str) -> ToolKind {
    match tool.parse::<ToolName>() {
        Ok(ToolName::ReadFile | ToolName::TodoRead | ToolName::Skill) => ToolKind::Read,
        Ok(ToolName::WriteFile | ToolName::EditFile) => ToolKind::Edit,
        Ok(ToolName::Glob | ToolName::Grep) => ToolKind::Search,
        Ok(ToolName::WebFetch | ToolName::WebSearch) => ToolKind::Fetch,
        Ok(ToolName::Bash | ToolName::BashOutput | ToolName::BashKill) => ToolKind::Execute,
        Ok(ToolName::Plan | ToolName::Spec | ToolName::TodoWrite | ToolName::Goal) => {
            ToolKind::Think
        }
        Ok(ToolName::Task) | Err(_) => ToolKind::Other,
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

/// How a turn that ended with `event` answers `session/prompt`; `None` for
/// an event that does not end a turn. A turn stopped by anything but the
/// user was ended by the session's stop rule (`max_turn_requests`); the
/// provider's own end (`max_tokens`, `refusal`) comes with the end event.
pub fn turn_end(event: &EventKind) -> Option<TurnEnd> {
    match event {
        EventKind::TurnCompleted {
            finish: Some(TurnFinish::MaxTokens),
            ..
        } => Some(TurnEnd::Stop(StopReason::MaxTokens)),
        EventKind::TurnCompleted { .. } => Some(TurnEnd::Stop(StopReason::EndTurn)),
        EventKind::TurnFailed {
            finish: Some(TurnFinish::Refusal),
            ..
        } => Some(TurnEnd::Stop(StopReason::Refusal)),
        EventKind::TurnStopped { reason } if reason == STOPPED_BY_USER => {
            Some(TurnEnd::Stop(StopReason::Cancelled))
        }
        EventKind::TurnStopped { .. } => Some(TurnEnd::Stop(StopReason::MaxTurnRequests)),
        EventKind::TurnFailed { error, .. } => Some(TurnEnd::Failed(error.clone())),
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
