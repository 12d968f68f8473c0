//! `cortex serve`: the session API, standalone.
//!
//! Tokens: `CORTEX_TOKEN`, else the token file (`$XDG_CONFIG_HOME/cortex/token`,
//! created with mode 0600 and printed on first start), both acting as the
//! principal `local`; and the named principals of `cortex tokens add`
//! (`$XDG_CONFIG_HOME/cortex/tokens`, hashes only, re-read when it changes).
//! A non-loopback address is refused unless a token was given explicitly
//! (the variable or an existing file), so a server is never exposed with a
//! token nobody saw. `full-access` sessions need `--allow-full-access`.

use crate::config::{self, Config};
use crate::guests::GuestChoice;
use crate::providers::CliProviders;
use anyhow::{Context, bail};
use clap::Args;
use cortex_server::tokens::new_token;
use cortex_server::{AppState, ServerConfig, Tokens};
use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The principal of `CORTEX_TOKEN` and of the single token file.
pub const LOCAL_PRINCIPAL: &str = cortex_server::tokens::RESERVED_PRINCIPAL;

#[derive(Args)]
pub struct ServeArgs {
    /// HOST:PORT (loopback unless a token was given), or unix:PATH for a
    /// Unix socket (created with mode 0600).
    #[arg(long, default_value = "127.0.0.1:7433")]
    listen: String,
    /// The model of sessions created without one (PROVIDER:NAME). Default:
    /// `model` in the config file, else the embedded local model.
    #[arg(long)]
    model: Option<String>,
    /// Where sessions are stored: `sqlite` (the default data folder),
    /// `sqlite:PATH`, or `postgres://…`.
    #[arg(long, default_value = "sqlite")]
    store: String,
    /// Where sessions' tools run: local (the sandbox), process (no
    /// isolation), remote:HOST:PORT or docker:IMAGE.
    #[arg(long, default_value = "local")]
    guest: GuestChoice,
    /// Accept sessions with `sandbox: full-access` (tools run unconfined on
    /// this machine). Without it they are refused with 403.
    #[arg(long)]
    allow_full_access: bool,
}

enum Listen {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

fn parse_listen(value: &str) -> anyhow::Result<Listen> {
    if let Some(path) = value.strip_prefix("unix:") {
        if path.is_empty() {
            bail!("--listen unix:PATH needs a path");
        }
        return Ok(Listen::Unix(PathBuf::from(path)));
    }
    let addr = value
        .parse::<SocketAddr>()
        .with_context(|| format!("--listen `{value}` is neither HOST:PORT nor unix:PATH"))?;
    Ok(Listen::Tcp(addr))
}

pub fn token_path() -> anyhow::Result<PathBuf> {
    Ok(config::config_path()?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join("token"))
}

/// The token and whether it was given (not made up just now).
fn token(may_create: bool) -> anyhow::Result<(String, bool)> {
    if let Some(token) = crate::secrets::secret("CORTEX_TOKEN") {
        return Ok((token, true));
    }
    let path = token_path()?;
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok((text.trim().to_owned(), true)),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    if !may_create {
        bail!(
            "refusing to serve on a non-loopback address without a token: set CORTEX_TOKEN \
             or write one to {}",
            path.display()
        );
    }
    let token = new_token().context("cannot make a token")?;
    if let Some(parent) = path.parent() {
        config::private_dir(parent)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("created the API token file {} (mode 0600):", path.display());
    eprintln!("  {token}");
    Ok((token, false))
}

pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let listen = parse_listen(&args.listen)?;
    let loopback = match &listen {
        Listen::Tcp(addr) => addr.ip().is_loopback(),
        Listen::Unix(_) => true,
    };
    let (token, _given) = token(loopback)?;
    let config = Config::load()?;
    let store = config::open_store_url(&args.store).await?;
    let mcp_servers = cortex_mcp::specs_from_config(&config.mcp_servers)?;
    let (checkpoint_quota, checkpoint_total_quota) = config.checkpoints.quotas();
    let hooks = config.user_hooks()?.hooks;
    let subagents = config.subagents.config();
    let web = config.web_access()?;
    let lsp = config.lsp_specs()?;
    let providers = CliProviders::new(config, args.model, &args.guest)?;
    let state = AppState::new(
        store,
        Tokens::new()
            .with(token, LOCAL_PRINCIPAL)
            .with_file(config::tokens_path()?),
        Arc::new(providers),
        ServerConfig {
            // API sessions work on an isolated copy unless they ask for the
            // checkout itself.
            workspaces: Some(config::private_data_dir()?.join("workspaces")),
            default_workspace: cortex_protocol::WorkspaceMode::Copy,
            harness_dirs: config::harness_dirs()?,
            allow_full_access: args.allow_full_access,
            mcp_servers,
            checkpoints: Some(config::private_data_dir()?.join("checkpoints")),
            checkpoint_quota,
            checkpoint_total_quota,
            hooks,
            hook_trust: Some(config::data_dir()?.join(cortex_core::hooks::trust::TRUST_FILE)),
            subagents,
            web,
            lsp,
            ..ServerConfig::default()
        },
    );
    let recovered = state
        .recover_interrupted()
        .await
        .map_err(|e| anyhow::anyhow!("cannot recover interrupted turns: {}", e.message))?;
    if recovered > 0 {
        eprintln!("marked {recovered} interrupted turn(s) failed");
    }
    let shutdown = shutdown_signal();
    match listen {
        Listen::Tcp(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            let local = listener.local_addr().context("no local address")?;
            eprintln!("listening on http://{local}");
            cortex_server::serve_tcp(listener, state.clone(), shutdown).await?;
        }
        Listen::Unix(path) => {
            let listener = bind_unix(&path)?;
            eprintln!("listening on unix:{}", path.display());
            let served = cortex_server::serve_unix(listener, state.clone(), shutdown).await;
            let _ = std::fs::remove_file(&path);
            served?;
        }
    }
    state.close_all().await;
    Ok(ExitCode::SUCCESS)
}

/// Bind a Unix socket only its owner may connect to. A stale socket file
/// (nobody answers on it) is replaced; a live one is an error.
pub fn bind_unix(path: &Path) -> anyhow::Result<tokio::net::UnixListener> {
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            bail!("{} is in use by another server", path.display());
        }
        std::fs::remove_file(path)
            .with_context(|| format!("cannot remove the stale socket {}", path.display()))?;
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        // Only what is missing is made (0700): the socket's folder may be
        // one the user shares on purpose.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let listener = tokio::net::UnixListener::bind(path)
        .with_context(|| format!("cannot listen on {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot restrict {}", path.display()))?;
    Ok(listener)
}

async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
