//! Running the `task` calls of one round: each in a child session, several
//! at once, their steps and use on the parent's timeline as they happen.

use super::Subagents;
use super::copies::WriterCopy;
use super::kinds::{AgentKind, KindCatalog, discover_kinds_async};
use crate::answer::Answer;
use crate::attach::Readiness;
use crate::dispatch::STOPPED_BY_USER;
use crate::{CoreError, Session};
use cortex_protocol::{
    CallSummary, Event, EventKind, Mode, ParentLink, Role, Sandbox, SubagentUse, TaskArgs,
    ToolCallRequest, ToolName, ToolStatus, TurnId, TurnOutcome, WorkspaceMode,
};
use futures::StreamExt;
use std::time::Instant;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio_util::sync::CancellationToken;

/// A child's answer as the parent reads it, at most (the cut stated).
const MAX_ANSWER_BYTES: usize = 32 * 1024;

/// Where the children of one round that may write work.
struct Writers {
    /// Each in a copy of its own, merged back when it ends (two or more
    /// writers, and copies can be made here); else in the workspace itself,
    /// one at a time.
    in_copies: bool,
    /// Held by the writer working in the workspace itself.
    turn: tokio::sync::Semaphore,
    /// Held while a copy is merged back: one merge at a time.
    merging: tokio::sync::Mutex<()>,
}

/// The mode a child of `kind` runs in under a parent in `parent`, and the
/// tools it is offered: the kind's tools within the parent's mode, never
/// `task` or a session tool (plan, spec, goal). Only a kind that keeps a
/// tool that writes runs in Agent mode (a writable guest), and only under
/// an Agent-mode parent.
pub(crate) fn child_tools(parent: Mode, kind: &AgentKind) -> (Mode, Vec<ToolName>) {
    let allowed: Vec<ToolName> = parent
        .tools()
        .iter()
        .copied()
        .filter(|t| !matches!(t, ToolName::Task | ToolName::Plan | ToolName::Spec))
        .filter(|t| kind.tools.as_ref().is_none_or(|k| k.contains(t)))
        .collect();
    let mode = if parent == Mode::Agent && allowed.iter().any(|t| t.mutates_workspace()) {
        Mode::Agent
    } else {
        Mode::Ask
    };
    let tools = allowed.into_iter().filter(|t| mode.offers(*t)).collect();
    (mode, tools)
}

impl Session {
    /// Answer consecutive `task` calls of one round (`group`: their index
    /// in `calls` and arguments), at most the configured number at once.
    /// Returns whether Stop interrupted them.
    pub(crate) async fn run_tasks(
        &mut self,
        turn: &TurnId,
        calls: &[ToolCallRequest],
        group: Vec<(usize, TaskArgs)>,
        cancel: &CancellationToken,
        answers: &mut [Option<Answer>],
    ) -> Result<bool, CoreError> {
        // The parent's environment first: children share it and do not
        // run `.cortex/setup` again.
        if let Readiness::NotReady(error) = self.ensure_attached(turn, cancel).await? {
            for (index, _) in group {
                let answer = Answer::error(format!("the guest is unavailable: {error}"));
                self.answer(turn, &calls[index], answer, 0.0, &mut answers[index])
                    .await?;
            }
            return Ok(false);
        }
        let kinds = discover_kinds_async(self.extension_roots()).await;
        let owner = self.timeline.store().owner(&self.id).await?;
        // Two writers in one tree would undo each other's edits: they work
        // in copies of their own when they can, else take turns.
        let writing = group
            .iter()
            .filter_map(|(_, args)| kinds.find(args.kind.as_deref().unwrap_or("general")))
            .filter(|kind| child_tools(self.mode(), kind).0 == Mode::Agent)
            .count();
        let writers = Writers {
            in_copies: writing >= 2 && self.subagents.parallel() > 1 && self.copies_possible(),
            turn: tokio::sync::Semaphore::new(1),
            merging: tokio::sync::Mutex::new(()),
        };
        let mut results = Vec::new();
        let this: &Session = self;
        let mut running = futures::stream::iter(group.into_iter().map(|(index, args)| {
            let (kinds, owner, writers) = (&kinds, owner.as_deref(), &writers);
            async move {
                let started = Instant::now();
                let ran = this
                    .run_child(turn, &calls[index], args, kinds, owner, writers, cancel)
                    .await;
                (index, ran, started.elapsed().as_secs_f64() * 1000.0)
            }
        }))
        .buffer_unordered(this.subagents.parallel());
        let mut stopped = false;
        while let Some((index, ran, ms)) = running.next().await {
            let (answer, events) = ran?;
            results.extend(events);
            let mut answer = answer.read_in_turn(&this.turn_work);
            stopped |= answer.status == ToolStatus::Stopped;
            this.post_tool_hooks(turn, &calls[index], &mut answer)
                .await?;
            results.push(this.emit_result(turn, &calls[index], &answer, ms).await?);
            answers[index] = Some(answer);
        }
        drop(running);
        for event in &results {
            self.state.apply(event);
        }
        Ok(stopped || cancel.is_cancelled())
    }

    /// Whether a writing child can work in a copy: the workspace is a
    /// folder of this machine, and there is a folder for copies.
    fn copies_possible(&self) -> bool {
        let folder = self
            .subagents
            .template
            .as_ref()
            .and_then(|t| t.workspaces.as_ref());
        folder.is_some() && self.workspace.is_dir()
    }

    /// One `task` call: its child created, run and closed (a child that may
    /// write works in a copy, or waits for its turn first). The answer is
    /// the call's; the events are the parent's `subagent.*` to fold.
    #[allow(clippy::too_many_arguments)]
    async fn run_child(
        &self,
        turn: &TurnId,
        call: &ToolCallRequest,
        args: TaskArgs,
        kinds: &KindCatalog,
        owner: Option<&str>,
        writers: &Writers,
        cancel: &CancellationToken,
    ) -> Result<(Answer, Vec<Event>), CoreError> {
        let name = args.kind.as_deref().unwrap_or("general");
        let Some(kind) = kinds.find(name) else {
            let error = format!(
                "unknown agent kind `{name}`; the kinds are: {}",
                kinds.names()
            );
            return Ok((Answer::error(error), Vec::new()));
        };
        let Some(template) = self.subagents.template.as_deref() else {
            return Ok((Answer::error("subagents are off here"), Vec::new()));
        };
        let (mode, tools) = child_tools(self.mode(), kind);
        let in_copy = mode == Mode::Agent && writers.in_copies;
        let _turn_to_write = match mode {
            Mode::Agent if !in_copy => tokio::select! {
                permit = writers.turn.acquire() => permit.ok(),
                _ = cancel.cancelled() => {
                    let answer = Answer::with_status(ToolStatus::Stopped, STOPPED_BY_USER);
                    return Ok((answer, Vec::new()));
                }
            },
            _ => None,
        };
        let mut config = template.clone();
        config.repository = self.workspace.clone();
        config.mode = mode;
        config.stop_rule = self.stop_rule;
        config.sandbox = Sandbox {
            workspace: if in_copy {
                WorkspaceMode::Copy
            } else {
                WorkspaceMode::InPlace
            },
            ..self.sandbox
        };
        config.checkpoints = None;
        let link = ParentLink {
            session: self.id.clone(),
            call_id: call.id.clone(),
        };
        let started = Instant::now();
        let mut child = match Session::create_child(config, link, tools).await {
            Ok(child) => child,
            Err(e) => {
                let error = format!("the subagent could not start: {e}");
                return Ok((Answer::error(error), Vec::new()));
            }
        };
        if let Some(owner) = owner {
            self.timeline.store().set_owner(child.id(), owner).await?;
        }
        let copy = if in_copy {
            let (from, to) = (self.workspace.clone(), child.workspace.clone());
            let made = tokio::task::spawn_blocking(move || {
                WriterCopy::make(&from, &to).map_err(|e| e.to_string())
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|made| made);
            match made {
                Ok(copy) => Some(copy),
                Err(e) => {
                    child.close().await;
                    let error = format!("the subagent's copy of the workspace failed: {e}");
                    return Ok((Answer::error(error), Vec::new()));
                }
            }
        } else {
            None
        };
        child.env_prepared = true;
        child.web = self.web.clone();
        // The same language servers (started anew by the child, when it
        // writes a file of their language).
        child.set_language_servers(self.lsp.specs.clone());
        child.approvals.set_policy(self.approvals.policy()).await?;
        let mut events = vec![
            self.timeline
                .emit(
                    Some(turn),
                    EventKind::SubagentStarted {
                        call_id: call.id.clone(),
                        child: child.id().clone(),
                        kind: kind.name.clone(),
                        description: args.description.clone(),
                    },
                )
                .await?,
        ];
        let message = format!(
            "{}\n\nTask: {}\n\n{}",
            kind.instructions, args.description, args.prompt
        );
        let mut used = SubagentUse::default();
        let mut seen = child.subscribe();
        // A task of its own: a turn nested in the parent's would be polled
        // on top of the parent's stack, and both are deep. The guard stops
        // the child if the parent's turn is dropped instead of stopped.
        let token = cancel.child_token();
        let _stop_with_parent = token.clone().drop_guard();
        let mut run = tokio::spawn(child_turn(child, message, token));
        let ran = loop {
            tokio::select! {
                biased;
                published = seen.recv() => match published {
                    Ok(published) => self.forward(turn, call, &published.event.kind, &mut used).await?,
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => break (&mut run).await,
                },
                ran = &mut run => break ran,
            }
        };
        loop {
            match seen.try_recv() {
                Ok(published) => {
                    self.forward(turn, call, &published.event.kind, &mut used)
                        .await?
                }
                Err(TryRecvError::Lagged(_)) => {}
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        let (mut child, outcome) = match ran {
            Ok(ran) => ran,
            Err(e) => {
                if let Some(copy) = copy {
                    let _ = tokio::task::spawn_blocking(move || copy.discard()).await;
                }
                let error = format!("the subagent's task ended: {e}");
                return Ok((Answer::error(error), events));
            }
        };
        let answer = match outcome {
            Err(e) => Answer::error(format!("the subagent failed: {e}")),
            Ok(TurnOutcome::Completed { .. }) => Answer::ok(final_answer(&child)),
            Ok(TurnOutcome::Stopped { .. }) if cancel.is_cancelled() => {
                Answer::with_status(ToolStatus::Stopped, STOPPED_BY_USER)
            }
            Ok(TurnOutcome::Stopped { reason }) => {
                Answer::error(format!("the subagent stopped: {reason}"))
            }
            Ok(TurnOutcome::Failed { error }) => {
                Answer::error(format!("the subagent failed: {error}"))
            }
        };
        let child_id = child.id().clone();
        child.close().await;
        let mut answer = answer;
        if let Some(copy) = copy {
            let _one_merge = writers.merging.lock().await;
            let parent = self.workspace.clone();
            let merged = tokio::task::spawn_blocking(move || {
                copy.merge_into(&parent).map_err(|e| e.to_string())
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|merged| merged);
            let note = match merged {
                Ok(merged) => merged.note(),
                Err(e) => format!("[The subagent's changes could not be applied: {e}]"),
            };
            answer.output = format!("{}\n\n{note}", answer.output);
        }
        used.ms = started.elapsed().as_secs_f64() * 1000.0;
        let ended = EventKind::SubagentEnded {
            call_id: call.id.clone(),
            child: child_id,
            status: answer.status,
            used,
        };
        events.push(self.timeline.emit(Some(turn), ended).await?);
        Ok((answer, events))
    }

    /// What the parent's timeline says of one event of a child: a step
    /// for each tool call; its tokens are counted.
    async fn forward(
        &self,
        turn: &TurnId,
        call: &ToolCallRequest,
        kind: &EventKind,
        used: &mut SubagentUse,
    ) -> Result<(), CoreError> {
        match kind {
            EventKind::Usage {
                input_tokens,
                output_tokens,
                cost_usd,
                ..
            } => {
                // A cost only when every request of the child was priced.
                let first = used.input_tokens == 0 && used.output_tokens == 0;
                used.cost_usd = match (first, used.cost_usd, cost_usd) {
                    (true, _, cost) => *cost,
                    (false, Some(sum), Some(cost)) => Some(sum + cost),
                    _ => None,
                };
                used.input_tokens += input_tokens;
                used.output_tokens += output_tokens;
            }
            EventKind::ToolCall {
                name, arguments, ..
            } => {
                let step = EventKind::SubagentStep {
                    call_id: call.id.clone(),
                    name: name.clone(),
                    summary: CallSummary::of(name, arguments).text,
                };
                self.timeline.emit(Some(turn), step).await?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// A child's turn, boxed as a `Send` future: its type holds the parent's
/// turn's (a turn may start children), and naming it breaks the cycle the
/// compiler would otherwise have to see through to know it is `Send`.
fn child_turn(
    mut child: Session,
    message: String,
    cancel: CancellationToken,
) -> futures::future::BoxFuture<'static, (Session, Result<TurnOutcome, CoreError>)> {
    Box::pin(async move {
        let outcome = child.run_turn(&message, cancel).await;
        (child, outcome)
    })
}

/// The child's last answer, cut to [`MAX_ANSWER_BYTES`].
fn final_answer(child: &Session) -> String {
    let text = child
        .history()
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && !m.content.trim().is_empty())
        .map(|m| m.content.trim().to_owned())
        .unwrap_or_default();
    if text.is_empty() {
        return "(the subagent ended without an answer)".to_owned();
    }
    if text.len() <= MAX_ANSWER_BYTES {
        return text;
    }
    let mut end = MAX_ANSWER_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[the subagent's answer is {} bytes; cut at {MAX_ANSWER_BYTES}]",
        &text[..end],
        text.len()
    )
}

impl Subagents {
    /// Whether `tool` is one a child may be offered at all.
    pub(crate) fn allows(&self, tool: ToolName) -> bool {
        self.tools.as_ref().is_none_or(|t| t.contains(&tool))
    }
}
