//! `cortex exec`: one turn on a repository, streamed. It drives the session
//! API through `cortex-client`: an in-process server on a private Unix
//! socket by default, or `--server URL`; the output is the same either way.

use crate::guests::GuestChoice;
use crate::local_server;
use crate::render::{Human, JsonLines, Render};
use anyhow::{Context, bail};
use clap::Args;
use cortex_client::{Client, ClientError};
use cortex_protocol::{
    EventKind, Mode, NetworkPolicy, SandboxPolicy, SessionId, StopRule, TurnId, WorkspaceMode,
};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ExecArgs {
    /// The repository to work in: a folder, or a git URL (cloned first).
    #[arg(long, default_value = ".")]
    repo: String,
    /// ask (read-only), plan (read-only + plan tool), spec, or agent
    /// (everything). Default: agent, or the resumed session's mode.
    #[arg(long)]
    mode: Option<Mode>,
    /// PROVIDER:NAME, e.g. openai:gpt-4o-mini. Default: `model` in the config file.
    #[arg(long)]
    model: Option<String>,
    /// Print every timeline event as one JSON line.
    #[arg(long)]
    json: bool,
    /// When a turn stops on its own: code (never), chat (8 tool rounds), bot
    /// (15 minutes or six identical calls).
    #[arg(long, default_value = "code")]
    stop_rule: StopRule,
    /// Continue a stored session instead of starting one.
    #[arg(long)]
    session: Option<String>,
    /// Drive a running `cortex serve` (http://HOST:PORT or unix:PATH; token
    /// in CORTEX_TOKEN) instead of an in-process server.
    #[arg(long)]
    server: Option<String>,
    /// What the guest may change: read-only, workspace-write (the workspace
    /// only), or full-access (no isolation: the guest is an ordinary process).
    #[arg(long, default_value = "workspace-write")]
    sandbox: SandboxPolicy,
    /// Whether the guest reaches the network.
    #[arg(long, default_value = "off")]
    network: NetworkPolicy,
    /// Where tools run: local (the sandbox), process (no isolation),
    /// remote:HOST:PORT (token in CORTEX_GUEST_TOKEN) or docker:IMAGE. With
    /// --server, the server's own choice applies.
    #[arg(long, default_value = "local")]
    guest: GuestChoice,
    /// in-place (the repository itself) or copy (an isolated copy in the
    /// session's data folder).
    #[arg(long, default_value = "in-place")]
    workspace: WorkspaceMode,
    /// What to ask.
    prompt: String,
}

/// How many times a dropped event stream is reopened before giving up.
const RECONNECTS: u32 = 5;

/// Exit codes: 0 completed, 1 failed, 130 stopped.
pub async fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
    let (client, local) =
        local_server::connect(args.server.as_deref(), args.model.clone(), &args.guest).await?;
    let result = run_turn(&client, &args, local.is_some()).await;
    if let Some(local) = local {
        local.stop().await;
    }
    result
}

async fn run_turn(client: &Client, args: &ExecArgs, local: bool) -> anyhow::Result<ExitCode> {
    let (id, after) = match &args.session {
        Some(id) => {
            let id = SessionId(id.clone());
            let view = match client.session(&id).await {
                Err(e) if e.status() == Some(404) => bail!("no session `{id}`"),
                other => other?,
            };
            if let Some(mode) = args.mode {
                client.set_mode(&id, mode).await?;
            }
            (id, view.last_seq)
        }
        None => {
            // A git URL is cloned by whichever side runs the guest: here for
            // the in-process server, by the server otherwise.
            let repository = if cortex_core::is_git_url(&args.repo) {
                if local {
                    let clones = crate::config::data_dir()?.join("clones");
                    eprintln!("cloning {}…", args.repo);
                    let path =
                        cortex_core::clone_into(&args.repo, &clones).map_err(anyhow::Error::msg)?;
                    path.display().to_string()
                } else {
                    args.repo.clone()
                }
            } else {
                let path = PathBuf::from(&args.repo);
                path.canonicalize()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| args.repo.clone())
            };
            let view = client
                .create_session(serde_json::json!({
                    "repository": repository,
                    "mode": args.mode.unwrap_or(Mode::Agent),
                    "model": args.model,
                    "stop_rule": args.stop_rule,
                    "sandbox": {
                        "policy": args.sandbox,
                        "network": args.network,
                        "workspace": args.workspace,
                    },
                }))
                .await
                .map_err(api_error)?;
            (view.id, 0)
        }
    };

    let renderer: Box<dyn Render> = if args.json {
        Box::new(JsonLines)
    } else {
        Box::new(Human::new())
    };
    // Subscribed before the turn starts: nothing of it can be missed.
    let events = client.events(&id, after).await?;
    let turn = client
        .start_turn(&id, &args.prompt)
        .await
        .map_err(api_error)?
        .turn_id;
    let interrupts = tokio::spawn(watch_interrupts(client.clone(), id.clone()));
    let end = print_turn(client, &id, after, events, &turn, renderer).await;
    interrupts.abort();
    if local {
        let _ = client.close(&id).await;
    }
    Ok(match end? {
        EventKind::TurnCompleted { .. } => ExitCode::SUCCESS,
        EventKind::TurnStopped { .. } => ExitCode::from(130),
        _ => ExitCode::FAILURE,
    })
}

fn api_error(e: ClientError) -> anyhow::Error {
    match e {
        ClientError::Api { message, .. } => anyhow::anyhow!(message),
        other => other.into(),
    }
}

/// First Ctrl-C stops the turn cleanly; a second exits at once. A SIGINT
/// within [`SAME_INTERRUPT`] of the first is that one delivered again: GNU
/// `timeout` signals the command and then its whole process group.
async fn watch_interrupts(client: Client, id: SessionId) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    let first = std::time::Instant::now();
    eprintln!("\nstopping… (Ctrl-C again to quit now)");
    // Listening again at once, not after the stop request: a Ctrl-C while
    // it is under way still quits.
    tokio::spawn(async move {
        if let Err(e) = client.stop(&id).await {
            tracing::warn!("stop: {e}");
        }
    });
    while tokio::signal::ctrl_c().await.is_ok() {
        if first.elapsed() >= SAME_INTERRUPT {
            std::process::exit(130);
        }
    }
}

/// Far shorter than two presses of a key, far longer than two signals sent
/// back to back.
const SAME_INTERRUPT: std::time::Duration = std::time::Duration::from_millis(100);

/// Print events after `after` until the end of `turn`; returns that end.
/// Events of earlier turns (a resumed session's interrupted turn being
/// closed) print too. A dropped stream is reopened where it stopped, so
/// nothing is missed or printed twice.
async fn print_turn(
    client: &Client,
    id: &SessionId,
    mut after: u64,
    mut events: cortex_client::EventStream,
    turn: &TurnId,
    mut renderer: Box<dyn Render>,
) -> anyhow::Result<EventKind> {
    let mut reconnects = 0;
    loop {
        match events.next().await {
            Some(Ok(event)) => {
                if event.seq <= after {
                    continue;
                }
                after = event.seq;
                renderer.event(&event);
                if event.turn_id.as_ref() == Some(turn) && event.kind.ends_turn() {
                    return Ok(event.kind);
                }
            }
            Some(Err(e)) if reconnects >= RECONNECTS => {
                return Err(e).context("the event stream failed");
            }
            None if reconnects >= RECONNECTS => bail!("the server closed the event stream"),
            Some(Err(_)) | None => {
                reconnects += 1;
                events = client.events(id, after).await?;
            }
        }
    }
}
