//! Rewind: what a `session.rewound` event and the rewind API say.
//!
//! A session checkpoints its whole workspace before each turn (cortex-core's
//! `checkpoint` module); a rewind goes back to one of those checkpoints for
//! the files, the conversation, or both.

use serde::{Deserialize, Serialize};

/// What a rewind restores.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RewindScope {
    /// The workspace's files only; the conversation keeps the later turns.
    Files,
    /// The conversation only: later requests are built as if the rewound
    /// turns were not there; the files stay as they are.
    Conversation,
    /// Both (the default).
    #[default]
    Both,
}

impl RewindScope {
    /// Whether the workspace's files are restored.
    pub fn files(self) -> bool {
        matches!(self, RewindScope::Files | RewindScope::Both)
    }

    /// Whether the conversation is rewound.
    pub fn conversation(self) -> bool {
        matches!(self, RewindScope::Conversation | RewindScope::Both)
    }
}

/// The changes a files rewind made to the workspace, as paths relative to
/// it, each list sorted.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RewindDiff {
    /// Paths that did not exist and were brought back.
    pub created: Vec<String>,
    /// Paths whose content, mode, kind or link target was restored.
    pub changed: Vec<String>,
    /// Paths the later turns created, removed.
    pub deleted: Vec<String>,
}

impl RewindDiff {
    /// Whether the rewind changed nothing.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }

    /// The same diff with at most `cap` paths per list (events stay small;
    /// the API's answer has them all).
    pub fn capped(&self, cap: usize) -> RewindDiff {
        let take = |v: &Vec<String>| v.iter().take(cap).cloned().collect();
        RewindDiff {
            created: take(&self.created),
            changed: take(&self.changed),
            deleted: take(&self.deleted),
        }
    }
}
