//! The server under hostile clients (issue 20, principle 8): connections
//! that say nothing, a flood from one peer, bodies that never arrive, and
//! unauthenticated requests with huge bodies. Each test then checks that an
//! authenticated user is still served.
//!
//! Peers are told apart by address: loopback answers on all of 127/8, so
//! the attacker connects from 127.0.0.2 and the user from 127.0.0.1.

mod common;

use common::{ALICE, start_with};
use cortex_server::{ConnectionLimits, ServerConfig};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// How long a test waits for something the server must do by itself.
const PATIENCE: Duration = Duration::from_secs(20);

fn limits() -> ServerConfig {
    ServerConfig {
        connections: ConnectionLimits {
            max_connections: 64,
            max_per_peer: 4,
            header_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
        },
        ..ServerConfig::default()
    }
}

fn server_addr(base: &str) -> SocketAddr {
    base.trim_start_matches("http://")
        .parse()
        .expect("a socket address")
}

async fn connect_from(from: [u8; 4], to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::from((from, 0)))
        .expect("bind the client side");
    socket.connect(to).await.expect("connect")
}

/// Read until the server closes (or `PATIENCE` passes); what it sent.
async fn read_to_close(stream: &mut TcpStream) -> Option<String> {
    let mut out = Vec::new();
    let read = tokio::time::timeout(PATIENCE, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    read.ok()
        .map(|()| String::from_utf8_lossy(&out).into_owned())
}

/// An authenticated request from 127.0.0.1 gets its answer.
async fn user_is_served(base: &str) {
    let response = reqwest::Client::new()
        .get(format!("{base}/v1/sessions"))
        .bearer_auth(ALICE)
        .timeout(PATIENCE)
        .send()
        .await
        .expect("the user's request is answered");
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_connection_that_says_nothing_is_closed() {
    let server = start_with(limits()).await;
    let mut silent = connect_from([127, 0, 0, 2], server_addr(&server.base)).await;
    let said = read_to_close(&mut silent).await;
    assert!(said.is_some(), "the server kept a silent connection open");
    user_is_served(&server.base).await;
}

#[tokio::test]
async fn one_peer_cannot_take_every_connection() {
    let server = start_with(limits()).await;
    let addr = server_addr(&server.base);
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(connect_from([127, 0, 0, 2], addr).await);
    }
    // Past its cap, the peer's connection is closed before a byte is read.
    let mut fifth = connect_from([127, 0, 0, 2], addr).await;
    let _ = fifth
        .write_all(b"GET /v1/sessions HTTP/1.1\r\nhost: x\r\n\r\n")
        .await;
    let answer = read_to_close(&mut fifth).await.expect("closed in time");
    assert!(
        !answer.starts_with("HTTP/1.1"),
        "the fifth connection was served: {answer}"
    );
    // Another peer is served meanwhile.
    user_is_served(&server.base).await;
    drop(held);
}

#[tokio::test]
async fn a_body_that_never_arrives_is_cut_off() {
    let server = start_with(limits()).await;
    let mut slow = connect_from([127, 0, 0, 2], server_addr(&server.base)).await;
    let head = format!(
        "POST /v1/sessions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {ALICE}\r\n\
         content-type: application/json\r\ncontent-length: 1000\r\n\r\n{{\"repo\":"
    );
    slow.write_all(head.as_bytes()).await.expect("write");
    let answer = read_to_close(&mut slow).await.expect("an answer in time");
    let status = answer.split_whitespace().nth(1).unwrap_or_default();
    assert!(
        status.starts_with('4'),
        "a stalled body must get a 4xx: {answer}"
    );
    user_is_served(&server.base).await;
}

#[tokio::test]
async fn an_unauthenticated_request_is_refused_before_its_body() {
    let server = start_with(limits()).await;
    let mut client = connect_from([127, 0, 0, 2], server_addr(&server.base)).await;
    // A large body announced and never sent: the refusal does not wait.
    let head = "POST /v1/sessions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
                content-length: 100000000\r\n\r\n";
    client.write_all(head.as_bytes()).await.expect("write");
    let mut buf = [0u8; 512];
    let n = tokio::time::timeout(PATIENCE, client.read(&mut buf))
        .await
        .expect("an answer in time")
        .expect("read");
    let answer = String::from_utf8_lossy(&buf[..n]);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    user_is_served(&server.base).await;
}
