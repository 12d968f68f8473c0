//! Model providers and their wire formats.
//!
//! A provider turns a [`ModelRequest`] (provider-neutral history, system
//! prompt and tool catalog) into a [`ModelStream`] of [`ModelEvent`]s. The
//! stream is lazy and owns its connection: dropping it aborts the request,
//! which is how Stop cancels a model call. Providers retry connection errors,
//! 429 and 5xx *before* the first event of a response; a stream cut mid-way is
//! reported as [`ModelError::Stream`] and the turn loop decides (it may retry
//! the whole round, since no tool of that round has run yet).

pub mod anthropic;
mod assemble;
pub mod encode;
mod error;
pub mod metadata;
pub mod meter;
pub mod openai;
mod retry;
pub mod scripted;
mod timeouts;
mod wire;

pub use assemble::{Assembled, Assembler};
pub use error::ModelError;
pub use metadata::{ModelInfo, ModelOverride, Prices, TokenCounts};
pub use retry::RetryPolicy;
pub use timeouts::Timeouts;

use cortex_protocol::{Message, ProviderItem, ToolSpec};
use futures::Stream;
use std::pin::Pin;

/// One request to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub tool_choice: ToolChoice,
}

/// Whether the reply must call a tool (ignored when no tools are offered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The reply must call one of the offered tools (OpenAI `"required"`,
    /// Anthropic `"any"`, a grammar for the local model).
    Required,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    Other(String),
}

/// What a provider streams back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelEvent {
    TextDelta(String),
    /// A tool call begins; `index` identifies it within this response.
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallDelta {
        index: usize,
        arguments: String,
    },
    ToolCallEnd {
        index: usize,
    },
    /// `input_tokens` counts the whole prompt, cached parts included.
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// How much of the prompt was read from, and written to, the provider's
    /// prompt cache (both are part of `Usage::input_tokens`).
    CacheUsage {
        read_tokens: u64,
        write_tokens: u64,
    },
    /// Extended thinking / reasoning summary text: shown apart from the
    /// answer (collapsible), never part of the assistant's text.
    ThinkingDelta(String),
    /// An opaque item the provider wants back verbatim with this assistant
    /// message in later requests (see [`cortex_protocol::ProviderItem`]).
    ProviderItem(ProviderItem),
    /// The provider is about to retry after a retryable failure that happened
    /// before any event of the response.
    Retry {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    /// The provider has read `done` of the prompt's `total` tokens. Sent
    /// only by providers that read long prompts slowly enough for it to
    /// matter (the embedded model), before the response's first token;
    /// informational, so a consumer may ignore it.
    PromptProgress {
        done: u64,
        total: u64,
    },
    Finish(FinishReason),
}

pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send>>;

pub trait ModelProvider: Send + Sync {
    /// `provider:model`, for events and logs.
    fn describe(&self) -> String;
    fn stream(&self, request: ModelRequest) -> ModelStream;
    /// What is known of the model (context window, prices), if anything.
    fn info(&self) -> Option<ModelInfo> {
        None
    }
}

/// A non-empty, trimmed environment variable.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}
