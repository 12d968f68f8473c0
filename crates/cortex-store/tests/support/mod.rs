//! Shared by the store tests: records, ids and one event of every kind.
#![allow(dead_code)]

use cortex_protocol::{
    CallId, EventKind, Mode, OutputStream, SessionId, StopRule, Todo, TodoStatus, ToolStatus,
    TurnId,
};
use cortex_store::SessionRecord;

pub fn record(id: &str, created_at: &str) -> SessionRecord {
    SessionRecord {
        id: SessionId::from(id),
        repository: "/repo".into(),
        mode: Mode::Agent,
        model: "scripted:test".into(),
        stop_rule: StopRule::Code,
        created_at: created_at.into(),
        last_seq: 0,
        title: None,
        parent: None,
    }
}

pub fn sid(s: &str) -> SessionId {
    SessionId::from(s)
}

pub fn tid(s: &str) -> TurnId {
    TurnId::from(s)
}

pub fn delta(text: &str) -> EventKind {
    EventKind::MessageDelta { text: text.into() }
}

pub fn started(message: &str) -> EventKind {
    EventKind::TurnStarted {
        message: message.into(),
        mode: Mode::Agent,
    }
}

/// A distinct index per variant. The match has no wildcard, so a new variant
/// fails to compile here until the round-trip test covers it.
pub fn variant_index(kind: &EventKind) -> usize {
    match kind {
        EventKind::SessionCreated { .. } => 0,
        EventKind::RuntimeStarting { .. } => 1,
        EventKind::RuntimeAttached { .. } => 2,
        EventKind::RuntimeFailed { .. } => 3,
        EventKind::EnvPreparing { .. } => 4,
        EventKind::EnvReady { .. } => 5,
        EventKind::EnvFailed { .. } => 6,
        EventKind::TurnStarted { .. } => 7,
        EventKind::ModelRequest { .. } => 8,
        EventKind::ModelRetry { .. } => 9,
        EventKind::MessageDelta { .. } => 10,
        EventKind::MessageDone { .. } => 11,
        EventKind::ToolCall { .. } => 12,
        EventKind::ToolRefused { .. } => 13,
        EventKind::ToolOutputDelta { .. } => 14,
        EventKind::ToolResult { .. } => 15,
        EventKind::ModeChanged { .. } => 16,
        EventKind::PlanProposed { .. } => 17,
        EventKind::TodoUpdated { .. } => 18,
        EventKind::Usage { .. } => 19,
        EventKind::TurnCompleted { .. } => 20,
        EventKind::TurnStopped { .. } => 21,
        EventKind::TurnFailed { .. } => 22,
        EventKind::Error { .. } => 23,
        EventKind::RuntimeWarning { .. } => 24,
        EventKind::EnvOutput { .. } => 25,
        EventKind::ThinkingDelta { .. } => 26,
        EventKind::TurnContext { .. } => 27,
        EventKind::CompactionStarted { .. } => 28,
        EventKind::CompactionDone { .. } => 29,
        EventKind::CompactionFailed { .. } => 30,
        EventKind::TurnReminder { .. } => 31,
        EventKind::ModelProgress { .. } => 32,
        EventKind::PlanAccepted { .. } => 33,
        EventKind::PlanRejected { .. } => 34,
        EventKind::EnvSetupSkipped { .. } => 35,
        EventKind::GoalSet { .. } => 36,
        EventKind::GoalUpdated { .. } => 37,
        EventKind::GoalPaused { .. } => 38,
        EventKind::GoalResumed { .. } => 39,
        EventKind::GoalCompleted { .. } => 40,
        EventKind::GoalCleared { .. } => 41,
        EventKind::GoalContinued { .. } => 42,
        EventKind::ApprovalPolicySet { .. } => 43,
        EventKind::ApprovalRequested { .. } => 44,
        EventKind::ApprovalResolved { .. } => 45,
        EventKind::SpecProposed { .. } => 46,
        EventKind::SpecAccepted { .. } => 47,
        EventKind::SpecRejected { .. } => 48,
        EventKind::SpecWritten { .. } => 49,
        EventKind::McpServerReady { .. } => 50,
        EventKind::McpServerFailed { .. } => 51,
        EventKind::InstructionsLoaded { .. } => 52,
        EventKind::CheckpointTaken { .. } => 53,
        EventKind::CheckpointFailed { .. } => 54,
        EventKind::CheckpointPruned { .. } => 55,
        EventKind::SessionRewound { .. } => 56,
        EventKind::HookRan { .. } => 57,
        EventKind::HookFailed { .. } => 58,
        EventKind::HooksUntrusted { .. } => 59,
        EventKind::ProcessStarted { .. } => 60,
        EventKind::ProcessEnded { .. } => 61,
        EventKind::TurnImages { .. } => 62,
        EventKind::SubagentStarted { .. } => 63,
        EventKind::SubagentStep { .. } => 64,
        EventKind::SubagentEnded { .. } => 65,
    }
}
pub const VARIANTS: usize = 66;

/// Every variant, in an order the store accepts, with the turn each belongs to.
pub fn every_kind() -> Vec<(Option<&'static str>, EventKind)> {
    let call = || CallId::from("call-1");
    vec![
        (
            None,
            EventKind::SessionCreated {
                repository: "/repo".into(),
                mode: Mode::Agent,
                model: "scripted:test".into(),
                stop_rule: StopRule::Bot,
                sandbox: Default::default(),
                parent: Some(cortex_protocol::ParentLink {
                    session: SessionId::from("parent"),
                    call_id: call(),
                }),
            },
        ),
        (
            None,
            EventKind::RuntimeStarting {
                provider: "local".into(),
            },
        ),
        (
            None,
            EventKind::RuntimeAttached {
                provider: "local".into(),
                ms: 12.5,
                isolation: "namespaces landlock seccomp".into(),
            },
        ),
        (
            None,
            EventKind::RuntimeWarning {
                message: "Landlock is not supported".into(),
            },
        ),
        (
            None,
            EventKind::RuntimeFailed {
                error: "no namespaces".into(),
            },
        ),
        (
            None,
            EventKind::EnvPreparing {
                workspace: "/work".into(),
            },
        ),
        (
            None,
            EventKind::EnvOutput {
                stream: cortex_protocol::OutputStream::Stdout,
                text: "installing\n".into(),
            },
        ),
        (
            None,
            EventKind::EnvSetupSkipped {
                reason: ".cortex/setup is not committed".into(),
            },
        ),
        (None, EventKind::EnvReady { ms: 0.25 }),
        (
            None,
            EventKind::McpServerReady {
                name: "docs".into(),
                tools: vec!["mcp__docs__search".into()],
                rejected: vec!["bad name: invalid".into()],
                ms: 40.5,
            },
        ),
        (
            None,
            EventKind::McpServerFailed {
                name: "tracker".into(),
                reason: "it exited".into(),
            },
        ),
        (
            None,
            EventKind::EnvFailed {
                error: "setup exited 1".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::TurnStarted {
                message: "Fix the build — «unicode» \"quotes\"\nsecond line".into(),
                mode: Mode::Plan,
            },
        ),
        (
            Some("t1"),
            EventKind::TurnReminder {
                text: "Check the answer with a tool.".into(),
                kind: None,
                next: Default::default(),
            },
        ),
        (
            None,
            EventKind::ApprovalPolicySet {
                policy: cortex_protocol::ApprovalPolicy::Ask,
            },
        ),
        (
            Some("t1"),
            EventKind::ApprovalRequested {
                call_id: call(),
                name: "bash".into(),
                summary: "git push".into(),
                reason: "no rule covers `git push`".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::ApprovalResolved {
                call_id: call(),
                decision: cortex_protocol::ApprovalResolution::Deny,
            },
        ),
        (
            Some("t1"),
            EventKind::TurnContext {
                text: "Files in the repository (1):\nsrc/lib.rs".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::InstructionsLoaded {
                files: vec!["AGENTS.md".into(), "src/AGENTS.md".into()],
                bytes: 42,
                cut: false,
                text: "Project instructions:\n--- AGENTS.md\nRun cargo test.".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::ModelRequest {
                round: 1,
                model: "scripted:test".into(),
                messages: 3,
                tools: vec!["read_file".into(), "grep".into()],
                bytes: 4096,
            },
        ),
        (
            Some("t1"),
            EventKind::ModelRetry {
                round: 1,
                attempt: 2,
                of: Some(4),
                delay_ms: 500,
                reason: "429".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::ModelProgress {
                round: 1,
                done: 512,
                total: 1500,
            },
        ),
        (Some("t1"), delta("Hel")),
        (
            Some("t1"),
            EventKind::MessageDone {
                text: "Hello".into(),
                provider_items: Vec::new(),
            },
        ),
        (
            Some("t1"),
            EventKind::ToolCall {
                call_id: call(),
                name: "read_file".into(),
                arguments: r#"{"path":"src/lib.rs"}"#.into(),
            },
        ),
        (
            Some("t1"),
            EventKind::ToolRefused {
                call_id: call(),
                name: "bash".into(),
                reason: "not offered in plan mode".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::ToolOutputDelta {
                call_id: call(),
                stream: OutputStream::Stderr,
                text: "warning\n".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::ToolResult {
                call_id: call(),
                name: "read_file".into(),
                status: ToolStatus::Ok,
                output: "1\tfn main() {}".into(),
                ms: 3.0,
                diff: None,
                attachments: Vec::new(),
                steer: None,
            },
        ),
        (
            Some("t1"),
            EventKind::ToolResult {
                call_id: CallId::from("call-2"),
                name: "edit_file".into(),
                status: ToolStatus::Error,
                output: "not found".into(),
                ms: 1.5,
                diff: Some("--- a\n+++ b\n".into()),
                attachments: Vec::new(),
                steer: None,
            },
        ),
        (
            Some("t1"),
            EventKind::ModeChanged {
                from: Mode::Plan,
                to: Mode::Agent,
            },
        ),
        (
            Some("t1"),
            EventKind::PlanProposed {
                version: 1,
                title: "Plan".into(),
                markdown: "```mermaid\nflowchart TD\n```".into(),
            },
        ),
        (Some("t1"), EventKind::PlanAccepted { version: 1 }),
        (
            None,
            EventKind::GoalSet {
                objective: "ship".into(),
                budget: cortex_protocol::GoalBudget {
                    turns: Some(3),
                    ..Default::default()
                },
            },
        ),
        (Some("t1"), EventKind::GoalContinued { continuation: 1 }),
        (
            Some("t1"),
            EventKind::GoalUpdated {
                done: 1,
                total: 1,
                steps: vec![cortex_protocol::GoalStep {
                    title: "a".into(),
                    done: true,
                }],
            },
        ),
        (
            None,
            EventKind::GoalPaused {
                reason: cortex_protocol::PauseReason::Stalled,
            },
        ),
        (None, EventKind::GoalResumed {}),
        (
            Some("t1"),
            EventKind::GoalCompleted {
                evidence: "tests pass".into(),
            },
        ),
        (None, EventKind::GoalCleared {}),
        (
            Some("t1"),
            EventKind::PlanRejected {
                version: 1,
                feedback: "smaller steps".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::SpecProposed {
                phase: cortex_protocol::SpecPhase::Requirements,
                version: 1,
                markdown: "# Export\nWHEN asked THE SYSTEM SHALL export".into(),
            },
        ),
        (
            None,
            EventKind::SpecRejected {
                phase: cortex_protocol::SpecPhase::Requirements,
                version: 1,
                feedback: "more stories".into(),
            },
        ),
        (
            None,
            EventKind::SpecAccepted {
                phase: cortex_protocol::SpecPhase::Tasks,
                version: 3,
            },
        ),
        (
            Some("t1"),
            EventKind::SpecWritten {
                paths: vec!["specs/export/tasks.md".into()],
            },
        ),
        (
            Some("t1"),
            EventKind::TodoUpdated {
                todos: vec![
                    Todo {
                        content: "a".into(),
                        status: TodoStatus::InProgress,
                    },
                    Todo {
                        content: "b".into(),
                        status: TodoStatus::Pending,
                    },
                ],
            },
        ),
        (Some("t1"), EventKind::TodoUpdated { todos: Vec::new() }),
        (
            Some("t1"),
            EventKind::Usage {
                input_tokens: 1_000_000,
                output_tokens: 42,
                cache_read_tokens: 900_000,
                cache_write_tokens: 1_000,
                cost_usd: Some(0.0123),
            },
        ),
        (
            Some("t1"),
            EventKind::CompactionStarted {
                trigger: cortex_protocol::CompactionTrigger::Threshold,
                tokens_before: 160_000,
                context_window: Some(200_000),
                messages: 40,
            },
        ),
        (
            Some("t1"),
            EventKind::CompactionFailed {
                trigger: cortex_protocol::CompactionTrigger::Threshold,
                error: "the summariser (scripted) returned no text".into(),
            },
        ),
        (
            None,
            EventKind::CompactionDone {
                trigger: cortex_protocol::CompactionTrigger::Explicit,
                tokens_before: 160_000,
                tokens_after: 20_000,
                messages_before: 40,
                messages_after: 5,
                summarised: 36,
                kept: cortex_protocol::CompactionKept {
                    task: true,
                    todos: 2,
                    plan_version: Some(1),
                    open_files: vec!["src/main.rs".into()],
                    diffs: vec!["src/lib.rs".into()],
                    recent_messages: 4,
                },
                summary: "## Done\n- read «main.rs»".into(),
                context: "[Compacted history] …".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::ThinkingDelta {
                text: "Let me look at the tests first.".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::Error {
                message: "something".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::HookRan {
                event: "PreToolUse".into(),
                hook: "/home/me/bin/guard".into(),
                ms: 3.5,
                decision: "deny".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::HookFailed {
                event: "PostToolUse".into(),
                hook: "/home/me/bin/note".into(),
                error: "timed out after 60000 ms".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::TurnImages {
                images: vec![cortex_protocol::ImageRef {
                    mime_type: "image/png".into(),
                    sha256: "cd".repeat(32),
                    bytes: 68,
                }],
            },
        ),
        (
            Some("t1"),
            EventKind::HooksUntrusted {
                file: ".cortex/hooks.json".into(),
                sha256: "ab".repeat(32),
                hooks: 2,
            },
        ),
        (
            Some("t1"),
            EventKind::SubagentStarted {
                call_id: call(),
                child: SessionId::from("child"),
                kind: "explore".into(),
                description: "find the parser".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::SubagentStep {
                call_id: call(),
                name: "grep".into(),
                summary: "fn parse in src".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::SubagentEnded {
                call_id: call(),
                child: SessionId::from("child"),
                status: ToolStatus::Ok,
                used: cortex_protocol::SubagentUse {
                    ms: 12.5,
                    input_tokens: 300,
                    output_tokens: 40,
                    cost_usd: Some(0.002),
                },
            },
        ),
        (
            Some("t1"),
            EventKind::ProcessStarted {
                id: "bg1".into(),
                command: "python3 -m http.server 8000".into(),
            },
        ),
        (
            None,
            EventKind::ProcessEnded {
                id: "bg1".into(),
                exit_code: Some(0),
                reason: "exited".into(),
            },
        ),
        (
            Some("t1"),
            EventKind::TurnCompleted {
                rounds: 2,
                finish: None,
                unverified: Vec::new(),
            },
        ),
        (Some("t2"), started("second")),
        (
            Some("t2"),
            EventKind::TurnStopped {
                reason: "user".into(),
            },
        ),
        (Some("t3"), started("third")),
        (
            Some("t3"),
            EventKind::CheckpointTaken {
                checkpoint: "t3".into(),
                files: 12,
                bytes_new: 4096,
                ms: 3.5,
                excluded: vec!["node_modules".into()],
                skipped: vec!["run/sock: a socket".into()],
            },
        ),
        (
            Some("t3"),
            EventKind::CheckpointPruned {
                checkpoints: vec!["t1".into()],
                bytes_freed: 100,
                used: 4096,
                quota: 1 << 30,
                scope: Default::default(),
            },
        ),
        (
            Some("t3"),
            EventKind::CheckpointFailed {
                reason: "over the quota".into(),
            },
        ),
        (
            Some("t3"),
            EventKind::TurnFailed {
                error: "compaction failed".into(),
                finish: None,
            },
        ),
        (
            None,
            EventKind::SessionRewound {
                turn_id: "t2".into(),
                scope: cortex_protocol::RewindScope::Both,
                diff: cortex_protocol::RewindDiff {
                    created: vec!["a.txt".into()],
                    changed: Vec::new(),
                    deleted: vec!["b.txt".into()],
                },
                paths: 2,
                undo: Some("undo-1".into()),
                forced: Vec::new(),
            },
        ),
    ]
}
