//! `cortex init`: one Agent turn that writes a first `AGENTS.md` for the
//! repository from what the model finds in it. The prompt goes through the
//! same path as `cortex exec`'s (same flags, same output), so nothing here
//! reads or writes the repository itself: the model does, in the guest.

use crate::exec::{self, ExecArgs};
use crate::session_args::SessionArgs;
use clap::Args;
use cortex_protocol::Mode;
use std::process::ExitCode;

#[derive(Args)]
pub struct InitArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Print every timeline event as one JSON line.
    #[arg(long)]
    json: bool,
}

/// The task: the same text as the TUI's `/init` sends.
pub(crate) const PROMPT: &str = cortex_tui::app::init::INIT_PROMPT;

/// Always an Agent turn, whatever `--mode` says: it writes a file.
pub async fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    let mut session = args.session;
    session.mode = Some(Mode::Agent);
    exec::run(ExecArgs::with_prompt(session, args.json, PROMPT.to_owned())).await
}
