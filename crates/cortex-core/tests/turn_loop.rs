//! The Code turn loop end to end: scripted model, in-process guest, real
//! files and processes.

mod common;

use common::*;
use cortex_core::{Session, TurnOutcome};
use cortex_protocol::{EventKind, Mode, Role, StopRule, ToolStatus, TurnFinish};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CALC: &str = "def add(a, b):\n    return a - b\n";
const TEST: &str = "from calc import add\nassert add(2, 3) == 5, 'add is broken'\nprint('ok')\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_round_edit_makes_the_failing_test_pass() {
    let script = json!({"responses": [
        {"text": "Running the test first.", "tool_calls": [{"name": "bash", "arguments": {"command": "python3 -B test_calc.py"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "python3 -B test_calc.py"}}]},
        {"text": "Fixed `add` in calc.py; the test passes."}
    ]});
    let mut h = harness(
        &[("calc.py", CALC), ("test_calc.py", TEST)],
        Mode::Agent,
        script,
    )
    .await;
    let outcome = h
        .session
        .run_turn("make the test pass", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 5 });
    let fixed = std::fs::read_to_string(h.repo.path().join("calc.py")).expect("read");
    assert_eq!(fixed, "def add(a, b):\n    return a + b\n");
    let results = h.results().await;
    let statuses: Vec<_> = results.iter().map(|(n, s, _)| (n.as_str(), *s)).collect();
    assert_eq!(
        statuses,
        [
            ("bash", ToolStatus::Error),
            ("read_file", ToolStatus::Ok),
            ("edit_file", ToolStatus::Ok),
            ("bash", ToolStatus::Ok),
        ],
        "{results:#?}"
    );
    assert!(results[0].2.contains("add is broken"), "{}", results[0].2);
    assert!(results[1].2.contains("return a - b"));
    assert!(results[3].2.contains("ok"));
    // The model saw every result: the last request carries the whole loop.
    let requests = h.model.requests();
    assert_eq!(requests.len(), 5);
    // The files listed in the guest come with the task, before it.
    // The repository is named there too, not in the system prompt, which
    // is the same for every session of the mode.
    assert_eq!(
        requests[0].messages[0].content,
        format!(
            "Repository: {}\nFiles in the repository (2):\ncalc.py\ntest_calc.py\n\nmake the test pass",
            h.repo.path().display()
        )
    );
    assert_eq!(requests[0].system, cortex_core::system_prompt(Mode::Agent));
    let last = &requests[4].messages;
    assert_eq!(last.iter().filter(|m| m.role == Role::Tool).count(), 4);
    // The edit's diff is on the timeline.
    let diff = h.events().await.into_iter().find_map(|e| match e.kind {
        EventKind::ToolResult { diff: Some(d), .. } => Some(d),
        _ => None,
    });
    assert!(diff.is_some_and(|d| d.contains("+    return a + b")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_mode_refuses_every_mutation_and_leaves_the_repo_byte_identical() {
    let script = json!({"responses": [
        {"tool_calls": [
            {"name": "write_file", "arguments": {"path": "pwned.txt", "content": "x"}},
            {"name": "edit_file", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "0"}},
            {"name": "bash", "arguments": {"command": "rm -rf ./* && touch gone"}},
            {"name": "read_file", "arguments": {"path": "calc.py"}}
        ]},
        {"tool_calls": [{"name": "todo_write", "arguments": {"todos": []}}]},
        {"text": "I can only read here."}
    ]});
    let mut h = harness(
        &[("calc.py", CALC), ("test_calc.py", TEST)],
        Mode::Ask,
        script,
    )
    .await;
    let before = snapshot(h.repo.path());
    let outcome = h
        .session
        .run_turn("break things", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    assert_eq!(snapshot(h.repo.path()), before);
    let results = h.results().await;
    let statuses: Vec<_> = results.iter().map(|(n, s, _)| (n.as_str(), *s)).collect();
    assert_eq!(
        statuses,
        [
            ("write_file", ToolStatus::Refused),
            ("edit_file", ToolStatus::Refused),
            ("bash", ToolStatus::Refused),
            ("read_file", ToolStatus::Ok),
            ("todo_write", ToolStatus::Refused),
        ]
    );
    assert!(results[2].2.contains("not available in ask mode"));
    let refused = h
        .types()
        .await
        .into_iter()
        .filter(|t| *t == "tool.refused")
        .count();
    assert_eq!(refused, 4);
    // The withheld tools were never offered (nor `skill`: no skill here);
    // `task` is, and its children are read-only in Ask mode.
    for request in h.model.requests() {
        let names: Vec<_> = request.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["read_file", "glob", "grep", "task"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_requires_a_mermaid_diagram() {
    let good =
        "# Fix add\n1. Edit calc.py\n\n```mermaid\nflowchart TD\n  A[read] --> B[edit]\n```\n";
    let script = json!({"responses": [
        {"tool_calls": [{"name": "plan", "arguments": {"title": "Fix", "markdown": "1. edit calc.py"}}]},
        {"tool_calls": [{"name": "plan", "arguments": {"title": "Fix", "markdown": "```mermaid\nA-->B\n```"}}]},
        {"tool_calls": [{"name": "plan", "arguments": {"title": "Fix add", "markdown": good}}]},
        {"text": "Plan proposed."}
    ]});
    let mut h = harness(&[("calc.py", CALC)], Mode::Plan, script).await;
    let outcome = h
        .session
        .run_turn("plan the fix", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 });
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Error);
    assert!(results[0].2.contains("mermaid"), "{}", results[0].2);
    assert_eq!(results[1].1, ToolStatus::Error);
    assert_eq!(results[2].1, ToolStatus::Ok);
    let plans: Vec<_> = h
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::PlanProposed {
                version, markdown, ..
            } => Some((version, markdown)),
            _ => None,
        })
        .collect();
    assert_eq!(plans, [(1, good.to_owned())]);
    assert_eq!(
        std::fs::read_to_string(h.repo.path().join("calc.py")).expect("read"),
        CALC
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_bash_kills_the_whole_process_group() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo main=$$; sleep 100 & echo bg=$!; sleep 100"}}]},
        {"text": "never reached"}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    let mut live = h.session.subscribe();
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let watcher = tokio::spawn(async move {
        let mut output = String::new();
        while let Ok(event) = live.recv().await {
            if let EventKind::ToolOutputDelta { text, .. } = &event.kind {
                output.push_str(text);
                if output.contains("bg=") && output.ends_with('\n') {
                    stopper.cancel();
                    return output;
                }
            }
        }
        output
    });
    let outcome = h.session.run_turn("sleep", cancel).await.expect("turn");
    assert!(
        matches!(outcome, TurnOutcome::Stopped { .. }),
        "{outcome:?}"
    );
    let output = watcher.await.expect("watcher");
    let pid = |key: &str| -> i32 {
        output
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {output:?}"))
    };
    let (main, bg) = (pid("main="), pid("bg="));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while (pid_alive(main) || pid_alive(bg)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!pid_alive(main), "bash {main} survived Stop");
    assert!(!pid_alive(bg), "background sleep {bg} survived Stop");
    let results = h.results().await;
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1, ToolStatus::Stopped);
    let types = h.types().await;
    assert_eq!(types.last(), Some(&"turn.stopped"));
    // The history stays well formed: the call has its answer.
    let history = h.session.history();
    assert_eq!(history.last().map(|m| m.role), Some(Role::Tool));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_unknown_calls_become_readable_errors() {
    let huge = "x".repeat(10 * 1024 * 1024);
    let script = json!({"responses": [
        {"tool_calls": [
            {"name": "read_file", "arguments": "{not json"},
            {"name": "read_file", "arguments": {"path": 3}},
            {"name": "edit_file", "arguments": {"path": "calc.py"}},
            {"name": "list_files", "arguments": {}},
            {"name": "write_file", "arguments": {"path": "big.txt", "content": huge}}
        ]},
        {"tool_calls": [{"id": "dup", "name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"tool_calls": [{"id": "dup", "name": "bash", "arguments": {"command": "touch twice"}}]},
        {"text": "done"}
    ]});
    let mut h = harness(&[("calc.py", CALC)], Mode::Agent, script).await;
    let before = snapshot(h.repo.path());
    let outcome = h
        .session
        .run_turn("go", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 });
    assert_eq!(snapshot(h.repo.path()), before, "nothing on disk changed");
    let results = h.results().await;
    let statuses: Vec<_> = results.iter().map(|(_, s, _)| *s).collect();
    assert_eq!(
        statuses,
        [
            ToolStatus::Error,
            ToolStatus::Error,
            ToolStatus::Error,
            ToolStatus::Refused,
            ToolStatus::Error,
            ToolStatus::Ok,
            ToolStatus::Refused,
        ]
    );
    assert!(results[0].2.contains("invalid arguments for read_file"));
    assert!(results[2].2.contains("old_string"), "{}", results[2].2);
    assert!(results[3].2.contains("unknown tool `list_files`"));
    assert!(results[4].2.contains("limit"), "{}", results[4].2);
    assert!(results[6].2.contains("already used"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guest_attaches_before_the_first_model_request() {
    let script = json!({"responses": [{"text": "hello"}]});
    let mut h = harness(&[], Mode::Ask, script).await;
    h.session
        .run_turn("hi", CancellationToken::new())
        .await
        .expect("turn");
    let types = h.types().await;
    let position = |t: &str| types.iter().position(|x| *x == t).unwrap_or(usize::MAX);
    assert!(position("runtime.starting") < position("runtime.attached"));
    assert!(position("runtime.attached") < position("env.ready"));
    assert!(
        position("env.ready") < position("model.request"),
        "{types:?}"
    );
    assert_eq!(types.first(), Some(&"session.created"));
    assert_eq!(types.last(), Some(&"turn.completed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_repository_fails_before_any_model_request() {
    let store: std::sync::Arc<dyn cortex_store::Store> =
        std::sync::Arc::new(cortex_store::SqliteStore::in_memory().expect("store"));
    let model = std::sync::Arc::new(
        cortex_model::scripted::ScriptedProvider::from_json(r#"{"responses":[{"text":"x"}]}"#)
            .expect("script"),
    );
    let missing = std::path::Path::new("/definitely/not/here");
    let result = Session::create(config(
        missing,
        store,
        model.clone(),
        Mode::Agent,
        StopRule::Code,
    ))
    .await;
    let error = result.err().expect("must fail").to_string();
    assert!(error.contains("/definitely/not/here"), "{error}");
    assert!(model.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_stop_rule_ends_the_turn_after_eight_tool_rounds() {
    let responses: Vec<_> = (0..10)
        .map(|i| json!({"tool_calls": [{"name": "glob", "arguments": {"pattern": format!("*{i}")}}]}))
        .collect();
    let script = json!({ "responses": responses });
    let mut h = harness_with(&[], Mode::Agent, StopRule::Chat, script).await;
    let outcome = h
        .session
        .run_turn("loop", CancellationToken::new())
        .await
        .expect("turn");
    let TurnOutcome::Stopped { reason } = outcome else {
        panic!("expected stop, got {outcome:?}");
    };
    assert!(reason.contains("8 tool rounds"), "{reason}");
    let results = h.results().await;
    assert_eq!(results.iter().filter(|r| r.1 == ToolStatus::Ok).count(), 8);
    assert_eq!(results.last().map(|r| r.1), Some(ToolStatus::Refused));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bot_stop_rule_refuses_the_sixth_identical_call() {
    let responses: Vec<_> = (0..8)
        .map(|_| json!({"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.rs"}}]}))
        .collect();
    let mut h = harness_with(
        &[],
        Mode::Agent,
        StopRule::Bot,
        json!({ "responses": responses }),
    )
    .await;
    let outcome = h
        .session
        .run_turn("loop", CancellationToken::new())
        .await
        .expect("turn");
    assert!(
        matches!(&outcome, TurnOutcome::Stopped { reason } if reason.contains("identical")),
        "{outcome:?}"
    );
    assert_eq!(h.results().await.len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_stream_is_retried_and_a_model_error_fails_the_turn() {
    let script = json!({"responses": [
        {"text": "partial answer that gets cut", "cut_after": 2},
        {"text": "whole answer"}
    ]});
    let mut h = harness(&[], Mode::Ask, script).await;
    let outcome = h
        .session
        .run_turn("hi", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 1 });
    assert!(h.types().await.contains(&"model.retry"));
    assert_eq!(
        h.session.history().last().map(|m| m.content.as_str()),
        Some("whole answer")
    );

    let script = json!({"responses": [{"error": {"status": 401, "body": "bad key"}}]});
    let mut h = harness(&[], Mode::Ask, script).await;
    let outcome = h
        .session
        .run_turn("hi", CancellationToken::new())
        .await
        .expect("turn");
    let TurnOutcome::Failed { error } = outcome else {
        panic!("expected failure, got {outcome:?}");
    };
    assert!(
        error.contains("401") && error.contains("bad key"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_has_the_same_history_todos_and_mode() {
    let script = json!({"responses": [
        {"tool_calls": [
            {"name": "read_file", "arguments": {"path": "calc.py"}},
            {"name": "grep", "arguments": {"pattern": "add"}},
            {"name": "todo_write", "arguments": {"todos": [{"content": "fix add", "status": "in_progress"}]}}
        ]},
        {"text": "noted"}
    ]});
    let mut h = harness(&[("calc.py", CALC)], Mode::Agent, script).await;
    h.session
        .run_turn("look", CancellationToken::new())
        .await
        .expect("turn");
    h.session.set_mode(Mode::Ask).await.expect("mode");
    let again = Session::resume(
        h.session.id(),
        config(
            h.repo.path(),
            h.store.clone(),
            h.model.clone(),
            Mode::Agent,
            StopRule::Code,
        ),
    )
    .await
    .expect("resume");
    assert_eq!(again.history(), h.session.history());
    assert_eq!(again.todos(), h.session.todos());
    assert_eq!(again.mode(), Mode::Ask);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_third_identical_read_in_a_row_is_refused_and_the_turn_goes_on() {
    let read = || json!({"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]});
    let script = json!({"responses": [read(), read(), read(), {"text": "add subtracts"}]});
    let mut h = harness(&[("calc.py", CALC)], Mode::Ask, script).await;
    let outcome = h
        .session
        .run_turn("what does add do?", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 });
    let statuses: Vec<ToolStatus> = h.results().await.into_iter().map(|r| r.1).collect();
    assert_eq!(
        statuses,
        [ToolStatus::Ok, ToolStatus::Ok, ToolStatus::Refused]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turns_end_says_when_the_provider_cut_or_refused_the_answer() {
    // A cut reply is retried once with the bound stated; cut again, the turn
    // ends as cut.
    let script = json!({"responses": [
        {"text": "cut", "finish": "length"},
        {"text": "cut again", "finish": "length"},
        {"refusal": "I can't help with that."},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}], "finish": "length"},
        {"text": "a"}
    ]});
    let mut h = harness(&[("a.txt", "a")], Mode::Agent, script).await;
    for prompt in ["long", "forbidden", "read"] {
        h.session
            .run_turn(prompt, CancellationToken::new())
            .await
            .expect("turn");
    }
    let ends: Vec<EventKind> = h
        .events()
        .await
        .into_iter()
        .map(|e| e.kind)
        .filter(EventKind::ends_turn)
        .collect();
    assert!(matches!(
        ends[0],
        EventKind::TurnCompleted {
            finish: Some(TurnFinish::MaxTokens),
            ..
        }
    ));
    assert!(
        matches!(
            &ends[1],
            EventKind::TurnFailed { finish: Some(TurnFinish::Refusal), error } if error.contains("can't help")
        ),
        "{:?}",
        ends[1]
    );
    // A cut round that went on to call tools is not how the turn ended.
    assert!(matches!(
        &ends[2],
        EventKind::TurnCompleted {
            rounds: 2,
            finish: None,
            unverified,
        } if unverified.is_empty()
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_cut_at_the_output_limit_is_retried_once_with_the_limit_said() {
    let script = json!({"responses": [
        {"text": "```python\ndef f():\n    return 1\n    return 1\n    return 1", "finish": "length"},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "It says a."}
    ]});
    let mut h = harness(&[("a.txt", "a")], Mode::Agent, script).await;
    let outcome = h
        .session
        .run_turn("What does a.txt say?", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    let events: Vec<EventKind> = h.events().await.into_iter().map(|e| e.kind).collect();
    let reminders: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::TurnReminder { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(reminders.len(), 1, "{reminders:?}");
    assert!(
        reminders[0].contains("cut off at the output limit"),
        "{reminders:?}"
    );
    // The model's next request ends with the reminder, after the cut reply.
    let second = &h.model.requests()[1];
    let n = second.messages.len();
    assert_eq!(second.messages[n - 1].content, *reminders[0]);
    assert!(second.messages[n - 2].content.starts_with("```python"));
    // The turn ended by the model's choice, not as cut.
    assert!(matches!(
        events.last(),
        Some(EventKind::TurnCompleted { finish: None, .. })
    ));
}

/// A small model loops on one `write_file` (the same file a dozen times,
/// until the task's time bound). Writing the same
/// content again cannot change its result, as for a read or an edit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_third_identical_write_in_a_row_is_refused_and_the_turn_goes_on() {
    let write = json!({"tool_calls": [{"name": "write_file", "arguments":
        {"path": "notes.txt", "content": "remember the milk\n"}}]});
    let script = json!({"responses": [write.clone(), write.clone(), write, {"text": "Written."}]});
    let mut h = harness(&[], Mode::Agent, script).await;
    let outcome = h
        .session
        .run_turn("write notes.txt", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 });
    let results = h.results().await;
    let statuses: Vec<_> = results.iter().map(|(n, s, _)| (n.as_str(), *s)).collect();
    assert_eq!(
        statuses,
        [
            ("write_file", ToolStatus::Ok),
            ("write_file", ToolStatus::Ok),
            ("write_file", ToolStatus::Refused),
        ]
    );
    assert!(
        results[2].2.contains("same write_file call"),
        "{:?}",
        results[2]
    );
}
