//! The transcript's cells: what the fold makes of the timeline, one entry
//! per thing the user sees (a message, a tool call, a notice, a turn's end).
//!
//! Every string in a cell has been through `text::clean` (or `clean_line`).

use crate::time::Millis;
use cortex_protocol::{Todo, ToolStatus, TurnOutcome};

/// One entry of the transcript. `rev` changes whenever its content does, so
/// the view can keep what it drew for an unchanged cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Changes whenever the content does.
    pub rev: u32,
    /// What the cell shows.
    pub kind: CellKind,
}

/// What a transcript entry is.
#[derive(Debug, Clone, PartialEq)]
pub enum CellKind {
    /// The session's opening line.
    Header {
        /// The repository.
        repository: String,
        /// The model.
        model: String,
    },
    /// What the user asked (a turn's message).
    User {
        /// The message.
        text: String,
    },
    /// The assistant's text (markdown), streaming until `done`.
    Assistant {
        /// The text so far.
        text: String,
        /// The message is complete.
        done: bool,
    },
    /// The model's thinking: drawn as one collapsed line.
    Thinking {
        /// The thinking so far.
        text: String,
        /// The thinking is complete.
        done: bool,
    },
    /// A tool call's row.
    Tool(ToolCell),
    /// A line about the session (guest, mode, compaction, errors).
    Notice {
        /// How much it matters.
        level: Level,
        /// The line.
        text: String,
    },
    /// How a turn ended.
    TurnEnd(TurnEnd),
    /// A plan the `plan` tool proposed.
    Plan {
        /// The plan's version, from 1.
        version: u32,
        /// Its title.
        title: String,
        /// Its text.
        markdown: String,
    },
    /// A spec phase the `spec` tool proposed.
    Spec {
        /// Requirements, design or tasks.
        phase: cortex_protocol::SpecPhase,
        /// The phase's version, from 1.
        version: u32,
        /// Its text.
        markdown: String,
    },
    /// The todo list as `todo_write` left it.
    Todos(Vec<Todo>),
    /// The goal's steps as the `goal` tool left them (done = completed).
    GoalSteps(Vec<Todo>),
}

/// How much a notice matters (its colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Progress the user may skim past (guest attached, mode changed).
    Info,
    /// Something did not work as asked, and the session goes on.
    Warning,
    /// Something failed.
    Error,
}

/// A tool call's row: running until its result arrives.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCell {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The one argument that identifies the call (a path, a command).
    pub summary: String,
    /// Running or done.
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
    /// A `task` call's subagent: each tool call it made (`name summary`),
    /// the newest [`MAX_STEPS`] of them.
    pub steps: Vec<String>,
}

/// A subagent's steps a row keeps.
pub const MAX_STEPS: usize = 200;

/// A tool call's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    /// No result yet.
    Running,
    /// Its result's status.
    Done(ToolStatus),
}

/// How a turn ended, with its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnEnd {
    /// Completed, stopped or failed.
    pub outcome: TurnOutcome,
    /// Tokens the turn used (prompt and output, summed over its rounds).
    pub tokens_in: u64,
    /// Output tokens the turn used.
    pub tokens_out: u64,
    /// From `turn.started` to this event.
    pub ms: Option<f64>,
    /// A completed turn whose answer a check still doubts: the line that
    /// says so (sanitised), shown under the turn's end.
    pub unverified: Option<String>,
}

impl Cell {
    /// A cell at its first revision.
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
