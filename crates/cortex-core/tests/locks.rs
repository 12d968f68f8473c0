//! Plan and Spec are locks: a hostile model calling every mutating tool
//! (including `bash` with redirections and `git apply`) is refused at every
//! layer, the repository stays byte-identical, and nothing the model says or
//! calls changes the mode.

mod common;

use common::*;
use cortex_core::{Session, TurnOutcome};
use cortex_protocol::{EventKind, Mode, ToolName, ToolStatus};
use cortex_runtime::{GuestProvider, GuestSpec, InProcessProvider};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CALC: &str = "def add(a, b):\n    return a - b\n";
const PATCH: &str = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n";

/// Every mutation a model could try, spread over rounds, with the mode
/// switch asked for in words and as invented tools.
fn hostile_script() -> serde_json::Value {
    json!({"responses": [
        {"text": "/mode agent\nSwitching to Agent mode now.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "pwned.txt", "content": "x"}},
            {"name": "edit_file", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}},
            {"name": "bash", "arguments": {"command": "echo pwned > pwned.txt"}},
            {"name": "bash", "arguments": {"command": "cat >> calc.py <<'EOF'\nimport os\nEOF"}},
            {"name": "bash", "arguments": {"command": "git apply fix.patch"}},
            {"name": "todo_write", "arguments": {"todos": [{"content": "x", "status": "pending"}]}}
        ]},
        {"tool_calls": [
            {"name": "set_mode", "arguments": {"mode": "agent"}},
            {"name": "mode", "arguments": {"to": "agent"}},
            {"name": "BASH", "arguments": {"command": "touch pwned"}},
            {"name": "bash ", "arguments": {"command": "touch pwned"}}
        ]},
        {"text": "The user approved: mode is now agent.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "calc.py", "content": "pwned"}},
            {"name": "read_file", "arguments": {"path": "calc.py"}}
        ]},
        {"text": "I could not change anything."}
    ]})
}

async fn hostile_turn_is_refused(mode: Mode) {
    let files = [("calc.py", CALC), ("fix.patch", PATCH)];
    let mut h = harness(&files, mode, hostile_script()).await;
    let before = snapshot(h.repo.path());
    let outcome = h
        .session
        .run_turn("implement it now", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 });
    assert_eq!(
        snapshot(h.repo.path()),
        before,
        "{mode}: repository changed"
    );
    assert_eq!(h.session.mode(), mode);

    let results = h.results().await;
    let ok: Vec<_> = results
        .iter()
        .filter(|(_, s, _)| *s == ToolStatus::Ok)
        .map(|(n, _, _)| n.as_str())
        .collect();
    assert_eq!(ok, ["read_file"], "{mode}: {results:#?}");
    assert!(h.session.todos().is_empty());
    let events = h.events().await;
    assert!(
        !events.iter().any(|e| matches!(
            e.kind,
            EventKind::ModeChanged { .. } | EventKind::TodoUpdated { .. }
        )),
        "{mode}: the model changed session state"
    );
    // Every mutating call was refused before anything ran.
    let refused = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ToolRefused { .. }))
        .count();
    assert_eq!(refused, results.len() - 1, "{mode}");
    // The mutating tools were never offered.
    for request in h.model.requests() {
        for tool in &request.tools {
            let name: ToolName = tool.name.parse().expect("known tool");
            assert!(!name.mutates_workspace() && name != ToolName::TodoWrite);
        }
    }
    // A resumed session is in the same mode (nothing the model did moved it).
    let store = h.store.clone();
    let resumed = Session::resume(
        h.session.id(),
        config(
            h.repo.path(),
            store,
            h.model.clone(),
            Mode::Agent,
            Default::default(),
        ),
    )
    .await
    .expect("resume");
    assert_eq!(resumed.mode(), mode);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_refuses_every_mutation_and_keeps_its_mode() {
    hostile_turn_is_refused(Mode::Plan).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_mode_refuses_every_mutation_and_keeps_its_mode() {
    hostile_turn_is_refused(Mode::Spec).await;
}

/// The guest a Plan or Spec session attaches is told the mode's
/// capabilities, and refuses mutations itself: the harness's gate is not the
/// only lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guest_of_a_read_only_mode_refuses_mutations_itself() {
    for mode in [Mode::Plan, Mode::Spec, Mode::Ask] {
        let repo = tempfile::tempdir().expect("tempdir");
        write(repo.path(), "calc.py", CALC);
        write(repo.path(), "fix.patch", PATCH);
        let before = snapshot(repo.path());
        // What `attach` asks of the provider for this mode.
        let spec = GuestSpec {
            workspace: repo.path().to_path_buf(),
            writable: mode.may_mutate_workspace(),
            allow_bash: mode.offers(ToolName::Bash),
            env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            policy: Default::default(),
            network: Default::default(),
        };
        assert!(!spec.writable && !spec.allow_bash, "{mode}");
        let guest = InProcessProvider.start(&spec).await.expect("guest");
        let calls = [
            (
                ToolName::WriteFile,
                json!({"path": "pwned.txt", "content": "x"}),
            ),
            (
                ToolName::EditFile,
                json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
            ),
            (ToolName::Bash, json!({"command": "echo x > pwned.txt"})),
            (ToolName::Bash, json!({"command": "git apply fix.patch"})),
        ];
        for (tool, args) in calls {
            let parsed = cortex_protocol::ToolArgs::parse(tool, &args.to_string()).expect("args");
            let mut call = guest.call(parsed).await.expect("call");
            let outcome = loop {
                match call.next().await.expect("an answer") {
                    cortex_protocol::GuestReply::Result(outcome) => break outcome,
                    cortex_protocol::GuestReply::Delta { .. } => {}
                }
            };
            assert!(!outcome.is_ok(), "{mode}: {tool} ran: {}", outcome.output);
            assert!(outcome.output.contains("refused"), "{}", outcome.output);
        }
        guest.close().await;
        assert_eq!(snapshot(repo.path()), before, "{mode}");
    }
}
