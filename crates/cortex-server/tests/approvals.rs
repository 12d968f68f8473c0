//! Approvals over the API: a session in `ask` pauses a turn on every
//! `bash` call no rule covers (`approval.requested`); allow runs it once,
//! deny gives the model a denial and the turn goes on, always runs it and
//! persists a rule that later calls (and a restarted server) honour. Stop
//! ends a waiting turn; a restart resolves a waiting request as
//! `interrupted`. The deny list refuses in every policy.

mod common;

use common::{ALICE, BOB, Server, Sse, start};
use cortex_protocol::{ApprovalResolution, EventKind, ToolStatus};
use reqwest::Method;
use serde_json::{Value, json};

fn bash(command: &str) -> Value {
    json!({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]})
}

async fn ask_session(server: &Server, script: Value) -> String {
    let model = server.script(script);
    let (status, body) = server
        .send(
            Method::POST,
            "/v1/sessions",
            Some(ALICE),
            Some(json!({"repository": server.repo.path(), "model": model, "approval": "ask"})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().expect("id").to_owned()
}

/// Read events until the next `approval.requested`: its call id and summary.
async fn next_request(sse: &mut Sse) -> (String, String) {
    while let Some(message) = sse.next().await {
        match message.event.kind {
            EventKind::ApprovalRequested {
                call_id, summary, ..
            } => return (call_id.0, summary),
            kind if kind.ends_turn() => panic!("the turn ended without asking: {kind:?}"),
            _ => {}
        }
    }
    panic!("the stream ended before a request");
}

async fn answer(server: &Server, id: &str, call: &str, decision: &str) -> (u16, Value) {
    server
        .send(
            Method::POST,
            &format!("/v1/sessions/{id}/approvals/{call}"),
            Some(ALICE),
            Some(json!({ "decision": decision })),
        )
        .await
}

/// The events of the session's last turn, from the store (the stream's
/// were partly read while answering).
async fn last_turn(server: &Server, id: &str) -> Vec<EventKind> {
    let events = server
        .store
        .events(&cortex_protocol::SessionId::from(id), 0)
        .await
        .expect("events");
    let start = events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::TurnStarted { .. }))
        .expect("a turn");
    events[start..].iter().map(|e| e.kind.clone()).collect()
}

/// `(command, status)` of each `bash` result among `events`, with the
/// commands taken from `tool.call`.
fn results(events: &[EventKind]) -> Vec<(String, ToolStatus, String)> {
    let mut commands = std::collections::HashMap::new();
    let mut out = Vec::new();
    for kind in events {
        match kind {
            EventKind::ToolCall {
                call_id, arguments, ..
            } => {
                let args: Value = serde_json::from_str(arguments).unwrap_or_default();
                commands.insert(
                    call_id.clone(),
                    args["command"].as_str().unwrap_or("").to_owned(),
                );
            }
            EventKind::ToolResult {
                call_id,
                status,
                output,
                ..
            } => out.push((
                commands.get(call_id).cloned().unwrap_or_default(),
                *status,
                output.clone(),
            )),
            _ => {}
        }
    }
    out
}

fn asked(events: &[EventKind]) -> usize {
    events
        .iter()
        .filter(|k| matches!(k, EventKind::ApprovalRequested { .. }))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_deny_always_and_rules_that_survive_a_restart() {
    let server = start().await;
    let id = ask_session(
        &server,
        json!({"responses": [
            bash("echo hi > allowed.txt"),
            bash("touch denied.txt"),
            {"text": "one of two"},
            bash("git status"),
            bash("git status"),
            bash("git status --short"),
            bash("git status && touch x"),
            {"text": "rules"},
        ]}),
    )
    .await;
    let mut sse = server.events(&id, ALICE, None).await;
    let (status, _) = server.turn(&id, "work").await;
    assert_eq!(status, 202);

    // Allow once.
    let (call, summary) = next_request(&mut sse).await;
    assert_eq!(summary, "echo hi > allowed.txt");
    let (status, body) = answer(&server, &id, &call, "allow").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = answer(&server, &id, &call, "allow").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("not_pending"))
    );
    // Deny: the model reads the denial and the turn completes.
    let (call, _) = next_request(&mut sse).await;
    let (status, _) = answer(&server, &id, &call, "deny").await;
    assert_eq!(status, 200);
    Server::turn_kinds(&mut sse).await;
    let events = last_turn(&server, &id).await;
    assert!(matches!(
        events.last(),
        Some(EventKind::TurnCompleted { .. })
    ));
    assert!(server.repo.path().join("allowed.txt").exists());
    assert!(!server.repo.path().join("denied.txt").exists());
    let denied = results(&events);
    assert_eq!(denied.len(), 2, "{denied:?}");
    assert_eq!(denied[1].1, ToolStatus::Refused);
    assert!(denied[1].2.contains("the user denied"), "{}", denied[1].2);

    // Always: a rule; the same command and a longer one run without asking;
    // a compound command with an uncovered part still asks.
    server.idle(&id).await;
    let (status, _) = server.turn(&id, "git").await;
    assert_eq!(status, 202);
    let (call, summary) = next_request(&mut sse).await;
    assert_eq!(summary, "git status");
    answer(&server, &id, &call, "always").await;
    let (call, summary) = next_request(&mut sse).await;
    assert_eq!(summary, "git status && touch x");
    answer(&server, &id, &call, "deny").await;
    Server::turn_kinds(&mut sse).await;
    let events = last_turn(&server, &id).await;
    assert_eq!(asked(&events), 2);
    let ran: Vec<_> = results(&events)
        .into_iter()
        .map(|(c, s, _)| (c, s != ToolStatus::Refused))
        .collect();
    assert_eq!(
        ran,
        [
            ("git status".to_owned(), true),
            ("git status".to_owned(), true),
            ("git status --short".to_owned(), true),
            ("git status && touch x".to_owned(), false),
        ]
    );
    assert!(!server.repo.path().join("x").exists());

    // The rule is alice's: bob neither sees nor removes it.
    let (_, body) = server
        .send(Method::GET, "/v1/rules", Some(ALICE), None)
        .await;
    let rules = body["rules"].as_array().expect("rules").clone();
    assert_eq!(rules.len(), 1, "{body}");
    assert_eq!(
        rules[0]["match"],
        json!({"kind": "bash", "prefix": ["git", "status"]})
    );
    let rule_id = rules[0]["id"].as_str().expect("id").to_owned();
    let (_, body) = server.send(Method::GET, "/v1/rules", Some(BOB), None).await;
    assert_eq!(body["rules"], json!([]));
    let (status, _) = server
        .send(
            Method::DELETE,
            &format!("/v1/rules/{rule_id}"),
            Some(BOB),
            None,
        )
        .await;
    assert_eq!(status, 404);

    // After a restart the rule still applies, and `deny` refuses the rest
    // without asking.
    let server = server.restarted().await;
    // Call ids of their own: the new provider's would repeat the old ones.
    let with_id = |command: &str, id: &str| json!({"tool_calls": [{"id": id, "name": "bash", "arguments": {"command": command}}]});
    *server.default_script.lock().expect("lock") = json!({"responses": [
        with_id("git status --short", "after-1"),
        with_id("touch y", "after-2"),
        {"text": "after restart"},
    ]})
    .to_string();
    let (status, body) = server
        .send(
            Method::PUT,
            &format!("/v1/sessions/{id}/approval"),
            Some(ALICE),
            Some(json!({"approval": "deny"})),
        )
        .await;
    assert_eq!(
        (status, body["approval"].as_str()),
        (200, Some("deny")),
        "{body}"
    );
    let mut sse = server.events(&id, ALICE, Some(0)).await;
    let (status, _) = server.turn(&id, "again").await;
    assert_eq!(status, 202);
    let mut started = false;
    while let Some(m) = sse.next().await {
        started |=
            matches!(&m.event.kind, EventKind::TurnStarted { message, .. } if message == "again");
        if started && m.event.kind.ends_turn() {
            break;
        }
    }
    let last_turn = last_turn(&server, &id).await;
    assert_eq!(asked(&last_turn), 0);
    let ran: Vec<_> = results(&last_turn)
        .into_iter()
        .map(|(c, s, _)| (c, s != ToolStatus::Refused))
        .collect();
    assert_eq!(
        ran,
        [
            ("git status --short".to_owned(), true),
            ("touch y".to_owned(), false)
        ]
    );
    let (status, _) = server
        .send(
            Method::DELETE,
            &format!("/v1/rules/{rule_id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (_, body) = server
        .send(Method::GET, "/v1/rules", Some(ALICE), None)
        .await;
    assert_eq!(body["rules"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_and_restart_leave_no_call_half_approved() {
    let server = start().await;
    let id = ask_session(
        &server,
        json!({"responses": [bash("touch stopped.txt"), {"text": "x"}]}),
    )
    .await;
    let mut sse = server.events(&id, ALICE, None).await;
    server.turn(&id, "one").await;
    let (call, _) = next_request(&mut sse).await;
    let (status, _) = server.stop(&id, ALICE).await;
    assert_eq!(status, 202);
    Server::turn_kinds(&mut sse).await;
    let events = last_turn(&server, &id).await;
    assert!(events.iter().any(|k| matches!(
        k,
        EventKind::ApprovalResolved { call_id, decision: ApprovalResolution::Stopped }
            if call_id.0 == call
    )));
    assert!(matches!(events.last(), Some(EventKind::TurnStopped { .. })));
    assert!(!server.repo.path().join("stopped.txt").exists());

    // A request still waiting when the server goes away.
    *server.default_script.lock().expect("lock") =
        json!({"responses": [bash("touch later.txt"), {"text": "x"}]}).to_string();
    let id = server
        .session(&server.script(json!({"responses": [bash("touch later.txt")]})))
        .await;
    server
        .send(
            Method::PUT,
            &format!("/v1/sessions/{id}/approval"),
            Some(ALICE),
            Some(json!({"approval": "ask"})),
        )
        .await;
    let mut sse = server.events(&id, ALICE, None).await;
    server.turn(&id, "two").await;
    let (call, _) = next_request(&mut sse).await;
    let server = server.restarted().await;
    let events = server
        .store
        .events(&cortex_protocol::SessionId::from(id.as_str()), 0)
        .await
        .expect("events");
    let tail: Vec<_> = events.iter().rev().take(2).map(|e| &e.kind).collect();
    assert!(matches!(tail[0], EventKind::TurnFailed { .. }), "{tail:?}");
    assert!(matches!(
        tail[1],
        EventKind::ApprovalResolved {
            decision: ApprovalResolution::Interrupted,
            ..
        }
    ));
    let (status, body) = answer(&server, &id, &call, "allow").await;
    assert_eq!(status, 409, "{body}");
    assert!(!server.repo.path().join("later.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deny_list_refuses_in_auto_and_names_the_reason() {
    let server = start().await;
    let model = server.script(json!({"responses": [
        bash("rm -rf ~"),
        {"tool_calls": [{"name": "write_file",
            "arguments": {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}}]},
        bash("git push --force origin main"),
        {"text": "tried"},
    ]}));
    let id = server.session(&model).await;
    let mut sse = server.events(&id, ALICE, None).await;
    server.turn(&id, "break things").await;
    let events = Server::turn_kinds(&mut sse).await;
    assert_eq!(asked(&events), 0);
    let reasons: Vec<_> = events
        .iter()
        .filter_map(|k| match k {
            EventKind::ToolRefused { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(reasons[0].contains("home folder"), "{}", reasons[0]);
    assert!(reasons[1].contains(".git/hooks"), "{}", reasons[1]);
    assert!(reasons[2].contains("default branch"), "{}", reasons[2]);
    assert!(reasons.iter().all(|r| r.contains("deny list")));
    assert!(!server.repo.path().join(".git/hooks/pre-commit").exists());
}
