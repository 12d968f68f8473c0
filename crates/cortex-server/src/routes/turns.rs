//! `/v1/sessions/{id}/turns` and `/stop`: start a turn (asynchronously), stop
//! the running one.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use cortex_api::{CreateTurn, ErrorBody, StopAnswer, TurnCreated};
use cortex_protocol::SessionId;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions/{id}/turns", post(create))
        .route("/sessions/{id}/stop", post(stop))
}

/// Start a turn. It runs in the background; follow it on `…/events`.
#[utoipa::path(post, path = "/v1/sessions/{id}/turns", request_body = CreateTurn,
    params(("id" = String, Path, description = "session id")),
    responses((status = 202, body = TurnCreated),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "a turn is already running"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn create(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<CreateTurn>,
) -> Result<(StatusCode, axum::Json<TurnCreated>), ApiError> {
    if body.message.trim().is_empty() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            "message must not be empty",
        ));
    }
    let actor = state.owned_actor(&principal, &id).await?;
    let turn_id = actor.start_turn(body.message).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(TurnCreated { turn_id })))
}

/// Stop the running turn, as Ctrl-C does: running commands are killed and
/// unfinished calls answered "stopped by user".
#[utoipa::path(post, path = "/v1/sessions/{id}/stop",
    params(("id" = String, Path, description = "session id")),
    responses((status = 202, body = StopAnswer),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "no turn is running")),
    security(("bearer" = [])))]
pub(crate) async fn stop(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<(StatusCode, axum::Json<StopAnswer>), ApiError> {
    state.check_owner(&principal, &id).await?;
    let actor = state
        .live(&id)
        .ok_or_else(|| ApiError::conflict("no turn is running in this session"))?;
    let turn_id = actor.stop().await?;
    Ok((StatusCode::ACCEPTED, axum::Json(StopAnswer { turn_id })))
}
