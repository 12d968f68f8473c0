//! Flags that several commands take, declared once and flattened into each
//! (`#[command(flatten)]`), so that a flag reads, parses and defaults the
//! same wherever it appears: `--server` (every command that drives the
//! session API), `--model` with it (the commands that reopen a stored
//! session), and `--sandbox`/`--network`/`--guest` (the commands that start
//! guests of their own).

use crate::guests::GuestChoice;
use crate::local_server::{self, LocalServer};
use clap::Args;
use cortex_client::Client;
use cortex_protocol::{NetworkPolicy, SandboxPolicy};

/// `--server`: a running `cortex serve` instead of an in-process server.
#[derive(Args, Clone, Debug, Default)]
pub struct ServerFlag {
    /// Drive a running `cortex serve` (http://HOST:PORT or unix:PATH; token
    /// in CORTEX_TOKEN) instead of an in-process server on this machine's
    /// store.
    #[arg(long)]
    pub server: Option<String>,
}

impl ServerFlag {
    /// The client of `--server`, else of an in-process server started with
    /// `model` (the default of new sessions, and the fallback of reopened
    /// ones) and tools run under `guest`; that server is returned to be
    /// stopped.
    pub async fn connect(
        &self,
        model: Option<String>,
        guest: &GuestChoice,
    ) -> anyhow::Result<(Client, Option<LocalServer>)> {
        local_server::connect(self.server.as_deref(), model, guest).await
    }
}

/// `--model` and `--server` of a command that acts on a stored session.
#[derive(Args, Clone, Debug, Default)]
pub struct ReopenFlags {
    /// The model that reopens the session when its recorded one cannot be
    /// rebuilt from its name (`PROVIDER:NAME`, e.g. a scripted model).
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub server: ServerFlag,
}

impl ReopenFlags {
    /// [`ServerFlag::connect`] with `--model`.
    pub async fn connect(
        &self,
        guest: &GuestChoice,
    ) -> anyhow::Result<(Client, Option<LocalServer>)> {
        self.server.connect(self.model.clone(), guest).await
    }
}

/// `--sandbox`, `--network` and `--guest`: the guests a command starts
/// (its sessions', or MCP servers' for `mcp list`).
#[derive(Args, Clone, Debug)]
pub struct GuestFlags {
    /// What the guest may change: read-only, workspace-write (the workspace
    /// only), or full-access (no isolation: the guest is an ordinary process).
    #[arg(long, default_value = "workspace-write")]
    pub sandbox: SandboxPolicy,
    /// Whether the guest reaches the network.
    #[arg(long, default_value = "off")]
    pub network: NetworkPolicy,
    /// Where tools run: local (the sandbox), process (no isolation),
    /// remote:HOST:PORT (token in CORTEX_GUEST_TOKEN) or docker:IMAGE. With
    /// --server, the server's own choice applies.
    #[arg(long, default_value = "local")]
    pub guest: GuestChoice,
}
