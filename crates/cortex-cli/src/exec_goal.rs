//! `cortex exec --goal "OBJECTIVE" [--goal-turns N] [--goal-tokens N]
//! [--goal-minutes N]` and `cortex exec
//! --session ID --resume-goal`: set (or resume) the session's goal and
//! follow the turns the harness runs for it, continuation after
//! continuation, until the goal completes or pauses. Human output shows
//! the chip (`Agent — Goal · 2/8`) at each turn start; `--json` prints the
//! events as they are.
//!
//! Exit codes: 0 the goal is complete, 1 a turn failed (the goal paused
//! `failed`), 3 its budget is spent, 4 it stalled, 5 it was paused or
//! cleared otherwise, 130 stopped (Ctrl-C).

use crate::follow::{follow, watch_interrupts};
use crate::render::{Human, JsonLines, Render};
use crate::render_goal::GoalLines;
use crate::session_args::{SessionArgs, api_error, open};
use clap::Args;
use cortex_client::Client;
use cortex_protocol::{Event, EventKind, GoalBudget, PauseReason};
use std::process::ExitCode;

#[derive(Args, Debug, Clone, Default)]
pub struct GoalFlags {
    /// Work toward OBJECTIVE across turns: the model breaks it into steps
    /// and the harness continues turn after turn until it is complete,
    /// stalls or pauses (instead of PROMPT).
    #[arg(long, value_name = "OBJECTIVE")]
    pub goal: Option<String>,
    /// With --goal: pause the goal after N turns [default: 20].
    #[arg(long, value_name = "N", requires = "goal",
        value_parser = clap::value_parser!(u32).range(1..))]
    pub goal_turns: Option<u32>,
    /// With --goal: pause the goal once its turns used N prompt plus output
    /// tokens [default: 2000000].
    #[arg(long, value_name = "N", requires = "goal",
        value_parser = clap::value_parser!(u64).range(1..))]
    pub goal_tokens: Option<u64>,
    /// With --goal: pause the goal once its turns took N minutes
    /// [default: 120].
    #[arg(long, value_name = "N", requires = "goal",
        value_parser = clap::value_parser!(u32).range(1..))]
    pub goal_minutes: Option<u32>,
    /// Continue the paused goal of --session ID from its stored steps.
    #[arg(long, requires = "session", conflicts_with = "goal")]
    pub resume_goal: bool,
}

/// Set or resume the goal, follow it to its end; the exit code says how it
/// ended.
pub async fn run(
    client: &Client,
    session: &SessionArgs,
    json: bool,
    flags: &GoalFlags,
    local: bool,
) -> anyhow::Result<ExitCode> {
    let opened = open(client, session, local).await?;
    let (id, after) = (opened.id, opened.last_seq);
    let renderer: Box<dyn Render> = if json {
        Box::new(JsonLines)
    } else {
        // A resumed session's goal is not in the events printed from now.
        let view = client.session(&id).await.map_err(api_error)?;
        Box::new(Human::with_goal(GoalLines::seeded(view.goal.as_ref())))
    };
    // Subscribed before the goal starts: nothing of it can be missed.
    let events = client.events(&id, after).await?;
    match &flags.goal {
        Some(objective) => {
            // Limits left out take the server's defaults.
            let budget = GoalBudget {
                turns: flags.goal_turns,
                tokens: flags.goal_tokens,
                minutes: flags.goal_minutes,
            };
            let budget = (budget != GoalBudget::default()).then_some(budget);
            client.set_goal(&id, objective, budget).await
        }
        None => client.resume_goal(&id).await,
    }
    .map_err(api_error)?;
    let interrupts = tokio::spawn(watch_interrupts(client.clone(), id.clone()));
    let mut end = GoalEnd::default();
    let last = follow(client, &id, after, events, renderer, |e| end.is_last(e)).await;
    interrupts.abort();
    if local {
        let _ = client.close(&id).await;
    }
    Ok(exit_code(&last?.kind))
}

/// Which event ends a followed goal. Only events from its own start
/// (`goal.set` or `goal.resumed`) count: reopening a session may first
/// record the pause of a goal a dead process left active.
#[derive(Default)]
struct GoalEnd {
    started: bool,
    /// The goal completed in the running turn: it ends with that turn.
    completed: bool,
    cleared: bool,
    running: bool,
}

impl GoalEnd {
    fn is_last(&mut self, event: &Event) -> bool {
        match &event.kind {
            EventKind::GoalSet { .. } | EventKind::GoalResumed {} => self.started = true,
            _ if !self.started => {}
            EventKind::TurnStarted { .. } => self.running = true,
            kind if kind.ends_turn() => {
                self.running = false;
                return self.completed || self.cleared;
            }
            EventKind::GoalCompleted { .. } => self.completed = true,
            EventKind::GoalCleared {} => {
                self.cleared = true;
                return !self.running;
            }
            EventKind::GoalPaused { .. } => return true,
            _ => {}
        }
        false
    }
}

/// The exit code for the event that ended a goal: `goal.paused`, the end
/// of the turn that completed it, or `goal.cleared`.
fn exit_code(last: &EventKind) -> ExitCode {
    match last {
        EventKind::GoalPaused { reason } => ExitCode::from(match reason {
            PauseReason::Stopped => 130,
            PauseReason::Failed => 1,
            PauseReason::Budget => 3,
            PauseReason::Stalled => 4,
            PauseReason::User | PauseReason::Interrupted => 5,
        }),
        EventKind::GoalCleared {} => ExitCode::from(5),
        _ => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::Mode;

    fn event(kind: EventKind) -> Event {
        Event {
            seq: 1,
            ts: String::new(),
            session_id: "s".into(),
            turn_id: None,
            kind,
        }
    }

    #[test]
    fn a_goal_ends_with_the_turn_that_completed_it_or_at_its_pause() {
        let started = || {
            event(EventKind::TurnStarted {
                message: "m".into(),
                mode: Mode::Agent,
            })
        };
        let completed = || {
            event(EventKind::TurnCompleted {
                rounds: 1,
                finish: None,
                unverified: Vec::new(),
            })
        };
        let paused = |reason| event(EventKind::GoalPaused { reason });

        let mut end = GoalEnd::default();
        // A pause recorded on reopening, before the resume, is not the end.
        assert!(!end.is_last(&paused(PauseReason::Interrupted)));
        assert!(!end.is_last(&event(EventKind::GoalResumed {})));
        assert!(!end.is_last(&started()));
        assert!(!end.is_last(&completed()), "a continuation follows");
        assert!(!end.is_last(&started()));
        assert!(!end.is_last(&event(EventKind::GoalCompleted {
            evidence: "e".into()
        })));
        assert!(end.is_last(&completed()));
        assert_eq!(exit_code(&completed().kind), ExitCode::SUCCESS);

        let mut end = GoalEnd::default();
        assert!(!end.is_last(&event(EventKind::GoalSet {
            objective: "o".into(),
            budget: GoalBudget::default(),
        })));
        assert!(end.is_last(&paused(PauseReason::Stalled)));
        assert_eq!(
            exit_code(&paused(PauseReason::Stalled).kind),
            ExitCode::from(4)
        );
    }

    #[test]
    fn the_help_states_the_default_budget() {
        use clap::Args as _;
        let mut command = crate::exec::ExecArgs::augment_args(clap::Command::new("exec"));
        let help = command.render_long_help().to_string();
        for default in [
            cortex_protocol::DEFAULT_GOAL_TURNS.to_string(),
            cortex_protocol::DEFAULT_GOAL_TOKENS.to_string(),
            cortex_protocol::DEFAULT_GOAL_MINUTES.to_string(),
        ] {
            assert!(help.contains(&format!("[default: {default}]")), "{help}");
        }
    }
}
