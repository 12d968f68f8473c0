//! Plain serde types shared by every Cortex crate and client.
//!
//! Everything that crosses a boundary lives here: the timeline events every
//! client renders, the conversation history the model sees, the tool catalog
//! and its argument types, and the guest wire protocol. The crate does no I/O
//! and depends on no other crate of ours, so a web client, an IDE plugin or a
//! test can speak to Cortex by depending on this crate alone.
//!
//! Tool argument schemas are generated from the Rust types (schemars), so the
//! schema the model is offered and the parser that reads its arguments cannot
//! drift apart.

#![warn(missing_docs)]

mod approval;
mod background;
pub mod calendar;
mod call_summary;
mod compaction;
mod event;
mod extensions;
mod goal;
mod guest;
mod ids;
mod message;
mod mode;
mod rewind;
mod sandbox;
mod spec;
mod steer;
mod subagent;
mod tools;

pub use approval::{ApprovalDecision, ApprovalPolicy, ApprovalResolution, Rule, RuleMatch};
pub use background::ProcessInfo;
pub use call_summary::CallSummary;
pub use compaction::{CompactionKept, CompactionReport, CompactionTrigger};
pub use event::{
    Event, EventKind, OutputStream, PruneScope, STOPPED_BY_USER, StopRule, ToolStatus, TurnFinish,
    TurnOutcome, now_rfc3339, parse_rfc3339_ms, retry_status,
};
pub use extensions::{CommandInfo, ExtensionScope, RejectedFile, SkillInfo};
pub use goal::{
    DEFAULT_GOAL_MINUTES, DEFAULT_GOAL_TOKENS, DEFAULT_GOAL_TURNS, Goal, GoalArgs, GoalBudget,
    GoalSpent, GoalStatus, GoalStep, PauseReason, chip as goal_chip,
};
pub use guest::{GuestOp, GuestReply, GuestRequest, GuestResponse, OutcomeStatus, ToolOutcome};
pub use ids::{CallId, SessionId, TurnId};
pub use message::{Attachment, ImageRef, Message, ProviderItem, Role, ToolCallRequest};
pub use mode::{Mode, ToolName, UnknownMode, UnknownTool};
pub use rewind::{RewindDiff, RewindScope};
pub use sandbox::{NetworkPolicy, Sandbox, SandboxPolicy, UnknownSetting, WorkspaceMode};
pub use spec::{SpecArgs, SpecPhase};
pub use steer::{CallSteer, Doubt, NextReply, ReminderKind, unverified_line};
pub use subagent::{ParentLink, SubagentUse};
pub use tools::{
    ArgError, BackgroundIdArgs, BashArgs, EditFileArgs, EditFormat, EditLinesArgs, GlobArgs,
    GrepArgs, GrepMode, MAX_ARGUMENT_BYTES, PlanArgs, ReadFileArgs, SkillArgs, TaskArgs, Todo,
    TodoReadArgs, TodoStatus, TodoWriteArgs, ToolArgs, ToolSpec, UnknownEditFormat, WebFetchArgs,
    WebSearchArgs, WriteFileArgs,
};
