//! `cortex`: the command-line client.
//!
//! `exec` runs one turn on a repository and streams its timeline; `sessions`
//! renders stored timelines; `guest` is the guest agent (the harness starts
//! it as a child of itself, so one binary is all there is to install).

mod config;
mod exec;
mod guests;
mod local_server;
mod models;
#[cfg(feature = "local")]
mod models_cmd;
mod providers;
mod render;
mod serve;
mod sessions;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cortex",
    version,
    about = "Cortex Code: a coding agent with modes and a guest"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one turn on a repository and stream it.
    Exec(exec::ExecArgs),
    /// List and show stored sessions.
    Sessions {
        #[command(subcommand)]
        command: sessions::SessionsCommand,
    },
    /// Serve the session API (HTTP + SSE) on a TCP address or Unix socket.
    Serve(serve::ServeArgs),
    /// The embedded local models.
    #[cfg(feature = "local")]
    Models {
        #[command(subcommand)]
        command: models_cmd::ModelsCommand,
    },
    /// Serve the guest agent protocol on stdin/stdout (started by the harness).
    #[command(hide = true)]
    Guest {
        /// Arguments for the guest agent (`--root PATH`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Guest { args } = cli.command {
        // The guest builds its own runtime and must not log to stdout.
        return cortex_guest::main_entry(args);
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CORTEX_LOG")
                // llama.cpp warns about quirks of the model files it loads;
                // they are not the user's to act on.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,llama-cpp-2=error")),
        )
        .init();
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
        match cli.command {
            Command::Exec(args) => exec::run(args).await,
            Command::Sessions { command } => sessions::run(command).await,
            Command::Serve(args) => serve::run(args).await,
            #[cfg(feature = "local")]
            Command::Models { command } => models_cmd::run(command).await,
            Command::Guest { .. } => Ok(ExitCode::SUCCESS),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
