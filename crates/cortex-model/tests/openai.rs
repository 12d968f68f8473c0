//! The OpenAI provider against a loopback server speaking the real wire
//! format.

mod support;

use cortex_model::openai::{OpenAiConfig, OpenAiProvider, OpenAiWire};
use cortex_model::{
    Assembled, Assembler, FinishReason, ModelError, ModelEvent, ModelProvider, ModelRequest,
    RetryPolicy, Timeouts,
};
use cortex_protocol::{CallId, Message, ToolCallRequest, ToolSpec};
use futures::StreamExt;
use serde_json::json;
use std::time::{Duration, Instant};
use support::{DONE, Reply, Server, chunk, parts, pieces, usage_chunk};

type Item = Result<ModelEvent, ModelError>;

fn policy() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_secs(3),
    }
}

fn provider(base_url: &str, api_key: Option<&str>) -> OpenAiProvider {
    let config = OpenAiConfig {
        base_url: base_url.to_owned(),
        api_key: api_key.map(str::to_owned),
        key_env: "OPENAI_API_KEY".into(),
        wire: OpenAiWire::Chat,
        parallel_tool_calls: true,
        forced_call: Default::default(),
        retry: policy(),
        timeouts: Timeouts {
            connect: Duration::from_secs(2),
            ..Timeouts::default()
        },
    };
    OpenAiProvider::new(config, "gpt-4o-mini").expect("provider")
}

fn request() -> ModelRequest {
    ModelRequest {
        model: String::new(),
        system: "You are Cortex.".into(),
        messages: vec![Message::user("hi")],
        tools: vec![],
        tool_choice: Default::default(),
        hints: Default::default(),
    }
}

async fn run(server: &Server) -> Vec<Item> {
    provider(&server.base_url(), None)
        .stream(request())
        .collect()
        .await
}

fn assemble(items: &[Item]) -> Assembled {
    let mut assembler = Assembler::default();
    for item in items {
        assembler.push(item.as_ref().expect("no error"));
    }
    assembler.finish()
}

fn text_body() -> String {
    [
        chunk(r#"{"role":"assistant","content":"","refusal":null}"#, None),
        chunk(r#"{"content":"Hello"}"#, None),
        chunk(r#"{"content":" wörld 🌍"}"#, None),
        chunk("{}", Some("stop")),
        usage_chunk(12, 3),
        DONE.to_owned(),
    ]
    .concat()
}

#[tokio::test]
async fn streams_text_and_usage() {
    // 29-byte pieces split lines, the JSON and (some of) the multi-byte characters.
    let server = Server::start(vec![Reply::Sse(pieces(&text_body(), 29))]).await;
    let items = run(&server).await;
    assert_eq!(
        items,
        [
            Ok(ModelEvent::TextDelta("Hello".into())),
            Ok(ModelEvent::TextDelta(" wörld 🌍".into())),
            Ok(ModelEvent::Usage {
                input_tokens: 12,
                output_tokens: 3
            }),
            Ok(ModelEvent::Finish(FinishReason::Stop)),
        ]
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn keep_alive_comments_and_crlf_are_ignored() {
    let body = format!(
        ": OPENROUTER PROCESSING\n\n{}",
        text_body().replace("\n", "\r\n")
    );
    let server = Server::start(vec![Reply::Sse(pieces(&body, 50))]).await;
    let out = assemble(&run(&server).await);
    assert_eq!(out.text, "Hello wörld 🌍");
    assert_eq!(out.finish, Some(FinishReason::Stop));
}

#[tokio::test]
async fn parallel_tool_calls_with_split_arguments() {
    let events = [
        chunk(
            r#"{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_sQvbW4FCSx3hNb0GbiP2ZfWl","type":"function","function":{"name":"read_file","arguments":""}}],"refusal":null}"#,
            None,
        ),
        chunk(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}"#,
            None,
        ),
        chunk(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"src/"}}]}"#,
            None,
        ),
        chunk(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"main.rs\"}"}}]}"#,
            None,
        ),
        chunk(
            r#"{"tool_calls":[{"index":1,"id":"call_L2mXhB7vbs2qcTbqDf1Y5Tor","type":"function","function":{"name":"grep","arguments":""}}]}"#,
            None,
        ),
        chunk(
            r#"{"tool_calls":[{"index":1,"function":{"arguments":"{\"pattern\""}}]}"#,
            None,
        ),
        chunk(
            r#"{"tool_calls":[{"index":1,"function":{"arguments":": \"fn main\"}"}}]}"#,
            None,
        ),
        chunk("{}", Some("tool_calls")),
        usage_chunk(80, 45),
        DONE.to_owned(),
    ];
    // Whole events, except that one boundary falls in the middle of a data
    // line (inside the JSON of the second call's first argument fragment).
    let mut body_parts = parts(&events);
    let split = body_parts[5].len() / 2;
    let tail = body_parts[5].split_off(split);
    body_parts.insert(6, tail);
    let server = Server::start(vec![Reply::Sse(body_parts)]).await;
    let items = run(&server).await;

    let ends: Vec<usize> = items
        .iter()
        .filter_map(|i| match i {
            Ok(ModelEvent::ToolCallEnd { index }) => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [0, 1]);
    assert!(matches!(
        &items[0],
        Ok(ModelEvent::ToolCallStart { index: 0, name, .. }) if name == "read_file"
    ));

    let out = assemble(&items);
    assert_eq!(out.text, "");
    let calls: Vec<(&str, &str, &str)> = out
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            (
                "call_sQvbW4FCSx3hNb0GbiP2ZfWl",
                "read_file",
                r#"{"path": "src/main.rs"}"#
            ),
            (
                "call_L2mXhB7vbs2qcTbqDf1Y5Tor",
                "grep",
                r#"{"pattern": "fn main"}"#
            ),
        ]
    );
    assert_eq!((out.input_tokens, out.output_tokens), (80, 45));
    assert_eq!(out.finish, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn retries_429_honouring_retry_after() {
    let server = Server::start(vec![
        Reply::Status {
            status: 429,
            headers: vec![("Retry-After".into(), "1".into())],
            body: r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#.into(),
        },
        Reply::Sse(pieces(&text_body(), 64)),
    ])
    .await;
    let started = Instant::now();
    let items = run(&server).await;
    let elapsed = started.elapsed();
    match &items[0] {
        Ok(ModelEvent::Retry {
            attempt: 1,
            delay_ms,
            reason,
            ..
        }) => {
            assert_eq!(*delay_ms, 1000);
            assert!(reason.contains("429"), "{reason}");
        }
        other => panic!("expected a Retry first, got {other:?}"),
    }
    assert!(elapsed >= Duration::from_millis(900), "{elapsed:?}");
    assert_eq!(assemble(&items[1..]).text, "Hello wörld 🌍");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn retries_500_then_succeeds() {
    let server = Server::start(vec![
        Reply::Status {
            status: 500,
            headers: vec![],
            body: r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}"#.into(),
        },
        Reply::Sse(pieces(&text_body(), 64)),
    ])
    .await;
    let items = run(&server).await;
    assert!(
        matches!(&items[0], Ok(ModelEvent::Retry { attempt: 1, reason, .. }) if reason.contains("500"))
    );
    let out = assemble(&items[1..]);
    assert_eq!(out.text, "Hello wörld 🌍");
    assert_eq!(out.finish, Some(FinishReason::Stop));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn gives_up_after_max_retries_with_the_last_error() {
    let busy = || Reply::Status {
        status: 503,
        headers: vec![],
        body: "overloaded".into(),
    };
    let server = Server::start(vec![busy(), busy(), busy(), busy()]).await;
    let items = run(&server).await;
    let retries = items
        .iter()
        .filter(|i| matches!(i, Ok(ModelEvent::Retry { .. })))
        .count();
    assert_eq!(retries, 2);
    assert_eq!(
        items.last(),
        Some(&Err(ModelError::Http {
            status: 503,
            body: "overloaded".into()
        }))
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn unauthorized_fails_at_once() {
    let body = r#"{"error":{"message":"Incorrect API key provided: sk-wrong. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
    let server = Server::start(vec![Reply::Status {
        status: 401,
        headers: vec![],
        body: body.into(),
    }])
    .await;
    let items = run(&server).await;
    match items.as_slice() {
        [Err(ModelError::Auth(message))] => {
            assert!(message.contains("OPENAI_API_KEY"), "{message}");
            assert!(message.contains("Incorrect API key provided"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn long_error_bodies_are_truncated() {
    let server = Server::start(vec![Reply::Status {
        status: 400,
        headers: vec![],
        body: "x".repeat(20_000),
    }])
    .await;
    let items = run(&server).await;
    match items.as_slice() {
        [Err(ModelError::Http { status: 400, body })] => {
            assert!(body.len() <= 2100 && body.len() >= 2000, "{}", body.len());
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn a_cut_stream_fails_after_the_first_event_without_retrying() {
    let first = chunk(r#"{"role":"assistant","content":"Hel"}"#, None);
    let server = Server::start(vec![Reply::SseCut(parts(&[first]))]).await;
    let items = run(&server).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0], Ok(ModelEvent::TextDelta("Hel".into())));
    assert!(matches!(items[1], Err(ModelError::Stream(_))), "{items:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_closed_connection_without_finish_is_a_cut_stream() {
    let first = chunk(r#"{"role":"assistant","content":"Hel"}"#, None);
    let server = Server::start(vec![Reply::SsePlainClose(parts(&[first]))]).await;
    let items = run(&server).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0], Ok(ModelEvent::TextDelta("Hel".into())));
    assert!(matches!(items[1], Err(ModelError::Stream(_))), "{items:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn finish_without_done_is_complete() {
    let body = [
        chunk(r#"{"content":"ok"}"#, None),
        chunk("{}", Some("stop")),
    ];
    let server = Server::start(vec![Reply::SsePlainClose(parts(&body))]).await;
    let items = run(&server).await;
    assert_eq!(
        items,
        [
            Ok(ModelEvent::TextDelta("ok".into())),
            Ok(ModelEvent::Finish(FinishReason::Stop))
        ]
    );
}

#[tokio::test]
async fn garbage_is_a_protocol_error() {
    let body = [
        chunk(r#"{"content":"a"}"#, None),
        "data: <html>502 Bad Gateway</html>\n\n".to_owned(),
    ];
    let server = Server::start(vec![Reply::Sse(parts(&body))]).await;
    let items = run(&server).await;
    assert_eq!(items[0], Ok(ModelEvent::TextDelta("a".into())));
    assert!(
        matches!(items[1], Err(ModelError::Protocol(_))),
        "{items:?}"
    );
    assert_eq!(items.len(), 2);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_object_in_the_stream_is_reported() {
    let body = [
        chunk(r#"{"content":"a"}"#, None),
        "data: {\"error\":{\"message\":\"The model is overloaded.\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n".to_owned(),
    ];
    let server = Server::start(vec![Reply::Sse(parts(&body))]).await;
    let items = run(&server).await;
    assert_eq!(items[0], Ok(ModelEvent::TextDelta("a".into())));
    match &items[1] {
        Err(error) => assert!(error.to_string().contains("The model is overloaded.")),
        other => panic!("expected an error, got {other:?}"),
    }
    assert_eq!(items.len(), 2);
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    let addr = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let items: Vec<Item> = provider(&format!("http://{addr}/v1"), None)
        .stream(request())
        .collect()
        .await;
    assert_eq!(items.len(), 3, "{items:?}");
    assert!(matches!(items[0], Ok(ModelEvent::Retry { attempt: 1, .. })));
    assert!(matches!(items[1], Ok(ModelEvent::Retry { attempt: 2, .. })));
    assert!(matches!(items[2], Err(ModelError::Connect(_))), "{items:?}");
}

#[tokio::test]
async fn dropping_the_stream_aborts_the_request() {
    let first = chunk(r#"{"content":"thinking"}"#, None);
    let server = Server::start(vec![Reply::SseHang(parts(&[first]))]).await;
    let provider = provider(&server.base_url(), None);
    let mut stream = provider.stream(request());
    assert_eq!(
        stream.next().await,
        Some(Ok(ModelEvent::TextDelta("thinking".into())))
    );
    assert!(!server.client_hung_up());
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !server.client_hung_up() {
        assert!(Instant::now() < deadline, "the connection stayed open");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn request_body_and_headers() {
    let server = Server::start(vec![Reply::Sse(pieces(&text_body(), 64))]).await;
    let request = ModelRequest {
        model: String::new(),
        system: "You are Cortex.".into(),
        messages: vec![
            Message::user("What is in a.rs?"),
            Message::assistant(
                "Let me look.",
                vec![
                    ToolCallRequest {
                        id: CallId::from("call_1"),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a.rs"}"#.into(),
                    },
                    ToolCallRequest {
                        id: CallId::from("call_2"),
                        name: "glob".into(),
                        arguments: r#"{"pattern":"*.rs"}"#.into(),
                    },
                ],
            ),
            Message::tool(CallId::from("call_1"), "1\tfn main() {}"),
            Message::tool(CallId::from("call_2"), "a.rs"),
            Message::assistant(
                "",
                vec![ToolCallRequest {
                    id: CallId::from("call_3"),
                    name: "bash".into(),
                    arguments: r#"{"command":"ls"}"#.into(),
                }],
            ),
            Message::tool(CallId::from("call_3"), "a.rs"),
        ],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a text file of the workspace.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
        tool_choice: Default::default(),
        hints: Default::default(),
    };
    let items: Vec<Item> = provider(&server.base_url(), Some("sk-test-123"))
        .stream(request)
        .collect()
        .await;
    assert!(items.iter().all(Result::is_ok));

    let recorded = &server.requests()[0];
    assert_eq!(recorded.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(recorded.header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(recorded.header("content-type"), Some("application/json"));
    assert_eq!(
        recorded.json(),
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You are Cortex."},
                {"role": "user", "content": "What is in a.rs?"},
                {"role": "assistant", "content": "Let me look.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.rs\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "glob", "arguments": "{\"pattern\":\"*.rs\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "1\tfn main() {}"},
                {"role": "tool", "tool_call_id": "call_2", "content": "a.rs"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_3", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_3", "content": "a.rs"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "read_file",
                "description": "Read a text file of the workspace.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn no_key_no_authorization_and_no_tools() {
    let server = Server::start(vec![Reply::Sse(pieces(&text_body(), 64))]).await;
    let _: Vec<Item> = run(&server).await;
    let recorded = &server.requests()[0];
    assert_eq!(recorded.header("authorization"), None);
    let body = recorded.json();
    assert!(body.get("tools").is_none());
    assert_eq!(body["model"], "gpt-4o-mini");
}

#[tokio::test]
async fn a_server_that_ignores_stream_still_works() {
    let body = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1730901234,"model":"llama","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#;
    let server = Server::start(vec![Reply::Status {
        status: 200,
        headers: vec![],
        body: body.into(),
    }])
    .await;
    let out = assemble(&run(&server).await);
    assert_eq!(out.text, "Hi there");
    assert_eq!((out.input_tokens, out.output_tokens), (5, 2));
    assert_eq!(out.finish, Some(FinishReason::Stop));
}

#[tokio::test]
async fn a_stream_cut_before_any_event_is_retried() {
    let server = Server::start(vec![
        Reply::SseCut(vec![b": keep-alive\n\n".to_vec()]),
        Reply::Sse(pieces(&text_body(), 64)),
    ])
    .await;
    let items = run(&server).await;
    assert!(
        matches!(&items[0], Ok(ModelEvent::Retry { attempt: 1, reason, .. }) if reason.contains("cut")),
        "{items:?}"
    );
    assert_eq!(assemble(&items[1..]).text, "Hello wörld 🌍");
    assert_eq!(server.requests().len(), 2);
}

/// A user message with an image, as a session sends one.
fn with_image(mut request: ModelRequest) -> ModelRequest {
    let mut message = Message::user("What is in this screenshot?");
    message
        .attachments
        .push(cortex_protocol::Attachment::Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        });
    request.messages = vec![message];
    request
}

#[tokio::test]
async fn a_users_image_reaches_the_server_as_an_image_url_part() {
    let server = Server::start(vec![Reply::Sse(parts(&[text_body()]))]).await;
    let items: Vec<Item> = provider(&server.base_url(), None)
        .stream(with_image(request()))
        .collect()
        .await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    let body = server.requests()[0].json();
    let user = &body["messages"][1];
    assert_eq!(user["role"], "user");
    assert_eq!(
        user["content"],
        json!([
            {"type": "text", "text": "What is in this screenshot?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        ])
    );
}
