//! Environment preparation and the sandbox settings a session carries:
//! `.cortex/setup` before the first model request, isolated copies, mode
//! switches that change what the guest may write, and resumption that keeps
//! the stored sandbox.

mod common;

use common::{config, harness, snapshot, write};
use cortex_core::{Session, TurnOutcome};
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{
    EventKind, Mode, Sandbox, SandboxPolicy, StopRule, ToolStatus, WorkspaceMode,
};
use cortex_store::{SqliteStore, Store};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Commit everything in `dir`: `.cortex/setup` runs only as committed.
fn commit_all(dir: &std::path::Path) {
    let status = std::process::Command::new("bash")
        .args(["-c", "git init -q && git add -A && git commit -qm setup"])
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .expect("git");
    assert!(status.success());
}

fn model(script: serde_json::Value) -> Arc<ScriptedProvider> {
    Arc::new(ScriptedProvider::from_json(&script.to_string()).expect("script"))
}

async fn types(store: &Arc<dyn Store>, session: &Session) -> Vec<&'static str> {
    store
        .events(session.id(), 0)
        .await
        .expect("events")
        .iter()
        .map(|e| e.kind.type_name())
        .collect()
}

#[tokio::test]
async fn setup_runs_in_the_guest_before_the_first_model_request() {
    let mut h = harness(
        &[(
            ".cortex/setup",
            "echo installing deps\necho done > .setup-ran\n",
        )],
        Mode::Ask,
        json!({"responses": [{"text": "hi"}]}),
    )
    .await;
    commit_all(h.repo.path());
    let outcome = h
        .session
        .run_turn("hello", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 1 });
    let kinds = h.types().await;
    let position = |kind: &str| kinds.iter().position(|k| *k == kind);
    let (output, ready, request) = (
        position("env.output").expect("setup output streamed"),
        position("env.ready").expect("env.ready"),
        position("model.request").expect("model.request"),
    );
    assert!(output < ready && ready < request, "{kinds:?}");
    assert!(h.repo.path().join(".setup-ran").exists());
    let streamed: String = h
        .events()
        .await
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::EnvOutput { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(streamed.contains("installing deps"), "{streamed:?}");
    // Setup ran even in Ask mode, but the guest is read-only for the model.
    h.session.close().await;
}

#[tokio::test]
async fn a_setup_that_is_not_committed_is_skipped_and_a_committed_one_runs() {
    let mut h = harness(
        &[("f", "x\n")],
        Mode::Agent,
        json!({"responses": [{"text": "one"}, {"text": "two"}]}),
    )
    .await;
    commit_all(h.repo.path());
    // Written in the working tree after the last commit (by a model in an
    // earlier session, say).
    write(h.repo.path(), ".cortex/setup", "echo ran > .setup-ran\n");
    let outcome = h
        .session
        .run_turn("hello", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 1 });
    assert!(
        !h.repo.path().join(".setup-ran").exists(),
        "an uncommitted setup ran"
    );
    let skipped: Vec<String> = h
        .events()
        .await
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::EnvSetupSkipped { reason } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(skipped, ["it is not committed in HEAD"]);
    let kinds = h.types().await;
    assert!(kinds.contains(&"env.ready"), "{kinds:?}");
    h.session.close().await;

    // Once committed, the next session runs it.
    let status = std::process::Command::new("bash")
        .args(["-c", "git add -A && git commit -qm 'add setup'"])
        .current_dir(h.repo.path())
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .expect("git");
    assert!(status.success());
    let mut next = Session::create(config(
        h.repo.path(),
        h.store.clone(),
        h.model.clone(),
        Mode::Agent,
        StopRule::Code,
    ))
    .await
    .expect("session");
    let outcome = next
        .run_turn("again", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 1 });
    assert!(
        h.repo.path().join(".setup-ran").exists(),
        "the committed setup did not run"
    );
    next.close().await;
}

#[tokio::test]
async fn a_failing_setup_fails_the_turn_before_the_model_is_asked() {
    let mut h = harness(
        &[(".cortex/setup", "echo missing toolchain >&2\nexit 7\n")],
        Mode::Agent,
        json!({"responses": [{"text": "never"}]}),
    )
    .await;
    commit_all(h.repo.path());
    let outcome = h
        .session
        .run_turn("hello", CancellationToken::new())
        .await
        .expect("turn");
    let TurnOutcome::Failed { error } = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert!(
        error.contains("exit code 7") && error.contains("missing toolchain"),
        "{error}"
    );
    let kinds = h.types().await;
    assert!(kinds.contains(&"env.failed"), "{kinds:?}");
    assert!(!kinds.contains(&"model.request"), "{kinds:?}");
    h.session.close().await;
}

#[tokio::test]
async fn a_copy_workspace_leaves_the_repository_untouched() {
    let repo = tempfile::tempdir().expect("repo");
    write(repo.path(), "a.txt", "original\n");
    let copies = tempfile::tempdir().expect("copies");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let mut cfg = config(
        repo.path(),
        store.clone(),
        model(json!({"responses": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "changed\n"}}]},
            {"text": "done"}
        ]})),
        Mode::Agent,
        StopRule::Code,
    );
    cfg.sandbox = Sandbox {
        workspace: WorkspaceMode::Copy,
        ..Sandbox::default()
    };
    cfg.workspaces = Some(copies.path().to_path_buf());
    let before = snapshot(repo.path());
    let mut session = Session::create(cfg).await.expect("session");
    let outcome = session
        .run_turn("change a.txt", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    assert_eq!(snapshot(repo.path()), before, "the repository changed");
    let copy = copies.path().join(session.id().to_string());
    assert_eq!(session.workspace(), copy.as_path());
    assert_eq!(
        std::fs::read_to_string(copy.join("a.txt")).expect("read"),
        "changed\n"
    );
    session.close().await;
}

#[tokio::test]
async fn switching_to_a_writing_mode_reattaches_the_guest() {
    let repo = tempfile::tempdir().expect("repo");
    write(repo.path(), "a.txt", "x\n");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let read = json!({"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]});
    let mut session = Session::create(config(
        repo.path(),
        store.clone(),
        model(json!({"responses": [read, {"text": "ok"}, read, {"text": "ok"}]})),
        Mode::Ask,
        StopRule::Code,
    ))
    .await
    .expect("session");
    session
        .run_turn("one", CancellationToken::new())
        .await
        .expect("turn");
    session.set_mode(Mode::Agent).await.expect("mode");
    session
        .run_turn("two", CancellationToken::new())
        .await
        .expect("turn");
    let kinds = types(&store, &session).await;
    let attached = kinds.iter().filter(|k| **k == "runtime.attached").count();
    assert_eq!(attached, 2, "{kinds:?}");
    // Preparation ran once for the session.
    assert_eq!(kinds.iter().filter(|k| **k == "env.ready").count(), 1);
    session.close().await;
}

#[tokio::test]
async fn read_only_policy_refuses_file_writes_even_in_agent_mode() {
    let repo = tempfile::tempdir().expect("repo");
    write(repo.path(), "a.txt", "original\n");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let mut cfg = config(
        repo.path(),
        store.clone(),
        model(json!({"responses": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "changed\n"}}]},
            {"text": "done"}
        ]})),
        Mode::Agent,
        StopRule::Code,
    );
    cfg.sandbox.policy = SandboxPolicy::ReadOnly;
    let mut session = Session::create(cfg.clone()).await.expect("session");
    let id = session.id().clone();
    session
        .run_turn("change it", CancellationToken::new())
        .await
        .expect("turn");
    session.close().await;
    let events = store.events(&id, 0).await.expect("events");
    let refused = events.iter().any(
        |e| matches!(&e.kind, EventKind::ToolResult { status, .. } if *status == ToolStatus::Error),
    );
    assert!(refused, "the write was not refused");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("read"),
        "original\n"
    );
    // A resumed session keeps the stored policy whatever the new config says.
    cfg.sandbox = Sandbox::default();
    let resumed = Session::resume(&id, cfg).await.expect("resume");
    assert_eq!(resumed.sandbox().policy, SandboxPolicy::ReadOnly);
}
