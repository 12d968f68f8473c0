//! A client of the session API (`cortex-server`) over TCP or a Unix socket:
//! JSON requests, and the timeline as a stream of events read from SSE.
//!
//! Short requests reuse idle HTTP/1.1 connections (a request an idle
//! connection could not take goes again on a new one); each event stream has
//! a connection of its own, so streams and requests run side by side. The
//! body types and the stream's framing are `cortex-api`'s, which the server
//! uses too, so client and server cannot drift apart; this crate does not
//! depend on the server.

#![warn(missing_docs)]

mod approvals;
mod conn;
mod error;
mod goals;
mod processes;
mod sse;
mod wire;

pub use cortex_api::{
    ApprovalAnswered, ApprovalState, CompactAnswer, CreateTurn, GoalAnswer, GoalSummary, GoalView,
    HookList, ProcessList, Rewind, RewindAnswer, SessionPage, SessionView, StopAnswer, TrustHooks,
    TurnAttachment, TurnCreated,
};
pub use error::ClientError;
pub use sse::EventStream;

use bytes::Bytes;
use cortex_api::{RejectPlan, SetMode, events};
use cortex_protocol::{Mode, SessionId};
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::PathBuf;

/// `call`'s body when there is none.
const NO_BODY: Option<&()> = None;

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// `host:port`.
    Tcp(String),
    /// A Unix socket's path.
    Unix(PathBuf),
}

impl Endpoint {
    /// `http://HOST:PORT` (a trailing `/` is fine) or `unix:PATH`.
    pub fn parse(url: &str) -> Result<Endpoint, ClientError> {
        if let Some(path) = url.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(ClientError::BadUrl(url.to_owned()));
            }
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        let authority = url
            .strip_prefix("http://")
            .map(|rest| rest.trim_end_matches('/'))
            .filter(|a| !a.is_empty() && !a.contains('/'))
            .ok_or_else(|| ClientError::BadUrl(url.to_owned()))?;
        Ok(Endpoint::Tcp(authority.to_owned()))
    }
}

/// A client of one server, holding its bearer token. Cheap to clone: clones
/// share the idle connections. Every call is a request of its own; dropping
/// its future abandons it (the server may still have acted on it).
#[derive(Debug, Clone)]
pub struct Client {
    endpoint: Endpoint,
    token: String,
    /// Idle connections, shared by clones.
    pool: conn::Pool,
}

impl Client {
    /// A client of `endpoint` that authenticates with `token`. Connects on
    /// the first call, not here.
    pub fn new(endpoint: Endpoint, token: impl Into<String>) -> Client {
        Client {
            endpoint,
            token: token.into(),
            pool: conn::Pool::default(),
        }
    }

    fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, String)],
    ) -> Result<Request<Full<Bytes>>, ClientError> {
        let host = match &self.endpoint {
            Endpoint::Tcp(authority) => authority.as_str(),
            Endpoint::Unix(_) => "localhost",
        };
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, host)
            .header(header::AUTHORIZATION, format!("Bearer {}", self.token));
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let body = match body {
            Some(json) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Full::new(Bytes::from(json))
            }
            None => Full::new(Bytes::new()),
        };
        request
            .body(body)
            .map_err(|e| ClientError::Http(e.to_string()))
    }

    /// Sends `body` (as JSON) and decodes the answer, a `T` or the API's
    /// error body.
    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<T, ClientError> {
        let body = match body {
            Some(body) => Some(serde_json::to_vec(body).map_err(ClientError::Encode)?),
            None => None,
        };
        let request = self.request(method, path, body, &[])?;
        let (response, connection) = self.pool.send(&self.endpoint, request).await?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| ClientError::Http(e.to_string()))?
            .to_bytes();
        // Read in full: the connection can take the next request.
        self.pool.give_back(connection);
        if !status.is_success() {
            return Err(ClientError::from_answer(status.as_u16(), &bytes));
        }
        // No body (204, or a 202 without one) reads as `null`.
        let bytes = if status == StatusCode::NO_CONTENT || bytes.is_empty() {
            Bytes::from_static(b"null")
        } else {
            bytes
        };
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// `POST /v1/sessions`: a [`CreateSession`](cortex_api::CreateSession),
    /// or any JSON with its fields.
    pub async fn create_session(&self, body: impl Serialize) -> Result<SessionView, ClientError> {
        self.call(Method::POST, "/v1/sessions", Some(&body)).await
    }

    /// `GET /v1/sessions/{id}`: the session resource. A 404 when it does
    /// not exist or belongs to another principal.
    pub async fn session(&self, id: &SessionId) -> Result<SessionView, ClientError> {
        self.call(Method::GET, &format!("/v1/sessions/{id}"), NO_BODY)
            .await
    }

    /// One page of the caller's sessions, newest first.
    pub async fn sessions(
        &self,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<SessionPage, ClientError> {
        let mut path = format!("/v1/sessions?limit={limit}");
        if let Some(cursor) = cursor {
            path.push_str("&cursor=");
            path.push_str(cursor);
        }
        self.call(Method::GET, &path, NO_BODY).await
    }

    /// Every session of the caller, newest first.
    pub async fn all_sessions(&self) -> Result<Vec<SessionView>, ClientError> {
        let mut all = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.sessions(200, cursor.as_deref()).await?;
            all.extend(page.sessions);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
    }

    /// `POST …/turns`: start a turn with the user's `message`; it runs in
    /// the background (follow it on [`Client::events`]). A 409 while a turn
    /// runs.
    pub async fn start_turn(
        &self,
        id: &SessionId,
        message: &str,
    ) -> Result<TurnCreated, ClientError> {
        self.start_turn_with(id, &CreateTurn::text(message)).await
    }

    /// [`Client::start_turn`] with the whole body: a message with images
    /// (a 422 `model_takes_no_images` when the session's model takes none,
    /// `invalid_image` for one that is not an image or is too large).
    pub async fn start_turn_with(
        &self,
        id: &SessionId,
        body: &CreateTurn,
    ) -> Result<TurnCreated, ClientError> {
        self.call(
            Method::POST,
            &format!("/v1/sessions/{id}/turns"),
            Some(body),
        )
        .await
    }

    /// `GET …/commands`: the session's custom commands and the command
    /// files that were rejected, with why.
    pub async fn commands(&self, id: &SessionId) -> Result<cortex_api::CommandList, ClientError> {
        self.call(Method::GET, &format!("/v1/sessions/{id}/commands"), NO_BODY)
            .await
    }

    /// `GET …/hooks`: the repository's hook files, each with its hooks and
    /// whether it is trusted at its content.
    pub async fn hooks(&self, id: &SessionId) -> Result<cortex_api::HookList, ClientError> {
        self.call(Method::GET, &format!("/v1/sessions/{id}/hooks"), NO_BODY)
            .await
    }

    /// `POST …/hooks/trust`: trust one file at the content it was shown
    /// with (a 409 `hooks_changed` when it changed since).
    pub async fn trust_hooks(
        &self,
        id: &SessionId,
        body: &cortex_api::TrustHooks,
    ) -> Result<cortex_api::HookList, ClientError> {
        self.call(
            Method::POST,
            &format!("/v1/sessions/{id}/hooks/trust"),
            Some(body),
        )
        .await
    }

    /// `POST …/commands`: run the custom command `name` with `arguments`
    /// as the next turn (follow it on [`Client::events`]). A 422
    /// `unknown_command` when there is none of that name, a 409 while a
    /// turn runs.
    pub async fn run_command(
        &self,
        id: &SessionId,
        name: &str,
        arguments: &str,
    ) -> Result<TurnCreated, ClientError> {
        self.call(
            Method::POST,
            &format!("/v1/sessions/{id}/commands"),
            Some(&cortex_api::RunCommand {
                name: name.to_owned(),
                arguments: arguments.to_owned(),
            }),
        )
        .await
    }

    /// `POST …/stop`: tell the running turn to stop; its `turn.stopped`
    /// event follows on the timeline. A 409 when no turn runs.
    pub async fn stop(&self, id: &SessionId) -> Result<StopAnswer, ClientError> {
        self.call(Method::POST, &format!("/v1/sessions/{id}/stop"), NO_BODY)
            .await
    }

    /// `PUT …/mode`: the mode the next turn runs in. A 409 while a turn runs.
    pub async fn set_mode(&self, id: &SessionId, mode: Mode) -> Result<SessionView, ClientError> {
        self.call(
            Method::PUT,
            &format!("/v1/sessions/{id}/mode"),
            Some(&SetMode { mode }),
        )
        .await
    }

    /// Hand MCP servers over to a live session between turns (409 while a
    /// turn runs); they start with its next turn. The names added.
    pub async fn add_mcp_servers(
        &self,
        id: &SessionId,
        servers: Vec<cortex_api::McpServerRequest>,
    ) -> Result<cortex_api::McpServersAdded, ClientError> {
        self.call(
            Method::POST,
            &format!("/v1/sessions/{id}/mcp_servers"),
            Some(&cortex_api::AddMcpServers {
                mcp_servers: servers,
            }),
        )
        .await
    }

    /// Go back to before a turn between turns (`body.turn_id` absent: the
    /// last): its files, its conversation or both. The paths created,
    /// changed and deleted; 409 `changed_outside` when files changed outside
    /// the session and `force` is not set (the error's message names them),
    /// 404 for an unknown turn or a pruned checkpoint.
    pub async fn rewind(&self, id: &SessionId, body: &Rewind) -> Result<RewindAnswer, ClientError> {
        self.call(
            Method::POST,
            &format!("/v1/sessions/{id}/rewind"),
            Some(body),
        )
        .await
    }

    /// Compact the session's history now; answers when it is done (409
    /// while a turn runs or when there is nothing to compact, 502 when the
    /// summariser failed; the history is unchanged then).
    pub async fn compact(&self, id: &SessionId) -> Result<CompactAnswer, ClientError> {
        self.call(Method::POST, &format!("/v1/sessions/{id}/compact"), NO_BODY)
            .await
    }

    /// Accept the proposed plan: Agent mode, todos seeded, and a turn that
    /// implements it (its id). 409 when no plan waits or a turn runs.
    pub async fn accept_plan(&self, id: &SessionId) -> Result<TurnCreated, ClientError> {
        self.verdict(id, "plan", None).await
    }

    /// Reject the proposed plan; a turn starts with `feedback` as its
    /// message, still in Plan mode. 409 when no plan waits or a turn runs.
    pub async fn reject_plan(
        &self,
        id: &SessionId,
        feedback: &str,
    ) -> Result<TurnCreated, ClientError> {
        self.verdict(id, "plan", Some(feedback)).await
    }

    /// Accept the proposed spec phase: a turn asking for the next phase,
    /// or (tasks) Agent mode, the spec's files written, todos seeded and a
    /// turn implementing them. 409 when no phase waits or a turn runs.
    pub async fn accept_spec(&self, id: &SessionId) -> Result<TurnCreated, ClientError> {
        self.verdict(id, "spec", None).await
    }

    /// Reject the proposed spec phase; a turn starts with `feedback` as its
    /// message, still in Spec mode. 409 when no phase waits or a turn runs.
    pub async fn reject_spec(
        &self,
        id: &SessionId,
        feedback: &str,
    ) -> Result<TurnCreated, ClientError> {
        self.verdict(id, "spec", Some(feedback)).await
    }

    /// `POST …/{subject}/accept`, or `…/reject` with the feedback.
    async fn verdict(
        &self,
        id: &SessionId,
        subject: &str,
        feedback: Option<&str>,
    ) -> Result<TurnCreated, ClientError> {
        match feedback {
            None => {
                self.call(
                    Method::POST,
                    &format!("/v1/sessions/{id}/{subject}/accept"),
                    NO_BODY,
                )
                .await
            }
            Some(feedback) => {
                self.call(
                    Method::POST,
                    &format!("/v1/sessions/{id}/{subject}/reject"),
                    Some(&RejectPlan {
                        feedback: feedback.to_owned(),
                    }),
                )
                .await
            }
        }
    }

    /// `DELETE`: stop the turn, close the guest.
    pub async fn close(&self, id: &SessionId) -> Result<(), ClientError> {
        self.call::<serde_json::Value>(Method::DELETE, &format!("/v1/sessions/{id}"), NO_BODY)
            .await
            .map(|_| ())
    }

    /// The session's events with `seq > after`, stored then live.
    pub async fn events(&self, id: &SessionId, after: u64) -> Result<EventStream, ClientError> {
        let request = self.request(
            Method::GET,
            &format!("/v1/sessions/{id}/events"),
            None,
            &[(events::LAST_EVENT_ID, after.to_string())],
        )?;
        // Its own connection: the stream holds it for as long as it is read.
        let response = conn::connect(&self.endpoint)
            .await?
            .send_request(request)
            .await
            .map_err(|e| ClientError::Http(e.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            let bytes = response
                .into_body()
                .collect()
                .await
                .map_err(|e| ClientError::Http(e.to_string()))?
                .to_bytes();
            return Err(ClientError::from_answer(status.as_u16(), &bytes));
        }
        Ok(EventStream::new(response.into_body()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse() {
        assert_eq!(
            Endpoint::parse("http://127.0.0.1:7433/").expect("tcp"),
            Endpoint::Tcp("127.0.0.1:7433".into())
        );
        assert_eq!(
            Endpoint::parse("unix:/run/c.sock").expect("unix"),
            Endpoint::Unix("/run/c.sock".into())
        );
        assert!(Endpoint::parse("https://x").is_err());
        assert!(Endpoint::parse("http://x/v1").is_err());
        assert!(Endpoint::parse("unix:").is_err());
    }
}
