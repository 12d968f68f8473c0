//! Modes and the tool catalog each one offers.
//!
//! The mode decides which tools the model is offered at all. This table is the
//! single source for that decision: the request builder, the dispatcher's mode
//! gate and the guest capabilities are all derived from it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What the session is allowed to do. Only the user changes it.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Read-only: read_file, glob, grep, web_fetch, web_search.
    Ask,
    /// Ask plus the plan tool; the plan lives in the session, not the repo.
    Plan,
    /// Ask plus the spec tool; the spec lives in the session until its
    /// tasks are accepted.
    Spec,
    /// The full catalog.
    #[default]
    Agent,
}

impl Mode {
    /// Every mode, in the order clients list them.
    pub const ALL: [Mode; 4] = [Mode::Ask, Mode::Plan, Mode::Spec, Mode::Agent];

    /// How clients show it (`Agent — Goal · 2/8`).
    pub fn title(self) -> &'static str {
        match self {
            Mode::Ask => "Ask",
            Mode::Plan => "Plan",
            Mode::Spec => "Spec",
            Mode::Agent => "Agent",
        }
    }

    /// The tools this mode offers, in the order they are presented to the model.
    pub fn tools(self) -> &'static [ToolName] {
        use ToolName::*;
        match self {
            Mode::Ask => &[ReadFile, Glob, Grep, Skill, WebFetch, WebSearch, Task],
            Mode::Plan => &[ReadFile, Glob, Grep, Plan, Skill, WebFetch, WebSearch, Task],
            Mode::Spec => &[ReadFile, Glob, Grep, Spec, Skill, WebFetch, WebSearch, Task],
            Mode::Agent => &[
                ReadFile, WriteFile, EditFile, Glob, Grep, Bash, BashOutput, BashKill, TodoRead,
                TodoWrite, Skill, WebFetch, WebSearch, Task,
            ],
        }
    }

    /// Whether this mode's table lists `tool`; the dispatcher refuses any
    /// other call.
    pub fn offers(self, tool: ToolName) -> bool {
        self.tools().contains(&tool)
    }

    /// Whether this mode offers the tools of an MCP server. A server can do
    /// anything its program does, so only Agent mode offers them, unless the
    /// user's own config lists the server as `read_only` (then every mode
    /// does: Ask, Plan and Spec are Ask plus one session tool). The request
    /// builder and the dispatcher's mode gate both ask this, and only this.
    pub fn offers_mcp(self, server_read_only: bool) -> bool {
        match self {
            Mode::Agent => true,
            Mode::Ask | Mode::Plan | Mode::Spec => server_read_only,
        }
    }

    /// Whether any tool of this mode may change the workspace. The guest is
    /// told this, so a read-only mode is enforced a second time below the
    /// harness.
    pub fn may_mutate_workspace(self) -> bool {
        self.tools().iter().any(|t| t.mutates_workspace())
    }

    /// The wire and command-line name: `ask`, `plan`, `spec` or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::Plan => "plan",
            Mode::Spec => "spec",
            Mode::Agent => "agent",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a mode's; holds the name as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode `{0}` (expected ask, plan, spec or agent)")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownMode(s.to_owned()))
    }
}

/// Every tool Cortex knows. A name the model invents is not a `ToolName`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    /// `read_file`: a text file as numbered lines.
    ReadFile,
    /// `write_file`: create or overwrite a file.
    WriteFile,
    /// `edit_file`: replace an exact string in a file.
    EditFile,
    /// `glob`: find files by name pattern.
    Glob,
    /// `grep`: search file contents.
    Grep,
    /// `bash`: run a shell command in the workspace.
    Bash,
    /// `todo_read`: the session's todo list.
    TodoRead,
    /// `todo_write`: replace the session's todo list.
    TodoWrite,
    /// Plan mode's own: proposes a plan.
    Plan,
    /// Spec mode's own: proposes one phase of the spec.
    Spec,
    /// Offered in Agent mode only while the session has an active goal
    /// (the session adds it; no mode's table lists it).
    Goal,
    /// `skill`: a skill's instructions and files, by name (read-only; every
    /// mode offers it).
    Skill,
    /// `bash_output`: what a background command printed since the last
    /// read (offered where `bash` is, while the session has one).
    BashOutput,
    /// `bash_kill`: end a background command with its process group.
    BashKill,
    /// `task`: hand a task to a subagent, a child session with its own
    /// history, never more tools than the session's mode offers (every mode
    /// offers it; the child of a read-only mode is read-only).
    Task,
    /// `web_fetch`: a web page as text, under the session's network
    /// policy (read-only: every mode offers it where the policy lets it
    /// reach something).
    WebFetch,
    /// `web_search`: results of the search API the user configured, run
    /// by the harness (it holds the API's key); offered only then.
    WebSearch,
}

impl ToolName {
    /// Every tool, in declaration order (the spec cache is indexed by it).
    pub const ALL: [ToolName; 17] = [
        ToolName::ReadFile,
        ToolName::WriteFile,
        ToolName::EditFile,
        ToolName::Glob,
        ToolName::Grep,
        ToolName::Bash,
        ToolName::TodoRead,
        ToolName::TodoWrite,
        ToolName::Plan,
        ToolName::Spec,
        ToolName::Goal,
        ToolName::Skill,
        ToolName::BashOutput,
        ToolName::BashKill,
        ToolName::Task,
        ToolName::WebFetch,
        ToolName::WebSearch,
    ];

    /// The wire name the model calls it by, e.g. `read_file`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::ReadFile => "read_file",
            ToolName::WriteFile => "write_file",
            ToolName::EditFile => "edit_file",
            ToolName::Glob => "glob",
            ToolName::Grep => "grep",
            ToolName::Bash => "bash",
            ToolName::TodoRead => "todo_read",
            ToolName::TodoWrite => "todo_write",
            ToolName::Plan => "plan",
            ToolName::Spec => "spec",
            ToolName::Goal => "goal",
            ToolName::Skill => "skill",
            ToolName::BashOutput => "bash_output",
            ToolName::BashKill => "bash_kill",
            ToolName::Task => "task",
            ToolName::WebFetch => "web_fetch",
            ToolName::WebSearch => "web_search",
        }
    }

    /// Tools that can change the workspace (and so need a writable guest).
    pub fn mutates_workspace(self) -> bool {
        matches!(
            self,
            ToolName::WriteFile | ToolName::EditFile | ToolName::Bash
        )
    }

    /// Tools with no side effect at all; calls to these within one round may
    /// run concurrently. Everything else runs in the order the model asked.
    pub fn is_read_only(self) -> bool {
        matches!(
            self,
            ToolName::ReadFile
                | ToolName::Glob
                | ToolName::Grep
                | ToolName::TodoRead
                | ToolName::WebFetch
                | ToolName::WebSearch
        )
    }

    /// Tools executed by the guest; the others act on session state held by
    /// the harness (the todo list, the plan, the spec).
    pub fn runs_in_guest(self) -> bool {
        matches!(
            self,
            ToolName::ReadFile
                | ToolName::WriteFile
                | ToolName::EditFile
                | ToolName::Glob
                | ToolName::Grep
                | ToolName::Bash
                | ToolName::WebFetch
        )
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a tool Cortex knows; holds the name as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{0}`")]
pub struct UnknownTool(pub String);

impl FromStr for ToolName {
    type Err = UnknownTool;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolName::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownTool(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_modes_offer_no_mutating_tool() {
        for mode in [Mode::Ask, Mode::Plan, Mode::Spec] {
            assert!(!mode.may_mutate_workspace(), "{mode}");
            assert!(!mode.offers(ToolName::Bash));
            // A background command is a command: never outside Agent mode.
            assert!(!mode.offers(ToolName::BashOutput) && !mode.offers(ToolName::BashKill));
        }
        assert!(Mode::Agent.offers(ToolName::BashOutput) && Mode::Agent.offers(ToolName::BashKill));
        assert!(Mode::Agent.may_mutate_workspace());
        assert!(!Mode::Agent.offers(ToolName::Plan));
        assert!(Mode::Spec.offers(ToolName::Spec) && !Mode::Plan.offers(ToolName::Spec));
        // Loading a skill only reads: every mode offers it.
        assert!(Mode::ALL.iter().all(|m| m.offers(ToolName::Skill)));
        assert!(!ToolName::Skill.mutates_workspace() && !ToolName::Skill.runs_in_guest());
        // A fetch changes nothing of the workspace: every mode may offer it
        // (the network policy decides whether it reaches anything).
        assert!(Mode::ALL.iter().all(|m| m.offers(ToolName::WebFetch)));
        assert!(!ToolName::WebFetch.mutates_workspace() && ToolName::WebFetch.is_read_only());
        assert!(Mode::ALL.iter().all(|m| m.offers(ToolName::WebSearch)));
        assert!(!ToolName::WebSearch.runs_in_guest() && ToolName::WebSearch.is_read_only());
    }

    #[test]
    fn mcp_tools_are_agent_only_unless_the_server_is_read_only() {
        for mode in [Mode::Ask, Mode::Plan, Mode::Spec] {
            assert!(!mode.offers_mcp(false), "{mode}");
            assert!(mode.offers_mcp(true), "{mode}");
        }
        assert!(Mode::Agent.offers_mcp(false) && Mode::Agent.offers_mcp(true));
    }

    #[test]
    fn names_round_trip() {
        for t in ToolName::ALL {
            assert_eq!(t.as_str().parse::<ToolName>(), Ok(t));
            let json = serde_json::to_string(&t).expect("serialize");
            assert_eq!(json, format!("\"{}\"", t.as_str()));
        }
        assert!("list_files".parse::<ToolName>().is_err());
        assert_eq!("PLAN".parse::<Mode>(), Ok(Mode::Plan));
    }
}
