//! `POST /v1/sessions/{id}/rewind` over real HTTP: a rewind of both the
//! files and the conversation answers with the diff it applied, files the
//! user changed are a 409 naming them until `force` (a `dry_run` answers
//! with the diff and names them, changing nothing), another principal's
//! session is a 404, and the session resource states the storage used.

mod common;

use common::{ALICE, BOB, start_with};
use cortex_protocol::{EventKind, SessionId};
use cortex_server::ServerConfig;
use reqwest::Method;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_restores_files_and_conversation_and_refuses_to_overwrite_user_changes() {
    let data = tempfile::tempdir().expect("data");
    let server = start_with(ServerConfig {
        heartbeat: Duration::from_millis(200),
        checkpoints: Some(data.path().join("checkpoints")),
        ..ServerConfig::default()
    })
    .await;
    let model = server.script(json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo beta > a.txt && echo new > b.txt"}}]},
        {"text": "Changed."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "c.txt", "content": "c\n"}}]},
        {"text": "Wrote c."},
    ]}));
    let id = server.session(&model).await;
    let path = format!("/v1/sessions/{id}/rewind");
    let repo = server.repo.path().to_path_buf();

    let mut sse = server.events(&id, ALICE, None).await;
    let (status, body) = server.turn(&id, "change things").await;
    assert_eq!(status, 202, "{body}");
    sse.until_turn_end().await;
    server.idle(&id).await;
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).expect("a"),
        "beta\n"
    );

    let (status, body) = server
        .send(Method::POST, &path, Some(BOB), Some(json!({})))
        .await;
    assert_eq!(status, 404, "{body}");

    // A dry run answers with the same diff and changes nothing.
    let (status, preview) = server
        .send(
            Method::POST,
            &path,
            Some(ALICE),
            Some(json!({"scope": "both", "dry_run": true})),
        )
        .await;
    assert_eq!(status, 200, "{preview}");
    assert_eq!(preview["dry_run"], json!(true));
    assert_eq!(preview["changed"], json!(["a.txt"]));
    assert_eq!(preview["deleted"], json!(["b.txt"]));
    assert!(preview.get("undo").is_none(), "{preview}");
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).expect("a"),
        "beta\n"
    );
    assert!(repo.join("b.txt").exists());
    let events = server
        .store
        .events(&SessionId(id.clone()), 0)
        .await
        .expect("events");
    assert!(
        !events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::SessionRewound { .. })),
        "a dry run records nothing"
    );

    let (status, done) = server
        .send(
            Method::POST,
            &path,
            Some(ALICE),
            Some(json!({"scope": "both"})),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert!(done.get("dry_run").is_none(), "{done}");
    assert_eq!(done["created"], json!([]));
    assert_eq!(done["changed"], json!(["a.txt"]));
    assert_eq!(done["deleted"], json!(["b.txt"]));
    assert!(
        done["undo"]
            .as_str()
            .is_some_and(|u| u.starts_with("undo-"))
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).expect("a"),
        "alpha\n"
    );
    assert!(!repo.join("b.txt").exists());
    let events = server
        .store
        .events(&SessionId(id.clone()), 0)
        .await
        .expect("events");
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::SessionRewound { paths: 2, .. }))
    );
    // The rewound turn is gone from the conversation: no second rewind of it.
    let turn = done["turn_id"].as_str().expect("turn").to_owned();
    let (status, body) = server
        .send(
            Method::POST,
            &path,
            Some(ALICE),
            Some(json!({"turn_id": turn, "scope": "conversation"})),
        )
        .await;
    assert_eq!(status, 404, "{body}");

    // Another turn, then the user edits a file outside the session.
    let (status, body) = server.turn(&id, "write c").await;
    assert_eq!(status, 202, "{body}");
    sse.until_turn_end().await;
    server.idle(&id).await;
    std::fs::write(repo.join("a.txt"), "mine\n").expect("user edit");
    // The preview names the user's file instead of refusing.
    let (status, preview) = server
        .send(
            Method::POST,
            &path,
            Some(ALICE),
            Some(json!({"scope": "files", "dry_run": true})),
        )
        .await;
    assert_eq!(status, 200, "{preview}");
    assert_eq!(preview["changed_outside"], json!(["a.txt"]));
    assert_eq!(preview["deleted"], json!(["c.txt"]));
    let (status, body) = server
        .send(Method::POST, &path, Some(ALICE), Some(json!({})))
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "changed_outside");
    assert_eq!(body["error"]["paths"], json!(["a.txt"]));
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).expect("a"),
        "mine\n"
    );
    assert!(repo.join("c.txt").exists(), "nothing changed");

    let (status, done) = server
        .send(
            Method::POST,
            &path,
            Some(ALICE),
            Some(json!({"scope": "files", "force": true})),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["forced"], json!(["a.txt"]));
    assert_eq!(done["deleted"], json!(["c.txt"]));
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).expect("a"),
        "alpha\n"
    );

    let (status, view) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 200, "{view}");
    assert!(
        view["checkpoint_bytes"].as_u64().is_some_and(|b| b > 0),
        "{view}"
    );
}
