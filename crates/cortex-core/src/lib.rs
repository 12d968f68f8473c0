//! Sessions and the Code turn loop.
//!
//! A [`Session`] owns a repository, a mode, a model, a guest and a timeline.
//! [`Session::run_turn`] is the tool loop of the design (§4): attach the guest
//! if needed, then request → stream → dispatch each call through the gates →
//! feed results back, until the model answers without a tool call, the user
//! stops the turn, or the session's stop rule ends it.
//!
//! Invariants:
//! - Every event goes through [`Timeline::emit`], which persists it before any
//!   subscriber sees it.
//! - A call is answered exactly once, and a call id is never executed twice.
//! - A tool the mode withholds is refused before anything runs.
//!
//! This crate never depends on the server or the CLI.

#![warn(missing_docs)]

mod answer;
mod approvals;
mod attach;
mod background;
mod blocks;
pub mod checkpoint;
mod coach;
pub mod commands;
mod compaction;
mod context;
mod context_files;
mod continuation;
pub mod copy;
mod cut_reply;
mod dispatch;
mod error;
pub mod extensions;
pub mod git;
mod git_watch;
mod goal;
mod guest_call;
mod harness_dirs;
mod history;
pub mod hooks;
pub mod images;
mod includes;
mod instructions;
mod judge;
mod lsp;
pub mod mcp_guest;
mod mcp_session;
mod plans;
mod progress;
mod prompt;
mod read_first;
mod reported_failure;
mod rewind;
mod session;
mod session_tools;
pub mod setup_trust;
pub mod skills;
mod specs;
mod state;
mod steer;
mod stop_rule;
pub mod subagents;
#[cfg(test)]
mod test_support;
mod timeline;
mod turn;
mod unrun_call;
mod unwanted_write;
mod verify;
mod web;
mod workspace;

pub use approvals::{ApprovalError, Approvals, LOCAL_PRINCIPAL, resolve_interrupted_approvals};
pub use attach::{SETUP_SCRIPT, SETUP_TIMEOUT};
pub use background::{Background, BackgroundError};
pub use compaction::{CompactError, CompactionConfig, CompactionReport};
pub use continuation::STALL_TURNS;
pub use cortex_mcp::ServerSpec as McpServerSpec;
pub use cortex_mcp::config::sanitize_server_name as mcp_server_name;
pub use cortex_protocol::TurnOutcome;
pub use cortex_tools::web::SearchApi;
pub use error::CoreError;
pub use goal::{GoalError, pause_interrupted_goal, stored_goal};
pub use harness_dirs::{HarnessDirs, HarnessFolderError};
pub use hooks::{HookEvent, HookOrigin, HookSpec};
pub use images::{ImageError, UserTurn};
pub use lsp::{LspConfigError, LspSpec};
pub use mcp_guest::GuestLauncher;
pub use plans::{PlanError, PlanStatus, PlanVersion};
pub use prompt::system_prompt;
pub use rewind::{RewindError, Rewound};
pub use session::{Session, SessionConfig};
pub use specs::{SpecError, SpecProposal, SpecState};
pub use state::{Rebuilt, SessionState};
#[doc(hidden)]
pub use steer::wording;
pub use stop_rule::{Ran, StopRuleState};
pub use timeline::{Published, Timeline};
pub use web::WebAccess;
pub use workspace::{
    CopyFailure, WorkspaceError, clone_into, clone_url, is_git_url, materialise_copy,
};

/// A new unique id, time-ordered so listings sort naturally.
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}
