//! Session state is the fold of its timeline: after any scripted session
//! (tool calls, refused and concurrent calls, a compaction, a mode change,
//! reasoning items, a plan, a rewind), a session resumed from the store sends exactly
//! the request the live session sends next — the same `ModelRequest`, and
//! byte for byte the same body in every wire format.

mod common;

use common::config;
use cortex_core::Session;
use cortex_model::encode::{WireFormat, request_body};
use cortex_model::scripted::ScriptedProvider;
use cortex_model::{ModelEvent, ModelProvider, ModelRequest, ModelStream};
use cortex_protocol::{Mode, ProviderItem, RewindScope, StopRule};
use cortex_store::{SqliteStore, Store};
use futures::StreamExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

/// The scripted model, with an encrypted reasoning item before every
/// response (as OpenAI Responses sends them), numbered so each message
/// carries its own.
struct Reasoning {
    script: ScriptedProvider,
    responses: AtomicUsize,
}

impl Reasoning {
    fn new(script: &Value) -> Arc<Reasoning> {
        Arc::new(Reasoning {
            script: ScriptedProvider::from_json(&script.to_string()).expect("script"),
            responses: AtomicUsize::new(0),
        })
    }

    fn requests(&self) -> Vec<ModelRequest> {
        self.script.requests()
    }
}

impl ModelProvider for Reasoning {
    fn describe(&self) -> String {
        self.script.describe()
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let n = self.responses.fetch_add(1, Ordering::SeqCst) + 1;
        let item = ModelEvent::ProviderItem(ProviderItem {
            provider: "openai-responses".into(),
            item: json!({"type": "reasoning", "id": format!("rs_{n}"), "encrypted_content": format!("opaque-{n}")}),
        });
        let rest = self.script.stream(request);
        Box::pin(futures::stream::once(async move { Ok(item) }).chain(rest))
    }
}

/// What the user does between model responses.
enum Step {
    Turn(&'static str),
    Mode(Mode),
    Compact,
    AcceptPlan,
    /// Rewind the session's last turn.
    Rewind(RewindScope),
}

const PLAN: &str =
    "# Fix\n- [ ] read calc.py\n- [ ] fix it\n\n```mermaid\nflowchart TD\n  A-->B\n```\n";

/// Runs `steps` on a live session, resumes a second session from the same
/// store, then lets both send their next request (a turn with `next`, whose
/// response is the script's last) and compares the two requests.
async fn live_equals_resumed(mode: Mode, script: Value, steps: &[Step]) {
    let repo = tempfile::tempdir().expect("tempdir");
    common::write(repo.path(), "calc.py", "def add(a, b):\n    return a - b\n");
    common::write(repo.path(), "notes.txt", "one\ntwo\n");
    // Project instructions: the resumed session sends them from the timeline.
    common::write(
        repo.path(),
        "AGENTS.md",
        "Run the tests with `python -m pytest`.\n",
    );
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let data = tempfile::tempdir().expect("data");
    let live_model = Reasoning::new(&script);
    let setup = |model: Arc<Reasoning>, mode: Mode| {
        let mut config = config(
            repo.path(),
            store.clone(),
            Arc::new(ScriptedProvider::from_json(r#"{"responses":[]}"#).expect("script")),
            mode,
            StopRule::Code,
        );
        config.model = model;
        // Checkpoints on: their events are on the timeline, not in the
        // history.
        config.checkpoints = Some(data.path().join("checkpoints"));
        config
    };
    let mut live = Session::create(setup(live_model.clone(), mode))
        .await
        .expect("session");
    for step in steps {
        match step {
            Step::Turn(message) => {
                live.run_turn(message, CancellationToken::new())
                    .await
                    .expect("turn");
            }
            Step::Mode(mode) => live.set_mode(*mode).await.expect("mode"),
            Step::Compact => {
                live.compact(CancellationToken::new())
                    .await
                    .expect("compaction");
            }
            Step::Rewind(scope) => {
                live.rewind(None, *scope, false).await.expect("rewind");
            }
            Step::AcceptPlan => {
                let task = live.accept_plan().await.expect("accept");
                live.run_turn(&task, CancellationToken::new())
                    .await
                    .expect("turn");
            }
        }
    }
    let responses = script["responses"].as_array().expect("responses");
    let last = json!({"responses": [responses.last().expect("a last response")]});
    let resumed_model = Reasoning::new(&last);
    // The same session reopened, as a restarted process would.
    let mut resumed = Session::resume(live.id(), setup(resumed_model.clone(), Mode::Agent))
        .await
        .expect("resume");
    assert_eq!(resumed.history(), live.history(), "the rebuilt history");
    assert_eq!(resumed.mode(), live.mode());
    assert_eq!(resumed.todos(), live.todos());
    assert_eq!(resumed.plans(), live.plans());

    let sent_before = live_model.requests().len();
    live.run_turn("next", CancellationToken::new())
        .await
        .expect("live turn");
    resumed
        .run_turn("next", CancellationToken::new())
        .await
        .expect("resumed turn");
    let live_request = live_model.requests()[sent_before].clone();
    let resumed_request = resumed_model.requests()[0].clone();
    assert!(
        live_request
            .messages
            .iter()
            .any(|m| !m.provider_items.is_empty()),
        "the scenario replays reasoning items"
    );
    assert_eq!(resumed_request, live_request);
    for format in WireFormat::ALL {
        let live_body = request_body(format, &live_request).expect("encode");
        let resumed_body = request_body(format, &resumed_request).expect("encode");
        assert!(
            live_body == resumed_body,
            "{}: the resumed body differs",
            format.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_concurrent_and_refused() {
    let script = json!({"responses": [
        {"text": "Looking.", "tool_calls": [
            {"name": "read_file", "arguments": {"path": "calc.py"}},
            {"name": "no_such_tool", "arguments": {}},
            {"name": "glob", "arguments": {"pattern": "*.txt"}},
            {"name": "grep", "arguments": {"pattern": "two"}}
        ]},
        {"tool_calls": [
            {"id": "dup", "name": "read_file", "arguments": {"path": "notes.txt"}},
            {"id": "dup", "name": "read_file", "arguments": {"path": "calc.py"}},
            {"name": "edit_file", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}
        ]},
        {"text": "Fixed."},
        {"text": "Anything else?"}
    ]});
    live_equals_resumed(Mode::Agent, script, &[Step::Turn("fix calc.py")]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_between_turns() {
    let script = json!({"responses": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"text": "It subtracts."},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "Two lines."},
        {"text": "Summary: calc.py subtracts; notes.txt has two lines."},
        {"text": "Still here."}
    ]});
    let steps = [
        Step::Turn("what does calc.py do"),
        Step::Turn("and notes.txt"),
        Step::Compact,
    ];
    live_equals_resumed(Mode::Agent, script, &steps).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_change() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}]},
        {"text": "Written."},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo no"}}]},
        {"text": "Bash is not offered in Ask mode."},
        {"text": "Asked."}
    ]});
    let steps = [
        Step::Turn("write new.txt"),
        Step::Mode(Mode::Ask),
        Step::Turn("run something"),
    ];
    live_equals_resumed(Mode::Agent, script, &steps).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_proposed_and_accepted() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "plan", "arguments": {"title": "fix", "markdown": PLAN}}]},
        {"text": "Plan proposed."},
        {"tool_calls": [
            {"name": "edit_file", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}},
            {"name": "todo_write", "arguments": {"todos": [
                {"content": "read calc.py", "status": "completed"},
                {"content": "fix it", "status": "completed"}
            ]}}
        ]},
        {"text": "Done."},
        {"text": "Next?"}
    ]});
    let steps = [Step::Turn("plan a fix"), Step::AcceptPlan];
    live_equals_resumed(Mode::Plan, script, &steps).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewound_turn() {
    let script = json!({"responses": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"text": "It subtracts."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}]},
        {"text": "Written."},
        {"text": "After the rewind."}
    ]});
    let steps = [
        Step::Turn("what does calc.py do"),
        Step::Turn("write new.txt"),
        Step::Rewind(RewindScope::Both),
    ];
    live_equals_resumed(Mode::Agent, script, &steps).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_rewound_past_a_compaction() {
    let script = json!({"responses": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"text": "It subtracts."},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "Two lines."},
        {"text": "Summary: calc.py subtracts; notes.txt has two lines."},
        {"text": "Rewound."}
    ]});
    let steps = [
        Step::Turn("what does calc.py do"),
        Step::Turn("and notes.txt"),
        Step::Compact,
        Step::Rewind(RewindScope::Conversation),
    ];
    live_equals_resumed(Mode::Agent, script, &steps).await;
}
