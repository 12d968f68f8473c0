//! `/v1/sessions`: create, list (the caller's, paged), show, close.

use crate::auth::{Principal, Reader};
use crate::error::ApiError;
use crate::extract::{Json, Path, Query};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use cortex_api::{CreateSession, ErrorBody, GoalSummary, ListQuery, SessionPage, SessionView};
use cortex_protocol::{Mode, SandboxPolicy, SessionId};
use std::sync::Arc;

const DEFAULT_PAGE: u32 = 50;
const MAX_PAGE: u32 = 200;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions", get(list).post(create))
        .route("/sessions/{id}", get(show).delete(close))
}

/// Create a session on a repository of the server's machine.
#[utoipa::path(post, path = "/v1/sessions", request_body = CreateSession,
    responses(
        (status = 201, body = SessionView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "full-access without the server's --allow-full-access"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "unknown field, wrong type, missing repository, a repository holding the server's own folders, unknown model, or an invalid MCP server")),
    security(("bearer" = [])))]
pub(crate) async fn create(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Json(body): Json<CreateSession>,
) -> Result<(StatusCode, axum::Json<SessionView>), ApiError> {
    let sandbox = body
        .sandbox
        .unwrap_or_default()
        .resolve(state.config.default_workspace);
    if sandbox.policy == SandboxPolicy::FullAccess && !state.config.allow_full_access {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "full_access_refused",
            "this server refuses full-access sessions (no sandbox); its operator can allow \
             them with `cortex serve --allow-full-access`"
                .to_owned(),
        ));
    }
    let mcp_servers = super::mcp::client_mcp_servers(&state, &body.mcp_servers)?;
    let view = state
        .create(
            &principal,
            body.repository,
            body.mode.unwrap_or(Mode::Agent),
            body.model.as_deref(),
            sandbox,
            body.stop_rule.unwrap_or_default(),
            mcp_servers,
        )
        .await?;
    if let Some(policy) = body.approval {
        let actor = state.owned_actor(&principal, &view.id).await?;
        actor.approvals().set_policy(policy).await?;
    }
    Ok((StatusCode::CREATED, axum::Json(view)))
}

/// The caller's sessions, newest first.
#[utoipa::path(get, path = "/v1/sessions", params(ListQuery),
    responses((status = 200, body = SessionPage),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Query(query): Query<ListQuery>,
) -> Result<axum::Json<SessionPage>, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    let cursor = query.cursor.map(SessionId);
    // One more than asked tells whether there is a next page.
    let mut records = state
        .store
        .list_owned(&principal.0, cursor.as_ref(), limit as usize + 1)
        .await
        .map_err(|e| match e {
            cortex_store::StoreError::NoSession(_) => {
                ApiError::bad_request("unknown cursor (pass next_cursor of a previous page)")
            }
            other => other.into(),
        })?;
    let more = records.len() > limit as usize;
    records.truncate(limit as usize);
    let next_cursor = more
        .then(|| records.last().map(|r| r.id.0.clone()))
        .flatten();
    let sessions = records.into_iter().map(|r| state.view(r)).collect();
    Ok(axum::Json(SessionPage {
        sessions,
        next_cursor,
    }))
}

/// The session: its owner's, or a share link's of this session.
#[utoipa::path(get, path = "/v1/sessions/{id}",
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = SessionView),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn show(
    State(state): State<Arc<AppState>>,
    reader: Reader,
    Path(id): Path<SessionId>,
) -> Result<axum::Json<SessionView>, ApiError> {
    let record = match &reader {
        Reader::Owner(principal) => state.authorize(principal, &id).await?,
        Reader::Share(..) => {
            reader.check(&state, &id).await?;
            state
                .store
                .get_session(&id)
                .await?
                .ok_or_else(|| ApiError::no_session(id.as_str()))?
        }
    };
    let mut view = state.view(record);
    if view.goal.is_none() {
        view.goal = state.goal(&id).await?.as_ref().map(GoalSummary::from);
    }
    view.checkpoint_bytes = state.checkpoint_bytes(&id).await;
    Ok(axum::Json(view))
}

/// Close the session: stop its turn, close its guest. The timeline stays
/// (it is append-only); a later turn reopens the session.
#[utoipa::path(delete, path = "/v1/sessions/{id}",
    params(("id" = String, Path, description = "session id")),
    responses((status = 204, description = "closed"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn close(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<StatusCode, ApiError> {
    state.check_owner(&principal, &id).await?;
    state.close(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}
