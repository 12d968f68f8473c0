//! `/v1/sessions/{id}/commands`: the session's custom commands (listed with
//! the files that were rejected) and running one as a turn.

use cortex_protocol::{CommandInfo, RejectedFile};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The answer to `GET /v1/sessions/{id}/commands`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CommandList {
    /// The commands, by name.
    pub commands: Vec<CommandInfo>,
    /// Command files found and not used, with why.
    pub rejected: Vec<RejectedFile>,
}

/// `POST /v1/sessions/{id}/commands`: run a command as the next turn's
/// message. It runs with the session's mode, sandbox, approvals and model;
/// the answer is a `TurnCreated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommand {
    /// The command's name (`review`, `git:commit`; a leading `/` is allowed).
    pub name: String,
    /// The argument text: `$ARGUMENTS`, its words `$1`, `$2`…
    #[serde(default)]
    pub arguments: String,
}
