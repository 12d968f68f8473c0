//! The UI's session state, as a fold over the timeline.
//!
//! [`SessionState::apply`] is the only way state changes: the transcript,
//! the mode, the guest's phase and the token figures are a function of the
//! events seen, in order. A UI that attaches to a session (or reconnects
//! after a dropped stream and replays from its last seq) therefore shows
//! exactly what the UI that started the turn shows. Events at or below the
//! last applied seq are ignored, so a replay that overlaps is harmless.

mod cell;
mod goal;
mod processes;
mod review;
mod session;
mod summary;
mod turns;

pub use cell::{Cell, CellKind, Level, ToolCell, ToolState, TurnEnd};
pub use cortex_protocol::TurnOutcome;
pub use goal::GoalState;
pub use processes::ProcessRow;
pub use review::{Review, Subject};
pub use summary::summarize;
pub use turns::{TurnEntry, Turns};

use crate::text::{clean, clean_line};
use crate::time::{Millis, parse_rfc3339};
use cortex_protocol::{
    Event, EventKind, Mode, Sandbox, SessionId, StopRule, Todo, ToolStatus, TurnId,
};
use std::collections::HashMap;

/// Streamed output kept per tool row: its tail (the result brings what the
/// model saw, capped by the tool itself).
const STREAM_TAIL_BYTES: usize = 64 * 1024;

/// What the UI shows of a session: the fold of its timeline events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionState {
    /// The session's id, from its first event.
    pub id: Option<SessionId>,
    /// The repository it works on.
    pub repository: String,
    /// Its model (`PROVIDER:NAME`).
    pub model: String,
    /// The mode the next turn runs in.
    pub mode: Mode,
    /// When a turn stops on its own.
    pub stop_rule: StopRule,
    /// The guest's sandbox settings.
    pub sandbox: Sandbox,
    /// The transcript, in order.
    pub cells: Vec<Cell>,
    /// Seq of the last event applied.
    pub last_seq: u64,
    /// The turn running now.
    pub turn: Option<RunningTurn>,
    /// The guest, as the status line shows it.
    pub guest: GuestPhase,
    /// Token figures so far.
    pub usage: Usage,
    /// The model's context window, once an event told it.
    pub context_window: Option<u64>,
    /// The todo list, as the last `todo_write` left it.
    pub todos: Vec<Todo>,
    /// The latest proposed plan: `(version, title, markdown)`.
    pub plan: Option<(u32, String, String)>,
    /// The plan or spec phase waiting for the user's Accept / Reject.
    pub review: Option<Review>,
    /// The session's goal (`goal.*` events).
    pub goal: Option<GoalState>,
    /// The call waiting for the user's approval, if any.
    pub approval: Option<PendingApproval>,
    /// Messages of the session's turns, oldest first (the composer's
    /// history starts with them).
    pub messages: Vec<String>,
    /// The conversation's turns, for `/rewind`.
    pub turns: Turns,
    /// The session's background commands, for `/ps`.
    pub processes: Vec<ProcessRow>,
    /// The project instructions the model was last given
    /// (`instructions.loaded`), for `/status`; `None` before any.
    pub instructions: Option<InstructionsSeen>,
    /// The folders the last checkpoint left out by rule (cleaned), said
    /// once and again only when they change.
    pub checkpoint_excluded: Vec<String>,
    /// Cell of each tool call id.
    tools: HashMap<String, usize>,
    /// The assistant text or thinking cell that deltas extend.
    open_text: Option<usize>,
    open_thinking: Option<usize>,
    /// The `.cortex/setup` row while it runs.
    setup: Option<usize>,
}

/// What the last `instructions.loaded` said (its file names cleaned; the
/// text is the model's and is not kept).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstructionsSeen {
    /// The files, in the order the model reads them.
    pub files: Vec<String>,
    /// Their bytes together.
    pub bytes: u64,
    /// Whether the cap cut them.
    pub cut: bool,
}

impl InstructionsSeen {
    /// `AGENTS.md, src/AGENTS.md (1.2 KB, cut at the cap)`, or `none`.
    pub fn line(&self) -> String {
        if self.files.is_empty() {
            return "none".to_owned();
        }
        let size = if self.bytes < 1024 {
            format!("{} B", self.bytes)
        } else {
            format!("{:.1} KB", self.bytes as f64 / 1024.0)
        };
        let cut = if self.cut { ", cut at the cap" } else { "" };
        format!("{} ({size}{cut})", self.files.join(", "))
    }
}

/// An `approval.requested` not yet resolved (its texts sanitised).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingApproval {
    /// The call waiting for the answer.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// What the call would do, on one line (newlines escaped).
    pub summary: String,
    /// Why it needs an answer, on one line.
    pub reason: String,
    /// What the call would do, whole: one entry per line of it, each
    /// sanitised (the approval panel shows every one; a multi-line command
    /// keeps its lines rather than `\n` escapes).
    pub lines: Vec<String>,
    /// Why it needs an answer (what no rule covers), its lines sanitised.
    pub reason_lines: Vec<String>,
}

impl PendingApproval {
    /// The pending approval of `approval.requested`, every text sanitised.
    pub fn new(call_id: &str, name: &str, summary: &str, reason: &str) -> PendingApproval {
        PendingApproval {
            call_id: call_id.to_owned(),
            name: clean_line(name),
            summary: clean_line(summary),
            reason: clean_line(reason),
            lines: clean_lines(summary),
            reason_lines: clean_lines(reason),
        }
    }
}

/// `text`'s lines, each sanitised: `clean` keeps newlines (and drops the
/// `\r` of a `\r\n`) and escapes every other control, so splitting its
/// result at `\n` yields lines that carry nothing raw.
fn clean_lines(text: &str) -> Vec<String> {
    clean(text).split('\n').map(str::to_owned).collect()
}

/// The turn running now.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningTurn {
    /// Its id, when its event carried one.
    pub id: Option<TurnId>,
    /// When it started.
    pub started: Option<Millis>,
    /// What it is waiting for.
    pub phase: Phase,
    /// `(processed, total)` prompt tokens of the model request out now,
    /// when the provider reports them.
    pub progress: Option<(u64, u64)>,
    /// Tokens at the start of the turn, to report what it used.
    usage_at_start: (u64, u64),
}

/// What a running turn is waiting for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Phase {
    /// Before the first model request (the guest attaching, setup).
    Starting,
    /// A model request is out; nothing streamed yet.
    Waiting {
        /// When the request went out.
        since: Option<Millis>,
        /// The model round, from 1.
        round: u32,
    },
    /// Text or calls are streaming.
    Responding,
    /// Tools are running.
    Tools,
    /// The history is being compacted.
    Compacting {
        /// When compaction started.
        since: Option<Millis>,
    },
}

/// The guest, as the status line shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum GuestPhase {
    /// No guest yet.
    #[default]
    Detached,
    /// The guest is starting.
    Attaching {
        /// When it started.
        since: Option<Millis>,
    },
    /// The environment's setup runs.
    Preparing {
        /// When setup started.
        since: Option<Millis>,
    },
    /// Attached and set up.
    Ready,
    /// Attaching or setup failed.
    Failed,
}

/// Token figures from the `usage` events.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// Prompt tokens, summed.
    pub input: u64,
    /// Output tokens, summed.
    pub output: u64,
    /// Prompt tokens read from the provider's cache, summed.
    pub cache_read: u64,
    /// The latest request's prompt plus its output: how full the context is.
    pub context: u64,
    /// Requests counted; a cost only when every one of them was priced.
    pub requests: u32,
    /// Estimated cost in US dollars, when every request was priced.
    pub cost_usd: Option<f64>,
}

impl SessionState {
    /// Apply one event; returns whether anything changed.
    pub fn apply(&mut self, event: &Event) -> bool {
        if event.seq <= self.last_seq {
            return false;
        }
        self.last_seq = event.seq;
        if self.id.is_none() {
            self.id = Some(event.session_id.clone());
        }
        let at = parse_rfc3339(&event.ts);
        self.turns.apply(&event.kind, event.turn_id.as_ref());
        self.apply_kind(&event.kind, event.turn_id.as_ref(), at);
        true
    }

    fn apply_kind(&mut self, kind: &EventKind, turn_id: Option<&TurnId>, at: Option<Millis>) {
        match kind {
            EventKind::SessionCreated {
                repository,
                mode,
                model,
                stop_rule,
                sandbox,
                ..
            } => self.session_created(repository, *mode, model, *stop_rule, *sandbox),
            EventKind::TurnStarted { message, mode } => {
                self.turn_started(message, *mode, turn_id, at)
            }
            EventKind::TurnCompleted { .. }
            | EventKind::TurnStopped { .. }
            | EventKind::TurnFailed { .. } => {
                if let Some(outcome) = kind.turn_outcome() {
                    let unverified = match kind {
                        EventKind::TurnCompleted { unverified, .. } => {
                            cortex_protocol::unverified_line(unverified).map(|l| clean_line(&l))
                        }
                        _ => None,
                    };
                    self.end_turn(outcome, unverified, at)
                }
            }
            EventKind::MessageDelta { text } => self.message_delta(text),
            EventKind::MessageDone { text, .. } => self.message_done(text),
            EventKind::ThinkingDelta { text } => self.thinking_delta(text),
            EventKind::ToolCall {
                call_id,
                name,
                arguments,
            } => self.tool_call(call_id.as_str(), name, arguments, at),
            EventKind::ToolRefused {
                call_id, reason, ..
            } => {
                if let Some(tool) = self.tool_mut(call_id.as_str()) {
                    tool.reason = Some(clean(reason));
                }
            }
            EventKind::SubagentStep {
                call_id,
                name,
                summary,
            } => {
                if let Some(tool) = self.tool_mut(call_id.as_str()) {
                    if tool.steps.len() >= cell::MAX_STEPS {
                        tool.steps.remove(0);
                    }
                    tool.steps.push(clean_line(&format!("{name} {summary}")));
                }
            }
            EventKind::ToolOutputDelta { call_id, text, .. } => {
                if let Some(tool) = self.tool_mut(call_id.as_str()) {
                    append_tail(&mut tool.output, &clean(text));
                }
            }
            EventKind::ToolResult {
                call_id,
                name,
                status,
                output,
                ms,
                diff,
                ..
            } => self.tool_result(call_id.as_str(), name, *status, output, *ms, diff),
            other => {
                if !self.apply_goal(other) {
                    self.apply_session_event(other, at)
                }
            }
        }
    }

    /// The session's header: its repository, model and settings.
    fn session_created(
        &mut self,
        repository: &str,
        mode: Mode,
        model: &str,
        stop_rule: StopRule,
        sandbox: Sandbox,
    ) {
        self.repository = clean_line(repository);
        self.model = clean_line(model);
        self.mode = mode;
        self.stop_rule = stop_rule;
        self.sandbox = sandbox;
        self.push(CellKind::Header {
            repository: self.repository.clone(),
            model: self.model.clone(),
        });
    }

    /// The user's message, and the turn it starts.
    fn turn_started(
        &mut self,
        message: &str,
        mode: Mode,
        turn_id: Option<&TurnId>,
        at: Option<Millis>,
    ) {
        self.close_open();
        self.mode = mode;
        self.messages.push(message.to_owned());
        self.push(CellKind::User {
            text: clean(message),
        });
        self.turn = Some(RunningTurn {
            id: turn_id.cloned(),
            started: at,
            phase: Phase::Starting,
            progress: None,
            usage_at_start: (self.usage.input, self.usage.output),
        });
    }

    /// A notice of this screen's own, not of the timeline (`/doctor`'s
    /// report): appended after what is shown, cleaned like every cell. It
    /// closes no streaming text, so a reply streaming meanwhile goes on in
    /// its cell; another UI attached to the session does not see it.
    pub fn local_notice(&mut self, level: Level, text: &str) {
        self.push(CellKind::Notice {
            level,
            text: clean(text),
        });
    }

    fn push(&mut self, kind: CellKind) -> usize {
        self.cells.push(Cell::new(kind));
        self.cells.len() - 1
    }

    fn touch(&mut self, index: usize) -> Option<&mut CellKind> {
        let cell = self.cells.get_mut(index)?;
        cell.rev = cell.rev.wrapping_add(1);
        Some(&mut cell.kind)
    }

    fn notice(&mut self, level: Level, text: String) {
        self.close_open();
        self.push(CellKind::Notice { level, text });
    }

    fn set_phase(&mut self, phase: Phase) {
        if let Some(turn) = &mut self.turn {
            turn.phase = phase;
            turn.progress = None;
        }
    }

    /// Streaming text and thinking end where anything else begins.
    fn close_open(&mut self) {
        for index in [self.open_text.take(), self.open_thinking.take()]
            .into_iter()
            .flatten()
        {
            if let Some(CellKind::Assistant { done, .. } | CellKind::Thinking { done, .. }) =
                self.touch(index)
            {
                *done = true;
            }
        }
    }

    fn message_delta(&mut self, delta: &str) {
        if let Some(index) = self.open_thinking.take()
            && let Some(CellKind::Thinking { done, .. }) = self.touch(index)
        {
            *done = true;
        }
        self.set_phase(Phase::Responding);
        let delta = clean(delta);
        match self.open_text {
            Some(index) => {
                if let Some(CellKind::Assistant { text, .. }) = self.touch(index) {
                    text.push_str(&delta);
                }
            }
            None => {
                self.open_text = Some(self.push(CellKind::Assistant {
                    text: delta,
                    done: false,
                }));
            }
        }
    }

    /// The complete text replaces what streamed (they are equal unless a
    /// delta was lost).
    fn message_done(&mut self, full: &str) {
        let full = clean(full);
        match self.open_text.take() {
            Some(index) => {
                if let Some(CellKind::Assistant { text, done }) = self.touch(index) {
                    *text = full;
                    *done = true;
                }
            }
            None if !full.trim().is_empty() => {
                self.push(CellKind::Assistant {
                    text: full,
                    done: true,
                });
            }
            None => {}
        }
    }

    fn thinking_delta(&mut self, delta: &str) {
        let delta = clean(delta);
        match self.open_thinking {
            Some(index) => {
                if let Some(CellKind::Thinking { text, .. }) = self.touch(index) {
                    append_tail(text, &delta);
                }
            }
            None => {
                self.open_thinking = Some(self.push(CellKind::Thinking {
                    text: delta,
                    done: false,
                }));
            }
        }
    }

    fn tool_call(&mut self, call_id: &str, name: &str, arguments: &str, at: Option<Millis>) {
        self.close_open();
        self.set_phase(Phase::Tools);
        let index = self.push(CellKind::Tool(ToolCell {
            call_id: call_id.to_owned(),
            name: clean_line(name),
            summary: summarize(name, arguments),
            state: ToolState::Running,
            started: at,
            ms: None,
            output: String::new(),
            diff: None,
            reason: None,
            steps: Vec::new(),
        }));
        self.tools.insert(call_id.to_owned(), index);
    }

    fn tool_mut(&mut self, call_id: &str) -> Option<&mut ToolCell> {
        let index = *self.tools.get(call_id)?;
        match self.touch(index)? {
            CellKind::Tool(tool) => Some(tool),
            _ => None,
        }
    }

    fn tool_result(
        &mut self,
        call_id: &str,
        name: &str,
        status: ToolStatus,
        output: &str,
        ms: f64,
        diff: &Option<String>,
    ) {
        if !self.tools.contains_key(call_id) {
            // A result without its call (a timeline that starts mid-way).
            self.tool_call(call_id, name, "", None);
        }
        if let Some(tool) = self.tool_mut(call_id) {
            tool.state = ToolState::Done(status);
            tool.ms = Some(ms);
            tool.output = clean(output);
            tool.diff = diff.as_deref().map(clean);
            if status == ToolStatus::Refused && tool.reason.is_none() {
                tool.reason = Some(tool.output.clone());
            }
        }
    }

    fn setup_output(&mut self, delta: &str, at: Option<Millis>) {
        let index = match self.setup {
            Some(index) => index,
            None => {
                let index = self.push(CellKind::Tool(ToolCell {
                    call_id: String::new(),
                    name: "setup".into(),
                    summary: ".cortex/setup".into(),
                    state: ToolState::Running,
                    started: at,
                    ms: None,
                    output: String::new(),
                    diff: None,
                    reason: None,
                    steps: Vec::new(),
                }));
                self.setup = Some(index);
                index
            }
        };
        if let Some(CellKind::Tool(tool)) = self.touch(index) {
            append_tail(&mut tool.output, &clean(delta));
        }
    }

    fn finish_setup(&mut self, status: ToolStatus, ms: Option<f64>) {
        if let Some(index) = self.setup.take()
            && let Some(CellKind::Tool(tool)) = self.touch(index)
        {
            tool.state = ToolState::Done(status);
            tool.ms = ms;
        }
    }

    fn end_turn(&mut self, outcome: TurnOutcome, unverified: Option<String>, at: Option<Millis>) {
        // The reason and the error may carry text the model wrote.
        let outcome = match outcome {
            TurnOutcome::Stopped { reason } => TurnOutcome::Stopped {
                reason: clean_line(&reason),
            },
            TurnOutcome::Failed { error } => TurnOutcome::Failed {
                error: clean(&error),
            },
            completed => completed,
        };
        self.close_open();
        self.approval = None;
        self.finish_setup(ToolStatus::Stopped, None);
        // Calls the turn left unanswered (a crash) are not running any more.
        let running: Vec<usize> = self.tools.values().copied().collect();
        for index in running {
            if let Some(CellKind::Tool(tool)) = self.cells.get(index).map(|c| &c.kind)
                && tool.state == ToolState::Running
                && let Some(CellKind::Tool(tool)) = self.touch(index)
            {
                tool.state = ToolState::Done(ToolStatus::Stopped);
            }
        }
        self.tools.clear();
        let turn = self.turn.take();
        let (in0, out0) = turn
            .as_ref()
            .map_or((self.usage.input, self.usage.output), |t| t.usage_at_start);
        let ms = match (turn.and_then(|t| t.started), at) {
            (Some(start), Some(end)) => Some((end - start) as f64),
            _ => None,
        };
        self.push(CellKind::TurnEnd(TurnEnd {
            outcome,
            tokens_in: self.usage.input - in0,
            tokens_out: self.usage.output - out0,
            ms,
            unverified,
        }));
    }

    /// Whether a turn runs (as far as the timeline says).
    pub fn running(&self) -> bool {
        self.turn.is_some()
    }
}

/// `Agent`, `Ask`, … as the border shows a mode.
pub fn title(mode: Mode) -> &'static str {
    mode.title()
}

/// Append `piece`, keeping at most the last [`STREAM_TAIL_BYTES`] (cut at
/// a line start when one is near, else at a character boundary).
fn append_tail(buffer: &mut String, piece: &str) {
    buffer.push_str(piece);
    if buffer.len() <= STREAM_TAIL_BYTES {
        return;
    }
    let mut cut = buffer.len() - STREAM_TAIL_BYTES;
    while !buffer.is_char_boundary(cut) {
        cut += 1;
    }
    if let Some(newline) = buffer[cut..].find('\n').filter(|n| *n < 256) {
        cut += newline + 1;
    }
    buffer.drain(..cut);
}

#[cfg(test)]
mod tests;
