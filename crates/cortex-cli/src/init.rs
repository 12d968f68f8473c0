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

/// The task: the facts an agent needs first, found rather than guessed.
pub(crate) const PROMPT: &str = "Write AGENTS.md at the repository root: the instructions \
a coding agent reads before working here. Find out first, with tools: how to build, test \
(one test too) and lint, from the build files, scripts and CI configuration; the layout (the \
main folders and what is in each); conventions the code follows. Then write a short \
Markdown file (under 60 lines) with sections for commands, layout and conventions, \
stating only what you found. If AGENTS.md already exists, read it and update it: keep \
what is still true.";

/// Always an Agent turn, whatever `--mode` says: it writes a file.
pub async fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    let mut session = args.session;
    session.mode = Some(Mode::Agent);
    exec::run(ExecArgs::with_prompt(session, args.json, PROMPT.to_owned())).await
}
