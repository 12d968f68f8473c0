//! The background-process routes over HTTP: a command the model started in
//! the background is listed while it runs and after the turn, killed by the
//! user with `DELETE`, and seen by its session's owner only.

mod common;

use common::{ALICE, BOB, start};
use cortex_protocol::EventKind;
use reqwest::Method;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_command_is_listed_killed_and_private() {
    let server = start().await;
    let id = server
        .session_in(
            "agent",
            json!({"responses": [
                {"tool_calls": [{"name": "bash", "arguments": {
                    "command": "echo serving; exec sleep 60", "background": true}}]},
                {"text": "It runs."}
            ]}),
        )
        .await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, body) = server.turn(&id, "start the server").await;
    assert_eq!(status, 202, "{body}");
    while let Some(message) = sse.next().await {
        if message.event.kind.ends_turn() {
            assert!(
                matches!(message.event.kind, EventKind::TurnCompleted { .. }),
                "{:?}",
                message.event.kind
            );
            break;
        }
    }
    let path = format!("/v1/sessions/{id}/processes");
    let (status, list) = server.send(Method::GET, &path, Some(ALICE), None).await;
    assert_eq!(status, 200, "{list}");
    let processes = list["processes"].as_array().expect("processes");
    assert_eq!(processes.len(), 1, "{list}");
    assert_eq!(processes[0]["id"], "bg1");
    assert_eq!(
        processes[0]["running"], true,
        "it outlives the turn: {list}"
    );
    assert_eq!(processes[0]["command"], "echo serving; exec sleep 60");

    // Another principal learns nothing of the session or its processes.
    let (status, _) = server.send(Method::GET, &path, Some(BOB), None).await;
    assert_eq!(status, 404);
    let (status, _) = server
        .send(Method::DELETE, &format!("{path}/bg1"), Some(BOB), None)
        .await;
    assert_eq!(status, 404);

    let (status, killed) = server
        .send(Method::DELETE, &format!("{path}/bg1"), Some(ALICE), None)
        .await;
    assert_eq!(status, 200, "{killed}");
    assert_eq!(killed["running"], false, "{killed}");
    let (status, unknown) = server
        .send(Method::DELETE, &format!("{path}/bg9"), Some(ALICE), None)
        .await;
    assert_eq!(status, 404, "{unknown}");
    assert_eq!(unknown["error"]["code"], "not_found");
    // The kill is on the timeline.
    loop {
        let message = sse.next().await.expect("process.ended");
        if let EventKind::ProcessEnded { id, reason, .. } = message.event.kind {
            assert_eq!(id, "bg1");
            assert!(reason.contains("user"), "{reason}");
            break;
        }
    }
}
