//! `POST /v1/sessions/{id}/compact` over real HTTP: figures on success, a
//! conflict while a turn runs, no leak of another principal's session, and
//! a failing summariser that leaves the history as it was.

mod common;

use common::{ALICE, BOB, start};
use cortex_protocol::{EventKind, SessionId};
use reqwest::Method;
use serde_json::json;

fn compact_path(id: &str) -> String {
    format!("/v1/sessions/{id}/compact")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_answers_with_figures_and_records_the_compaction() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "It says alpha."},
        // The session's model writes the summary.
        {"text": "SUMMARY: the user asked about a.txt; it says alpha."},
        {"text": "still here", "hang": true},
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, body) = server.turn(&id, "what does a.txt say?").await;
    assert_eq!(status, 202, "{body}");
    sse.until_turn_end().await;
    server.idle(&id).await;

    // Someone else's session, or none: the same 404, nothing written.
    let (status, body) = server
        .send(Method::POST, &compact_path(&id), Some(BOB), None)
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "not_found");
    let (status, _) = server
        .send(
            Method::POST,
            &compact_path("nosuchsession"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = server
        .send(Method::POST, &compact_path(&id), None, None)
        .await;
    assert_eq!(status, 401);

    let (status, done) = server
        .send(Method::POST, &compact_path(&id), Some(ALICE), None)
        .await;
    assert_eq!(status, 200, "{done}");
    let figure = |name: &str| {
        done[name]
            .as_u64()
            .unwrap_or_else(|| panic!("{name}: {done}"))
    };
    assert_eq!(figure("messages_before"), 4, "{done}");
    assert!(figure("tokens_before") > 0);
    assert!(figure("summarised") >= 1);
    assert_eq!(
        figure("messages_after"),
        1 + done["kept"]["recent_messages"].as_u64().expect("kept")
    );
    let events = server
        .store
        .events(&SessionId(id.clone()), 0)
        .await
        .expect("events");
    let recorded = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::CompactionDone {
                tokens_before,
                tokens_after,
                summary,
                ..
            } => Some((*tokens_before, *tokens_after, summary.clone())),
            _ => None,
        })
        .expect("compaction.done in the timeline");
    assert_eq!(
        (recorded.0, recorded.1),
        (figure("tokens_before"), figure("tokens_after"))
    );
    assert!(recorded.2.starts_with("SUMMARY:"));

    // While a turn runs, a compaction is a conflict (and a turn during a
    // compaction would be one too).
    let (status, body) = server.turn(&id, "go on").await;
    assert_eq!(status, 202, "{body}");
    let (status, body) = server
        .send(Method::POST, &compact_path(&id), Some(ALICE), None)
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "conflict");
    let (status, _) = server.stop(&id, ALICE).await;
    assert_eq!(status, 202);
    sse.until_turn_end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_summariser_is_a_502_and_the_history_stays() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"text": "hello"},
        {"error": {"status": 500, "body": "summariser down"}},
        {"text": "hello again"},
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, _) = server.turn(&id, "hi").await;
    assert_eq!(status, 202);
    sse.until_turn_end().await;
    server.idle(&id).await;

    let (status, body) = server
        .send(Method::POST, &compact_path(&id), Some(ALICE), None)
        .await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["error"]["code"], "compaction_failed");
    let message = body["error"]["message"].as_str().expect("message");
    assert!(message.contains("history is unchanged"), "{message}");
    assert!(message.contains("summariser down"), "{message}");

    let events = server
        .store
        .events(&SessionId(id.clone()), 0)
        .await
        .expect("events");
    let types: Vec<_> = events.iter().map(|e| e.kind.type_name()).collect();
    assert_eq!(
        types[types.len() - 2..],
        ["compaction.started", "compaction.failed"]
    );
    // The next turn still sees the whole history.
    let (status, _) = server.turn(&id, "again").await;
    assert_eq!(status, 202);
    sse.until_turn_end().await;
    let rebuilt = cortex_core::Rebuilt::from_events(
        &server
            .store
            .events(&SessionId(id), 0)
            .await
            .expect("events"),
    );
    let contents: Vec<_> = rebuilt
        .messages
        .iter()
        .map(|m| m.content.rsplit("\n\n").next().unwrap_or_default())
        .collect();
    // Each user message follows the workspace listing of its turn.
    assert_eq!(contents, ["hi", "hello", "again", "hello again"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_describes_compact() {
    let server = start().await;
    let (status, doc) = server.send(Method::GET, "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    let responses = &doc["paths"]["/v1/sessions/{id}/compact"]["post"]["responses"];
    for code in ["200", "404", "409", "502"] {
        assert!(responses[code].is_object(), "{code}: {responses}");
    }
    assert!(
        doc["components"]["schemas"]["CompactAnswer"]["properties"]["tokens_after"].is_object()
    );
    assert!(doc["components"]["schemas"]["CompactionKept"].is_object());
}
