//! Subagents: what the `subagent.*` events of a parent's timeline and a
//! child session's `session.created` say of the link between them.

use crate::ids::{CallId, SessionId};
use serde::{Deserialize, Serialize};

/// The `task` call a child session answers: its parent session and call.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParentLink {
    /// The session that made the call.
    #[cfg_attr(feature = "utoipa", schema(value_type = String))]
    pub session: SessionId,
    /// The `task` call's id in that session.
    #[cfg_attr(feature = "utoipa", schema(value_type = String))]
    pub call_id: CallId,
}

/// What one subagent used, counted toward its parent's totals and goal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SubagentUse {
    /// Its wall time, from its creation to its answer.
    pub ms: f64,
    /// Prompt tokens of all its model requests.
    pub input_tokens: u64,
    /// Answer tokens of all its model requests.
    pub output_tokens: u64,
    /// What they cost, when every one of them was priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl SubagentUse {
    /// Prompt plus answer tokens, as a goal's budget counts them.
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}
