//! HTTP providers for the tests whose model talks to a loopback server
//! (`model_support`'s, which records each request body): OpenAI (either
//! wire) and Anthropic with no retries and a short connect timeout, and
//! their streamed replies.

#![allow(dead_code)]

use crate::model_support::{Reply, Server};
use cortex_model::anthropic::{AnthropicConfig, AnthropicProvider};
use cortex_model::openai::{OpenAiConfig, OpenAiProvider, OpenAiWire};
use cortex_model::{ModelProvider, RetryPolicy, Timeouts};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

pub fn policy() -> RetryPolicy {
    RetryPolicy {
        max_retries: 0,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_secs(1),
    }
}

pub fn timeouts() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(2),
        ..Timeouts::default()
    }
}

pub fn openai(server: &Server, wire: OpenAiWire) -> Arc<dyn ModelProvider> {
    let config = OpenAiConfig {
        base_url: server.base_url(),
        api_key: Some("sk-test".into()),
        key_env: "OPENAI_API_KEY".into(),
        wire,
        parallel_tool_calls: true,
        forced_call: Default::default(),
        retry: policy(),
        timeouts: timeouts(),
    };
    Arc::new(OpenAiProvider::new(config, "gpt-4.1").expect("provider"))
}

pub fn anthropic(server: &Server) -> Arc<dyn ModelProvider> {
    let config = AnthropicConfig {
        base_url: server.root_url(),
        api_key: Some("sk-ant-test".into()),
        key_env: "ANTHROPIC_API_KEY".into(),
        max_tokens: 1024,
        thinking_budget: None,
        prompt_caching: false,
        parallel_tool_calls: true,
        retry: policy(),
        timeouts: timeouts(),
    };
    Arc::new(AnthropicProvider::new(config, "claude-sonnet-4-20250514").expect("provider"))
}

pub fn sse(events: &[(&str, Value)]) -> Reply {
    let mut body = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    Reply::Sse(vec![body.into_bytes()])
}

pub fn fixture(path: &str) -> Reply {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cortex-model/tests/fixtures")
        .join(path);
    Reply::Sse(vec![std::fs::read(full).expect("fixture")])
}

/// A Chat Completions round calling `name` with `arguments`, then `answer`.
pub fn chat_call_replies(name: &str, arguments: &str, answer: &str) -> Vec<Reply> {
    let call = json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
        {"index": 0, "id": "call_1", "type": "function",
         "function": {"name": name, "arguments": arguments}}]}}]});
    let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
    let text = json!({"choices": [{"index": 0, "delta": {"content": answer}}]});
    let stop = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    let round = |values: [Value; 2]| {
        let mut body: String = values.iter().map(|v| format!("data: {v}\n\n")).collect();
        body.push_str("data: [DONE]\n\n");
        Reply::Sse(vec![body.into_bytes()])
    };
    vec![round([call, end]), round([text, stop])]
}

/// A Responses round calling `name` with `arguments`, then a text answer.
pub fn responses_call_replies(name: &str, arguments: &str) -> Vec<Reply> {
    let item = json!({"id": "fc_1", "type": "function_call", "status": "completed",
        "arguments": arguments, "call_id": "call_1", "name": name});
    vec![
        sse(&[
            (
                "response.output_item.added",
                json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
            ),
            (
                "response.output_item.done",
                json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            ),
            (
                "response.completed",
                json!({"type": "response.completed",
                       "response": {"status": "completed", "usage": null}}),
            ),
        ]),
        fixture("responses/text.sse"),
    ]
}

/// An Anthropic round calling `name` with `arguments`, then a text answer.
pub fn anthropic_call_replies(name: &str, arguments: &str) -> Vec<Reply> {
    vec![
        sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                    "role": "assistant", "content": [], "model": "claude", "stop_reason": null,
                    "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block":
                    {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": arguments}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                    "usage": {"output_tokens": 5}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]),
        fixture("anthropic/text.sse"),
    ]
}
