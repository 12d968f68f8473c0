//! A stdio server as lines in and lines out, wherever its process runs: a
//! [`ProcessChannel`] is what a [`Launcher`] hands back (the guest's process
//! operation, or a host child process), and [`LineTransport`] speaks MCP's
//! newline-delimited JSON-RPC over it.

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::DropGuard;

use crate::config::StdioSpec;

/// A running stdio server's process.
///
/// Contract for whoever builds one: `stdout` yields each line the process
/// wrote (newline stripped) and ends when its stdout closes; each line sent
/// on `stdin` is written followed by a newline; `ended` resolves once the
/// process has exited, with a one-line reason (exit status and its last
/// stderr line); dropping `kill` (or the whole channel) kills the process and
/// everything it started.
pub struct ProcessChannel {
    /// Each line the process writes on stdout, newline stripped; ends when its
    /// stdout closes.
    pub stdout: mpsc::Receiver<String>,
    /// Lines for the process's stdin, each written followed by a newline.
    pub stdin: mpsc::Sender<String>,
    /// Resolves once the process has exited, with a one-line reason.
    pub ended: oneshot::Receiver<String>,
    /// Dropping it kills the process and everything it started.
    pub kill: DropGuard,
}

/// Why a process could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// A host process could not be spawned.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The program that did not start.
        command: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The guest refused or failed (its message).
    #[error("{0}")]
    Guest(String),
    /// The server runs in the guest, and the session has none attached.
    #[error("there is no guest to run it in")]
    NoGuest,
}

/// Starts a stdio server's process somewhere (the guest, the host).
pub trait Launcher: Send + Sync {
    /// Start `spec`'s process for the server named `server` (a name for
    /// messages and logs; `spec` says what runs).
    ///
    /// **When:** once per start of a stdio server, when a session's servers
    /// start (before the first model request of a turn) or one is started
    /// again; calls for several servers may run at the same time.
    ///
    /// **May assume:** `spec` was validated by [`crate::config`] (a command,
    /// environment names that are names); nothing about what the process
    /// will write.
    ///
    /// **Guarantees:** `Ok` is a process already started, with the
    /// [`ProcessChannel`] contract above; the process must not outlive the
    /// channel's `kill` guard.
    ///
    /// **Errors:** `Err` means nothing runs (nothing to clean up); the hub
    /// reports the server as failed with the error's message.
    ///
    /// **Cancellation:** dropping the future before it resolves must leave
    /// no process running (a launcher that has started one by then kills
    /// it).
    fn launch<'a>(
        &'a self,
        server: &'a str,
        spec: &'a StdioSpec,
    ) -> BoxFuture<'a, Result<ProcessChannel, LaunchError>>;
}

/// The reason a process ended, readable by every holder and at any time.
pub(crate) type Ended = Shared<BoxFuture<'static, String>>;

pub(crate) fn shared_end(ended: oneshot::Receiver<String>) -> Ended {
    async move {
        ended
            .await
            .unwrap_or_else(|_| "the process went away".to_owned())
    }
    .boxed()
    .shared()
}

/// The MCP stdio framing over a [`ProcessChannel`]'s lines.
pub(crate) struct LineTransport {
    stdout: mpsc::Receiver<String>,
    stdin: mpsc::Sender<String>,
}

impl LineTransport {
    pub(crate) fn new(stdout: mpsc::Receiver<String>, stdin: mpsc::Sender<String>) -> Self {
        LineTransport { stdout, stdin }
    }
}

/// The process's stdin is closed (it exited or was killed).
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// The process's stdin is closed (it exited or was killed).
    #[error("the server's stdin is closed")]
    Closed,
    /// A message could not be encoded as JSON.
    #[error("cannot encode a message: {0}")]
    Encode(#[source] serde_json::Error),
}

impl Transport<RoleClient> for LineTransport {
    type Error = ChannelError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = self.stdin.clone();
        async move {
            let line = serde_json::to_string(&item).map_err(ChannelError::Encode)?;
            stdin.send(line).await.map_err(|_| ChannelError::Closed)
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let line = self.stdout.recv().await?;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(&line) {
                Ok(message) => return Some(message),
                // A server that logs to stdout breaks the protocol; skip the
                // line rather than the server.
                Err(e) => tracing::debug!("MCP server wrote a line that is not JSON-RPC: {e}"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.stdout.close();
        Ok(())
    }
}
