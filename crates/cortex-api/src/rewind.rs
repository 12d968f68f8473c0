//! `POST /v1/sessions/{id}/rewind`: go back to before a turn.

use cortex_protocol::RewindScope;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /v1/sessions/{id}/rewind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct Rewind {
    /// The turn to go back to before (the state its checkpoint holds); for
    /// scope `files`, also an `undo-…` checkpoint a rewind answered with.
    /// Absent: the session's last turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// What to restore: `files`, `conversation` or `both` (the default).
    #[serde(default)]
    pub scope: RewindScope,
    /// Overwrite files changed outside the session since it last ran
    /// (without it, such files are a 409 naming them).
    #[serde(default)]
    pub force: bool,
    /// Only say what the rewind would do: the answer's paths are those it
    /// would create, change and delete, and `changed_outside` those it
    /// would refuse without `force`; nothing changes and no event is
    /// recorded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RewindAnswer {
    /// The turn (or checkpoint) gone back to.
    pub turn_id: String,
    /// What was restored.
    pub scope: RewindScope,
    /// Paths brought back (relative to the workspace).
    pub created: Vec<String>,
    /// Paths whose content, mode, kind or link target was restored.
    pub changed: Vec<String>,
    /// Paths the later turns created, removed.
    pub deleted: Vec<String>,
    /// Rewinding to this checkpoint with scope `files` undoes the rewind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<String>,
    /// Paths changed outside the session that `force` overwrote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forced: Vec<String>,
    /// The answer of a `dry_run`: nothing was changed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// A `dry_run`'s paths changed outside the session since it last ran,
    /// which the rewind would refuse to overwrite without `force`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_outside: Vec<String>,
}
