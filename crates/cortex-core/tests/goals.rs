//! Goals end to end with scripted models: continuation turns without a user
//! message until the model completes the goal with evidence; budgets and
//! stalls pause it (a command that changed nothing, a write of what was
//! there or a step ticked again is no progress; a changed file is);
//! completion with steps left is refused; a resumed goal was paused as
//! interrupted; a goal set without a budget has the default one.

mod common;

use common::*;
use cortex_core::{STALL_TURNS, Session, TurnOutcome};
use cortex_protocol::{EventKind, GoalBudget, GoalStatus, Mode, PauseReason, ToolStatus};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn steps(done: &[bool]) -> Value {
    let titles = ["write a.txt", "write b.txt", "check both"];
    Value::Array(
        done.iter()
            .zip(titles)
            .map(|(d, t)| json!({"title": t, "done": d}))
            .collect(),
    )
}

fn goal_call(done: &[bool]) -> Value {
    json!({"name": "goal", "arguments": {"steps": steps(done)}})
}

fn bash(command: &str) -> Value {
    json!({"name": "bash", "arguments": {"command": command}})
}

/// Set the goal, run its first turn, then every continuation the harness
/// asks for (at most `limit`). Returns how many continuations ran.
async fn drive(h: &mut Harness, budget: GoalBudget, limit: u32) -> u32 {
    let cancel = CancellationToken::new();
    let first = h
        .session
        .set_goal("write a.txt and b.txt", budget)
        .await
        .expect("set");
    let mut outcome = h
        .session
        .run_turn(&first, cancel.clone())
        .await
        .expect("turn");
    let mut continuations = 0;
    while h
        .session
        .after_turn(&outcome)
        .await
        .expect("after")
        .is_some()
    {
        continuations += 1;
        assert!(continuations <= limit, "the goal never ended");
        outcome = h
            .session
            .run_continuation_as(Session::new_turn_id(), cancel.clone())
            .await
            .expect("continuation");
    }
    continuations
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_step_goal_completes_across_continuation_turns() {
    let script = json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Broke it into three steps."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}}, goal_call(&[true, false, false])]},
        {"text": "a.txt written."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}}, goal_call(&[true, true, false])]},
        {"text": "b.txt written."},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "b.txt"}}, {"name": "goal", "arguments": {"steps": steps(&[true, true, true]), "complete": true, "evidence": "a.txt and b.txt exist with their contents"}}]},
        {"text": "Done."}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    let continuations = drive(&mut h, GoalBudget::default(), 10).await;
    assert_eq!(continuations, 3);
    let goal = h.session.goal().expect("goal").clone();
    assert_eq!(goal.status, GoalStatus::Complete);
    assert_eq!(goal.chip(), "Goal · 3/3");
    assert_eq!(
        goal.evidence.as_deref(),
        Some("a.txt and b.txt exist with their contents")
    );
    assert_eq!(goal.spent.turns, 4);
    assert!(h.repo.path().join("b.txt").is_file());

    let types = h.types().await;
    let count = |name: &str| types.iter().filter(|t| **t == name).count();
    assert_eq!(count("turn.started"), 4);
    assert_eq!(count("goal.continued"), 3);
    assert_eq!(count("goal.updated"), 4);
    assert_eq!(count("goal.completed"), 1);
    assert_eq!(count("goal.paused"), 0);
    // A continuation's prompt carries the objective and the steps' state.
    let prompts: Vec<String> = h
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::TurnStarted { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert!(prompts[2].contains("Objective: write a.txt and b.txt"));
    assert!(
        prompts[2].contains("[x] write a.txt\n[ ] write b.txt"),
        "{}",
        prompts[2]
    );
    // The goal tool was offered while the goal was active, and only then.
    let requests = h.model.requests();
    let offered = |r: &cortex_model::ModelRequest| r.tools.iter().any(|t| t.name == "goal");
    let (last, active) = requests.split_last().expect("requests");
    assert!(active.iter().all(offered));
    assert!(!offered(last), "offered after completion");

    // Rebuilt from the timeline, the same goal.
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
    let rebuilt = resumed.goal().expect("goal");
    assert_eq!(rebuilt.steps, goal.steps);
    assert_eq!(rebuilt.status, GoalStatus::Complete);
    assert_eq!(rebuilt.spent.turns, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completing_with_steps_left_is_a_tool_error() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "goal", "arguments": {"steps": steps(&[true, false, false]), "complete": true, "evidence": "trust me"}}]},
        {"text": "Oops."}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    let first = h
        .session
        .set_goal("write a.txt and b.txt", GoalBudget::default())
        .await
        .expect("set");
    h.session
        .run_turn(&first, CancellationToken::new())
        .await
        .expect("turn");
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Error);
    assert!(
        results[0].2.contains("steps left: write b.txt; check both"),
        "{}",
        results[0].2
    );
    let goal = h.session.goal().expect("goal");
    assert_eq!(goal.status, GoalStatus::Active);
    assert!(goal.steps.is_empty(), "a refused call records nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_only_talks_pauses_as_stalled_after_two_continuations() {
    let script = json!({"responses": [
        {"text": "I will think about it."},
        {"text": "Still thinking."},
        {"text": "Thinking more."},
        {"text": "never asked"}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    let continuations = drive(&mut h, GoalBudget::default(), 5).await;
    assert_eq!(continuations, 2);
    let goal = h.session.goal().expect("goal");
    assert_eq!(goal.status, GoalStatus::Paused);
    assert_eq!(goal.paused, Some(PauseReason::Stalled));
    assert_eq!(h.model.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_budget_pauses_the_goal() {
    let script = json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}}, goal_call(&[true, false, false])]},
        {"text": "a written."},
        {"text": "never asked"}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    let budget = GoalBudget {
        turns: Some(2),
        ..Default::default()
    };
    let continuations = drive(&mut h, budget, 5).await;
    assert_eq!(continuations, 1);
    let goal = h.session.goal().expect("goal");
    assert_eq!(goal.paused, Some(PauseReason::Budget));
    assert_eq!(goal.spent.turns, 2);
    assert_eq!(goal.chip(), "Goal · 1/3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_pauses_and_a_resumed_process_finds_it_interrupted() {
    let script = json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"text": "continuing", "tool_calls": [goal_call(&[true, false, false])]},
        {"text": "after resume"}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    let first = h
        .session
        .set_goal("write a.txt and b.txt", GoalBudget::default())
        .await
        .expect("set");
    let outcome = h
        .session
        .run_turn(&first, CancellationToken::new())
        .await
        .expect("turn");
    assert!(
        h.session
            .after_turn(&outcome)
            .await
            .expect("after")
            .is_some()
    );
    let stopped = TurnOutcome::Stopped {
        reason: "stopped by user".into(),
    };
    assert!(
        h.session
            .after_turn(&stopped)
            .await
            .expect("after")
            .is_none()
    );
    assert_eq!(
        h.session.goal().and_then(|g| g.paused),
        Some(PauseReason::Stopped)
    );
    let prompt = h.session.resume_goal().await.expect("resume");
    assert!(prompt.contains("[ ] write a.txt"), "{prompt}");
    assert!(h.session.goal().is_some_and(|g| g.is_active()));

    // The process exits with the goal active: the next one finds it paused.
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
    let goal = resumed.goal().expect("goal");
    assert_eq!(goal.paused, Some(PauseReason::Interrupted));
    let mut resumed = resumed;
    resumed.resume_goal().await.expect("resume goal");
    let outcome = resumed
        .run_continuation_as(Session::new_turn_id(), CancellationToken::new())
        .await
        .expect("continuation");
    assert!(matches!(outcome, TurnOutcome::Completed { .. }));
    assert_eq!(resumed.goal().map(|g| g.done()), Some(1));
    resumed.clear_goal().await.expect("clear");
    assert!(resumed.goal().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_keeps_running_harmless_commands_stalls() {
    let script = json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"tool_calls": [bash("ls")]},
        {"text": "Looked around."},
        {"tool_calls": [bash("true"), bash("test -f a.txt")]},
        {"text": "Checked again."},
        {"tool_calls": [bash("ls -la")]},
        {"text": "never asked"}
    ]});
    let mut h = harness(&[("a.txt", "a\n")], Mode::Agent, script).await;
    let continuations = drive(&mut h, GoalBudget::default(), 5).await;
    assert_eq!(continuations, STALL_TURNS);
    let goal = h.session.goal().expect("goal");
    assert_eq!(goal.paused, Some(PauseReason::Stalled));
    // Every command succeeded: success alone is not progress.
    let results = h.results().await;
    let commands: Vec<_> = results.iter().filter(|r| r.0 == "bash").collect();
    assert_eq!(commands.len(), 3, "{results:?}");
    assert!(
        commands.iter().all(|r| r.1 == ToolStatus::Ok),
        "{results:?}"
    );
    // Set without a budget, the goal has the default one.
    assert_eq!(goal.budget, GoalBudget::DEFAULT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_of_what_was_there_and_a_step_ticked_again_are_no_progress() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}},
            goal_call(&[true, false, false])]},
        {"text": "a.txt is already there."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}},
            goal_call(&[false, false, false])]},
        {"text": "Rewrote a.txt, unticked it."},
        {"tool_calls": [goal_call(&[true, false, false])]},
        {"text": "Ticked it again."},
        {"text": "never asked"}
    ]});
    let mut h = harness(&[("a.txt", "a\n")], Mode::Agent, script).await;
    let continuations = drive(&mut h, GoalBudget::default(), 5).await;
    assert_eq!(continuations, STALL_TURNS);
    let goal = h.session.goal().expect("goal");
    assert_eq!(goal.paused, Some(PauseReason::Stalled));
    assert_eq!(goal.done(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_changes_the_workspace_each_turn_without_ticking_is_not_stalled() {
    let script = json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}}]},
        {"text": "b.txt written."},
        {"tool_calls": [bash("ls"), bash("echo more >> b.txt")]},
        {"text": "b.txt grew."},
        {"tool_calls": [bash("mkdir -p out && echo c > out/c.txt")]},
        {"text": "out/c.txt made."},
        {"tool_calls": [bash("rm out/c.txt")]},
        {"text": "out/c.txt removed."},
        {"text": "never asked"}
    ]});
    let mut h = harness(&[("a.txt", "a\n")], Mode::Agent, script).await;
    let budget = GoalBudget {
        turns: Some(5),
        ..Default::default()
    };
    let continuations = drive(&mut h, budget, 6).await;
    assert_eq!(continuations, 4);
    let goal = h.session.goal().expect("goal");
    assert_eq!(goal.paused, Some(PauseReason::Budget));
    assert_eq!(goal.done(), 0, "no step was ticked");
    // The limits not given took their defaults.
    assert_eq!(goal.budget.turns, Some(5));
    assert_eq!(goal.budget.tokens, GoalBudget::DEFAULT.tokens);
    assert_eq!(goal.budget.minutes, GoalBudget::DEFAULT.minutes);
    assert!(!h.repo.path().join("out/c.txt").exists());
}
