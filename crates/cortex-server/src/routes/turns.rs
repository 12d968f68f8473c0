//! `/v1/sessions/{id}/turns` and `/stop`: start a turn (asynchronously), stop
//! the running one.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use cortex_api::{CreateTurn, ErrorBody, StopAnswer, TurnAttachment, TurnCreated};
use cortex_core::UserTurn;
use cortex_protocol::SessionId;
use std::sync::Arc;

pub(crate) fn routes(server_limit: usize) -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/sessions/{id}/turns",
            post(create).layer(DefaultBodyLimit::max(body_limit(server_limit))),
        )
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
        (status = 422, body = ErrorBody, description = "an empty message, an attachment that \
            is not an image within the limits (`invalid_image`), or images for a model that \
            takes none (`model_takes_no_images`)")),
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
    // The route takes bodies large enough for images; the text alone is
    // held to the server's limit.
    if body.message.len() > state.config.body_limit {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!(
                "the message is over the {} byte limit",
                state.config.body_limit
            ),
        ));
    }
    let images = decoded(&body.attachments)?;
    let actor = state.owned_actor(&principal, &id).await?;
    let turn_id = actor
        .start_user_turn(UserTurn {
            message: body.message,
            images,
            includes: Vec::new(),
        })
        .await?;
    Ok((StatusCode::ACCEPTED, axum::Json(TurnCreated { turn_id })))
}

/// The route's body limit: the server's, plus room for the most image
/// bytes one message may carry, as base64.
pub(crate) fn body_limit(server_limit: usize) -> usize {
    let images = cortex_core::images::MAX_IMAGES_TOTAL_BYTES;
    server_limit.saturating_add(images / 3 * 4 + 1024)
}

/// The attachments' bytes; a 422 `invalid_image` for one that is not
/// base64.
fn decoded(attachments: &[TurnAttachment]) -> Result<Vec<Vec<u8>>, ApiError> {
    attachments
        .iter()
        .enumerate()
        .map(|(i, a)| {
            a.bytes().map_err(|e| {
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "invalid_image",
                    format!("attachment {} is not base64: {e}", i + 1),
                )
            })
        })
        .collect()
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
