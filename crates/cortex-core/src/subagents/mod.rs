//! Subagents: the `task` tool hands a prompt to a child session, a
//! [`Session`](crate::Session) of its own with its own history, context
//! window and timeline, working in the parent's workspace under the same
//! sandbox policy, network, hooks and approval policy, and never with more
//! tools than the parent's mode offers (`kinds.rs` says how a kind narrows
//! them). Its final answer, and only that, is the call's result; the
//! parent's timeline says where the child is (`subagent.started`), what it
//! does (`subagent.step`, one line per tool call) and what it used
//! (`subagent.ended`, counted toward the parent's goal).
//!
//! The child has a guest of its own, attached with the child's mode: an
//! `explore` child of an Agent session runs in a read-only guest while the
//! parent's stays writable. It cannot wait for the user: a call that needs
//! an approval under the `ask` policy is refused in a child (nobody is
//! looking at its timeline), with a reason that tells it to report instead.
//! It cannot delegate in turn (no `task` in a child).
//!
//! Consecutive `task` calls of a round run in parallel, at most
//! [`SubagentConfig::parallel`] at once. Two writers in one tree would
//! undo each other's edits, so when two or more children may write, each
//! works in a copy of the workspace, merged back when it ends
//! (`copies.rs`); where no copy can be made (no folder for copies, a
//! workspace not on this machine) they take turns; Stop stops them all (each child's
//! turn gets a child of the parent's cancellation). A child that fails is
//! a tool error for the parent; only a timeline the parent cannot write is
//! an error of the parent's turn.

mod copies;
pub(crate) mod kinds;
mod run;

pub use kinds::{AgentKind, KindCatalog, discover_kinds, discover_kinds_async};

use crate::SessionConfig;
use cortex_protocol::{ParentLink, ToolName};

/// Subagents of one round running at once when the config says nothing.
pub const DEFAULT_PARALLEL: usize = 3;

/// The user's settings for subagents (`[subagents]` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentConfig {
    /// Subagents of one round running at once; 0 turns the `task` tool off.
    pub parallel: usize,
}

impl Default for SubagentConfig {
    fn default() -> Self {
        SubagentConfig {
            parallel: DEFAULT_PARALLEL,
        }
    }
}

/// What a session knows of subagents: as a parent, what its children are
/// made from; as a child, its parent and the tools its kind allows.
#[derive(Clone)]
pub(crate) struct Subagents {
    /// What a child's config starts from; `None` in a child (no nesting).
    template: Option<Box<SessionConfig>>,
    /// The parent's call this session answers, when it is a child.
    pub(crate) link: Option<ParentLink>,
    /// The tools its kind allows (within its mode), when it is a child.
    pub(crate) tools: Option<Vec<ToolName>>,
}

impl Subagents {
    /// A session that may start children made like itself.
    pub(crate) fn parent(config: &SessionConfig) -> Self {
        Subagents {
            template: (config.subagents.parallel > 0).then(|| Box::new(config.clone())),
            link: None,
            tools: None,
        }
    }

    /// A child: it answers `link`, with `tools` at most.
    pub(crate) fn child(link: ParentLink, tools: Vec<ToolName>) -> Self {
        Subagents {
            template: None,
            link: Some(link),
            tools: Some(tools),
        }
    }

    /// A child's session opened again from the store: its kind's tools are
    /// not kept, so its mode alone limits it, and it delegates nothing.
    pub(crate) fn resumed_child(link: ParentLink) -> Self {
        Subagents {
            template: None,
            link: Some(link),
            tools: None,
        }
    }

    /// Whether the session may hand work to subagents at all.
    pub(crate) fn may_delegate(&self) -> bool {
        self.template.is_some()
    }

    /// Whether this session is a subagent's.
    pub(crate) fn is_child(&self) -> bool {
        self.link.is_some()
    }

    /// Children of one round running at once.
    fn parallel(&self) -> usize {
        self.template
            .as_ref()
            .map_or(0, |t| t.subagents.parallel)
            .max(1)
    }
}
