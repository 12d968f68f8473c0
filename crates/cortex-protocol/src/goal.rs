//! Long-horizon goals: what the `goal.*` events and the `goal` tool carry.
//!
//! A session has at most one goal: an objective, its steps (the model's
//! breakdown, replaced whole by each `goal` call), a status, a budget (each
//! limit the user leaves out at its default) and, once complete, the
//! evidence the model gave.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One step of a goal.
// Its title, and whether the model has done it. No doc comments on the
// fields: the `goal` tool's schema inlines them, and every request carries
// it.
#[allow(missing_docs)]
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalStep {
    pub title: String,
    #[serde(default)]
    pub done: bool,
}

/// Where a goal stands.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// The harness keeps starting continuation turns.
    Active,
    /// Waiting for the user to resume it.
    Paused,
    /// The model completed it with evidence.
    Complete,
}

impl GoalStatus {
    /// The wire name: `active`, `paused` or `complete`.
    pub fn as_str(self) -> &'static str {
        match self {
            GoalStatus::Active => "active",
            GoalStatus::Paused => "paused",
            GoalStatus::Complete => "complete",
        }
    }
}

/// Why a goal paused.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseReason {
    /// The user paused it.
    User,
    /// The user (or the stop rule) stopped a turn.
    Stopped,
    /// A turn failed (the model or the guest).
    Failed,
    /// A budget (turns, tokens or minutes) is spent.
    Budget,
    /// Two continuation turns in a row made no progress: no step done that
    /// never was, no change to the workspace (a command that ran is not one).
    Stalled,
    /// The process driving it exited mid-goal.
    Interrupted,
}

impl PauseReason {
    /// The wire name, e.g. `budget`.
    pub fn as_str(self) -> &'static str {
        match self {
            PauseReason::User => "user",
            PauseReason::Stopped => "stopped",
            PauseReason::Failed => "failed",
            PauseReason::Budget => "budget",
            PauseReason::Stalled => "stalled",
            PauseReason::Interrupted => "interrupted",
        }
    }
}

/// Turns a goal may take when its budget leaves them out.
pub const DEFAULT_GOAL_TURNS: u32 = 20;
/// Prompt plus output tokens a goal may use when its budget leaves them out.
pub const DEFAULT_GOAL_TOKENS: u64 = 2_000_000;
/// Minutes a goal's turns may take when its budget leaves them out.
pub const DEFAULT_GOAL_MINUTES: u32 = 120;

/// Limits after which an active goal pauses (reason `budget`). A limit left
/// out takes its default when the goal is set ([`GoalBudget::or_defaults`]),
/// so every goal is bounded; `Default` is a budget that gives none.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalBudget {
    /// Turns the goal may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    /// Prompt plus output tokens it may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Time its turns may take, in minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minutes: Option<u32>,
}

impl GoalBudget {
    /// The budget of a goal set without one: [`DEFAULT_GOAL_TURNS`],
    /// [`DEFAULT_GOAL_TOKENS`] and [`DEFAULT_GOAL_MINUTES`].
    pub const DEFAULT: GoalBudget = GoalBudget {
        turns: Some(DEFAULT_GOAL_TURNS),
        tokens: Some(DEFAULT_GOAL_TOKENS),
        minutes: Some(DEFAULT_GOAL_MINUTES),
    };

    /// This budget with every limit it leaves out at its default: what a
    /// goal set with it is bounded by.
    pub fn or_defaults(self) -> GoalBudget {
        GoalBudget {
            turns: self.turns.or(GoalBudget::DEFAULT.turns),
            tokens: self.tokens.or(GoalBudget::DEFAULT.tokens),
            minutes: self.minutes.or(GoalBudget::DEFAULT.minutes),
        }
    }
}

/// What a goal has used so far.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoalSpent {
    /// Turns taken.
    pub turns: u32,
    /// Prompt plus output tokens, as the provider reported them.
    pub tokens: u64,
    /// Time in the goal's turns, in milliseconds.
    pub ms: u64,
}

impl GoalSpent {
    /// Whether `budget` is used up.
    pub fn exhausts(&self, budget: &GoalBudget) -> bool {
        budget.turns.is_some_and(|t| self.turns >= t)
            || budget.tokens.is_some_and(|t| self.tokens >= t)
            || budget
                .minutes
                .is_some_and(|m| self.ms >= u64::from(m) * 60_000)
    }
}

/// A session's goal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    /// What it is to achieve, in the user's words.
    pub objective: String,
    /// The model's breakdown, as its last `goal` call gave it.
    pub steps: Vec<GoalStep>,
    /// Where it stands.
    pub status: GoalStatus,
    /// Limits after which it pauses.
    #[serde(default)]
    pub budget: GoalBudget,
    /// Why it is paused, while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<PauseReason>,
    /// What the model says shows it met the objective, once complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// What it has used so far, against `budget`.
    #[serde(default)]
    pub spent: GoalSpent,
}

impl Goal {
    /// A goal just set: active, no steps yet, nothing spent.
    pub fn new(objective: String, budget: GoalBudget) -> Goal {
        Goal {
            objective,
            steps: Vec::new(),
            status: GoalStatus::Active,
            budget,
            paused: None,
            evidence: None,
            spent: GoalSpent::default(),
        }
    }

    /// Steps done.
    pub fn done(&self) -> usize {
        self.steps.iter().filter(|s| s.done).count()
    }

    /// Steps in all.
    pub fn total(&self) -> usize {
        self.steps.len()
    }

    /// Whether the harness keeps continuing it.
    pub fn is_active(&self) -> bool {
        self.status == GoalStatus::Active
    }

    /// The chip every client shows beside the mode: `Goal · 2/8`.
    pub fn chip(&self) -> String {
        chip(self.done(), self.total())
    }
}

/// The goal chip for `done` of `total` steps: `Goal · 2/8`.
pub fn chip(done: usize, total: usize) -> String {
    format!("Goal · {done}/{total}")
}

/// Arguments of the `goal` tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalArgs {
    /// The whole list of steps; it replaces the previous one.
    pub steps: Vec<GoalStep>,
    /// True only when every step is done and the objective is met.
    #[serde(default)]
    pub complete: bool,
    /// With complete: what shows the objective is met (tests run, output seen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_and_chip() {
        let mut goal = Goal::new("x".into(), GoalBudget::default());
        assert!(!goal.spent.exhausts(&goal.budget));
        goal.budget.turns = Some(2);
        goal.spent.turns = 2;
        assert!(goal.spent.exhausts(&goal.budget));
        let minutes = GoalBudget {
            minutes: Some(1),
            ..Default::default()
        };
        assert!(
            !GoalSpent {
                ms: 59_999,
                ..Default::default()
            }
            .exhausts(&minutes)
        );
        assert!(
            GoalSpent {
                ms: 60_000,
                ..Default::default()
            }
            .exhausts(&minutes)
        );
        goal.steps = vec![
            GoalStep {
                title: "a".into(),
                done: true,
            },
            GoalStep {
                title: "b".into(),
                done: false,
            },
        ];
        assert_eq!(goal.chip(), "Goal · 1/2");
        assert_eq!(
            serde_json::to_value(PauseReason::Stalled).expect("json"),
            "stalled"
        );
    }

    #[test]
    fn a_limit_left_out_takes_its_default() {
        assert_eq!(GoalBudget::default().or_defaults(), GoalBudget::DEFAULT);
        let given = GoalBudget {
            turns: Some(3),
            ..Default::default()
        };
        let effective = given.or_defaults();
        assert_eq!(effective.turns, Some(3));
        assert_eq!(effective.tokens, Some(DEFAULT_GOAL_TOKENS));
        assert_eq!(effective.minutes, Some(DEFAULT_GOAL_MINUTES));
        assert_eq!(effective.or_defaults(), effective);
    }
}
