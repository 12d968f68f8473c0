//! Bad input gets a 4xx with the JSON error body, never a 5xx or a panic,
//! and changes nothing.

mod common;

use common::{ALICE, start};
use reqwest::Method;
use serde_json::json;

/// Send raw bytes; return (status, parsed error body).
async fn raw(
    server: &common::Server,
    method: Method,
    path: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> (u16, serde_json::Value) {
    let mut request = server.http.request(method, server.url(path)).body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(ct) = content_type {
        request = request.header("content-type", ct);
    }
    let response = request.send().await.expect("send");
    let status = response.status().as_u16();
    let text = response.text().await.expect("text");
    let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, body)
}

/// (what, method, path, token, content type, body, expected status)
type Case = (
    &'static str,
    Method,
    String,
    Option<&'static str>,
    Option<&'static str>,
    Vec<u8>,
    u16,
);

fn assert_error(status: u16, body: &serde_json::Value, expected: u16, case: &str) {
    assert_eq!(status, expected, "{case}: {body}");
    assert!(body["error"]["code"].is_string(), "{case}: {body}");
    assert!(
        !body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{case}: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_json_4xx_and_change_nothing() {
    let server = start().await;
    let id = server
        .session(&server.script(json!({"responses": []})))
        .await;
    let json_ct = Some("application/json");
    let turns = format!("/v1/sessions/{id}/turns");
    let repo = server.repo.path().display().to_string();

    let cases: Vec<Case> = vec![
        (
            "no token",
            Method::GET,
            "/v1/sessions".into(),
            None,
            None,
            vec![],
            401,
        ),
        (
            "unknown token",
            Method::GET,
            "/v1/sessions".into(),
            Some("nope"),
            None,
            vec![],
            401,
        ),
        (
            "malformed JSON",
            Method::POST,
            "/v1/sessions".into(),
            Some(ALICE),
            json_ct,
            b"{\"repository\":".to_vec(),
            400,
        ),
        (
            "not JSON content type",
            Method::POST,
            "/v1/sessions".into(),
            Some(ALICE),
            Some("text/plain"),
            b"{}".to_vec(),
            415,
        ),
        (
            "unknown field",
            Method::POST,
            "/v1/sessions".into(),
            Some(ALICE),
            json_ct,
            json!({"repository": repo, "colour": "red"})
                .to_string()
                .into_bytes(),
            422,
        ),
        (
            "unknown sandbox field",
            Method::POST,
            "/v1/sessions".into(),
            Some(ALICE),
            json_ct,
            json!({"repository": repo, "sandbox": {"policy": "read-only", "net": "on"}})
                .to_string()
                .into_bytes(),
            422,
        ),
        (
            "unknown mode",
            Method::POST,
            "/v1/sessions".into(),
            Some(ALICE),
            json_ct,
            json!({"repository": repo, "mode": "yolo"})
                .to_string()
                .into_bytes(),
            422,
        ),
        (
            "wrong type",
            Method::POST,
            "/v1/sessions".into(),
            Some(ALICE),
            json_ct,
            json!({"repository": 42}).to_string().into_bytes(),
            422,
        ),
        (
            "missing repository",
            Method::POST,
            "/v1/sessions".into(),
            Some(ALICE),
            json_ct,
            b"{}".to_vec(),
            422,
        ),
        (
            "repository that is not a folder",
            Method::POST,
            "/v1/sessions".into(),
            Some(ALICE),
            json_ct,
            json!({"repository": "/no/such/dir"})
                .to_string()
                .into_bytes(),
            422,
        ),
        (
            "unknown model provider",
            Method::POST,
            "/v1/sessions".into(),
            Some(ALICE),
            json_ct,
            json!({"repository": repo, "model": "acme:x"})
                .to_string()
                .into_bytes(),
            422,
        ),
        (
            "oversized body",
            Method::POST,
            turns.clone(),
            Some(ALICE),
            json_ct,
            json!({"message": "x".repeat(2 * 1024 * 1024)})
                .to_string()
                .into_bytes(),
            413,
        ),
        (
            "empty message",
            Method::POST,
            turns.clone(),
            Some(ALICE),
            json_ct,
            json!({"message": "  "}).to_string().into_bytes(),
            422,
        ),
        (
            "message of the wrong type",
            Method::POST,
            turns.clone(),
            Some(ALICE),
            json_ct,
            json!({"message": ["a"]}).to_string().into_bytes(),
            422,
        ),
        (
            "unknown session",
            Method::POST,
            "/v1/sessions/nope/turns".into(),
            Some(ALICE),
            json_ct,
            json!({"message": "hi"}).to_string().into_bytes(),
            404,
        ),
        (
            "unknown session shown",
            Method::GET,
            "/v1/sessions/nope".into(),
            Some(ALICE),
            None,
            vec![],
            404,
        ),
        (
            "bad after",
            Method::GET,
            format!("/v1/sessions/{id}/events?after=-1"),
            Some(ALICE),
            None,
            vec![],
            400,
        ),
        (
            "after not a number",
            Method::GET,
            format!("/v1/sessions/{id}/events?after=abc"),
            Some(ALICE),
            None,
            vec![],
            400,
        ),
        (
            "unknown query parameter",
            Method::GET,
            format!("/v1/sessions/{id}/events?afterr=1"),
            Some(ALICE),
            None,
            vec![],
            400,
        ),
        (
            "limit zero",
            Method::GET,
            "/v1/sessions?limit=0".into(),
            Some(ALICE),
            None,
            vec![],
            400,
        ),
        (
            "limit too large",
            Method::GET,
            "/v1/sessions?limit=100000".into(),
            Some(ALICE),
            None,
            vec![],
            400,
        ),
        (
            "unknown cursor",
            Method::GET,
            "/v1/sessions?cursor=zzz".into(),
            Some(ALICE),
            None,
            vec![],
            400,
        ),
        (
            "unknown mode name",
            Method::PUT,
            format!("/v1/sessions/{id}/mode"),
            Some(ALICE),
            json_ct,
            json!({"mode": "yolo"}).to_string().into_bytes(),
            422,
        ),
        // serde_json reports a number where an enum's name belongs as a
        // syntax error: still a 4xx.
        (
            "mode of the wrong type",
            Method::PUT,
            format!("/v1/sessions/{id}/mode"),
            Some(ALICE),
            json_ct,
            json!({"mode": 3}).to_string().into_bytes(),
            400,
        ),
        // A new session has nothing a compaction could summarise.
        (
            "compaction of an empty history",
            Method::POST,
            format!("/v1/sessions/{id}/compact"),
            Some(ALICE),
            None,
            vec![],
            409,
        ),
        (
            "unknown endpoint",
            Method::GET,
            "/v1/nothing".into(),
            Some(ALICE),
            None,
            vec![],
            404,
        ),
        (
            "wrong method",
            Method::PATCH,
            "/v1/sessions".into(),
            Some(ALICE),
            None,
            vec![],
            405,
        ),
    ];
    for (case, method, path, token, ct, body, expected) in cases {
        let (status, answer) = raw(&server, method, &path, token, ct, body).await;
        assert_error(status, &answer, expected, case);
    }

    // A bad Last-Event-ID header.
    let response = server
        .http
        .get(server.url(&format!("/v1/sessions/{id}/events")))
        .bearer_auth(ALICE)
        .header("Last-Event-ID", "seven")
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 400);

    // Nothing was created or run by any of it.
    let (_, page) = server
        .send(Method::GET, "/v1/sessions", Some(ALICE), None)
        .await;
    assert_eq!(page["sessions"].as_array().expect("list").len(), 1);
    let (_, shown) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(shown["last_seq"], 1, "only session.created: {shown}");
    assert_eq!(shown["title"], serde_json::Value::Null);
}
