//! The in-process provider: the same agent on a task, over an in-memory pipe.

mod common;

use common::{CallJson, WAIT, collect, run, spec};
use cortex_protocol::{GuestReply, ToolName};
use cortex_runtime::{GuestProvider, InProcessProvider, RuntimeError};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn ping_close_and_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(InProcessProvider.name(), "in-process");
    let guest = InProcessProvider
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    assert!(guest.is_alive());
    assert_eq!(guest.pid(), None);
    guest.ping().await.expect("ping");
    guest.stop().await.expect("stop with nothing running");
    guest.close().await;
}

#[tokio::test]
async fn missing_workspace_is_a_start_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = InProcessProvider
        .start(&spec(&dir.path().join("gone"), false, false))
        .await
        .err()
        .expect("no workspace");
    assert!(matches!(err, RuntimeError::Start { .. }), "{err}");
}

#[tokio::test]
async fn read_only_spec_is_enforced_by_the_guest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = InProcessProvider
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    let outcome = run(
        &guest,
        ToolName::WriteFile,
        json!({"path": "a.txt", "content": "x"}),
    )
    .await;
    assert!(!outcome.is_ok());
    assert!(outcome.output.contains("read-only"), "{outcome:?}");
    let outcome = run(&guest, ToolName::Bash, json!({"command": "true"})).await;
    assert!(!outcome.is_ok());
    let outcome = run(
        &guest,
        ToolName::Plan,
        json!({"title": "t", "markdown": "m"}),
    )
    .await;
    assert!(!outcome.is_ok(), "plan is the harness's: {outcome:?}");
    assert!(!dir.path().join("a.txt").exists());
    guest.close().await;
}

#[tokio::test]
async fn writable_spec_writes_and_edits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = InProcessProvider
        .start(&spec(dir.path(), true, false))
        .await
        .expect("start");
    let outcome = run(
        &guest,
        ToolName::WriteFile,
        json!({"path": "src/a.txt", "content": "one\ntwo\n"}),
    )
    .await;
    assert!(outcome.is_ok(), "{outcome:?}");
    let outcome = run(
        &guest,
        ToolName::EditFile,
        json!({"path": "src/a.txt", "old_string": "two", "new_string": "2"}),
    )
    .await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(outcome.diff.is_some());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/a.txt")).expect("read"),
        "one\n2\n"
    );
    let outcome = run(&guest, ToolName::Glob, json!({"pattern": "**/*.txt"})).await;
    assert!(
        outcome.is_ok() && outcome.output.contains("a.txt"),
        "{outcome:?}"
    );
    let outcome = run(
        &guest,
        ToolName::Grep,
        json!({"pattern": "one", "mode": "content"}),
    )
    .await;
    assert!(
        outcome.is_ok() && outcome.output.contains("one"),
        "{outcome:?}"
    );
    guest.close().await;
}

#[tokio::test]
async fn stop_one_call_and_keep_serving() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = InProcessProvider
        .start(&spec(dir.path(), false, true))
        .await
        .expect("start");
    let mut sleeper = guest
        .call_json(ToolName::Bash, json!({"command": "echo go; sleep 100"}))
        .await
        .expect("call");
    let first = tokio::time::timeout(WAIT, sleeper.next())
        .await
        .expect("in time");
    assert!(matches!(first, Some(GuestReply::Delta { .. })), "{first:?}");
    let started = Instant::now();
    guest.stop_call(sleeper.id()).await.expect("stop");
    let (_, outcome) = collect(&mut sleeper).await;
    let outcome = outcome.expect("a result");
    assert!(outcome.is_stopped() && !outcome.is_ok(), "{outcome:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    guest.ping().await.expect("ping");
    guest.close().await;
}

#[tokio::test]
async fn closing_ends_running_calls() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = InProcessProvider
        .start(&spec(dir.path(), false, true))
        .await
        .expect("start");
    let mut sleeper = guest
        .call_json(ToolName::Bash, json!({"command": "sleep 100"}))
        .await
        .expect("call");
    let started = Instant::now();
    guest.close().await;
    let (_, outcome) = collect(&mut sleeper).await;
    // Either the stopped result made it out before the pipe closed, or the
    // stream just ended; it never hangs.
    if let Some(outcome) = outcome {
        assert!(outcome.is_stopped(), "{outcome:?}");
    }
    assert!(started.elapsed() < Duration::from_secs(10));
}
