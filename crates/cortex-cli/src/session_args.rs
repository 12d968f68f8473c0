//! The flags that say which session to drive and how to set it up, shared
//! by `cortex exec` and the terminal UI (`cortex` alone), and the one code
//! path that creates or reopens that session through the API.

use crate::flags::{GuestFlags, ServerFlag};
use anyhow::bail;
use clap::Args;
use cortex_client::{Client, ClientError};
use cortex_protocol::{ApprovalPolicy, Mode, SessionId, StopRule, WorkspaceMode};
use std::path::{Path, PathBuf};

#[derive(Args, Clone, Debug)]
pub struct SessionArgs {
    /// The repository to work in: a folder, or a git URL (cloned first).
    /// Default: the git repository the current directory is in, else the
    /// current directory.
    #[arg(long)]
    pub repo: Option<String>,
    /// ask (read-only), plan (read-only + plan tool), spec, or agent
    /// (everything). Default: agent, or the resumed session's mode.
    #[arg(long)]
    pub mode: Option<Mode>,
    /// PROVIDER:NAME, e.g. openai:gpt-4o-mini. Default: `model` in the config file.
    #[arg(long)]
    pub model: Option<String>,
    /// When a turn stops on its own: code (never), chat (8 tool rounds), bot
    /// (15 minutes or six identical calls).
    #[arg(long, default_value = "code")]
    pub stop_rule: StopRule,
    /// Continue a stored session instead of starting one.
    #[arg(long)]
    pub session: Option<String>,
    #[command(flatten)]
    pub server: ServerFlag,
    #[command(flatten)]
    pub guests: GuestFlags,
    /// in-place (the repository itself) or copy (an isolated copy in the
    /// session's data folder).
    #[arg(long, default_value = "in-place")]
    pub workspace: WorkspaceMode,
    /// What happens to a command or file write no rule covers: ask (pause
    /// for Allow / Deny / Always), auto (run it in the sandbox) or deny.
    /// Default: auto for `exec` (ask without a terminal is deny), ask for
    /// the terminal UI; a resumed session keeps its own unless given.
    #[arg(long)]
    pub approval: Option<ApprovalPolicy>,
}

/// The session a client drives.
pub struct Opened {
    pub id: SessionId,
    /// Seq of its newest event before this client touched it.
    pub last_seq: u64,
    /// The body that created it (`None` when it was resumed).
    pub body: Option<serde_json::Value>,
}

/// Create the session the flags describe, or reopen `--session ID` (and
/// switch it to `--mode` when given). `local`: the server runs in this
/// process, so a git URL is cloned here.
pub async fn open(client: &Client, args: &SessionArgs, local: bool) -> anyhow::Result<Opened> {
    if let Some(id) = &args.session {
        let id = SessionId(id.clone());
        let view = match client.session(&id).await {
            Err(e) if e.status() == Some(404) => bail!("no session `{id}`"),
            other => other?,
        };
        if let Some(mode) = args.mode {
            client.set_mode(&id, mode).await.map_err(api_error)?;
        }
        if let Some(approval) = args.approval {
            client
                .set_approval(&id, approval)
                .await
                .map_err(api_error)?;
        }
        return Ok(Opened {
            id,
            last_seq: view.last_seq,
            body: None,
        });
    }
    let mut body = serde_json::json!({
        "repository": repository(args.repo.as_deref(), local)?,
        "mode": args.mode.unwrap_or(Mode::Agent),
        "model": args.model,
        "stop_rule": args.stop_rule,
        "sandbox": {
            "policy": args.guests.sandbox,
            "network": args.guests.network,
            "workspace": args.workspace,
        },
    });
    if let Some(approval) = args.approval {
        body["approval"] = serde_json::json!(approval);
    }
    let view = client
        .create_session(body.clone())
        .await
        .map_err(api_error)?;
    Ok(Opened {
        id: view.id,
        last_seq: 0,
        body: Some(body),
    })
}

/// What the session's `repository` is: a git URL goes to the server as it
/// is (the server clones it into its own workspaces, the one place inside
/// Cortex's data a repository may be); a folder is made absolute.
fn repository(repo: Option<&str>, local: bool) -> anyhow::Result<String> {
    let Some(repo) = repo else {
        let here = std::env::current_dir()?;
        return Ok(enclosing_repository(&here).display().to_string());
    };
    if cortex_core::is_git_url(repo) {
        if local {
            eprintln!("cloning {}…", cortex_term::sanitize_line(repo));
        }
        return Ok(repo.to_owned());
    }
    let path = PathBuf::from(repo);
    Ok(path
        .canonicalize()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| repo.to_owned()))
}

/// The top of the git work tree `dir` is in (a `.git` folder or file), else
/// `dir` itself.
pub fn enclosing_repository(dir: &Path) -> PathBuf {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_owned)
        .unwrap_or(dir)
}

/// The API's own message for a rejected request.
pub fn api_error(e: ClientError) -> anyhow::Error {
    match e {
        ClientError::Api { message, .. } => anyhow::anyhow!(message),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_repository_is_the_enclosing_work_tree() {
        let root = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(root.path().join(".git")).expect("git");
        std::fs::create_dir_all(root.path().join("src/deep")).expect("src");
        let top = root.path().canonicalize().expect("canonical");
        assert_eq!(enclosing_repository(&root.path().join("src/deep")), top);
        let plain = tempfile::tempdir().expect("dir");
        let plain_path = plain.path().canonicalize().expect("canonical");
        assert_eq!(enclosing_repository(plain.path()), plain_path);
    }
}
