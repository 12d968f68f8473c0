//! An MCP tool's image reaches the model as an image: the `mcp`-package
//! test server's `pixel` tool (a one-pixel PNG) called in a turn whose
//! model is an HTTP provider talking to a loopback server, which records
//! each request body. The round after the call must carry the PNG in the
//! place each wire format takes images: Chat Completions a `user` message
//! of `image_url` parts after the tool messages, Responses `input_image`
//! parts of the `function_call_output`, Anthropic an `image` block inside
//! the `tool_result`. Skips where the Python server is not installed.

mod common;
mod http_models;
#[path = "../../cortex-mcp/tests/support/mod.rs"]
mod mcp_support;
#[path = "../../cortex-model/tests/support/mod.rs"]
mod model_support;

use cortex_core::{McpServerSpec, Session, TurnOutcome};
use cortex_mcp::ServerConfig;
use cortex_model::ModelProvider;
use cortex_model::openai::OpenAiWire;
use cortex_protocol::{EventKind, Mode, StopRule};
use cortex_store::{SqliteStore, Store};
use http_models::{
    anthropic, anthropic_call_replies, chat_call_replies, openai, responses_call_replies,
};
use model_support::{Reply, Server};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The fixture's `PIXEL`, as the server sends it.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn chat_replies() -> Vec<Reply> {
    chat_call_replies("mcp__py__pixel", "{}", "One clear pixel.")
}

fn responses_replies() -> Vec<Reply> {
    responses_call_replies("mcp__py__pixel", "{}")
}

fn anthropic_replies() -> Vec<Reply> {
    anthropic_call_replies("mcp__py__pixel", "{}")
}

fn pixel_server(python: &Path) -> McpServerSpec {
    ServerConfig {
        command: Some(python.display().to_string()),
        args: vec!["server.py".into()],
        startup_timeout_sec: Some(10.0),
        enabled: true,
        ..ServerConfig::default()
    }
    .to_spec("py")
    .expect("valid")
    .expect("enabled")
}

/// One turn against `model` (whose loopback server gives the replies) in
/// which the model calls `mcp__py__pixel`; the body of the request after
/// the call.
async fn second_request(
    model: impl FnOnce(&Server) -> Arc<dyn ModelProvider>,
    replies: Vec<Reply>,
) -> Option<Value> {
    let python = mcp_support::python()?;
    let server = Server::start(replies).await;
    let repo = tempfile::tempdir().expect("tempdir");
    std::fs::copy(mcp_support::fixture(), repo.path().join("server.py")).expect("copy");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let config = common::config(
        repo.path(),
        store,
        model(&server),
        Mode::Agent,
        StopRule::Code,
    );
    let mut session = Session::create(config).await.expect("session");
    session.add_mcp_servers([pixel_server(&python)]);
    let mut events = session.subscribe();
    let outcome = session
        .run_turn("what does the pixel tool show?", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    let mut output = None;
    while let Ok(published) = events.try_recv() {
        if let EventKind::ToolResult { output: o, .. } = &published.event.kind {
            output = Some(o.clone());
        }
    }
    // The timeline names the image; it does not carry its bytes.
    let output = output.expect("tool.result");
    assert!(output.contains("[image 1: image/png]"), "{output}");
    assert!(!output.contains(PIXEL));
    session.close().await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "two rounds");
    assert!(
        !String::from_utf8_lossy(&requests[0].body).contains(PIXEL),
        "no image before the call"
    );
    Some(requests[1].json())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_completions_gets_the_image_as_a_user_message_after_the_results() {
    let Some(body) = second_request(|s| openai(s, OpenAiWire::Chat), chat_replies()).await else {
        return;
    };
    let messages = body["messages"].as_array().expect("messages");
    let tool = messages
        .iter()
        .position(|m| m["role"] == "tool")
        .expect("tool message");
    assert_eq!(messages[tool]["tool_call_id"], "call_1");
    assert!(
        messages[tool]["content"]
            .as_str()
            .is_some_and(|c| c.contains("[image 1"))
    );
    let images = &messages[tool + 1];
    assert_eq!(images["role"], "user", "{images}");
    assert_eq!(
        images["content"][1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_gets_the_image_in_the_function_call_output() {
    let Some(body) =
        second_request(|s| openai(s, OpenAiWire::Responses), responses_replies()).await
    else {
        return;
    };
    let output = body["input"]
        .as_array()
        .expect("input")
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .expect("the result")
        .clone();
    assert_eq!(output["call_id"], "call_1");
    assert_eq!(
        output["output"][1],
        json!({"type": "input_image", "image_url": format!("data:image/png;base64,{PIXEL}")})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_gets_the_image_inside_the_tool_result() {
    let Some(body) = second_request(anthropic, anthropic_replies()).await else {
        return;
    };
    let result = body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result")
        .expect("the result");
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert_eq!(
        result["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}})
    );
}
