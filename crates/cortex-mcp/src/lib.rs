//! The MCP client: Model Context Protocol servers as tools of a session.
//!
//! Servers come from the user's `config.toml` (`[mcp_servers.NAME]`, the
//! same shape as Codex's; see [`config`]) or from a client such as an editor
//! ([`ServerSpec::from_client`]). A stdio server's process is started by a
//! [`Launcher`]: the session's guest (the default, under the session's
//! sandbox policy, like `bash`), or the host for a server configured with
//! `sandbox = "host"`. Streamable HTTP servers are reached from the harness.
//!
//! Each tool is offered as `mcp__SERVER__TOOL` with the server's own JSON
//! Schema, compiled once and used to check every call's arguments (a tool
//! whose name or schema is invalid is dropped with a warning, not the
//! server). Which modes offer a server's tools is [`cortex_protocol::Mode::offers_mcp`]'s
//! decision alone. A server that fails to start, hangs or dies is reported as
//! a [`Notice::Failed`] and its tools disappear; the session goes on.
//!
//! The protocol itself is the official SDK's (`rmcp`).
//!
//! Layer: beside `cortex-tools`/`cortex-runtime`; depends only on
//! `cortex-protocol` of ours. `cortex-core` provides the guest launcher.

#![warn(missing_docs)]

pub mod channel;
pub mod config;
pub mod host;
pub mod hub;
pub mod output;
pub mod server;
pub mod tool;

pub use channel::{LaunchError, Launcher, ProcessChannel};
pub use config::{
    ConfigError, HttpSpec, Placement, ServerConfig, ServerSpec, StdioSpec, TransportSpec,
    specs_from_config,
};
pub use host::{HostLauncher, pipe_process};
pub use hub::{Called, Launchers, Lookup, McpHub, Notice, ServerState, ServerStatus};
pub use output::{McpImage, McpOutput};
pub use server::{CallError, Connection, ServerError};
pub use tool::{McpTool, ToolRejected, split_qualified};
