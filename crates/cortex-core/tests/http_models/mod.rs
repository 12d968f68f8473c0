//! HTTP providers for the tests whose model talks to a loopback server
//! (`model_support`'s, which records each request body): OpenAI (either
//! wire) and Anthropic with no retries and a short connect timeout, and
//! their streamed replies.

#![allow(dead_code)]

use crate::model_support::{Reply, Server};
use cortex_model::anthropic::{AnthropicConfig, AnthropicProvider};
use cortex_model::openai::{OpenAiConfig, OpenAiProvider, OpenAiWire};
use cortex_model::{ModelProvider, RetryPolicy, Timeouts};
use serde_json::Value;
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
