//! OpenAI Chat Completions (and compatible servers: vLLM, llama.cpp server,
//! Ollama, OpenRouter), streaming.
//!
//! Two wire formats: Chat Completions (`request` builds the body, `chunk`
//! turns `chat.completion.chunk`s into [`crate::ModelEvent`]s) and the
//! Responses API (`responses`). Sending, retries, timeouts and SSE framing
//! are shared with the other providers (`crate::wire`).
//!
//! Retried (per [`RetryPolicy`], each announced by a `Retry` event) while
//! nothing else has been yielded: connection errors, 429 (honouring
//! `retry-after-ms` / `Retry-After`), 5xx, and a body that breaks off or
//! reports a server error before its first event. Other 4xx fail at once
//! with the start of the body. After the first event any failure ends the
//! stream. A server that ignores `"stream": true` and answers one JSON
//! completion is read as well.

mod chunk;
mod request;
mod responses;

use crate::wire::driver::{self, Target, check_key, check_url, client};
use crate::wire::status::ErrorContext;
use crate::{ModelError, ModelProvider, ModelRequest, ModelStream, RetryPolicy, Timeouts};

const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// Which OpenAI API to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenAiWire {
    /// `/chat/completions`: OpenAI and every compatible server.
    #[default]
    Chat,
    /// `/responses`: OpenAI's newer API, with reasoning items replayed.
    Responses,
}

/// How a Chat Completions request makes the reply call a tool
/// ([`crate::ToolChoice::Required`], [`crate::ToolChoice::Tool`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ForcedCall {
    /// `tool_choice`: `"required"`, or `{"type": "function", "function":
    /// {"name": …}}` for one tool, as OpenAI and vLLM read it.
    #[default]
    ToolChoice,
    /// No `tool_choice`; a `response_format` JSON schema of the call as text
    /// (`{"name": …, "arguments": {…}}`, one of the offered tools or the one
    /// named), which the server holds the reply to and the text-call recovery
    /// reads. llama.cpp's server enforces a schema but not `tool_choice` (a
    /// reply to `"required"` was prose). The tools stay as offered, so the
    /// server's prompt cache still serves the round.
    Schema,
}

/// How to reach an OpenAI(-compatible) server and what to ask of it.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com/v1`; `/chat/completions` or
    /// `/responses` is appended.
    pub base_url: String,
    /// Sent as a bearer token when set; `None` is allowed only for a
    /// server on this machine (llama.cpp's and Ollama's need none).
    pub api_key: Option<String>,
    /// Where `api_key` came from, named when the server rejects it.
    pub key_env: String,
    /// Which API to speak.
    pub wire: OpenAiWire,
    /// `false` for models that cannot call tools in parallel (from the
    /// model metadata); the request then says `parallel_tool_calls: false`.
    pub parallel_tool_calls: bool,
    /// How a request that must call a tool says so.
    pub forced_call: ForcedCall,
    /// Retries before the first event of a response.
    pub retry: RetryPolicy,
    /// Connect, first-byte and idle limits of each attempt.
    pub timeouts: Timeouts,
}

impl OpenAiConfig {
    /// `OPENAI_BASE_URL` (default `https://api.openai.com/v1`) and
    /// `OPENAI_API_KEY`; Chat Completions.
    pub fn from_env() -> Self {
        OpenAiConfig {
            base_url: crate::env_var("OPENAI_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            api_key: crate::env_var(DEFAULT_KEY_ENV),
            key_env: DEFAULT_KEY_ENV.to_owned(),
            wire: OpenAiWire::Chat,
            parallel_tool_calls: true,
            forced_call: ForcedCall::default(),
            retry: RetryPolicy::default(),
            timeouts: Timeouts::default(),
        }
    }

    fn endpoint(&self) -> String {
        let path = match self.wire {
            OpenAiWire::Chat => "chat/completions",
            OpenAiWire::Responses => "responses",
        };
        format!("{}/{path}", self.base_url.trim_end_matches('/'))
    }
}

pub(crate) fn chat_body(model: &str, request: &ModelRequest) -> Result<Vec<u8>, serde_json::Error> {
    request::build_body(model, request, true, ForcedCall::ToolChoice)
}

pub(crate) fn responses_body(
    model: &str,
    request: &ModelRequest,
) -> Result<Vec<u8>, serde_json::Error> {
    responses::build_body(model, request, true)
}

/// An OpenAI(-compatible) server as a [`ModelProvider`] (see the module doc
/// for what is retried).
pub struct OpenAiProvider {
    config: OpenAiConfig,
    model: String,
    http: reqwest::Client,
}

impl OpenAiProvider {
    /// A provider for `model` (overridable per request). Fails with
    /// [`ModelError::Config`] when the base URL is not http(s), there is no
    /// API key for a server that is not on this machine, or the HTTP client
    /// cannot be built; nothing is sent yet. A key the server rejects is
    /// [`ModelError::Auth`], on the first request.
    pub fn new(config: OpenAiConfig, model: impl Into<String>) -> Result<Self, ModelError> {
        check_url(&config.endpoint(), &config.base_url)?;
        check_key(
            config.api_key.as_deref(),
            &config.key_env,
            &config.base_url,
            "OpenAI",
            "openai",
            "OPENAI_BASE_URL",
        )?;
        let http = client(&config.timeouts)?;
        Ok(OpenAiProvider {
            config,
            model: model.into(),
            http,
        })
    }

    fn prefix(&self) -> &'static str {
        match self.config.wire {
            OpenAiWire::Chat => "openai",
            OpenAiWire::Responses => "openai-responses",
        }
    }
}

impl ModelProvider for OpenAiProvider {
    /// Its wire format takes images in a user's message.
    fn takes_images(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("{}:{}", self.prefix(), self.model)
    }

    /// Streams one response. `request.model`, when set, overrides the
    /// provider's model for this request.
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let model = if request.model.trim().is_empty() {
            &self.model
        } else {
            &request.model
        };
        let body = match self.config.wire {
            OpenAiWire::Chat => request::build_body(
                model,
                &request,
                self.config.parallel_tool_calls,
                self.config.forced_call,
            ),
            OpenAiWire::Responses => {
                responses::build_body(model, &request, self.config.parallel_tool_calls)
            }
        };
        let body = match body {
            Ok(body) => body,
            Err(e) => {
                let error = ModelError::Protocol(format!("cannot encode the request: {e}"));
                return Box::pin(futures::stream::once(async move { Err(error) }));
            }
        };
        let headers = self
            .config
            .api_key
            .iter()
            .map(|key| ("authorization", format!("Bearer {key}")))
            .collect();
        let target = Target {
            url: self.config.endpoint(),
            headers,
            retry: self.config.retry.clone(),
            timeouts: self.config.timeouts,
            errors: ErrorContext {
                describe: format!("{}:{model}", self.prefix()),
                key_env: self.config.key_env.clone(),
            },
        };
        match self.config.wire {
            OpenAiWire::Chat => {
                driver::drive(self.http.clone(), target, body, chunk::ChunkParser::default)
            }
            OpenAiWire::Responses => driver::drive(
                self.http.clone(),
                target,
                body,
                responses::EventParser::default,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(base_url: &str) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key: None,
            key_env: "OPENAI_API_KEY".into(),
            wire: OpenAiWire::Chat,
            parallel_tool_calls: true,
            forced_call: ForcedCall::default(),
            retry: RetryPolicy::default(),
            timeouts: Timeouts::default(),
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

    #[test]
    fn a_hosted_server_needs_a_key_and_one_on_this_machine_does_not() {
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://[::1]:1/v1",
            "http://localhost/v1",
        ] {
            assert!(OpenAiProvider::new(config(local), "m").is_ok(), "{local}");
        }
        let mut hosted = config(DEFAULT_BASE_URL);
        hosted.key_env = "MY_OPENAI_KEY".into();
        assert!(matches!(
            OpenAiProvider::new(hosted.clone(), "m"),
            Err(ModelError::Config(m)) if m.contains("MY_OPENAI_KEY") && m.contains("[openai]")
        ));
        hosted.api_key = Some(String::new());
        assert!(OpenAiProvider::new(hosted.clone(), "m").is_err());
        hosted.api_key = Some("sk-test".into());
        assert!(OpenAiProvider::new(hosted, "m").is_ok());
    }
}
