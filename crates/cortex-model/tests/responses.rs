//! The OpenAI Responses wire against a loopback server replaying streams
//! (fixtures written from OpenAI's Responses streaming documentation).

mod support;

use cortex_model::openai::{OpenAiConfig, OpenAiProvider, OpenAiWire};
use cortex_model::{
    FinishReason, ModelError, ModelEvent, ModelProvider, ModelRequest, RetryPolicy, Timeouts,
};
use cortex_protocol::{Message, ToolSpec};
use futures::StreamExt;
use serde_json::json;
use std::time::Duration;
use support::{Reply, Server, assemble, fixture, fixture_events, status};

type Item = Result<ModelEvent, ModelError>;

fn config(server: &Server) -> OpenAiConfig {
    OpenAiConfig {
        base_url: server.base_url(),
        api_key: Some("sk-test".into()),
        key_env: "OPENAI_API_KEY".into(),
        wire: OpenAiWire::Responses,
        parallel_tool_calls: true,
        forced_call: Default::default(),
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_secs(3),
        },
        timeouts: Timeouts {
            connect: Duration::from_secs(2),
            ..Timeouts::default()
        },
    }
}

fn request() -> ModelRequest {
    ModelRequest {
        model: String::new(),
        system: "You are Cortex.".into(),
        messages: vec![Message::user("hi")],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
        }],
        tool_choice: Default::default(),
        hints: Default::default(),
    }
}

async fn run_with(server: &Server, request: ModelRequest) -> Vec<Item> {
    let provider = OpenAiProvider::new(config(server), "o4-mini").expect("provider");
    assert_eq!(provider.describe(), "openai-responses:o4-mini");
    provider.stream(request).collect().await
}

async fn run(server: &Server) -> Vec<Item> {
    run_with(server, request()).await
}

#[tokio::test]
async fn streams_text_and_usage_to_the_responses_endpoint() {
    let server = Server::start(vec![Reply::Sse(fixture_events("responses/text.sse"))]).await;
    let items = run(&server).await;
    assert_eq!(
        items,
        [
            Ok(ModelEvent::TextDelta("Hello".into())),
            Ok(ModelEvent::TextDelta(" wörld 🌍".into())),
            Ok(ModelEvent::Usage {
                input_tokens: 37,
                output_tokens: 11
            }),
            Ok(ModelEvent::Finish(FinishReason::Stop)),
        ]
    );
    let sent = &server.requests()[0];
    assert_eq!(sent.request_line, "POST /v1/responses HTTP/1.1");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    let body = sent.json();
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["instructions"], json!("You are Cortex."));
}

#[tokio::test]
async fn byte_split_streams_give_the_same_events() {
    let server = Server::start(vec![
        Reply::Sse(support::pieces(&fixture("responses/tool_call.sse"), 11)),
        Reply::Sse(fixture_events("responses/tool_call.sse")),
    ])
    .await;
    assert_eq!(run(&server).await, run(&server).await);
}

#[tokio::test]
async fn one_tool_call_with_cached_prompt() {
    let server = Server::start(vec![Reply::Sse(fixture_events("responses/tool_call.sse"))]).await;
    let items = run(&server).await;
    assert!(items.contains(&Ok(ModelEvent::CacheUsage {
        read_tokens: 384,
        write_tokens: 0
    })));
    let out = assemble(&items);
    assert_eq!(out.tool_calls.len(), 1);
    assert_eq!(
        out.tool_calls[0].id.as_str(),
        "call_unLAR8MvFNptuiZK6K6HCy5k"
    );
    assert_eq!(out.tool_calls[0].name, "read_file");
    assert_eq!(out.tool_calls[0].arguments, "{\"path\":\"src/main.rs\"}");
    assert_eq!(out.finish, Some(FinishReason::ToolCalls));
    assert_eq!((out.input_tokens, out.cache_read_tokens), (420, 384));
}

#[tokio::test]
async fn parallel_tool_calls() {
    let server = Server::start(vec![Reply::Sse(fixture_events(
        "responses/parallel_tools.sse",
    ))])
    .await;
    let out = assemble(&run(&server).await);
    let calls: Vec<(&str, &str, &str)> = out
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_aaa111", "read_file", "{\"path\":\"a.rs\"}"),
            ("call_bbb222", "grep", "{\"pattern\":\"fn main\"}"),
        ]
    );
}

#[tokio::test]
async fn reasoning_is_summarised_kept_and_replayed() {
    let server = Server::start(vec![
        Reply::Sse(fixture_events("responses/thinking.sse")),
        Reply::Sse(fixture_events("responses/text.sse")),
    ])
    .await;
    let items = run(&server).await;
    let out = assemble(&items);
    assert_eq!(
        out.thinking,
        "**Finding the entry point**\n\nI should read main.rs first."
    );
    assert_eq!(out.text, "");
    assert_eq!(out.provider_items.len(), 1);
    let reasoning = &out.provider_items[0];
    assert_eq!(reasoning.provider, "openai-responses");
    assert_eq!(
        reasoning.item["encrypted_content"],
        json!("gAAAAABoIPOE3vjP0WgoCFgTHDYvCXXDzLfTADsBCQUYBdbGe7nuXD1xAQ")
    );
    assert!(reasoning.item.get("id").is_none());

    let mut answer = Message::assistant(out.text.clone(), out.tool_calls.clone());
    answer.provider_items = out.provider_items.clone();
    let mut next = request();
    next.messages.push(answer);
    next.messages
        .push(Message::tool(out.tool_calls[0].id.clone(), "fn main() {}"));
    let _ = run_with(&server, next).await;
    let input = server.requests()[1].json()["input"].clone();
    assert_eq!(input[1], reasoning.item);
    assert_eq!(input[2]["type"], json!("function_call"));
    assert_eq!(input[2]["call_id"], json!("call_ccc333"));
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": "call_ccc333", "output": "fn main() {}"})
    );
}

#[tokio::test]
async fn a_cut_stream_fails_without_retrying() {
    let server = Server::start(vec![Reply::SseCut(fixture_events("responses/cut.sse"))]).await;
    let items = run(&server).await;
    assert!(items.contains(&Ok(ModelEvent::TextDelta("Partial ans".into()))));
    assert!(matches!(items.last(), Some(Err(ModelError::Stream(_)))));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_event_mid_stream_ends_it() {
    let server = Server::start(vec![Reply::Sse(fixture_events(
        "responses/error_midstream.sse",
    ))])
    .await;
    let items = run(&server).await;
    assert!(items.contains(&Ok(ModelEvent::TextDelta("Working".into()))));
    assert!(matches!(
        items.last(),
        Some(Err(ModelError::Stream(m))) if m.contains("had an error processing")
    ));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn unauthorized_names_the_variable() {
    let server = Server::start(vec![status(401, "responses/401.json")]).await;
    match run(&server).await.as_slice() {
        [Err(ModelError::Auth(message))] => {
            assert!(message.contains("OPENAI_API_KEY"), "{message}");
            assert!(message.contains("openai-responses:o4-mini"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn rate_limited_and_overloaded_are_retried() {
    let limited = Reply::Status {
        status: 429,
        headers: vec![("retry-after-ms".into(), "10".into())],
        body: fixture("responses/429.json"),
    };
    let server = Server::start(vec![
        limited,
        status(503, "responses/503.json"),
        Reply::Sse(fixture_events("responses/text.sse")),
    ])
    .await;
    let items = run(&server).await;
    let retries: Vec<(u64, &str)> = items
        .iter()
        .filter_map(|i| match i {
            Ok(ModelEvent::Retry {
                delay_ms, reason, ..
            }) => Some((*delay_ms, reason.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 2);
    assert_eq!(retries[0].0, 10);
    assert!(
        retries[0].1.contains("Rate limit reached"),
        "{}",
        retries[0].1
    );
    assert!(retries[1].1.contains("overloaded"), "{}", retries[1].1);
    assert_eq!(assemble(&items).text, "Hello wörld 🌍");
    assert_eq!(server.requests().len(), 3);
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
async fn a_users_image_reaches_the_server_as_an_input_image() {
    let server = Server::start(vec![Reply::Sse(fixture_events("responses/text.sse"))]).await;
    let items = run_with(&server, with_image(request())).await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    let body = server.requests()[0].json();
    let user = body["input"]
        .as_array()
        .expect("input")
        .iter()
        .find(|item| item["role"] == "user")
        .cloned()
        .expect("a user item");
    assert_eq!(
        user["content"],
        json!([
            {"type": "input_text", "text": "What is in this screenshot?"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
        ])
    );
}
