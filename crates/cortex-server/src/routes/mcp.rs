//! MCP servers a client hands over: `POST /v1/sessions/{id}/mcp_servers`
//! (an editor's servers at ACP `session/load`), and the check both it and
//! session creation make of each server.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use cortex_api::{AddMcpServers, ErrorBody, McpServerRequest, McpServersAdded};
use cortex_core::McpServerSpec;
use cortex_protocol::SessionId;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/sessions/{id}/mcp_servers", post(add))
}

/// Add MCP servers to a live session between turns; they start with its
/// next turn, and the servers it already runs go on untouched.
#[utoipa::path(post, path = "/v1/sessions/{id}/mcp_servers", request_body = AddMcpServers,
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = McpServersAdded),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody,
            description = "an HTTP server on a server that refuses them (`mcp_url_refused`)"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "a turn or a compaction is running"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "an invalid server (`bad_mcp_server`)")),
    security(("bearer" = [])))]
pub(crate) async fn add(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<AddMcpServers>,
) -> Result<axum::Json<McpServersAdded>, ApiError> {
    let specs = client_mcp_servers(&state, &body.mcp_servers)?;
    let actor = state.owned_actor(&principal, &id).await?;
    let added = actor.add_mcp(specs).await?;
    Ok(axum::Json(McpServersAdded { added }))
}

/// The client's MCP servers as specs (a name made valid first); an
/// invalid one is a 422 that names it. An HTTP server is reached from this
/// process, outside every sandbox, so only a server that allows
/// full-access sessions takes one from a client (403 otherwise).
pub(crate) fn client_mcp_servers(
    state: &AppState,
    servers: &[McpServerRequest],
) -> Result<Vec<McpServerSpec>, ApiError> {
    servers
        .iter()
        .map(|server| {
            let name = cortex_core::mcp_server_name(&server.name);
            let spec = match &server.url {
                Some(_) if !state.config.allow_full_access => {
                    return Err(ApiError::new(
                        StatusCode::FORBIDDEN,
                        "mcp_url_refused",
                        format!(
                            "MCP server `{name}`: this server does not connect to MCP servers a \
                             client names by URL (they run outside the sandbox); its operator \
                             can allow them with `cortex serve --allow-full-access`"
                        ),
                    ));
                }
                Some(url) if server.command.is_empty() => {
                    McpServerSpec::from_client_http(&name, url, server.headers.clone())
                }
                Some(_) => {
                    return Err(ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "bad_mcp_server",
                        format!("MCP server `{name}` has both `command` and `url`; give one"),
                    ));
                }
                None => McpServerSpec::from_client(
                    &name,
                    &server.command,
                    server.args.clone(),
                    server.env.clone(),
                ),
            };
            spec.map_err(|e| {
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "bad_mcp_server",
                    e.to_string(),
                )
            })
        })
        .collect()
}
