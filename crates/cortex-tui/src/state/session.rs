//! The events about the session, the guest and the model rather than the
//! conversation itself, folded into [`SessionState`]: one method per family.

use super::{GuestPhase, PendingApproval, Phase, SessionState, title};
use crate::state::cell::{CellKind, Level};
use crate::text::{self, clean, clean_line};
use crate::time::Millis;
use cortex_protocol::{EventKind, Todo, ToolStatus};

impl SessionState {
    /// Events about the session, the guest and the model rather than the
    /// conversation itself.
    pub(super) fn apply_session_event(&mut self, kind: &EventKind, at: Option<Millis>) {
        // Each family says whether the event was one of its own.
        let _ = self.apply_guest(kind, at)
            || self.apply_model(kind, at)
            || self.apply_review(kind)
            || self.apply_control(kind)
            || self.apply_compaction(kind, at)
            || self.apply_process(kind);
    }

    /// The guest's attach and the environment's setup.
    fn apply_guest(&mut self, kind: &EventKind, at: Option<Millis>) -> bool {
        match kind {
            EventKind::RuntimeStarting { .. } => self.guest = GuestPhase::Attaching { since: at },
            EventKind::RuntimeAttached {
                provider,
                ms,
                isolation,
            } => {
                self.guest = GuestPhase::Ready;
                let isolation = if isolation.is_empty() {
                    String::new()
                } else {
                    format!("; {}", clean_line(isolation))
                };
                self.notice(
                    Level::Info,
                    format!(
                        "guest attached ({}, {}{isolation})",
                        clean_line(provider),
                        crate::time::elapsed(*ms)
                    ),
                );
            }
            EventKind::RuntimeWarning { message } => {
                self.notice(Level::Warning, format!("guest: {}", clean(message)))
            }
            EventKind::RuntimeFailed { error } => {
                self.guest = GuestPhase::Failed;
                self.notice(Level::Error, format!("guest failed: {}", clean(error)));
            }
            EventKind::EnvPreparing { .. } => self.guest = GuestPhase::Preparing { since: at },
            EventKind::EnvOutput { text, .. } => self.setup_output(text, at),
            EventKind::EnvReady { ms } => {
                self.guest = GuestPhase::Ready;
                self.finish_setup(ToolStatus::Ok, Some(*ms));
            }
            EventKind::EnvSetupSkipped { reason } => {
                self.notice(Level::Warning, format!("setup skipped: {}", clean(reason)))
            }
            EventKind::EnvFailed { error } => {
                self.guest = GuestPhase::Failed;
                self.finish_setup(ToolStatus::Error, None);
                self.notice(Level::Error, format!("setup failed: {}", clean(error)));
            }
            _ => return false,
        }
        true
    }

    /// Model requests, retries, progress and token usage.
    fn apply_model(&mut self, kind: &EventKind, at: Option<Millis>) -> bool {
        match kind {
            EventKind::ModelRequest { round, .. } => {
                self.close_open();
                self.set_phase(Phase::Waiting {
                    since: at,
                    round: *round,
                });
            }
            EventKind::ModelRetry {
                attempt,
                of,
                delay_ms,
                reason,
                ..
            } => self.notice(
                Level::Warning,
                format!(
                    "{}: {}",
                    cortex_protocol::retry_status(*attempt, *of, *delay_ms),
                    clean_line(reason)
                ),
            ),
            EventKind::ModelProgress { done, total, .. } => {
                if let Some(turn) = self.turn.as_mut() {
                    turn.progress = Some((*done, *total));
                }
            }
            // Between the harness and the model: the user has nothing to
            // act on (the text is in the timeline and in --json).
            EventKind::TurnReminder { .. } => {}
            EventKind::Usage {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cost_usd,
                ..
            } => {
                let usage = &mut self.usage;
                usage.input += input_tokens;
                usage.output += output_tokens;
                usage.cache_read += cache_read_tokens;
                usage.context = input_tokens + output_tokens;
                usage.cost_usd = match (usage.requests, usage.cost_usd, cost_usd) {
                    (0, _, cost) => *cost,
                    (_, Some(sum), Some(cost)) => Some(sum + cost),
                    _ => None,
                };
                usage.requests += 1;
            }
            // A subagent's tokens are the session's too (not its context).
            EventKind::SubagentEnded { used, .. } => {
                let usage = &mut self.usage;
                usage.input += used.input_tokens;
                usage.output += used.output_tokens;
                usage.cost_usd = match (usage.cost_usd, used.cost_usd) {
                    (Some(sum), Some(cost)) => Some(sum + cost),
                    _ => None,
                };
            }
            _ => return false,
        }
        true
    }

    /// The mode, approvals, the todo list and errors.
    fn apply_control(&mut self, kind: &EventKind) -> bool {
        match kind {
            EventKind::ModeChanged { from, to } => {
                self.mode = *to;
                self.review_mode_changed(*from, *to);
                self.notice(
                    Level::Info,
                    format!("mode {} → {}", title(*from), title(*to)),
                );
            }
            EventKind::ApprovalRequested {
                call_id,
                name,
                summary,
                reason,
            } => {
                let pending = PendingApproval::new(&call_id.0, name, summary, reason);
                self.notice(
                    Level::Warning,
                    format!("approval needed: {} ({})", pending.summary, pending.reason),
                );
                self.approval = Some(pending);
            }
            EventKind::ApprovalResolved { call_id, decision } => {
                if self
                    .approval
                    .as_ref()
                    .is_some_and(|a| a.call_id == call_id.0)
                {
                    self.approval = None;
                }
                self.notice(Level::Info, format!("approval: {}", decision.as_str()));
            }
            EventKind::TodoUpdated { todos } => {
                self.close_open();
                self.todos = todos
                    .iter()
                    .map(|t| Todo {
                        content: clean_line(&t.content),
                        status: t.status,
                    })
                    .collect();
                self.push(CellKind::Todos(self.todos.clone()));
            }
            EventKind::Error { message } => self.notice(Level::Error, clean(message)),
            EventKind::HookFailed { event, hook, error } => self.notice(
                Level::Warning,
                format!(
                    "{} hook `{}` failed: {}",
                    clean_line(event),
                    clean_line(hook),
                    clean_line(error)
                ),
            ),
            EventKind::TurnImages { images } => self.notice(
                Level::Info,
                clean_line(&cortex_protocol::ImageRef::line(images)),
            ),
            untrusted @ EventKind::HooksUntrusted { .. } => {
                if let Some(notice) = untrusted.untrusted_hooks_notice() {
                    self.notice(Level::Warning, clean_line(&notice));
                }
            }
            // The workspace listing the model was given: not the user's.
            EventKind::TurnContext { .. } => {}
            // Which project instructions the model is given (again on
            // `/status`); their text is the model's.
            EventKind::InstructionsLoaded {
                files, bytes, cut, ..
            } => {
                let seen = super::InstructionsSeen {
                    files: files.iter().map(|f| clean_line(f)).collect(),
                    bytes: *bytes,
                    cut: *cut,
                };
                self.notice(Level::Info, format!("instructions: {}", seen.line()));
                self.instructions = Some(seen);
            }
            // A rewind will not bring back what a checkpoint leaves out:
            // said when the folders left out change.
            EventKind::CheckpointTaken { excluded, .. } => {
                let excluded: Vec<String> = excluded.iter().map(|f| clean_line(f)).collect();
                if excluded != self.checkpoint_excluded && !excluded.is_empty() {
                    self.notice(
                        Level::Info,
                        format!(
                            "checkpoints leave out (regenerable, not rewound): {}",
                            excluded.join(", ")
                        ),
                    );
                }
                self.checkpoint_excluded = excluded;
            }
            EventKind::CheckpointFailed { reason } => self.notice(
                Level::Warning,
                format!("no checkpoint before this turn: {}", clean(reason)),
            ),
            EventKind::CheckpointPruned { checkpoints, .. } => self.notice(
                Level::Info,
                format!("{} old checkpoint(s) pruned (quota)", checkpoints.len()),
            ),
            EventKind::SessionRewound {
                turn_id,
                scope,
                paths,
                ..
            } => self.notice(
                Level::Info,
                format!(
                    "rewound to before {} ({scope:?}, {paths} path(s) restored)",
                    clean_line(turn_id)
                ),
            ),
            _ => return false,
        }
        true
    }

    /// A compaction's start, result or failure.
    fn apply_compaction(&mut self, kind: &EventKind, at: Option<Millis>) -> bool {
        match kind {
            EventKind::CompactionStarted {
                trigger,
                tokens_before,
                context_window,
                ..
            } => {
                if context_window.is_some() {
                    self.context_window = *context_window;
                }
                self.set_phase(Phase::Compacting { since: at });
                self.notice(
                    Level::Info,
                    format!(
                        "compacting the history ({}, ~{} tokens)…",
                        trigger.as_str(),
                        text::count(*tokens_before)
                    ),
                );
            }
            EventKind::CompactionDone {
                tokens_before,
                tokens_after,
                summarised,
                ..
            } => {
                self.usage.context = *tokens_after;
                self.notice(
                    Level::Info,
                    format!(
                        "compacted: ~{} → ~{} tokens, {summarised} messages summarised",
                        text::count(*tokens_before),
                        text::count(*tokens_after)
                    ),
                );
            }
            EventKind::CompactionFailed { error, .. } => self.notice(
                Level::Error,
                format!("compaction failed (history unchanged): {}", clean(error)),
            ),
            _ => return false,
        }
        true
    }
}
