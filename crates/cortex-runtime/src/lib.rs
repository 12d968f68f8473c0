//! Guest providers: start a guest, attach to it, talk to it.
//!
//! A [`GuestProvider`] starts a guest agent for a workspace and returns a
//! connected [`Guest`]. The [`Guest`] multiplexes requests over the agent's
//! JSON-lines protocol: each call gets its own stream of replies (output
//! deltas, then one result); a guest that dies mid-call closes that stream
//! without a result, which the caller turns into a tool error.
//!
//! Providers here: `local` (the agent inside the local sandbox of
//! `cortex-sandbox`: the default), `process` (the agent as an ordinary child
//! process in the workspace folder, no isolation), `remote` (an agent
//! listening on TCP elsewhere, behind a bearer token), `docker` (the agent in
//! a container through the Docker Engine API) and `in-process` (the agent on
//! a task over an in-memory pipe, for tests and benchmarks). Each provider is
//! one file; a new one (kubernetes: a pod per session) implements
//! [`GuestProvider::start`] and nothing else.

mod channel;
mod client;
mod docker;
mod env;
mod error;
mod in_process;
mod process;
mod remote;
mod sandbox;

pub use client::{CallHandle, Guest, Liveness};
pub use cortex_sandbox::{Limits, Report};
pub use docker::DockerProvider;
pub use env::{BASE_ENV_ALLOWLIST, allowed_env};
pub use error::RuntimeError;
pub use in_process::InProcessProvider;
pub use process::ProcessProvider;
pub use remote::RemoteProvider;
pub use sandbox::SandboxProvider;

use cortex_protocol::{NetworkPolicy, SandboxPolicy};
use std::path::PathBuf;

/// What to start.
#[derive(Debug, Clone)]
pub struct GuestSpec {
    /// The workspace root, an existing folder.
    pub workspace: PathBuf,
    /// May the guest change the workspace (write_file, edit_file)?
    pub writable: bool,
    /// May it run commands?
    pub allow_bash: bool,
    /// The guest's whole environment (see [`allowed_env`]).
    pub env: Vec<(String, String)>,
    /// The session's sandbox policy; providers without isolation of their
    /// own (process, in-process) only honour it through `writable`.
    pub policy: SandboxPolicy,
    pub network: NetworkPolicy,
}

#[async_trait::async_trait]
pub trait GuestProvider: Send + Sync {
    /// Short name for `runtime.*` events, e.g. `process`.
    fn name(&self) -> &'static str;
    /// Start a guest, connect, apply the spec's capabilities and check it
    /// answers. Returns only when the guest is ready for calls.
    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError>;
}
