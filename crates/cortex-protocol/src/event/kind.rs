//! What a client asks of any event: its wire name, and whether and how it
//! ends a turn.

use super::{EventKind, TurnOutcome};

impl EventKind {
    /// The wire name, e.g. `tool.result`.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::SessionCreated { .. } => "session.created",
            EventKind::RuntimeStarting { .. } => "runtime.starting",
            EventKind::RuntimeAttached { .. } => "runtime.attached",
            EventKind::RuntimeWarning { .. } => "runtime.warning",
            EventKind::RuntimeFailed { .. } => "runtime.failed",
            EventKind::EnvPreparing { .. } => "env.preparing",
            EventKind::EnvOutput { .. } => "env.output",
            EventKind::EnvReady { .. } => "env.ready",
            EventKind::EnvFailed { .. } => "env.failed",
            EventKind::EnvSetupSkipped { .. } => "env.setup_skipped",
            EventKind::McpServerReady { .. } => "mcp.server_ready",
            EventKind::McpServerFailed { .. } => "mcp.server_failed",
            EventKind::TurnStarted { .. } => "turn.started",
            EventKind::TurnContext { .. } => "turn.context",
            EventKind::InstructionsLoaded { .. } => "instructions.loaded",
            EventKind::TurnReminder { .. } => "turn.reminder",
            EventKind::ModelRequest { .. } => "model.request",
            EventKind::ModelRetry { .. } => "model.retry",
            EventKind::ModelProgress { .. } => "model.progress",
            EventKind::MessageDelta { .. } => "message.delta",
            EventKind::MessageDone { .. } => "message.done",
            EventKind::ToolCall { .. } => "tool.call",
            EventKind::ToolRefused { .. } => "tool.refused",
            EventKind::ToolOutputDelta { .. } => "tool.output.delta",
            EventKind::ToolResult { .. } => "tool.result",
            EventKind::ModeChanged { .. } => "mode.changed",
            EventKind::PlanProposed { .. } => "plan.proposed",
            EventKind::PlanAccepted { .. } => "plan.accepted",
            EventKind::PlanRejected { .. } => "plan.rejected",
            EventKind::SpecProposed { .. } => "spec.proposed",
            EventKind::SpecAccepted { .. } => "spec.accepted",
            EventKind::SpecRejected { .. } => "spec.rejected",
            EventKind::SpecWritten { .. } => "spec.written",
            EventKind::TodoUpdated { .. } => "todo.updated",
            EventKind::ApprovalPolicySet { .. } => "approval.policy",
            EventKind::ApprovalRequested { .. } => "approval.requested",
            EventKind::ApprovalResolved { .. } => "approval.resolved",
            EventKind::GoalSet { .. } => "goal.set",
            EventKind::GoalUpdated { .. } => "goal.updated",
            EventKind::GoalPaused { .. } => "goal.paused",
            EventKind::GoalResumed { .. } => "goal.resumed",
            EventKind::GoalCompleted { .. } => "goal.completed",
            EventKind::GoalCleared { .. } => "goal.cleared",
            EventKind::GoalContinued { .. } => "goal.continued",
            EventKind::Usage { .. } => "usage",
            EventKind::ThinkingDelta { .. } => "thinking.delta",
            EventKind::CompactionStarted { .. } => "compaction.started",
            EventKind::CompactionDone { .. } => "compaction.done",
            EventKind::CompactionFailed { .. } => "compaction.failed",
            EventKind::TurnCompleted { .. } => "turn.completed",
            EventKind::TurnStopped { .. } => "turn.stopped",
            EventKind::TurnFailed { .. } => "turn.failed",
            EventKind::CheckpointTaken { .. } => "checkpoint.taken",
            EventKind::CheckpointFailed { .. } => "checkpoint.failed",
            EventKind::CheckpointPruned { .. } => "checkpoint.pruned",
            EventKind::SessionRewound { .. } => "session.rewound",
            EventKind::HookRan { .. } => "hook.ran",
            EventKind::HookFailed { .. } => "hook.failed",
            EventKind::HooksUntrusted { .. } => "hooks.untrusted",
            EventKind::ProcessStarted { .. } => "process.started",
            EventKind::ProcessEnded { .. } => "process.ended",
            EventKind::TurnImages { .. } => "turn.images",
            EventKind::SubagentStarted { .. } => "subagent.started",
            EventKind::SubagentStep { .. } => "subagent.step",
            EventKind::SubagentEnded { .. } => "subagent.ended",
            EventKind::Error { .. } => "error",
        }
    }

    /// How the turn ended, when this event ends one (the inverse of the turn
    /// loop's last append); `None` for every other event.
    pub fn turn_outcome(&self) -> Option<TurnOutcome> {
        match self {
            EventKind::TurnCompleted { rounds, .. } => {
                Some(TurnOutcome::Completed { rounds: *rounds })
            }
            EventKind::TurnStopped { reason } => Some(TurnOutcome::Stopped {
                reason: reason.clone(),
            }),
            EventKind::TurnFailed { error, .. } => Some(TurnOutcome::Failed {
                error: error.clone(),
            }),
            _ => None,
        }
    }

    /// Whether this event ends a turn.
    pub fn ends_turn(&self) -> bool {
        matches!(
            self,
            EventKind::TurnCompleted { .. }
                | EventKind::TurnStopped { .. }
                | EventKind::TurnFailed { .. }
        )
    }

    /// What a client says of a `hooks.untrusted` event (every client says
    /// the same; the caller sanitises it for its screen); `None` for any
    /// other event.
    pub fn untrusted_hooks_notice(&self) -> Option<String> {
        let EventKind::HooksUntrusted { file, hooks, .. } = self else {
            return None;
        };
        let hooks = match hooks {
            1 => "1 hook".to_owned(),
            n => format!("{n} hooks"),
        };
        Some(format!(
            "the repository's {file} has {hooks} that do not run: the file is not trusted at \
             this content (trust it with `cortex hooks trust` or /hooks; trusted hooks run in \
             the guest)"
        ))
    }

    /// What a client says of a `process.started` or `process.ended` event
    /// (every client says the same; the caller sanitises it, since the
    /// model wrote the command); `None` for any other event.
    pub fn process_line(&self) -> Option<String> {
        match self {
            EventKind::ProcessStarted { id, command } => {
                let first = command.lines().next().unwrap_or_default();
                Some(format!("background {id} started: {first}"))
            }
            EventKind::ProcessEnded {
                id,
                exit_code,
                reason,
            } => Some(match exit_code {
                Some(code) => format!("background {id} ended: {reason} (exit code {code})"),
                None => format!("background {id} ended: {reason}"),
            }),
            _ => None,
        }
    }
}
