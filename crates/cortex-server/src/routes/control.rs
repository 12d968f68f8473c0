//! Session controls between turns: `PUT …/mode`, `POST …/compact`.

use crate::api::{SessionView, SetMode};
use crate::auth::Principal;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{post, put};
use cortex_protocol::SessionId;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions/{id}/mode", put(set_mode))
        .route("/sessions/{id}/compact", post(compact))
}

/// Switch mode between turns (a `mode.changed` event; the guest is told).
#[utoipa::path(put, path = "/v1/sessions/{id}/mode", request_body = SetMode,
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = SessionView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "a turn is running"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn set_mode(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<SetMode>,
) -> Result<axum::Json<SessionView>, ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    actor.set_mode(body.mode).await?;
    let record = state.authorize(&principal, &id).await?;
    Ok(axum::Json(state.view(record)))
}

/// Not implemented yet: history compaction does not exist in the harness.
#[utoipa::path(post, path = "/v1/sessions/{id}/compact",
    params(("id" = String, Path, description = "session id")),
    responses((status = 501, body = ErrorBody, description = "compaction is not implemented yet"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn compact(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<StatusCode, ApiError> {
    state.check_owner(&principal, &id).await?;
    Err(ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "not_implemented",
        "history compaction is not implemented yet; the session is unchanged",
    ))
}
