//! The session actor's part in a goal: the user's goal controls (set,
//! pause, resume, clear) and, after every turn, whether the harness starts
//! the next one by itself (a continuation turn).
//!
//! The core decides (`Session::after_turn`); the actor only acts on it, so
//! a goal is driven by whichever server has the session live. A control
//! that arrives while a turn runs cannot reach the session (it is on the
//! turn's task): set, pause and clear wait and are applied, in order, when
//! the turn ends, before deciding whether to continue. Resume needs the
//! session idle.

use crate::error::ApiError;
use axum::http::StatusCode;
use cortex_core::{GoalError, Session, TurnOutcome};
use cortex_protocol::{GoalBudget, PauseReason, TurnId};

/// A user's goal control.
#[derive(Debug, Clone)]
pub(crate) enum GoalOp {
    Set {
        objective: String,
        budget: GoalBudget,
    },
    Pause,
    Resume,
    Clear,
}

/// How the actor carried out a [`GoalOp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GoalOpDone {
    /// Recorded; no turn started.
    Done,
    /// Recorded, and this turn started for the goal.
    Started(TurnId),
    /// A turn is running: applied when it ends.
    Deferred,
}

/// The turn the actor starts next.
pub(crate) enum NextTurn {
    /// A turn with this message (a goal's first turn, a user's message
    /// with its images).
    Message(cortex_core::UserTurn),
    /// The harness's own continuation turn of the active goal.
    Continuation,
}

/// Apply `op` to the idle session; the turn it asks for, if any.
pub(crate) async fn apply(session: &mut Session, op: GoalOp) -> Result<Option<NextTurn>, ApiError> {
    let next = match op {
        GoalOp::Set { objective, budget } => Some(NextTurn::Message(cortex_core::UserTurn::text(
            session.set_goal(&objective, budget).await?,
        ))),
        GoalOp::Pause => {
            session.pause_goal(PauseReason::User).await?;
            None
        }
        GoalOp::Resume => {
            session.resume_goal().await?;
            Some(NextTurn::Continuation)
        }
        GoalOp::Clear => {
            session.clear_goal().await?;
            None
        }
    };
    Ok(next)
}

/// After a turn ended with `outcome`: the goal's bookkeeping (a pause for a
/// stop, a failure, a spent budget or a stall), then the controls that
/// waited for the turn; the turn to start next, if any. Errors here reach
/// no client (their requests were answered), so they are logged.
pub(crate) async fn after_turn(
    session: &mut Session,
    outcome: &TurnOutcome,
    waiting: Vec<GoalOp>,
) -> Option<NextTurn> {
    let mut next = match session.after_turn(outcome).await {
        Ok(prompt) => prompt.map(|_| NextTurn::Continuation),
        Err(e) => {
            tracing::error!(session = %session.id(), "the goal could not be updated: {e}");
            None
        }
    };
    for op in waiting {
        match apply(session, op).await {
            // A new goal's first turn replaces any continuation.
            Ok(Some(turn)) => next = Some(turn),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(session = %session.id(), "a goal control that waited for the turn: {}", e.message)
            }
        }
    }
    // A pause or clear that waited wins over continuing.
    let active = session.goal().is_some_and(|g| g.is_active());
    match next {
        Some(NextTurn::Continuation) if !active => None,
        next => next,
    }
}

/// Whether `op` may wait for the running turn; the refusal otherwise.
pub(crate) fn may_wait(op: &GoalOp) -> Result<(), ApiError> {
    match op {
        GoalOp::Resume => Err(ApiError::conflict(
            "a turn is running in this session; resume the goal when it ends \
             (or POST …/stop first)",
        )),
        _ => Ok(()),
    }
}

impl From<GoalError> for ApiError {
    fn from(e: GoalError) -> Self {
        let (status, code) = match &e {
            GoalError::Core(_) => return core_error(e),
            GoalError::NoGoal => (StatusCode::CONFLICT, "no_goal"),
            GoalError::NotActive(_) => (StatusCode::CONFLICT, "goal_not_active"),
            GoalError::NotPaused(_) => (StatusCode::CONFLICT, "goal_not_paused"),
            GoalError::EmptyObjective => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
        };
        ApiError::new(status, code, e.to_string())
    }
}

fn core_error(e: GoalError) -> ApiError {
    match e {
        GoalError::Core(core) => core.into(),
        other => ApiError::internal(other.to_string()),
    }
}
