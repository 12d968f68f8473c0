//! Compaction (design §6): when the next request would pass a threshold of
//! the model's context window (or on request), the older part of the history
//! is replaced by a summary plus the keep-set, and the last few messages are
//! kept verbatim.
//!
//! It fails closed: a summariser that errors, is stopped or returns nothing
//! leaves the history untouched, records `compaction.failed`, and (when a
//! turn needed it) fails the turn. Nothing is ever truncated silently.
//!
//! `compaction.done` carries the new opening message and how many trailing
//! messages were kept, so [`crate::Rebuilt::from_events`] yields the same
//! history and a resumed session continues from it.

mod context;
mod estimate;
mod keep;
mod open_files;
mod summarise;

/// What a compaction did: the protocol's type, which the session API
/// answers as it is.
pub use cortex_protocol::CompactionReport;
pub(crate) use estimate::{UsageAnchor, estimate, request_bytes, tokens_of_bytes};

use crate::{CoreError, Session, TurnOutcome};
use context::KeepSet;
use cortex_model::ModelProvider;
use cortex_protocol::{CompactionTrigger, EventKind, Message, TurnId};
use std::sync::Arc;
use summarise::SummaryError;
use tokio_util::sync::CancellationToken;

/// When and how a session compacts.
#[derive(Clone)]
pub struct CompactionConfig {
    /// Compact when the next request's estimate passes this fraction of the
    /// context window.
    pub threshold: f64,
    /// The context window in tokens; when `None`, the model provider's
    /// `info()`. Without either, only an explicit compaction runs.
    pub context_window: Option<u64>,
    /// Writes the summary; the session's own model when `None`.
    pub summariser: Option<Arc<dyn ModelProvider>>,
    /// Trailing messages kept verbatim (fewer when they are large, and at
    /// most half the history).
    pub recent_messages: usize,
    /// Budget for the current contents of touched files, in bytes.
    pub open_files_bytes: usize,
    /// Budget for recent diffs, in bytes.
    pub diff_bytes: usize,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            threshold: 0.8,
            context_window: None,
            summariser: None,
            recent_messages: 6,
            open_files_bytes: 32 * 1024,
            diff_bytes: 16 * 1024,
        }
    }
}

/// Why an explicit compaction did not happen. The history is unchanged in
/// every case.
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    /// The history is too short: everything in it would be kept.
    #[error(
        "nothing to compact: the history has no messages older than the ones a compaction keeps"
    )]
    NothingToCompact,
    /// The summariser failed, was stopped or answered nothing (recorded as `compaction.failed`).
    #[error("compaction failed, the history is unchanged: {0}")]
    Failed(String),
    /// The timeline could not be written.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// Share of the context window (as bytes, ~4 a token) each part of the
/// keep-set may take at most, so that the compacted request fits well under
/// the threshold even on a small window.
const OPEN_FILES_SHARE: f64 = 0.10;
const DIFFS_SHARE: f64 = 0.05;
const RECENT_SHARE: f64 = 0.20;
/// The transcript sent to the summariser: at most this share of the window.
const TRANSCRIPT_SHARE: f64 = 0.60;

fn share(window: Option<u64>, fraction: f64) -> usize {
    match window {
        Some(tokens) => (tokens as f64 * estimate::BYTES_PER_TOKEN as f64 * fraction) as usize,
        None => usize::MAX,
    }
}

impl Session {
    /// The context window compaction works against, when known.
    fn context_window(&self) -> Option<u64> {
        self.compaction
            .context_window
            .or_else(|| self.model.info().map(|info| info.context_window))
    }

    /// Compact the history now (a user's request between turns). The server
    /// refuses this while a turn runs, as it refuses a second turn.
    pub async fn compact(
        &mut self,
        cancel: CancellationToken,
    ) -> Result<CompactionReport, CompactError> {
        self.run_compaction(CompactionTrigger::Explicit, None, &cancel)
            .await
    }

    /// Before a model request: compact if it would pass the threshold.
    /// `Some` ends the turn (the compaction failed or was stopped).
    pub(crate) async fn compact_if_needed(
        &mut self,
        turn: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<Option<TurnOutcome>, CoreError> {
        let Some(window) = self.context_window() else {
            return Ok(None);
        };
        let tokens = estimate(&self.build_request(), self.state.usage_anchor);
        if (tokens as f64) <= window as f64 * self.compaction.threshold {
            return Ok(None);
        }
        match self
            .run_compaction(CompactionTrigger::Threshold, Some(turn), cancel)
            .await
        {
            Ok(_) => Ok(None),
            Err(CompactError::NothingToCompact) => {
                // Everything left is what a compaction keeps: send it as it
                // is (a request past the window fails with the provider's
                // own clear error, never a silent cut).
                tracing::warn!(
                    "the request is past the compaction threshold but nothing can be summarised"
                );
                Ok(None)
            }
            Err(CompactError::Failed(_)) if cancel.is_cancelled() => {
                Ok(Some(TurnOutcome::Stopped {
                    reason: crate::dispatch::STOPPED_BY_USER.to_owned(),
                }))
            }
            Err(e @ CompactError::Failed(_)) => Ok(Some(TurnOutcome::Failed {
                error: e.to_string(),
            })),
            Err(CompactError::Core(e)) => Err(e),
        }
    }

    /// The `PreCompact` hooks, as Claude Code runs them: told whether the
    /// compaction is automatic or asked for; what they answer is recorded,
    /// and a compaction goes on whatever they say (the context window does
    /// not wait).
    async fn pre_compact_hooks(
        &mut self,
        trigger: CompactionTrigger,
        turn: Option<&TurnId>,
        cancel: &CancellationToken,
    ) -> Result<(), CoreError> {
        use crate::hooks::HookEvent;
        if !self.hooks.any(HookEvent::PreCompact) {
            return Ok(());
        }
        self.hooks.stop_with(cancel);
        let name = match trigger {
            CompactionTrigger::Threshold => "auto",
            CompactionTrigger::Explicit => "manual",
        };
        let fields = serde_json::json!({ "trigger": name, "custom_instructions": "" });
        self.run_hooks(turn, HookEvent::PreCompact, None, fields)
            .await
            .map(drop)
    }

    async fn run_compaction(
        &mut self,
        trigger: CompactionTrigger,
        turn: Option<&TurnId>,
        cancel: &CancellationToken,
    ) -> Result<CompactionReport, CompactError> {
        let window = self.context_window();
        let tokens_before = estimate(&self.build_request(), self.state.usage_anchor);
        let messages_before = self.state.messages.len();
        // At most half the history is kept verbatim, so a short history
        // that a user asks to compact still has something to summarise.
        let split = keep::recent_start(
            &self.state.messages,
            self.compaction.recent_messages.min(messages_before / 2),
            share(window, RECENT_SHARE),
        );
        if split == 0 {
            return Err(CompactError::NothingToCompact);
        }
        self.pre_compact_hooks(trigger, turn, cancel).await?;
        let started = EventKind::CompactionStarted {
            trigger,
            tokens_before,
            context_window: window,
            messages: messages_before,
        };
        self.record(turn, started).await?;
        let summary = self
            .summarise_head(trigger, turn, split, window, cancel)
            .await?;
        let keep_set = self.keep_set(split, window).await?;
        let context = keep_set.render(&summary);
        let (tokens_after, messages_after) = self.measure_compacted(&context, split);
        let report = CompactionReport {
            tokens_before,
            tokens_after,
            messages_before,
            messages_after,
            summarised: split,
            kept: keep_set.kept(),
        };
        let done = EventKind::CompactionDone {
            trigger,
            tokens_before,
            tokens_after,
            messages_before,
            messages_after: report.messages_after,
            summarised: split,
            kept: report.kept.clone(),
            summary,
            context,
        };
        // Not recorded, so not done: the history is replaced (and the usage
        // anchor dropped) only by folding the stored event.
        self.record(turn, done).await?;
        Ok(report)
    }

    /// Summarise the history before `split` with the summariser (the
    /// session's model unless configured). A failure or Stop is recorded as
    /// `compaction.failed` and leaves the history as it was.
    async fn summarise_head(
        &mut self,
        trigger: CompactionTrigger,
        turn: Option<&TurnId>,
        split: usize,
        window: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<String, CompactError> {
        let summariser = self
            .compaction
            .summariser
            .clone()
            .unwrap_or_else(|| self.model.clone());
        let request = summarise::request(
            crate::prompt::request_model_name(summariser.as_ref()),
            &summarise::transcript(
                &self.state.messages[..split],
                share(window, TRANSCRIPT_SHARE),
            ),
        );
        match summarise::summarise(summariser.as_ref(), request, cancel).await {
            Ok(assembled) => {
                self.emit_usage(turn, &assembled).await?;
                Ok(assembled.text)
            }
            Err(failure) => {
                let error = match failure {
                    SummaryError::Stopped => crate::dispatch::STOPPED_BY_USER.to_owned(),
                    SummaryError::Failed(error) => error,
                };
                let failed = EventKind::CompactionFailed {
                    trigger,
                    error: error.clone(),
                };
                self.record(turn, failed).await?;
                Err(CompactError::Failed(error))
            }
        }
    }

    /// Tokens and messages of the request after `compaction.done` (the
    /// `context` message, then the history from `split`), measured without
    /// changing the state: only the recorded event does that.
    fn measure_compacted(&mut self, context: &str, split: usize) -> (u64, usize) {
        let mut history = Vec::with_capacity(1 + self.state.messages.len() - split);
        history.push(Message::user(context));
        history.extend_from_slice(&self.state.messages[split..]);
        let previous = std::mem::replace(&mut self.state.messages, history);
        let tokens_after = tokens_of_bytes(request_bytes(&self.build_request()));
        let messages_after = self.state.messages.len();
        self.state.messages = previous;
        (tokens_after, messages_after)
    }

    /// Gather the keep-set for a history whose verbatim tail starts at
    /// `split`.
    async fn keep_set(&self, split: usize, window: Option<u64>) -> Result<KeepSet, CoreError> {
        let events = self
            .timeline
            .store()
            .events(self.timeline.session(), 0)
            .await?;
        let facts = keep::facts(&events);
        let tail = &self.state.messages[split..];
        // The task is restated unless its message is kept verbatim.
        let task = facts.task.filter(|task| {
            !tail
                .iter()
                .any(|m| m.role == cortex_protocol::Role::User && m.content == *task)
        });
        let open_files = match &self.guest {
            Some(guest) if guest.is_alive() => {
                let budget = self
                    .compaction
                    .open_files_bytes
                    .min(share(window, OPEN_FILES_SHARE));
                open_files::read(guest, &facts.touched, budget).await
            }
            // Files are read through the guest only; without one (between
            // turns of a resumed session) the summary and diffs stand in.
            _ => Vec::new(),
        };
        let diff_budget = self.compaction.diff_bytes.min(share(window, DIFFS_SHARE));
        Ok(KeepSet {
            task,
            todos: self.state.todos.clone(),
            plan: facts.plan,
            goal: self.goal().cloned(),
            open_files,
            diffs: keep::within_budget(facts.diffs, diff_budget),
            recent: tail.len(),
        })
    }
}
