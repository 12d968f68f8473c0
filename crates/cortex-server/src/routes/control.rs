//! Session controls between turns: `PUT …/mode`, `POST …/compact`.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::routing::{post, put};
use cortex_api::{CompactAnswer, ErrorBody, SessionView, SetMode};
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

/// Compact the history now: the older part is replaced by a summary (written
/// by the session's model) plus the keep-set, the last messages are kept.
/// Answers when it is done; `compaction.*` events are on the timeline. On any
/// failure the history is unchanged.
#[utoipa::path(post, path = "/v1/sessions/{id}/compact",
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = CompactAnswer),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "a turn or a compaction is running (`conflict`), or the history \
                has nothing older than what a compaction keeps (`nothing_to_compact`)"),
        (status = 422, body = ErrorBody, description = "the session's model cannot be built"),
        (status = 502, body = ErrorBody,
            description = "the summariser failed or returned nothing (`compaction_failed`); \
                the history is unchanged")),
    security(("bearer" = [])))]
pub(crate) async fn compact(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<axum::Json<CompactAnswer>, ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    let report = actor.compact().await?;
    Ok(axum::Json(report))
}
