//! `/v1/sessions/{id}/goal`: the session's long-horizon goal. `PUT` sets it
//! and starts its first turn when none runs, `GET` shows it, `DELETE`
//! clears it, `POST …/goal/pause` and `POST …/goal/resume` pause it and
//! continue it from its stored steps. While a turn runs, set, pause and
//! clear are applied when it ends (202).

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::goal_driver::{GoalOp, GoalOpDone};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use cortex_api::{ErrorBody, GoalAnswer, GoalView, SetGoal};
use cortex_protocol::{Goal, GoalBudget, SessionId};
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions/{id}/goal", get(show).put(set).delete(clear))
        .route("/sessions/{id}/goal/pause", post(pause))
        .route("/sessions/{id}/goal/resume", post(resume))
}

impl AppState {
    /// The session's goal: from its actor when it is live, else folded
    /// from its stored events. The caller has checked the owner.
    pub(crate) async fn goal(&self, id: &SessionId) -> Result<Option<Goal>, ApiError> {
        if let Some(handle) = self.live(id) {
            return Ok(handle.goal());
        }
        let events = self.store.events(id, 0).await?;
        Ok(cortex_core::stored_goal(&events))
    }

    /// The goal after a control, or the 409 saying there is none.
    async fn goal_now(&self, id: &SessionId) -> Result<Goal, ApiError> {
        self.goal(id)
            .await?
            .ok_or_else(|| ApiError::new(StatusCode::CONFLICT, "no_goal", "the goal was cleared"))
    }
}

/// A budget of zero would pause the goal before it starts.
fn check_budget(budget: &GoalBudget) -> Result<(), ApiError> {
    let zero = [
        ("turns", budget.turns.map(u64::from)),
        ("tokens", budget.tokens),
        ("minutes", budget.minutes.map(u64::from)),
    ]
    .into_iter()
    .find(|(_, value)| *value == Some(0));
    match zero {
        Some((name, _)) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            format!("budget.{name} must be at least 1 (leave it out for its default)"),
        )),
        None => Ok(()),
    }
}

/// Set (or replace) the goal. It starts active; when no turn runs, its
/// first turn starts now (the model breaks the objective into steps) and
/// the harness continues it turn after turn until it completes or pauses.
/// Every goal is bounded: a budget limit left out takes its default (20
/// turns, 2,000,000 tokens, 120 minutes), which the answer shows.
#[utoipa::path(put, path = "/v1/sessions/{id}/goal", request_body = SetGoal,
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = GoalAnswer, description = "set; `turn_id` is its first turn"),
        (status = 202, body = GoalAnswer,
            description = "a turn is running: the goal is set when it ends"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "a compaction is running"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody,
            description = "empty objective, a zero budget, unknown field")),
    security(("bearer" = [])))]
pub(crate) async fn set(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<SetGoal>,
) -> Result<(StatusCode, axum::Json<GoalAnswer>), ApiError> {
    let objective = body.objective.trim().to_owned();
    if objective.is_empty() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            "objective must not be empty",
        ));
    }
    let budget = body.budget.unwrap_or_default();
    check_budget(&budget)?;
    // The core applies the same defaults; applied here too so that a
    // deferred answer shows the budget the goal will have.
    let budget = budget.or_defaults();
    let actor = state.owned_actor(&principal, &id).await?;
    let op = GoalOp::Set {
        objective: objective.clone(),
        budget,
    };
    let (status, goal, turn_id) = match actor.goal_op(op).await? {
        // What the goal will be once the running turn ends.
        GoalOpDone::Deferred => (StatusCode::ACCEPTED, Goal::new(objective, budget), None),
        GoalOpDone::Started(turn) => (StatusCode::OK, state.goal_now(&id).await?, Some(turn)),
        GoalOpDone::Done => (StatusCode::OK, state.goal_now(&id).await?, None),
    };
    let goal = GoalView::from(&goal);
    Ok((status, axum::Json(GoalAnswer { goal, turn_id })))
}

/// The session's goal: objective, steps, status (and why it is paused),
/// budget, evidence and what it has used.
#[utoipa::path(get, path = "/v1/sessions/{id}/goal",
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = GoalView),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such session (`not_found`) or no goal (`no_goal`)")),
    security(("bearer" = [])))]
pub(crate) async fn show(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<axum::Json<GoalView>, ApiError> {
    state.check_owner(&principal, &id).await?;
    let goal = state.goal(&id).await?.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "no_goal",
            "this session has no goal (PUT …/goal sets one)",
        )
    })?;
    Ok(axum::Json(GoalView::from(&goal)))
}

/// Clear the goal (`goal.cleared`); no continuation follows.
#[utoipa::path(delete, path = "/v1/sessions/{id}/goal",
    params(("id" = String, Path, description = "session id")),
    responses((status = 204, description = "cleared"),
        (status = 202, description = "a turn is running: the goal is cleared when it ends"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "no goal (`no_goal`) or a compaction is running")),
    security(("bearer" = [])))]
pub(crate) async fn clear(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<StatusCode, ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    if actor.goal().is_none() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "no_goal",
            "this session has no goal",
        ));
    }
    match actor.goal_op(GoalOp::Clear).await? {
        GoalOpDone::Deferred => Ok(StatusCode::ACCEPTED),
        _ => Ok(StatusCode::NO_CONTENT),
    }
}

/// Pause the goal (`goal.paused {reason: user}`): no continuation turn
/// starts until it is resumed.
#[utoipa::path(post, path = "/v1/sessions/{id}/goal/pause",
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = GoalView, description = "paused"),
        (status = 202, body = GoalView,
            description = "a turn is running: the goal pauses when it ends"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "no goal (`no_goal`), a goal that is not active \
                (`goal_not_active`), or a compaction is running")),
    security(("bearer" = [])))]
pub(crate) async fn pause(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<(StatusCode, axum::Json<GoalView>), ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    // Checked now even when the pause waits for the turn, so the answer
    // says whether there is anything to pause.
    match actor.goal() {
        None => return Err(cortex_core::GoalError::NoGoal.into()),
        Some(goal) if !goal.is_active() => {
            return Err(cortex_core::GoalError::NotActive(goal.status.as_str()).into());
        }
        Some(_) => {}
    }
    let status = match actor.goal_op(GoalOp::Pause).await? {
        GoalOpDone::Deferred => StatusCode::ACCEPTED,
        _ => StatusCode::OK,
    };
    let goal = state.goal_now(&id).await?;
    Ok((status, axum::Json(GoalView::from(&goal))))
}

/// Resume a paused goal (`goal.resumed`): a continuation turn starts now
/// from the stored steps, and the harness goes on as before.
#[utoipa::path(post, path = "/v1/sessions/{id}/goal/resume",
    params(("id" = String, Path, description = "session id")),
    responses((status = 202, body = GoalAnswer),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "nothing to resume (`no_goal`, `goal_not_paused`) or a turn is \
                running (`conflict`)")),
    security(("bearer" = [])))]
pub(crate) async fn resume(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<(StatusCode, axum::Json<GoalAnswer>), ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    let turn_id = match actor.goal_op(GoalOp::Resume).await? {
        GoalOpDone::Started(turn) => Some(turn),
        _ => None,
    };
    let goal = GoalView::from(&state.goal_now(&id).await?);
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(GoalAnswer { goal, turn_id }),
    ))
}
