//! The user's verdict on the proposed spec phase: `POST …/spec/accept` and
//! `POST …/spec/reject`. Either starts a turn (202 with its id).

use super::plan::decide;
use crate::actor::{PlanVerdict, Proposal};
use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use cortex_api::{ErrorBody, RejectPlan, TurnCreated};
use cortex_protocol::SessionId;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions/{id}/spec/accept", post(accept))
        .route("/sessions/{id}/spec/reject", post(reject))
}

/// Accept the proposed spec phase (`spec.accepted`). Requirements or
/// design: a turn starts asking the model for the next phase, still in
/// Spec. Tasks: the session switches to Agent, its todo list is seeded from
/// the tasks, and a turn starts that first writes `specs/<slug>/…` through
/// the guest (`spec.written`), then implements them.
#[utoipa::path(post, path = "/v1/sessions/{id}/spec/accept",
    params(("id" = String, Path, description = "session id")),
    responses((status = 202, body = TurnCreated),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "a turn is running (`conflict`) or no spec phase waits for a verdict \
                (`no_proposed_spec`)")),
    security(("bearer" = [])))]
pub(crate) async fn accept(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<(StatusCode, axum::Json<TurnCreated>), ApiError> {
    decide(&state, &principal, &id, Proposal::Spec, PlanVerdict::Accept).await
}

/// Reject the proposed spec phase: `spec.rejected` is recorded, the session
/// stays in Spec mode, and a turn starts with the feedback as its message.
/// Nothing is written.
#[utoipa::path(post, path = "/v1/sessions/{id}/spec/reject", request_body = RejectPlan,
    params(("id" = String, Path, description = "session id")),
    responses((status = 202, body = TurnCreated),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "a turn is running (`conflict`) or no spec phase waits for a verdict \
                (`no_proposed_spec`)"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "empty feedback, unknown field")),
    security(("bearer" = [])))]
pub(crate) async fn reject(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<RejectPlan>,
) -> Result<(StatusCode, axum::Json<TurnCreated>), ApiError> {
    let verdict = PlanVerdict::Reject {
        feedback: body.feedback,
    };
    decide(&state, &principal, &id, Proposal::Spec, verdict).await
}
