//! Continuation: after a turn ends with the goal active and incomplete, the
//! harness starts the next turn by itself, without a user message.
//!
//! [`Session::after_turn`] decides, in order: a stopped turn pauses the goal
//! (`stopped`), a failed one too (`failed`); a spent budget pauses it
//! (`budget`); two continuation turns in a row without progress pause it
//! (`stalled`): progress is a step done that never was, or a change to the
//! workspace (`progress.rs`), not a command that ran. Otherwise it returns
//! the continuation prompt, which the driver (the server's session actor)
//! runs with [`Session::run_continuation_as`]. A user's turn during a goal
//! is just a turn: the goal stays and continues after it.

use crate::goal::render_steps;
use crate::{CoreError, Session, TurnOutcome};
use cortex_protocol::{EventKind, Goal, PauseReason, TurnId};
use tokio_util::sync::CancellationToken;

/// Continuation turns in a row without progress that pause a goal.
pub const STALL_TURNS: u32 = 2;

/// The goal driver's own state, changed only here: continuation turns
/// since the goal was set or resumed, those in a row that made no
/// progress, and the running turn's progress.
#[derive(Debug, Default)]
pub(crate) struct GoalDrive {
    continuations: u32,
    idle: u32,
    progress: crate::progress::TurnProgress,
}

impl GoalDrive {
    /// The user's own turn starts: continuations count from zero again.
    pub(crate) fn user_turn(&mut self) {
        self.continuations = 0;
    }

    /// A turn starts: it has made no progress yet.
    pub(crate) fn turn_started(&mut self) {
        self.progress = Default::default();
    }

    /// The goal was set or resumed: no turn in a row has stalled.
    pub(crate) fn restarted(&mut self) {
        self.idle = 0;
    }

    /// The running turn's progress.
    pub(crate) fn progress(&self) -> &crate::progress::TurnProgress {
        &self.progress
    }

    /// The running turn's progress, to note what it made.
    pub(crate) fn progress_mut(&mut self) -> &mut crate::progress::TurnProgress {
        &mut self.progress
    }

    /// The number of the continuation turn about to run.
    fn next_continuation(&mut self) -> u32 {
        self.continuations += 1;
        self.continuations
    }

    /// Count the turn that just ended toward a stall: only continuation
    /// turns count, and any progress resets the count.
    fn stalled(&mut self) -> bool {
        if self.continuations == 0 || self.progress.made().is_some() {
            self.idle = 0;
        } else {
            self.idle += 1;
        }
        self.idle >= STALL_TURNS
    }
}

impl Session {
    /// Called by the driver after every turn. Records the pause when the
    /// goal stops here; returns the prompt of the continuation turn to run
    /// next otherwise (`None` also when there is no active goal).
    pub async fn after_turn(&mut self, outcome: &TurnOutcome) -> Result<Option<String>, CoreError> {
        let Some(goal) = self.goal().filter(|g| g.is_active()) else {
            return Ok(None);
        };
        let reason = match outcome {
            TurnOutcome::Stopped { .. } => Some(PauseReason::Stopped),
            TurnOutcome::Failed { .. } => Some(PauseReason::Failed),
            TurnOutcome::Completed { .. } if goal.spent.exhausts(&goal.budget) => {
                Some(PauseReason::Budget)
            }
            TurnOutcome::Completed { .. } => self.drive.stalled().then_some(PauseReason::Stalled),
        };
        match reason {
            Some(reason) => {
                self.record_goal(None, EventKind::GoalPaused { reason })
                    .await?;
                Ok(None)
            }
            None => Ok(Some(self.continuation_prompt())),
        }
    }

    /// Run the next continuation turn of the active goal.
    pub async fn run_continuation_as(
        &mut self,
        turn: TurnId,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, CoreError> {
        let prompt = self.continuation_prompt();
        let continuation = Some(self.drive.next_continuation());
        self.run_turn_with(turn, &prompt, Vec::new(), continuation, cancel)
            .await
    }

    /// What a continuation turn asks: the objective, the steps with their
    /// state, and to check what remains against the objective.
    pub(crate) fn continuation_prompt(&self) -> String {
        let Some(goal) = self.goal() else {
            return String::new();
        };
        prompt(goal)
    }
}

fn prompt(goal: &Goal) -> String {
    let steps = if goal.steps.is_empty() {
        "No steps yet: break the objective into steps with the goal tool first.".to_owned()
    } else {
        format!(
            "Steps ({}/{} done):\n{}",
            goal.done(),
            goal.total(),
            render_steps(&goal.steps)
        )
    };
    format!(
        "[Goal continuation] Objective: {}\n{steps}\n\nCheck what remains against the objective \
         and continue with the next step; keep the steps current with the goal tool. When every \
         step is done and verified, call goal with complete: true and evidence.",
        goal.objective
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{GoalBudget, GoalStep};

    #[test]
    fn the_prompt_carries_the_objective_and_the_steps() {
        let mut goal = Goal::new("ship it".into(), GoalBudget::default());
        assert!(prompt(&goal).contains("No steps yet"));
        goal.steps = vec![
            GoalStep {
                title: "build".into(),
                done: true,
            },
            GoalStep {
                title: "test".into(),
                done: false,
            },
        ];
        let text = prompt(&goal);
        assert!(text.contains("Objective: ship it"));
        assert!(
            text.contains("Steps (1/2 done):\n[x] build\n[ ] test"),
            "{text}"
        );
    }
}
