//! Bodies of `/v1/sessions/{id}/hooks`: the repository's hook files with
//! whether each is trusted, and trusting one at its content.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The answer to `GET /v1/sessions/{id}/hooks` (and to a trust).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HookList {
    /// The repository's hook files that hold hooks.
    pub files: Vec<HookFile>,
    /// Hook files found and not read, with why.
    pub rejected: Vec<RejectedHookFile>,
}

/// One hook file of the repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HookFile {
    /// Relative to the repository (`.cortex/hooks.json`).
    pub file: String,
    /// The sha256 of its content: what trusting it names.
    pub sha256: String,
    /// Whether the user trusted it at this content: its hooks then run in
    /// the session's guest from the next turn on.
    pub trusted: bool,
    /// Its hooks.
    pub hooks: Vec<HookEntry>,
    /// Its entries Cortex does not run, with why.
    pub skipped: Vec<String>,
}

/// One hook of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HookEntry {
    /// The event (`PreToolUse`, `Stop`…).
    pub event: String,
    /// The tool-name matcher, for the tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// The command line.
    pub command: String,
    /// Its timeout in milliseconds, when the file names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// A hook file that exists and was not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RejectedHookFile {
    /// Relative to the repository.
    pub file: String,
    /// Why.
    pub reason: String,
}

/// `POST /v1/sessions/{id}/hooks/trust`: trust one file at the content the
/// caller was shown (a file changed since is refused with 409).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TrustHooks {
    /// The file, as `GET …/hooks` names it.
    pub file: String,
    /// Its sha256 as `GET …/hooks` gave it.
    pub sha256: String,
}
