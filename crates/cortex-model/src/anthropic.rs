//! Anthropic Messages API, streaming.
//!
//! `request` builds the body (history as content blocks, `cache_control`
//! breakpoints, extended thinking), `events` turns the SSE events into
//! [`crate::ModelEvent`]s; sending, retries (429, 5xx and 529 `overloaded`),
//! timeouts and SSE framing are shared with the other providers
//! (`crate::wire`).

mod events;
mod request;

use crate::wire::driver::{self, Target, check_key, check_url, client};
use crate::wire::status::ErrorContext;
use crate::{ModelError, ModelProvider, ModelRequest, ModelStream, RetryPolicy, Timeouts};

const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const DEFAULT_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// The API version this module speaks.
const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; used when nothing better is known.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// How to reach the Anthropic API and what to ask of it.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// e.g. `https://api.anthropic.com`; `/v1/messages` is appended.
    pub base_url: String,
    /// Sent as `x-api-key`; required unless the server is on this machine
    /// ([`AnthropicProvider::new`] refuses `None` otherwise).
    pub api_key: Option<String>,
    /// Where `api_key` came from, named when the server rejects it.
    pub key_env: String,
    /// The answer's token limit (thinking included).
    pub max_tokens: u32,
    /// Extended thinking with this budget of tokens, when set.
    pub thinking_budget: Option<u32>,
    /// `cache_control` breakpoints on the system prompt, the tool list and
    /// the last message, so each round re-reads the previous one's prefix.
    pub prompt_caching: bool,
    /// `false` for models that cannot call tools in parallel: the request
    /// then sets `disable_parallel_tool_use`.
    pub parallel_tool_calls: bool,
    /// Retries before the first event of a response.
    pub retry: RetryPolicy,
    /// Connect, first-byte and idle limits of each attempt.
    pub timeouts: Timeouts,
}

impl AnthropicConfig {
    /// `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`) and
    /// `ANTHROPIC_API_KEY`; caching on, thinking off.
    pub fn from_env() -> Self {
        AnthropicConfig {
            base_url: crate::env_var("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            api_key: crate::env_var(DEFAULT_KEY_ENV),
            key_env: DEFAULT_KEY_ENV.to_owned(),
            max_tokens: DEFAULT_MAX_TOKENS,
            thinking_budget: None,
            prompt_caching: true,
            parallel_tool_calls: true,
            retry: RetryPolicy::default(),
            timeouts: Timeouts::default(),
        }
    }

    fn endpoint(&self) -> String {
        format!("{}/v1/messages", self.base_url.trim_end_matches('/'))
    }
}

/// The body with [`AnthropicConfig::from_env`]'s options.
pub(crate) fn default_body(
    model: &str,
    request: &ModelRequest,
) -> Result<Vec<u8>, serde_json::Error> {
    let options = request::Options {
        max_tokens: DEFAULT_MAX_TOKENS,
        thinking_budget: None,
        cache: true,
        parallel_tool_calls: true,
    };
    request::build_body(model, request, &options)
}

/// The Anthropic Messages API as a [`ModelProvider`] (see the module doc for
/// what is retried).
pub struct AnthropicProvider {
    config: AnthropicConfig,
    model: String,
    http: reqwest::Client,
}

impl AnthropicProvider {
    /// A provider for `model` (overridable per request). Fails with
    /// [`ModelError::Config`] when the base URL is not http(s), there is no
    /// API key, or the HTTP client cannot be built; nothing is sent yet.
    pub fn new(config: AnthropicConfig, model: impl Into<String>) -> Result<Self, ModelError> {
        check_url(&config.endpoint(), &config.base_url)?;
        check_key(
            config.api_key.as_deref(),
            &config.key_env,
            &config.base_url,
            "Anthropic",
            "anthropic",
            "ANTHROPIC_BASE_URL",
        )?;
        let http = client(&config.timeouts)?;
        Ok(AnthropicProvider {
            config,
            model: model.into(),
            http,
        })
    }
}

impl ModelProvider for AnthropicProvider {
    /// Its wire format takes images in a user's message.
    fn takes_images(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("anthropic:{}", self.model)
    }

    /// Streams one response. `request.model`, when set, overrides the
    /// provider's model for this request.
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let model = if request.model.trim().is_empty() {
            &self.model
        } else {
            &request.model
        };
        let options = request::Options {
            max_tokens: self.config.max_tokens,
            thinking_budget: self.config.thinking_budget,
            cache: self.config.prompt_caching,
            parallel_tool_calls: self.config.parallel_tool_calls,
        };
        let body = match request::build_body(model, &request, &options) {
            Ok(body) => body,
            Err(e) => {
                let error = ModelError::Protocol(format!("cannot encode the request: {e}"));
                return Box::pin(futures::stream::once(async move { Err(error) }));
            }
        };
        let mut headers = vec![("anthropic-version", API_VERSION.to_owned())];
        if let Some(key) = &self.config.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        let target = Target {
            url: self.config.endpoint(),
            headers,
            retry: self.config.retry.clone(),
            timeouts: self.config.timeouts,
            errors: ErrorContext {
                describe: format!("anthropic:{model}"),
                key_env: self.config.key_env.clone(),
            },
        };
        driver::drive(
            self.http.clone(),
            target,
            body,
            events::EventParser::default,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_key_and_validation() {
        let mut config = AnthropicConfig::from_env();
        config.base_url = "http://localhost:1/".into();
        config.api_key = Some("k".into());
        assert_eq!(config.endpoint(), "http://localhost:1/v1/messages");
        let provider = AnthropicProvider::new(config.clone(), "claude-x");
        assert_eq!(
            provider.map(|p| p.describe()).ok().as_deref(),
            Some("anthropic:claude-x")
        );
        config.api_key = None;
        config.key_env = "MY_KEY".into();
        // A server on this machine needs no key; a hosted one does, and the
        // error names the variable before anything is sent.
        assert!(AnthropicProvider::new(config.clone(), "m").is_ok());
        config.base_url = "https://api.anthropic.com".into();
        assert!(matches!(
            AnthropicProvider::new(config.clone(), "m"),
            Err(ModelError::Config(m)) if m.contains("MY_KEY") && m.contains("api_key_env")
        ));
        config.api_key = Some("  ".into());
        assert!(matches!(
            AnthropicProvider::new(config.clone(), "m"),
            Err(ModelError::Config(_))
        ));
        config.api_key = Some("k".into());
        config.base_url = "localhost:1".into();
        assert!(matches!(
            AnthropicProvider::new(config, "m"),
            Err(ModelError::Config(_))
        ));
    }
}
