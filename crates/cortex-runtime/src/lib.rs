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

#![warn(missing_docs)]

mod channel;
mod client;
mod docker;
mod env;
mod error;
mod in_process;
mod process;
mod remote;
mod sandbox;

pub use client::{CallHandle, Guest, Liveness, StopHandle};
pub use cortex_sandbox::{Limits, Quota, Quotas, Report, nested};
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
    /// Whether the guest may reach the network. Enforced by the providers
    /// that isolate (`local` leaves the network namespace empty, `docker`
    /// gives the container none); `process` and `in-process` cannot and
    /// ignore it; a `remote` agent has whatever it was started with.
    pub network: NetworkPolicy,
}

/// A way to run the guest agent for a workspace: one implementation per
/// place the agent can live (a sandbox, a plain child process, a container,
/// another machine, a task of this process).
///
/// The harness holds one provider for its whole life and calls
/// [`GuestProvider::start`] whenever a session needs a guest: before its
/// turn first asks the model anything, and again after a guest died (the
/// session then attaches a fresh one). Implementations keep no per-guest state;
/// everything about one guest lives in the [`Guest`] they return, so
/// several sessions may start guests concurrently.
#[async_trait::async_trait]
pub trait GuestProvider: Send + Sync {
    /// Short constant name for `runtime.*` events and error messages, e.g.
    /// `process`, `local`, `docker`.
    fn name(&self) -> &'static str;

    /// Starts a guest for `spec`, connects to it, applies the spec's
    /// capabilities (`writable`, `allow_bash`) and returns it once that
    /// request has been answered: the guest is then ready for calls.
    ///
    /// May assume nothing of the workspace: every provider but `remote`
    /// (whose workspace is the agent's own `--root`) checks it is an
    /// existing folder. A failure to get a ready guest (no such folder,
    /// cannot spawn, no Docker engine, the remote agent refuses the token,
    /// the agent exits or does not answer the capabilities request) is
    /// nearly always [`RuntimeError::Start`], naming what was started and,
    /// for a local child, quoting its last lines on stderr. The exceptions:
    /// a workspace path that cannot be canonicalised is
    /// [`RuntimeError::Io`], and `in-process` passes the capabilities
    /// request's own error on. Whatever was started for a failed guest has
    /// been closed by the time the error returns.
    ///
    /// Cancellation: dropping the future part-way kills a child it had
    /// spawned (the child is `kill_on_drop`, and a dropped [`Guest`] kills
    /// its process) and closes a remote connection. `docker` is the rough
    /// edge: a container that was created but not yet started (cancelled,
    /// or `start` failed between the two) is left behind, since
    /// `auto_remove` only removes a container that ran.
    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError>;

    /// This provider as one principal of a server uses it: whatever it
    /// keeps between guests (the `local` sandbox's homes, where tool caches
    /// and dotfiles outlive a session) is then that principal's alone, so
    /// two principals working on the same repository never share it.
    ///
    /// `None` (the default): the provider keeps nothing between guests, or
    /// nothing of one principal's reaches another's guests; use it as is.
    fn for_principal(&self, _principal: &str) -> Option<std::sync::Arc<dyn GuestProvider>> {
        None
    }

    /// Where a guest started for `spec` sees its workspace: what a path
    /// handed to a program in the guest (a language server's document
    /// URIs) must name. The default, the same path as the harness's, holds
    /// for every provider that mounts or uses the workspace where it is;
    /// `None` when the provider cannot know (a remote agent's own root).
    fn workspace_in_guest(&self, spec: &GuestSpec) -> Option<std::path::PathBuf> {
        Some(spec.workspace.clone())
    }
}
