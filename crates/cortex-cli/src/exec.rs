//! `cortex exec`: one turn on a repository, streamed. It drives the session
//! API through `cortex-client`: an in-process server on a private Unix
//! socket by default, or `--server URL`; the output is the same either way.

use crate::approve;
use crate::follow::{follow, watch_interrupts};
use crate::render::{Human, JsonLines, Render};
use crate::session_args::{SessionArgs, api_error, open};
use clap::Args;
use cortex_client::Client;
use cortex_protocol::{EventKind, SessionId, SpecPhase, TurnId};
use std::process::ExitCode;

#[derive(Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub(crate) session: SessionArgs,
    /// Print every timeline event as one JSON line.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) goal_flags: crate::exec_goal::GoalFlags,
    /// What to ask (not with --goal or --resume-goal); with --command, the
    /// command's first argument.
    #[arg(required_unless_present_any = ["goal", "resume_goal", "command"], conflicts_with_all = ["goal", "goal_turns", "goal_tokens", "goal_minutes", "resume_goal"])]
    prompt: Option<String>,
    /// Run the custom command NAME (`cortex commands list`) instead of a
    /// prompt; the words after it are its arguments.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["goal", "goal_turns", "goal_tokens", "goal_minutes", "resume_goal"])]
    command: Option<String>,
    /// The custom command's further arguments (with --command).
    #[arg(requires = "command", value_name = "ARGS")]
    command_args: Vec<String>,
    /// Attach an image (PNG, JPEG, GIF or WebP) to the prompt; repeat for
    /// more. The session's model must take images.
    #[arg(
        long = "image",
        value_name = "PATH",
        requires = "prompt",
        conflicts_with = "command"
    )]
    images: Vec<std::path::PathBuf>,
}

impl ExecArgs {
    /// One turn of `prompt`, as `cortex init` sends it.
    pub(crate) fn with_prompt(session: SessionArgs, json: bool, prompt: String) -> ExecArgs {
        ExecArgs {
            session,
            json,
            goal_flags: Default::default(),
            prompt: Some(prompt),
            command: None,
            command_args: Vec::new(),
            images: Vec::new(),
        }
    }
}

/// Exit codes: 0 completed, 1 failed, 130 stopped (for a goal, see
/// `exec_goal`).
pub async fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
    let session = &args.session;
    let (client, local) = session
        .server
        .connect(session.model.clone(), &session.guests.guest)
        .await?;
    let result = match (&args.command, &args.prompt) {
        (Some(name), _) => {
            let words = args.prompt.iter().chain(&args.command_args);
            let ask = Ask::Command {
                name,
                arguments: command_arguments(words),
            };
            run_turn(&client, &args, ask, local.is_some()).await
        }
        (None, Some(prompt)) => {
            run_turn(&client, &args, Ask::Prompt(prompt), local.is_some()).await
        }
        (None, None) => {
            crate::exec_goal::run(
                &client,
                &args.session,
                args.json,
                &args.goal_flags,
                local.is_some(),
            )
            .await
        }
    };
    if let Some(local) = local {
        local.stop().await;
    }
    result
}

/// The files of `--image`, each read whole (the server checks what they
/// are and their size; a file far over that limit is refused here first).
fn read_images(paths: &[std::path::PathBuf]) -> anyhow::Result<Vec<cortex_client::TurnAttachment>> {
    use anyhow::Context;
    let limit = cortex_core::images::MAX_IMAGE_BYTES as u64;
    paths
        .iter()
        .map(|path| {
            let size = std::fs::metadata(path)
                .with_context(|| format!("cannot read the image {}", path.display()))?
                .len();
            if size > limit {
                anyhow::bail!(
                    "the image {} is {size} bytes; the limit is {limit}",
                    path.display()
                );
            }
            let bytes = std::fs::read(path)
                .with_context(|| format!("cannot read the image {}", path.display()))?;
            Ok(cortex_client::TurnAttachment::of_bytes(&bytes))
        })
        .collect()
}

/// What a turn runs: the user's prompt, or a custom command.
enum Ask<'a> {
    Prompt(&'a str),
    Command { name: &'a str, arguments: String },
}

/// A custom command's words as its argument text: a word with a blank in it
/// quoted, so `$1`, `$2`… split it back as the shell gave it.
fn command_arguments<'a>(words: impl Iterator<Item = &'a String>) -> String {
    words
        .map(|w| {
            if !w.contains(char::is_whitespace) && !w.is_empty() {
                w.clone()
            } else if w.contains('\'') {
                format!("\"{w}\"")
            } else {
                format!("'{w}'")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

async fn run_turn(
    client: &Client,
    args: &ExecArgs,
    ask: Ask<'_>,
    local: bool,
) -> anyhow::Result<ExitCode> {
    let interactive = approve::interactive();
    let mut session = args.session.clone();
    if session.session.is_none() || session.approval.is_some() {
        let (policy, note) = approve::exec_policy(session.approval, interactive);
        if let Some(note) = note {
            eprintln!("{note}");
        }
        session.approval = Some(policy);
    }
    // Read before the session opens: a missing file fails before anything.
    let attachments = read_images(&args.images)?;
    let opened = open(client, &session, local).await?;
    let (id, after) = (opened.id, opened.last_seq);

    let renderer: Box<dyn Render> = if args.json {
        Box::new(JsonLines)
    } else {
        Box::new(Human::new())
    };
    // Subscribed before the turn starts: nothing of it can be missed.
    let events = client.events(&id, after).await?;
    let started = match &ask {
        Ask::Prompt(prompt) => {
            let body = cortex_client::CreateTurn {
                message: (*prompt).to_owned(),
                attachments,
            };
            client.start_turn_with(&id, &body).await
        }
        Ask::Command { name, arguments } => client.run_command(&id, name, arguments).await,
    };
    let turn = started.map_err(api_error)?.turn_id;
    let interrupts = tokio::spawn(watch_interrupts(client.clone(), id.clone()));
    let answers = tokio::spawn(approve::answer_requests(
        client.clone(),
        id.clone(),
        after,
        turn.clone(),
        interactive,
    ));
    let end = follow_turn(client, &id, after, events, &turn, renderer).await;
    interrupts.abort();
    answers.abort();
    if local {
        let _ = client.close(&id).await;
    }
    let end = end?;
    if let Some(proposed) = end.proposed {
        proposal_hint(&id, proposed, args.json);
    }
    Ok(exit_code(&end.kind))
}

/// The process's exit code for how a turn ended.
pub(crate) fn exit_code(end: &EventKind) -> ExitCode {
    match end {
        EventKind::TurnCompleted { .. } => ExitCode::SUCCESS,
        EventKind::TurnStopped { .. } => ExitCode::from(130),
        _ => ExitCode::FAILURE,
    }
}

/// What a turn proposed for the user's verdict (the last proposal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proposed {
    Plan { version: u32 },
    Spec { phase: SpecPhase, version: u32 },
}

/// After a turn that proposed a plan or a spec phase: the commands that
/// accept or reject it (on stderr with `--json`, whose stdout is JSON lines
/// only).
pub(crate) fn proposal_hint(id: &SessionId, proposed: Proposed, json: bool) {
    let (what, command) = match proposed {
        Proposed::Plan { version } => (format!("plan v{version}"), "plan"),
        Proposed::Spec { phase, version } => (format!("spec {phase} v{version}"), "spec"),
    };
    let hint = format!(
        "{what} proposed. Accept it:  cortex {command} accept {id}\n\
         Reject it:  cortex {command} reject {id} \"FEEDBACK\""
    );
    if json {
        eprintln!("{hint}");
    } else {
        println!("{hint}");
    }
}

/// How a followed turn ended.
pub(crate) struct TurnEnd {
    /// Its `turn.*` end event.
    pub kind: EventKind,
    /// The last plan or spec phase it proposed, if any.
    pub proposed: Option<Proposed>,
}

/// Print events after `after` until the end of `turn`; returns that end.
/// Events of earlier turns (a resumed session's interrupted turn being
/// closed) print too.
pub(crate) async fn follow_turn(
    client: &Client,
    id: &SessionId,
    after: u64,
    events: cortex_client::EventStream,
    turn: &TurnId,
    renderer: Box<dyn Render>,
) -> anyhow::Result<TurnEnd> {
    let mut proposed = None;
    let end = follow(client, id, after, events, renderer, |event| {
        if event.turn_id.as_ref() != Some(turn) {
            return false;
        }
        match &event.kind {
            EventKind::PlanProposed { version, .. } => {
                proposed = Some(Proposed::Plan { version: *version });
            }
            EventKind::SpecProposed { phase, version, .. } => {
                proposed = Some(Proposed::Spec {
                    phase: *phase,
                    version: *version,
                });
            }
            _ => {}
        }
        event.kind.ends_turn()
    })
    .await?;
    Ok(TurnEnd {
        kind: end.kind,
        proposed,
    })
}
