//! `cortex`: the command-line client.
//!
//! Alone (or `attach SESSION_ID`) it opens the terminal UI; `exec` runs one
//! turn on a repository and streams its timeline; `sessions` renders stored
//! timelines; `acp` serves the Agent Client Protocol to an editor on
//! stdio; `completions` and `man` document the rest. The internal
//! `guest` subcommand is the guest agent (the harness starts it as a child
//! of itself, so one binary is all there is to install).

mod acp;
mod approve;
mod completions;
mod config;
mod doctor;
mod exec;
mod exec_goal;
mod extensions_cmd;
mod flags;
mod follow;
mod guests;
mod hooks_cmd;
mod init;
mod json_out;
mod local_server;
mod logging;
mod mcp_cmd;
mod models;
#[cfg(feature = "local")]
mod models_cmd;
mod plan_cmd;
mod providers;
mod render;
mod render_goal;
mod rewind_cmd;
mod rules_cmd;
mod secrets;
mod serve;
mod session_args;
mod sessions;
mod tokens_cmd;
mod tui;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cortex",
    version,
    about = "Cortex Code: a coding agent with modes and a guest",
    long_about = "Cortex Code: a coding agent with modes and a guest.\n\n\
                  Without a subcommand, opens the terminal UI on a new session (or \
                  --session ID) with the same flags as `exec`.",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    ui: session_args::SessionArgs,
    /// Also print log records (retries, warnings) on stderr; without it
    /// they go to the log file under $XDG_STATE_HOME/cortex/ only.
    #[arg(long, global = true)]
    verbose: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Run one turn on a repository and stream it.
    #[command(
        after_help = "Examples:\n  cortex exec --repo . \"why does the calc test fail?\" --mode ask\n  \
        cortex exec --repo ~/src/app --model openai:gpt-4o-mini \"fix the failing test\"\n  \
        cortex exec --session 0193… --json \"now add a test for it\""
    )]
    Exec(exec::ExecArgs),
    /// Write a first AGENTS.md for the repository: one Agent turn that
    /// finds the build and test commands and the layout.
    #[command(after_help = "Examples:\n  cortex init --repo .\n  \
        cortex init --repo ~/src/app --model openai:gpt-4o-mini")]
    Init(init::InitArgs),
    /// Serve the Agent Client Protocol on stdio, for editors (Zed, JetBrains…).
    #[command(after_help = "Examples:\n  cortex acp\n  \
        cortex acp --model openai:gpt-4o-mini --mode ask\n  \
        CORTEX_TOKEN=… cortex acp --server http://127.0.0.1:7433")]
    Acp(acp::AcpArgs),
    /// Open the terminal UI on a stored session (its whole timeline, then
    /// what happens live).
    #[command(after_help = "Examples:\n  cortex attach 0193…\n  \
        CORTEX_TOKEN=… cortex attach 0193… --server http://127.0.0.1:7433")]
    Attach(tui::AttachArgs),
    /// List and show stored sessions.
    #[command(
        after_help = "Examples:\n  cortex sessions list\n  cortex sessions show 0193… --json"
    )]
    Sessions {
        #[command(subcommand)]
        command: sessions::SessionsCommand,
    },
    /// Go back to before a turn (the last by default): the workspace's
    /// files as checkpointed before it, the conversation without it and the
    /// turns after it, or both. Files changed outside the session are not
    /// overwritten without --force; the rewind prints how to undo it.
    #[command(after_help = "Examples:\n  cortex rewind 0193…\n  \
        cortex rewind 0193… 0193…e7 --files\n  \
        cortex rewind 0193… --conversation --json\n  \
        cortex rewind 0193… undo-0193… --files")]
    Rewind(rewind_cmd::RewindArgs),
    /// Accept or reject a session's proposed plan (either starts a turn).
    #[command(after_help = "Examples:\n  cortex plan accept 0193…\n  \
        cortex plan reject 0193… \"split step 2 in two\"")]
    Plan {
        #[command(subcommand)]
        command: plan_cmd::PlanCommand,
    },
    /// Accept or reject a session's proposed spec phase (either starts a
    /// turn; accepting the tasks writes `specs/<slug>/` and implements them).
    #[command(after_help = "Examples:\n  cortex spec accept 0193…\n  \
        cortex spec reject 0193… \"add a story for errors\"")]
    Spec {
        #[command(subcommand)]
        command: plan_cmd::SpecCommand,
    },
    /// List or remove approval rules (added by answering Always).
    #[command(after_help = "Examples:\n  cortex rules list\n  cortex rules rm 0193…")]
    Rules {
        #[command(subcommand)]
        command: rules_cmd::RulesCommand,
    },
    /// The MCP servers of the config file: their state and tools.
    #[command(after_help = "Examples:\n  cortex mcp list\n  cortex mcp list --json")]
    Mcp {
        #[command(subcommand)]
        command: mcp_cmd::McpCommand,
    },
    /// Custom commands (`.cortex/commands/`, `.claude/commands/`, the
    /// user's): what a session finds and what was rejected.
    #[command(after_help = "Examples:\n  cortex commands list\n  cortex commands list --json")]
    Commands {
        #[command(subcommand)]
        command: extensions_cmd::CommandsCommand,
    },
    /// Skills (`SKILL.md` folders in `.cortex/skills/`, `.agents/skills/`,
    /// `.claude/skills/`, the user's): what a session finds and what was
    /// rejected.
    #[command(after_help = "Examples:\n  cortex skills list\n  cortex skills list --json")]
    Skills {
        #[command(subcommand)]
        command: extensions_cmd::SkillsCommand,
    },
    /// Hooks: the user's own (`[hooks]` in config.toml, `hooks.json`), run
    /// on this machine, and the repository's hook files, run in the guest
    /// once trusted.
    #[command(after_help = "Examples:\n  cortex hooks list\n  cortex hooks trust --repo ~/src/app")]
    Hooks {
        #[command(subcommand)]
        command: hooks_cmd::HooksCommand,
    },
    /// Check what a session needs: isolation, model, keys, store, MCP
    /// servers, terminal; each failure with its fix (exit 1 when a session
    /// could not run).
    #[command(after_help = "Examples:\n  cortex doctor\n  \
        cortex doctor --json | jq '.checks[] | select(.status != \"ok\")'")]
    Doctor(doctor::DoctorArgs),
    /// Serve the session API (HTTP + SSE) on a TCP address or Unix socket.
    #[command(after_help = "Examples:\n  cortex serve\n  \
        cortex serve --listen unix:/run/user/1000/cortex.sock --store postgres://cortex@localhost/cortex")]
    Serve(serve::ServeArgs),
    /// The principals `cortex serve` accepts, each with its own token.
    #[command(
        after_help = "Examples:\n  cortex tokens add alice\n  cortex tokens list\n  \
        cortex tokens revoke alice"
    )]
    Tokens {
        #[command(subcommand)]
        command: tokens_cmd::TokensCommand,
    },
    /// The embedded local models.
    #[cfg(feature = "local")]
    #[command(
        after_help = "Examples:\n  cortex models list\n  cortex models fetch qwen2.5-coder-1.5b"
    )]
    Models {
        #[command(subcommand)]
        command: models_cmd::ModelsCommand,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "Examples:\n  source <(cortex completions bash)\n  \
        cortex completions zsh > ~/.zfunc/_cortex\n  \
        cortex completions fish > ~/.config/fish/completions/cortex.fish")]
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) with every subcommand.
    #[command(after_help = "Example:\n  cortex man > cortex.1 && man ./cortex.1")]
    Man,
}

/// The internal subcommand the harness starts its guest agent with
/// (`cortex guest --sandbox SPEC …`). It is not a user command, so it is
/// dispatched before clap: no help, no completion, no man page.
const GUEST_SUBCOMMAND: &str = "guest";

fn main() -> ExitCode {
    let mut argv = std::env::args_os().skip(1);
    if argv.next().is_some_and(|first| first == GUEST_SUBCOMMAND) {
        // The guest builds its own runtime and must not log to stdout.
        let args: Vec<String> = argv.map(|a| a.to_string_lossy().into_owned()).collect();
        return cortex_guest::main_entry(args);
    }
    // Arguments first: `--version` and `--help` end here, before the
    // config file is read.
    let cli = Cli::parse();
    // The names a config file gives provider keys; a broken file is
    // reported later, where it is read for real.
    let configured: Vec<String> = config::Config::load()
        .map(|c| {
            [c.openai.api_key_env, c.anthropic.api_key_env]
                .into_iter()
                .flatten()
                .collect()
        })
        .unwrap_or_default();
    // SAFETY: nothing has started a thread yet (the runtime is built later).
    unsafe { secrets::take(&configured) };
    match cli.command {
        Some(Command::Completions { shell }) => finish(completions::completions::<Cli>(shell)),
        Some(Command::Man) => finish(completions::man::<Cli>()),
        Some(Command::Tokens { command }) => finish(tokens_cmd::run(command)),
        // Listing reads files only: no runtime, no logging.
        Some(Command::Commands { command }) => finish(extensions_cmd::run_commands(command)),
        Some(Command::Skills { command }) => finish(extensions_cmd::run_skills(command)),
        Some(Command::Hooks { command }) => finish(hooks_cmd::run_hooks(command)),
        other => run(other, cli.ui, cli.verbose),
    }
}

/// The subcommands (and the terminal UI, `None`) that need the async
/// runtime and logging.
fn run(command: Option<Command>, ui: session_args::SessionArgs, verbose: bool) -> ExitCode {
    let server = matches!(command, Some(Command::Serve(_)));
    logging::init(logging::choose(verbose, server), verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match command {
            None => tui::run(ui).await,
            Some(Command::Exec(args)) => exec::run(args).await,
            Some(Command::Init(args)) => init::run(args).await,
            Some(Command::Acp(args)) => acp::run(args).await,
            Some(Command::Attach(args)) => tui::attach(args).await,
            Some(Command::Sessions { command }) => sessions::run(command).await,
            Some(Command::Rewind(args)) => rewind_cmd::run(args).await,
            Some(Command::Plan { command }) => {
                plan_cmd::run(plan_cmd::Subject::Plan, command).await
            }
            Some(Command::Spec { command }) => {
                plan_cmd::run(plan_cmd::Subject::Spec, command.into()).await
            }
            Some(Command::Rules { command }) => rules_cmd::run(command).await,
            Some(Command::Mcp { command }) => mcp_cmd::run(command).await,
            Some(Command::Serve(args)) => serve::run(args).await,
            Some(Command::Doctor(args)) => doctor::run(args).await,
            #[cfg(feature = "local")]
            Some(Command::Models { command }) => models_cmd::run(command).await,
            Some(
                Command::Completions { .. }
                | Command::Man
                | Command::Tokens { .. }
                | Command::Commands { .. }
                | Command::Skills { .. }
                | Command::Hooks { .. },
            ) => Ok(ExitCode::SUCCESS),
        }
    });
    finish(result)
}

fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", cortex_term::sanitize(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every subcommand a user can see, at any depth, ends its `--help` with
    /// an example. A new subcommand without one fails here.
    #[test]
    fn every_visible_subcommand_has_an_example() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
                let path = format!("{path} {}", sub.get_name());
                let example = sub
                    .get_after_help()
                    .is_some_and(|help| help.to_string().contains("Example"));
                if !example {
                    missing.push(path.clone());
                }
                walk(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "cortex", &mut missing);
        assert!(missing.is_empty(), "no example in --help: {missing:?}");
    }
}
