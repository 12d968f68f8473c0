//! `/v1/sessions/{id}/commands`: the session's custom commands
//! (`cortex_core::commands`), and running one as a turn.
//!
//! The command files are read where the session's workspace is, below its
//! root without following links, and the user's own in the server's config
//! folder; the files a command includes are read later, in the guest. A command's text becomes the turn's message: it runs with the
//! session's mode, sandbox, approvals and model, nothing more.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use cortex_api::{CommandList, ErrorBody, RunCommand, TurnCreated};
use cortex_core::commands::{discover_commands_async, prompt_for};
use cortex_protocol::SessionId;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/sessions/{id}/commands", get(list).post(run))
}

/// The session's custom commands, and the command files that were rejected
/// with why.
#[utoipa::path(get, path = "/v1/sessions/{id}/commands",
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = CommandList),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<axum::Json<CommandList>, ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    let catalog = discover_commands_async(actor.extension_roots().clone()).await;
    Ok(axum::Json(CommandList {
        commands: catalog.infos(),
        rejected: catalog.rejected,
    }))
}

/// Run a custom command: its text, arguments substituted, is the new turn's
/// message; its `@path` files are read in the session's guest once attached
/// and given as the turn's context. Follow it on `…/events`.
#[utoipa::path(post, path = "/v1/sessions/{id}/commands", request_body = RunCommand,
    params(("id" = String, Path, description = "session id")),
    responses((status = 202, body = TurnCreated),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "a turn is already running"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody,
            description = "no such command (`unknown_command`), or a bad body")),
    security(("bearer" = [])))]
pub(crate) async fn run(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<RunCommand>,
) -> Result<(StatusCode, axum::Json<TurnCreated>), ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    let roots = actor.extension_roots().clone();
    let input = prompt_for(roots, body.name, body.arguments)
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "unknown_command",
                e.to_string(),
            )
        })?;
    let turn_id = actor.start_user_turn(input).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(TurnCreated { turn_id })))
}
