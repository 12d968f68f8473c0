//! Timeline events: the session's ordered, append-only, persisted log.
//!
//! Every client (the CLI's human output, `exec --json`, the API's SSE stream)
//! renders these same events. On the wire an event is one JSON object:
//! `{"seq":7,"ts":"…","session_id":"…","turn_id":"…","type":"tool.call","payload":{…}}`.

use crate::approval::{ApprovalPolicy, ApprovalResolution};
use crate::compaction::{CompactionKept, CompactionTrigger};
use crate::goal::{GoalBudget, GoalStep, PauseReason};
use crate::ids::{CallId, SessionId, TurnId};
use crate::mode::Mode;
use crate::rewind::{RewindDiff, RewindScope};
use crate::sandbox::Sandbox;
use crate::spec::SpecPhase;
use crate::steer::{CallSteer, Doubt, NextReply, ReminderKind};
use crate::subagent::{ParentLink, SubagentUse};
use crate::tools::Todo;
use serde::{Deserialize, Serialize};

/// One entry of a session's timeline: an [`EventKind`] with its place in the
/// log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Per-session, monotonic, starting at 1; assigned by the store.
    pub seq: u64,
    /// RFC 3339 timestamp with milliseconds.
    pub ts: String,
    /// The session whose timeline it belongs to.
    pub session_id: SessionId,
    /// The turn it happened in; absent for events outside any turn (such as
    /// `session.created`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<TurnId>,
    /// What happened: `type` and `payload` on the wire.
    #[serde(flatten)]
    pub kind: EventKind,
}

pub use rfc3339::{now_rfc3339, parse_rfc3339_ms};

mod kind;
mod rfc3339;
mod status;
#[cfg(test)]
mod tests;

use status::is_zero;
pub use status::{
    OutputStream, PruneScope, STOPPED_BY_USER, StopRule, ToolStatus, TurnFinish, TurnOutcome,
    retry_status,
};

/// Every event type, named on the wire as in the design (`turn.started`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "payload")]
pub enum EventKind {
    /// The session exists: the first event of every timeline.
    #[serde(rename = "session.created")]
    SessionCreated {
        /// The repository the session works on (its canonical path).
        repository: String,
        /// The mode it starts in.
        mode: Mode,
        /// The model it talks to, as configured.
        model: String,
        /// When its turns stop on their own.
        stop_rule: StopRule,
        /// Absent in sessions recorded before sandbox settings existed.
        #[serde(default)]
        sandbox: Sandbox,
        /// The `task` call this session is the subagent of, if it is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<ParentLink>,
    },
    /// The guest runtime is being started for this session.
    #[serde(rename = "runtime.starting")]
    RuntimeStarting {
        /// The guest provider that starts it.
        provider: String,
    },
    /// The guest is running and answering requests.
    #[serde(rename = "runtime.attached")]
    RuntimeAttached {
        /// The guest provider that started it.
        provider: String,
        /// Start to attached, in milliseconds.
        ms: f64,
        /// The isolation layers in force, e.g. `namespaces(…) mounts cgroup
        /// v1 landlock no-new-privs seccomp`, or `none (full-access)`.
        #[serde(default)]
        isolation: String,
    },
    /// A sandbox layer that could not be applied, and why.
    #[serde(rename = "runtime.warning")]
    RuntimeWarning {
        /// What was not applied and why, for the user.
        message: String,
    },
    /// The guest could not be started; the turn that needed it fails.
    #[serde(rename = "runtime.failed")]
    RuntimeFailed {
        /// Why, for the user.
        error: String,
    },
    /// The workspace is being prepared (the repository's `.cortex/setup`
    /// runs, if it may).
    #[serde(rename = "env.preparing")]
    EnvPreparing {
        /// The workspace folder being prepared.
        workspace: String,
    },
    /// Output of the repository's `.cortex/setup`, as it runs.
    #[serde(rename = "env.output")]
    EnvOutput {
        /// Which stream it came from.
        stream: OutputStream,
        /// The text, as it arrived.
        text: String,
    },
    /// The workspace is ready for the turn's tools.
    #[serde(rename = "env.ready")]
    EnvReady {
        /// Preparation time, in milliseconds.
        ms: f64,
    },
    /// Preparing the workspace failed; the turn that needed it fails.
    #[serde(rename = "env.failed")]
    EnvFailed {
        /// Why, for the user.
        error: String,
    },
    /// The repository's `.cortex/setup` was not run, and why: its content
    /// is not the one committed in `HEAD` (a script written in the working
    /// tree, by a model or anyone, never runs by itself).
    #[serde(rename = "env.setup_skipped")]
    EnvSetupSkipped {
        /// Why it was not run, for the user.
        reason: String,
    },
    /// An MCP server of the session started: the tools it offers (as
    /// `mcp__NAME__TOOL`), one line per tool it offered that was dropped
    /// (an invalid name or schema) and its start time.
    #[serde(rename = "mcp.server_ready")]
    McpServerReady {
        /// The server's name in the user's config.
        name: String,
        /// The tools it offers, as `mcp__NAME__TOOL`.
        tools: Vec<String>,
        /// One line per dropped tool: its name and why.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rejected: Vec<String>,
        /// Start time, in milliseconds.
        ms: f64,
    },
    /// An MCP server failed to start, hung or died: its tools are gone for
    /// the rest of the session, and the turn goes on without them.
    #[serde(rename = "mcp.server_failed")]
    McpServerFailed {
        /// The server's name in the user's config.
        name: String,
        /// What went wrong, for the user.
        reason: String,
    },
    /// A turn begins.
    #[serde(rename = "turn.started")]
    TurnStarted {
        /// The message the turn answers (the user's, or the harness's
        /// continuation prompt for a goal).
        message: String,
        /// The mode the turn runs in; it holds for the whole turn.
        mode: Mode,
    },
    /// The images the user attached to the turn's message, right after
    /// `turn.started`: named, their bytes kept once in the store (a resumed
    /// session reads them back from there).
    #[serde(rename = "turn.images")]
    TurnImages {
        /// In the order the user gave them.
        images: Vec<crate::ImageRef>,
    },
    /// What the harness told the model about the workspace with this turn's
    /// message (the files in it, read in the guest once attached), so the
    /// model works from real paths instead of guessed ones. The history puts
    /// it before the message.
    #[serde(rename = "turn.context")]
    TurnContext {
        /// The text given to the model.
        text: String,
    },
    /// The project instructions the model is given (`AGENTS.md` files, or
    /// `CLAUDE.md` where a folder has none): recorded at a turn's start when
    /// they differ from what the model was last given, and within a turn
    /// when it first touches a folder that holds one. Each event carries the
    /// whole set, so the latest one is what every following request sends
    /// (a resumed session reads it back rather than the files).
    #[serde(rename = "instructions.loaded")]
    InstructionsLoaded {
        /// The files read, in the order given: the user's own file first
        /// (shown with `~` for the home folder), then the repository's root
        /// and nearer folders (workspace-relative paths).
        files: Vec<String>,
        /// Bytes of the files' text given to the model.
        bytes: u64,
        /// Whether the cap cut them (the text says where).
        cut: bool,
        /// The text given to the model, as sent.
        text: String,
    },
    /// The harness's own message to the model within a turn (the history
    /// carries it as a user message): asking a model that answered without
    /// using any tool to check the answer first.
    #[serde(rename = "turn.reminder")]
    TurnReminder {
        /// The text given to the model.
        text: String,
        /// The check or rule it comes from (absent in timelines recorded
        /// before reminders had kinds).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<ReminderKind>,
        /// What it asks of the next reply: the decision the next request
        /// is built from (the text only renders it).
        #[serde(default, skip_serializing_if = "NextReply::is_free")]
        next: NextReply,
    },
    /// A request to the model is sent (one per round).
    #[serde(rename = "model.request")]
    ModelRequest {
        /// The round of the turn, from 1.
        round: u32,
        /// The model asked.
        model: String,
        /// Messages of history sent.
        messages: usize,
        /// Names of the tools offered.
        tools: Vec<String>,
        /// Approximate size of the request's content (system prompt, history
        /// and tool schemas), in bytes.
        bytes: usize,
    },
    /// A model request failed in a way worth retrying; it is sent again
    /// after `delay_ms`, unless the turn is stopped meanwhile.
    #[serde(rename = "model.retry")]
    ModelRetry {
        /// The round being retried.
        round: u32,
        /// Which retry this is, from 1.
        attempt: u32,
        /// How many retries there are at most (absent in timelines written
        /// before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        of: Option<u32>,
        /// The wait before it, in milliseconds.
        delay_ms: u64,
        /// The error that caused it.
        reason: String,
    },
    /// How much of a long prompt the model has read so far (local models,
    /// whose first round can take a minute on a small machine): a sign of
    /// life, carrying nothing the history needs.
    #[serde(rename = "model.progress")]
    ModelProgress {
        /// The round being read.
        round: u32,
        /// Prompt tokens read so far (tokens the model had cached count
        /// as read).
        done: u64,
        /// Prompt tokens of the request in all.
        total: u64,
    },
    /// A piece of the assistant's answer text, as it streams; the round's
    /// `message.done` carries the whole text.
    #[serde(rename = "message.delta")]
    MessageDelta {
        /// The next piece of text.
        text: String,
    },
    /// The assistant message of a round is complete. `provider_items` are
    /// what the provider needs back with it in the next request
    /// (reasoning items, signed thinking), stored so a resumed session
    /// sends what the live one would have.
    #[serde(rename = "message.done")]
    MessageDone {
        /// The whole text of the message.
        text: String,
        /// Opaque items the provider gets back with the message.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        provider_items: Vec<crate::message::ProviderItem>,
    },
    /// The model asked for a tool call; exactly one `tool.result` with the
    /// same `call_id` follows, whatever happens to it.
    #[serde(rename = "tool.call")]
    ToolCall {
        /// The call, as the model (or the harness) named it.
        call_id: CallId,
        /// The tool's name as the model wrote it, which may be unknown.
        name: String,
        /// The raw argument text the model produced.
        arguments: String,
    },
    /// A gate refused the call before anything ran (mode, unknown tool,
    /// invalid arguments); its `tool.result`, status `refused`, follows.
    #[serde(rename = "tool.refused")]
    ToolRefused {
        /// The refused call.
        call_id: CallId,
        /// The tool's name as the model wrote it.
        name: String,
        /// Why, as the model reads it.
        reason: String,
    },
    /// Output of a running call, as it arrives; the `tool.result` carries
    /// what the model is given.
    #[serde(rename = "tool.output.delta")]
    ToolOutputDelta {
        /// The running call.
        call_id: CallId,
        /// Which stream it came from.
        stream: OutputStream,
        /// The text, as it arrived.
        text: String,
    },
    /// A call ended, run or not; exactly one per `tool.call`.
    #[serde(rename = "tool.result")]
    ToolResult {
        /// The call that ended.
        call_id: CallId,
        /// The tool's name.
        name: String,
        /// How it ended.
        status: ToolStatus,
        /// What the model is given back.
        output: String,
        /// Run time, in milliseconds.
        ms: f64,
        /// Unified diff of what a write or edit changed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
        /// Images an MCP tool returned, given to the model with `output`
        /// (at most 2 MiB of them per call).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<crate::Attachment>,
        /// What a refusal decided about the next reply, if anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        steer: Option<CallSteer>,
    },
    /// The session's mode changed: the user switched it, or accepted a plan
    /// or a spec's task list (both switch to Agent). The model never changes
    /// the mode.
    #[serde(rename = "mode.changed")]
    ModeChanged {
        /// The mode before.
        from: Mode,
        /// The mode now.
        to: Mode,
    },
    /// The plan tool proposed a plan; it waits for the user's accept or
    /// reject.
    #[serde(rename = "plan.proposed")]
    PlanProposed {
        /// Counts the session's proposals, from 1.
        version: u32,
        /// The plan's short title.
        title: String,
        /// The plan, in Markdown with a mermaid diagram.
        markdown: String,
    },
    /// The user accepted plan `version`: the session is in Agent mode and
    /// a turn implementing it follows.
    #[serde(rename = "plan.accepted")]
    PlanAccepted {
        /// The plan accepted.
        version: u32,
    },
    /// The user rejected plan `version`; the feedback is the next turn's
    /// message and the session stays in Plan mode.
    #[serde(rename = "plan.rejected")]
    PlanRejected {
        /// The plan rejected.
        version: u32,
        /// What the user wants changed.
        feedback: String,
    },
    /// The spec tool proposed `phase` (spec versions count every proposal
    /// of the session); it waits for the user's accept or reject.
    #[serde(rename = "spec.proposed")]
    SpecProposed {
        /// The phase proposed.
        phase: SpecPhase,
        /// Counts the session's spec proposals, from 1.
        version: u32,
        /// The phase, in Markdown.
        markdown: String,
    },
    /// The user accepted the proposal `version` of `phase`: the model is
    /// asked for the next phase, or (tasks) the session is in Agent mode and
    /// the spec's files are written.
    #[serde(rename = "spec.accepted")]
    SpecAccepted {
        /// The phase accepted.
        phase: SpecPhase,
        /// The proposal accepted.
        version: u32,
    },
    /// The user rejected the proposal `version`; the feedback is the next
    /// turn's message and the session stays in Spec mode.
    #[serde(rename = "spec.rejected")]
    SpecRejected {
        /// The phase rejected.
        phase: SpecPhase,
        /// The proposal rejected.
        version: u32,
        /// What the user wants changed.
        feedback: String,
    },
    /// The accepted spec's files, written into the workspace by the guest
    /// (paths relative to the workspace root).
    #[serde(rename = "spec.written")]
    SpecWritten {
        /// The files written.
        paths: Vec<String>,
    },
    /// The todo list was replaced: by `todo_write`, or seeded from an
    /// accepted plan's steps.
    #[serde(rename = "todo.updated")]
    TodoUpdated {
        /// The whole new list.
        todos: Vec<Todo>,
    },
    /// The session's approval policy, set at creation or changed by the
    /// user (never by answering an approval).
    #[serde(rename = "approval.policy")]
    ApprovalPolicySet {
        /// The policy now in force.
        policy: ApprovalPolicy,
    },
    /// A call waits for the user's approval (`ask` policy, no rule covers
    /// it): `summary` is what would run, `reason` why it asks.
    #[serde(rename = "approval.requested")]
    ApprovalRequested {
        /// The waiting call.
        call_id: CallId,
        /// The tool's name.
        name: String,
        /// What would run, for the user.
        summary: String,
        /// Why it asks, for the user.
        reason: String,
    },
    /// The approval request of `call_id` ended.
    #[serde(rename = "approval.resolved")]
    ApprovalResolved {
        /// The call that waited.
        call_id: CallId,
        /// How it ended.
        decision: ApprovalResolution,
    },
    /// The user set (or replaced) the session's goal; it starts active.
    #[serde(rename = "goal.set")]
    GoalSet {
        /// What the goal is to achieve, in the user's words.
        objective: String,
        /// Limits after which it pauses.
        #[serde(default)]
        budget: GoalBudget,
    },
    /// The model replaced the goal's steps (the `goal` tool).
    #[serde(rename = "goal.updated")]
    GoalUpdated {
        /// Steps done.
        done: usize,
        /// Steps in all.
        total: usize,
        /// The whole new list.
        steps: Vec<GoalStep>,
    },
    /// The goal paused: no continuation turn starts until it is resumed.
    #[serde(rename = "goal.paused")]
    GoalPaused {
        /// Why.
        reason: PauseReason,
    },
    /// The user resumed the paused goal; it is active again.
    #[serde(rename = "goal.resumed")]
    GoalResumed {},
    /// The model completed the goal: every step done, with evidence.
    #[serde(rename = "goal.completed")]
    GoalCompleted {
        /// What the model says shows the objective is met.
        evidence: String,
    },
    /// The user cleared the goal; the session has none.
    #[serde(rename = "goal.cleared")]
    GoalCleared {},
    /// This turn was started by the harness to continue the active goal (its
    /// message is the continuation prompt, not the user's); `continuation`
    /// counts them since the goal was set or resumed.
    #[serde(rename = "goal.continued")]
    GoalContinued {
        /// Continuation turns so far, this one included.
        continuation: u32,
    },
    /// Tokens one model request used, as the provider reported them.
    #[serde(rename = "usage")]
    Usage {
        /// The whole prompt, cached parts included.
        input_tokens: u64,
        /// Tokens the model produced.
        output_tokens: u64,
        /// Prompt tokens read from the provider's cache.
        #[serde(default, skip_serializing_if = "is_zero")]
        cache_read_tokens: u64,
        /// Prompt tokens written to the provider's cache.
        #[serde(default, skip_serializing_if = "is_zero")]
        cache_write_tokens: u64,
        /// Estimated from the model's list prices, when they are known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// The model's thinking (reasoning summary), apart from its answer.
    #[serde(rename = "thinking.delta")]
    ThinkingDelta {
        /// The next piece of thinking.
        text: String,
    },
    /// A compaction begins (before a model request that would pass the
    /// context threshold, or on request). Token figures are estimates: the
    /// provider's last usage where known, else about 4 bytes a token.
    #[serde(rename = "compaction.started")]
    CompactionStarted {
        /// What started it.
        trigger: CompactionTrigger,
        /// Estimated size of the history, in tokens.
        tokens_before: u64,
        /// The model's context window, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context_window: Option<u64>,
        /// Messages in the history.
        messages: usize,
    },
    /// The history was compacted: it is now one message, `context`, followed
    /// by the last `kept.recent_messages` messages it had before.
    #[serde(rename = "compaction.done")]
    CompactionDone {
        /// What started it.
        trigger: CompactionTrigger,
        /// Estimated size of the history before, in tokens.
        tokens_before: u64,
        /// Estimated size of the history after, in tokens.
        tokens_after: u64,
        /// Messages in the history before.
        messages_before: usize,
        /// Messages in the history after.
        messages_after: usize,
        /// Messages replaced by the summary.
        summarised: usize,
        /// What the new history keeps besides the summary.
        kept: CompactionKept,
        /// The summariser's text.
        summary: String,
        /// The exact text of the message that now opens the history (the
        /// summary and the keep-set), so a rebuild yields the same history.
        context: String,
    },
    /// The compaction could not be done; the history is unchanged (it never
    /// truncates silently). A compaction a turn needed fails the turn.
    #[serde(rename = "compaction.failed")]
    CompactionFailed {
        /// What started it.
        trigger: CompactionTrigger,
        /// Why it failed.
        error: String,
    },
    /// The turn ended normally: the model answered without asking for more
    /// tools.
    ///
    /// `finish`: how the model's last response ended when that was not
    /// its own choice (`max_tokens`: cut at the provider's output limit).
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        /// Model rounds the turn took.
        rounds: u32,
        /// Set only when the last response did not end by the model's choice.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish: Option<TurnFinish>,
        /// The checks that still doubt the answer the turn ended with: the
        /// answer is unverified (empty: nothing doubted it).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unverified: Vec<Doubt>,
    },
    /// The turn was stopped before the model finished: by the user
    /// ([`STOPPED_BY_USER`]) or by the session's stop rule.
    #[serde(rename = "turn.stopped")]
    TurnStopped {
        /// Why; [`STOPPED_BY_USER`] for the user's Stop.
        reason: String,
    },
    /// The turn failed (the model, the guest or the workspace).
    ///
    /// `finish`: `refusal` when the provider refused to answer (a content
    /// filter, a safety stop).
    #[serde(rename = "turn.failed")]
    TurnFailed {
        /// Why, for the user.
        error: String,
        /// Set when the provider reported why the response ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish: Option<TurnFinish>,
    },
    /// The whole workspace was checkpointed before the turn ran (a rewind
    /// can bring it back).
    #[serde(rename = "checkpoint.taken")]
    CheckpointTaken {
        /// The checkpoint's id: the turn's id, or `undo-…` for the state a
        /// rewind replaced.
        checkpoint: String,
        /// Files, folders and links it holds.
        files: u64,
        /// Bytes of content not already stored (deduplicated).
        bytes_new: u64,
        /// How long it took, in milliseconds.
        ms: f64,
        /// Folders left out by the documented rule (`.git`, `node_modules`,
        /// `target`, …), as paths in the workspace; at most 20.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        excluded: Vec<String>,
        /// Entries that cannot be checkpointed (sockets, FIFOs, devices,
        /// names that are not UTF-8), `path: why`; at most 20.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
    },
    /// No checkpoint was taken before this turn, and why; the turn runs
    /// anyway, and cannot be rewound to.
    #[serde(rename = "checkpoint.failed")]
    CheckpointFailed {
        /// Why, for the user.
        reason: String,
    },
    /// The oldest checkpoints were removed to stay within the session's
    /// checkpoint quota.
    #[serde(rename = "checkpoint.pruned")]
    CheckpointPruned {
        /// The checkpoints removed, oldest first (another session's as
        /// `SESSION/ID`).
        checkpoints: Vec<String>,
        /// Bytes freed.
        bytes_freed: u64,
        /// Bytes the checkpoints the quota bounds use now: the session's,
        /// or every session's for the total quota.
        used: u64,
        /// The quota, in bytes.
        quota: u64,
        /// Which quota pruned them (absent in timelines recorded before
        /// the total quota: the session's).
        #[serde(default, skip_serializing_if = "PruneScope::is_session")]
        scope: PruneScope,
    },
    /// The session went back to a checkpoint: its files, its conversation
    /// or both. The timeline keeps everything; with the conversation in
    /// scope, later requests are built as if the turns from `turn_id` on
    /// were not there.
    #[serde(rename = "session.rewound")]
    SessionRewound {
        /// The turn (or `undo-…` checkpoint) gone back to: the state before
        /// it.
        turn_id: String,
        /// What was restored.
        scope: RewindScope,
        /// The files changed, at most 100 paths per list.
        #[serde(default)]
        diff: RewindDiff,
        /// Paths created, changed and deleted in all.
        #[serde(default)]
        paths: u64,
        /// The checkpoint of the files as they were before this rewind:
        /// rewinding to it (scope `files`) undoes it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        undo: Option<String>,
        /// Paths changed outside the session that were overwritten because
        /// the rewind was forced.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        forced: Vec<String>,
    },
    /// One of the user's own hooks ran (`PreToolUse`, `PostToolUse`,
    /// `Stop`, `UserPromptSubmit`) and answered.
    #[serde(rename = "hook.ran")]
    HookRan {
        /// The hook event, e.g. `PreToolUse`.
        #[serde(default)]
        event: String,
        /// The hook's command (cut to a line).
        #[serde(default)]
        hook: String,
        /// How long it ran, in milliseconds.
        #[serde(default)]
        ms: f64,
        /// What it decided: `continue`, `allow`, `deny`, `ask` or `block`.
        #[serde(default)]
        decision: String,
    },
    /// One of the user's own hooks failed or timed out. A failed
    /// `PreToolUse` hook refuses the call; any other is passed over.
    #[serde(rename = "hook.failed")]
    HookFailed {
        /// The hook event, e.g. `PreToolUse`.
        #[serde(default)]
        event: String,
        /// The hook's command (cut to a line).
        #[serde(default)]
        hook: String,
        /// What went wrong (control characters removed).
        #[serde(default)]
        error: String,
    },
    /// Hook files of the repository that the user has not trusted (or
    /// that changed since): their hooks do not run. Recorded when a turn
    /// first finds the file at this content.
    #[serde(rename = "hooks.untrusted")]
    HooksUntrusted {
        /// The file, relative to the repository (`.cortex/hooks.json`).
        #[serde(default)]
        file: String,
        /// The sha256 of its content, which trusting it records.
        #[serde(default)]
        sha256: String,
        /// How many hooks it holds.
        #[serde(default)]
        hooks: u32,
    },
    /// A background command (`bash` with `background`) started in the
    /// guest; it runs until it exits, `bash_kill`, the user's kill or the
    /// session's end.
    #[serde(rename = "process.started")]
    ProcessStarted {
        /// Its handle in the session, e.g. `bg1`.
        id: String,
        /// The command as the model wrote it.
        command: String,
    },
    /// A background command ended.
    #[serde(rename = "process.ended")]
    ProcessEnded {
        /// Its handle in the session, e.g. `bg1`.
        id: String,
        /// Its exit code; `None` when a signal ended it or the guest went.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// How it ended: `exited`, `killed by bash_kill`, `killed by the
        /// user`, `killed: the session closed`, `the guest ended`.
        #[serde(default)]
        reason: String,
    },
    /// A `task` call's subagent started: the child session `child`, its own timeline.
    #[serde(rename = "subagent.started")]
    SubagentStarted {
        /// The `task` call.
        call_id: CallId,
        /// The child session.
        child: SessionId,
        /// Its agent kind (`explore`, `general` or a custom one).
        kind: String,
        /// What the call said it is for.
        description: String,
    },
    /// A subagent made a tool call (clients fold these under the parent's call).
    #[serde(rename = "subagent.step")]
    SubagentStep {
        /// The parent's `task` call.
        call_id: CallId,
        /// The tool the child called.
        name: String,
        /// Its identifying argument ([`crate::CallSummary`]).
        summary: String,
    },
    /// A subagent ended; its answer is the `task` call's result.
    #[serde(rename = "subagent.ended")]
    SubagentEnded {
        /// The `task` call.
        call_id: CallId,
        /// The child session.
        child: SessionId,
        /// `ok` (it answered), `error` or `stopped`.
        status: ToolStatus,
        /// Its time and tokens (counted toward the parent's goal).
        used: SubagentUse,
    },
    /// An error that belongs to no other event.
    #[serde(rename = "error")]
    Error {
        /// What went wrong, for the user.
        message: String,
    },
}
