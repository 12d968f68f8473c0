//! Plan accept/reject over the API: a scripted model proposes plans in Plan
//! mode; rejecting sends the feedback as the next turn (still Plan), accepting
//! switches to Agent, seeds the todo list from the plan's steps and starts a
//! turn with the plan. Both are 409 with no proposed plan or while a turn runs.

mod common;

use common::{ALICE, Server, start};
use cortex_protocol::{EventKind, Mode, TodoStatus};
use reqwest::Method;
use serde_json::json;

fn plan_md(steps: &[&str]) -> String {
    let list: String = steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {s}\n", i + 1))
        .collect();
    format!("# Plan\n{list}\n```mermaid\nflowchart TD\n  A-->B\n```\n")
}

async fn verdict(
    server: &Server,
    id: &str,
    what: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    server.verdict(id, &format!("plan/{what}"), body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_then_accept_runs_the_plan_in_agent_mode_with_seeded_todos() {
    let server = start().await;
    let v1 = plan_md(&["Read a.txt", "Rewrite it"]);
    let v2 = plan_md(&["Read a.txt", "Write `done` into a.txt", "Check it"]);
    let id = server.session_in(
        "plan",
        json!({"responses": [
            {"tool_calls": [{"name": "plan", "arguments": {"title": "First", "markdown": v1}}]},
            {"text": "Proposed v1."},
            {"tool_calls": [{"name": "plan", "arguments": {"title": "Second", "markdown": v2}}]},
            {"text": "Proposed v2."},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "done\n"}}]},
            {"text": "Implemented."}
        ]}),
    )
    .await;
    let (status, body) = verdict(&server, &id, "accept", None).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "no_proposed_plan");

    let mut sse = server.events(&id, ALICE, None).await;
    let (status, _) = server.turn(&id, "plan the rewrite").await;
    assert_eq!(status, 202);
    let first = Server::turn_kinds(&mut sse).await;
    assert!(
        first
            .iter()
            .any(|k| matches!(k, EventKind::PlanProposed { version: 1, .. }))
    );

    let (status, body) = verdict(&server, &id, "reject", Some(json!({"feedback": " "}))).await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = verdict(
        &server,
        &id,
        "reject",
        Some(json!({"feedback": "also check the result"})),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let rejected = Server::turn_kinds(&mut sse).await;
    assert!(
        matches!(
            &rejected[0],
            EventKind::PlanRejected { version: 1, feedback } if feedback == "also check the result"
        ),
        "{rejected:?}"
    );
    let started = rejected.iter().find_map(|k| match k {
        EventKind::TurnStarted { message, mode } => Some((message.clone(), *mode)),
        _ => None,
    });
    let (message, mode) = started.expect("a turn started");
    assert_eq!(mode, Mode::Plan);
    assert!(message.contains("also check the result"), "{message}");
    assert!(
        rejected
            .iter()
            .any(|k| matches!(k, EventKind::PlanProposed { version: 2, .. }))
    );

    let (status, body) = verdict(&server, &id, "accept", None).await;
    assert_eq!(status, 202, "{body}");
    let accepted = Server::turn_kinds(&mut sse).await;
    let todos = accepted.iter().find_map(|k| match k {
        EventKind::TodoUpdated { todos } => Some(todos.clone()),
        _ => None,
    });
    let todos = todos.expect("todos seeded");
    let contents: Vec<_> = todos.iter().map(|t| t.content.as_str()).collect();
    assert_eq!(
        contents,
        ["Read a.txt", "Write `done` into a.txt", "Check it"]
    );
    assert!(todos.iter().all(|t| t.status == TodoStatus::Pending));
    let order: Vec<&str> = accepted.iter().map(|k| k.type_name()).collect();
    let at = |name: &str| order.iter().position(|t| *t == name).unwrap_or(usize::MAX);
    assert!(
        at("mode.changed") < at("plan.accepted") && at("plan.accepted") < at("turn.started"),
        "{order:?}"
    );
    assert!(
        accepted
            .iter()
            .any(|k| matches!(k, EventKind::PlanAccepted { version: 2 }))
    );
    let message = accepted.iter().find_map(|k| match k {
        EventKind::TurnStarted { message, mode } => Some((message.clone(), *mode)),
        _ => None,
    });
    let (message, mode) = message.expect("turn");
    assert_eq!(mode, Mode::Agent);
    assert!(
        message.contains("Second") && message.contains("Write `done` into a.txt"),
        "{message}"
    );
    assert!(matches!(
        accepted.last(),
        Some(EventKind::TurnCompleted { .. })
    ));
    let written = std::fs::read_to_string(server.repo.path().join("a.txt")).expect("read");
    assert_eq!(written, "done\n");

    let (_, shown) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(shown["mode"], "agent");
    // The verdict is spent: nothing waits any more.
    let (status, body) = verdict(&server, &id, "accept", None).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "no_proposed_plan");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verdict_while_a_turn_runs_is_a_conflict() {
    let server = start().await;
    let md = plan_md(&["One"]);
    let id = server
        .session_in(
            "plan",
            json!({"responses": [
                {"tool_calls": [{"name": "plan", "arguments": {"title": "P", "markdown": md}}]},
                {"text": "Proposed."},
                {"text": "still thinking", "hang": true}
            ]}),
        )
        .await;
    let mut sse = server.events(&id, ALICE, None).await;
    server.turn(&id, "plan").await;
    Server::turn_kinds(&mut sse).await;
    let mut started = false;
    for _ in 0..100 {
        if server.turn(&id, "more").await.0 == 202 {
            started = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(started, "a turn after the first one");
    while let Some(message) = sse.next().await {
        if matches!(message.event.kind, EventKind::MessageDelta { .. }) {
            break;
        }
    }
    // The spec's verdicts too: a running turn is a conflict before any
    // question of what waits.
    for (what, body) in [
        ("plan/accept", None),
        ("plan/reject", Some(json!({"feedback": "no"}))),
        ("spec/accept", None),
        ("spec/reject", Some(json!({"feedback": "no"}))),
    ] {
        let (status, answer) = server.verdict_now(&id, what, body).await;
        assert_eq!(status, 409, "{answer}");
        assert_eq!(answer["error"]["code"], "conflict");
    }
    server.stop(&id, ALICE).await;
    Server::turn_kinds(&mut sse).await;
    // The plan still waits, untouched by the refused verdicts.
    let (status, body) = verdict(&server, &id, "reject", Some(json!({"feedback": "no"}))).await;
    assert_eq!(status, 202, "{body}");
}
