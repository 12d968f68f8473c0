//! The user's verdict on the proposed plan: `POST …/plan/accept` and
//! `POST …/plan/reject`. Either starts a turn (202 with its id).

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
        .route("/sessions/{id}/plan/accept", post(accept))
        .route("/sessions/{id}/plan/reject", post(reject))
}

/// Accept the proposed plan: the session switches to Agent, its todo list is
/// seeded from the plan's steps (`todo.updated`), `plan.accepted` is
/// recorded, and a turn implementing the plan starts.
#[utoipa::path(post, path = "/v1/sessions/{id}/plan/accept",
    params(("id" = String, Path, description = "session id")),
    responses((status = 202, body = TurnCreated),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "a turn is running (`conflict`) or no plan waits for a verdict \
                (`no_proposed_plan`)")),
    security(("bearer" = [])))]
pub(crate) async fn accept(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<(StatusCode, axum::Json<TurnCreated>), ApiError> {
    decide(&state, &principal, &id, Proposal::Plan, PlanVerdict::Accept).await
}

/// Reject the proposed plan: `plan.rejected` is recorded, the session stays
/// in Plan mode, and a turn starts with the feedback as its message.
#[utoipa::path(post, path = "/v1/sessions/{id}/plan/reject", request_body = RejectPlan,
    params(("id" = String, Path, description = "session id")),
    responses((status = 202, body = TurnCreated),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "a turn is running (`conflict`) or no plan waits for a verdict \
                (`no_proposed_plan`)"),
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
    decide(&state, &principal, &id, Proposal::Plan, verdict).await
}

/// Hand the user's verdict on a plan or spec phase to the session's actor:
/// 202 with the turn it starts.
pub(crate) async fn decide(
    state: &Arc<AppState>,
    principal: &Principal,
    id: &SessionId,
    on: Proposal,
    verdict: PlanVerdict,
) -> Result<(StatusCode, axum::Json<TurnCreated>), ApiError> {
    let actor = state.owned_actor(principal, id).await?;
    let turn_id = actor.verdict(on, verdict).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(TurnCreated { turn_id })))
}
