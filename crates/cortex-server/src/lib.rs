//! The session API: JSON over HTTP and the timeline over Server-Sent Events,
//! all under `/v1`, for every client (`cortex exec`, the TUI, web and IDE
//! clients).
//!
//! - Each live session is owned by one actor task ([`actor`]); a turn runs on
//!   its own task, so the API stays responsive and a second turn is a 409.
//! - Sessions belong to the principal whose bearer token created them;
//!   anyone else gets the same 404 as for a session that does not exist.
//! - Events are persisted by the core before they are broadcast; an event
//!   stream reads the store, then the broadcast, and refills any gap from the
//!   store, so no subscriber can block a turn or another subscriber.
//! - Model and guest providers come from a [`ProviderFactory`] the embedding
//!   binary passes in: this crate never depends on the CLI.
//! - The bodies are `cortex-api`'s types, which the client uses too; the
//!   OpenAPI document ([`ApiDoc`]) is generated from them and the handlers.

#![warn(missing_docs)]

mod actor;
mod auth;
mod error;
mod extract;
mod factory;
mod goal_driver;
mod listen;
mod openapi;
mod routes;
mod serve;
mod shares;
mod state;
pub mod tokens;
mod web;

pub use auth::Principal;
pub use error::ApiError;
pub use factory::{ModelChoice, ProviderError, ProviderFactory, Providers};
pub use listen::ConnectionLimits;
pub use openapi::ApiDoc;
pub use serve::{router, serve_tcp, serve_unix};
pub use state::{AppState, ServerConfig};
pub use tokens::Tokens;
