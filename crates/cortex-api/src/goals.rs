//! `/v1/sessions/{id}/goal`: the session's long-horizon goal. `PUT` sets
//! it (and starts a turn when none runs), `GET` shows it, `DELETE` clears
//! it, `POST …/goal/pause` and `POST …/goal/resume` pause and continue it.
//! The session resource carries its short form ([`GoalSummary`]).

use cortex_protocol::{Goal, GoalBudget, GoalSpent, GoalStatus, GoalStep, PauseReason, TurnId};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `PUT /v1/sessions/{id}/goal`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetGoal {
    /// What the agent works toward across turns. Not empty.
    pub objective: String,
    /// Limits after which the goal pauses (`goal.paused {reason: budget}`).
    /// Each limit left out (or the whole budget) takes its default: 20
    /// turns, 2,000,000 tokens, 120 minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<GoalBudget>,
}

/// The goal resource: `GET …/goal`, and the goal in the other answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GoalView {
    /// What the agent works toward.
    pub objective: String,
    /// The model's breakdown, as its last `goal` call left it.
    pub steps: Vec<GoalStep>,
    /// `active`, `paused` or `complete`.
    pub status: GoalStatus,
    /// Why it is paused, while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<PauseReason>,
    /// The limits after which the goal pauses, defaults included.
    pub budget: GoalBudget,
    /// What the model gave as proof when it completed the goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Turns, tokens and time the goal has used.
    pub spent: GoalSpent,
    /// Steps done.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// `Goal · 2/8`: what clients show beside the mode.
    pub chip: String,
}

impl From<&Goal> for GoalView {
    fn from(goal: &Goal) -> GoalView {
        GoalView {
            objective: goal.objective.clone(),
            steps: goal.steps.clone(),
            status: goal.status,
            paused: goal.paused,
            budget: goal.budget,
            evidence: goal.evidence.clone(),
            spent: goal.spent,
            done: goal.done(),
            total: goal.total(),
            chip: goal.chip(),
        }
    }
}

/// The answer of `PUT …/goal` and `POST …/goal/resume`: the goal, and the
/// turn that started for it (absent when a turn was already running: the
/// goal continues after it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GoalAnswer {
    /// The goal as it is now.
    pub goal: GoalView,
    /// The turn that started for the goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub turn_id: Option<TurnId>,
}

/// The goal in the session resource (`GET /v1/sessions/{id}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GoalSummary {
    /// What the agent works toward.
    pub objective: String,
    /// Steps done.
    pub done: usize,
    /// Steps in all.
    pub total: usize,
    /// `active`, `paused` or `complete`.
    pub status: GoalStatus,
}

impl From<&Goal> for GoalSummary {
    fn from(goal: &Goal) -> GoalSummary {
        GoalSummary {
            objective: goal.objective.clone(),
            done: goal.done(),
            total: goal.total(),
            status: goal.status,
        }
    }
}

impl GoalSummary {
    /// `Goal · 2/8`, the same text as [`Goal::chip`].
    pub fn chip(&self) -> String {
        cortex_protocol::goal_chip(self.done, self.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_optional_and_typos_are_refused() {
        let bare: SetGoal =
            serde_json::from_value(serde_json::json!({"objective": "ship"})).expect("decode");
        assert_eq!(bare.budget, None);
        let body = serde_json::json!({"objective": "ship", "budget": {"turns": 3}});
        let set: SetGoal = serde_json::from_value(body.clone()).expect("decode");
        assert_eq!(set.budget.and_then(|b| b.turns), Some(3));
        assert_eq!(serde_json::to_value(&set).expect("encode"), body);
        let typo = serde_json::json!({"objective": "ship", "budget": {"turn": 3}});
        assert!(serde_json::from_value::<SetGoal>(typo).is_err());
    }

    #[test]
    fn the_documented_default_budget_is_the_one_applied() {
        use cortex_protocol::{DEFAULT_GOAL_MINUTES, DEFAULT_GOAL_TOKENS, DEFAULT_GOAL_TURNS};
        let schema = serde_json::to_string(&<SetGoal as utoipa::PartialSchema>::schema())
            .expect("schema")
            // Doc comments keep their line breaks.
            .replace("\\n", " ");
        assert_eq!(DEFAULT_GOAL_TOKENS, 2_000_000, "the docs write 2,000,000");
        for text in [
            format!("{DEFAULT_GOAL_TURNS} turns"),
            "2,000,000 tokens".to_owned(),
            format!("{DEFAULT_GOAL_MINUTES} minutes"),
        ] {
            assert!(schema.contains(&text), "{text} not in {schema}");
        }
    }

    #[test]
    fn the_summary_and_the_view_say_the_same_chip() {
        let mut goal = Goal::new("ship".into(), GoalBudget::default());
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
        let view = GoalView::from(&goal);
        assert_eq!(view.chip, "Goal · 1/2");
        assert_eq!(GoalSummary::from(&goal).chip(), view.chip);
    }
}
