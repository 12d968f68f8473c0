//! Session controls between turns: `PUT …/mode`, `POST …/compact`.

use cortex_protocol::{CompactionKept, Mode};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `PUT /v1/sessions/{id}/mode`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMode {
    /// The mode the session switches to; the next turn runs in it.
    pub mode: Mode,
}

/// `POST /v1/sessions/{id}/compact`: what the compaction did. Token figures
/// are estimates (the provider's last count where known, else about 4 bytes a
/// token); the same figures are in the `compaction.done` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CompactAnswer {
    /// The history's estimated tokens before compaction.
    pub tokens_before: u64,
    /// The history's estimated tokens after it.
    pub tokens_after: u64,
    /// Messages in the history before compaction.
    pub messages_before: usize,
    /// Messages in the history after it (the summary and what was kept).
    pub messages_after: usize,
    /// Messages replaced by the summary.
    pub summarised: usize,
    /// What the new history kept besides the summary.
    pub kept: CompactionKept,
}
