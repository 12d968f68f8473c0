//! The session API over real HTTP on 127.0.0.1: sessions, turns, conflicts,
//! event streams and their resumption, principals.

mod common;

use common::{ALICE, BOB, start, start_with};
use cortex_protocol::EventKind;
use reqwest::Method;
use serde_json::json;

fn seqs(messages: &[common::Message]) -> Vec<u64> {
    messages.iter().map(|m| m.event.seq).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_created_listed_shown_and_closed() {
    let server = start().await;
    let model = server.script(json!({"responses": [{"text": "hi"}]}));
    let (status, created) = server
        .send(
            Method::POST,
            "/v1/sessions",
            Some(ALICE),
            Some(json!({
                "repository": server.repo.path(),
                "mode": "ask",
                "model": model,
                "sandbox": {"policy": "read-only", "network": "off", "workspace": "in-place"},
                "stop_rule": "chat",
            })),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("id").to_owned();
    assert_eq!(created["mode"], "ask");
    assert_eq!(created["stop_rule"], "chat");
    assert_eq!(created["model"], "scripted");
    assert!(created["last_seq"].as_u64().expect("seq") >= 1);

    // The sandbox reached the timeline.
    let events = server
        .store
        .events(&cortex_protocol::SessionId(id.clone()), 0)
        .await
        .expect("events");
    match &events[0].kind {
        EventKind::SessionCreated { sandbox, .. } => {
            assert_eq!(sandbox.policy, cortex_protocol::SandboxPolicy::ReadOnly);
        }
        other => panic!("first event is {other:?}"),
    }

    let second = server
        .session(&server.script(json!({"responses": []})))
        .await;
    let (status, page) = server
        .send(Method::GET, "/v1/sessions", Some(ALICE), None)
        .await;
    assert_eq!(status, 200);
    let ids: Vec<_> = page["sessions"]
        .as_array()
        .expect("list")
        .iter()
        .map(|s| s["id"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(ids, [second.clone(), id.clone()], "newest first");
    assert!(page["next_cursor"].is_null());

    // Paging: one at a time.
    let (_, first) = server
        .send(Method::GET, "/v1/sessions?limit=1", Some(ALICE), None)
        .await;
    assert_eq!(first["sessions"][0]["id"], second.as_str());
    let cursor = first["next_cursor"].as_str().expect("cursor").to_owned();
    let (_, next) = server
        .send(
            Method::GET,
            &format!("/v1/sessions?limit=1&cursor={cursor}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(next["sessions"][0]["id"], id.as_str());
    assert!(next["next_cursor"].is_null());

    let (status, shown) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(shown["id"], id.as_str());
    assert_eq!(shown["repository"], created["repository"]);

    let (status, _) = server
        .send(
            Method::DELETE,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 204);
    // Closing keeps the timeline: the session is still shown.
    let (status, _) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_runs_with_tools_and_streams_every_event() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "It says alpha."},
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, body) = server.turn(&id, "what is in a.txt?").await;
    assert_eq!(status, 202, "{body}");
    let turn_id = body["turn_id"].as_str().expect("turn id").to_owned();

    let messages = sse.until_turn_end().await;
    let all: Vec<u64> = (1..=messages.len() as u64).collect();
    assert_eq!(seqs(&messages), all, "every event once, in order");
    for m in &messages {
        assert_eq!(m.id, Some(m.event.seq), "the SSE id is the seq");
    }
    let last = messages.last().expect("events");
    assert!(matches!(
        last.event.kind,
        EventKind::TurnCompleted {
            rounds: 2,
            finish: None,
            ref unverified,
        } if unverified.is_empty()
    ));
    assert_eq!(
        last.event.turn_id.as_ref().map(|t| t.0.as_str()),
        Some(turn_id.as_str())
    );
    let result = messages
        .iter()
        .find_map(|m| match &m.event.kind {
            EventKind::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .expect("a tool result");
    assert!(result.contains("alpha"), "{result}");

    // What was streamed is what was stored.
    let stored = server
        .store
        .events(&cortex_protocol::SessionId(id.clone()), 0)
        .await
        .expect("events");
    let streamed: Vec<_> = messages.into_iter().map(|m| m.event).collect();
    assert_eq!(stored, streamed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_turn_while_one_runs_is_a_conflict_and_stop_ends_it() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        {"text": "thinking", "hang": true},
        {"text": "second turn"},
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, first) = server.turn(&id, "one").await;
    assert_eq!(status, 202);
    // Stop once the model is streaming: a Stop before the request would
    // leave the hanging response to the next turn.
    while let Some(message) = sse.next().await {
        if matches!(message.event.kind, EventKind::MessageDelta { .. }) {
            break;
        }
    }

    let (status, body) = server.turn(&id, "two").await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "conflict");
    assert!(
        body["error"]["message"]
            .as_str()
            .expect("message")
            .contains(first["turn_id"].as_str().expect("turn")),
        "{body}"
    );
    let (_, shown) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(shown["running_turn"], first["turn_id"]);
    let (status, body) = server
        .send(
            Method::PUT,
            &format!("/v1/sessions/{id}/mode"),
            Some(ALICE),
            Some(json!({"mode": "ask"})),
        )
        .await;
    assert_eq!(status, 409, "{body}");

    let (status, stopped) = server.stop(&id, ALICE).await;
    assert_eq!(status, 202, "{stopped}");
    assert_eq!(stopped["turn_id"], first["turn_id"]);
    let messages = sse.until_turn_end().await;
    assert!(matches!(
        messages.last().expect("end").event.kind,
        EventKind::TurnStopped { .. }
    ));

    // The actor may still be handing the session back; a new turn is
    // accepted once it has.
    let mut accepted = None;
    for _ in 0..100 {
        let (status, body) = server.turn(&id, "two").await;
        if status == 202 {
            accepted = Some(body);
            break;
        }
        assert_eq!(status, 409, "{body}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(accepted.is_some(), "a new turn after Stop");
    let messages = sse.until_turn_end().await;
    assert!(matches!(
        messages.last().expect("end").event.kind,
        EventKind::TurnCompleted { .. }
    ));
    // The end event can reach the stream before the actor has the session
    // back; until then the turn still counts as running.
    server.idle(&id).await;
    let (status, body) = server.stop(&id, ALICE).await;
    assert_eq!(status, 409, "nothing to stop: {body}");

    let (status, body) = server
        .send(
            Method::PUT,
            &format!("/v1/sessions/{id}/mode"),
            Some(ALICE),
            Some(json!({"mode": "ask"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["mode"], "ask");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_stream_resumes_at_last_event_id_without_gap_or_duplicate() {
    let server = start().await;
    let calls: Vec<_> = (0..4)
        .map(|_| json!({"name": "read_file", "arguments": {"path": "a.txt"}}))
        .collect();
    let model = server.script(json!({"responses": [
        {"text": "one two three four five six", "tool_calls": calls, "chunk_delay_ms": 5},
        {"text": "done and done", "chunk_delay_ms": 5},
    ]}));
    let id = server.session(&model).await;
    let mut first = server.events(&id, ALICE, None).await;
    server.turn(&id, "go").await;
    let mut received = Vec::new();
    for _ in 0..5 {
        received.push(first.next().await.expect("event"));
    }
    drop(first);
    let last = received.last().and_then(|m| m.id).expect("id");
    let mut again = server.events(&id, ALICE, Some(last)).await;
    received.extend(again.until_turn_end().await);

    let n = received.len() as u64;
    assert!(n > 10, "a long enough turn: {n}");
    assert_eq!(seqs(&received), (1..=n).collect::<Vec<_>>());

    // `after=` does the same for a client that keeps its own position.
    let response = server
        .http
        .get(server.url(&format!("/v1/sessions/{id}/events?after={}", n - 2)))
        .bearer_auth(ALICE)
        .send()
        .await
        .expect("events");
    let mut tail = common::Sse::from_response(response);
    assert_eq!(tail.next().await.expect("event").event.seq, n - 1);
    assert_eq!(tail.next().await.expect("event").event.seq, n);
}

/// An idle stream is an SSE stream that carries comment lines at the
/// heartbeat interval (200 ms here), and the first event after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_stream_carries_heartbeats() {
    use futures::StreamExt;
    let server = start().await;
    let model = server.script(json!({"responses": [{"text": "hi"}]}));
    let id = server.session(&model).await;
    let response = server
        .http
        .get(server.url(&format!("/v1/sessions/{id}/events?after=1")))
        .bearer_auth(ALICE)
        .send()
        .await
        .expect("events");
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response.headers().get("content-type").cloned();
    assert_eq!(
        content_type.as_ref().and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let mut body = response.bytes_stream();
    let mut seen = String::new();
    let started = std::time::Instant::now();
    while seen.matches(":\n\n").count() < 2 {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(5), body.next())
            .await
            .expect("a heartbeat within 5 s")
            .expect("open")
            .expect("chunk");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(300),
        "{seen:?}"
    );
    assert!(!seen.contains("data:"), "nothing happened yet: {seen:?}");
    server.turn(&id, "go").await;
    let mut stream = common::Sse::from_stream(Box::pin(body), seen);
    let first = stream.next().await.expect("event");
    assert_eq!(first.event.seq, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_never_reads_blocks_neither_the_turn_nor_others() {
    let server = start().await;
    let words: String = (0..6000).map(|i| format!("w{i} ")).collect();
    let model = server.script(json!({"responses": [{"text": words}]}));
    let id = server.session(&model).await;
    let mut stalled = server.events(&id, ALICE, None).await;
    let mut reader = server.events(&id, ALICE, None).await;
    server.turn(&id, "talk").await;
    let read = reader.until_turn_end().await;
    let n = read.len() as u64;
    assert!(n > 6000);
    assert_eq!(seqs(&read), (1..=n).collect::<Vec<_>>());
    // The stalled one, far behind the bounded broadcast, catches up from
    // the store with nothing missing or doubled.
    let late = stalled.until_turn_end().await;
    assert_eq!(seqs(&late), (1..=n).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_principal_sees_nothing() {
    let server = start().await;
    let id = server
        .session(&server.script(json!({"responses": []})))
        .await;
    let missing = "0000000000000000";
    for path in [
        format!("/v1/sessions/{id}"),
        format!("/v1/sessions/{id}/events"),
    ] {
        let (status, body) = server.send(Method::GET, &path, Some(BOB), None).await;
        assert_eq!(status, 404, "{path}: {body}");
        // Exactly what a session that does not exist answers.
        let (_, nothing) = server
            .send(Method::GET, &path.replace(&id, missing), Some(BOB), None)
            .await;
        assert_eq!(body["error"]["code"], nothing["error"]["code"]);
    }
    let (status, _) = server
        .send(
            Method::DELETE,
            &format!("/v1/sessions/{id}"),
            Some(BOB),
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = server
        .send(
            Method::POST,
            &format!("/v1/sessions/{id}/turns"),
            Some(BOB),
            Some(json!({"message": "hi"})),
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = server.stop(&id, BOB).await;
    assert_eq!(status, 404);
    let (status, _) = server
        .send(
            Method::PUT,
            &format!("/v1/sessions/{id}/mode"),
            Some(BOB),
            Some(json!({"mode": "ask"})),
        )
        .await;
    assert_eq!(status, 404);
    let (_, page) = server
        .send(Method::GET, "/v1/sessions", Some(BOB), None)
        .await;
    assert_eq!(page["sessions"], json!([]));
    // Alice's session id is no cursor for Bob either.
    let (status, _) = server
        .send(
            Method::GET,
            &format!("/v1/sessions?cursor={id}"),
            Some(BOB),
            None,
        )
        .await;
    assert_eq!(status, 400);
    // And Alice still has it.
    let (status, _) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_the_openapi_document_need_no_token() {
    let server = start().await;
    let (status, body) = server.send(Method::GET, "/healthz", None, None).await;
    assert_eq!((status, body), (200, json!({"status": "ok"})));
    let (status, doc) = server.send(Method::GET, "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    assert!(doc["paths"]["/v1/sessions/{id}/events"]["get"].is_object());
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    // The documented enums are the protocol's own names.
    let names = |schema: &str| -> Vec<String> {
        doc["components"]["schemas"][schema]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{schema} enum"))
            .iter()
            .map(|v| v.as_str().expect("name").to_owned())
            .collect()
    };
    let modes: Vec<String> = cortex_protocol::Mode::ALL
        .iter()
        .map(|m| m.as_str().to_owned())
        .collect();
    assert_eq!(names("Mode"), modes);
    assert_eq!(names("StopRule"), ["code", "chat", "bot"]);
    for policy in names("SandboxPolicy") {
        policy
            .parse::<cortex_protocol::SandboxPolicy>()
            .expect("a protocol name");
    }
    for network in names("NetworkPolicy") {
        network
            .parse::<cortex_protocol::NetworkPolicy>()
            .expect("a protocol name");
    }
    for workspace in names("WorkspaceMode") {
        workspace
            .parse::<cortex_protocol::WorkspaceMode>()
            .expect("a protocol name");
    }
}

#[tokio::test]
async fn api_sessions_default_to_an_isolated_copy() {
    let copies = tempfile::tempdir().expect("copies");
    let server = start_with(cortex_server::ServerConfig {
        workspaces: Some(copies.path().to_path_buf()),
        default_workspace: cortex_protocol::WorkspaceMode::Copy,
        ..cortex_server::ServerConfig::default()
    })
    .await;
    let model = server.script(json!({"responses": [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "changed\n"}}]},
        {"text": "done"},
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, body) = server.turn(&id, "change a.txt").await;
    assert_eq!(status, 202, "{body}");
    let messages = sse.until_turn_end().await;
    assert!(matches!(
        messages.last().map(|m| &m.event.kind),
        Some(EventKind::TurnCompleted { .. })
    ));
    assert_eq!(
        std::fs::read_to_string(server.repo.path().join("a.txt")).expect("read"),
        "alpha\n",
        "the client's checkout is untouched"
    );
    assert_eq!(
        std::fs::read_to_string(copies.path().join(&id).join("a.txt")).expect("read the copy"),
        "changed\n"
    );
    let created = messages
        .iter()
        .find_map(|m| match &m.event.kind {
            EventKind::SessionCreated { sandbox, .. } => Some(*sandbox),
            _ => None,
        })
        .expect("session.created");
    assert_eq!(created.workspace, cortex_protocol::WorkspaceMode::Copy);

    // The copy is that session's alone: no principal, its owner included,
    // may name it (or anything in the workspaces) as a new session's
    // repository, in-place or copied.
    let copy = copies.path().join(&id);
    for (token, repository, workspace) in [
        (BOB, copy.clone(), "in-place"),
        (BOB, copy.clone(), "copy"),
        (ALICE, copy.clone(), "in-place"),
        (BOB, copies.path().to_path_buf(), "in-place"),
    ] {
        let (status, body) = server
            .send(
                reqwest::Method::POST,
                "/v1/sessions",
                Some(token),
                Some(json!({
                    "repository": repository.display().to_string(),
                    "model": model,
                    "sandbox": {"workspace": workspace},
                })),
            )
            .await;
        assert_eq!(status, 422, "{token} {}: {body}", repository.display());
        assert_eq!(body["error"]["code"], "bad_repository");
    }

    // A git URL is refused by a server without a folder for clones.
    let plain = start().await;
    let (status, body) = plain
        .send(
            reqwest::Method::POST,
            "/v1/sessions",
            Some(ALICE),
            Some(json!({"repository": "https://example.invalid/repo.git"})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "bad_repository");
}
