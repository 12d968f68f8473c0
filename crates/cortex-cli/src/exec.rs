//! `cortex exec`: one turn on a repository, streamed.

use crate::config::{self, Config};
use crate::guests::GuestChoice;
use crate::render::{Human, JsonLines, Render};
use anyhow::Context;
use clap::Args;
use cortex_core::{Session, SessionConfig, TurnOutcome};
use cortex_protocol::{
    Event, EventKind, Mode, NetworkPolicy, Sandbox, SandboxPolicy, SessionId, StopRule,
    WorkspaceMode,
};
use cortex_runtime::allowed_env;
use cortex_store::Store;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

#[derive(Args)]
pub struct ExecArgs {
    /// The repository to work in.
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
    /// What the guest may change: read-only, workspace-write (the workspace
    /// only), or full-access (no isolation: the guest is an ordinary process).
    #[arg(long, default_value = "workspace-write")]
    sandbox: SandboxPolicy,
    /// Whether the guest reaches the network.
    #[arg(long, default_value = "off")]
    network: NetworkPolicy,
    /// Where tools run: local (the sandbox), process (no isolation),
    /// remote:HOST:PORT (token in CORTEX_GUEST_TOKEN) or docker:IMAGE.
    #[arg(long, default_value = "local")]
    guest: GuestChoice,
    /// in-place (the repository itself) or copy (an isolated copy in the
    /// session's data folder). A git URL as --repo is cloned first.
    #[arg(long, default_value = "in-place")]
    workspace: WorkspaceMode,
    /// What to ask.
    prompt: String,
}

/// Exit codes: 0 completed, 1 failed, 130 stopped.
pub async fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load()?;
    let selected = crate::models::select(args.model.as_deref(), &config)?;
    let model = selected.provider.clone();
    let store = config::open_store().await?;
    let guests = crate::guests::provider(&args.guest, &config)?;
    let data = config::data_dir()?;
    let repository = local_repository(&args.repo, &data)?;
    let session_config = SessionConfig {
        repository,
        mode: args.mode.unwrap_or(Mode::Agent),
        stop_rule: args.stop_rule,
        store: store.clone(),
        model,
        guests,
        guest_env: allowed_env(&config.guest.env),
        sandbox: Sandbox {
            policy: args.sandbox,
            network: args.network,
            workspace: args.workspace,
        },
        workspaces: Some(data.join("workspaces")),
    };
    let (mut session, after) = match &args.session {
        Some(id) => {
            let id = SessionId(id.clone());
            let last = store
                .get_session(&id)
                .await?
                .map(|s| s.last_seq)
                .with_context(|| format!("no session `{id}`"))?;
            let mut session = Session::resume(&id, session_config).await?;
            if let Some(mode) = args.mode {
                session.set_mode(mode).await?;
            }
            (session, last)
        }
        None => (Session::create(session_config).await?, 0),
    };

    let renderer: Box<dyn Render> = if args.json {
        Box::new(JsonLines)
    } else {
        Box::new(Human::new().with_meter(selected.meter.clone()))
    };
    let live = session.subscribe();
    let printer = tokio::spawn(print_turn(
        store.clone(),
        session.id().clone(),
        after,
        live,
        renderer,
    ));

    let cancel = CancellationToken::new();
    let interrupts = tokio::spawn(watch_interrupts(cancel.clone()));
    let outcome = session.run_turn(&args.prompt, cancel).await;
    interrupts.abort();
    session.close().await;
    // The turn's last event is persisted; the printer stops at it.
    let _ = printer.await;
    Ok(match outcome? {
        TurnOutcome::Completed { .. } => ExitCode::SUCCESS,
        TurnOutcome::Failed { .. } => ExitCode::FAILURE,
        TurnOutcome::Stopped { .. } => ExitCode::from(130),
    })
}

/// `--repo` as a local folder: a git URL is cloned (once) into the data
/// folder first.
fn local_repository(repo: &str, data: &std::path::Path) -> anyhow::Result<PathBuf> {
    if !cortex_core::is_git_url(repo) {
        return Ok(PathBuf::from(repo));
    }
    let name: String = repo
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .rsplit(['/', ':'])
        .next()
        .unwrap_or("repo")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let dest = data.join("clones").join(format!(
        "{}-{stamp}",
        if name.is_empty() { "repo" } else { &name }
    ));
    eprintln!("cloning {repo} into {}", dest.display());
    cortex_core::clone_url(repo, &dest).map_err(anyhow::Error::msg)?;
    Ok(dest)
}

/// First Ctrl-C stops the turn cleanly; a second exits at once.
async fn watch_interrupts(cancel: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    eprintln!("\nstopping… (Ctrl-C again to quit now)");
    cancel.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        std::process::exit(130);
    }
}

/// Print stored events after `after`, then live ones, until the turn ends.
/// A subscriber that lags catches up from the store: nothing is missed or
/// printed twice.
async fn print_turn(
    store: Arc<dyn Store>,
    session: SessionId,
    mut after: u64,
    mut live: tokio::sync::broadcast::Receiver<Event>,
    mut renderer: Box<dyn Render>,
) {
    // Events of earlier turns (a resumed session's interrupted turn being
    // closed) print too, but only the end of the turn this command started
    // ends the output.
    let mut started = false;
    let mut show = |event: &Event, after: &mut u64| -> bool {
        if event.seq <= *after {
            return false;
        }
        *after = event.seq;
        renderer.event(event);
        started |= matches!(event.kind, EventKind::TurnStarted { .. });
        started && event.kind.ends_turn()
    };
    loop {
        match store.events(&session, after).await {
            Ok(backlog) => {
                for event in &backlog {
                    if show(event, &mut after) {
                        return;
                    }
                }
            }
            Err(e) => {
                eprintln!("error: cannot read the timeline: {e}");
                return;
            }
        }
        loop {
            match live.recv().await {
                Ok(event) => {
                    if event.seq > after + 1 {
                        // A gap: fill it from the store.
                        break;
                    }
                    if show(&event, &mut after) {
                        return;
                    }
                }
                Err(RecvError::Lagged(_)) => break,
                Err(RecvError::Closed) => return,
            }
        }
    }
}
