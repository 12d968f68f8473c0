//! `cortex mcp list`: the MCP servers of `[mcp_servers]` in the config file,
//! each started the way a session starts it (a stdio server in a guest of
//! the repository under `--sandbox`, unless it says `sandbox = "host"`; an
//! HTTP server reached from here), with its state, start time and tools.
//! Everything a server reported passes through the terminal sanitiser;
//! `--json` is exact.

use crate::config::Config;
use crate::flags::GuestFlags;
use crate::guests;
use anyhow::Context;
use clap::{Args, Subcommand};
use cortex_core::GuestLauncher;
use cortex_mcp::{
    HostLauncher, Launchers, McpHub, ServerSpec, ServerState, ServerStatus, specs_from_config,
};
use cortex_runtime::{GuestProvider, GuestSpec, allowed_env};
use cortex_term::{sanitize, sanitize_line};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Subcommand)]
pub enum McpCommand {
    /// Start every configured server, show its state and tools, stop it.
    #[command(after_help = "Examples:\n  cortex mcp list\n  cortex mcp list --json")]
    List(ListArgs),
}

#[derive(Args)]
pub struct ListArgs {
    /// The repository stdio servers run in (default: the current folder).
    #[arg(long)]
    repo: Option<PathBuf>,
    // The guests stdio servers run in, set up as a session's.
    #[command(flatten)]
    guests: GuestFlags,
    /// One JSON object per server.
    #[arg(long)]
    json: bool,
}

pub async fn run(command: McpCommand) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List(args) => list(args).await,
    }
}

async fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load()?;
    let specs = specs_from_config(&config.mcp_servers)?;
    if specs.is_empty() {
        if !args.json {
            println!("no MCP servers configured ([mcp_servers.NAME] in the config file)");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let repo = match args.repo {
        Some(repo) => repo,
        None => std::env::current_dir()?,
    };
    let repo = repo
        .canonicalize()
        .with_context(|| format!("no repository at {}", repo.display()))?;
    let spec = GuestSpec {
        workspace: repo,
        // Listing tools changes nothing: the servers are held read-only,
        // as in Ask mode, whatever they claim.
        writable: false,
        allow_bash: true,
        env: allowed_env(&config.guest.env),
        policy: args.guests.sandbox,
        network: args.guests.network,
    };
    let status = start_and_stop(&specs, guests::provider(&args.guests.guest, &config)?, spec).await;
    for server in &status {
        if args.json {
            // Names, tools and reasons come from the config and the
            // servers: exact, but terminal-safe.
            println!("{}", crate::json_out::to_line(&json(server))?);
        } else {
            print!("{}", human(server));
        }
    }
    let failed = status
        .iter()
        .any(|s| matches!(s.state, ServerState::Failed { .. }));
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Start `specs` as a session would (stdio servers in guests `guests`
/// starts from `spec`, host servers in its workspace folder), take their
/// state, and stop them all. `cortex doctor` shares it.
pub async fn start_and_stop(
    specs: &[ServerSpec],
    guests: Arc<dyn GuestProvider>,
    spec: GuestSpec,
) -> Vec<ServerStatus> {
    let host = HostLauncher {
        cwd: spec.workspace.clone(),
    };
    let guest = GuestLauncher::new(guests, spec);
    let launchers = Launchers {
        guest: Some(&guest),
        host: &host,
    };
    let (hub, _notices) = McpHub::start(specs, launchers).await;
    let status = hub.status();
    hub.close().await;
    status
}

fn json(server: &ServerStatus) -> serde_json::Value {
    let mut value = serde_json::json!({
        "name": server.name,
        "transport": server.transport,
        "read_only": server.read_only,
    });
    match &server.state {
        ServerState::Ready { tools, start_ms } => {
            value["state"] = "ready".into();
            value["start_ms"] = (*start_ms).into();
            value["tools"] = tools.iter().map(|t| t.qualified.clone()).collect();
        }
        ServerState::Failed { reason } => {
            value["state"] = "failed".into();
            value["reason"] = reason.clone().into();
        }
    }
    value
}

fn human(server: &ServerStatus) -> String {
    let read_only = if server.read_only { ", read-only" } else { "" };
    let mut out = format!(
        "{}  {}{read_only}\n",
        sanitize_line(&server.name),
        sanitize_line(&server.transport)
    );
    match &server.state {
        ServerState::Ready { tools, start_ms } => {
            out.push_str(&format!(
                "  ready in {start_ms:.0} ms, {} tool(s)\n",
                tools.len()
            ));
            for tool in tools {
                out.push_str(&format!("    {}\n", sanitize_line(&tool.qualified)));
            }
        }
        ServerState::Failed { reason } => {
            out.push_str(&format!("  failed: {}\n", sanitize(reason)));
        }
    }
    out
}
