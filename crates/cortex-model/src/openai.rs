//! OpenAI Chat Completions (and compatible servers: vLLM, llama.cpp server,
//! Ollama, OpenRouter), streaming.

use crate::{ModelError, ModelProvider, ModelRequest, ModelStream, RetryPolicy};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub base_url: String,
    pub api_key: Option<String>,
    pub retry: RetryPolicy,
    pub connect_timeout: Duration,
}

impl OpenAiConfig {
    /// `OPENAI_BASE_URL` (default `https://api.openai.com/v1`) and
    /// `OPENAI_API_KEY`.
    pub fn from_env() -> Self {
        unimplemented!()
    }
}

pub struct OpenAiProvider {
    config: OpenAiConfig,
    model: String,
    http: reqwest::Client,
}

impl OpenAiProvider {
    pub fn new(config: OpenAiConfig, model: impl Into<String>) -> Result<Self, ModelError> {
        let _ = (config, model);
        unimplemented!()
    }
}

impl ModelProvider for OpenAiProvider {
    fn describe(&self) -> String {
        format!("openai:{}", self.model)
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let _ = (request, &self.config, &self.http);
        unimplemented!()
    }
}
