//! `cortex tokens add|list|revoke`: the named principals of `cortex serve`.
//!
//! Each principal has its own bearer token; sessions, events, goals and
//! rules of one principal are invisible to another. Only the tokens' hashes
//! are kept (`$XDG_CONFIG_HOME/cortex/tokens`, mode 0600); a token is printed
//! once, by `add`. A running server re-reads the file when it changes, so
//! `revoke` takes effect at once.

use crate::config::tokens_path;
use anyhow::bail;
use clap::Subcommand;
use cortex_server::tokens::{add_entry, new_token, read_entries, revoke_entry};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum TokensCommand {
    /// Make a token for a new principal and print it (only this once).
    #[command(after_help = "Example:\n  cortex tokens add alice")]
    Add {
        /// The principal: 1 to 64 letters, digits, `.`, `_` or `-`.
        name: String,
    },
    /// The principals that have a token, and when it was made.
    #[command(after_help = "Example:\n  cortex tokens list")]
    List,
    /// Revoke a principal's token (its sessions stay, unreachable until a
    /// new token is added for the same name).
    #[command(after_help = "Example:\n  cortex tokens revoke alice")]
    Revoke {
        /// The principal whose token to revoke.
        name: String,
    },
}

pub fn run(command: TokensCommand) -> anyhow::Result<ExitCode> {
    let path = tokens_path()?;
    match command {
        TokensCommand::Add { name } => {
            let token = new_token()?;
            add_entry(&path, &name, &token)?;
            eprintln!(
                "added a token for `{}` to {} (only its hash is kept; this is the one time it is shown):",
                cortex_term::sanitize_line(&name),
                path.display()
            );
            println!("{token}");
        }
        TokensCommand::List => {
            let entries = read_entries(&path)?;
            if entries.is_empty() {
                eprintln!("no named tokens ({} has none)", path.display());
            }
            for entry in entries {
                println!("{}\t{}", entry.name, entry.created);
            }
        }
        TokensCommand::Revoke { name } => {
            if !revoke_entry(&path, &name)? {
                bail!(
                    "`{}` has no token in {}",
                    cortex_term::sanitize_line(&name),
                    path.display()
                );
            }
            eprintln!(
                "revoked the token of `{}`",
                cortex_term::sanitize_line(&name)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
