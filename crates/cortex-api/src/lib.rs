//! The session API's contract, shared by `cortex-server` (which answers it)
//! and `cortex-client` (which calls it): plain serde types, no I/O.
//!
//! - one module per resource, as the server's routes: [`sessions`] (the
//!   session resource, creating and listing), [`turns`] (a turn, Stop),
//!   [`control`] (mode and compaction between turns), [`events`] (the
//!   timeline over Server-Sent Events), [`plan`] (the verdict on a proposed
//!   plan), [`goals`] (the session's long-horizon goal), [`approvals`] (the
//!   approval policy, answers, rules), [`commands`] (custom commands),
//!   [`processes`] (background commands), [`shares`] (read-only share links),
//!   [`meta`] (health);
//! - [`error`]: the body of every error answer;
//! - every body derives `utoipa::ToSchema` and the protocol types it holds
//!   (`Mode`, `StopRule`, the sandbox settings, `CompactionKept`) derive it
//!   too (the protocol's `utoipa` feature), so the server's OpenAPI document
//!   is generated from the very types that are sent and read.
//!
//! Requests refuse unknown fields, so a typo is a 422 rather than a silently
//! ignored setting. A new resource (approvals, plans, goals) adds a module
//! here and a route file in the server.

#![warn(missing_docs)]

pub mod approvals;
pub mod commands;
pub mod control;
pub mod error;
pub mod events;
pub mod goals;
pub mod hooks;
pub mod meta;
pub mod plan;
pub mod processes;
pub mod rewind;
pub mod sessions;
pub mod shares;
pub mod turns;

pub use approvals::{AnswerApproval, ApprovalAnswered, ApprovalState, RuleList, SetApproval};
pub use commands::{CommandList, RunCommand};
pub use control::{CompactAnswer, SetMode};
pub use error::{ErrorBody, ErrorDetail};
pub use events::EventsQuery;
pub use goals::{GoalAnswer, GoalSummary, GoalView, SetGoal};
pub use hooks::{HookEntry, HookFile, HookList, RejectedHookFile, TrustHooks};
pub use meta::Health;
pub use plan::RejectPlan;
pub use processes::ProcessList;
pub use rewind::{Rewind, RewindAnswer};
pub use sessions::{
    AddMcpServers, CreateSession, ListQuery, McpServerRequest, McpServersAdded, SandboxRequest,
    SessionPage, SessionView,
};
pub use shares::{CreateShare, ShareCreated, ShareList, ShareView};
pub use turns::{CreateTurn, StopAnswer, TurnAttachment, TurnCreated};
