//! The event → update mapping, one case per kind of update.

use super::*;
use cortex_protocol::OutputStream;
use serde_json::json;

fn mapper() -> Mapper {
    Mapper::new(PathBuf::from("/repo"))
}

fn wire(update: &SessionUpdate) -> Value {
    serde_json::to_value(update).expect("serialize")
}

fn call(name: &str, arguments: Value) -> EventKind {
    EventKind::ToolCall {
        call_id: "c1".into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

fn result(name: &str, status: ToolStatus, output: &str) -> EventKind {
    EventKind::ToolResult {
        call_id: "c1".into(),
        name: name.into(),
        status,
        output: output.into(),
        ms: 1.0,
        diff: None,
        attachments: Vec::new(),
        steer: None,
    }
}

#[test]
fn text_and_thinking_are_chunks() {
    let mut mapper = mapper();
    let message = mapper.map(&EventKind::MessageDelta { text: "Hi".into() }, false);
    let thought = mapper.map(&EventKind::ThinkingDelta { text: "hm".into() }, false);
    assert_eq!(wire(&message[0])["sessionUpdate"], "agent_message_chunk");
    assert_eq!(wire(&message[0])["content"]["text"], "Hi");
    assert_eq!(wire(&thought[0])["sessionUpdate"], "agent_thought_chunk");
    assert_eq!(wire(&thought[0])["content"]["text"], "hm");
}

#[test]
fn a_user_message_is_sent_back_only_in_a_replay() {
    let started = EventKind::TurnStarted {
        message: "fix it".into(),
        mode: Mode::Agent,
    };
    assert!(mapper().map(&started, false).is_empty());
    let replayed = mapper().map(&started, true);
    assert_eq!(wire(&replayed[0])["sessionUpdate"], "user_message_chunk");
    assert_eq!(wire(&replayed[0])["content"]["text"], "fix it");
}

#[test]
fn an_edit_goes_pending_then_completed_with_its_diff() {
    let mut mapper = mapper();
    let args = json!({"path": "src/a.rs", "old_string": "1 + 1", "new_string": "2"});
    let started = mapper.map(&call("edit_file", args.clone()), false);
    assert!(
        matches!(&started[0], SessionUpdate::ToolCall(c) if c.status == ToolCallStatus::Pending),
        "{started:?}"
    );
    let started = wire(&started[0]);
    assert_eq!(started["sessionUpdate"], "tool_call");
    assert_eq!(started["toolCallId"], "c1");
    assert_eq!(started["kind"], "edit");
    // Pending is the default, which the wire leaves out.
    assert!(started.get("status").is_none(), "{started}");
    assert_eq!(started["rawInput"], args);
    assert_eq!(started["locations"][0]["path"], "/repo/src/a.rs");
    assert_eq!(started["title"], "edit_file src/a.rs");

    let done = mapper.map(&result("edit_file", ToolStatus::Ok, "edited"), false);
    let done = wire(&done[0]);
    assert_eq!(done["sessionUpdate"], "tool_call_update");
    assert_eq!(done["toolCallId"], "c1");
    assert_eq!(done["status"], "completed");
    let content = &done["content"];
    assert_eq!(content[0]["type"], "diff");
    assert_eq!(content[0]["path"], "/repo/src/a.rs", "absolute");
    assert_eq!(content[0]["oldText"], "1 + 1");
    assert_eq!(content[0]["newText"], "2");
    assert_eq!(content[1]["content"]["text"], "edited");
}

#[test]
fn a_write_diff_is_the_whole_new_text() {
    let mut mapper = mapper();
    mapper.map(
        &call("write_file", json!({"path": "n.txt", "content": "new\n"})),
        false,
    );
    let done = wire(&mapper.map(&result("write_file", ToolStatus::Ok, "wrote"), false)[0]);
    assert_eq!(done["content"][0]["type"], "diff");
    assert_eq!(done["content"][0]["newText"], "new\n");
    assert!(done["content"][0]["oldText"].is_null());
}

#[test]
fn a_failed_edit_has_no_diff_and_fails() {
    let mut mapper = mapper();
    mapper.map(
        &call(
            "edit_file",
            json!({"path": "a", "old_string": "x", "new_string": "y"}),
        ),
        false,
    );
    let done = wire(&mapper.map(&result("edit_file", ToolStatus::Error, "no match"), false)[0]);
    assert_eq!(done["status"], "failed");
    assert_eq!(done["content"].as_array().map(Vec::len), Some(1));
    assert_eq!(done["content"][0]["content"]["text"], "no match");
}

#[test]
fn bash_runs_once_in_progress_and_a_refusal_fails_once() {
    let mut mapper = mapper();
    let started = wire(&mapper.map(&call("bash", json!({"command": "cargo test"})), false)[0]);
    assert_eq!(started["kind"], "execute");
    assert_eq!(started["title"], "bash: cargo test");
    let output = EventKind::ToolOutputDelta {
        call_id: "c1".into(),
        stream: OutputStream::Stdout,
        text: "ok".into(),
    };
    let first = mapper.map(&output, false);
    assert_eq!(wire(&first[0])["status"], "in_progress");
    assert!(mapper.map(&output, false).is_empty(), "said once");
    let refusal = EventKind::ToolRefused {
        call_id: "c1".into(),
        name: "bash".into(),
        reason: "ask mode is read-only".into(),
    };
    assert!(mapper.map(&refusal, false).is_empty(), "its result says it");
    let refused = mapper.map(
        &result("bash", ToolStatus::Refused, "ask mode is read-only"),
        false,
    );
    let refused = wire(&refused[0]);
    assert_eq!(refused["toolCallId"], "c1");
    assert_eq!(refused["status"], "failed");
    assert_eq!(
        refused["content"][0]["content"]["text"],
        "ask mode is read-only"
    );
}

#[test]
fn arguments_that_are_not_json_still_make_a_call() {
    let mut mapper = mapper();
    let kind = EventKind::ToolCall {
        call_id: "c1".into(),
        name: "read_file".into(),
        arguments: "{not json".into(),
    };
    let started = wire(&mapper.map(&kind, false)[0]);
    assert_eq!(started["title"], "read_file");
    assert_eq!(started["kind"], "read");
}

#[test]
fn todos_are_a_plan_and_mode_changes_the_current_mode() {
    let mut mapper = mapper();
    let todos = EventKind::TodoUpdated {
        todos: vec![
            Todo {
                content: "read".into(),
                status: TodoStatus::Completed,
            },
            Todo {
                content: "fix".into(),
                status: TodoStatus::InProgress,
            },
        ],
    };
    let plan = wire(&mapper.map(&todos, false)[0]);
    assert_eq!(plan["sessionUpdate"], "plan");
    assert_eq!(plan["entries"][0]["content"], "read");
    assert_eq!(plan["entries"][0]["status"], "completed");
    assert_eq!(plan["entries"][1]["status"], "in_progress");
    let mode = mapper.map(
        &EventKind::ModeChanged {
            from: Mode::Agent,
            to: Mode::Ask,
        },
        false,
    );
    assert_eq!(wire(&mode[0])["sessionUpdate"], "current_mode_update");
    assert_eq!(wire(&mode[0])["currentModeId"], "ask");
}

#[test]
fn bookkeeping_events_send_nothing() {
    let mut mapper = mapper();
    for kind in [
        EventKind::EnvReady { ms: 1.0 },
        EventKind::TurnCompleted {
            rounds: 1,
            finish: None,
            unverified: Vec::new(),
        },
        EventKind::Usage {
            input_tokens: 1,
            output_tokens: 1,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: None,
        },
    ] {
        assert!(mapper.map(&kind, false).is_empty(), "{kind:?}");
    }
}

#[test]
fn turn_ends_answer_the_prompt() {
    assert_eq!(
        turn_end(&EventKind::TurnCompleted {
            rounds: 2,
            finish: None,
            unverified: Vec::new()
        }),
        Some(TurnEnd::Stop(StopReason::EndTurn))
    );
    assert_eq!(
        turn_end(&EventKind::TurnCompleted {
            rounds: 1,
            finish: Some(cortex_protocol::TurnFinish::MaxTokens),
            unverified: Vec::new()
        }),
        Some(TurnEnd::Stop(StopReason::MaxTokens))
    );
    assert_eq!(
        turn_end(&EventKind::TurnFailed {
            error: "model failed: refused".into(),
            finish: Some(cortex_protocol::TurnFinish::Refusal)
        }),
        Some(TurnEnd::Stop(StopReason::Refusal))
    );
    assert_eq!(
        turn_end(&EventKind::TurnStopped {
            reason: STOPPED_BY_USER.into()
        }),
        Some(TurnEnd::Stop(StopReason::Cancelled))
    );
    assert_eq!(
        turn_end(&EventKind::TurnStopped {
            reason: "the chat stop rule: 8 tool rounds".into()
        }),
        Some(TurnEnd::Stop(StopReason::MaxTurnRequests)),
        "the stop rule is not the user"
    );
    assert_eq!(
        turn_end(&EventKind::TurnFailed {
            error: "model down".into(),
            finish: None,
        }),
        Some(TurnEnd::Failed("model down".into()))
    );
    assert_eq!(
        turn_end(&EventKind::MessageDone {
            text: "x".into(),
            provider_items: Vec::new()
        }),
        None
    );
}

#[test]
fn goal_steps_come_before_the_todos_in_one_plan() {
    let mut mapper = mapper();
    let set = mapper.map(
        &EventKind::GoalSet {
            objective: "ship it".into(),
            budget: Default::default(),
        },
        false,
    );
    assert_eq!(wire(&set[0])["entries"][0]["content"], "ship it");
    let todos = EventKind::TodoUpdated {
        todos: vec![Todo {
            content: "write the test".into(),
            status: TodoStatus::Pending,
        }],
    };
    mapper.map(&todos, false);
    let steps = EventKind::GoalUpdated {
        done: 1,
        total: 3,
        steps: vec![
            GoalStep {
                title: "a".into(),
                done: true,
            },
            GoalStep {
                title: "b".into(),
                done: false,
            },
            GoalStep {
                title: "c".into(),
                done: false,
            },
        ],
    };
    let plan = wire(&mapper.map(&steps, false)[0]);
    let entries: Vec<(&str, &str, &str)> = plan["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["content"].as_str().unwrap_or_default(),
                e["status"].as_str().unwrap_or_default(),
                e["priority"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("a", "completed", "high"),
            ("b", "in_progress", "high"),
            ("c", "pending", "high"),
            ("write the test", "pending", "medium"),
        ]
    );
    let cleared = wire(&mapper.map(&EventKind::GoalCleared {}, false)[0]);
    assert_eq!(cleared["entries"].as_array().map(Vec::len), Some(1));
}

#[test]
fn the_four_modes_are_advertised() {
    let state = serde_json::to_value(modes(Mode::Plan)).expect("serialize");
    assert_eq!(state["currentModeId"], "plan");
    let ids: Vec<&str> = state["availableModes"]
        .as_array()
        .expect("modes")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["ask", "plan", "spec", "agent"]);
}
