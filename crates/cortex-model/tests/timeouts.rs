//! Connect, first-byte and idle-stream timeouts against loopback servers
//! that stall at each stage. All wire formats share the driver; the Chat
//! Completions provider stands in for them.

mod support;

use cortex_model::openai::{OpenAiConfig, OpenAiProvider, OpenAiWire};
use cortex_model::{ModelError, ModelEvent, ModelProvider, ModelRequest, RetryPolicy, Timeouts};
use cortex_protocol::Message;
use futures::StreamExt;
use std::time::Duration;
use support::{Reply, Server, chunk};

type Item = Result<ModelEvent, ModelError>;

fn provider(base_url: String, timeouts: Timeouts) -> OpenAiProvider {
    let config = OpenAiConfig {
        base_url,
        api_key: None,
        key_env: "OPENAI_API_KEY".into(),
        wire: OpenAiWire::Chat,
        parallel_tool_calls: true,
        forced_call: Default::default(),
        retry: RetryPolicy {
            max_retries: 0,
            base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
        },
        timeouts,
    };
    OpenAiProvider::new(config, "gpt-4o-mini").expect("provider")
}

fn request() -> ModelRequest {
    ModelRequest {
        model: String::new(),
        system: String::new(),
        messages: vec![Message::user("hi")],
        tools: vec![],
        tool_choice: Default::default(),
        hints: Default::default(),
    }
}

fn short(connect_ms: u64, first_byte_ms: u64, idle_ms: u64) -> Timeouts {
    Timeouts {
        connect: Duration::from_millis(connect_ms),
        first_byte: Duration::from_millis(first_byte_ms),
        idle: Duration::from_millis(idle_ms),
    }
}

/// Bounds the test itself, so a timeout that does not fire fails it
/// instead of hanging.
async fn collect(provider: &OpenAiProvider) -> Vec<Item> {
    tokio::time::timeout(
        Duration::from_secs(20),
        provider.stream(request()).collect::<Vec<_>>(),
    )
    .await
    .expect("the provider's own timeout fired first")
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_first_byte_timeout() {
    let server = Server::start(vec![Reply::Stall]).await;
    let items = collect(&provider(server.base_url(), short(2000, 300, 60_000))).await;
    match items.as_slice() {
        [Err(error @ ModelError::Timeout(message))] => {
            assert!(message.contains("first-byte"), "{message}");
            assert!(error.is_retryable());
        }
        other => panic!("unexpected {other:?}"),
    }
    // The request was abandoned: the server saw the client hang up.
    for _ in 0..100 {
        if server.client_hung_up() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(server.client_hung_up());
}

#[tokio::test]
async fn a_stream_that_stalls_hits_the_idle_timeout() {
    let first = chunk(r#"{"role":"assistant","content":"Hel"}"#, None);
    let server = Server::start(vec![Reply::SseHang(vec![first.into_bytes()])]).await;
    let items = collect(&provider(server.base_url(), short(2000, 60_000, 300))).await;
    match items.as_slice() {
        [
            Ok(ModelEvent::TextDelta(text)),
            Err(ModelError::Stream(message)),
        ] => {
            assert_eq!(text, "Hel");
            assert!(message.contains("idle-stream timeout"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn a_full_accept_queue_hits_the_connect_timeout() {
    // A listener that never accepts, with a backlog of 0: once its queue
    // holds a connection, the kernel drops further SYNs and connecting
    // stalls, as with an unreachable host.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind("127.0.0.1:0".parse().expect("addr"))
        .expect("bind");
    let listener = socket.listen(0).expect("listen");
    let addr = listener.local_addr().expect("addr");
    let mut fillers = Vec::new();
    let mut stalled = false;
    for _ in 0..16 {
        match tokio::time::timeout(
            Duration::from_millis(300),
            tokio::net::TcpStream::connect(addr),
        )
        .await
        {
            Ok(Ok(stream)) => fillers.push(stream),
            Ok(Err(e)) => panic!("connect failed: {e}"),
            Err(_) => {
                stalled = true;
                break;
            }
        }
    }
    assert!(stalled, "the accept queue never filled");
    let items = collect(&provider(
        format!("http://{addr}/v1"),
        short(300, 60_000, 60_000),
    ))
    .await;
    match items.as_slice() {
        [Err(ModelError::Connect(message))] => {
            assert!(message.contains("connect timeout"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
    drop(listener);
}
