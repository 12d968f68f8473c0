//! `/goal` against the API: set, pause, resume or clear the goal. What
//! changed arrives as `goal.*` events; only what the events cannot say (a
//! control that waits for the running turn) or a refusal comes back here.

use crate::app::{GoalCommand, Outcome};
use cortex_client::{Client, ClientError};
use cortex_protocol::{GoalStatus, SessionId};

/// Carry out `command` on session `id`: a passing note when the control
/// waits for the running turn, nothing when the events will say it, or the
/// API's refusal (which the caller reports).
pub(super) async fn run(
    client: &Client,
    id: &SessionId,
    command: GoalCommand,
) -> Result<Option<Outcome>, ClientError> {
    let waits = |what: &str| {
        Some(Outcome::Note(format!(
            "the goal {what} when this turn ends"
        )))
    };
    let answer = match command {
        GoalCommand::Set(objective) => match client.set_goal(id, &objective, None).await {
            Ok(answer) if answer.turn_id.is_none() => return Ok(waits("is set")),
            other => other.map(|_| ()),
        },
        GoalCommand::Pause => match client.pause_goal(id).await {
            Ok(goal) if goal.status == GoalStatus::Active => return Ok(waits("pauses")),
            other => other.map(|_| ()),
        },
        GoalCommand::Resume => client.resume_goal(id).await.map(|_| ()),
        GoalCommand::Clear => client.clear_goal(id).await,
    };
    answer.map(|()| None)
}
