//! One connected server: the MCP handshake and tool listing (bounded by the
//! server's start-up timeout), and tool calls (bounded by its tool timeout,
//! cancellable).

use crate::channel::{Ended, LaunchError, Launcher, LineTransport, shared_end};
use crate::config::{HttpSpec, ServerSpec, TransportSpec};
use crate::output::McpOutput;
use crate::tool::{McpTool, ToolRejected};
use futures::FutureExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};
use tokio_util::sync::{CancellationToken, DropGuard};

/// Why a server could not be used; the message is the `reason` of
/// `mcp.server_failed`.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The process could not be started.
    #[error("{0}")]
    Launch(#[from] LaunchError),
    /// Starting took longer than the server's start-up timeout.
    #[error("did not start within {0:?}")]
    StartTimeout(Duration),
    /// The MCP handshake failed.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// Listing the server's tools failed.
    #[error("listing its tools failed: {0}")]
    ListTools(#[source] ServiceError),
    /// The bearer token's variable is not set.
    #[error("the bearer token variable `{0}` is not set")]
    MissingToken(String),
    /// The HTTP client could not be built.
    #[error("cannot build an HTTP client: {0}")]
    HttpClient(String),
    /// The process exited while starting (the reason).
    #[error("the process {0}")]
    Exited(String),
}

/// How one call ended when the server did not answer it.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The server answered with a JSON-RPC error: it is alive, the call
    /// failed (unknown tool, bad arguments, its own failure).
    #[error("the MCP server answered with an error: {0}")]
    Rejected(String),
    /// No answer within the tool timeout: the server counts as hung.
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
    /// The connection or process is gone.
    #[error("the server went away: {0}")]
    Died(String),
    /// Stop was pressed.
    #[error("stopped")]
    Cancelled,
}

/// A server that completed the handshake and listed its tools.
pub struct Connection {
    /// What was started.
    pub spec: ServerSpec,
    /// The tools it lists.
    pub tools: Vec<McpTool>,
    /// Tools the server listed that are not offered, and why.
    pub rejected: Vec<ToolRejected>,
    /// Handshake and listing, from the launch on.
    pub start_ms: f64,
    service: RunningService<RoleClient, ClientConfig>,
    /// Why a stdio server's process ended (absent for HTTP).
    ended: Option<Ended>,
    /// Kills a stdio server's process when taken and dropped.
    kill: std::sync::Mutex<Option<DropGuard>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.spec.name)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("cortex", env!("CARGO_PKG_VERSION")),
    )
}

/// How long a closed stdio connection waits for its process's exit status
/// (stdout closes a moment before the process is reaped).
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The process's end, if it comes within [`EXIT_GRACE`].
async fn exit_reason(ended: &Ended) -> Option<String> {
    tokio::time::timeout(EXIT_GRACE, ended.clone()).await.ok()
}

/// One reqwest client (rustls with ring and the webpki roots) for every
/// HTTP server of the process.
fn http_client() -> Result<reqwest::Client, ServerError> {
    /// Why the one client could not be built, kept for every later call.
    #[derive(Debug, thiserror::Error)]
    enum ClientSetup {
        #[error("{0}")]
        Tls(rustls::Error),
        #[error("{0}")]
        Build(reqwest::Error),
    }
    static CLIENT: LazyLock<Result<reqwest::Client, ClientSetup>> = LazyLock::new(|| {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(ClientSetup::Tls)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(ClientSetup::Build)
    });
    match &*CLIENT {
        Ok(client) => Ok(client.clone()),
        Err(e) => Err(ServerError::HttpClient(e.to_string())),
    }
}

/// A client's headers as the transport takes them (checked when the spec
/// was made; checked again here rather than trusted).
fn custom_headers(
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<std::collections::HashMap<HeaderName, HeaderValue>, ServerError> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| ServerError::Handshake(format!("bad header name `{name}`")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| ServerError::Handshake(format!("bad value of header `{name}`")))?;
            Ok((name, value))
        })
        .collect()
}

impl Connection {
    /// Start (stdio, through `launcher`) or reach (HTTP) the server, do the
    /// handshake and list its tools, all within its start-up timeout. On
    /// error nothing of it keeps running.
    pub async fn open(
        spec: &ServerSpec,
        launcher: &dyn Launcher,
    ) -> Result<Connection, ServerError> {
        let started = Instant::now();
        let timeout = spec.startup_timeout;
        match tokio::time::timeout(timeout, Self::open_unbounded(spec, launcher, started)).await {
            Ok(result) => result,
            Err(_) => Err(ServerError::StartTimeout(timeout)),
        }
    }

    async fn open_unbounded(
        spec: &ServerSpec,
        launcher: &dyn Launcher,
        started: Instant,
    ) -> Result<Connection, ServerError> {
        let (service, ended, kill) = match &spec.transport {
            TransportSpec::Stdio(stdio) => {
                let process = launcher.launch(&spec.name, stdio).await?;
                let ended = shared_end(process.ended);
                let transport = LineTransport::new(process.stdout, process.stdin);
                let kill = process.kill;
                let service = tokio::select! {
                    service = client_info().serve(transport) => service,
                    reason = ended.clone() => return Err(ServerError::Exited(reason)),
                };
                match service {
                    Ok(service) => (service, Some(ended), Some(kill)),
                    Err(e) => {
                        // The process's own last words say more than "closed".
                        let reason = match exit_reason(&ended).await {
                            Some(r) => format!("{e} (the process {r})"),
                            None => e.to_string(),
                        };
                        drop(kill);
                        return Err(ServerError::Handshake(reason));
                    }
                }
            }
            TransportSpec::Http(http) => (Self::open_http(http).await?, None, None),
        };
        let listed = service
            .peer()
            .list_all_tools()
            .await
            .map_err(ServerError::ListTools)?;
        let mut tools = Vec::new();
        let mut rejected = Vec::new();
        for tool in listed {
            let schema = Map::clone(&tool.input_schema);
            match McpTool::new(&spec.name, &tool.name, tool.description.as_deref(), schema) {
                Ok(tool) => tools.push(tool),
                Err(why) => {
                    tracing::warn!(
                        "MCP server `{}`: {why}; that tool is not offered",
                        spec.name
                    );
                    rejected.push(why);
                }
            }
        }
        Ok(Connection {
            spec: spec.clone(),
            tools,
            rejected,
            start_ms: started.elapsed().as_secs_f64() * 1000.0,
            service,
            ended,
            kill: std::sync::Mutex::new(kill),
        })
    }

    async fn open_http(
        http: &HttpSpec,
    ) -> Result<RunningService<RoleClient, ClientConfig>, ServerError> {
        let auth_header = match &http.bearer_token_env_var {
            Some(var) => Some(
                std::env::var(var)
                    .ok()
                    .filter(|t| !t.trim().is_empty())
                    .ok_or_else(|| ServerError::MissingToken(var.clone()))?,
            ),
            None => None,
        };
        let mut config = StreamableHttpClientTransportConfig::with_uri(http.url.as_str());
        if let Some(token) = auth_header {
            config = config.auth_header(token);
        }
        if !http.headers.is_empty() {
            config = config.custom_headers(custom_headers(&http.headers)?);
        }
        let transport = StreamableHttpClientTransport::with_client(http_client()?, config);
        client_info()
            .serve(transport)
            .await
            .map_err(|e| ServerError::Handshake(e.to_string()))
    }

    /// Whether the connection or the process is gone, and why.
    pub fn gone(&self) -> Option<String> {
        if let Some(reason) = self.ended.as_ref().and_then(|e| e.clone().now_or_never()) {
            return Some(format!("the process {reason}"));
        }
        self.service
            .is_closed()
            .then(|| "the connection closed".to_owned())
    }

    /// Call `tool` with checked arguments. Bounded by the tool timeout;
    /// `cancel` abandons the call (the server is told through the dropped
    /// request).
    pub async fn call(
        &self,
        tool: &McpTool,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<McpOutput, CallError> {
        let mut params = CallToolRequestParams::new(tool.name.clone());
        params.arguments = Some(arguments);
        let timeout = self.spec.tool_timeout;
        let call = self.service.peer().call_tool(params);
        let ended = async {
            match &self.ended {
                Some(ended) => ended.clone().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = tokio::time::timeout(timeout, call) => match result {
                Ok(Ok(result)) => Ok(McpOutput::from_result(result)),
                Ok(Err(ServiceError::McpError(e))) => Err(CallError::Rejected(e.message.to_string())),
                Ok(Err(e)) => Err(CallError::Died(match &self.ended {
                    Some(ended) => match exit_reason(ended).await {
                        Some(reason) => format!("the process {reason}"),
                        None => e.to_string(),
                    },
                    None => e.to_string(),
                })),
                Err(_) => Err(CallError::TimedOut(timeout)),
            },
            reason = ended => Err(CallError::Died(format!("the process {reason}"))),
            _ = cancel.cancelled() => Err(CallError::Cancelled),
        }
    }

    /// Kill the process (stdio) or drop the session (HTTP) at once; calls
    /// still running fail.
    pub fn kill(&self) {
        drop(
            self.kill
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take(),
        );
        self.service.cancellation_token().cancel();
    }

    /// End the session and the process.
    pub async fn close(mut self) {
        let _ = self
            .service
            .close_with_timeout(Duration::from_millis(500))
            .await;
    }
}
