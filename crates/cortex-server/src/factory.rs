//! How the server gets a model provider and a guest provider for a session.
//!
//! The binary that embeds the server knows how to build providers (the CLI
//! parses `--model`, loads local models, finds the guest program); the
//! server only asks. This keeps `cortex-server` free of the CLI and of
//! llama.cpp.

use cortex_model::ModelProvider;
use cortex_runtime::GuestProvider;
use std::sync::Arc;

/// What a session runs with.
#[derive(Clone)]
pub struct Providers {
    /// The session's model.
    pub model: Arc<dyn ModelProvider>,
    /// Starts the session's guests.
    pub guests: Arc<dyn GuestProvider>,
    /// The guest's whole environment, already built from the allow-list.
    pub guest_env: Vec<(String, String)>,
}

/// Which model a session asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice<'a> {
    /// A new session: the client's `PROVIDER:NAME`, or `None` for the
    /// server's default.
    New(Option<&'a str>),
    /// A stored session being reopened: its recorded model description
    /// (`ModelProvider::describe`).
    Resume(&'a str),
}

/// Why the factory could not build what a session asked for (an unknown
/// provider, a missing key, a model file that does not load). The server
/// answers the request with 422 and this message; the source, when there is
/// one, stays available to whoever logs it.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl ProviderError {
    /// A refusal with `message` for the client and the error behind it.
    pub fn with_source(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> ProviderError {
        ProviderError {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// What the client is told.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<String> for ProviderError {
    fn from(message: String) -> ProviderError {
        ProviderError {
            message,
            source: None,
        }
    }
}

impl From<&str> for ProviderError {
    fn from(message: &str) -> ProviderError {
        ProviderError::from(message.to_owned())
    }
}

/// Builds providers. May block (loading a model file); the server calls it
/// on a blocking thread.
pub trait ProviderFactory: Send + Sync + 'static {
    /// The providers a session runs with.
    ///
    /// **When:** once per session created (`ModelChoice::New`) or reopened
    /// from the store (`ModelChoice::Resume`, with the description the
    /// session's model recorded), on a blocking thread, before the session
    /// goes live; calls for different sessions may run at the same time.
    ///
    /// **May assume:** nothing about `model`: a `New` name comes from a
    /// client as it was sent, and a `Resume` description from the store.
    ///
    /// **Guarantees:** `Ok` is what the session runs with for as long as it
    /// stays live; the server keeps nothing else of this call.
    ///
    /// **Errors:** `Err` fails the request with 422 and the error's message
    /// (shown to the client, so no secret belongs in it); the session is not
    /// created or not reopened.
    ///
    /// **Cancellation:** none: a request dropped meanwhile (the client went
    /// away) lets the call run to its end, and its result is dropped.
    fn providers(&self, model: ModelChoice<'_>) -> Result<Providers, ProviderError>;
}

impl<F> ProviderFactory for F
where
    F: Fn(ModelChoice<'_>) -> Result<Providers, ProviderError> + Send + Sync + 'static,
{
    fn providers(&self, model: ModelChoice<'_>) -> Result<Providers, ProviderError> {
        self(model)
    }
}
