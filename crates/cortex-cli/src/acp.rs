//! `cortex acp`: the Agent Client Protocol agent on standard input and
//! output, for editors. Like `exec`, it drives an in-process server by
//! default, or `--server URL`. Standard output carries protocol frames only;
//! logs go to standard error.

use crate::flags::{GuestFlags, ServerFlag};
use clap::Args;
use cortex_acp::AcpAgent;
use cortex_api::{CreateSession, SandboxRequest};
use cortex_protocol::{ApprovalPolicy, Mode, StopRule, WorkspaceMode};
use std::process::ExitCode;

#[derive(Args)]
pub struct AcpArgs {
    /// The mode new sessions start in (the editor can switch it).
    #[arg(long, default_value = "agent")]
    mode: Mode,
    /// PROVIDER:NAME, e.g. openai:gpt-4o-mini. Default: `model` in the config file.
    #[arg(long)]
    model: Option<String>,
    /// When a turn stops on its own: code, chat or bot.
    #[arg(long, default_value = "code")]
    stop_rule: StopRule,
    #[command(flatten)]
    server: ServerFlag,
    #[command(flatten)]
    guests: GuestFlags,
    /// in-place (the editor's folder itself) or copy.
    #[arg(long, default_value = "in-place")]
    workspace: WorkspaceMode,
    /// ask (the editor's permission request for each call no rule covers),
    /// auto (run everything the sandbox allows) or deny.
    #[arg(long, default_value = "ask")]
    approval: ApprovalPolicy,
}

pub async fn run(args: AcpArgs) -> anyhow::Result<ExitCode> {
    let (client, local) = args
        .server
        .connect(args.model.clone(), &args.guests.guest)
        .await?;
    let template = CreateSession {
        // Each session's is the editor's `cwd`.
        repository: String::new(),
        mode: Some(args.mode),
        model: args.model,
        sandbox: Some(SandboxRequest {
            policy: Some(args.guests.sandbox),
            network: Some(args.guests.network),
            workspace: Some(args.workspace),
        }),
        stop_rule: Some(args.stop_rule),
        approval: Some(args.approval),
        // Each session's are the editor's `mcpServers`.
        mcp_servers: Vec::new(),
    };
    let result = AcpAgent::new(client, template).serve_stdio().await;
    if let Some(local) = local {
        local.stop().await;
    }
    result?;
    Ok(ExitCode::SUCCESS)
}
