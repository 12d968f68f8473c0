//! Stdio servers run on the host (`sandbox = "host"`, the explicit opt-out):
//! a child process in its own process group, with a cleared environment plus
//! the usual login variables and the server's own `env`, killed with its
//! whole group when the channel's guard drops.

use crate::channel::{LaunchError, Launcher, ProcessChannel};
use crate::config::StdioSpec;
use futures::StreamExt;
use futures::future::BoxFuture;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::sync::CancellationToken;

/// A stdout line longer than this breaks the framing; the server is ended.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Variables a host server inherits from the harness (never provider keys).
const INHERITED: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
];
/// Stderr lines kept for the reason a server ended.
const STDERR_KEPT: usize = 8;

/// Starts stdio servers as host processes, in `cwd`.
#[derive(Debug, Clone)]
pub struct HostLauncher {
    /// The folder the processes start in.
    pub cwd: PathBuf,
}

impl Launcher for HostLauncher {
    fn launch<'a>(
        &'a self,
        _server: &'a str,
        spec: &'a StdioSpec,
    ) -> BoxFuture<'a, Result<ProcessChannel, LaunchError>> {
        Box::pin(async move {
            let mut command = Command::new(&spec.command);
            command
                .args(&spec.args)
                .current_dir(&self.cwd)
                .env_clear()
                .envs(
                    INHERITED
                        .iter()
                        .filter_map(|k| std::env::var_os(k).map(|v| (*k, v))),
                )
                .envs(&spec.env)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true);
            let child = command.spawn().map_err(|source| LaunchError::Spawn {
                command: spec.command.clone(),
                source,
            })?;
            Ok(pipe_process(child))
        })
    }
}

/// Wire a child with piped stdin, stdout and stderr (spawned in its own
/// process group) into a [`ProcessChannel`].
pub fn pipe_process(mut child: Child) -> ProcessChannel {
    let (out_tx, out_rx) = mpsc::channel::<String>(64);
    let (in_tx, mut in_rx) = mpsc::channel::<String>(64);
    let (end_tx, end_rx) = oneshot::channel();
    let kill = CancellationToken::new();
    let stdout = child.stdout.take();
    let stdin = child.stdin.take();
    let stderr = child.stderr.take();

    if let Some(stdout) = stdout {
        tokio::spawn(async move {
            let mut lines =
                FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE_BYTES));
            while let Some(Ok(line)) = lines.next().await {
                if out_tx.send(line).await.is_err() {
                    break;
                }
            }
        });
    }
    if let Some(mut stdin) = stdin {
        tokio::spawn(async move {
            while let Some(mut line) = in_rx.recv().await {
                line.push('\n');
                if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
    }
    let tail = std::sync::Arc::new(std::sync::Mutex::new(VecDeque::new()));
    let stderr_task = stderr.map(|stderr| {
        let tail = tail.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!("MCP server stderr: {line}");
                let mut tail = tail
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if tail.len() == STDERR_KEPT {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        })
    });
    let killed = kill.clone();
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            _ = killed.cancelled() => {
                kill_group(&child);
                child.wait().await
            }
        };
        // The group may hold children that outlive the server itself.
        kill_group(&child);
        if let Some(task) = stderr_task {
            let _ = tokio::time::timeout(std::time::Duration::from_millis(200), task).await;
        }
        let last = tail
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .back()
            .cloned();
        let _ = end_tx.send(exit_reason(status, last));
    });
    ProcessChannel {
        stdout: out_rx,
        stdin: in_tx,
        ended: end_rx,
        kill: kill.drop_guard(),
    }
}

fn kill_group(child: &Child) {
    if let Some(pid) = child.id() {
        // SAFETY: killpg only sends a signal; the group is the child's own
        // (spawned with process_group(0)), so nothing else is hit.
        unsafe {
            libc::killpg(pid as libc::pid_t, libc::SIGKILL);
        }
    }
}

/// `exited with status 3: <last stderr line>` and the like.
pub fn exit_reason(
    status: std::io::Result<std::process::ExitStatus>,
    last: Option<String>,
) -> String {
    use std::os::unix::process::ExitStatusExt;
    let mut reason = match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "ended".to_owned(),
        },
        Err(e) => format!("could not be waited for: {e}"),
    };
    if let Some(line) = last.filter(|l| !l.trim().is_empty()) {
        reason.push_str(": ");
        reason.push_str(line.trim());
    }
    reason
}
