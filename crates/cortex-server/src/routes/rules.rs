//! The caller's approval rules: `GET /v1/rules`, `DELETE /v1/rules/{id}`.
//! Rules are added by answering an approval with `always`; another
//! principal's rules are invisible (a 404, as for one that does not exist).

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::Path;
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get};
use cortex_api::{ErrorBody, RuleList};
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/rules", get(list))
        .route("/rules/{id}", delete(remove))
}

/// The caller's rules, oldest first.
#[utoipa::path(get, path = "/v1/rules",
    responses((status = 200, body = RuleList), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    principal: Principal,
) -> Result<axum::Json<RuleList>, ApiError> {
    let rules = state.store.rules(&principal.0).await?;
    Ok(axum::Json(RuleList { rules }))
}

/// Remove one of the caller's rules; the next matching call asks again.
#[utoipa::path(delete, path = "/v1/rules/{id}",
    params(("id" = String, Path, description = "rule id")),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn remove(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if state.store.delete_rule(&principal.0, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no rule `{id}`"),
        ))
    }
}
