//! Plan versions and the user's verdict on them.
//!
//! Each `plan` tool call that validates is a new version (`plan.proposed`).
//! Only the user accepts or rejects the latest one: accepting switches to
//! Agent, seeds the todo list from the plan's steps (`todo.updated`) and
//! records `plan.accepted`; the caller then runs a turn with
//! [`Session::accept_plan`]'s message. Rejecting records `plan.rejected` and
//! the feedback becomes the next turn's message, still in Plan mode. The
//! versions are rebuilt from the timeline on resume ([`crate::Rebuilt`]).

use crate::{CoreError, Session};
use cortex_protocol::{EventKind, Mode, Todo, TodoStatus, TurnId};
use cortex_tools::{PlanStep, plan_steps};

/// Where a plan version stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanStatus {
    /// Waiting for the user's verdict (only the latest version can be).
    Proposed,
    /// The user accepted it: Agent mode, the todo list seeded from its steps.
    Accepted,
    /// The user rejected it with feedback.
    Rejected,
    /// A newer version was proposed before the user decided.
    Superseded,
}

/// One proposed plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanVersion {
    /// 1 for the first proposal of the session, then one more each.
    pub version: u32,
    /// The title the model gave it.
    pub title: String,
    /// The plan itself.
    pub markdown: String,
    /// Where it stands.
    pub status: PlanStatus,
}

/// Why a plan verdict was refused.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// No version waits for a verdict.
    #[error("there is no proposed plan to accept or reject (propose one in Plan mode first)")]
    NoProposedPlan,
    /// A rejection without feedback.
    #[error("the feedback must not be empty")]
    EmptyFeedback,
    /// The timeline could not be written.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// Fold one plan event into the versions (live and on resume alike).
pub(crate) fn apply(plans: &mut Vec<PlanVersion>, kind: &EventKind) {
    match kind {
        EventKind::PlanProposed {
            version,
            title,
            markdown,
        } => {
            for plan in plans.iter_mut() {
                if plan.status == PlanStatus::Proposed {
                    plan.status = PlanStatus::Superseded;
                }
            }
            plans.push(PlanVersion {
                version: *version,
                title: title.clone(),
                markdown: markdown.clone(),
                status: PlanStatus::Proposed,
            });
        }
        EventKind::PlanAccepted { version } => set_status(plans, *version, PlanStatus::Accepted),
        EventKind::PlanRejected { version, .. } => {
            set_status(plans, *version, PlanStatus::Rejected)
        }
        _ => {}
    }
}

fn set_status(plans: &mut [PlanVersion], version: u32, status: PlanStatus) {
    if let Some(plan) = plans.iter_mut().find(|p| p.version == version) {
        plan.status = status;
    }
}

/// The todo list an accepted plan starts with: its steps, or its title when
/// it has no list.
pub(crate) fn seed_todos(plan: &PlanVersion) -> Vec<Todo> {
    let steps = plan_steps(&plan.markdown);
    if steps.is_empty() {
        return vec![Todo {
            content: plan.title.clone(),
            status: TodoStatus::Pending,
        }];
    }
    step_todos(steps)
}

/// One todo per step, completed where the step is checked: a plan's steps,
/// a spec's tasks.
pub(crate) fn step_todos(steps: Vec<PlanStep>) -> Vec<Todo> {
    steps
        .into_iter()
        .map(|s| Todo {
            content: s.title,
            status: if s.done {
                TodoStatus::Completed
            } else {
                TodoStatus::Pending
            },
        })
        .collect()
}

/// The message of the turn that implements an accepted plan.
fn implementation_task(plan: &PlanVersion) -> String {
    format!(
        "The user accepted plan v{}: {}. Implement it now, step by step, keeping the todo list \
         current with todo_write.\n\n{}",
        plan.version, plan.title, plan.markdown
    )
}

impl Session {
    /// The version the next proposed plan gets.
    pub(crate) fn next_plan_version(&self) -> u32 {
        self.state.plans.last().map_or(1, |p| p.version + 1)
    }

    /// Every plan version of the session, oldest first.
    pub fn plans(&self) -> &[PlanVersion] {
        &self.state.plans
    }

    /// The latest version, if it still waits for the user's verdict.
    pub fn proposed_plan(&self) -> Option<&PlanVersion> {
        self.state
            .plans
            .last()
            .filter(|p| p.status == PlanStatus::Proposed)
    }

    /// Emit a plan event and fold it into the versions.
    pub(crate) async fn record_plan(
        &mut self,
        turn: Option<&TurnId>,
        kind: EventKind,
    ) -> Result<(), CoreError> {
        self.record(turn, kind).await?;
        Ok(())
    }

    /// The user accepts the proposed plan: Agent mode, the todo list seeded
    /// from its steps, `plan.accepted`. Returns the message of the turn to
    /// run next (the caller runs it). Call between turns.
    pub async fn accept_plan(&mut self) -> Result<String, PlanError> {
        let plan = self
            .proposed_plan()
            .cloned()
            .ok_or(PlanError::NoProposedPlan)?;
        self.set_mode(Mode::Agent).await?;
        let todos = seed_todos(&plan);
        self.record(None, EventKind::TodoUpdated { todos }).await?;
        self.record_plan(
            None,
            EventKind::PlanAccepted {
                version: plan.version,
            },
        )
        .await?;
        Ok(implementation_task(&plan))
    }

    /// The user rejects the proposed plan with `feedback`: `plan.rejected`,
    /// the mode stays. Returns the message of the next turn (the feedback).
    pub async fn reject_plan(&mut self, feedback: &str) -> Result<String, PlanError> {
        let feedback = feedback.trim();
        if feedback.is_empty() {
            return Err(PlanError::EmptyFeedback);
        }
        let version = self
            .proposed_plan()
            .map(|p| p.version)
            .ok_or(PlanError::NoProposedPlan)?;
        self.record_plan(
            None,
            EventKind::PlanRejected {
                version,
                feedback: feedback.to_owned(),
            },
        )
        .await?;
        Ok(format!(
            "The user rejected plan v{version}. Their feedback:\n{feedback}\n\nRevise the plan and propose it again with the plan tool."
        ))
    }
}
