//! A turn never ends on an answer that is a tool call nobody ran: the first
//! one goes back to the model with what was wrong, a second one fails the
//! turn (issue 19, item 1).

mod common;

use common::*;
use cortex_core::TurnOutcome;
use cortex_protocol::{EventKind, Mode, Role};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const APP: &str = "def greet():\n    return 'Hello, Cortex'\n";

async fn turn(script: serde_json::Value) -> (Harness, TurnOutcome) {
    let mut h = harness(&[("app.py", APP)], Mode::Agent, script).await;
    let outcome = h
        .session
        .run_turn("Change the greeting to 'Hi'.", CancellationToken::new())
        .await
        .expect("turn");
    (h, outcome)
}

async fn reminders(h: &Harness) -> Vec<String> {
    h.events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::TurnReminder { text, .. } => Some(text),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_written_as_text_goes_back_once_and_the_real_call_then_runs() {
    let (h, outcome) = turn(json!({"responses": [
        {"text": "```json\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"app.py\", \"old_string\": \"Hello, Cortex\", \"new_string\": \"Hi\"}}\n```"},
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "app.py", "old_string": "Hello, Cortex", "new_string": "Hi"}}]},
        {"text": "Done."},
    ]}))
    .await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    let reminders = reminders(&h).await;
    assert_eq!(reminders.len(), 1, "{reminders:?}");
    assert!(
        reminders[0].contains("call to `edit_file` as text"),
        "{reminders:?}"
    );
    // The model saw the reminder as the last message of its next request.
    let second = &h.model.requests()[1];
    let last = second.messages.last().expect("messages");
    assert_eq!(last.role, Role::User);
    assert_eq!(last.content, reminders[0]);
    assert!(
        std::fs::read_to_string(h.repo.path().join("app.py"))
            .expect("read")
            .contains("'Hi'")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_call_is_explained_and_a_second_one_fails_the_turn() {
    let broken =
        "<tool_call>\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"app.py\"\n</tool_call>";
    let (h, outcome) = turn(json!({"responses": [
        {"text": broken},
        {"text": broken},
        {"text": "never asked"},
    ]}))
    .await;
    let TurnOutcome::Failed { error } = outcome else {
        panic!("expected a failed turn, got {outcome:?}");
    };
    assert!(error.contains("did not run"), "{error}");
    let reminders = reminders(&h).await;
    assert_eq!(reminders.len(), 1);
    assert!(reminders[0].contains("does not parse"), "{reminders:?}");
    assert_eq!(h.model.requests().len(), 2);
    assert_eq!(
        std::fs::read_to_string(h.repo.path().join("app.py")).expect("read"),
        APP
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_with_code_or_json_examples_end_the_turn() {
    for answer in [
        "The config is:\n```json\n{\"name\": \"my-app\", \"debug\": true}\n```",
        "Run it with:\n```sh\npython3 app.py\n```",
        "greet() returns 'Hello, Cortex'.",
    ] {
        let (h, outcome) = turn(json!({"responses": [{"text": answer}]})).await;
        assert_eq!(outcome, TurnOutcome::Completed { rounds: 1 }, "{answer}");
        assert!(reminders(&h).await.is_empty(), "{answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_made_already_written_out_again_is_a_report_of_it() {
    let edit = json!({"name": "edit_file", "arguments": {"path": "app.py", "old_string": "Hello, Cortex", "new_string": "Hi"}});
    let recited = format!("I changed it with:\n```json\n{edit}\n```");
    let (h, outcome) = turn(json!({"responses": [
        {"tool_calls": [edit]},
        {"text": recited},
    ]}))
    .await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    assert!(reminders(&h).await.is_empty());
    // Another call written as text still goes back.
    let other = json!({"name": "edit_file", "arguments": {"path": "app.py", "old_string": "Hi", "new_string": "Hey"}});
    let (h, outcome) = turn(json!({"responses": [
        {"tool_calls": [edit]},
        {"text": format!("```json\n{other}\n```")},
        {"text": "Done."},
    ]}))
    .await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    assert_eq!(reminders(&h).await.len(), 1);
}
