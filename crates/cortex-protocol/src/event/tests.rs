//! Wire shapes of the timeline's events.

use super::*;

#[test]
fn wire_shape_has_type_and_payload() {
    let event = Event {
        seq: 3,
        ts: now_rfc3339(),
        session_id: "s1".into(),
        turn_id: Some("t1".into()),
        kind: EventKind::ToolCall {
            call_id: "c1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a"}"#.into(),
        },
    };
    let json: serde_json::Value = serde_json::to_value(&event).expect("serialize event");
    assert_eq!(json["type"], "tool.call");
    assert_eq!(json["payload"]["name"], "read_file");
    assert_eq!(json["seq"], 3);
    let back: Event = serde_json::from_value(json).expect("deserialize event");
    assert_eq!(back, event);
    assert_eq!(back.kind.type_name(), "tool.call");
}

#[test]
fn type_name_matches_serde_name() {
    let kinds = [
        EventKind::TurnCompleted {
            rounds: 1,
            finish: None,
            unverified: Vec::new(),
        },
        EventKind::Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: None,
        },
        EventKind::ThinkingDelta { text: "hm".into() },
        EventKind::ToolOutputDelta {
            call_id: "c".into(),
            stream: OutputStream::Stderr,
            text: "x".into(),
        },
        EventKind::EnvReady { ms: 1.0 },
        EventKind::PlanAccepted { version: 2 },
        EventKind::SpecProposed {
            phase: SpecPhase::Design,
            version: 2,
            markdown: "m".into(),
        },
        EventKind::SpecAccepted {
            phase: SpecPhase::Tasks,
            version: 3,
        },
        EventKind::SpecRejected {
            phase: SpecPhase::Requirements,
            version: 1,
            feedback: "f".into(),
        },
        EventKind::SpecWritten {
            paths: vec!["specs/x/tasks.md".into()],
        },
        EventKind::ApprovalPolicySet {
            policy: ApprovalPolicy::Ask,
        },
        EventKind::ApprovalRequested {
            call_id: CallId::from("c1"),
            name: "bash".into(),
            summary: "git status".into(),
            reason: "no rule covers `git status`".into(),
        },
        EventKind::ApprovalResolved {
            call_id: CallId::from("c1"),
            decision: ApprovalResolution::Always,
        },
        EventKind::GoalSet {
            objective: "o".into(),
            budget: GoalBudget::default(),
        },
        EventKind::GoalUpdated {
            done: 0,
            total: 0,
            steps: vec![],
        },
        EventKind::GoalPaused {
            reason: PauseReason::Budget,
        },
        EventKind::GoalResumed {},
        EventKind::GoalCompleted {
            evidence: "e".into(),
        },
        EventKind::GoalCleared {},
        EventKind::GoalContinued { continuation: 1 },
        EventKind::PlanRejected {
            version: 1,
            feedback: "smaller".into(),
        },
        EventKind::EnvSetupSkipped {
            reason: "not committed".into(),
        },
        EventKind::McpServerReady {
            name: "docs".into(),
            tools: vec!["mcp__docs__search".into()],
            rejected: Vec::new(),
            ms: 1.0,
        },
        EventKind::McpServerFailed {
            name: "docs".into(),
            reason: "it exited".into(),
        },
        EventKind::CompactionStarted {
            trigger: CompactionTrigger::Threshold,
            tokens_before: 10,
            context_window: Some(100),
            messages: 3,
        },
        EventKind::CompactionDone {
            trigger: CompactionTrigger::Explicit,
            tokens_before: 10,
            tokens_after: 5,
            messages_before: 9,
            messages_after: 3,
            summarised: 7,
            kept: CompactionKept::default(),
            summary: "s".into(),
            context: "c".into(),
        },
        EventKind::CompactionFailed {
            trigger: CompactionTrigger::Threshold,
            error: "e".into(),
        },
        EventKind::CheckpointTaken {
            checkpoint: "t1".into(),
            files: 3,
            bytes_new: 10,
            ms: 1.5,
            excluded: vec!["node_modules".into()],
            skipped: Vec::new(),
        },
        EventKind::CheckpointFailed { reason: "r".into() },
        EventKind::CheckpointPruned {
            checkpoints: vec!["t0".into()],
            bytes_freed: 5,
            used: 10,
            quota: 20,
            scope: Default::default(),
        },
        EventKind::SessionRewound {
            turn_id: "t1".into(),
            scope: crate::RewindScope::Both,
            diff: Default::default(),
            paths: 0,
            undo: Some("undo-1".into()),
            forced: Vec::new(),
        },
    ];
    for kind in kinds {
        let json = serde_json::to_value(&kind).expect("serialize kind");
        assert_eq!(json["type"], kind.type_name());
    }
}

#[test]
fn only_the_three_turn_endings_have_an_outcome() {
    let completed = EventKind::TurnCompleted {
        rounds: 3,
        finish: Some(TurnFinish::MaxTokens),
        unverified: Vec::new(),
    };
    assert_eq!(
        completed.turn_outcome(),
        Some(TurnOutcome::Completed { rounds: 3 })
    );
    let stopped = EventKind::TurnStopped {
        reason: STOPPED_BY_USER.into(),
    };
    assert_eq!(
        stopped.turn_outcome(),
        Some(TurnOutcome::Stopped {
            reason: STOPPED_BY_USER.into()
        })
    );
    let failed = EventKind::TurnFailed {
        error: "model: 500".into(),
        finish: None,
    };
    assert_eq!(
        failed.turn_outcome(),
        Some(TurnOutcome::Failed {
            error: "model: 500".into()
        })
    );
    for ending in [&completed, &stopped, &failed] {
        assert!(ending.ends_turn());
    }
    let other = EventKind::MessageDelta { text: "hi".into() };
    assert!(!other.ends_turn());
    assert_eq!(other.turn_outcome(), None);
}
