//! Approvals and rules: what the `approval.*` events and the rules API carry.
//!
//! A session's approval policy says what happens to a call that changes
//! something (`bash`, a file write, an MCP tool) and is not covered by a
//! rule: `ask` pauses the turn until the user answers, `auto` runs it (inside
//! the sandbox), `deny` refuses it. A rule is the user's standing "Always":
//! an argv prefix for `bash`, a path glob for file writes, a server and tool
//! for MCP calls.

use crate::sandbox::{UnknownSetting, named_setting};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What happens to a call that would need the user's approval.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Pause the turn and ask (`approval.requested`).
    Ask,
    /// Run it, inside the sandbox; nothing waits.
    #[default]
    Auto,
    /// Refuse it (the model reads the refusal).
    Deny,
}

named_setting!(ApprovalPolicy, "approval policy", [
    ApprovalPolicy::Ask => "ask",
    ApprovalPolicy::Auto => "auto",
    ApprovalPolicy::Deny => "deny",
]);

/// The user's answer to one `approval.requested`.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call once.
    Allow,
    /// Refuse it; the model reads the denial and the turn goes on.
    Deny,
    /// Run it, and persist a rule so the same call runs without asking.
    Always,
}

named_setting!(ApprovalDecision, "approval decision", [
    ApprovalDecision::Allow => "allow",
    ApprovalDecision::Deny => "deny",
    ApprovalDecision::Always => "always",
]);

/// How an approval request ended (`approval.resolved`).
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalResolution {
    /// The user allowed this call once; it ran.
    Allow,
    /// The user denied it; the model reads the denial.
    Deny,
    /// The user allowed it and a rule now covers calls like it; it ran.
    Always,
    /// The turn was stopped while it waited: the call did not run.
    Stopped,
    /// The process that asked exited while it waited: the call did not run
    /// (recorded when the session is recovered).
    Interrupted,
}

impl From<ApprovalDecision> for ApprovalResolution {
    fn from(decision: ApprovalDecision) -> Self {
        match decision {
            ApprovalDecision::Allow => ApprovalResolution::Allow,
            ApprovalDecision::Deny => ApprovalResolution::Deny,
            ApprovalDecision::Always => ApprovalResolution::Always,
        }
    }
}

impl ApprovalResolution {
    /// The wire name, e.g. `always`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalResolution::Allow => "allow",
            ApprovalResolution::Deny => "deny",
            ApprovalResolution::Always => "always",
            ApprovalResolution::Stopped => "stopped",
            ApprovalResolution::Interrupted => "interrupted",
        }
    }
}

/// What a rule covers.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RuleMatch {
    /// A `bash` command whose every part starts with these words (canonical
    /// argv: quotes and escapes removed), e.g. `["git", "status"]`.
    Bash {
        /// The leading words, in order.
        prefix: Vec<String>,
    },
    /// A file write (`write_file`, `edit_file`) to a path matching this glob,
    /// relative to the workspace.
    Write {
        /// The glob, relative to the workspace root.
        glob: String,
    },
    /// One tool of one MCP server.
    Mcp {
        /// The server's name in the user's config.
        server: String,
        /// The tool's name as the server offers it.
        tool: String,
    },
}

impl fmt::Display for RuleMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleMatch::Bash { prefix } => write!(f, "bash: {}", prefix.join(" ")),
            RuleMatch::Write { glob } => write!(f, "write: {glob}"),
            RuleMatch::Mcp { server, tool } => write!(f, "mcp: {server}/{tool}"),
        }
    }
}

/// A persisted rule.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// Assigned when the rule is created; the rules API names it by this.
    pub id: String,
    /// The repository it applies to (canonical path); absent: every
    /// repository of its principal (user-wide).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// What it covers (`match` on the wire).
    #[serde(rename = "match")]
    pub matches: RuleMatch,
    /// When it was created, RFC 3339 as the timeline writes it.
    pub created_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_the_default_is_auto() {
        for policy in [
            ApprovalPolicy::Ask,
            ApprovalPolicy::Auto,
            ApprovalPolicy::Deny,
        ] {
            assert_eq!(policy.as_str().parse::<ApprovalPolicy>(), Ok(policy));
            let json = serde_json::to_string(&policy).expect("json");
            assert_eq!(json, format!("\"{policy}\""));
        }
        assert_eq!(ApprovalPolicy::default(), ApprovalPolicy::Auto);
        assert!("always".parse::<ApprovalPolicy>().is_err());
        assert_eq!(
            "always".parse::<ApprovalDecision>(),
            Ok(ApprovalDecision::Always)
        );
    }

    #[test]
    fn a_rule_is_tagged_by_kind() {
        let rule = RuleMatch::Bash {
            prefix: vec!["git".into(), "status".into()],
        };
        let json = serde_json::to_value(&rule).expect("json");
        assert_eq!(
            json,
            serde_json::json!({"kind": "bash", "prefix": ["git", "status"]})
        );
        assert_eq!(rule.to_string(), "bash: git status");
    }
}
