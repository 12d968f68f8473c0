//! A session's MCP servers: started before the first model request of its
//! first turn (stdio servers each in a guest of their own under the
//! session's sandbox policy, through [`GuestLauncher`]; `sandbox = "host"`
//! ones on the host), their tools offered as `mcp__NAME__TOOL` by
//! [`cortex_protocol::Mode::offers_mcp`], and calls to them gated like any
//! other (mode, arguments, stop rule, approval) and answered with what the
//! server returned.
//!
//! A server that fails to start, hangs (a call passes its timeout) or dies
//! becomes `mcp.server_failed {name, reason}` on the timeline; its tools
//! are no longer offered and calls to them are refused, while the turn goes
//! on.
//!
//! The mode's lock holds for the servers as for `bash`: a server's guest
//! gets the same writability as the session's own guest, so in Ask, Plan
//! and Spec the workspace and the guest's home are read-only to it
//! whatever the server claims (`read_only` only decides which of its tools
//! are offered). A mode change that flips writability restarts the servers
//! under the new mode with the next turn. A server placed on the host
//! (`sandbox = "host"`) cannot be held read-only, so in those modes it is
//! not started: it waits, recorded once as `mcp.server_failed`, for a mode
//! that may change files.

use crate::answer::Answer;
use crate::{CoreError, GuestLauncher, Session};
use cortex_mcp::{
    Called, HostLauncher, Launchers, Lookup, McpHub, McpTool, Notice, Placement, ServerSpec,
    TransportSpec,
};
use cortex_protocol::{EventKind, ToolCallRequest, ToolSpec, TurnId};
use cortex_runtime::GuestSpec;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use tokio_util::sync::CancellationToken;

/// The MCP part of a session: servers not started yet, then the hub.
#[derive(Default)]
pub(crate) struct SessionMcp {
    /// Servers to start with the next turn.
    pending: Vec<ServerSpec>,
    hub: Option<McpHub>,
    /// Host servers pending until the mode may change files, already
    /// recorded as waiting (so the record is made once per wait).
    waiting: BTreeSet<String>,
}

/// Whether `spec` runs on the host, where no mode's lock can hold it.
fn on_host(spec: &ServerSpec) -> bool {
    matches!(&spec.transport, TransportSpec::Stdio(s) if s.placement == Placement::Host)
}

/// What the MCP gate decided for a call named `mcp__…`.
pub(crate) enum McpGate {
    /// Offered in this mode, arguments checked against the server's schema;
    /// `read_only` is the server's own claim.
    Run {
        /// Boxed: a compiled schema is large beside the other answers.
        tool: Box<McpTool>,
        arguments: Map<String, Value>,
        read_only: bool,
    },
    /// Refused before anything ran (`tool.refused`).
    Refuse(String),
    /// Answered with an error the model reads (bad arguments).
    Error(String),
}

impl Session {
    /// Add MCP servers to this session (from the user's config or a client
    /// such as an editor). They start with the next turn, before its first
    /// model request; servers added after that start with the turn after,
    /// and the servers already running go on untouched. A name the session
    /// already has (a server added earlier, configured servers first) keeps
    /// its first server. Returns the names added.
    pub fn add_mcp_servers(&mut self, specs: impl IntoIterator<Item = ServerSpec>) -> Vec<String> {
        let mut added = Vec::new();
        for spec in specs {
            let known = self.mcp.pending.iter().any(|p| p.name == spec.name)
                || self.mcp.hub.as_ref().is_some_and(|hub| hub.has(&spec.name));
            if known {
                tracing::warn!("MCP server `{}` is already in this session", spec.name);
                continue;
            }
            added.push(spec.name.clone());
            self.mcp.pending.push(spec);
        }
        added
    }

    /// Start the servers added since the last turn (only those: the others
    /// keep running); each becomes `mcp.server_ready` or
    /// `mcp.server_failed`. Never fails the turn.
    pub(crate) async fn start_mcp(&mut self, turn: &TurnId) -> Result<(), CoreError> {
        if self.mcp.pending.is_empty() {
            return Ok(());
        }
        let may_write = self.guest_may_write();
        let (specs, held): (Vec<ServerSpec>, Vec<ServerSpec>) =
            std::mem::take(&mut self.mcp.pending)
                .into_iter()
                .partition(|spec| may_write || !on_host(spec));
        for spec in &held {
            if self.mcp.waiting.insert(spec.name.clone()) {
                let reason = format!(
                    "not started in {} mode: it runs on the host (sandbox = \"host\"), where \
                     the mode's read-only lock cannot hold it; it starts once the mode may \
                     change files",
                    self.mode()
                );
                let name = spec.name.clone();
                self.record_mcp(turn, vec![Notice::Failed { name, reason }])
                    .await?;
            }
        }
        self.mcp.pending = held;
        if specs.is_empty() {
            return Ok(());
        }
        for spec in &specs {
            self.mcp.waiting.remove(&spec.name);
        }
        let launcher = GuestLauncher::new(self.guests.clone(), self.mcp_guest_spec());
        let host = HostLauncher {
            cwd: self.workspace.clone(),
        };
        let launchers = Launchers {
            guest: Some(&launcher),
            host: &host,
        };
        let notices = self
            .mcp
            .hub
            .get_or_insert_with(McpHub::default)
            .add(&specs, launchers)
            .await;
        self.record_mcp(turn, notices).await
    }

    /// Servers' guests get the session's sandbox policy, network and
    /// environment, and the writability of the session's own guest: the
    /// mode's lock, which a server's claim to be read-only does not lift.
    /// Which of its tools are offered in a mode is the dispatcher's
    /// decision. Language servers' guests are built the same way (`lsp/`).
    pub(crate) fn mcp_guest_spec(&self) -> GuestSpec {
        GuestSpec {
            workspace: self.workspace.clone(),
            writable: self.guest_may_write(),
            allow_bash: true,
            env: self.guest_env.clone(),
            policy: self.sandbox.policy,
            network: self.sandbox.network,
        }
    }

    /// Record servers found gone since the last look.
    pub(crate) async fn check_mcp(&self, turn: &TurnId) -> Result<(), CoreError> {
        let notices = match &self.mcp.hub {
            Some(hub) => hub.check(),
            None => return Ok(()),
        };
        self.record_mcp(turn, notices).await
    }

    async fn record_mcp(&self, turn: &TurnId, notices: Vec<Notice>) -> Result<(), CoreError> {
        for notice in notices {
            let kind = match notice {
                Notice::Ready {
                    name,
                    tools,
                    rejected,
                    ms,
                } => EventKind::McpServerReady {
                    name,
                    tools,
                    rejected,
                    ms,
                },
                Notice::Failed { name, reason } => EventKind::McpServerFailed { name, reason },
            };
            self.timeline.emit(Some(turn), kind).await?;
        }
        Ok(())
    }

    /// The MCP tools the model is offered in the current mode.
    pub(crate) fn mcp_offered(&self) -> Vec<ToolSpec> {
        self.mcp
            .hub
            .as_ref()
            .map(|hub| hub.offered(self.mode()))
            .unwrap_or_default()
    }

    /// The mode and argument gates for a call named `mcp__…`.
    pub(crate) fn gate_mcp(&self, call: &ToolCallRequest, offered: &str) -> McpGate {
        let lookup = match &self.mcp.hub {
            Some(hub) => hub.lookup(&call.name),
            None => Lookup::Unknown,
        };
        match lookup {
            Lookup::Unknown => McpGate::Refuse(format!(
                "unknown tool `{}`; the tools available in {} mode are: {offered}",
                call.name,
                self.mode()
            )),
            Lookup::Unavailable { server, reason } => McpGate::Refuse(format!(
                "the MCP server `{server}` is not available ({reason}); its tools are gone \
                 for this session"
            )),
            Lookup::Tool { read_only, .. } if !self.mode().offers_mcp(read_only) => {
                McpGate::Refuse(format!(
                    "tool `{}` is not available in {} mode; the tools available are: {offered}",
                    call.name,
                    self.mode()
                ))
            }
            Lookup::Tool { tool, read_only } => match tool.parse_args(&call.arguments) {
                Ok(arguments) => McpGate::Run {
                    tool: Box::new(tool),
                    arguments,
                    read_only,
                },
                Err(e) => McpGate::Error(e.to_string()),
            },
        }
    }

    /// Run one gated MCP call. A server that hangs or dies is recorded as
    /// failed and the call answered with an error the model reads.
    pub(crate) async fn run_mcp(
        &self,
        turn: &TurnId,
        tool: &McpTool,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<Answer, CoreError> {
        let Some(hub) = &self.mcp.hub else {
            return Ok(Answer::error("no MCP server is running in this session"));
        };
        Ok(match hub.call(tool, arguments, cancel).await {
            Called::Output(output) => mcp_answer(output),
            Called::Error(message) => Answer::error(message),
            Called::Failed { message, notice } => {
                self.record_mcp(turn, vec![notice]).await?;
                Answer::error(message)
            }
            Called::Cancelled => Answer::stopped(),
        })
    }

    /// After a mode change that flipped whether the guest may write: the
    /// running servers end and start again with the next turn, under the
    /// new mode (the ones already pending keep their place after them).
    pub(crate) async fn restart_mcp(&mut self) {
        if let Some(hub) = self.mcp.hub.take() {
            let mut specs = hub.specs();
            hub.close().await;
            specs.append(&mut self.mcp.pending);
            self.mcp.pending = specs;
        }
    }

    /// End every MCP server (and its guest).
    pub(crate) async fn close_mcp(&mut self) {
        if let Some(hub) = self.mcp.hub.take() {
            hub.close().await;
        }
    }
}

/// What the model gets of a result: the text (which names each image,
/// `[image N: TYPE]`) and the images as attachments, which each provider
/// sends as images or replaces by a note (`Message::text_only_content`).
fn mcp_answer(output: cortex_mcp::McpOutput) -> Answer {
    let mut answer = if output.is_error {
        Answer::error(output.text)
    } else {
        Answer::ok(output.text)
    };
    // Images are stored with the result (a resumed session sends them
    // again), so a call may keep at most MAX_IMAGE_BYTES of them.
    let mut budget = MAX_IMAGE_BYTES;
    for image in output.images {
        if image.data.len() > budget {
            answer.output.push_str(&format!(
                "\n[an image of {} bytes ({}) was left out: a call keeps at most {MAX_IMAGE_BYTES} bytes of images]",
                image.data.len(),
                image.mime_type
            ));
            continue;
        }
        budget -= image.data.len();
        answer.attachments.push(cortex_protocol::Attachment::Image {
            mime_type: image.mime_type,
            data: image.data,
        });
    }
    answer
}

/// Base64 bytes of images one MCP call may return to the model and the
/// timeline.
const MAX_IMAGE_BYTES: usize = 2 * 1024 * 1024;
