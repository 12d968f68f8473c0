//! The dispatcher: a short chain of gates before anything runs, then
//! execution. Gates, in order: duplicate call id → unknown tool → mode →
//! arguments → stop rule. Each either passes the call on or answers it with a
//! result the model can read; refusals are `tool.refused` events. The user's
//! `PreToolUse` hooks (`hooks.rs`) come next, then the approval gate
//! (`approvals/`: deny list, policy, rules, the user's answer) last; a call that
//! succeeded meets language servers (`lsp/`), then `PostToolUse` hooks, before it is recorded.
//!
//! Execution: consecutive read-only calls run concurrently; anything else runs
//! alone, in the order the model asked. Stop kills what runs in the guest and
//! answers every unfinished call "stopped by user".

use crate::answer::Answer;
use crate::approvals::Approval;
use crate::hooks::PreTool;
use crate::mcp_session::McpGate;
use crate::stop_rule::{CallCheck, Ran};
use crate::{CoreError, Session, StopRuleState};
use cortex_protocol::{EventKind, ToolArgs, ToolCallRequest, ToolName, ToolStatus, TurnId};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long running calls get to wind down after Stop before they are
/// answered "stopped by user" regardless.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(5);
pub(crate) use cortex_protocol::STOPPED_BY_USER;

/// A call that passed the gates.
enum Job {
    Tool(ToolArgs),
    /// A tool of an MCP server, with arguments its schema accepted.
    Mcp {
        tool: Box<cortex_mcp::McpTool>,
        arguments: serde_json::Map<String, serde_json::Value>,
    },
}

impl Job {
    fn runs_in_guest(&self) -> bool {
        matches!(self, Job::Tool(args) if args.tool().runs_in_guest())
    }

    /// A command or an MCP tool: it may change the workspace without
    /// saying so (`progress.rs`).
    fn is_command(&self) -> bool {
        match self {
            Job::Tool(args) => args.tool() == ToolName::Bash,
            Job::Mcp { .. } => true,
        }
    }
}

/// What the gates decided for one call.
enum Gated {
    Run(Job),
    Answered,
    /// The stop rule fired: the call is answered and the turn ends after
    /// this round.
    StopRule(String),
}

/// How a round's dispatch ended.
pub(crate) enum DispatchEnd {
    /// `any_ok`: at least one call of the round succeeded.
    Continue {
        any_ok: bool,
    },
    Stopped,
    StopRule(String),
}

impl Session {
    /// Gate, run and answer every call of one round, then append the results
    /// to the history in call order.
    pub(crate) async fn dispatch(
        &mut self,
        turn: &TurnId,
        calls: &[ToolCallRequest],
        stop_rule: &mut StopRuleState,
        cancel: &CancellationToken,
    ) -> Result<DispatchEnd, CoreError> {
        let mut answers: Vec<Option<Answer>> = vec![None; calls.len()];
        let (runnable, stop_reason) = self
            .record_and_gate(turn, calls, stop_rule, cancel, &mut answers)
            .await?;
        let attach_error = self.attach_for(turn, &runnable, cancel).await?;
        let commands = runnable.iter().any(|(_, job)| job.is_command());
        if commands {
            self.progress_baseline().await;
        }
        let stopped = self
            .run_jobs(turn, calls, runnable, attach_error, cancel, &mut answers)
            .await?;
        // Stop while a call waited for approval ends the turn too.
        let stopped = stopped || cancel.is_cancelled();
        let any_ok = answers.iter().flatten().any(|a| a.status == ToolStatus::Ok);
        self.note_progress(calls, &answers, commands).await;
        for (call, answer) in calls.iter().zip(&answers) {
            let status = answer.as_ref().map_or(ToolStatus::Stopped, |a| a.status);
            let diff = answer.as_ref().and_then(|a| a.diff.as_deref());
            let output = answer.as_ref().map(|a| a.output.as_str());
            let steer = answer.as_ref().and_then(|a| a.steer);
            let ran = match status {
                ToolStatus::Ok if diff.is_some_and(|d| !d.is_empty()) => Ran::Changed,
                ToolStatus::Ok => Ran::Succeeded,
                _ => Ran::Failed,
            };
            stop_rule.on_result(&call.name, &call.arguments, ran);
            self.turn_work.note_steer(steer);
            self.turn_work.record(call, status, diff, output);
            self.note_seen(call, status).await;
        }
        let refused = self.refused_if_again(calls, stop_rule);
        self.turn_work.set_refused_calls(refused);
        // Every call is answered: the round is complete, and its message
        // and answers join the history as the next request's fold would.
        self.state.close_round();
        Ok(if let Some(reason) = stop_reason {
            DispatchEnd::StopRule(reason)
        } else if stopped {
            DispatchEnd::Stopped
        } else {
            DispatchEnd::Continue { any_ok }
        })
    }

    /// The calls of this round the gates will refuse if the next reply
    /// makes them again: the stop rule's next refusal, and the writes a
    /// held refusal refuses while they come back unchanged, each with the
    /// call its refusal handed over instead, if any. The next request names
    /// them ([`cortex_model::RefusedCalls`]).
    fn refused_if_again(
        &self,
        calls: &[ToolCallRequest],
        stop_rule: &StopRuleState,
    ) -> Vec<cortex_model::RefusedCall> {
        let held = calls.iter().filter_map(|call| {
            let tool = call.name.parse::<ToolName>().ok()?;
            let args = ToolArgs::parse(tool, &call.arguments).ok()?;
            self.turn_work
                .holds_against(&args)
                .then(|| cortex_model::RefusedCall {
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    instead: self.turn_work.handed_over_for(&args).map(str::to_owned),
                })
        });
        let mut refused: Vec<cortex_model::RefusedCall> =
            stop_rule.refused_next().into_iter().collect();
        for call in held {
            match refused
                .iter_mut()
                .find(|r| r.matches(&call.name, &call.arguments))
            {
                Some(known) => known.instead = known.instead.take().or(call.instead),
                None => refused.push(call),
            }
        }
        refused
    }

    /// Record each call (`tool.call`) and pass it through the gates. Returns
    /// the calls that may run, and the stop rule's reason once it fired
    /// (then nothing of the round runs).
    async fn record_and_gate(
        &mut self,
        turn: &TurnId,
        calls: &[ToolCallRequest],
        stop_rule: &mut StopRuleState,
        cancel: &CancellationToken,
        answers: &mut [Option<Answer>],
    ) -> Result<(Vec<(usize, Job)>, Option<String>), CoreError> {
        let mut runnable: Vec<(usize, Job)> = Vec::new();
        // A round budget (Chat) or deadline (Bot) refuses the whole round.
        let mut stop_reason: Option<String> = stop_rule.on_tool_round();
        for (index, call) in calls.iter().enumerate() {
            // Before the call is recorded, which adds its id.
            let duplicate = self.state.call_ids.contains(call.id.as_str());
            let asked = EventKind::ToolCall {
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            };
            self.record(Some(turn), asked).await?;
            if let Some(reason) = &stop_reason {
                let answer = Answer::with_status(ToolStatus::Refused, reason.clone());
                self.answer(turn, call, answer, 0.0, &mut answers[index])
                    .await?;
                continue;
            }
            let slot = &mut answers[index];
            match self
                .gate(turn, call, duplicate, stop_rule, cancel, slot)
                .await?
            {
                Gated::Run(args) => runnable.push((index, args)),
                Gated::Answered => {}
                Gated::StopRule(reason) => stop_reason = Some(reason),
            }
        }
        if let Some(reason) = &stop_reason {
            // Nothing of this round runs once a stop rule fired.
            for (index, _) in runnable.drain(..) {
                let answer = Answer::with_status(ToolStatus::Refused, reason.clone());
                self.answer(turn, &calls[index], answer, 0.0, &mut answers[index])
                    .await?;
            }
        }
        Ok((runnable, stop_reason))
    }

    /// Attach the guest when a call that passed the gates runs in it.
    /// Returns why the guest is unavailable, if it is.
    async fn attach_for(
        &mut self,
        turn: &TurnId,
        runnable: &[(usize, Job)],
        cancel: &CancellationToken,
    ) -> Result<Option<String>, CoreError> {
        if !runnable.iter().any(|(_, job)| job.runs_in_guest()) {
            return Ok(None);
        }
        Ok(match self.ensure_attached(turn, cancel).await? {
            crate::attach::Readiness::Ready => None,
            crate::attach::Readiness::NotReady(error) => Some(error),
        })
    }

    /// Run the calls that passed the gates, in order; consecutive read-only
    /// ones together. Returns whether Stop interrupted them.
    async fn run_jobs(
        &mut self,
        turn: &TurnId,
        calls: &[ToolCallRequest],
        runnable: Vec<(usize, Job)>,
        attach_error: Option<String>,
        cancel: &CancellationToken,
        answers: &mut [Option<Answer>],
    ) -> Result<bool, CoreError> {
        let mut stopped = false;
        let mut pending = runnable.into_iter().peekable();
        while let Some((index, job)) = pending.next() {
            let call = &calls[index];
            if stopped || cancel.is_cancelled() {
                stopped = true;
                let answer = Answer::with_status(ToolStatus::Stopped, STOPPED_BY_USER);
                self.answer(turn, call, answer, 0.0, &mut answers[index])
                    .await?;
                continue;
            }
            if let (Some(error), true) = (&attach_error, job.runs_in_guest()) {
                let answer = Answer::error(format!("the guest is unavailable: {error}"));
                self.answer(turn, call, answer, 0.0, &mut answers[index])
                    .await?;
                continue;
            }
            let started = Instant::now();
            let args = match job {
                Job::Tool(args) => args,
                Job::Mcp { tool, arguments } => {
                    let answer = self.run_mcp(turn, &tool, arguments, cancel).await?;
                    stopped |= answer.status == ToolStatus::Stopped;
                    self.answer(turn, call, answer, ms(started), &mut answers[index])
                        .await?;
                    continue;
                }
            };
            let current = self.written_file_now(&args).await;
            let refusal = match current.as_deref() {
                Some(now) => self.unread_write(&args, now),
                None => None,
            };
            let refusal = match refusal {
                Some(refusal) => Some(refusal),
                None => self.unwanted_write(&args, current.as_deref()),
            };
            if let Some(mut answer) = refusal {
                answer.output = crate::steer::wording::render(answer.output);
                self.answer(turn, call, answer, 0.0, &mut answers[index])
                    .await?;
                continue;
            }
            if let ToolArgs::Task(first) = args {
                let group = take_tasks(index, first, &mut pending);
                stopped = self.run_tasks(turn, calls, group, cancel, answers).await?;
                continue;
            }
            match self.run_session_tool(turn, args).await? {
                Ok(answer) => {
                    self.answer(turn, call, answer, ms(started), &mut answers[index])
                        .await?;
                }
                Err(args) => {
                    let group = take_group(index, args, &mut pending);
                    stopped = self
                        .run_group_recorded(turn, calls, group, cancel, answers)
                        .await?;
                }
            }
        }
        Ok(stopped)
    }

    /// [`Session::run_group`], then its results folded into the state: they
    /// were recorded as they landed, while the group ran on a shared borrow.
    async fn run_group_recorded(
        &mut self,
        turn: &TurnId,
        calls: &[ToolCallRequest],
        group: Vec<(usize, ToolArgs)>,
        cancel: &CancellationToken,
        answers: &mut [Option<Answer>],
    ) -> Result<bool, CoreError> {
        let mut results = Vec::new();
        let ran = self
            .run_group(turn, calls, group, cancel, answers, &mut results)
            .await;
        for event in &results {
            self.state.apply(event);
        }
        ran
    }

    /// The gate chain for one call. Answers the call itself when a gate
    /// refuses it.
    async fn gate(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        duplicate: bool,
        stop_rule: &mut StopRuleState,
        cancel: &CancellationToken,
        slot: &mut Option<Answer>,
    ) -> Result<Gated, CoreError> {
        let tools = self.offered_tools();
        // Named in every refusal, so the model can pick another.
        let offered = tools
            .iter()
            .map(|t| t.as_str().to_owned())
            .chain(self.mcp_offered().into_iter().map(|t| t.name))
            .collect::<Vec<_>>()
            .join(", ");
        let parsed = call.name.parse::<ToolName>();
        let refusal = if duplicate {
            Some(format!(
                "call id `{}` was already used; a call runs at most once",
                call.id
            ))
        } else if parsed.is_err() && call.name.starts_with("mcp__") {
            return self
                .gate_mcp_call(turn, call, &offered, stop_rule, cancel, slot)
                .await;
        } else {
            match &parsed {
                Err(_) => Some(format!(
                    "unknown tool `{}`; the tools available in {} mode are: {}",
                    call.name,
                    self.mode(),
                    offered
                )),
                // The blocks of a `blocks` reply run as edit_file calls.
                Ok(ToolName::EditFile)
                    if self.mode().tools().contains(&ToolName::EditFile)
                        && self.edit_format() == cortex_protocol::EditFormat::Blocks =>
                {
                    None
                }
                Ok(ToolName::EditFile)
                    if self.mode().tools().contains(&ToolName::EditFile)
                        && !tools.contains(&ToolName::EditFile) =>
                {
                    Some(not_offered_edit())
                }
                Ok(tool @ (ToolName::BashOutput | ToolName::BashKill))
                    if self.mode().offers(*tool) && !tools.contains(tool) =>
                {
                    Some(format!(
                        "`{tool}` reads or ends a background command, and none was started in \
                         this session: call bash with background: true first"
                    ))
                }
                // Refused below with the network policy's reason.
                Ok(tool @ (ToolName::WebFetch | ToolName::WebSearch))
                    if self.mode().offers(*tool) =>
                {
                    None
                }
                Ok(tool) if !tools.contains(tool) => Some(format!(
                    "tool `{tool}` is not available in {} mode; the tools available are: {}",
                    self.mode(),
                    offered
                )),
                Ok(_) => None,
            }
        };
        let tool = match (refusal, parsed) {
            (None, Ok(tool)) => tool,
            (refusal, _) => {
                let reason = refusal.unwrap_or_default();
                self.refuse(turn, call, reason, slot).await?;
                return Ok(Gated::Answered);
            }
        };
        let args = match ToolArgs::parse(tool, &call.arguments) {
            Ok(args) => args,
            Err(e) => {
                self.answer(turn, call, Answer::error(e.to_string()), 0.0, slot)
                    .await?;
                return Ok(Gated::Answered);
            }
        };
        if let Some(reason) = self.web_refusal(&args) {
            self.refuse(turn, call, reason, slot).await?;
            return Ok(Gated::Answered);
        }
        // Writing the same content (or todo list) again gives the same
        // result, as an edit does: a third identical one in a row is refused
        // (a small model's loop).
        let idempotent = tool.is_read_only()
            || matches!(
                tool,
                ToolName::EditFile | ToolName::WriteFile | ToolName::TodoWrite
            );
        self.gate_rest(
            turn,
            call,
            idempotent,
            Job::Tool(args),
            stop_rule,
            cancel,
            slot,
        )
        .await
    }

    /// The MCP gates (offered in this mode, arguments against the server's
    /// schema), then the stop rule and approval like any call.
    async fn gate_mcp_call(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        offered: &str,
        stop_rule: &mut StopRuleState,
        cancel: &CancellationToken,
        slot: &mut Option<Answer>,
    ) -> Result<Gated, CoreError> {
        match self.gate_mcp(call, offered) {
            McpGate::Refuse(reason) => {
                self.refuse(turn, call, reason, slot).await?;
                Ok(Gated::Answered)
            }
            McpGate::Error(message) => {
                self.answer(turn, call, Answer::error(message), 0.0, slot)
                    .await?;
                Ok(Gated::Answered)
            }
            McpGate::Run {
                tool,
                arguments,
                read_only,
            } => {
                let job = Job::Mcp { tool, arguments };
                self.gate_rest(turn, call, read_only, job, stop_rule, cancel, slot)
                    .await
            }
        }
    }

    /// The last gates of every call: the stop rule, then approval.
    #[allow(clippy::too_many_arguments)]
    async fn gate_rest(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        idempotent: bool,
        job: Job,
        stop_rule: &mut StopRuleState,
        cancel: &CancellationToken,
        slot: &mut Option<Answer>,
    ) -> Result<Gated, CoreError> {
        match stop_rule.check_call(&call.name, &call.arguments, idempotent) {
            CallCheck::Run => {}
            CallCheck::Refuse(reason) => {
                // A repeat: the next reply may not call the tool again.
                let bars = call
                    .name
                    .parse()
                    .ok()
                    .map(|tool| cortex_protocol::CallSteer::Bars { tool });
                self.refuse_steering(turn, call, reason, bars, slot).await?;
                return Ok(Gated::Answered);
            }
            CallCheck::Stop(reason) => {
                self.refuse(turn, call, reason.clone(), slot).await?;
                return Ok(Gated::StopRule(reason));
            }
        }
        // The PreToolUse hooks: after the gates that forbid, before
        // approvals, so a hook can refuse what approvals would allow (or
        // make the user decide it) but never allow what a gate refused.
        let hook_asks = match self.pre_tool_hooks(turn, call).await? {
            PreTool::Go => None,
            PreTool::Ask(why) => Some(why),
            PreTool::Refuse(reason) => {
                self.refuse(turn, call, reason, slot).await?;
                return Ok(Gated::Answered);
            }
        };
        let args = match &job {
            Job::Tool(args) => Some(args),
            Job::Mcp { .. } => None,
        };
        match self.approve(turn, call, args, hook_asks, cancel).await? {
            Approval::Run => Ok(Gated::Run(job)),
            Approval::Refuse(reason) => {
                self.refuse(turn, call, reason, slot).await?;
                Ok(Gated::Answered)
            }
            Approval::Stopped => {
                let answer = Answer::with_status(ToolStatus::Stopped, STOPPED_BY_USER);
                self.answer(turn, call, answer, 0.0, slot).await?;
                Ok(Gated::Answered)
            }
        }
    }

    /// A gate's refusal: `tool.refused`, then the result the model reads.
    async fn refuse(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        reason: String,
        slot: &mut Option<Answer>,
    ) -> Result<(), CoreError> {
        self.refuse_steering(turn, call, reason, None, slot).await
    }

    /// [`Session::refuse`], deciding `steer` about the next reply.
    async fn refuse_steering(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        reason: String,
        steer: Option<cortex_protocol::CallSteer>,
        slot: &mut Option<Answer>,
    ) -> Result<(), CoreError> {
        let reason = crate::steer::wording::render(reason);
        self.timeline
            .emit(
                Some(turn),
                EventKind::ToolRefused {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    reason: reason.clone(),
                },
            )
            .await?;
        let answer = Answer::with_status(ToolStatus::Refused, reason).steering(steer);
        self.answer(turn, call, answer, 0.0, slot).await
    }

    /// Run a group of calls concurrently, emitting each result as it lands.
    /// Returns whether Stop interrupted it.
    async fn run_group(
        &self,
        turn: &TurnId,
        calls: &[ToolCallRequest],
        group: Vec<(usize, ToolArgs)>,
        cancel: &CancellationToken,
        answers: &mut [Option<Answer>],
        results: &mut Vec<cortex_protocol::Event>,
    ) -> Result<bool, CoreError> {
        let indices: Vec<usize> = group.iter().map(|(index, _)| *index).collect();
        let mut running: FuturesUnordered<_> = group
            .into_iter()
            .map(|(index, args)| {
                let call_id = calls[index].id.clone();
                async move {
                    let started = Instant::now();
                    let answer = self.run_shared(turn, &call_id, args, cancel).await;
                    (index, answer, ms(started))
                }
            })
            .collect();
        let mut stopping = false;
        let grace = tokio::time::sleep(Duration::MAX);
        tokio::pin!(grace);
        loop {
            tokio::select! {
                next = running.next() => match next {
                    Some((index, answer, ms)) => {
                        let mut answer = answer?.read_in_turn(&self.turn_work);
                        if stopping && answer.status != ToolStatus::Ok {
                            answer = Answer::with_status(ToolStatus::Stopped, STOPPED_BY_USER);
                        }
                        self.lsp_findings(&calls[index], &mut answer, cancel).await;
                        self.post_tool_hooks(turn, &calls[index], &mut answer).await?;
                        results.push(self.emit_result(turn, &calls[index], &answer, ms).await?);
                        answers[index] = Some(answer);
                    }
                    None => break,
                },
                _ = cancel.cancelled(), if !stopping => {
                    stopping = true;
                    if let Some(guest) = &self.guest
                        && let Err(e) = guest.stop().await
                    {
                        tracing::warn!("guest did not take stop: {e}");
                    }
                    grace.as_mut().reset(tokio::time::Instant::now() + STOP_GRACE);
                }
                _ = &mut grace, if stopping => break,
            }
        }
        drop(running);
        // Calls that did not wind down within the grace period.
        for index in indices {
            if answers[index].is_none() {
                let answer = Answer::with_status(ToolStatus::Stopped, STOPPED_BY_USER);
                results.push(self.emit_result(turn, &calls[index], &answer, 0.0).await?);
                answers[index] = Some(answer);
            }
        }
        Ok(stopping)
    }

    pub(crate) async fn answer(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        answer: Answer,
        ms: f64,
        slot: &mut Option<Answer>,
    ) -> Result<(), CoreError> {
        let mut answer = answer.read_in_turn(&self.turn_work);
        self.post_tool_hooks(turn, call, &mut answer).await?;
        let event = self.emit_result(turn, call, &answer, ms).await?;
        self.state.apply(&event);
        *slot = Some(answer);
        Ok(())
    }

    pub(crate) async fn emit_result(
        &self,
        turn: &TurnId,
        call: &ToolCallRequest,
        answer: &Answer,
        ms: f64,
    ) -> Result<cortex_protocol::Event, CoreError> {
        self.timeline
            .emit(
                Some(turn),
                EventKind::ToolResult {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    status: answer.status,
                    output: answer.output.clone(),
                    ms,
                    diff: answer.diff.clone(),
                    attachments: answer.attachments.clone(),
                    steer: answer.steer,
                },
            )
            .await
    }
}

/// A group to run together: this call, plus the read-only calls right
/// after it when it is read-only itself.
fn take_group(
    index: usize,
    args: ToolArgs,
    pending: &mut std::iter::Peekable<std::vec::IntoIter<(usize, Job)>>,
) -> Vec<(usize, ToolArgs)> {
    let mut group = vec![(index, args)];
    while group[0].1.tool().is_read_only()
        && let Some((next, Job::Tool(next_args))) = pending.peek()
        && next_args.tool().is_read_only()
    {
        let next = *next;
        if let Some((_, Job::Tool(next_args))) = pending.next() {
            group.push((next, next_args));
        }
    }
    group
}

/// The `task` calls to run together: this one and those right after it.
fn take_tasks(
    index: usize,
    first: cortex_protocol::TaskArgs,
    pending: &mut std::iter::Peekable<std::vec::IntoIter<(usize, Job)>>,
) -> Vec<(usize, cortex_protocol::TaskArgs)> {
    let mut group = vec![(index, first)];
    while let Some((_, Job::Tool(ToolArgs::Task(_)))) = pending.peek() {
        if let Some((next, Job::Tool(ToolArgs::Task(args)))) = pending.next() {
            group.push((next, args));
        }
    }
    group
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// The refusal of an `edit_file` call from a model that edits by writing
/// whole files (the `whole` format).
fn not_offered_edit() -> String {
    "edit_file is not offered to this model: to change a file, call write_file with its whole \
     new content"
        .to_owned()
}
