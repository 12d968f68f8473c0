//! A subagent over the API: the child is a session of its own, linked to
//! the parent's call, readable by the parent's owner only, and left out of
//! the session list.

mod common;

use common::{ALICE, BOB, start};
use cortex_protocol::EventKind;
use reqwest::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_session_is_linked_to_the_parents_call() {
    let server = start().await;
    let id = server
        .session_in(
            "ask",
            json!({"responses": [
                {"when": "PARENT", "tool_calls": [{"id": "t1", "name": "task", "arguments": {
                    "kind": "explore", "description": "read a", "prompt": "CHILD: read a.txt"}}]},
                {"when": "CHILD", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                {"when": "CHILD", "text": "a.txt says alpha"},
                {"when": "PARENT", "text": "It says alpha."}
            ]}),
        )
        .await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, body) = server.turn(&id, "PARENT: what does a.txt say?").await;
    assert_eq!(status, 202, "{body}");
    let mut child = None;
    let mut result = None;
    while let Some(message) = sse.next().await {
        match message.event.kind {
            EventKind::SubagentStarted { child: c, .. } => child = Some(c),
            EventKind::ToolResult { output, .. } => result = Some(output),
            kind if kind.ends_turn() => break,
            _ => {}
        }
    }
    assert_eq!(result.as_deref(), Some("a.txt says alpha"));
    let child = child.expect("subagent.started").to_string();

    let (status, view) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{child}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["parent"]["session"], id);
    assert_eq!(view["parent"]["call_id"], "t1");
    assert_eq!(view["mode"], "ask");
    // Its own timeline, read like any session's.
    let mut child_events = server.events(&child, ALICE, None).await;
    let mut kinds = Vec::new();
    while let Some(message) = child_events.next().await {
        let end = message.event.kind.ends_turn();
        kinds.push(message.event.kind.type_name());
        if end {
            break;
        }
    }
    assert!(kinds.contains(&"tool.result"), "{kinds:?}");
    // Another principal sees nothing of it.
    let (status, _) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{child}"),
            Some(BOB),
            None,
        )
        .await;
    assert_eq!(status, 404);
    // The list holds the parent only.
    let (status, list) = server
        .send(Method::GET, "/v1/sessions", Some(ALICE), None)
        .await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(ids, [id.as_str()]);
}
