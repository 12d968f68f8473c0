//! The MCP check: the `[mcp_servers]` of the config started as `cortex mcp
//! list` starts them (its `start_and_stop`), with the trial's provider, one
//! check each with its start time or its reason. A failed server is `fail`
//! but not required: a session goes on without it.

use super::Check;
use super::isolation::{TrialGuests, session_spec};
use crate::config::{Config, config_path};
use cortex_mcp::{ServerState, specs_from_config};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The MCP hub has its own per-server timeouts; this bounds the whole.
const MCP_TIMEOUT: Duration = Duration::from_secs(90);

/// The `[mcp_servers]` of the config, started as `cortex mcp list` starts
/// them, one check each: in `repo`, else in the empty scratch folder. Not
/// the current folder by default: a sandboxed guest leaves placeholders
/// (`.git`, `.cortex`) in a folder that has none, and the doctor is run
/// from anywhere.
pub async fn check(
    config: &Config,
    guests: Option<TrialGuests>,
    repo: Option<PathBuf>,
) -> Vec<Check> {
    let shown_config = config_path().map_or_else(
        |_| "the config file".to_owned(),
        |p| p.display().to_string(),
    );
    let specs = match specs_from_config(&config.mcp_servers) {
        Ok(specs) => specs,
        Err(e) => {
            let fix = format!("fix [mcp_servers] in {shown_config}; sessions refuse it");
            return vec![Check::fail("mcp", format!("{e:#}"), fix).required()];
        }
    };
    if specs.is_empty() {
        return vec![Check::ok("mcp", "no servers configured")];
    }
    let Some(guests) = guests else {
        let detail = "not started: the local guest could not be set up (see isolation)";
        return vec![Check::fail("mcp", detail, "fix the isolation check first")];
    };
    let repo = match repo {
        Some(repo) => match repo.canonicalize() {
            Ok(repo) => repo,
            Err(e) => {
                let detail = format!("no repository at {}: {e}", repo.display());
                return vec![Check::fail(
                    "mcp",
                    detail,
                    "name an existing folder with --repo",
                )];
            }
        },
        None => guests.scratch.workspace(),
    };
    // Listing tools changes nothing: the servers are held read-only, as in
    // Ask mode.
    let spec = cortex_runtime::GuestSpec {
        writable: false,
        ..session_spec(config, repo)
    };
    let started = Instant::now();
    let run = crate::mcp_cmd::start_and_stop(&specs, guests.provider.clone(), spec);
    let Ok(statuses) = tokio::time::timeout(MCP_TIMEOUT, run).await else {
        let detail = format!("the servers did not all start within {MCP_TIMEOUT:?}");
        return vec![Check::fail(
            "mcp",
            detail,
            "`cortex mcp list` shows each one's state",
        )];
    };
    let all_ms = started.elapsed().as_secs_f64() * 1000.0;
    statuses
        .into_iter()
        .map(|server| {
            let name = format!("mcp {}", server.name);
            match server.state {
                ServerState::Ready { tools, start_ms } => Check::ok(
                    name,
                    format!(
                        "ready in {start_ms:.0} ms, {} tool(s); {}",
                        tools.len(),
                        server.transport
                    ),
                ),
                ServerState::Failed { reason } => Check::fail(
                    name,
                    format!("failed ({all_ms:.0} ms): {reason}; {}", server.transport),
                    format!(
                        "check [mcp_servers.{}] in {shown_config} (`cortex mcp list` starts it \
                         the same way); sessions go on without it",
                        server.name
                    ),
                ),
            }
        })
        .collect()
}
