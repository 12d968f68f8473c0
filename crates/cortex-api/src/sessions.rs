//! `/v1/sessions`: the session resource, creating one, listing the caller's.

use crate::goals::GoalSummary;
use cortex_protocol::{
    Mode, NetworkPolicy, Sandbox, SandboxPolicy, SessionId, StopRule, TurnId, WorkspaceMode,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `POST /v1/sessions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    /// A folder on the server's machine (or a git URL, on a server with a
    /// folder for clones).
    pub repository: String,
    /// `agent` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// `PROVIDER:NAME`; the server's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The sandbox the session's guest runs in; every setting at its safe default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxRequest>,
    /// `code` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_rule: Option<StopRule>,
    /// The approval policy; `auto` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<cortex_protocol::ApprovalPolicy>,
    /// MCP servers the client hands over (an editor's `mcpServers`), besides
    /// the server's configured ones; they start with the first turn and
    /// last as long as the session stays live.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServerRequest>,
}

/// An MCP server a client hands over. With `command`, a stdio server: it
/// runs in a guest of its own under the session's sandbox policy (never on
/// the host). With `url` (and optional `headers`), a streamable HTTP server,
/// reached from the server process itself, outside the sandbox: a server
/// takes those only where it allows full-access sessions (the in-process
/// one of `exec`, `acp` and the TUI does; `cortex serve` with
/// `--allow-full-access`), 403 `mcp_url_refused` otherwise. Either kind is
/// never read-only (its tools are offered in Agent mode only) and its tools
/// are `mcp__NAME__TOOL`. A name with characters other than letters,
/// digits, `-` and `_` has them replaced by `_`; a name the session already
/// has keeps its first server (configured ones first).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerRequest {
    /// The server's name, in its tools' names (`mcp__NAME__TOOL`).
    pub name: String,
    /// The program, found on the guest's `PATH` or absolute (stdio).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// The program's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables the server's process gets besides the guest's allow-list.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    /// The endpoint of a streamable HTTP server (`http://` or `https://`),
    /// instead of `command`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent to an HTTP server (an editor's own `Authorization`).
    /// Kept in memory only, never on the timeline.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub headers: std::collections::BTreeMap<String, String>,
}

/// `POST /v1/sessions/{id}/mcp_servers`: MCP servers for a live session
/// (an editor's at `session/load`). They start with the session's next
/// turn; the servers it already runs are not restarted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMcpServers {
    /// The servers to add; a name the session already has is skipped.
    pub mcp_servers: Vec<McpServerRequest>,
}

/// The answer to `POST /v1/sessions/{id}/mcp_servers`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct McpServersAdded {
    /// The names added (as made valid); a name the session already had is
    /// not among them.
    pub added: Vec<String>,
}

/// The session's sandbox; each field defaults to the safe setting.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxRequest {
    /// What the guest may change: `read-only`, `workspace-write` (the default) or `full-access` (only on a server that allows it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<SandboxPolicy>,
    /// Whether commands in the guest reach the network; off by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkPolicy>,
    /// The server's default when absent: an isolated copy on a server with a
    /// folder for copies, else the checkout in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// A session as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SessionView {
    /// The session's id, in every `/v1/sessions/{id}` path.
    #[schema(value_type = String)]
    pub id: SessionId,
    /// The repository the session works on (a folder on the server's machine).
    pub repository: String,
    /// The mode the next turn runs in.
    pub mode: Mode,
    /// `provider:name`.
    pub model: String,
    /// When a turn stops on its own: `code` (never), `chat` or `bot`.
    pub stop_rule: StopRule,
    /// When the session was created (RFC 3339).
    pub created_at: String,
    /// The first user message.
    pub title: Option<String>,
    /// Seq of the newest event; `GET …/events?after=` this sees only new ones.
    pub last_seq: u64,
    /// The turn running now, if any (in this server process).
    #[schema(value_type = Option<String>)]
    pub running_turn: Option<TurnId>,
    /// The session's goal (`Goal · done/total` beside the mode); absent
    /// without one. In `GET /v1/sessions` lists, only for sessions open in
    /// this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<GoalSummary>,
    /// Bytes the session's workspace checkpoints use on the server (only
    /// in `GET /v1/sessions/{id}`, and only where checkpoints are on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_bytes: Option<u64>,
    /// A subagent's session: the session and `task` call it answers (its
    /// `subagent.started` event names this session). Such sessions are not
    /// in `GET /v1/sessions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<cortex_protocol::ParentLink>,
}

/// `GET /v1/sessions`: one page of the caller's sessions, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SessionPage {
    /// The sessions of this page, newest first.
    pub sessions: Vec<SessionView>,
    /// Pass as `cursor` for the next page; absent on the last page.
    pub next_cursor: Option<String>,
}

/// The query of `GET /v1/sessions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_settings_are_left_out_and_refused_when_unknown() {
        let body = CreateSession {
            repository: "/r".into(),
            mode: Some(Mode::Ask),
            ..CreateSession::default()
        };
        let json = serde_json::to_value(&body).expect("encode");
        assert_eq!(json, serde_json::json!({"repository": "/r", "mode": "ask"}));
        assert_eq!(
            serde_json::from_value::<CreateSession>(json).expect("decode"),
            body
        );
        let typo = serde_json::json!({"repository": "/r", "mdoe": "ask"});
        assert!(serde_json::from_value::<CreateSession>(typo).is_err());
    }

    #[test]
    fn a_sandbox_request_resolves_missing_settings_to_the_defaults() {
        let sandbox = SandboxRequest {
            network: Some(NetworkPolicy::On),
            ..SandboxRequest::default()
        }
        .resolve(WorkspaceMode::Copy);
        assert_eq!(sandbox.policy, SandboxPolicy::default());
        assert_eq!(sandbox.network, NetworkPolicy::On);
        assert_eq!(sandbox.workspace, WorkspaceMode::Copy);
    }
}
