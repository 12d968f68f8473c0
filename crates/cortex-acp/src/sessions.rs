//! The sessions of one ACP connection: `session/new`, `session/load` (the
//! stored timeline replayed as updates), `session/set_mode`, and what the
//! connection remembers of each session between prompts.

use crate::map::{self, Mapper};
use crate::{AcpAgent, api_error, internal, invalid_params};
use agent_client_protocol::Client as Editor;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    LoadSessionRequest, LoadSessionResponse, McpServer, NewSessionRequest, NewSessionResponse,
    SessionNotification, SetSessionModeRequest, SetSessionModeResponse,
};
use cortex_api::McpServerRequest;
use cortex_protocol::{Mode, SessionId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// What the connection keeps of one session.
pub(crate) struct Tracked {
    /// Seq of the last event the editor has been sent (or has no use for).
    pub(crate) seen: u64,
    /// Carries tool calls, the todo list and the goal's steps from one
    /// prompt to the next.
    pub(crate) mapper: Mapper,
}

/// One session of the connection: its state, held by the prompt that runs
/// (the server refuses a second turn anyway), and whether the editor asked
/// to cancel, which a prompt that has not started its turn yet must see.
pub(crate) struct Live {
    pub(crate) tracked: tokio::sync::Mutex<Tracked>,
    pub(crate) cancel: AtomicBool,
}

/// The connection's sessions by id.
#[derive(Clone, Default)]
pub(crate) struct Sessions(Arc<Mutex<HashMap<SessionId, Arc<Live>>>>);

impl Sessions {
    fn insert(&self, id: SessionId, tracked: Tracked) {
        let live = Arc::new(Live {
            tracked: tokio::sync::Mutex::new(tracked),
            cancel: AtomicBool::new(false),
        });
        if let Ok(mut sessions) = self.0.lock() {
            sessions.insert(id, live);
        }
    }

    /// The session `id`, if this connection created or loaded it.
    pub(crate) fn get(&self, id: &SessionId) -> Result<Arc<Live>, agent_client_protocol::Error> {
        self.0
            .lock()
            .ok()
            .and_then(|sessions| sessions.get(id).cloned())
            .ok_or_else(|| {
                invalid_params(format!(
                    "no session `{id}` on this connection (session/new or session/load first)"
                ))
            })
    }
}

/// The editor's `cwd`, which must be absolute (the protocol says so).
fn repository(cwd: &Path) -> Result<String, agent_client_protocol::Error> {
    if !cwd.is_absolute() {
        return Err(invalid_params(format!(
            "cwd `{}` is not an absolute path",
            cwd.display()
        )));
    }
    Ok(cwd.display().to_string())
}

/// The editor's MCP servers as the session API takes them: stdio and
/// streamable HTTP (with the editor's headers). SSE servers (the protocol's
/// older HTTP transport, not advertised) are left out with a warning rather
/// than failing an editor that sends them anyway.
fn mcp_servers(servers: &[McpServer]) -> Vec<McpServerRequest> {
    servers
        .iter()
        .filter_map(|server| match server {
            McpServer::Stdio(stdio) => Some(McpServerRequest {
                name: stdio.name.clone(),
                command: stdio.command.display().to_string(),
                args: stdio.args.clone(),
                env: stdio
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
                ..McpServerRequest::default()
            }),
            McpServer::Http(http) => Some(McpServerRequest {
                name: http.name.clone(),
                url: Some(http.url.clone()),
                headers: http
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
                ..McpServerRequest::default()
            }),
            _ => {
                tracing::warn!("an MCP server over SSE is left out (stdio and http are taken)");
                None
            }
        })
        .collect()
}

pub(crate) fn acp_id(id: &agent_client_protocol::v1::schema::SessionId) -> SessionId {
    SessionId(id.0.to_string())
}

impl AcpAgent {
    pub(crate) async fn new_session(
        &self,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, agent_client_protocol::Error> {
        let mut body = self.template.clone();
        body.repository = repository(&request.cwd)?;
        body.mcp_servers = mcp_servers(&request.mcp_servers);
        let view = self.api.create_session(&body).await.map_err(api_error)?;
        let mapper = Mapper::new(PathBuf::from(&view.repository));
        self.sessions.insert(
            view.id.clone(),
            Tracked {
                seen: view.last_seq,
                mapper,
            },
        );
        Ok(NewSessionResponse::new(view.id.0.clone()).modes(map::modes(view.mode)))
    }

    /// Replay the session's stored timeline (every event up to its newest
    /// when the request arrived) as updates, then answer.
    pub(crate) async fn load_session(
        &self,
        request: LoadSessionRequest,
        cx: &ConnectionTo<Editor>,
    ) -> Result<LoadSessionResponse, agent_client_protocol::Error> {
        repository(&request.cwd)?;
        let id = acp_id(&request.session_id);
        let view = self.api.session(&id).await.map_err(api_error)?;
        let servers = mcp_servers(&request.mcp_servers);
        if !servers.is_empty() {
            // Beside the servers the session has (a name it has keeps its
            // own); they start with its next turn.
            self.api
                .add_mcp_servers(&id, servers)
                .await
                .map_err(api_error)?;
        }
        let mut mapper = Mapper::new(PathBuf::from(&view.repository));
        let mut seen = 0;
        if view.last_seq > 0 {
            let mut events = self.api.events(&id, 0).await.map_err(api_error)?;
            while seen < view.last_seq {
                let event = match events.next().await {
                    Some(Ok(event)) => event,
                    Some(Err(e)) => return Err(api_error(e)),
                    None => return Err(internal("the server closed the event stream")),
                };
                seen = event.seq;
                for update in mapper.map(&event.kind, true) {
                    cx.send_notification(SessionNotification::new(
                        request.session_id.clone(),
                        update,
                    ))?;
                }
            }
        }
        self.sessions.insert(id, Tracked { seen, mapper });
        Ok(LoadSessionResponse::new().modes(map::modes(view.mode)))
    }

    pub(crate) async fn set_mode(
        &self,
        request: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, agent_client_protocol::Error> {
        let id = acp_id(&request.session_id);
        self.sessions.get(&id)?;
        let mode: Mode = request
            .mode_id
            .0
            .parse()
            .map_err(|e: cortex_protocol::UnknownMode| invalid_params(e.to_string()))?;
        self.api.set_mode(&id, mode).await.map_err(api_error)?;
        Ok(SetSessionModeResponse::new())
    }
}
