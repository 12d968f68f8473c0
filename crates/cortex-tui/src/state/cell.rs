//! The transcript's cells: what the fold makes of the timeline, one entry
//! per thing the user sees (a message, a tool call, a notice, a turn's end).
//!
//! Every string in a cell has been through `text::clean` (or `clean_line`).

use crate::time::Millis;
use cortex_protocol::{Todo, ToolStatus};

/// One entry of the transcript. `rev` changes whenever its content does, so
/// the view can keep what it drew for an unchanged cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub rev: u32,
    pub kind: CellKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CellKind {
    /// The session's opening line.
    Header {
        repository: String,
        model: String,
    },
    /// What the user asked (a turn's message).
    User {
        text: String,
    },
    /// The assistant's text (markdown), streaming until `done`.
    Assistant {
        text: String,
        done: bool,
    },
    /// The model's thinking: drawn as one collapsed line.
    Thinking {
        text: String,
        done: bool,
    },
    Tool(ToolCell),
    Notice {
        level: Level,
        text: String,
    },
    /// How a turn ended.
    TurnEnd(TurnEnd),
    /// A plan the `plan` tool proposed.
    Plan {
        version: u32,
        title: String,
        markdown: String,
    },
    /// A spec phase the `spec` tool proposed.
    Spec {
        phase: cortex_protocol::SpecPhase,
        version: u32,
        markdown: String,
    },
    /// The todo list as `todo_write` left it.
    Todos(Vec<Todo>),
    /// The goal's steps as the `goal` tool left them (done = completed).
    GoalSteps(Vec<Todo>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Progress the user may skim past (guest attached, mode changed).
    Info,
    Warning,
    Error,
}

/// A tool call's row: running until its result arrives.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCell {
    pub call_id: String,
    pub name: String,
    /// The one argument that identifies the call (a path, a command).
    pub summary: String,
    pub state: ToolState,
    /// When the call was made (the `tool.call` event's time).
    pub started: Option<Millis>,
    /// How long it ran, from its result.
    pub ms: Option<f64>,
    /// Streamed output while it runs (the tail, capped), then what the
    /// model was given back.
    pub output: String,
    /// Unified diff of what a write or edit changed.
    pub diff: Option<String>,
    /// Why a gate refused it.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    Running,
    Done(ToolStatus),
}

#[derive(Debug, Clone, PartialEq)]
pub struct TurnEnd {
    pub outcome: TurnOutcome,
    /// Tokens the turn used (prompt and output, summed over its rounds).
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// From `turn.started` to this event.
    pub ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    Completed { rounds: u32 },
    Stopped { reason: String },
    Failed { error: String },
}

impl Cell {
    pub fn new(kind: CellKind) -> Cell {
        Cell { rev: 0, kind }
    }

    /// Whether the cell changes with the clock alone (a spinner, an elapsed
    /// time), so the view must draw it afresh every frame.
    pub fn is_live(&self) -> bool {
        match &self.kind {
            CellKind::Tool(tool) => tool.state == ToolState::Running,
            CellKind::Thinking { done, .. } => !done,
            _ => false,
        }
    }
}
