//! Plan versions in the session: proposed by the plan tool, accepted or
//! rejected by the user only, and rebuilt from the timeline on resume.

mod common;

use common::*;
use cortex_core::{PlanError, PlanStatus, Session};
use cortex_protocol::{Mode, TodoStatus};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const PLAN: &str = "# Fix\n- [ ] read calc.py\n- [x] find the bug\n- [ ] fix it\n\n```mermaid\nflowchart TD\n  A-->B\n```\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_seeds_todos_switches_to_agent_and_survives_resume() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "plan", "arguments": {"title": "v1", "markdown": PLAN}}]},
        {"tool_calls": [{"name": "plan", "arguments": {"title": "v2", "markdown": PLAN}}]},
        {"text": "two plans"},
    ]});
    let mut h = harness(&[("calc.py", "x = 1\n")], Mode::Plan, script).await;
    assert!(matches!(
        h.session.accept_plan().await,
        Err(PlanError::NoProposedPlan)
    ));
    h.session
        .run_turn("plan it", CancellationToken::new())
        .await
        .expect("turn");
    let statuses: Vec<_> = h.session.plans().iter().map(|p| p.status).collect();
    assert_eq!(statuses, [PlanStatus::Superseded, PlanStatus::Proposed]);
    assert_eq!(h.session.mode(), Mode::Plan);

    let task = h.session.accept_plan().await.expect("accept");
    assert!(task.contains("v2") && task.contains("fix it"), "{task}");
    assert_eq!(h.session.mode(), Mode::Agent);
    let todos: Vec<_> = h
        .session
        .todos()
        .iter()
        .map(|t| (t.content.as_str(), t.status))
        .collect();
    assert_eq!(
        todos,
        [
            ("read calc.py", TodoStatus::Pending),
            ("find the bug", TodoStatus::Completed),
            ("fix it", TodoStatus::Pending),
        ]
    );
    assert!(h.session.proposed_plan().is_none());
    assert!(matches!(
        h.session.reject_plan("no").await,
        Err(PlanError::NoProposedPlan)
    ));

    let resumed = Session::resume(
        h.session.id(),
        config(
            h.repo.path(),
            h.store.clone(),
            h.model.clone(),
            Mode::Plan,
            Default::default(),
        ),
    )
    .await
    .expect("resume");
    assert_eq!(resumed.plans(), h.session.plans());
    assert_eq!(resumed.todos(), h.session.todos());
    assert_eq!(resumed.mode(), Mode::Agent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_keeps_plan_mode_and_needs_feedback() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "plan", "arguments": {"title": "v1", "markdown": PLAN}}]},
        {"text": "proposed"},
    ]});
    let mut h = harness(&[], Mode::Plan, script).await;
    h.session
        .run_turn("plan it", CancellationToken::new())
        .await
        .expect("turn");
    assert!(matches!(
        h.session.reject_plan("  ").await,
        Err(PlanError::EmptyFeedback)
    ));
    let message = h
        .session
        .reject_plan("smaller steps")
        .await
        .expect("reject");
    assert!(message.contains("smaller steps"));
    assert_eq!(h.session.mode(), Mode::Plan);
    assert_eq!(h.session.plans()[0].status, PlanStatus::Rejected);
    assert!(h.session.todos().is_empty());
    let resumed = Session::resume(
        h.session.id(),
        config(
            h.repo.path(),
            h.store.clone(),
            h.model.clone(),
            Mode::Agent,
            Default::default(),
        ),
    )
    .await
    .expect("resume");
    assert_eq!(resumed.plans()[0].status, PlanStatus::Rejected);
    assert_eq!(resumed.mode(), Mode::Plan);
}
