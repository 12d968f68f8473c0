//! An Agent Client Protocol (ACP) agent for editors, built on the official
//! `agent-client-protocol` crate, that drives the session API through
//! `cortex-client` (the same path `cortex exec` takes). It is a client of
//! the API like the TUI: it depends on `cortex-client`, `cortex-api` and
//! `cortex-protocol`, never on the server or the core.
//!
//! Supported (protocol v1):
//! - `initialize`: the agent answers version 1 whatever the editor asked
//!   (the only version it speaks; the editor decides whether it can talk to
//!   it), with `loadSession`, text and embedded-text prompts and MCP over
//!   stdio and HTTP as its capabilities;
//! - `session/new` (the `cwd` is the repository) and `session/load` (the
//!   stored timeline replayed as `session/update` notifications, the
//!   user's messages included), both answering the four modes;
//! - `session/prompt` ([`prompt`]): message and thought chunks, tool calls
//!   and their updates with locations and diffs for edits, the goal's
//!   steps and the todo list as a plan; stop reason `end_turn`,
//!   `cancelled` (after `session/cancel`, or a Stop from another client)
//!   or `max_turn_requests` (the session's stop rule ended the turn); a
//!   failed turn is a JSON-RPC error with its message;
//! - `session/cancel` (Stop) and `session/set_mode` (Ask, Plan, Spec,
//!   Agent; the server applies the same locks as for every client);
//! - approvals ([`permission`]): in `ask` policy a call waiting for the
//!   user is a `session/request_permission` (allow once, allow always,
//!   reject once) and the editor's choice goes back through the API.
//!
//! - the editor's `mcpServers` (stdio and http; not sse) of `session/new`
//!   are the session's (`CreateSession::mcp_servers`), besides the server's
//!   configured ones; those of `session/load` are added to the loaded
//!   session (`POST /v1/sessions/{id}/mcp_servers`) and start with its next
//!   turn without restarting the servers it runs.
//!
//! - the session's custom commands: an `available_commands_update` after
//!   `session/new` and `session/load` answered, and a prompt `/NAME ARGS`
//!   naming one runs it ([`commands`]).
//! - rewind, which the protocol has no method for, as the command
//!   `/rewind [TURN] [--files|--conversation|--both] [--force] [--dry-run]`
//!   (advertised with the custom ones): the API's rewind, its diff answered
//!   as agent text; without a turn, the conversation's turns ([`rewind`]).
//!
//! Not yet: binary resources and audio in prompts. Images are attached to
//! the turn (a model that takes none refuses them).
//!
//! Each request that waits on the API runs in a task of its own, so the
//! connection keeps reading (a `session/cancel` arrives while a prompt runs).
//! Nothing but protocol frames is written to the transport; logs go through
//! `tracing` (the CLI sends them to standard error).

#![warn(missing_docs)]

mod commands;
pub mod map;
mod permission;
mod prompt;
mod rewind;
mod sessions;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, McpCapabilities, NewSessionRequest, PromptCapabilities, PromptRequest,
    SetSessionModeRequest,
};
use agent_client_protocol::{
    Agent, ByteStreams, Client as Editor, ConnectTo, on_receive_notification, on_receive_request,
};
use cortex_api::CreateSession;
use cortex_client::{Client, ClientError};
use sessions::Sessions;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// Why serving a connection ended other than by the editor closing it.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    /// The ACP connection failed (its transport or a frame the crate refused).
    #[error("ACP connection: {0}")]
    Protocol(#[from] agent_client_protocol::Error),
}

/// What the agent needs: the API it drives and how it creates sessions.
#[derive(Clone)]
pub struct AcpAgent {
    api: Client,
    /// The body of `POST /v1/sessions`; its `repository` is replaced by
    /// the editor's `cwd`.
    template: CreateSession,
    /// The sessions this connection created or loaded.
    sessions: Sessions,
}

/// The protocol version this agent speaks, whatever the editor asks for:
/// ACP's negotiation has the agent answer the latest version it supports
/// when it does not support the requested one, and the editor disconnect
/// if it cannot use it.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V1;

impl AcpAgent {
    /// An agent creating its sessions from `template` (mode, model, stop
    /// rule and sandbox; the repository is the editor's `cwd`) on `api`.
    pub fn new(api: Client, template: CreateSession) -> AcpAgent {
        AcpAgent {
            api,
            template,
            sessions: Sessions::default(),
        }
    }

    /// Serve ACP on standard input and output until the editor closes it.
    pub async fn serve_stdio(self) -> Result<(), AcpError> {
        self.serve(ByteStreams::new(
            tokio::io::stdout().compat_write(),
            tokio::io::stdin().compat(),
        ))
        .await
    }

    /// Serve ACP on `transport` until the client closes it. Returns an
    /// error when the transport fails; a bad request is answered with a
    /// JSON-RPC error and the connection goes on.
    pub async fn serve(self, transport: impl ConnectTo<Agent> + 'static) -> Result<(), AcpError> {
        let (new, load, prompt) = (self.clone(), self.clone(), self.clone());
        let (cancel, mode) = (self.clone(), self);
        Agent
            .v1()
            .name("cortex")
            .on_receive_request(
                async move |_request: InitializeRequest, responder, _cx| {
                    responder.respond(initialize_response())
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: NewSessionRequest, responder, cx: ConnectionTo<Editor>| {
                    let agent = new.clone();
                    let connection = cx.clone();
                    cx.spawn(async move {
                        let answer = agent.new_session(request).await;
                        let id = answer.as_ref().ok().map(|a| a.session_id.clone());
                        responder.respond_with_result(answer)?;
                        // After the answer: the editor knows the session.
                        if let Some(id) = id {
                            agent.advertise_commands(&id, &connection).await;
                        }
                        Ok(())
                    })
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: LoadSessionRequest, responder, cx: ConnectionTo<Editor>| {
                    let agent = load.clone();
                    let connection = cx.clone();
                    cx.spawn(async move {
                        let id = request.session_id.clone();
                        let answer = agent.load_session(request, &connection).await;
                        let loaded = answer.is_ok();
                        responder.respond_with_result(answer)?;
                        if loaded {
                            agent.advertise_commands(&id, &connection).await;
                        }
                        Ok(())
                    })
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: PromptRequest, responder, cx: ConnectionTo<Editor>| {
                    let agent = prompt.clone();
                    let connection = cx.clone();
                    cx.spawn(async move {
                        responder.respond_with_result(agent.prompt(request, &connection).await)
                    })
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: SetSessionModeRequest, responder, cx: ConnectionTo<Editor>| {
                    let agent = mode.clone();
                    cx.spawn(
                        async move { responder.respond_with_result(agent.set_mode(request).await) },
                    )
                },
                on_receive_request!(),
            )
            .on_receive_notification(
                async move |note: CancelNotification, cx: ConnectionTo<Editor>| {
                    let agent = cancel.clone();
                    cx.spawn(async move {
                        agent.cancel(note).await;
                        Ok(())
                    })
                },
                on_receive_notification!(),
            )
            .connect_to(transport)
            .await?;
        Ok(())
    }
}

/// The answer to every `initialize`.
fn initialize_response() -> InitializeResponse {
    InitializeResponse::new(PROTOCOL_VERSION)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                // A turn's message is text with images attached: embedded
                // text resources are inlined, audio is not taken.
                .prompt_capabilities(
                    PromptCapabilities::new()
                        .image(true)
                        .audio(false)
                        .embedded_context(true),
                )
                // Stdio (the protocol's baseline) and streamable HTTP;
                // not the older SSE transport.
                .mcp_capabilities(McpCapabilities::new().http(true).sse(false)),
        )
        .agent_info(Implementation::new("cortex", env!("CARGO_PKG_VERSION")))
}

pub(crate) fn invalid_params(message: impl Into<String>) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(agent_client_protocol::ErrorCode::INVALID_PARAMS, message)
}

pub(crate) fn internal(message: impl Into<String>) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(agent_client_protocol::ErrorCode::INTERNAL_ERROR, message)
}

/// The API's own message; a 4xx (no such session, a turn already running)
/// is the editor's bad request, anything else an internal error.
pub(crate) fn api_error(e: ClientError) -> agent_client_protocol::Error {
    match &e {
        ClientError::Api {
            status, message, ..
        } if (400..500).contains(status) => invalid_params(message.clone()),
        _ => internal(e.to_string()),
    }
}
