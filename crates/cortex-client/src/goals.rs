//! The goal routes (`/v1/sessions/{id}/goal`): set, show, pause, resume
//! and clear the session's long-horizon goal.

use crate::{Client, ClientError, NO_BODY};
use cortex_api::{GoalAnswer, GoalView, SetGoal};
use cortex_protocol::{GoalBudget, SessionId};
use http::Method;

impl Client {
    /// Set (or replace) the goal. When no turn runs its first turn starts
    /// (`turn_id`); otherwise it is set when the running turn ends.
    pub async fn set_goal(
        &self,
        id: &SessionId,
        objective: &str,
        budget: Option<GoalBudget>,
    ) -> Result<GoalAnswer, ClientError> {
        let body = SetGoal {
            objective: objective.to_owned(),
            budget,
        };
        self.call(Method::PUT, &goal_path(id, ""), Some(&body))
            .await
    }

    /// The goal (404 `no_goal` without one).
    pub async fn goal(&self, id: &SessionId) -> Result<GoalView, ClientError> {
        self.call(Method::GET, &goal_path(id, ""), NO_BODY).await
    }

    /// Pause the goal: no continuation starts until it is resumed (while a
    /// turn runs, it pauses when the turn ends).
    pub async fn pause_goal(&self, id: &SessionId) -> Result<GoalView, ClientError> {
        self.call(Method::POST, &goal_path(id, "/pause"), NO_BODY)
            .await
    }

    /// Resume a paused goal: a continuation turn starts (`turn_id`). 409
    /// when nothing is paused or a turn runs.
    pub async fn resume_goal(&self, id: &SessionId) -> Result<GoalAnswer, ClientError> {
        self.call(Method::POST, &goal_path(id, "/resume"), NO_BODY)
            .await
    }

    /// Clear the goal.
    pub async fn clear_goal(&self, id: &SessionId) -> Result<(), ClientError> {
        self.call::<serde_json::Value>(Method::DELETE, &goal_path(id, ""), NO_BODY)
            .await
            .map(|_| ())
    }
}

fn goal_path(id: &SessionId, tail: &str) -> String {
    format!("/v1/sessions/{id}/goal{tail}")
}
