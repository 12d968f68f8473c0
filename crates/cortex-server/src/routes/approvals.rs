//! The session's approval policy and the user's answers:
//! `PUT …/approval` and `POST …/approvals/{call_id}`. Both reach the live
//! session's shared approval state directly, so they work while its turn
//! waits for the answer.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{post, put};
use cortex_api::{AnswerApproval, ApprovalAnswered, ApprovalState, ErrorBody, SetApproval};
use cortex_core::{ApprovalError, Approvals};
use cortex_protocol::SessionId;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions/{id}/approval", put(set_policy))
        .route("/sessions/{id}/approvals/{call_id}", post(answer))
}

fn state_of(approvals: &Approvals) -> ApprovalState {
    ApprovalState {
        approval: approvals.policy(),
        pending: approvals.pending().into_iter().map(|c| c.0).collect(),
    }
}

/// Set the session's approval policy (`approval.policy`). Allowed while a
/// turn runs; a call already waiting keeps waiting for its answer.
#[utoipa::path(put, path = "/v1/sessions/{id}/approval", request_body = SetApproval,
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = ApprovalState),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn set_policy(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<SetApproval>,
) -> Result<axum::Json<ApprovalState>, ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    actor.approvals().set_policy(body.approval).await?;
    Ok(axum::Json(state_of(actor.approvals())))
}

/// Answer the approval request of `call_id`: `allow` runs the call once,
/// `deny` refuses it (the model reads the denial and the turn goes on),
/// `always` runs it and persists a rule. `approval.resolved` follows on the
/// timeline. The mode never changes.
#[utoipa::path(post, path = "/v1/sessions/{id}/approvals/{call_id}",
    request_body = AnswerApproval,
    params(("id" = String, Path, description = "session id"),
        ("call_id" = String, Path, description = "the call of the `approval.requested`")),
    responses((status = 200, body = ApprovalAnswered),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "no request of that call waits (`not_pending`)"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn answer(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path((id, call_id)): Path<(SessionId, String)>,
    Json(body): Json<AnswerApproval>,
) -> Result<axum::Json<ApprovalAnswered>, ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    actor
        .approvals()
        .answer(&call_id, body.decision)
        .map_err(|e| match e {
            ApprovalError::NotPending(_) => {
                ApiError::new(StatusCode::CONFLICT, "not_pending", e.to_string())
            }
            ApprovalError::Core(e) => e.into(),
        })?;
    Ok(axum::Json(ApprovalAnswered {
        call_id,
        decision: body.decision,
    }))
}
