//! The server gives every session the config's `[network] allow`
//! (`ServerConfig::web`): a session with the network off fetches an
//! allow-listed loopback page, in a new session and in one reopened from
//! the store after a close, and a server without the list refuses it.

mod common;

use common::{ALICE, Server, start_with};
use cortex_protocol::{EventKind, ToolStatus};
use cortex_server::ServerConfig;
use serde_json::json;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback server answering every request with a small text page.
async fn page() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf).await;
            let body = "the allow-listed page";
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes()).await;
        }
    });
    format!("{addr}")
}

/// One turn whose model fetches `url`; the result's status and output.
async fn fetch_result(server: &Server, id: &str) -> (ToolStatus, String) {
    let mut sse = server.events(id, ALICE, None).await;
    let (status, body) = server.turn(id, "read the page").await;
    assert_eq!(status, 202, "{body}");
    Server::turn_kinds(&mut sse)
        .await
        .into_iter()
        .rev()
        .find_map(|kind| match kind {
            EventKind::ToolResult { status, output, .. } => Some((status, output)),
            _ => None,
        })
        .expect("a tool result")
}

fn script(url: &str) -> serde_json::Value {
    json!({"responses": [
        {"tool_calls": [{"name": "web_fetch", "arguments": {"url": url}}]},
        {"text": "read"}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_fetch_what_the_config_allows_and_nothing_else() {
    let host = page().await;
    let url = format!("http://{host}/doc");
    let allowed = start_with(ServerConfig {
        heartbeat: Duration::from_millis(200),
        web: cortex_core::WebAccess::new(std::slice::from_ref(&host)).expect("allow-list"),
        ..ServerConfig::default()
    })
    .await;
    let id = allowed.session_in("ask", script(&url)).await;
    let (status, output) = fetch_result(&allowed, &id).await;
    assert_eq!(status, ToolStatus::Ok, "{output}");
    assert!(output.ends_with("the allow-listed page"), "{output}");
    // Closed, then reopened from the store by the next turn: the list
    // still applies.
    allowed.idle(&id).await;
    let (status, body) = allowed
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/sessions/{id}"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 204, "{body}");
    *allowed.default_script.lock().expect("lock") = script(&url).to_string();
    let (status, output) = fetch_result(&allowed, &id).await;
    assert_eq!(status, ToolStatus::Ok, "{output}");

    let refused = start_with(ServerConfig {
        heartbeat: Duration::from_millis(200),
        ..ServerConfig::default()
    })
    .await;
    let id = refused.session_in("ask", script(&url)).await;
    let (status, output) = fetch_result(&refused, &id).await;
    assert_eq!(status, ToolStatus::Refused, "{output}");
    assert!(output.contains("not on the allow-list"), "{output}");
}
