//! The Anthropic provider against a loopback server replaying Messages API
//! streams (fixtures written from Anthropic's streaming documentation).

mod support;

use cortex_model::anthropic::{AnthropicConfig, AnthropicProvider};
use cortex_model::{
    FinishReason, ModelError, ModelEvent, ModelProvider, ModelRequest, RetryPolicy, Timeouts,
};
use cortex_protocol::{CallId, Message, ToolSpec};
use futures::StreamExt;
use serde_json::json;
use std::time::Duration;
use support::{Reply, Server, assemble, fixture, fixture_events, status};

type Item = Result<ModelEvent, ModelError>;

fn config(server: &Server) -> AnthropicConfig {
    AnthropicConfig {
        base_url: server.root_url(),
        api_key: Some("sk-ant-test".into()),
        key_env: "ANTHROPIC_API_KEY".into(),
        max_tokens: 4096,
        thinking_budget: None,
        prompt_caching: true,
        parallel_tool_calls: true,
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
        tools: vec![
            ToolSpec {
                name: "read_file".into(),
                description: "Read a file".into(),
                parameters: json!({"type": "object"}),
            },
            ToolSpec {
                name: "grep".into(),
                description: "Search".into(),
                parameters: json!({"type": "object"}),
            },
        ],
        tool_choice: Default::default(),
        hints: Default::default(),
    }
}

async fn run_with(config: AnthropicConfig, request: ModelRequest) -> Vec<Item> {
    AnthropicProvider::new(config, "claude-sonnet-4-20250514")
        .expect("provider")
        .stream(request)
        .collect()
        .await
}

async fn run(server: &Server) -> Vec<Item> {
    run_with(config(server), request()).await
}

#[tokio::test]
async fn streams_text_with_cache_usage_and_sends_the_right_headers() {
    let server = Server::start(vec![Reply::Sse(fixture_events("anthropic/text.sse"))]).await;
    let items = run(&server).await;
    assert_eq!(
        items,
        [
            Ok(ModelEvent::Usage {
                input_tokens: 25 + 1200 + 3400,
                output_tokens: 1
            }),
            Ok(ModelEvent::CacheUsage {
                read_tokens: 3400,
                write_tokens: 1200
            }),
            Ok(ModelEvent::TextDelta("Hello".into())),
            Ok(ModelEvent::TextDelta(" wörld 🌍".into())),
            Ok(ModelEvent::Usage {
                input_tokens: 0,
                output_tokens: 15
            }),
            Ok(ModelEvent::Finish(FinishReason::Stop)),
        ]
    );
    let sent = &server.requests()[0];
    assert_eq!(sent.request_line, "POST /v1/messages HTTP/1.1");
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    let out = assemble(&items);
    assert_eq!((out.input_tokens, out.output_tokens), (4625, 15));
    assert_eq!(
        (out.cache_read_tokens, out.cache_write_tokens),
        (3400, 1200)
    );
}

#[tokio::test]
async fn byte_split_streams_give_the_same_events() {
    let whole = fixture("anthropic/tool_call.sse");
    let server = Server::start(vec![
        Reply::Sse(support::pieces(&whole, 7)),
        Reply::Sse(fixture_events("anthropic/tool_call.sse")),
    ])
    .await;
    let split = run(&server).await;
    let by_event = run(&server).await;
    assert_eq!(split, by_event);
}

#[tokio::test]
async fn one_tool_call_with_streamed_input() {
    let server = Server::start(vec![Reply::Sse(fixture_events("anthropic/tool_call.sse"))]).await;
    let out = assemble(&run(&server).await);
    assert_eq!(out.text, "Let me read it.");
    assert_eq!(out.tool_calls.len(), 1);
    assert_eq!(
        out.tool_calls[0].id.as_str(),
        "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    );
    assert_eq!(out.tool_calls[0].name, "read_file");
    assert_eq!(out.tool_calls[0].arguments, "{\"path\": \"src/main.rs\"}");
    assert_eq!(out.finish, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn parallel_tool_calls() {
    let server = Server::start(vec![Reply::Sse(fixture_events(
        "anthropic/parallel_tools.sse",
    ))])
    .await;
    let items = run(&server).await;
    let ends = items
        .iter()
        .filter(|i| matches!(i, Ok(ModelEvent::ToolCallEnd { .. })))
        .count();
    assert_eq!(ends, 2);
    let out = assemble(&items);
    let calls: Vec<(&str, &str, &str)> = out
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            (
                "toolu_01A09q90qw90lq917835lq9",
                "read_file",
                "{\"path\": \"a.rs\"}"
            ),
            (
                "toolu_01B19r91rw91mr928946mr0",
                "grep",
                "{\"pattern\": \"fn main\"}"
            ),
        ]
    );
}

#[tokio::test]
async fn thinking_streams_apart_and_is_replayed_signed() {
    let server = Server::start(vec![
        Reply::Sse(fixture_events("anthropic/thinking.sse")),
        Reply::Sse(fixture_events("anthropic/text.sse")),
    ])
    .await;
    let mut config = config(&server);
    config.thinking_budget = Some(2048);
    let items = run_with(config.clone(), request()).await;
    let thinking: Vec<&str> = items
        .iter()
        .filter_map(|i| match i {
            Ok(ModelEvent::ThinkingDelta(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, ["I need to find 27 * 453.", "\n27 * 453 = 12231"]);
    let out = assemble(&items);
    assert_eq!(out.text, "27 * 453 = 12,231");
    let items: Vec<_> = out.provider_items.iter().map(|i| i.item.clone()).collect();
    assert_eq!(
        items,
        [
            json!({"type": "thinking", "thinking": "I need to find 27 * 453.\n27 * 453 = 12231",
                   "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}),
            json!({"type": "redacted_thinking",
                   "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}),
        ]
    );
    // The next round sends the blocks back, first in the assistant turn.
    let mut answer = Message::assistant(out.text.clone(), out.tool_calls.clone());
    answer.provider_items = out.provider_items.clone();
    let mut next = request();
    next.messages.push(answer);
    next.messages.push(Message::user("and 28 * 453?"));
    let _ = run_with(config, next).await;
    let body = server.requests()[1].json();
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    let content = &body["messages"][1]["content"];
    assert_eq!(content[0], items[0]);
    assert_eq!(content[1], items[1]);
    assert_eq!(
        content[2],
        json!({"type": "text", "text": "27 * 453 = 12,231"})
    );
}

#[tokio::test]
async fn cache_control_on_system_last_tool_and_last_message() {
    let server = Server::start(vec![Reply::Sse(fixture_events("anthropic/text.sse"))]).await;
    let mut request = request();
    request.messages = vec![
        Message::user("read a.rs"),
        Message::assistant(
            "",
            vec![cortex_protocol::ToolCallRequest {
                id: CallId::from("toolu_1"),
                name: "read_file".into(),
                arguments: "{\"path\":\"a.rs\"}".into(),
            }],
        ),
        Message::tool(CallId::from("toolu_1"), "fn main() {}"),
    ];
    let _ = run_with(config(&server), request).await;
    let body = server.requests()[0].json();
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(body["system"][0]["cache_control"], ephemeral);
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(body["tools"][1]["cache_control"], ephemeral);
    assert!(
        body["messages"][0]["content"][0]
            .get("cache_control")
            .is_none()
    );
    assert!(
        body["messages"][1]["content"][0]
            .get("cache_control")
            .is_none()
    );
    assert_eq!(
        body["messages"][2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "fn main() {}",
               "cache_control": ephemeral})
    );
    assert_eq!(body.to_string().matches("cache_control").count(), 3);
}

#[tokio::test]
async fn a_cut_stream_fails_after_its_first_events_without_retrying() {
    let server = Server::start(vec![Reply::SseCut(fixture_events("anthropic/cut.sse"))]).await;
    let items = run(&server).await;
    assert!(items.contains(&Ok(ModelEvent::TextDelta("Partial ans".into()))));
    assert!(matches!(items.last(), Some(Err(ModelError::Stream(_)))));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_event_mid_stream_ends_it() {
    let server = Server::start(vec![Reply::Sse(fixture_events(
        "anthropic/error_midstream.sse",
    ))])
    .await;
    let items = run(&server).await;
    assert!(items.contains(&Ok(ModelEvent::TextDelta("Working".into()))));
    match items.last() {
        Some(Err(error @ ModelError::Stream(message))) => {
            assert!(message.contains("overloaded_error") && message.contains("Overloaded"));
            // The turn loop may retry the round.
            assert!(error.is_retryable());
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn unauthorized_names_the_variable() {
    let server = Server::start(vec![status(401, "anthropic/401.json")]).await;
    match run(&server).await.as_slice() {
        [Err(ModelError::Auth(message))] => {
            assert!(message.contains("ANTHROPIC_API_KEY"), "{message}");
            assert!(message.contains("invalid x-api-key"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn rate_limited_then_overloaded_are_retried() {
    let limited = Reply::Status {
        status: 429,
        headers: vec![("retry-after".into(), "0".into())],
        body: fixture("anthropic/429.json"),
    };
    let server = Server::start(vec![
        limited,
        status(529, "anthropic/529.json"),
        Reply::Sse(fixture_events("anthropic/text.sse")),
    ])
    .await;
    let items = run(&server).await;
    let reasons: Vec<&str> = items
        .iter()
        .filter_map(|i| match i {
            Ok(ModelEvent::Retry { reason, .. }) => Some(reason.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 2);
    assert!(
        reasons[0].contains("429") && reasons[0].contains("rate limit"),
        "{}",
        reasons[0]
    );
    assert!(
        reasons[1].contains("529") && reasons[1].contains("Overloaded"),
        "{}",
        reasons[1]
    );
    let out = assemble(&items);
    assert_eq!(out.text, "Hello wörld 🌍");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn overloaded_until_the_retries_run_out() {
    let server = Server::start(vec![
        status(529, "anthropic/529.json"),
        status(529, "anthropic/529.json"),
        status(529, "anthropic/529.json"),
    ])
    .await;
    let items = run(&server).await;
    assert_eq!(
        items.last(),
        Some(&Err(ModelError::Http {
            status: 529,
            body: "Overloaded".into()
        }))
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn too_long_and_unknown_model_are_explained() {
    let server = Server::start(vec![
        status(400, "anthropic/400_too_long.json"),
        status(404, "anthropic/404.json"),
    ])
    .await;
    match run(&server).await.as_slice() {
        [Err(error @ ModelError::ContextTooLong(_))] => {
            let text = error.to_string();
            assert!(text.contains("215934 tokens > 200000"), "{text}");
            assert!(text.contains("compacted"), "{text}");
        }
        other => panic!("unexpected {other:?}"),
    }
    match run(&server).await.as_slice() {
        [Err(ModelError::NoSuchModel(message))] => {
            assert!(
                message.contains("anthropic:claude-sonnet-4-20250514"),
                "{message}"
            );
            assert!(message.contains("claude-nonexistent"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
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
async fn a_users_image_reaches_the_server_as_a_base64_image_block() {
    let server = Server::start(vec![Reply::Sse(fixture_events("anthropic/text.sse"))]).await;
    let items = run_with(config(&server), with_image(request())).await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    let body = server.requests()[0].json();
    let user = &body["messages"][0];
    assert_eq!(user["role"], "user");
    let content = user["content"].as_array().expect("blocks");
    assert_eq!(content[0]["text"], "What is in this screenshot?");
    // The last block carries the prompt-cache mark, as any last block does.
    let mut image = content[1].clone();
    image
        .as_object_mut()
        .expect("block")
        .remove("cache_control");
    assert_eq!(
        image,
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
    );
}
