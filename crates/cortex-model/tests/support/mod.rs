//! A tiny HTTP/1.1 server on 127.0.0.1 that plays canned replies, one per
//! connection, and records what it was sent.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Pause between the separate writes of a body, so the client sees them as
/// separate network chunks.
const PAUSE: Duration = Duration::from_millis(15);

pub enum Reply {
    /// 200 `text/event-stream`, chunked, one write per part.
    Sse(Vec<Vec<u8>>),
    /// Like `Sse`, then the connection is closed without ending the body.
    SseCut(Vec<Vec<u8>>),
    /// 200 `text/event-stream` delimited by closing the connection, which is
    /// closed after the parts.
    SsePlainClose(Vec<Vec<u8>>),
    /// Like `Sse` but the body never ends; the server then waits for the
    /// client to hang up and notes it.
    SseHang(Vec<Vec<u8>>),
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Reads the request and never answers (no status line); waits for the
    /// client to hang up and notes it.
    Stall,
}

#[derive(Debug, Clone)]
pub struct Recorded {
    pub request_line: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

pub struct Server {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    hung_up: Arc<AtomicBool>,
}

impl Server {
    pub async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let hung_up = Arc::new(AtomicBool::new(false));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let (recorded, hung) = (requests.clone(), hung_up.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (recorded, hung, replies) = (recorded.clone(), hung.clone(), replies.clone());
                tokio::spawn(async move {
                    serve(socket, &recorded, &hung, &replies).await;
                });
            }
        });
        Server {
            addr,
            requests,
            hung_up,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1/", self.addr)
    }

    /// Without a path: Anthropic's base URLs do not include `/v1`.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }

    /// Whether a client hung up on an `SseHang` reply.
    pub fn client_hung_up(&self) -> bool {
        self.hung_up.load(Ordering::SeqCst)
    }
}

async fn serve(
    mut socket: TcpStream,
    recorded: &Mutex<Vec<Recorded>>,
    hung_up: &AtomicBool,
    replies: &Mutex<VecDeque<Reply>>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    recorded.lock().expect("lock").push(request);
    let reply = replies.lock().expect("lock").pop_front();
    let reply = reply.unwrap_or(Reply::Status {
        status: 418,
        headers: vec![],
        body: "the test server has no more replies".into(),
    });
    // Write errors mean the client went away, which some tests want.
    let _ = write_reply(&mut socket, reply, hung_up).await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        request_line,
        headers,
        body,
    })
}

async fn write_reply(
    socket: &mut TcpStream,
    reply: Reply,
    hung_up: &AtomicBool,
) -> std::io::Result<()> {
    const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\n";
    match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Test\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
        }
        Reply::Stall => {
            wait_for_hang_up(socket).await;
            hung_up.store(true, Ordering::SeqCst);
        }
        Reply::Sse(parts) | Reply::SseCut(parts) | Reply::SseHang(parts) if parts.is_empty() => {
            unreachable!("give SSE replies at least one part")
        }
        Reply::Sse(parts) => {
            write_chunked_head(socket, SSE_HEAD).await?;
            write_chunks(socket, &parts).await?;
            socket.write_all(b"0\r\n\r\n").await?;
        }
        Reply::SseCut(parts) => {
            write_chunked_head(socket, SSE_HEAD).await?;
            write_chunks(socket, &parts).await?;
        }
        Reply::SseHang(parts) => {
            write_chunked_head(socket, SSE_HEAD).await?;
            write_chunks(socket, &parts).await?;
            wait_for_hang_up(socket).await;
            hung_up.store(true, Ordering::SeqCst);
        }
        Reply::SsePlainClose(parts) => {
            socket
                .write_all(format!("{SSE_HEAD}Connection: close\r\n\r\n").as_bytes())
                .await?;
            for part in parts {
                socket.write_all(&part).await?;
                socket.flush().await?;
                tokio::time::sleep(PAUSE).await;
            }
        }
    }
    socket.flush().await?;
    socket.shutdown().await
}

async fn wait_for_hang_up(socket: &mut TcpStream) {
    let mut scratch = [0u8; 64];
    loop {
        match socket.read(&mut scratch).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

async fn write_chunked_head(socket: &mut TcpStream, head: &str) -> std::io::Result<()> {
    socket
        .write_all(format!("{head}Transfer-Encoding: chunked\r\n\r\n").as_bytes())
        .await?;
    socket.flush().await
}

async fn write_chunks(socket: &mut TcpStream, parts: &[Vec<u8>]) -> std::io::Result<()> {
    for part in parts {
        let mut frame = format!("{:x}\r\n", part.len()).into_bytes();
        frame.extend_from_slice(part);
        frame.extend_from_slice(b"\r\n");
        socket.write_all(&frame).await?;
        socket.flush().await?;
        tokio::time::sleep(PAUSE).await;
    }
    Ok(())
}

/// One `chat.completion.chunk` event as OpenAI writes it.
pub fn chunk(delta: &str, finish_reason: Option<&str>) -> String {
    let finish = finish_reason.map_or("null".to_owned(), |r| format!("\"{r}\""));
    format!(
        "data: {{\"id\":\"chatcmpl-AQ8ZtFnBV3b9mkGhWvWsQ3mBHX1Ny\",\"object\":\"chat.completion.chunk\",\"created\":1730901234,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\"finish_reason\":{finish}}}],\"usage\":null}}\n\n"
    )
}

/// The final usage chunk (`stream_options.include_usage`).
pub fn usage_chunk(prompt: u64, completion: u64) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-AQ8ZtFnBV3b9mkGhWvWsQ3mBHX1Ny\",\"object\":\"chat.completion.chunk\",\"created\":1730901234,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":{completion},\"total_tokens\":{},\"prompt_tokens_details\":{{\"cached_tokens\":0,\"audio_tokens\":0}},\"completion_tokens_details\":{{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}}}}\n\n",
        prompt + completion
    )
}

pub const DONE: &str = "data: [DONE]\n\n";

/// `body` cut into pieces of `size` bytes (which splits lines, JSON and even
/// UTF-8 sequences).
pub fn pieces(body: &str, size: usize) -> Vec<Vec<u8>> {
    body.as_bytes().chunks(size).map(<[u8]>::to_vec).collect()
}

/// Each event as its own part.
pub fn parts(events: &[String]) -> Vec<Vec<u8>> {
    events.iter().map(|e| e.clone().into_bytes()).collect()
}

/// A fixture file under `tests/fixtures/`.
pub fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fixture's SSE events, each as its own network write.
pub fn fixture_events(name: &str) -> Vec<Vec<u8>> {
    fixture(name)
        .split_inclusive("\n\n")
        .map(|e| e.as_bytes().to_vec())
        .collect()
}

/// Fold a provider's events into one response (every event must be Ok).
pub fn assemble(
    items: &[Result<cortex_model::ModelEvent, cortex_model::ModelError>],
) -> cortex_model::Assembled {
    let mut assembler = cortex_model::Assembler::default();
    for item in items {
        assembler.push(item.as_ref().expect("no error"));
    }
    assembler.finish()
}

/// A plain HTTP answer with a fixture file as its body.
pub fn status(status: u16, file: &str) -> Reply {
    Reply::Status {
        status,
        headers: vec![],
        body: fixture(file),
    }
}
