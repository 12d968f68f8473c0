//! Read-only share links over loopback HTTP: a share's token reads its one
//! session (resource and events) and nothing else; its owner lists and
//! revokes it, and a revoked share stops at once, open streams included.

mod common;

use common::{ALICE, BOB, start};
use reqwest::Method;
use serde_json::{Value, json};

async fn share(server: &common::Server, id: &str, token: &str, body: Value) -> (u16, Value) {
    server
        .send(
            Method::POST,
            &format!("/v1/sessions/{id}/shares"),
            Some(token),
            Some(body),
        )
        .await
}

#[tokio::test]
async fn a_share_reads_its_session_and_nothing_else() {
    let server = start().await;
    let model = server.script(json!({"responses": [{"text": "done"}]}));
    let id = server.session(&model).await;
    let other = server.session(&model).await;
    let (status, body) = server.turn(&id, "hello").await;
    assert_eq!(status, 202, "{body}");
    server.events(&id, ALICE, None).await.until_turn_end().await;

    let (status, made) = share(&server, &id, ALICE, json!({"expires_in_secs": 3600})).await;
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().expect("token").to_owned();
    assert_eq!(made["share"]["session_id"], json!(id));
    assert_eq!(
        made["link"].as_str().expect("link"),
        format!("/#share/{id}/{token}"),
        "the token rides in the fragment, which no browser sends"
    );
    let share = &made["share"];
    assert!(
        share["expires_at"].as_str().expect("expiry")
            > share["created_at"].as_str().expect("created")
    );

    // It reads the session and its whole timeline.
    let (status, view) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(&token),
            None,
        )
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["id"], json!(id));
    let mut sse = server.events(&id, &token, None).await;
    let events = sse.until_turn_end().await;
    assert_eq!(events[0].event.seq, 1);
    assert!(events.iter().any(|m| m.event.kind.ends_turn()));

    // Anything that acts, or lists, or another session, is refused.
    let forbidden = [
        (
            Method::POST,
            format!("/v1/sessions/{id}/turns"),
            Some(json!({"message": "rm -rf"})),
        ),
        (Method::POST, format!("/v1/sessions/{id}/stop"), None),
        (
            Method::PUT,
            format!("/v1/sessions/{id}/mode"),
            Some(json!({"mode": "agent"})),
        ),
        (
            Method::PUT,
            format!("/v1/sessions/{id}/approval"),
            Some(json!({"approval": "never"})),
        ),
        (
            Method::POST,
            format!("/v1/sessions/{id}/approvals/c1"),
            Some(json!({"decision": "allow"})),
        ),
        (Method::POST, format!("/v1/sessions/{id}/plan/accept"), None),
        (
            Method::POST,
            format!("/v1/sessions/{id}/shares"),
            Some(json!({})),
        ),
        (Method::GET, format!("/v1/sessions/{id}/shares"), None),
        (Method::DELETE, format!("/v1/sessions/{id}"), None),
        (Method::GET, "/v1/sessions".to_owned(), None),
        (Method::GET, "/v1/rules".to_owned(), None),
    ];
    for (method, path, body) in forbidden {
        let (status, answer) = server.send(method.clone(), &path, Some(&token), body).await;
        assert_eq!(status, 403, "{method} {path}: {answer}");
        assert_eq!(answer["error"]["code"], "share_read_only", "{answer}");
    }
    for path in [
        format!("/v1/sessions/{other}"),
        format!("/v1/sessions/{other}/events"),
    ] {
        let (status, answer) = server.send(Method::GET, &path, Some(&token), None).await;
        assert_eq!(status, 404, "{path}: {answer}");
    }
    let (status, body) = server.turn(&id, "still mine").await;
    assert_eq!(status, 202, "the owner still acts: {body}");
}

#[tokio::test]
async fn only_the_owner_makes_lists_and_revokes_shares() {
    let server = start().await;
    let model = server.script(json!({"responses": [{"text": "done"}]}));
    let id = server.session(&model).await;

    let (status, _) = share(&server, &id, BOB, json!({})).await;
    assert_eq!(status, 404, "another's session is not found");
    for secs in [0, 59, 30 * 24 * 3600 + 1] {
        let (status, body) = share(&server, &id, ALICE, json!({"expires_in_secs": secs})).await;
        assert_eq!(status, 422, "{secs}: {body}");
    }
    let (status, body) = share(&server, &id, ALICE, json!({"expires": 5})).await;
    assert_eq!(status, 422, "unknown field: {body}");

    let (status, made) = share(&server, &id, ALICE, json!({})).await;
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().expect("token").to_owned();
    let share_id = made["share"]["id"].as_str().expect("id").to_owned();

    let (status, list) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/shares"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["shares"].as_array().expect("shares").len(), 1);
    assert_eq!(list["shares"][0]["id"], json!(share_id));
    assert!(
        !list.to_string().contains(&token),
        "a listed share shows no token"
    );
    let (status, _) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/shares"),
            Some(BOB),
            None,
        )
        .await;
    assert_eq!(status, 404);

    // A stream open on the share ends when the share is revoked.
    let mut sse = server.events(&id, &token, None).await;
    assert_eq!(sse.next().await.expect("session.created").event.seq, 1);
    let revoke = format!("/v1/sessions/{id}/shares/{share_id}");
    let (status, _) = server.send(Method::DELETE, &revoke, Some(BOB), None).await;
    assert_eq!(status, 404, "bob cannot revoke alice's share");
    let (status, _) = server
        .send(Method::DELETE, &revoke, Some(ALICE), None)
        .await;
    assert_eq!(status, 204);
    let (status, _) = server
        .send(Method::DELETE, &revoke, Some(ALICE), None)
        .await;
    assert_eq!(status, 404, "already revoked");
    let (status, _) = server.turn(&id, "after the revocation").await;
    assert_eq!(status, 202);
    assert!(
        sse.next().await.is_none(),
        "the revoked share's stream sends nothing more"
    );
    let (status, answer) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(&token),
            None,
        )
        .await;
    assert_eq!(status, 401, "{answer}");
}
