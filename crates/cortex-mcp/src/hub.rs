//! A session's MCP servers: started together, offered by mode, called by
//! qualified name. A server that fails to start, hangs (a call passes its
//! timeout) or dies becomes `Failed` with a reason; its tools are no longer
//! offered and calls to them are tool errors, while the others go on.
//!
//! The hub reports what happened as [`Notice`]s for the caller to record
//! (`mcp.server_ready`, `mcp.server_failed`); it records nothing itself.

use crate::channel::{LaunchError, Launcher, ProcessChannel};
use crate::config::{Placement, ServerSpec, StdioSpec, TransportSpec};
use crate::output::McpOutput;
use crate::server::{CallError, Connection};
use crate::tool::{McpTool, split_qualified};
use cortex_protocol::{Mode, ToolSpec};
use futures::future::{BoxFuture, join_all};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

/// Something the caller should record on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The server started; its tools are offered.
    Ready {
        /// The server.
        name: String,
        /// Qualified names of the tools offered.
        tools: Vec<String>,
        /// One line per tool that is not offered, and why.
        rejected: Vec<String>,
        /// How long it took to start, in milliseconds.
        ms: f64,
    },
    /// The server did not start, or stopped; its tools are gone.
    Failed {
        /// The server.
        name: String,
        /// Why, in one line.
        reason: String,
    },
}

/// Where stdio servers start: the session's guest (absent while none is
/// attached) and the host (`sandbox = "host"`).
#[derive(Clone, Copy)]
pub struct Launchers<'a> {
    /// The session's guest, when one is attached.
    pub guest: Option<&'a dyn Launcher>,
    /// The host, for `sandbox = "host"` servers.
    pub host: &'a dyn Launcher,
}

/// A server's state, as `cortex mcp list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerState {
    /// Started.
    Ready {
        /// Its tools.
        tools: Vec<McpTool>,
        /// How long it took to start, in milliseconds.
        start_ms: f64,
    },
    /// Not running.
    Failed {
        /// Why, in one line.
        reason: String,
    },
}

/// One line of a listing.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    /// The server's name.
    pub name: String,
    /// `stdio (guest): …`, `http: …`.
    pub transport: String,
    /// Its tools only read.
    pub read_only: bool,
    /// Whether it runs.
    pub state: ServerState,
}

enum Slot {
    Ready(Arc<Connection>),
    Failed(String),
}

struct Server {
    spec: ServerSpec,
    slot: Mutex<Slot>,
}

impl Server {
    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The answer to a call by qualified name.
#[derive(Debug)]
pub enum Called {
    /// The server answered (`is_error` may still be set).
    Output(McpOutput),
    /// A tool error for the model to read; the server keeps running.
    Error(String),
    /// The server was marked failed by this call (hung or died); the
    /// message is for the model, the notice for the timeline.
    Failed {
        /// What the model reads.
        message: String,
        /// What the timeline records.
        notice: Notice,
    },
    /// Stopped by the user before the server answered.
    Cancelled,
}

/// What a qualified name refers to.
pub enum Lookup {
    /// A tool of a ready server.
    Tool {
        /// The tool.
        tool: McpTool,
        /// Its server's tools only read.
        read_only: bool,
    },
    /// A server of this session that is not ready: its tools are gone.
    Unavailable {
        /// The server.
        server: String,
        /// Why it is not ready.
        reason: String,
    },
    /// No server of this session has that name.
    Unknown,
}

/// The servers of one session.
#[derive(Default)]
pub struct McpHub {
    servers: Vec<Server>,
}

impl McpHub {
    /// Start every server at once; each is `Ready` or `Failed` when this
    /// returns (no server takes longer than its own start-up timeout).
    pub async fn start(specs: &[ServerSpec], launchers: Launchers<'_>) -> (McpHub, Vec<Notice>) {
        let mut hub = McpHub::default();
        let notices = hub.add(specs, launchers).await;
        (hub, notices)
    }

    /// Start `specs` beside the servers already here, which go on
    /// untouched. A spec whose name the hub already has is left out (the
    /// first server of a name keeps it). Returns when each new server is
    /// `Ready` or `Failed`.
    pub async fn add(&mut self, specs: &[ServerSpec], launchers: Launchers<'_>) -> Vec<Notice> {
        let mut fresh: Vec<&ServerSpec> = Vec::new();
        for spec in specs {
            if self.has(&spec.name) || fresh.iter().any(|f| f.name == spec.name) {
                tracing::warn!("MCP server `{}` is already in this session", spec.name);
            } else {
                fresh.push(spec);
            }
        }
        let opened = join_all(fresh.into_iter().map(|spec| async move {
            (
                spec,
                Connection::open(spec, launcher_for(spec, launchers)).await,
            )
        }))
        .await;
        let mut notices = Vec::new();
        for (spec, opened) in opened {
            let (slot, notice) = settle(spec, opened);
            notices.push(notice);
            self.servers.push(Server {
                spec: spec.clone(),
                slot: Mutex::new(slot),
            });
        }
        notices
    }

    /// Whether a server of that name is here (ready or failed).
    pub fn has(&self, name: &str) -> bool {
        self.servers.iter().any(|s| s.spec.name == name)
    }

    /// The specs of every server, in configuration order.
    pub fn specs(&self) -> Vec<ServerSpec> {
        self.servers.iter().map(|s| s.spec.clone()).collect()
    }

    /// Whether the session has no MCP server at all.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The tools `mode` offers, server by server in configuration order.
    /// [`Mode::offers_mcp`] decides.
    pub fn offered(&self, mode: Mode) -> Vec<ToolSpec> {
        let mut specs = Vec::new();
        for server in &self.servers {
            if !mode.offers_mcp(server.spec.read_only) {
                continue;
            }
            if let Slot::Ready(connection) = &*server.slot() {
                specs.extend(connection.tools.iter().map(McpTool::spec));
            }
        }
        specs
    }

    /// What `qualified` names in this session.
    pub fn lookup(&self, qualified: &str) -> Lookup {
        let Some((server_name, tool_name)) = split_qualified(qualified) else {
            return Lookup::Unknown;
        };
        let Some(server) = self.servers.iter().find(|s| s.spec.name == server_name) else {
            return Lookup::Unknown;
        };
        match &*server.slot() {
            Slot::Failed(reason) => Lookup::Unavailable {
                server: server_name.to_owned(),
                reason: reason.clone(),
            },
            Slot::Ready(connection) => {
                match connection.tools.iter().find(|t| t.name == tool_name) {
                    Some(tool) => Lookup::Tool {
                        tool: tool.clone(),
                        read_only: server.spec.read_only,
                    },
                    None => Lookup::Unknown,
                }
            }
        }
    }

    /// Call a tool found by [`McpHub::lookup`] with checked arguments. A
    /// timeout or a dead server marks the server failed.
    pub async fn call(
        &self,
        tool: &McpTool,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Called {
        let Some(server) = split_qualified(&tool.qualified)
            .and_then(|(name, _)| self.servers.iter().find(|s| s.spec.name == name))
        else {
            return Called::Error(format!("no MCP server offers `{}`", tool.qualified));
        };
        let connection = match &*server.slot() {
            Slot::Ready(connection) => connection.clone(),
            Slot::Failed(reason) => {
                return Called::Error(format!(
                    "the MCP server `{}` is not available: {reason}",
                    server.spec.name
                ));
            }
        };
        match connection.call(tool, arguments, cancel).await {
            Ok(output) => Called::Output(output),
            Err(CallError::Rejected(message)) => Called::Error(message),
            Err(CallError::Cancelled) => Called::Cancelled,
            Err(e @ (CallError::TimedOut(_) | CallError::Died(_))) => {
                let reason = match &e {
                    CallError::TimedOut(after) => format!(
                        "a call to `{}` hung (no answer within {after:?})",
                        tool.name
                    ),
                    other => other.to_string(),
                };
                let notice = self.fail(server, reason.clone());
                Called::Failed {
                    message: format!(
                        "the MCP server `{}` failed: {reason}; its tools are no longer available",
                        server.spec.name
                    ),
                    notice,
                }
            }
        }
    }

    /// Servers found gone since the last look (a process that exited, a
    /// closed connection), now marked failed.
    pub fn check(&self) -> Vec<Notice> {
        let mut notices = Vec::new();
        for server in &self.servers {
            let gone = match &*server.slot() {
                Slot::Ready(connection) => connection.gone(),
                Slot::Failed(_) => None,
            };
            if let Some(reason) = gone {
                notices.push(self.fail(server, reason));
            }
        }
        notices
    }

    fn fail(&self, server: &Server, reason: String) -> Notice {
        tracing::warn!("MCP server `{}` failed: {reason}", server.spec.name);
        let old = std::mem::replace(&mut *server.slot(), Slot::Failed(reason.clone()));
        if let Slot::Ready(connection) = old {
            connection.kill();
        }
        Notice::Failed {
            name: server.spec.name.clone(),
            reason,
        }
    }

    /// Every server and its state.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .map(|server| ServerStatus {
                name: server.spec.name.clone(),
                transport: server.spec.describe(),
                read_only: server.spec.read_only,
                state: match &*server.slot() {
                    Slot::Ready(c) => ServerState::Ready {
                        tools: c.tools.clone(),
                        start_ms: c.start_ms,
                    },
                    Slot::Failed(reason) => ServerState::Failed {
                        reason: reason.clone(),
                    },
                },
            })
            .collect()
    }

    /// End every server (and its process).
    pub async fn close(self) {
        let closing = self.servers.into_iter().filter_map(|server| {
            match server
                .slot
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner)
            {
                Slot::Ready(connection) => Arc::into_inner(connection).map(Connection::close),
                Slot::Failed(_) => None,
            }
        });
        join_all(closing).await;
    }
}

/// Where `spec`'s process starts (HTTP servers start none).
fn launcher_for<'a>(spec: &ServerSpec, launchers: Launchers<'a>) -> &'a dyn Launcher {
    match &spec.transport {
        TransportSpec::Stdio(StdioSpec {
            placement: Placement::Host,
            ..
        }) => launchers.host,
        TransportSpec::Stdio(_) => match launchers.guest {
            Some(guest) => guest,
            None => &NoGuest,
        },
        // Unused for HTTP.
        TransportSpec::Http(_) => launchers.host,
    }
}

/// A server's slot after its start, and the notice that says so.
fn settle(
    spec: &ServerSpec,
    opened: Result<Connection, crate::server::ServerError>,
) -> (Slot, Notice) {
    match opened {
        Ok(connection) => {
            let notice = Notice::Ready {
                name: spec.name.clone(),
                tools: connection
                    .tools
                    .iter()
                    .map(|t| t.qualified.clone())
                    .collect(),
                rejected: connection.rejected.iter().map(|r| r.to_string()).collect(),
                ms: connection.start_ms,
            };
            (Slot::Ready(Arc::new(connection)), notice)
        }
        Err(e) => {
            let reason = e.to_string();
            tracing::warn!("MCP server `{}` failed: {reason}", spec.name);
            let notice = Notice::Failed {
                name: spec.name.clone(),
                reason: reason.clone(),
            };
            (Slot::Failed(reason), notice)
        }
    }
}

/// Stands in for the guest while none is attached.
struct NoGuest;

impl Launcher for NoGuest {
    fn launch<'a>(
        &'a self,
        _server: &'a str,
        _spec: &'a StdioSpec,
    ) -> BoxFuture<'a, Result<ProcessChannel, LaunchError>> {
        Box::pin(async { Err(LaunchError::NoGuest) })
    }
}
