//! The session's goal: its state, the fold that rebuilds it from the
//! timeline, the user's controls (set, pause, resume, clear) and the `goal`
//! tool the model keeps its steps with.
//!
//! Every change is a `goal.*` event and goes through [`apply`], live and on
//! resume alike, so a resumed session has the same goal. The counters
//! (turns, tokens, time) are folded from the goal's turns. Deciding whether
//! to continue after a turn is [`crate::continuation`]'s.

use crate::answer::Answer;
use crate::progress::Progress;
use crate::{CoreError, Session, Timeline};
use cortex_protocol::{
    Event, EventKind, Goal, GoalArgs, GoalBudget, GoalStatus, GoalStep, PauseReason, TurnId,
    parse_rfc3339_ms,
};

/// Why a goal control was refused.
#[derive(Debug, thiserror::Error)]
pub enum GoalError {
    /// The session has no goal.
    #[error("this session has no goal (PUT …/goal sets one)")]
    NoGoal,
    /// `set_goal` with a blank objective.
    #[error("the objective must not be empty")]
    EmptyObjective,
    /// Pausing a goal that is not active (its status).
    #[error("the goal is {0}; only an active goal can be paused")]
    NotActive(&'static str),
    /// Resuming a goal that is not paused (its status).
    #[error("the goal is {0}; only a paused goal can be resumed")]
    NotPaused(&'static str),
    /// The timeline could not be written.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// Folds a session's events into its goal. `turn_started` is the start of
/// the goal's running turn (ms since the epoch), for its time counter;
/// `most_done` the most steps the goal has had done at once, so a step
/// unticked and ticked again is not progress twice.
#[derive(Debug, Default, Clone)]
pub(crate) struct GoalFold {
    pub goal: Option<Goal>,
    turn_started: Option<i64>,
    most_done: usize,
}

impl GoalFold {
    /// Fold one stored event: `goal.*` events change the goal; a turn that
    /// starts while it is active counts toward its counters.
    pub(crate) fn apply(&mut self, event: &Event) {
        apply(&mut self.goal, &event.kind);
        match &event.kind {
            EventKind::GoalSet { .. } | EventKind::GoalCleared {} => self.most_done = 0,
            EventKind::GoalUpdated { done, .. } => self.most_done = self.most_done.max(*done),
            _ => {}
        }
        let active = self.goal.as_ref().is_some_and(Goal::is_active);
        self.count(event, active);
    }

    /// The most steps the goal has had done at once.
    pub(crate) fn most_done(&self) -> usize {
        self.most_done
    }

    /// Add `event` to the counters; `counted` says whether a turn starting
    /// with it belongs to the goal.
    fn count(&mut self, event: &Event, counted: bool) {
        let Some(goal) = self.goal.as_mut() else {
            self.turn_started = None;
            return;
        };
        match &event.kind {
            EventKind::TurnStarted { .. } if counted => {
                goal.spent.turns += 1;
                self.turn_started = parse_rfc3339_ms(&event.ts);
            }
            EventKind::TurnStarted { .. } => self.turn_started = None,
            EventKind::Usage {
                input_tokens,
                output_tokens,
                ..
            } if self.turn_started.is_some() => goal.spent.tokens += input_tokens + output_tokens,
            // A subagent's tokens are the turn's that started it.
            EventKind::SubagentEnded { used, .. } if self.turn_started.is_some() => {
                goal.spent.tokens += used.tokens();
            }
            kind if kind.ends_turn() => {
                if let (Some(start), Some(end)) =
                    (self.turn_started.take(), parse_rfc3339_ms(&event.ts))
                {
                    goal.spent.ms += u64::try_from(end - start).unwrap_or(0);
                }
            }
            _ => {}
        }
    }
}

/// The goal as a session's stored events leave it, counters included (for
/// a session that is not open in this process).
pub fn stored_goal(events: &[Event]) -> Option<Goal> {
    let mut fold = GoalFold::default();
    for event in events {
        fold.apply(event);
    }
    fold.goal
}

/// Pause as interrupted the goal a dead process left active, without
/// opening the session (a server's start-up, beside failing the turn it
/// left running). Returns whether there was one to pause.
pub async fn pause_interrupted_goal(timeline: &Timeline) -> Result<bool, CoreError> {
    let events = timeline.store().events(timeline.session(), 0).await?;
    if !stored_goal(&events).is_some_and(|g| g.is_active()) {
        return Ok(false);
    }
    let reason = PauseReason::Interrupted;
    timeline
        .emit(None, EventKind::GoalPaused { reason })
        .await?;
    Ok(true)
}

/// Fold one `goal.*` event into the goal.
pub(crate) fn apply(goal: &mut Option<Goal>, kind: &EventKind) {
    match kind {
        // A goal set before budgets had defaults (or by an embedder that
        // left a limit out) is bounded as a new one is.
        EventKind::GoalSet { objective, budget } => {
            *goal = Some(Goal::new(objective.clone(), budget.or_defaults()));
        }
        EventKind::GoalCleared {} => *goal = None,
        _ => {
            if let Some(goal) = goal.as_mut() {
                apply_to(goal, kind);
            }
        }
    }
}

fn apply_to(goal: &mut Goal, kind: &EventKind) {
    match kind {
        EventKind::GoalUpdated { steps, .. } => goal.steps = steps.clone(),
        EventKind::GoalPaused { reason } => {
            goal.status = GoalStatus::Paused;
            goal.paused = Some(*reason);
        }
        EventKind::GoalResumed {} => {
            goal.status = GoalStatus::Active;
            goal.paused = None;
        }
        EventKind::GoalCompleted { evidence } => {
            goal.status = GoalStatus::Complete;
            goal.paused = None;
            goal.evidence = Some(evidence.clone());
        }
        _ => {}
    }
}

/// What is wrong with a `goal` call, for the model to fix; `None` when it
/// may be recorded.
fn check_call(args: &GoalArgs) -> Option<String> {
    if args.steps.iter().any(|s| s.title.trim().is_empty()) {
        return Some("every step needs a title".to_owned());
    }
    if !args.complete {
        return None;
    }
    let left: Vec<&str> = args
        .steps
        .iter()
        .filter(|s| !s.done)
        .map(|s| s.title.as_str())
        .collect();
    if args.steps.is_empty() {
        Some("complete: true needs the goal's steps, each done".to_owned())
    } else if !left.is_empty() {
        Some(format!(
            "the goal is not complete: steps left: {}. Finish them (or correct the list) first",
            left.join("; ")
        ))
    } else if args.evidence.as_deref().is_none_or(|e| e.trim().is_empty()) {
        Some("complete: true needs evidence: what shows the objective is met".to_owned())
    } else {
        None
    }
}

/// The steps as the model and the user read them.
pub(crate) fn render_steps(steps: &[GoalStep]) -> String {
    if steps.is_empty() {
        return "(no steps yet)".to_owned();
    }
    steps
        .iter()
        .map(|s| format!("[{}] {}", if s.done { "x" } else { " " }, s.title))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The message of a goal's first turn.
pub(crate) fn first_prompt(objective: &str) -> String {
    format!(
        "Goal: {objective}\n\nThis goal spans several turns; the harness continues it until it \
         is complete. First break it into concrete steps with the goal tool (the whole list, \
         each done: false), then start on the first step. Keep the steps current with the goal \
         tool; when every step is done and verified, call it with complete: true and evidence."
    )
}

impl Session {
    /// The session's goal with its counters, if one is set.
    pub fn goal(&self) -> Option<&Goal> {
        self.state.goal()
    }

    /// Emit a goal event and fold it in (the only way the goal changes).
    pub(crate) async fn record_goal(
        &mut self,
        turn: Option<&TurnId>,
        kind: EventKind,
    ) -> Result<(), CoreError> {
        self.record(turn, kind).await?;
        self.publish_goal();
        Ok(())
    }

    /// Set (or replace) the goal; it starts active, bounded by `budget`
    /// with each limit it leaves out at its default (`goal.set` records the
    /// effective budget). Returns the message of its first turn, which the
    /// caller runs.
    pub async fn set_goal(
        &mut self,
        objective: &str,
        budget: GoalBudget,
    ) -> Result<String, GoalError> {
        let objective = objective.trim();
        if objective.is_empty() {
            return Err(GoalError::EmptyObjective);
        }
        let kind = EventKind::GoalSet {
            objective: objective.to_owned(),
            budget: budget.or_defaults(),
        };
        self.record_goal(None, kind).await?;
        self.drive.restarted();
        Ok(first_prompt(objective))
    }

    /// The user pauses the active goal (`goal.paused` with `reason`); no
    /// continuation turn starts until it is resumed.
    pub async fn pause_goal(&mut self, reason: PauseReason) -> Result<(), GoalError> {
        let goal = self.goal().ok_or(GoalError::NoGoal)?;
        if !goal.is_active() {
            return Err(GoalError::NotActive(goal.status.as_str()));
        }
        self.record_goal(None, EventKind::GoalPaused { reason })
            .await?;
        Ok(())
    }

    /// Resume a paused goal. Returns the prompt of the continuation turn to
    /// run next (the caller runs it with [`Session::run_continuation_as`]).
    pub async fn resume_goal(&mut self) -> Result<String, GoalError> {
        let goal = self.goal().ok_or(GoalError::NoGoal)?;
        if goal.status != GoalStatus::Paused {
            return Err(GoalError::NotPaused(goal.status.as_str()));
        }
        self.record_goal(None, EventKind::GoalResumed {}).await?;
        self.drive.restarted();
        Ok(self.continuation_prompt())
    }

    /// A goal left active by a process that exited (nothing drives it any
    /// more) pauses as interrupted; `POST …/goal/resume` continues it.
    pub(crate) async fn pause_orphaned_goal(&mut self) -> Result<(), CoreError> {
        if self.goal().is_some_and(Goal::is_active) {
            let reason = PauseReason::Interrupted;
            self.record_goal(None, EventKind::GoalPaused { reason })
                .await?;
        }
        Ok(())
    }

    /// The user clears the goal (`goal.cleared`).
    pub async fn clear_goal(&mut self) -> Result<(), GoalError> {
        self.goal().ok_or(GoalError::NoGoal)?;
        self.record_goal(None, EventKind::GoalCleared {}).await?;
        Ok(())
    }

    /// The `goal` tool: the whole step list, and completion with evidence.
    pub(crate) async fn goal_tool(
        &mut self,
        turn: &TurnId,
        args: GoalArgs,
    ) -> Result<Answer, CoreError> {
        let Some(goal) = self.goal().filter(|g| g.is_active()) else {
            return Ok(Answer::error("there is no active goal"));
        };
        if let Some(problem) = check_call(&args) {
            return Ok(Answer::error(problem));
        }
        let before = self.state.goal.most_done();
        if goal.steps != args.steps {
            let kind = EventKind::GoalUpdated {
                done: args.steps.iter().filter(|s| s.done).count(),
                total: args.steps.len(),
                steps: args.steps.clone(),
            };
            self.record_goal(Some(turn), kind).await?;
        }
        let after = self.goal().map_or(0, Goal::done);
        // Only more steps done than ever before is progress: a model that
        // unticks a step and ticks it again has done nothing new.
        if self.state.goal.most_done() > before {
            self.drive.progress_mut().record(Progress::StepTicked);
        }
        if args.complete {
            let evidence = args.evidence.unwrap_or_default().trim().to_owned();
            self.record_goal(Some(turn), EventKind::GoalCompleted { evidence })
                .await?;
            return Ok(Answer::ok(
                "Goal complete. End your turn with a short summary.",
            ));
        }
        Ok(Answer::ok(format!(
            "Steps recorded ({after}/{}):\n{}",
            args.steps.len(),
            render_steps(&args.steps)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(done: &[bool]) -> Vec<GoalStep> {
        done.iter()
            .enumerate()
            .map(|(i, d)| GoalStep {
                title: format!("s{i}"),
                done: *d,
            })
            .collect()
    }

    #[test]
    fn completion_needs_every_step_and_evidence() {
        let call = |done: &[bool], complete, evidence: Option<&str>| GoalArgs {
            steps: steps(done),
            complete,
            evidence: evidence.map(str::to_owned),
        };
        assert_eq!(check_call(&call(&[true, false], false, None)), None);
        let left = check_call(&call(&[true, false], true, Some("tests pass")));
        assert!(left.is_some_and(|e| e.contains("steps left: s1")));
        let bare = check_call(&call(&[true], true, Some("  ")));
        assert!(bare.is_some_and(|e| e.contains("evidence")));
        assert!(check_call(&call(&[], true, Some("x"))).is_some());
        assert_eq!(check_call(&call(&[true, true], true, Some("ok"))), None);
    }

    #[test]
    fn the_fold_counts_only_active_turns() {
        let ev = |seq, ts: &str, kind| Event {
            seq,
            ts: ts.to_owned(),
            session_id: "s".into(),
            turn_id: None,
            kind,
        };
        let started = || EventKind::TurnStarted {
            message: "m".into(),
            mode: cortex_protocol::Mode::Agent,
        };
        let mut fold = GoalFold::default();
        for event in [
            ev(1, "2026-12-02T10:00:00.000Z", started()),
            ev(
                2,
                "2026-12-02T10:00:01.000Z",
                EventKind::TurnCompleted {
                    rounds: 1,
                    finish: None,
                    unverified: Vec::new(),
                },
            ),
            ev(
                3,
                "2026-12-02T10:00:02.000Z",
                EventKind::GoalSet {
                    objective: "o".into(),
                    budget: GoalBudget::default(),
                },
            ),
            ev(4, "2026-12-02T10:00:03.000Z", started()),
            ev(
                5,
                "2026-12-02T10:00:04.000Z",
                EventKind::Usage {
                    input_tokens: 10,
                    output_tokens: 5,
                    cache_read_tokens: 0,
                    cache_write_tokens: 0,
                    cost_usd: None,
                },
            ),
            // A subagent's tokens count for the turn that started it.
            ev(
                5,
                "2026-12-02T10:00:05.000Z",
                EventKind::SubagentEnded {
                    call_id: "t1".into(),
                    child: "c".into(),
                    status: cortex_protocol::ToolStatus::Ok,
                    used: cortex_protocol::SubagentUse {
                        ms: 900.0,
                        input_tokens: 100,
                        output_tokens: 20,
                        cost_usd: None,
                    },
                },
            ),
            ev(
                6,
                "2026-12-02T10:00:05.500Z",
                EventKind::TurnCompleted {
                    rounds: 1,
                    finish: None,
                    unverified: Vec::new(),
                },
            ),
            ev(
                7,
                "2026-12-02T10:00:06.000Z",
                EventKind::GoalPaused {
                    reason: PauseReason::User,
                },
            ),
            ev(8, "2026-12-02T10:00:07.000Z", started()),
        ] {
            fold.apply(&event);
        }
        let goal = fold.goal.expect("goal");
        assert_eq!(goal.status, GoalStatus::Paused);
        assert_eq!(goal.paused, Some(PauseReason::User));
        assert_eq!(
            (goal.spent.turns, goal.spent.tokens, goal.spent.ms),
            (1, 135, 2500)
        );
    }
}
