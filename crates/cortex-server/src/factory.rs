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
    pub model: Arc<dyn ModelProvider>,
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

/// Builds providers. May block (loading a model file); the server calls it
/// on a blocking thread.
pub trait ProviderFactory: Send + Sync + 'static {
    /// `Err` is a message for the client (an unknown provider, a missing
    /// key); the request fails with 422.
    fn providers(&self, model: ModelChoice<'_>) -> Result<Providers, String>;
}

impl<F> ProviderFactory for F
where
    F: Fn(ModelChoice<'_>) -> Result<Providers, String> + Send + Sync + 'static,
{
    fn providers(&self, model: ModelChoice<'_>) -> Result<Providers, String> {
        self(model)
    }
}
