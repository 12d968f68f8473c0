//! An Agent Client Protocol (ACP) agent for editors, built on the official
//! `agent-client-protocol` crate, that drives the session API through
//! `cortex-client` (the same path `cortex exec` takes).
//!
//! Supported: `initialize` (protocol v1), `session/new` (the `cwd` is the
//! repository), `session/prompt` (message and thought chunks, tool calls
//! and their updates with diffs for edits, the todo list as a plan; stop
//! reason `end_turn` or `cancelled`, a failed turn as a JSON-RPC error),
//! `session/cancel` (Stop) and `session/set_mode` (Ask, Plan, Spec, Agent).
//! Not yet: `session/load`, permission requests, the editor's MCP servers.
//!
//! Each request that waits on the API runs in a task of its own, so the
//! connection keeps reading (a `session/cancel` arrives while a prompt runs).
//! Nothing but protocol frames is written to the transport; logs go through
//! `tracing`.

pub mod map;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, Implementation, InitializeRequest,
    InitializeResponse, NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse,
    SessionNotification, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::{
    Agent, ByteStreams, Client as Editor, ConnectTo, on_receive_notification, on_receive_request,
};
use cortex_client::{Client, ClientError};
use cortex_protocol::{Mode, SessionId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    #[error("ACP connection: {0}")]
    Protocol(#[from] agent_client_protocol::Error),
}

/// What the agent needs: the API it drives and how it creates sessions.
#[derive(Clone)]
pub struct AcpAgent {
    api: Client,
    /// The body of `POST /v1/sessions` without `repository`, which is the
    /// editor's `cwd`.
    template: serde_json::Value,
    /// Seq of the last event each session's client has seen.
    seen: Arc<Mutex<HashMap<SessionId, u64>>>,
}

impl AcpAgent {
    pub fn new(api: Client, template: serde_json::Value) -> AcpAgent {
        AcpAgent {
            api,
            template,
            seen: Arc::default(),
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

    /// Serve ACP on `transport` until the client closes it.
    pub async fn serve(self, transport: impl ConnectTo<Agent> + 'static) -> Result<(), AcpError> {
        let (new, prompt, cancel, mode) = (self.clone(), self.clone(), self.clone(), self);
        Agent
            .v1()
            .name("cortex")
            .on_receive_request(
                async move |_request: InitializeRequest, responder, _cx| {
                    // Version 1 is the only one spoken; the client decides
                    // whether it can talk to an agent answering 1.
                    responder.respond(
                        InitializeResponse::new(ProtocolVersion::V1)
                            .agent_capabilities(AgentCapabilities::new().load_session(false))
                            .agent_info(Implementation::new("cortex", env!("CARGO_PKG_VERSION"))),
                    )
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: NewSessionRequest, responder, cx: ConnectionTo<Editor>| {
                    let agent = new.clone();
                    cx.spawn(async move {
                        responder.respond_with_result(agent.new_session(request).await)
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
                    let api = cancel.api.clone();
                    cx.spawn(async move {
                        let id = SessionId(note.session_id.0.to_string());
                        if let Err(e) = api.stop(&id).await {
                            tracing::warn!("session/cancel {id}: {e}");
                        }
                        Ok(())
                    })
                },
                on_receive_notification!(),
            )
            .connect_to(transport)
            .await?;
        Ok(())
    }

    async fn new_session(
        &self,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, agent_client_protocol::Error> {
        if !request.cwd.is_absolute() {
            return Err(invalid_params(format!(
                "cwd `{}` is not an absolute path",
                request.cwd.display()
            )));
        }
        if !request.mcp_servers.is_empty() {
            tracing::warn!(
                "session/new: the editor's {} MCP server(s) are not supported yet and are ignored",
                request.mcp_servers.len()
            );
        }
        let mut body = self.template.clone();
        if let Some(fields) = body.as_object_mut() {
            fields.insert(
                "repository".into(),
                request.cwd.display().to_string().into(),
            );
        }
        let view = self.api.create_session(body).await.map_err(api_error)?;
        self.remember(&view.id, view.last_seq);
        Ok(NewSessionResponse::new(view.id.0.clone()).modes(map::modes(view.mode)))
    }

    async fn prompt(
        &self,
        request: PromptRequest,
        cx: &ConnectionTo<Editor>,
    ) -> Result<PromptResponse, agent_client_protocol::Error> {
        let id = SessionId(request.session_id.0.to_string());
        let mut after = self.last_seen(&id)?;
        let message = prompt_text(&request.prompt);
        // Subscribed before the turn starts: nothing of it can be missed.
        let mut events = self.api.events(&id, after).await.map_err(api_error)?;
        let turn = self
            .api
            .start_turn(&id, &message)
            .await
            .map_err(api_error)?
            .turn_id;
        let mut mapper = map::Mapper::new();
        loop {
            let event = match events.next().await {
                Some(Ok(event)) => event,
                Some(Err(e)) => return Err(api_error(e)),
                None => return Err(internal("the server closed the event stream")),
            };
            if event.seq <= after {
                continue;
            }
            after = event.seq;
            self.remember(&id, after);
            for update in mapper.map(&event.kind, false) {
                cx.send_notification(SessionNotification::new(request.session_id.clone(), update))?;
            }
            if event.turn_id.as_ref() == Some(&turn)
                && let Some(end) = map::stop_reason(&event.kind)
            {
                return end.map(PromptResponse::new).map_err(internal);
            }
        }
    }

    async fn set_mode(
        &self,
        request: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, agent_client_protocol::Error> {
        let id = SessionId(request.session_id.0.to_string());
        let mode: Mode = request
            .mode_id
            .0
            .parse()
            .map_err(|e: cortex_protocol::UnknownMode| invalid_params(e.to_string()))?;
        self.api.set_mode(&id, mode).await.map_err(api_error)?;
        Ok(SetSessionModeResponse::new())
    }

    fn remember(&self, id: &SessionId, seq: u64) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(id.clone(), seq);
        }
    }

    fn last_seen(&self, id: &SessionId) -> Result<u64, agent_client_protocol::Error> {
        self.seen
            .lock()
            .ok()
            .and_then(|seen| seen.get(id).copied())
            .ok_or_else(|| invalid_params(format!("no session `{id}` on this connection")))
    }
}

/// The prompt as one message: its text, and resource links as their URIs
/// (the capabilities advertised admit nothing else).
fn prompt_text(blocks: &[ContentBlock]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            ContentBlock::ResourceLink(link) => Some(link.uri.clone()),
            _ => None,
        })
        .collect();
    parts.join("\n")
}

fn invalid_params(message: String) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(agent_client_protocol::ErrorCode::INVALID_PARAMS, message)
}

fn internal(message: impl Into<String>) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(agent_client_protocol::ErrorCode::INTERNAL_ERROR, message)
}

/// The API's own message; a 4xx (no such session, a turn already running)
/// is the editor's bad request, anything else an internal error.
fn api_error(e: ClientError) -> agent_client_protocol::Error {
    match &e {
        ClientError::Api {
            status, message, ..
        } if (400..500).contains(status) => invalid_params(message.clone()),
        _ => internal(e.to_string()),
    }
}
