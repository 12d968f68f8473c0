//! The session's goal as the UI shows it: folded from the `goal.*` events
//! like everything else, for the composer's chip (`Goal · 2/8`), `/goal`,
//! and the transcript's lines (the steps as a checklist, pauses, the
//! evidence). A continuation turn's prompt is the harness's, not the
//! user's: its row becomes a short notice.

use super::{CellKind, Level, SessionState};
use crate::text::{clean, clean_line};
use cortex_protocol::{EventKind, GoalStatus, PauseReason, Todo, TodoStatus, goal_chip};

/// The session's goal, as the UI shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalState {
    /// Sanitised, like every string here.
    pub objective: String,
    /// Titles and whether each is done.
    pub steps: Vec<(String, bool)>,
    /// Active, paused or complete.
    pub status: GoalStatus,
    /// Why it is paused, while it is.
    pub paused: Option<PauseReason>,
}

impl GoalState {
    /// Steps done.
    pub fn done(&self) -> usize {
        self.steps.iter().filter(|(_, done)| *done).count()
    }

    /// What the composer's border shows after the mode: `Goal · 2/8`, and
    /// the status when the goal is not going on by itself.
    pub fn chip(&self) -> String {
        let chip = goal_chip(self.done(), self.steps.len());
        match self.status {
            GoalStatus::Active => chip,
            GoalStatus::Paused => format!("{chip} paused"),
            GoalStatus::Complete => format!("{chip} done"),
        }
    }

    /// One line for `/goal`.
    pub fn summary(&self) -> String {
        let status = match (self.status, self.paused) {
            (GoalStatus::Paused, Some(reason)) => format!("paused ({})", reason.as_str()),
            (status, _) => status.as_str().to_owned(),
        };
        format!(
            "{} · {status} · {}",
            goal_chip(self.done(), self.steps.len()),
            self.objective
        )
    }
}

impl SessionState {
    /// Fold a `goal.*` event; false for any other event.
    pub(super) fn apply_goal(&mut self, kind: &EventKind) -> bool {
        match kind {
            EventKind::GoalSet { objective, .. } => {
                let objective = clean_line(objective);
                self.notice(Level::Info, format!("goal: {objective}"));
                self.goal = Some(GoalState {
                    objective,
                    steps: Vec::new(),
                    status: GoalStatus::Active,
                    paused: None,
                });
            }
            EventKind::GoalUpdated { steps, .. } => {
                let steps: Vec<(String, bool)> = steps
                    .iter()
                    .map(|s| (clean_line(&s.title), s.done))
                    .collect();
                let list = steps
                    .iter()
                    .map(|(title, done)| Todo {
                        content: title.clone(),
                        status: if *done {
                            TodoStatus::Completed
                        } else {
                            TodoStatus::Pending
                        },
                    })
                    .collect();
                if let Some(goal) = self.goal.as_mut() {
                    goal.steps = steps;
                }
                self.close_open();
                self.push(CellKind::GoalSteps(list));
            }
            EventKind::GoalPaused { reason } => {
                self.set_goal_status(GoalStatus::Paused, Some(*reason));
                let text = format!(
                    "goal paused ({}) · /goal resume continues it",
                    reason.as_str()
                );
                self.notice(Level::Warning, text);
            }
            EventKind::GoalResumed {} => {
                self.set_goal_status(GoalStatus::Active, None);
                self.notice(Level::Info, "goal resumed".into());
            }
            EventKind::GoalCompleted { evidence } => {
                self.set_goal_status(GoalStatus::Complete, None);
                self.notice(Level::Info, format!("goal complete: {}", clean(evidence)));
            }
            EventKind::GoalCleared {} => {
                self.goal = None;
                self.notice(Level::Info, "goal cleared".into());
            }
            EventKind::GoalContinued { continuation } => self.continuation(*continuation),
            _ => return false,
        }
        true
    }

    fn set_goal_status(&mut self, status: GoalStatus, paused: Option<PauseReason>) {
        if let Some(goal) = self.goal.as_mut() {
            goal.status = status;
            goal.paused = paused;
        }
    }

    /// The turn that just started is the harness's continuation: its
    /// prompt is not the user's message (nor their composer history).
    fn continuation(&mut self, n: u32) {
        if let Some(last) = self.cells.len().checked_sub(1)
            && matches!(self.cells[last].kind, CellKind::User { .. })
            && let Some(kind) = self.touch(last)
        {
            *kind = CellKind::Notice {
                level: Level::Info,
                text: format!("continuing the goal ({n})"),
            };
            self.messages.pop();
        }
    }
}
