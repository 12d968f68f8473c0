//! Embedded local model provider: GGUF models run in-process by llama.cpp,
//! so `cortex exec` works offline without an API key.
//!
//! - [`template`]: the model's own chat template (minijinja, HF-compatible).
//! - [`parse`]: tool calls read from the reply (tagged, fenced, bare JSON).
//! - [`grammar`]: GBNF built from the tool schemas, switched on once a reply
//!   starts a call.
//! - `engine`: the inference thread, streaming and KV-cache prefix reuse.
//! - [`LocalProvider`]: the [`cortex_model::ModelProvider`].
//!
//! Get a model with `scripts/fetch-default-model [qwen2.5-coder-1.5b |
//! qwen2.5-coder-0.5b | smollm2-135m]`.

mod engine;
mod error;
pub mod grammar;
mod models;
pub mod parse;
mod provider;
pub mod template;

pub use engine::RoundStats;
pub use error::LocalError;
pub use models::{DEFAULT_MODEL, KNOWN_MODELS, models_dir, resolve_model};
pub use provider::{LocalOptions, LocalProvider};
