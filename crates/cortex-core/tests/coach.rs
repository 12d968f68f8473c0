//! The answer checks for small models (issue 19, items 5, 7 and 8): advice
//! instead of action, a named file left untouched, a change never tested.
//! Each goes back to the model once; a model without `verify_answers` never
//! gets them.

mod common;

use common::*;
use cortex_core::{Session, TurnOutcome};
use cortex_model::meter::{Meter, Metered};
use cortex_model::scripted::ScriptedProvider;
use cortex_model::{ModelInfo, ToolChoice};
use cortex_protocol::{EventKind, Mode, StopRule};
use cortex_store::{SqliteStore, Store};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

struct Ran {
    outcome: TurnOutcome,
    reminders: Vec<String>,
    choices: Vec<ToolChoice>,
    repo: tempfile::TempDir,
}

async fn run(small: bool, files: &[(&str, &str)], prompt: &str, script: serde_json::Value) -> Ran {
    let repo = tempfile::tempdir().expect("tempdir");
    for (path, content) in files {
        write(repo.path(), path, content);
    }
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let scripted = Arc::new(ScriptedProvider::from_json(&script.to_string()).expect("script"));
    let mut config = config(
        repo.path(),
        store.clone(),
        scripted.clone(),
        Mode::Agent,
        StopRule::Code,
    );
    let info = ModelInfo {
        context_window: 32_768,
        max_output_tokens: 1024,
        parallel_tool_calls: true,
        prices: None,
        verify_answers: small,
    };
    config.model = Arc::new(Metered::new(scripted.clone(), Some(info), Meter::default()));
    let mut session = Session::create(config).await.expect("session");
    let outcome = session
        .run_turn(prompt, CancellationToken::new())
        .await
        .expect("turn");
    let reminders = store
        .events(session.id(), 0)
        .await
        .expect("events")
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::TurnReminder { text } => Some(text),
            _ => None,
        })
        .collect();
    let choices = scripted.requests().iter().map(|r| r.tool_choice).collect();
    Ran {
        outcome,
        reminders,
        choices,
        repo,
    }
}

const CALC: &str = "def add(a, b):\n    return a - b\n";
const TEST: &str = "from calc import add\nassert add(2, 3) == 5\nprint('ok')\n";
const FIX: &str = "python3 test_calc.py fails. Fix the bug in calc.py.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn advice_goes_back_and_the_next_reply_must_act() {
    let ran = run(
        true,
        &[("calc.py", CALC), ("test_calc.py", TEST)],
        FIX,
        json!({"responses": [
            {"text": "Replace the minus with a plus:\n```python\nreturn a + b\n```"},
            {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_calc.py"}}]},
            {"text": "Fixed; the test passes."},
        ]}),
    )
    .await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 4 });
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].contains("edit_file"),
        "{:?}",
        ran.reminders
    );
    assert_eq!(ran.choices[1], ToolChoice::Required);
    assert!(
        std::fs::read_to_string(ran.repo.path().join("calc.py"))
            .expect("read")
            .contains("a + b")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_never_tested_is_met_with_the_test_to_run() {
    let ran = run(
        true,
        &[("calc.py", CALC), ("test_calc.py", TEST)],
        FIX,
        json!({"responses": [
            {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}]},
            {"text": "Fixed."},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_calc.py"}}]},
            {"text": "Fixed; the test prints ok."},
        ]}),
    )
    .await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 4 });
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].contains("`python3 test_calc.py`"),
        "{:?}",
        ran.reminders
    );
    assert_eq!(ran.choices[2], ToolChoice::Required);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_file_left_untouched_is_listed_once() {
    let files = [
        ("client.py", "TIMEOUT = 30\n"),
        ("worker.py", "TIMEOUT = 30\n"),
    ];
    let prompt = "Change the timeout from 30 to 45 in both client.py and worker.py.";
    let edit = |path: &str| json!({"tool_calls": [{"name": "edit_file", "arguments": {"path": path, "old_string": "30", "new_string": "45"}}]});
    let ran = run(
        true,
        &files,
        prompt,
        json!({"responses": [edit("client.py"), {"text": "Done."}, edit("worker.py"), {"text": "Done, both."}]}),
    )
    .await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 4 });
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].contains("worker.py needs a change"),
        "{:?}",
        ran.reminders
    );
    for file in ["client.py", "worker.py"] {
        assert_eq!(
            std::fs::read_to_string(ran.repo.path().join(file)).expect("read"),
            "TIMEOUT = 45\n"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_models_and_plain_answers_get_no_checks() {
    let advice = json!({"responses": [{"text": "Replace the minus with a plus:\n```python\nreturn a + b\n```"}]});
    let ran = run(
        false,
        &[("calc.py", CALC), ("test_calc.py", TEST)],
        FIX,
        advice,
    )
    .await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 1 });
    assert!(ran.reminders.is_empty());

    let answer = json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"text": "add() returns a - b, which is a bug."},
    ]});
    let ran = run(
        true,
        &[("calc.py", CALC)],
        "What does add() in calc.py return?",
        answer,
    )
    .await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 2 });
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
}
