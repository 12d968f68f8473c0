//! Long-lived processes in the guest (stdio MCP servers): a `spawn` request
//! starts one in the workspace with exactly the environment `bash` gets plus
//! the request's, in a process group of its own, so it runs under the same
//! sandbox as every command. Each line it writes goes back as a delta of
//! that request, and its result once it has exited; `input` writes a line
//! to its stdin; `stop` (every command, or this request's) kills the group.

use crate::lines::{Line, read_bounded_line};
use crate::state::{Responses, State};
use cortex_protocol::{GuestReply, GuestResponse, OutcomeStatus, OutputStream, ToolOutcome};
use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A line longer than this is dropped (with a note on stderr's channel):
/// an MCP message that big breaks the framing anyway.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// What a `spawn` request asks for.
pub(crate) struct Spawn {
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
}

/// Kills the process group when dropped, so an abandoned request leaves
/// nothing running.
struct GroupGuard(libc::pid_t);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        // SAFETY: killpg has no memory-safety preconditions; the group is
        // the one this guard's process leads.
        unsafe {
            libc::killpg(self.0, libc::SIGKILL);
        }
    }
}

/// Run the process until it exits or `cancel` fires; the outcome is the
/// request's result.
pub(crate) async fn run(
    state: Arc<State>,
    id: u64,
    spawn: Spawn,
    input: mpsc::UnboundedReceiver<String>,
    cancel: CancellationToken,
    tx: Responses,
) -> ToolOutcome {
    let outcome = run_child(&state, id, spawn, input, cancel, tx).await;
    state.inputs.close(id);
    outcome
}

async fn run_child(
    state: &State,
    id: u64,
    spawn: Spawn,
    mut input: mpsc::UnboundedReceiver<String>,
    cancel: CancellationToken,
    tx: Responses,
) -> ToolOutcome {
    let mut child = match Command::new(&spawn.command)
        .args(&spawn.args)
        .current_dir(&state.config.root)
        .env_clear()
        .envs(state.config.bash_env.iter().map(|(k, v)| (k, v)))
        .envs(&spawn.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return ToolOutcome::error(format!("cannot start `{}`: {e}", spawn.command)),
    };
    let Some(pgid) = child.id().and_then(|id| libc::pid_t::try_from(id).ok()) else {
        return ToolOutcome::error(format!("`{}` exited at once", spawn.command));
    };
    let _group = GroupGuard(pgid);
    if let Some(mut stdin) = child.stdin.take() {
        tokio::spawn(async move {
            while let Some(mut line) = input.recv().await {
                line.push('\n');
                if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
    }
    let readers = [
        child
            .stdout
            .take()
            .map(|out| tokio::spawn(forward(out, OutputStream::Stdout, id, tx.clone()))),
        child
            .stderr
            .take()
            .map(|err| tokio::spawn(forward(err, OutputStream::Stderr, id, tx.clone()))),
    ];
    let (status, stopped) = tokio::select! {
        status = child.wait() => (status, false),
        _ = cancel.cancelled() => {
            // SAFETY: as in GroupGuard.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
            (child.wait().await, true)
        }
    };
    // Its last lines go out before the result.
    for reader in readers.into_iter().flatten() {
        let _ = reader.await;
    }
    match status {
        Err(e) => ToolOutcome::error(format!("waiting for `{}` failed: {e}", spawn.command)),
        Ok(status) => ToolOutcome {
            status: if stopped {
                OutcomeStatus::Stopped
            } else if status.success() {
                OutcomeStatus::Ok
            } else {
                OutcomeStatus::Error
            },
            output: if stopped {
                "stopped".to_owned()
            } else {
                format!("exited: {status}")
            },
            diff: None,
            exit_code: status.code(),
        },
    }
}

/// Each line of `output` as a delta of request `id`, until it closes.
async fn forward(output: impl AsyncRead + Unpin, stream: OutputStream, id: u64, tx: Responses) {
    let mut reader = BufReader::new(output);
    loop {
        let text = match read_bounded_line(&mut reader, MAX_LINE_BYTES).await {
            Ok(Line::Text(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            Ok(Line::TooLong(size)) => {
                tracing::warn!(id, "a spawned process wrote a {size}-byte line; dropped");
                continue;
            }
            Ok(Line::Eof) | Err(_) => return,
        };
        let reply = GuestReply::Delta { stream, text };
        if tx.send(GuestResponse { id, reply }).is_err() {
            return;
        }
    }
}
