//! Stdio MCP servers inside a guest: the [`Launcher`] a session's
//! `cortex_mcp::McpHub` starts its servers with (`sandbox = "guest"`, the
//! default).
//!
//! Each server gets a guest of its own, started by the session's guest
//! provider from the session's guest spec (sandbox policy, workspace,
//! network, environment allow-list), and runs there as a `spawn`ed process:
//! the same isolation as `bash`, while a Stop of the session's commands, or
//! a mode change that re-attaches the session's guest, leaves it running.
//! Dropping the channel's guard closes that guest, which ends the server
//! and everything it started.

use cortex_mcp::{LaunchError, Launcher, ProcessChannel, StdioSpec};
use cortex_protocol::{GuestReply, OutputStream, ToolOutcome};
use cortex_runtime::{CallHandle, Guest, GuestProvider, GuestSpec};
use futures::future::BoxFuture;
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Stderr lines kept for the reason a server ended.
const STDERR_KEPT: usize = 8;

/// Starts stdio servers in guests like the session's.
#[derive(Clone)]
pub struct GuestLauncher {
    provider: Arc<dyn GuestProvider>,
    spec: GuestSpec,
}

impl GuestLauncher {
    /// Servers start in guests built from `spec` by `provider`; a server is
    /// a command, so its guest may run one whatever the session's mode.
    pub fn new(provider: Arc<dyn GuestProvider>, spec: GuestSpec) -> GuestLauncher {
        GuestLauncher {
            provider,
            spec: GuestSpec {
                allow_bash: true,
                ..spec
            },
        }
    }
}

impl Launcher for GuestLauncher {
    fn launch<'a>(
        &'a self,
        server: &'a str,
        spec: &'a StdioSpec,
    ) -> BoxFuture<'a, Result<ProcessChannel, LaunchError>> {
        Box::pin(async move {
            let guest = self.provider.start(&self.spec).await.map_err(|e| {
                LaunchError::Guest(format!("the guest for `{server}` could not start: {e}"))
            })?;
            let handle = guest
                .spawn(spec.command.clone(), spec.args.clone(), spec.env.clone())
                .await
                .map_err(|e| LaunchError::Guest(format!("cannot start `{}`: {e}", spec.command)))?;
            Ok(channel(guest, handle))
        })
    }
}

/// The spawned process as lines in and out: output deltas become stdout
/// lines, the result (or the guest's end) the reason it ended; input lines
/// go to the guest one at a time; the guard closes the guest.
fn channel(guest: Guest, handle: CallHandle) -> ProcessChannel {
    let (out_tx, out_rx) = mpsc::channel::<String>(64);
    let (in_tx, in_rx) = mpsc::channel::<String>(64);
    let (end_tx, end_rx) = oneshot::channel();
    let kill = CancellationToken::new();
    let target = handle.id();
    tokio::spawn(async move {
        let reason = read_output(handle, out_tx).await;
        let _ = end_tx.send(reason);
    });
    tokio::spawn(write_input(guest, target, in_rx, kill.clone()));
    ProcessChannel {
        stdout: out_rx,
        stdin: in_tx,
        ended: end_rx,
        kill: kill.drop_guard(),
    }
}

/// Forward stdout lines until the process ends; the reason it ended, with
/// its last stderr line.
async fn read_output(mut handle: CallHandle, out: mpsc::Sender<String>) -> String {
    let mut stderr = VecDeque::new();
    let ended = loop {
        match handle.next().await {
            Some(GuestReply::Delta {
                stream: OutputStream::Stdout,
                text,
            }) => {
                // A closed receiver: the client is gone; keep draining so
                // the end is still seen.
                let _ = out.send(text).await;
            }
            Some(GuestReply::Delta { text, .. }) => {
                if stderr.len() == STDERR_KEPT {
                    stderr.pop_front();
                }
                stderr.push_back(text);
            }
            Some(GuestReply::Result(outcome)) => break describe(&outcome),
            None => break "its guest ended".to_owned(),
        }
    };
    match stderr.back() {
        Some(last) => format!("{ended}: {last}"),
        None => ended,
    }
}

fn describe(outcome: &ToolOutcome) -> String {
    if outcome.is_ok() {
        "it exited".to_owned()
    } else {
        format!("it ended ({})", outcome.output)
    }
}

/// Send each input line, in order, until the guard drops; then close the
/// guest (which kills the process and everything it started).
async fn write_input(
    guest: Guest,
    target: u64,
    mut lines: mpsc::Receiver<String>,
    kill: CancellationToken,
) {
    loop {
        tokio::select! {
            line = lines.recv() => match line {
                Some(line) => {
                    if let Err(e) = guest.input(target, line).await {
                        tracing::debug!("MCP server input: {e}");
                        break;
                    }
                }
                None => break,
            },
            _ = kill.cancelled() => break,
        }
    }
    kill.cancelled().await;
    guest.close().await;
}
