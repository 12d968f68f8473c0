//! Human lines for a session's goal: the chip (`Agent — Goal · 2/8`) at
//! each turn start while the session has a goal, and one line per `goal.*`
//! event. The objective, the steps and the evidence are the user's or the
//! model's words, so each is sanitised.

use cortex_client::GoalSummary;
use cortex_protocol::{EventKind, GoalStep, goal_chip};
use cortex_term::{sanitize, sanitize_line};

/// The goal as the human output last showed it: steps done and in all.
#[derive(Debug, Default, Clone, Copy)]
pub struct GoalLines {
    progress: Option<(usize, usize)>,
}

impl GoalLines {
    /// Start from the goal the session already has (a resumed session's
    /// earlier events are not printed again).
    pub fn seeded(goal: Option<&GoalSummary>) -> GoalLines {
        GoalLines {
            progress: goal.map(|g| (g.done, g.total)),
        }
    }

    /// The line to print for `kind`, if it concerns the goal.
    pub fn line(&mut self, kind: &EventKind) -> Option<String> {
        match kind {
            EventKind::TurnStarted { mode, .. } => self
                .progress
                .map(|(done, total)| format!("{} — {}", mode.title(), goal_chip(done, total))),
            EventKind::GoalSet { objective, budget } => {
                self.progress = Some((0, 0));
                let limits: Vec<String> = [
                    budget.turns.map(|t| format!("{t} turns")),
                    budget.tokens.map(|t| format!("{t} tokens")),
                    budget.minutes.map(|m| format!("{m} minutes")),
                ]
                .into_iter()
                .flatten()
                .collect();
                let budget = if limits.is_empty() {
                    String::new()
                } else {
                    format!(" (at most {})", limits.join(", "))
                };
                Some(format!("goal: {}{budget}", sanitize_line(objective)))
            }
            EventKind::GoalUpdated { done, total, steps } => {
                self.progress = Some((*done, *total));
                Some(format!(
                    "{}:\n{}",
                    goal_chip(*done, *total),
                    render_steps(steps)
                ))
            }
            EventKind::GoalPaused { reason } => Some(format!("goal paused: {}", reason.as_str())),
            EventKind::GoalResumed {} => Some("goal resumed".to_owned()),
            EventKind::GoalCompleted { evidence } => {
                Some(format!("goal complete: {}", sanitize(evidence)))
            }
            EventKind::GoalCleared {} => {
                self.progress = None;
                Some("goal cleared".to_owned())
            }
            _ => None,
        }
    }
}

fn render_steps(steps: &[GoalStep]) -> String {
    steps
        .iter()
        .map(|s| {
            let mark = if s.done { "x" } else { " " };
            format!("  [{mark}] {}", sanitize_line(&s.title))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{GoalBudget, Mode};

    #[test]
    fn the_chip_follows_the_steps_and_hostile_titles_are_sanitised() {
        let mut lines = GoalLines::default();
        let started = EventKind::TurnStarted {
            message: "m".into(),
            mode: Mode::Agent,
        };
        assert_eq!(lines.line(&started), None, "no goal, no chip");
        let set = EventKind::GoalSet {
            objective: "ship\u{1b}[2J it".into(),
            budget: GoalBudget {
                turns: Some(4),
                ..Default::default()
            }
            .or_defaults(),
        };
        let line = lines.line(&set).expect("a line");
        assert!(!line.contains('\u{1b}'), "{line:?}");
        assert!(
            line.ends_with("(at most 4 turns, 2000000 tokens, 120 minutes)"),
            "{line}"
        );
        let steps = vec![
            GoalStep {
                title: "build\u{1b}]0;x\u{7}".into(),
                done: true,
            },
            GoalStep {
                title: "test".into(),
                done: false,
            },
        ];
        let updated = EventKind::GoalUpdated {
            done: 1,
            total: 2,
            steps,
        };
        let line = lines.line(&updated).expect("a line");
        assert!(line.starts_with("Goal · 1/2:\n  [x] build^["), "{line:?}");
        assert_eq!(lines.line(&started).as_deref(), Some("Agent — Goal · 1/2"));
        lines.line(&EventKind::GoalCleared {});
        assert_eq!(lines.line(&started), None);
    }
}
