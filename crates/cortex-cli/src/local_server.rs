//! The API server `cortex exec` and `cortex sessions` start in-process when
//! no `--server` is given: a private Unix socket (mode 0600, in the runtime
//! folder), a one-off token, and the same code path as a remote server, so
//! the output is identical either way.

use crate::config::{self, Config};
use crate::guests::GuestChoice;
use crate::providers::CliProviders;
use crate::serve::{LOCAL_PRINCIPAL, bind_unix};
use anyhow::Context;
use cortex_client::{Client, Endpoint};
use cortex_server::tokens::new_token;
use cortex_server::{AppState, ServerConfig, Tokens};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;

pub struct LocalServer {
    socket: PathBuf,
    token: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    state: Arc<AppState>,
}

/// [`config::runtime_dir`], created with mode 0700.
fn runtime_dir() -> anyhow::Result<PathBuf> {
    let dir = config::runtime_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot restrict {}", dir.display()))?;
    Ok(dir)
}

impl LocalServer {
    /// `model`: the default for sessions created without one and for
    /// reopened sessions whose model cannot be rebuilt from its description.
    pub async fn start(model: Option<String>, guest: &GuestChoice) -> anyhow::Result<LocalServer> {
        let config = Config::load()?;
        let store = config::open_store().await?;
        let mcp_servers = cortex_mcp::specs_from_config(&config.mcp_servers)?;
        let (checkpoint_quota, checkpoint_total_quota) = config.checkpoints.quotas();
        let hooks = config.user_hooks()?.hooks;
        let subagents = config.subagents.config();
        let web = config.web_access()?;
        let lsp = config.lsp_specs()?;
        let providers = CliProviders::new(config, model, guest)?;
        let token = new_token().context("cannot make a token")?;
        let state = AppState::new(
            store,
            Tokens::new().with(token.clone(), LOCAL_PRINCIPAL),
            Arc::new(providers),
            ServerConfig {
                workspaces: Some(config::private_data_dir()?.join("workspaces")),
                // `exec` works on the checkout unless told otherwise.
                default_workspace: cortex_protocol::WorkspaceMode::InPlace,
                harness_dirs: config::harness_dirs()?,
                // The user at this terminal chose `--sandbox full-access`.
                allow_full_access: true,
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
        let socket = runtime_dir()?.join(format!("exec-{}.sock", std::process::id()));
        let listener = bind_unix(&socket)?;
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(cortex_server::serve_unix(listener, state.clone(), async {
            let _ = stop.await;
        }));
        Ok(LocalServer {
            socket,
            token,
            shutdown: Some(shutdown),
            task: Some(task),
            state,
        })
    }

    pub fn client(&self) -> Client {
        Client::new(Endpoint::Unix(self.socket.clone()), self.token.clone())
    }

    /// Close every session and stop serving.
    pub async fn stop(mut self) {
        self.state.close_all().await;
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// A client for `--server URL` (token from `CORTEX_TOKEN`), else an
/// in-process server and its client.
pub async fn connect(
    server: Option<&str>,
    model: Option<String>,
    guest: &GuestChoice,
) -> anyhow::Result<(Client, Option<LocalServer>)> {
    match server {
        Some(url) => {
            let endpoint = Endpoint::parse(url)?;
            let token = crate::secrets::secret("CORTEX_TOKEN")
                .context("--server needs the server's token in CORTEX_TOKEN")?;
            Ok((Client::new(endpoint, token), None))
        }
        None => {
            let local = LocalServer::start(model, guest).await?;
            Ok((local.client(), Some(local)))
        }
    }
}
