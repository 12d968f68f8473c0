//! OpenAI Chat Completions (and compatible servers: vLLM, llama.cpp server,
//! Ollama, OpenRouter), streaming.
//!
//! `request` builds the body, `sse` splits the byte stream into events,
//! `chunk` turns `chat.completion.chunk`s into [`crate::ModelEvent`]s and
//! `driver` sends, retries and ties them together.
//!
//! Retried (per [`RetryPolicy`], each announced by a `Retry` event) while
//! nothing else has been yielded: connection errors, 429 (honouring
//! `retry-after-ms` / `Retry-After`), 5xx, and a body that breaks off or
//! reports a server error before its first event. Other 4xx fail at once
//! with the start of the body. After the first event any failure ends the
//! stream. A server that ignores `"stream": true` and answers one JSON
//! completion is read as well.

mod chunk;
mod driver;
mod request;
mod sse;

use crate::{ModelError, ModelProvider, ModelRequest, ModelStream, RetryPolicy};
use std::time::Duration;

const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

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
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        OpenAiConfig {
            base_url: var("OPENAI_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            api_key: var("OPENAI_API_KEY"),
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(10),
        }
    }

    fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }
}

pub struct OpenAiProvider {
    config: OpenAiConfig,
    model: String,
    http: reqwest::Client,
}

impl OpenAiProvider {
    pub fn new(config: OpenAiConfig, model: impl Into<String>) -> Result<Self, ModelError> {
        let model = model.into();
        let url = config.endpoint();
        match reqwest::Url::parse(&url) {
            Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => {}
            _ => {
                return Err(ModelError::Config(format!(
                    "`{}` is not an http(s) base URL",
                    config.base_url
                )));
            }
        }
        // No overall timeout: a response streams for as long as the model
        // writes. Stop drops the stream, which aborts the request.
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("cortex-code/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(OpenAiProvider {
            config,
            model,
            http,
        })
    }
}

impl ModelProvider for OpenAiProvider {
    fn describe(&self) -> String {
        format!("openai:{}", self.model)
    }

    /// Streams one response. `request.model`, when set, overrides the
    /// provider's model for this request.
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let model = if request.model.trim().is_empty() {
            &self.model
        } else {
            &request.model
        };
        let body = match request::build_body(model, &request) {
            Ok(body) => body,
            Err(e) => {
                let error = ModelError::Protocol(format!("cannot encode the request: {e}"));
                return Box::pin(futures::stream::once(async move { Err(error) }));
            }
        };
        let target = driver::Target {
            url: self.config.endpoint(),
            api_key: self.config.api_key.clone(),
            retry: self.config.retry.clone(),
        };
        driver::drive(self.http.clone(), target, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(base_url: &str) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key: None,
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn endpoint_and_validation() {
        assert_eq!(
            config("http://localhost:8080/v1/").endpoint(),
            "http://localhost:8080/v1/chat/completions"
        );
        assert!(OpenAiProvider::new(config("http://localhost:1/v1"), "m").is_ok());
        assert!(matches!(
            OpenAiProvider::new(config("localhost:1"), "m"),
            Err(ModelError::Config(_))
        ));
        let provider = OpenAiProvider::new(config("http://localhost:1/v1"), "gpt-x");
        assert_eq!(
            provider.map(|p| p.describe()).ok().as_deref(),
            Some("openai:gpt-x")
        );
    }
}
