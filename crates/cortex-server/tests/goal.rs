//! Goals over the session API with scripted models: `PUT …/goal` starts
//! the goal's first turn and the server continues it turn after turn with
//! no user message until the model completes it; Stop pauses it and
//! `POST …/goal/resume` continues; a turn budget, a model that only talks
//! and one that only runs commands that change nothing pause it; a goal
//! set without a budget shows the default one; completing with steps left
//! is refused; the session resource carries the chip's figures; bad
//! requests are 4xx.

mod common;

use common::{ALICE, BOB, Server, Sse, start};
use cortex_protocol::{
    DEFAULT_GOAL_MINUTES, DEFAULT_GOAL_TOKENS, DEFAULT_GOAL_TURNS, EventKind, PauseReason,
    ToolStatus,
};
use reqwest::Method;
use serde_json::{Value, json};

fn steps(done: &[bool]) -> Value {
    let titles = ["write b.txt", "write c.txt", "check both"];
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

fn write(path: &str) -> Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": "x\n"}})
}

async fn put_goal(server: &Server, id: &str, body: Value) -> (u16, Value) {
    server
        .send(
            Method::PUT,
            &format!("/v1/sessions/{id}/goal"),
            Some(ALICE),
            Some(body),
        )
        .await
}

/// `POST …/goal/{what}` (`pause`, `resume`) or `GET`/`DELETE …/goal`.
async fn goal(server: &Server, method: Method, id: &str, what: &str) -> (u16, Value) {
    let path = format!("/v1/sessions/{id}/goal{what}");
    server.send(method, &path, Some(ALICE), None).await
}

/// Events until (and with) the first for which `last` holds.
async fn until(sse: &mut Sse, mut last: impl FnMut(&EventKind) -> bool) -> Vec<EventKind> {
    let mut seen = Vec::new();
    while let Some(message) = sse.next().await {
        let done = last(&message.event.kind);
        seen.push(message.event.kind);
        if done {
            return seen;
        }
    }
    panic!("the stream ended first: {seen:#?}");
}

fn count(kinds: &[EventKind], name: &str) -> usize {
    kinds.iter().filter(|k| k.type_name() == name).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_step_goal_completes_across_turns_without_a_user_message() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Three steps."},
        {"tool_calls": [write("b.txt"), goal_call(&[true, false, false])]},
        {"text": "b.txt written."},
        {"tool_calls": [write("c.txt"), goal_call(&[true, true, false])]},
        {"text": "c.txt written."},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "c.txt"}},
            {"name": "goal", "arguments": {"steps": steps(&[true, true, true]), "complete": true,
                "evidence": "b.txt and c.txt exist"}}]},
        {"text": "Done."}
    ]}));
    let id = server.session(&model).await;
    let (status, body) = goal(&server, Method::GET, &id, "").await;
    assert_eq!((status, &body["error"]["code"]), (404, &json!("no_goal")));

    let mut sse = server.events(&id, ALICE, None).await;
    let (status, answer) =
        put_goal(&server, &id, json!({"objective": "write b.txt and c.txt"})).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer["turn_id"].is_string(), "{answer}");
    assert_eq!(answer["goal"]["status"], "active");
    // Set without a budget, the goal is bounded by the default one.
    let default = json!({"turns": DEFAULT_GOAL_TURNS, "tokens": DEFAULT_GOAL_TOKENS,
        "minutes": DEFAULT_GOAL_MINUTES});
    assert_eq!(answer["goal"]["budget"], default);

    let mut completed = false;
    let kinds = until(&mut sse, |k| {
        completed |= matches!(k, EventKind::GoalCompleted { .. });
        completed && k.ends_turn()
    })
    .await;
    assert_eq!(count(&kinds, "turn.started"), 4, "{kinds:#?}");
    assert_eq!(count(&kinds, "goal.continued"), 3);
    assert_eq!(count(&kinds, "goal.completed"), 1);
    assert_eq!(count(&kinds, "goal.paused"), 0);
    assert!(server.repo.path().join("c.txt").is_file());

    let view = server.idle(&id).await;
    assert_eq!(
        view["goal"],
        json!({"objective": "write b.txt and c.txt", "done": 3, "total": 3, "status": "complete"})
    );
    let (status, shown) = goal(&server, Method::GET, &id, "").await;
    assert_eq!(status, 200);
    assert_eq!(shown["chip"], "Goal · 3/3");
    assert_eq!(shown["evidence"], "b.txt and c.txt exist");
    assert_eq!(shown["spent"]["turns"], 4);
    assert_eq!(shown["budget"], default);
    // Nothing continues a complete goal.
    let (status, body) = goal(&server, Method::POST, &id, "/resume").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("goal_not_paused"))
    );

    // Closed (no longer live), the session still shows its goal.
    server.state.close_all().await;
    let (_, view) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(view["goal"]["done"], 3, "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_pauses_the_goal_and_resume_continues_from_its_steps() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"text": "working", "hang": true},
        {"tool_calls": [write("b.txt"), write("c.txt"),
            {"name": "goal", "arguments": {"steps": steps(&[true, true, true]), "complete": true,
                "evidence": "both written"}}]},
        {"text": "Done."}
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, _) = put_goal(&server, &id, json!({"objective": "write both"})).await;
    assert_eq!(status, 200);
    until(
        &mut sse,
        |k| matches!(k, EventKind::MessageDelta { text } if text.contains("working")),
    )
    .await;
    let (status, body) = goal(&server, Method::POST, &id, "/resume").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("conflict")),
        "{body}"
    );

    let (status, _) = server.stop(&id, ALICE).await;
    assert_eq!(status, 202);
    let kinds = until(&mut sse, |k| matches!(k, EventKind::GoalPaused { .. })).await;
    assert!(
        kinds.iter().any(|k| k.type_name() == "turn.stopped"),
        "{kinds:#?}"
    );
    assert!(matches!(
        kinds.last(),
        Some(EventKind::GoalPaused {
            reason: PauseReason::Stopped
        })
    ));
    server.idle(&id).await;
    let (_, shown) = goal(&server, Method::GET, &id, "").await;
    assert_eq!(
        (&shown["status"], &shown["paused"]),
        (&json!("paused"), &json!("stopped"))
    );

    let (status, answer) = goal(&server, Method::POST, &id, "/resume").await;
    assert_eq!(status, 202, "{answer}");
    assert!(answer["turn_id"].is_string());
    let kinds = until(&mut sse, |k| k.ends_turn()).await;
    assert_eq!(
        kinds.first().map(EventKind::type_name),
        Some("goal.resumed")
    );
    let prompt = kinds.iter().find_map(|k| match k {
        EventKind::TurnStarted { message, .. } => Some(message.clone()),
        _ => None,
    });
    // The continuation starts from the stored steps.
    let prompt = prompt.expect("a continuation turn");
    assert!(prompt.contains("[ ] write b.txt"), "{prompt}");
    assert!(kinds.iter().any(|k| k.type_name() == "goal.completed"));
    let view = server.idle(&id).await;
    assert_eq!(view["goal"]["status"], "complete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_budget_pauses_the_goal() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"tool_calls": [write("b.txt"), goal_call(&[true, false, false])]},
        {"text": "b written."},
        {"text": "never asked"}
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let body = json!({"objective": "write both", "budget": {"turns": 2}});
    let (status, answer) = put_goal(&server, &id, body).await;
    assert_eq!(status, 200, "{answer}");
    // The limits left out take their defaults.
    assert_eq!(
        answer["goal"]["budget"],
        json!({"turns": 2, "tokens": DEFAULT_GOAL_TOKENS, "minutes": DEFAULT_GOAL_MINUTES})
    );
    let kinds = until(&mut sse, |k| matches!(k, EventKind::GoalPaused { .. })).await;
    assert_eq!(count(&kinds, "turn.started"), 2);
    let set = kinds.iter().find_map(|k| match k {
        EventKind::GoalSet { budget, .. } => Some(*budget),
        _ => None,
    });
    assert_eq!(set.and_then(|b| b.tokens), Some(DEFAULT_GOAL_TOKENS));
    assert!(matches!(
        kinds.last(),
        Some(EventKind::GoalPaused {
            reason: PauseReason::Budget
        })
    ));
    let view = server.idle(&id).await;
    assert_eq!(
        view["goal"],
        json!({"objective": "write both", "done": 1, "total": 3, "status": "paused"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completing_with_steps_left_is_refused_and_a_model_that_only_talks_stalls() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"tool_calls": [{"name": "goal", "arguments": {"steps": steps(&[true, false, false]),
            "complete": true, "evidence": "trust me"}}]},
        {"text": "Hm."},
        {"text": "I will think about it."},
        {"text": "Still thinking."},
        {"text": "never asked"}
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, _) = put_goal(&server, &id, json!({"objective": "write both"})).await;
    assert_eq!(status, 200);
    let kinds = until(&mut sse, |k| matches!(k, EventKind::GoalPaused { .. })).await;
    let refused = kinds.iter().find_map(|k| match k {
        EventKind::ToolResult { status, output, .. } => Some((*status, output.clone())),
        _ => None,
    });
    let (status, output) = refused.expect("the goal call's result");
    assert_eq!(status, ToolStatus::Error);
    assert!(
        output.contains("steps left: write c.txt; check both"),
        "{output}"
    );
    assert_eq!(count(&kinds, "goal.completed"), 0);
    assert_eq!(
        count(&kinds, "goal.updated"),
        0,
        "a refused call records nothing"
    );
    // The first turn, then two continuations without progress.
    assert_eq!(count(&kinds, "turn.started"), 3);
    assert_eq!(count(&kinds, "goal.continued"), 2);
    assert!(matches!(
        kinds.last(),
        Some(EventKind::GoalPaused {
            reason: PauseReason::Stalled
        })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_keeps_running_harmless_commands_stalls() {
    let bash = |command: &str| json!({"name": "bash", "arguments": {"command": command}});
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"tool_calls": [bash("ls")]},
        {"text": "Looked."},
        {"tool_calls": [bash("true")]},
        {"text": "Looked again."},
        {"text": "never asked"}
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, _) = put_goal(&server, &id, json!({"objective": "write both"})).await;
    assert_eq!(status, 200);
    let kinds = until(&mut sse, |k| matches!(k, EventKind::GoalPaused { .. })).await;
    let statuses: Vec<ToolStatus> = kinds
        .iter()
        .filter_map(|k| match k {
            EventKind::ToolResult { name, status, .. } if name == "bash" => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, [ToolStatus::Ok, ToolStatus::Ok], "{kinds:#?}");
    assert_eq!(count(&kinds, "goal.continued"), 2);
    assert!(matches!(
        kinds.last(),
        Some(EventKind::GoalPaused {
            reason: PauseReason::Stalled
        })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_and_clear_wait_for_a_running_turn_and_stop_the_goal() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned.", "delay_ms": 1500},
        {"text": "never asked"}
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, _) = put_goal(&server, &id, json!({"objective": "write both"})).await;
    assert_eq!(status, 200);
    let (status, shown) = goal(&server, Method::POST, &id, "/pause").await;
    assert_eq!(status, 202, "the turn runs: {shown}");
    assert_eq!(shown["status"], "active");
    let kinds = until(&mut sse, |k| matches!(k, EventKind::GoalPaused { .. })).await;
    assert!(matches!(
        kinds.last(),
        Some(EventKind::GoalPaused {
            reason: PauseReason::User
        })
    ));
    assert_eq!(
        count(&kinds, "turn.started"),
        1,
        "no continuation after a pause"
    );
    server.idle(&id).await;
    let (status, body) = goal(&server, Method::POST, &id, "/pause").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("goal_not_active"))
    );

    let (status, _) = goal(&server, Method::DELETE, &id, "").await;
    assert_eq!(status, 204);
    let kinds = until(&mut sse, |k| matches!(k, EventKind::GoalCleared {})).await;
    assert_eq!(kinds.len(), 1);
    let (_, view) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert!(view.get("goal").is_none(), "{view}");
    let (status, body) = goal(&server, Method::POST, &id, "/resume").await;
    assert_eq!((status, &body["error"]["code"]), (409, &json!("no_goal")));
    let (status, _) = goal(&server, Method::DELETE, &id, "").await;
    assert_eq!(status, 409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_goal_requests_are_4xx_and_another_principal_sees_nothing() {
    let server = start().await;
    let id = server
        .session(&server.script(json!({"responses": []})))
        .await;
    for body in [
        json!({"objective": "  "}),
        json!({"objective": "x", "budget": {"turns": 0}}),
        json!({"objective": "x", "budget": {"turn": 2}}),
        json!({"objective": 3}),
        json!({}),
    ] {
        let (status, answer) = put_goal(&server, &id, body.clone()).await;
        assert_eq!(status, 422, "{body}: {answer}");
        assert!(answer["error"]["message"].is_string());
    }
    let (status, _) = goal(&server, Method::POST, &id, "/resume").await;
    assert_eq!(status, 409);
    let (status, _) = goal(&server, Method::POST, &id, "/pause").await;
    assert_eq!(status, 409);
    for (method, what) in [
        (Method::GET, ""),
        (Method::DELETE, ""),
        (Method::POST, "/pause"),
        (Method::POST, "/resume"),
    ] {
        let path = format!("/v1/sessions/{id}/goal{what}");
        let (status, _) = server.send(method.clone(), &path, Some(BOB), None).await;
        assert_eq!(status, 404, "bob {method} {path}");
        let path = format!("/v1/sessions/s-unknown/goal{what}");
        let (status, _) = server.send(method, &path, Some(ALICE), None).await;
        assert_eq!(status, 404, "{path}");
    }
    let path = format!("/v1/sessions/{id}/goal");
    let body = Some(json!({"objective": "x"}));
    let (status, _) = server.send(Method::PUT, &path, Some(BOB), body).await;
    assert_eq!(status, 404);
}
