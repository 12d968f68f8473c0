//! Request and response bodies. Requests refuse unknown fields, so a typo is
//! a 422 rather than a silently ignored setting.
//!
//! Protocol enums (`Mode`, `StopRule`, the sandbox settings) are used as
//! they are; their OpenAPI schemas come from the `*Doc` mirrors below, which
//! a test checks against the protocol's own names.

use cortex_protocol::{
    CompactionKept, Mode, NetworkPolicy, Sandbox, SandboxPolicy, SessionId, StopRule, TurnId,
    WorkspaceMode,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `POST /v1/sessions`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    /// A folder on the server's machine.
    pub repository: String,
    #[serde(default)]
    #[schema(value_type = Option<ModeDoc>)]
    pub mode: Option<Mode>,
    /// `PROVIDER:NAME`; the server's default when absent.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub sandbox: Option<SandboxRequest>,
    #[serde(default)]
    #[schema(value_type = Option<StopRuleDoc>)]
    pub stop_rule: Option<StopRule>,
}

/// A session as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SessionView {
    #[schema(value_type = String)]
    pub id: SessionId,
    pub repository: String,
    #[schema(value_type = ModeDoc)]
    pub mode: Mode,
    /// `provider:name`.
    pub model: String,
    #[schema(value_type = StopRuleDoc)]
    pub stop_rule: StopRule,
    pub created_at: String,
    /// The first user message.
    pub title: Option<String>,
    /// Seq of the newest event; `GET …/events?after=` this sees only new ones.
    pub last_seq: u64,
    /// The turn running now, if any (in this server process).
    #[schema(value_type = Option<String>)]
    pub running_turn: Option<TurnId>,
}

/// `GET /v1/sessions`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SessionPage {
    pub sessions: Vec<SessionView>,
    /// Pass as `cursor` for the next page; absent on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// `POST /v1/sessions/{id}/turns`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTurn {
    pub message: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TurnCreated {
    #[schema(value_type = String)]
    pub turn_id: TurnId,
}

/// `PUT /v1/sessions/{id}/mode`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMode {
    #[schema(value_type = ModeDoc)]
    pub mode: Mode,
}

/// `POST /v1/sessions/{id}/stop`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StopAnswer {
    /// The turn that was told to stop; its `turn.stopped` event follows.
    #[schema(value_type = String)]
    pub turn_id: TurnId,
}

/// `POST /v1/sessions/{id}/compact`: what the compaction did. Token figures
/// are estimates (the provider's last count where known, else about 4 bytes a
/// token); the same figures are in the `compaction.done` event.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CompactAnswer {
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub messages_before: usize,
    pub messages_after: usize,
    /// Messages replaced by the summary.
    pub summarised: usize,
    /// What the new history kept besides the summary.
    #[schema(value_type = CompactionKeptDoc)]
    pub kept: CompactionKept,
}

impl From<cortex_core::CompactionReport> for CompactAnswer {
    fn from(r: cortex_core::CompactionReport) -> Self {
        CompactAnswer {
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
            messages_before: r.messages_before,
            messages_after: r.messages_after,
            summarised: r.summarised,
            kept: r.kept,
        }
    }
}

/// Schema of `CompactionKept`.
#[derive(ToSchema, Serialize)]
#[schema(as = CompactionKept)]
#[allow(dead_code)]
pub struct CompactionKeptDoc {
    /// The latest user message was restated.
    pub task: bool,
    /// Todo items restated.
    pub todos: usize,
    /// Version of the plan restated.
    pub plan_version: Option<u32>,
    /// Files whose current contents were included, newest first.
    pub open_files: Vec<String>,
    /// Files whose latest diffs were included, newest first.
    pub diffs: Vec<String>,
    /// Trailing messages kept verbatim.
    pub recent_messages: usize,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Send events with `seq` greater than this (default 0: everything).
    /// A `Last-Event-ID` header, sent by reconnecting clients, wins.
    pub after: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    pub status: String,
}

/// Schema of `Mode`.
#[derive(ToSchema)]
#[schema(as = Mode)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
#[derive(Serialize)]
pub enum ModeDoc {
    Ask,
    Plan,
    Spec,
    Agent,
}

/// Schema of `StopRule`.
#[derive(ToSchema, Serialize)]
#[schema(as = StopRule)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
pub enum StopRuleDoc {
    Code,
    Chat,
    Bot,
}

/// Schema of `SandboxPolicy`.
#[derive(ToSchema, Serialize)]
#[schema(as = SandboxPolicy)]
#[allow(dead_code)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxPolicyDoc {
    ReadOnly,
    WorkspaceWrite,
    FullAccess,
}

/// Schema of `NetworkPolicy`.
#[derive(ToSchema, Serialize)]
#[schema(as = NetworkPolicy)]
#[allow(dead_code)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkPolicyDoc {
    Off,
    On,
}

/// Schema of `WorkspaceMode`.
#[derive(ToSchema, Serialize)]
#[schema(as = WorkspaceMode)]
#[allow(dead_code)]
#[serde(rename_all = "kebab-case")]
pub enum WorkspaceModeDoc {
    InPlace,
    Copy,
}

/// The session's sandbox; each field defaults to the safe setting.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxRequest {
    #[serde(default)]
    #[schema(value_type = Option<SandboxPolicyDoc>)]
    pub policy: Option<SandboxPolicy>,
    #[serde(default)]
    #[schema(value_type = Option<NetworkPolicyDoc>)]
    pub network: Option<NetworkPolicy>,
    #[serde(default)]
    #[schema(value_type = Option<WorkspaceModeDoc>)]
    pub workspace: Option<WorkspaceMode>,
}

impl SandboxRequest {
    /// The settings, each missing one at its safe default; the workspace
    /// mode at the server's default (an isolated copy when the server has a
    /// folder for copies).
    pub fn resolve(self, default_workspace: WorkspaceMode) -> Sandbox {
        let d = Sandbox::default();
        Sandbox {
            policy: self.policy.unwrap_or(d.policy),
            network: self.network.unwrap_or(d.network),
            workspace: self.workspace.unwrap_or(default_workspace),
        }
    }
}
