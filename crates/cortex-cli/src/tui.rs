//! `cortex` with no subcommand, and `cortex attach SESSION_ID`: the
//! terminal UI (`cortex-tui`) over the same session API `exec` drives, set
//! up by the same code (`session_args::open`, `local_server::connect`).
//!
//! While the UI draws, this process's stderr goes to a log file
//! (`$XDG_DATA_HOME/cortex/logs/tui.log`): a warning written to the
//! terminal would tear the screen.

use crate::config::{Config, data_dir};
use crate::flags::ReopenFlags;
use crate::guests::GuestChoice;
use crate::local_server;
use crate::session_args::{SessionArgs, open};
use anyhow::Context;
use clap::Args;
use cortex_model::ModelInfo;
use cortex_protocol::SessionId;
use cortex_tui::{Launch, NewSessions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::process::ExitCode;

#[derive(Args)]
pub struct AttachArgs {
    /// The session to show (`cortex sessions list` names them).
    pub session_id: String,
    // Live turns of another process are only seen through a shared
    // server (`--server`).
    #[command(flatten)]
    pub reopen: ReopenFlags,
    /// Where tools run when the session's guest is started here.
    #[arg(long, default_value = "local")]
    pub guest: GuestChoice,
}

/// Exit code 2 when there is no terminal to draw on.
const NOT_A_TERMINAL: u8 = 2;

/// `cortex [FLAGS]`: create or resume the session, then the UI.
pub async fn run(args: SessionArgs) -> anyhow::Result<ExitCode> {
    if let Some(code) = refuse_without_terminal() {
        return Ok(code);
    }
    let (client, local) = args
        .server
        .connect(args.model.clone(), &args.guests.guest)
        .await?;
    let mut args = args;
    if args.session.is_none() {
        // The UI can answer: a new session asks unless `--approval` says.
        args.approval
            .get_or_insert(cortex_protocol::ApprovalPolicy::Ask);
    }
    let opened = match open(&client, &args, local.is_some()).await {
        Ok(opened) => opened,
        Err(e) => {
            if let Some(local) = local {
                local.stop().await;
            }
            return Err(e);
        }
    };
    let new_sessions = NewSessions {
        body: opened.body,
        close_left: local.is_some(),
    };
    show(client, local, opened.id, new_sessions).await
}

/// `cortex attach SESSION_ID`.
pub async fn attach(args: AttachArgs) -> anyhow::Result<ExitCode> {
    if let Some(code) = refuse_without_terminal() {
        return Ok(code);
    }
    let (client, local) = args.reopen.connect(&args.guest).await?;
    let id = SessionId(args.session_id);
    if let Err(e) = client.session(&id).await {
        if let Some(local) = local {
            local.stop().await;
        }
        if e.status() == Some(404) {
            anyhow::bail!("no session `{id}`");
        }
        return Err(e.into());
    }
    let new_sessions = NewSessions {
        body: None,
        close_left: local.is_some(),
    };
    show(client, local, id, new_sessions).await
}

fn refuse_without_terminal() -> Option<ExitCode> {
    let e = cortex_tui::check_terminal().err()?;
    eprintln!(
        "cortex: {e}, and the interactive UI draws on a terminal.\n\
         For scripts and pipes use `cortex exec PROMPT` (`--json` for one event per line)."
    );
    Some(ExitCode::from(NOT_A_TERMINAL))
}

async fn show(
    client: cortex_client::Client,
    local: Option<local_server::LocalServer>,
    id: SessionId,
    new_sessions: NewSessions,
) -> anyhow::Result<ExitCode> {
    let config = Config::load()?;
    let launch = Launch {
        client,
        session: id.clone(),
        new_sessions,
        context_window: Box::new(move |model: &str| context_window(&config, model)),
        doctor: Box::new(|repository| Box::pin(crate::doctor::tui_lines(repository))),
        // The in-process server reads this very file; a remote one its own.
        user_instructions: local
            .is_some()
            .then(crate::config::config_path)
            .and_then(Result::ok)
            .and_then(|p| p.parent().map(|dir| dir.join("AGENTS.md"))),
    };
    let stderr = StderrToLog::start()?;
    let result = cortex_tui::run(launch).await;
    if let Some(local) = local {
        // Ends what still runs: the UI's turn and guests die with it.
        local.stop().await;
    }
    drop(stderr);
    let exit = result?;
    let session = cortex_term::sanitize_line(exit.session.as_str()).into_owned();
    // Not eprintln!: after a hang-up the terminal refuses writes, and that
    // is no reason to panic on the way out.
    let line = if exit.turn_running {
        format!("session {session} (its turn goes on in the server) · cortex attach {session}")
    } else {
        format!("session {session} · cortex attach {session} to come back")
    };
    let _ = writeln!(std::io::stderr(), "{line}");
    Ok(ExitCode::SUCCESS)
}

/// The context window of `PROVIDER:NAME` from the config's overrides or the
/// built-in table.
fn context_window(config: &Config, model: &str) -> Option<u64> {
    let name = model.split_once(':').map_or(model, |(_, name)| name);
    config
        .models
        .get(name)
        .and_then(|o| o.context_window)
        .or_else(|| ModelInfo::built_in(name).map(|info| info.context_window))
}

/// Points fd 2 at the log file until dropped.
struct StderrToLog {
    saved: libc::c_int,
}

impl StderrToLog {
    fn start() -> anyhow::Result<StderrToLog> {
        let dir = data_dir()?.join("logs");
        // What reaches stderr quotes requests and errors: the user's alone.
        crate::config::private_dir(&dir)?;
        let path = dir.join("tui.log");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        // SAFETY: plain descriptor calls; fd 2 always exists in a process
        // started from a terminal (checked above), and `file` outlives them.
        let saved = unsafe { libc::dup(2) };
        if saved < 0 {
            anyhow::bail!("cannot redirect stderr to {}", path.display());
        }
        // SAFETY: both descriptors are open (`saved` just made, `file` alive).
        if unsafe { libc::dup2(file.as_raw_fd(), 2) } < 0 {
            // SAFETY: `saved` is ours and not used again.
            unsafe { libc::close(saved) };
            anyhow::bail!("cannot redirect stderr to {}", path.display());
        }
        Ok(StderrToLog { saved })
    }
}

impl Drop for StderrToLog {
    fn drop(&mut self) {
        // SAFETY: `saved` is the descriptor `dup` returned above.
        unsafe {
            libc::dup2(self.saved, 2);
            libc::close(self.saved);
        }
    }
}
