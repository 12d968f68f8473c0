//! `/v1/sessions/{id}/processes`: the session's background commands (the
//! model's `bash` with `background: true`), listed and killed through the
//! session's shared `cortex_core::Background`, so both work while a turn
//! runs (a dev server outlives a stopped turn; the user ends it here).

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::Path;
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get};
use cortex_api::{ErrorBody, ProcessList};
use cortex_core::BackgroundError;
use cortex_protocol::{ProcessInfo, SessionId};
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions/{id}/processes", get(list))
        .route("/sessions/{id}/processes/{process}", delete(kill))
}

/// The session's background commands, running or ended, oldest first.
#[utoipa::path(get, path = "/v1/sessions/{id}/processes",
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = ProcessList),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<axum::Json<ProcessList>, ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    let processes = actor.background().list();
    Ok(axum::Json(ProcessList { processes }))
}

/// Kill one background command with its process group (recorded as
/// `process.ended`, `killed by the user`); one that already ended is left
/// as it is. Answers how it stands then.
#[utoipa::path(delete, path = "/v1/sessions/{id}/processes/{process}",
    params(("id" = String, Path, description = "session id"),
        ("process" = String, Path, description = "the command's id, e.g. `bg1`")),
    responses((status = 200, body = ProcessInfo),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 502, body = ErrorBody, description = "the guest did not take the kill")),
    security(("bearer" = [])))]
pub(crate) async fn kill(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path((id, process)): Path<(SessionId, String)>,
) -> Result<axum::Json<ProcessInfo>, ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    match actor.background().kill_by_user(&process).await {
        Ok(info) => Ok(axum::Json(info)),
        Err(e @ BackgroundError::Unknown { .. }) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            e.to_string(),
        )),
        Err(e @ BackgroundError::Guest(_)) => Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "guest_failed",
            e.to_string(),
        )),
        Err(BackgroundError::Core(e)) => Err((*e).into()),
    }
}
