//! `/v1/sessions/{id}/shares`: the owner makes, lists and revokes read-only
//! share links of a session (see [`crate::shares`]).

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::shares::{DEFAULT_LIFE, MAX_LIFE, MAX_PER_SESSION, MIN_LIFE, ShareRefusal};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, post};
use cortex_api::{CreateShare, ErrorBody, ShareCreated, ShareList};
use cortex_protocol::SessionId;
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions/{id}/shares", post(create).get(list))
        .route("/sessions/{id}/shares/{share}", delete(revoke))
}

/// Make a read-only share link of the session: a token that reads this
/// session's resource and events only (403 `share_read_only` on any other
/// route, 404 for any other session), until it expires or is revoked.
#[utoipa::path(post, path = "/v1/sessions/{id}/shares", request_body = CreateShare,
    params(("id" = String, Path, description = "session id")),
    responses((status = 201, body = ShareCreated),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "a share link's token"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the session has 100 live shares"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "an expiry outside 60 s to 30 days")),
    security(("bearer" = [])))]
pub(crate) async fn create(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<CreateShare>,
) -> Result<(StatusCode, axum::Json<ShareCreated>), ApiError> {
    state.check_owner(&principal, &id).await?;
    let life = body
        .expires_in_secs
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_LIFE);
    if !(MIN_LIFE..=MAX_LIFE).contains(&life) {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            format!(
                "expires_in_secs must be between {} and {}",
                MIN_LIFE.as_secs(),
                MAX_LIFE.as_secs()
            ),
        ));
    }
    let (share, token) = state.shares.create(&id, life).map_err(|e| match e {
        ShareRefusal::TooMany => ApiError::conflict(format!(
            "the session has {MAX_PER_SESSION} live shares; revoke one first"
        )),
        ShareRefusal::NoRandomness(e) => ApiError::internal(format!("no randomness: {e}")),
    })?;
    let link = format!("/#share/{}/{}", id.as_str(), token);
    Ok((
        StatusCode::CREATED,
        axum::Json(ShareCreated {
            share: share.view(),
            token,
            link,
        }),
    ))
}

/// The session's live shares (their tokens are never shown again).
#[utoipa::path(get, path = "/v1/sessions/{id}/shares",
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = ShareList),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "a share link's token"),
        (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<axum::Json<ShareList>, ApiError> {
    state.check_owner(&principal, &id).await?;
    let shares = state
        .shares
        .of_session(&id)
        .iter()
        .map(|s| s.view())
        .collect();
    Ok(axum::Json(ShareList { shares }))
}

/// Revoke a share: its token stops working at once (a stream it has open
/// ends within a heartbeat).
#[utoipa::path(delete, path = "/v1/sessions/{id}/shares/{share}",
    params(("id" = String, Path, description = "session id"),
        ("share" = String, Path, description = "the share's id")),
    responses((status = 204, description = "revoked"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "a share link's token"),
        (status = 404, body = ErrorBody, description = "no such session or share")),
    security(("bearer" = [])))]
pub(crate) async fn revoke(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path((id, share)): Path<(SessionId, String)>,
) -> Result<StatusCode, ApiError> {
    state.check_owner(&principal, &id).await?;
    if !state.shares.revoke(&id, &share) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no share `{share}` of this session"),
        ));
    }
    Ok(StatusCode::NO_CONTENT)
}
