//! A model whose info asks for it gets one reminder to check an answer it
//! gave without any successful tool call; other models do not.

mod common;

use common::*;
use cortex_core::{Rebuilt, Session, TurnOutcome};
use cortex_model::ToolChoice;
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{EventKind, Role};
use cortex_store::Store;
use serde_json::json;
use std::sync::Arc;

struct Ran {
    session: Session,
    model: Arc<ScriptedProvider>,
    store: Arc<dyn Store>,
    outcome: TurnOutcome,
    _repo: tempfile::TempDir,
}

async fn run(verify_answers: bool, script: serde_json::Value) -> Ran {
    let app = ("app.py", "def greet():\n    return 'Hello, Cortex'\n");
    let (repo, store, scripted) = parts(&[app], &script);
    let (session, outcome) = one_agent_turn(
        repo.path(),
        store.clone(),
        checked_model(scripted.clone(), verify_answers),
        "What does greet() return?",
    )
    .await;
    Ran {
        session,
        model: scripted,
        store,
        outcome,
        _repo: repo,
    }
}

/// The tool choice of each request the model was sent.
fn choices_of(model: &ScriptedProvider) -> Vec<ToolChoice> {
    model.requests().iter().map(|r| r.tool_choice).collect()
}

/// The texts of the session's reminders, in order.
async fn reminders_of(store: &Arc<dyn Store>, session: &Session) -> Vec<String> {
    let events = store.events(session.id(), 0).await.expect("events");
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TurnReminder { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_without_tools_is_checked_once() {
    let script = json!({"responses": [
        {"text": "Hello, world!"},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"text": "Hello, Cortex"},
    ]});
    let Ran {
        session,
        model,
        store,
        outcome,
        ..
    } = run(true, script).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    let requests = model.requests();
    let second: Vec<Role> = requests[1].messages.iter().map(|m| m.role).collect();
    assert_eq!(second, [Role::User, Role::Assistant, Role::User]);
    assert!(
        requests[1].messages[2]
            .content
            .contains("not based on any successful tool call")
    );
    // Asked in words alone, small models repeat the guess: the reply after
    // the reminder must call a tool; the one after that is free again.
    let choices: Vec<ToolChoice> = requests.iter().map(|r| r.tool_choice).collect();
    assert_eq!(
        choices,
        [ToolChoice::Auto, ToolChoice::Required, ToolChoice::Auto]
    );
    let events = store.events(session.id(), 0).await.expect("events");
    let reminders = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TurnReminder { .. }))
        .count();
    assert_eq!(reminders, 1);
    // The stored timeline rebuilds the history the model saw next.
    let rebuilt = Rebuilt::from_events(&events);
    assert_eq!(rebuilt.messages[..3], requests[1].messages[..]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_answer_without_tools_ends_the_turn() {
    let script = json!({"responses": [
        {"text": "Hi."},
        {"text": "Hi, no tool needed."},
    ]});
    let Ran { model, outcome, .. } = run(true, script).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_reminder_after_a_successful_call_or_for_other_models() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"text": "Hello, Cortex"},
    ]});
    let Ran { model, outcome, .. } = run(true, script).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    assert_eq!(model.requests().len(), 2);

    let script = json!({"responses": [{"text": "Hello, world!"}]});
    let Ran { model, outcome, .. } = run(false, script).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 1 });
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_after_failed_calls_only_is_checked_too() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "app.py", "old_string": "nope", "new_string": "x"}}]},
        {"text": "Change the return value to 'Hi'."},
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "app.py", "old_string": "Hello, Cortex", "new_string": "Hi"}}]},
        {"text": "Done."},
    ]});
    let Ran {
        model,
        store,
        session,
        outcome,
        ..
    } = run(true, script).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 });
    let choices = choices_of(&model);
    assert_eq!(
        choices,
        [
            ToolChoice::Auto,
            ToolChoice::Auto,
            ToolChoice::Required,
            ToolChoice::Auto
        ]
    );
    let events = store.events(session.id(), 0).await.expect("events");
    assert!(
        events
            .iter()
            .any(|e| matches!(e.kind, EventKind::TurnReminder { .. }))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_as_a_repeat_is_withheld_from_the_next_reply_only() {
    let read = json!({"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]});
    let script = json!({"responses": [
        read, read, read,
        {"tool_calls": [{"name": "grep", "arguments": {"pattern": "greet"}}]},
        {"text": "Hello, Cortex"},
    ]});
    let Ran { model, outcome, .. } = run(false, script).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 5 });
    let choices = choices_of(&model);
    assert_eq!(
        choices,
        [
            ToolChoice::Auto,
            ToolChoice::Auto,
            ToolChoice::Auto,
            ToolChoice::AutoWithout(cortex_protocol::ToolName::ReadFile),
            ToolChoice::Auto
        ]
    );
}

/// A model that checks its answers, told after a repeat that the question
/// is to be answered now, must answer: told so in words, a small model
/// went on calling tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_repeat_in_a_question_the_reply_must_be_the_answer() {
    let read = json!({"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]});
    let script = json!({"responses": [read, read, read, {"text": "Hello, Cortex"}]});
    let Ran {
        model,
        store,
        session,
        outcome,
        ..
    } = run(true, script).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 });
    let choices = choices_of(&model);
    assert_eq!(
        choices,
        [
            ToolChoice::Auto,
            ToolChoice::Auto,
            ToolChoice::Auto,
            ToolChoice::Answer
        ]
    );
    let requests = model.requests();
    let last = requests[3].messages.last().expect("a reminder");
    assert!(last.content.contains("Answer the question now"), "{last:?}");
    // The choice is read from the history, which the stored timeline
    // rebuilds: a resumed session asks the same of its next reply.
    let events = store.events(session.id(), 0).await.expect("events");
    let rebuilt = Rebuilt::from_events(&events);
    let seen = requests[3].messages.len();
    assert_eq!(rebuilt.messages[..seen], requests[3].messages[..]);
}

/// A call written as text where the reply must be the answer is met once
/// with the reminder again, and the reply to that must be the answer too
/// (a small model wrote its glob out as text there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_written_as_text_where_an_answer_is_due_is_told_no_tool_runs() {
    let read = json!({"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]});
    let as_text = r#"{"name": "read_file", "arguments": {"path": "app.py"}}"#;
    let script =
        json!({"responses": [read, read, read, {"text": as_text}, {"text": "Hello, Cortex"}]});
    let Ran {
        model,
        store,
        session,
        outcome,
        ..
    } = run(true, script).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 5 });
    let choices = choices_of(&model);
    assert_eq!(choices[3..], [ToolChoice::Answer, ToolChoice::Answer]);
    let reminders = reminders_of(&store, &session).await;
    assert_eq!(reminders.len(), 2, "{reminders:?}");
    assert!(
        reminders[1].contains("wrote a call to `read_file` as text")
            && reminders[1].contains("no tool runs in this reply")
            && reminders[1].ends_with("Answer the question now from what the tools showed you."),
        "{reminders:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_model_is_not_offered_the_todo_list() {
    let names = |model: &ScriptedProvider| -> Vec<String> {
        model.requests()[0]
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    let script = json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"text": "Hello, Cortex"},
    ]});
    let small = run(true, script.clone()).await;
    let offered = names(&small.model);
    assert!(offered.contains(&"read_file".to_owned()), "{offered:?}");
    assert!(
        !offered.iter().any(|n| n.starts_with("todo_")),
        "{offered:?}"
    );
    let hosted = run(false, script).await;
    assert!(names(&hosted.model).contains(&"todo_write".to_owned()));
}
