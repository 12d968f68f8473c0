//! `read_file` of an image file (issue 41 item 6): the guest knows the file
//! by its bytes and returns it, and the next request carries it as an image
//! in each wire format (a loopback OpenAI Chat Completions, Responses and
//! Anthropic server records the bodies), while a model that takes no images
//! is told what the file is and that it cannot see it.

mod common;
mod http_models;
#[path = "../../cortex-model/tests/support/mod.rs"]
mod model_support;

use cortex_core::{Session, TurnOutcome};
use cortex_model::ModelProvider;
use cortex_model::openai::OpenAiWire;
use cortex_protocol::{EventKind, Mode, Role, StopRule};
use cortex_store::{SqliteStore, Store};
use http_models::{
    anthropic, anthropic_call_replies, chat_call_replies, openai, responses_call_replies,
};
use model_support::{Reply, Server};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A 1×1 PNG, base64.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn pixel_bytes() -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(PIXEL)
        .expect("base64")
}

/// The model's arguments: a PNG named as a text file, so only its bytes say
/// what it is.
const ARGS: &str = r#"{"path":"shots/screen.txt"}"#;

fn chat_replies() -> Vec<Reply> {
    chat_call_replies("read_file", ARGS, "One pixel.")
}

fn responses_replies() -> Vec<Reply> {
    responses_call_replies("read_file", ARGS)
}

fn anthropic_replies() -> Vec<Reply> {
    anthropic_call_replies("read_file", ARGS)
}

/// A repository holding the pixel, and an Agent session on it with `model`.
async fn session_with(
    model: Arc<dyn ModelProvider>,
) -> (tempfile::TempDir, Arc<dyn Store>, Session) {
    let repo = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(repo.path().join("shots")).expect("mkdir");
    std::fs::write(repo.path().join("shots/screen.txt"), pixel_bytes()).expect("write");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let config = common::config(
        repo.path(),
        store.clone(),
        model,
        Mode::Agent,
        StopRule::Code,
    );
    let session = Session::create(config).await.expect("session");
    (repo, store, session)
}

/// One turn against `model` (whose loopback server gives the replies) in
/// which the model reads the image; the body of the request after the call.
async fn second_request(
    model: impl FnOnce(&Server) -> Arc<dyn ModelProvider>,
    replies: Vec<Reply>,
) -> Value {
    let server = Server::start(replies).await;
    let (_repo, store, mut session) = session_with(model(&server)).await;
    let outcome = session
        .run_turn("what does the screenshot show?", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    let results = common::tool_results(&store, &session).await;
    let output = &results[0].1;
    assert_eq!(
        output,
        "`shots/screen.txt` is a 1×1 PNG image (1 KB); it is attached as an image"
    );
    session.close().await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "two rounds");
    requests[1].json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_completions_gets_the_read_image_after_the_result() {
    let body = second_request(|s| openai(s, OpenAiWire::Chat), chat_replies()).await;
    let messages = body["messages"].as_array().expect("messages");
    let tool = messages
        .iter()
        .position(|m| m["role"] == "tool")
        .expect("tool message");
    assert_eq!(messages[tool]["tool_call_id"], "call_1");
    let images = &messages[tool + 1];
    assert_eq!(images["role"], "user", "{images}");
    assert_eq!(
        images["content"][1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_gets_the_read_image_in_the_function_call_output() {
    let body = second_request(|s| openai(s, OpenAiWire::Responses), responses_replies()).await;
    let output = body["input"]
        .as_array()
        .expect("input")
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .expect("the result")
        .clone();
    assert_eq!(
        output["output"][1],
        json!({"type": "input_image", "image_url": format!("data:image/png;base64,{PIXEL}")})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_gets_the_read_image_inside_the_tool_result() {
    let body = second_request(anthropic, anthropic_replies()).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_takes_no_images_is_told_what_the_image_is() {
    let script = json!({"images": false, "responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "shots/screen.txt"}}]},
        {"text": "I cannot see it."}
    ]});
    let scripted = Arc::new(
        cortex_model::scripted::ScriptedProvider::from_json(&script.to_string()).expect("script"),
    );
    let (_repo, store, mut session) = session_with(scripted.clone()).await;
    session
        .run_turn("what does it show?", CancellationToken::new())
        .await
        .expect("turn");
    let results = common::tool_results(&store, &session).await;
    assert_eq!(
        results[0].1,
        "`shots/screen.txt` is a 1×1 PNG image (1 KB); this model does not take images, so \
         only this is said of it"
    );
    let second = &scripted.requests()[1];
    let tool = second
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .expect("the result");
    assert!(tool.attachments.is_empty(), "{:?}", tool.attachments);
    let events = store.events(session.id(), 0).await.expect("events");
    assert!(events.iter().all(|e| !matches!(
        &e.kind,
        EventKind::ToolResult { attachments, .. } if !attachments.is_empty()
    )));
    session.close().await;
}
