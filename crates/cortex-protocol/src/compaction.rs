//! What the `compaction.*` events say: why a compaction ran and what it kept.
//!
//! A compaction replaces the older part of a session's history with one
//! message (`context`: the summary of the dropped part plus the keep-set)
//! followed by the last `kept_messages` messages verbatim. `compaction.done`
//! carries both, so rebuilding a session from its timeline yields exactly the
//! compacted history the live session continued with.

use serde::{Deserialize, Serialize};

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The next model request would have passed the context threshold.
    Threshold,
    /// A user asked for it (`POST /v1/sessions/{id}/compact`).
    Explicit,
}

impl CompactionTrigger {
    /// The wire name: `threshold` or `explicit`.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionTrigger::Threshold => "threshold",
            CompactionTrigger::Explicit => "explicit",
        }
    }
}

/// The keep-set: what went into the new history besides the summary.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionKept {
    /// The latest user message was restated in the context message.
    #[serde(default)]
    pub task: bool,
    /// Items of the todo list restated.
    #[serde(default)]
    pub todos: usize,
    /// Version of the plan restated, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_version: Option<u32>,
    /// Files whose current contents were included, newest first.
    #[serde(default)]
    pub open_files: Vec<String>,
    /// Files whose latest diffs were included, newest first.
    #[serde(default)]
    pub diffs: Vec<String>,
    /// Trailing messages kept verbatim.
    #[serde(default)]
    pub recent_messages: usize,
}

/// What a compaction did: the figures of `compaction.done`, and the answer
/// of `POST /v1/sessions/{id}/compact` (named `CompactAnswer` there). Token
/// figures are estimates (the provider's last count where known, else about
/// 4 bytes a token).
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "utoipa", schema(as = CompactAnswer))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionReport {
    /// The history's estimated tokens before compaction.
    pub tokens_before: u64,
    /// The history's estimated tokens after it: the context message and the
    /// kept tail.
    pub tokens_after: u64,
    /// Messages in the history before compaction.
    pub messages_before: usize,
    /// Messages in the history after it (the summary and what was kept).
    pub messages_after: usize,
    /// Messages replaced by the summary.
    pub summarised: usize,
    /// What the new history kept besides the summary: what the context
    /// message restates (task, todos, plan, files, diffs) and how many
    /// messages were kept verbatim.
    pub kept: CompactionKept,
}
