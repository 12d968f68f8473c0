//! A server that drops an idle connection just as the next request arrives:
//! the request goes again on a new connection only when repeating it cannot
//! repeat its effect.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Read one request's head (the tests send no body) and return its first line.
async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

async fn answer(stream: &mut TcpStream, body: &str) {
    let reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(reply.as_bytes()).await.expect("write");
}

/// A server whose first connection answers one request, then reads the
/// next and closes without an answer; each later connection answers.
/// Returns the endpoint and a receiver of every request line it read.
async fn closing_server() -> (Endpoint, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let endpoint = Endpoint::Tcp(listener.local_addr().expect("addr").to_string());
    let (seen, requests) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((mut stream, _)) = listener.accept().await {
            let line = read_head(&mut stream).await;
            let _ = seen.send(line);
            answer(&mut stream, "one").await;
            if first {
                first = false;
                let line = read_head(&mut stream).await;
                let _ = seen.send(line);
                drop(stream);
            }
        }
    });
    (endpoint, requests)
}

fn request(method: Method) -> Request<Full<Bytes>> {
    Request::builder()
        .method(method)
        .uri("/x")
        .header(http::header::HOST, "localhost")
        .body(Full::new(Bytes::new()))
        .expect("request")
}

async fn body(response: hyper::Response<Incoming>) -> String {
    use http_body_util::BodyExt;
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[tokio::test]
async fn an_idempotent_request_dropped_unanswered_goes_again_on_a_new_connection() {
    let (endpoint, mut requests) = closing_server().await;
    let pool = Pool::default();
    let (response, sender) = pool
        .send(&endpoint, request(Method::GET))
        .await
        .expect("first");
    assert_eq!(body(response).await, "one");
    pool.give_back(sender);

    let (response, _) = pool
        .send(&endpoint, request(Method::GET))
        .await
        .expect("second");
    assert_eq!(body(response).await, "one");
    let mut lines = Vec::new();
    while let Ok(line) = requests.try_recv() {
        lines.push(line);
    }
    // Read on the dropped connection, then again on a new one.
    assert_eq!(lines, vec!["GET /x HTTP/1.1"; 3]);
}

#[tokio::test]
async fn a_post_the_server_read_and_dropped_is_not_sent_again() {
    let (endpoint, mut requests) = closing_server().await;
    let pool = Pool::default();
    let (response, sender) = pool
        .send(&endpoint, request(Method::GET))
        .await
        .expect("first");
    assert_eq!(body(response).await, "one");
    pool.give_back(sender);

    let failed = pool.send(&endpoint, request(Method::POST)).await;
    assert!(matches!(failed, Err(ClientError::Http(_))), "{failed:?}");
    let mut lines = Vec::new();
    while let Ok(line) = requests.try_recv() {
        lines.push(line);
    }
    // The server may have acted on it: it went once.
    assert_eq!(lines, vec!["GET /x HTTP/1.1", "POST /x HTTP/1.1"]);
}
