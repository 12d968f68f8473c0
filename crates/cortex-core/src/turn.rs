//! The turn loop: request → stream → dispatch, until the model answers
//! without a tool call, Stop, or the stop rule.

use crate::attach::Readiness;
use crate::dispatch::{DispatchEnd, STOPPED_BY_USER};
use crate::judge::{Judged, Verdict};
use crate::{CoreError, Session, StopRuleState, TurnOutcome, new_id, system_prompt};
use cortex_model::{
    Assembled, Assembler, FinishReason, MAX_TEXT_BYTES, ModelError, ModelEvent, ModelRequest,
    within_cap,
};
use cortex_protocol::{EditFormat, EventKind, ToolName, TurnFinish, TurnId};
use futures::StreamExt;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Retries of a round whose stream was cut mid-way. Safe because no tool of
/// the round has run yet; the provider itself retries failures that happen
/// before the first event.
const MAX_STREAM_RETRIES: u32 = 3;
const STREAM_RETRY_BASE: Duration = Duration::from_millis(500);

enum RoundEnd {
    Done(Assembled),
    Stopped,
    /// Why, and how the provider ended the response if it refused.
    Failed(String, Option<TurnFinish>),
}

/// How streaming one response ended.
enum Streamed {
    Done(Assembled),
    Stopped,
    Failed(ModelError),
}

impl Session {
    /// Run one turn for `message`. Returns how it ended; an `Err` means the
    /// timeline itself could not be written.
    pub async fn run_turn(
        &mut self,
        message: &str,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, CoreError> {
        self.run_turn_as(TurnId(new_id()), message, cancel).await
    }

    /// [`Session::run_turn`] under an id the caller minted (with
    /// [`Session::new_turn_id`]), so an API can answer with the id before the
    /// turn has written anything.
    pub async fn run_turn_as(
        &mut self,
        turn: TurnId,
        message: &str,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, CoreError> {
        self.run_user_turn_as(turn, crate::UserTurn::text(message), cancel)
            .await
    }

    /// [`Session::run_turn_as`] for a message with images (checked with
    /// [`Session::check_images`] first; a refused one fails the turn).
    pub async fn run_user_turn_as(
        &mut self,
        turn: TurnId,
        input: crate::UserTurn,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, CoreError> {
        self.drive.user_turn();
        self.turn_includes = input.includes;
        let outcome = self
            .run_turn_with(turn, &input.message, input.images, None, cancel)
            .await;
        // A turn that ended before reading them leaves none to the next.
        self.turn_includes.clear();
        outcome
    }

    /// A turn whose message is `message`; `continuation` marks one the
    /// harness started for the goal (`goal.continued` follows
    /// `turn.started`).
    pub(crate) async fn run_turn_with(
        &mut self,
        turn: TurnId,
        message: &str,
        images: Vec<Vec<u8>>,
        continuation: Option<u32>,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, CoreError> {
        let for_goal = self.goal().is_some_and(cortex_protocol::Goal::is_active);
        let started = EventKind::TurnStarted {
            message: message.to_owned(),
            mode: self.mode(),
        };
        self.record(Some(&turn), started).await?;
        // The images belong with the message, before anything else of the
        // turn; refused ones fail it before any request.
        let refused = self.attach_images(&turn, images).await?.err();
        if let Some(continuation) = continuation {
            self.record(Some(&turn), EventKind::GoalContinued { continuation })
                .await?;
        }
        self.drive.turn_started();
        let metadata = self.metadata_before_turn().await;
        self.turn_work = crate::coach::TurnWork::new(message).with_edit_format(self.edit_format());
        self.hooks.stop_with(&cancel);
        // How the provider ended the turn's last response, when that was
        // not the model's own choice.
        let mut finish = None;
        let outcome = match refused {
            Some(error) => TurnOutcome::Failed {
                error: error.to_string(),
            },
            None => self.turn_loop(&turn, &cancel, &mut finish).await?,
        };
        if cancel.is_cancelled()
            && let Some(guest) = &self.guest
        {
            // Stop means everything the turn's commands started (a sandboxed
            // guest kills its whole namespace but itself), but the commands
            // the model put in the background (`background/`): a dev server
            // survives a stopped turn; the user ends it (`/ps kill`, the API).
            match tokio::time::timeout(crate::dispatch::STOP_GRACE, guest.stop()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!("the guest did not stop everything: {e}"),
                Err(_) => tracing::warn!("the guest did not confirm the stop in time"),
            }
        }
        self.neutralise_metadata(&turn, metadata).await?;
        self.seal_checkpoints().await;
        let end = match &outcome {
            TurnOutcome::Completed { rounds } => EventKind::TurnCompleted {
                rounds: *rounds,
                finish,
                // What the answer checks still doubt: shown, not hidden
                // behind a plain "completed".
                unverified: self.turn_work.take_doubts(),
            },
            TurnOutcome::Stopped { reason } => EventKind::TurnStopped {
                reason: reason.clone(),
            },
            TurnOutcome::Failed { error } => EventKind::TurnFailed {
                error: error.clone(),
                finish,
            },
        };
        self.record(Some(&turn), end).await?;
        if for_goal {
            // The turn's counters were folded in with its events.
            self.publish_goal();
        }
        Ok(outcome)
    }

    async fn turn_loop(
        &mut self,
        turn: &TurnId,
        cancel: &CancellationToken,
        finish: &mut Option<TurnFinish>,
    ) -> Result<TurnOutcome, CoreError> {
        let stopped = || TurnOutcome::Stopped {
            reason: STOPPED_BY_USER.to_owned(),
        };
        if let Some(end) = self.prepare_turn(turn, cancel).await? {
            return Ok(end);
        }
        let mut stop_rule = StopRuleState::new(self.stop_rule);
        let mut judged = Judged::default();
        let mut round = 0;
        loop {
            if cancel.is_cancelled() {
                return Ok(stopped());
            }
            // Compact before the request that would pass the threshold; a
            // compaction that fails ends the turn (fails closed).
            if let Some(end) = self.compact_if_needed(turn, cancel).await? {
                return Ok(end);
            }
            self.check_mcp(turn).await?;
            round += 1;
            let assembled = match self.model_round(turn, round, cancel).await? {
                RoundEnd::Done(assembled) => assembled,
                RoundEnd::Stopped => return Ok(stopped()),
                RoundEnd::Failed(error, refused) => {
                    *finish = refused;
                    return Ok(TurnOutcome::Failed { error });
                }
            };
            // Only the round that ends the turn says how it ended.
            *finish =
                (assembled.finish == Some(FinishReason::Length)).then_some(TurnFinish::MaxTokens);
            if assembled.tool_calls.is_empty() {
                match self.judge_answer(turn, &assembled, &mut judged).await? {
                    Verdict::Accept => return Ok(TurnOutcome::Completed { rounds: round }),
                    Verdict::Remind(reminder) => self.remind(turn, reminder).await?,
                    Verdict::Fail(error) => return Ok(TurnOutcome::Failed { error }),
                }
                continue;
            }
            match self
                .dispatch(turn, &assembled.tool_calls, &mut stop_rule, cancel)
                .await?
            {
                DispatchEnd::Continue { any_ok } => {
                    judged.after_round(any_ok);
                    self.after_round(turn, &assembled.tool_calls).await?;
                }
                DispatchEnd::Stopped => return Ok(stopped()),
                DispatchEnd::StopRule(reason) => return Ok(TurnOutcome::Stopped { reason }),
            }
        }
    }

    /// Everything before the turn's first model request, in order; how the
    /// turn ends when one of them ends it.
    async fn prepare_turn(
        &mut self,
        turn: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<Option<TurnOutcome>, CoreError> {
        // Which of the repository's hooks run this turn: read again each
        // turn, so a file changed since it was trusted no longer runs.
        self.load_repository_hooks(turn).await?;
        // A resumed session's images, read back before a request sends them.
        self.load_images().await?;
        // Attach before the first command: never a model request first.
        if let Readiness::NotReady(error) = self.ensure_attached(turn, cancel).await? {
            if cancel.is_cancelled() {
                return Ok(Some(TurnOutcome::Stopped {
                    reason: STOPPED_BY_USER.to_owned(),
                }));
            }
            return Ok(Some(TurnOutcome::Failed { error }));
        }
        // The hooks see the prompt before anything runs for it (a
        // repository's hooks run in the guest, so after it is attached).
        let hooked = match self.prompt_hooks(turn).await? {
            Ok(context) => context,
            Err(error) if cancel.is_cancelled() => {
                tracing::debug!("a prompt hook was stopped: {error}");
                return Ok(Some(TurnOutcome::Stopped {
                    reason: STOPPED_BY_USER.to_owned(),
                }));
            }
            Err(error) => return Ok(Some(TurnOutcome::Failed { error })),
        };
        // The whole workspace as it is before the turn changes anything
        // (the accepted spec below is the turn's first write).
        self.checkpoint_turn(turn).await?;
        if let Some(error) = self.write_accepted_spec(turn).await? {
            return Ok(Some(TurnOutcome::Failed { error }));
        }
        // Before the first request, and before the turn's context: what
        // the model is told about the repository starts with its rules.
        self.load_instructions(turn).await?;
        // A command's `@path` files, then the listing: the history puts
        // each `turn.context` before what it has, so the files sit next to
        // the message.
        self.add_includes(turn, cancel).await?;
        self.add_turn_context(turn, cancel).await?;
        if !hooked.is_empty() {
            let text = format!("Context from hooks:\n{}", hooked.join("\n\n"));
            self.record(Some(turn), EventKind::TurnContext { text })
                .await?;
        }
        self.start_mcp(turn).await?;
        Ok(None)
    }

    /// The `SessionStart` hooks (on the session's first turn in this
    /// process) and the `UserPromptSubmit` hooks: the context they add, or
    /// why one blocked the prompt (the turn then fails with it).
    async fn prompt_hooks(
        &mut self,
        turn: &TurnId,
    ) -> Result<Result<Vec<String>, String>, CoreError> {
        use crate::hooks::HookEvent;
        let mut context = Vec::new();
        if self.hooks.start() && self.hooks.any(HookEvent::SessionStart) {
            let resumed = self.state.messages.len() > 1;
            let source = if resumed { "resume" } else { "startup" };
            let fields = serde_json::json!({ "source": source });
            let outcome = self
                .run_hooks(Some(turn), HookEvent::SessionStart, None, fields)
                .await?;
            context.extend(outcome.context);
        }
        if !self.hooks.any(HookEvent::UserPromptSubmit) {
            return Ok(Ok(context));
        }
        let fields = serde_json::json!({ "prompt": self.turn_work.prompt() });
        let outcome = self
            .run_hooks(Some(turn), HookEvent::UserPromptSubmit, None, fields)
            .await?;
        Ok(match outcome.refused {
            Some((hook, reason)) => Err(format!(
                "the UserPromptSubmit hook `{hook}` blocked the prompt: {reason}"
            )),
            None => {
                context.extend(outcome.context);
                Ok(context)
            }
        })
    }

    /// After a round whose calls all were answered: the rules of a folder
    /// the calls reached, and after a repeat, the task's next step.
    async fn after_round(
        &mut self,
        turn: &TurnId,
        calls: &[cortex_protocol::ToolCallRequest],
    ) -> Result<(), CoreError> {
        self.instructions_after(turn, calls).await?;
        if let Some(reminder) = self.after_repeat() {
            self.remind(turn, reminder).await?;
        }
        Ok(())
    }

    pub(crate) fn build_request(&self) -> ModelRequest {
        let offered = self.offered_tools();
        let mut messages = self.state.messages.clone();
        self.images.resolve(&mut messages);
        ModelRequest {
            model: crate::prompt::request_model_name(self.model.as_ref()),
            system: self.system_prompt(),
            messages,
            tools: offered
                .iter()
                .map(|t| t.spec_in(self.edit_format()))
                .chain(self.mcp_offered())
                .collect(),
            tool_choice: self.state.steering.tool_choice(&offered),
            hints: self.hints(),
        }
    }

    /// What the embedded model's grammar and sampler read beside the
    /// request: the files an edit may quote, and the calls the gates will
    /// refuse if made again. Left out when empty, so requests compare
    /// equal however a session got to them.
    fn hints(&self) -> cortex_model::Hints {
        let mut hints = cortex_model::Hints::default();
        let quotable = self.quotable();
        if !quotable.is_empty() {
            hints.insert(cortex_model::QuotableFiles(quotable));
        }
        let refused = self.turn_work.refused_calls();
        if !refused.is_empty() {
            hints.insert(cortex_model::RefusedCalls(refused.to_vec()));
        }
        hints
    }

    /// One model round: build the request and record it, stream the
    /// response into the timeline, and record the assistant message (a
    /// stream cut mid-way is retried as a whole: no tool of it has run).
    async fn model_round(
        &mut self,
        turn: &TurnId,
        round: u32,
        cancel: &CancellationToken,
    ) -> Result<RoundEnd, CoreError> {
        let request = self.build_request();
        let sent = EventKind::ModelRequest {
            round,
            model: self.model.describe(),
            messages: request.messages.len(),
            tools: request.tools.iter().map(|t| t.name.clone()).collect(),
            bytes: crate::compaction::request_bytes(&request),
        };
        self.record(Some(turn), sent).await?;
        let mut attempt = 0;
        loop {
            let error = match self.stream_response(turn, round, &request, cancel).await? {
                Streamed::Stopped => return Ok(RoundEnd::Stopped),
                Streamed::Done(mut assembled) => {
                    if self.edits_by_blocks() && assembled.tool_calls.is_empty() {
                        assembled.tool_calls = crate::blocks::calls(&assembled.text);
                    }
                    self.record_response(turn, &assembled).await?;
                    return Ok(RoundEnd::Done(assembled));
                }
                Streamed::Failed(error) => error,
            };
            match error {
                e @ ModelError::Stream(_) if attempt < MAX_STREAM_RETRIES => {
                    attempt += 1;
                    if !self.wait_to_retry(turn, round, attempt, &e, cancel).await? {
                        return Ok(RoundEnd::Stopped);
                    }
                }
                e => {
                    let refused =
                        matches!(e, ModelError::ContentFiltered(_)).then_some(TurnFinish::Refusal);
                    let error = format!("model {} failed: {e}", self.model.describe());
                    return Ok(RoundEnd::Failed(error, refused));
                }
            }
        }
    }

    /// Stream one response, each event into the timeline as it arrives.
    /// On Stop the stream is dropped (which aborts the request) and what
    /// was shown is recorded as the round's message.
    async fn stream_response(
        &mut self,
        turn: &TurnId,
        round: u32,
        request: &ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<Streamed, CoreError> {
        let mut stream = self.model.stream(request.clone());
        let mut assembler = Assembler::default();
        let mut text = String::new();
        // Small models' replies are watched for runaways (`cut_reply.rs`),
        // every so many bytes.
        let guard = self.verifies_answers();
        let mut checked = 0;
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => None,
                next = stream.next() => Some(next),
            };
            let Some(next) = next else {
                drop(stream);
                self.finish_message(turn, text, Vec::new()).await?;
                return Ok(Streamed::Stopped);
            };
            match next {
                None => return Ok(Streamed::Done(assembler.finish())),
                Some(Err(e)) => return Ok(Streamed::Failed(e)),
                Some(Ok(ModelEvent::TextDelta(delta))) => {
                    // Past the cap a reply is dropped, as the assembler
                    // drops it: nothing more is held, shown or stored.
                    let kept = within_cap(text.len(), &delta, MAX_TEXT_BYTES).to_owned();
                    if !kept.is_empty() {
                        text.push_str(&kept);
                        let shown = ModelEvent::TextDelta(kept);
                        self.show_model_event(turn, round, &shown).await?;
                    }
                    assembler.push(&ModelEvent::TextDelta(delta));
                    if guard && text.len() >= checked + 64 {
                        checked = text.len();
                        if cortex_model::runaway(&text) {
                            // Dropping the stream stops the generation.
                            drop(stream);
                            let mut stopped = assembler.finish();
                            stopped.text.truncate(stopped.text.trim_end().len());
                            stopped.finish =
                                Some(FinishReason::Other(cortex_model::RUNAWAY.to_owned()));
                            return Ok(Streamed::Done(stopped));
                        }
                    }
                }
                Some(Ok(event)) => {
                    self.show_model_event(turn, round, &event).await?;
                    assembler.push(&event);
                }
            }
        }
    }

    /// The timeline event a streamed model event is shown as, if any.
    async fn show_model_event(
        &self,
        turn: &TurnId,
        round: u32,
        event: &ModelEvent,
    ) -> Result<(), CoreError> {
        let kind = match event {
            ModelEvent::TextDelta(delta) => EventKind::MessageDelta {
                text: delta.clone(),
            },
            ModelEvent::ThinkingDelta(delta) => EventKind::ThinkingDelta {
                text: delta.clone(),
            },
            ModelEvent::Retry {
                attempt,
                of,
                delay_ms,
                reason,
            } => EventKind::ModelRetry {
                round,
                attempt: *attempt,
                of: Some(*of),
                delay_ms: *delay_ms,
                reason: reason.clone(),
            },
            ModelEvent::PromptProgress { done, total } => EventKind::ModelProgress {
                round,
                done: *done,
                total: *total,
            },
            _ => return Ok(()),
        };
        self.timeline.emit(Some(turn), kind).await?;
        Ok(())
    }

    /// A complete response: its usage, and its message.
    async fn record_response(
        &mut self,
        turn: &TurnId,
        assembled: &Assembled,
    ) -> Result<(), CoreError> {
        // Also the next request's usage anchor (`state.rs`).
        self.emit_usage(Some(turn), assembled).await?;
        self.finish_message(
            turn,
            assembled.text.clone(),
            assembled.provider_items.clone(),
        )
        .await
    }

    /// `model.retry` for a cut stream, then the back-off. Returns false if
    /// Stop came first.
    async fn wait_to_retry(
        &mut self,
        turn: &TurnId,
        round: u32,
        attempt: u32,
        error: &ModelError,
        cancel: &CancellationToken,
    ) -> Result<bool, CoreError> {
        let delay = STREAM_RETRY_BASE * 2u32.pow(attempt - 1);
        let retry = EventKind::ModelRetry {
            round,
            attempt,
            of: Some(MAX_STREAM_RETRIES),
            delay_ms: delay.as_millis() as u64,
            reason: error.to_string(),
        };
        self.timeline.emit(Some(turn), retry).await?;
        Ok(tokio::select! {
            _ = cancel.cancelled() => false,
            _ = tokio::time::sleep(delay) => true,
        })
    }

    /// A `usage` event for a response that reported tokens.
    pub(crate) async fn emit_usage(
        &mut self,
        turn: Option<&TurnId>,
        assembled: &Assembled,
    ) -> Result<(), CoreError> {
        if assembled.input_tokens == 0 && assembled.output_tokens == 0 {
            return Ok(());
        }
        self.record(
            turn,
            EventKind::Usage {
                input_tokens: assembled.input_tokens,
                output_tokens: assembled.output_tokens,
                cache_read_tokens: assembled.cache_read_tokens,
                cache_write_tokens: assembled.cache_write_tokens,
                cost_usd: self.model.info().and_then(|info| {
                    info.cost(&cortex_model::TokenCounts {
                        input: assembled.input_tokens,
                        output: assembled.output_tokens,
                        cache_read: assembled.cache_read_tokens,
                        cache_write: assembled.cache_write_tokens,
                    })
                }),
            },
        )
        .await?;
        Ok(())
    }

    /// `message.done`: the round's assistant message (its calls follow as
    /// `tool.call` events from the dispatcher).
    async fn finish_message(
        &mut self,
        turn: &TurnId,
        text: String,
        // Replayed to the provider with the next rounds (reasoning), so
        // stored with the message.
        provider_items: Vec<cortex_protocol::ProviderItem>,
    ) -> Result<(), CoreError> {
        let done = EventKind::MessageDone {
            text,
            provider_items,
        };
        self.record(Some(turn), done).await?;
        Ok(())
    }
}

impl Session {
    /// The tools the model is offered now: the mode's, plus `goal` in Agent
    /// mode while a goal is active, less `edit_file` for a model that edits
    /// otherwise (whole files, SEARCH/REPLACE blocks:
    /// [`cortex_protocol::EditFormat::offers_edit_file`]), less the todo
    /// list for a small model (`verify_answers`): a small model called
    /// `todo_write` in loops in place of the task's next step, and its
    /// schemas are bytes of every round's prompt; less `skill` when the
    /// session found no skill.
    pub(crate) fn offered_tools(&self) -> Vec<ToolName> {
        let mut tools = self.mode().tools().to_vec();
        if !self.edit_format().offers_edit_file() {
            tools.retain(|t| *t != ToolName::EditFile);
        }
        if self.reads_first() {
            tools.retain(|t| !matches!(t, ToolName::TodoRead | ToolName::TodoWrite));
        }
        // Loading a skill is offered where there is one to load: its schema
        // is bytes of every request, and a small model calls what it sees.
        if !self.state.instructions.has_skills {
            tools.retain(|t| *t != ToolName::Skill);
        }
        // Reading or ending a background command is offered once there is
        // one (and from then on, so the catalog stays the same).
        if !self.background.any() {
            tools.retain(|t| !matches!(t, ToolName::BashOutput | ToolName::BashKill));
        }
        // A fetch is offered where it can reach something (`web.rs`).
        if !self.web_offered() {
            tools.retain(|t| *t != ToolName::WebFetch);
        }
        if !self.search_offered() {
            tools.retain(|t| *t != ToolName::WebSearch);
        }
        if self.mode() == cortex_protocol::Mode::Agent && self.goal().is_some_and(|g| g.is_active())
        {
            tools.push(ToolName::Goal);
        }
        // A small model whose answers need checking does not hand work to
        // another of itself; a child delegates nothing (`subagents/`).
        let checked = self.model.info().is_some_and(|i| i.verify_answers);
        if !self.subagents.may_delegate() || checked {
            tools.retain(|t| *t != ToolName::Task);
        }
        tools.retain(|t| self.subagents.allows(*t));
        tools
    }

    /// The mode's system prompt, with how to write SEARCH/REPLACE blocks for
    /// a model that edits with them in a mode that may edit, then the
    /// project's instructions (`instructions.rs`).
    fn system_prompt(&self) -> String {
        let mut prompt = system_prompt(self.mode());
        if self.edits_by_blocks() {
            prompt = format!("{prompt}\n{}", crate::blocks::RULES);
        }
        // The project's instructions after the harness's own rules, apart
        // from the user's messages (and so out of compaction's reach).
        if let Some(instructions) = self.instructions() {
            prompt = format!("{prompt}\n\n{instructions}");
        }
        prompt
    }

    /// Whether the model's changes come as SEARCH/REPLACE blocks in its
    /// replies: its format says so and the mode may edit (an Ask-mode reply
    /// that shows a block changes nothing).
    fn edits_by_blocks(&self) -> bool {
        self.edit_format() == EditFormat::Blocks
            && self.mode().tools().contains(&ToolName::EditFile)
    }

    /// The shape of `edit_file` the model is offered (its info says; exact
    /// strings when it has none).
    pub(crate) fn edit_format(&self) -> cortex_protocol::EditFormat {
        self.model.info().map(|i| i.edit_format).unwrap_or_default()
    }

    /// A fresh, time-ordered turn id.
    pub fn new_turn_id() -> TurnId {
        TurnId(new_id())
    }
}
