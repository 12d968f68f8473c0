//! `cortex plan accept|reject SESSION_ID` and `cortex spec accept|reject
//! SESSION_ID`: the user's verdict on a session's proposed plan or spec
//! phase, through the session API (in-process unless `--server`). Either
//! starts a turn, which is streamed as `cortex exec` streams one; when that
//! turn proposes again (the spec's next phase), the commands to answer it
//! follow.

use crate::exec::{exit_code, follow_turn, proposal_hint};
use crate::flags::ReopenFlags;
use crate::guests::GuestChoice;
use crate::render::{Human, JsonLines, Render};
use crate::session_args::api_error;
use clap::{Args, Subcommand};
use cortex_client::Client;
use cortex_protocol::SessionId;
use std::process::ExitCode;

/// What the verdict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Plan,
    Spec,
}

#[derive(Subcommand)]
pub enum SpecCommand {
    /// Accept the proposed spec phase: a turn asking for the next phase;
    /// after the tasks, Agent mode, `specs/<slug>/` written, the todo list
    /// seeded and a turn that implements the tasks (streamed).
    #[command(after_help = "Example:\n  cortex spec accept 0193…")]
    Accept(PlanTarget),
    /// Reject the proposed spec phase: a new turn, still in Spec mode, with
    /// the feedback as its message (streamed). Nothing is written.
    #[command(after_help = "Example:\n  cortex spec reject 0193… \"add a story for errors\"")]
    Reject {
        #[command(flatten)]
        target: PlanTarget,
        /// What the phase should change.
        feedback: String,
    },
}

impl From<SpecCommand> for PlanCommand {
    fn from(command: SpecCommand) -> PlanCommand {
        match command {
            SpecCommand::Accept(target) => PlanCommand::Accept(target),
            SpecCommand::Reject { target, feedback } => PlanCommand::Reject { target, feedback },
        }
    }
}

#[derive(Subcommand)]
pub enum PlanCommand {
    /// Accept the proposed plan: Agent mode, the todo list seeded from its
    /// steps, and a turn that implements it (streamed).
    #[command(after_help = "Example:\n  cortex plan accept 0193…")]
    Accept(PlanTarget),
    /// Reject the proposed plan: a new turn, still in Plan mode, with the
    /// feedback as its message (streamed).
    #[command(
        after_help = "Example:\n  cortex plan reject 0193… \"keep the public API unchanged\""
    )]
    Reject {
        #[command(flatten)]
        target: PlanTarget,
        /// What the plan should change.
        feedback: String,
    },
}

#[derive(Args)]
pub struct PlanTarget {
    /// The session whose plan or spec this is.
    session_id: String,
    /// Every timeline event as one JSON line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    reopen: ReopenFlags,
    /// Where tools run with the in-process server (as for `exec`).
    #[arg(long, default_value = "local")]
    guest: GuestChoice,
}

/// Exit codes as `exec`: 0 completed, 1 failed, 130 stopped.
pub async fn run(subject: Subject, command: PlanCommand) -> anyhow::Result<ExitCode> {
    let (target, feedback) = match &command {
        PlanCommand::Accept(target) => (target, None),
        PlanCommand::Reject { target, feedback } => (target, Some(feedback.as_str())),
    };
    let (client, local) = target.reopen.connect(&target.guest).await?;
    let result = verdict(&client, subject, target, feedback).await;
    if let Some(local) = local {
        let _ = client.close(&SessionId(target.session_id.clone())).await;
        local.stop().await;
    }
    result
}

async fn verdict(
    client: &Client,
    subject: Subject,
    target: &PlanTarget,
    feedback: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let id = SessionId(target.session_id.clone());
    let after = client.session(&id).await.map_err(api_error)?.last_seq;
    // Subscribed before the turn starts: nothing of it can be missed.
    let events = client.events(&id, after).await?;
    let created = match (subject, feedback) {
        (Subject::Plan, None) => client.accept_plan(&id).await,
        (Subject::Plan, Some(feedback)) => client.reject_plan(&id, feedback).await,
        (Subject::Spec, None) => client.accept_spec(&id).await,
        (Subject::Spec, Some(feedback)) => client.reject_spec(&id, feedback).await,
    }
    .map_err(api_error)?;
    let renderer: Box<dyn Render> = if target.json {
        Box::new(JsonLines)
    } else {
        Box::new(Human::new())
    };
    let end = follow_turn(client, &id, after, events, &created.turn_id, renderer).await?;
    if let Some(proposed) = end.proposed {
        proposal_hint(&id, proposed, target.json);
    }
    Ok(exit_code(&end.kind))
}
