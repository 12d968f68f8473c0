//! Long-lived processes in the guest (stdio MCP servers): a `spawn` request
//! starts one in the workspace with exactly the environment `bash` gets plus
//! the request's, in a process group of its own, so it runs under the same
//! sandbox as every command. Each line it writes goes back as a delta of
//! that request, and its result once it has exited; `input` writes a line
//! to its stdin; `stop` (every command, or this request's) kills the group.
//!
//! A raw process (a language server, with a framing of its own) gets its
//! output back in chunks as written and its input written exactly as sent.
//!
//! A background process (the session's `bash` with `background`) differs in
//! four ways: its input is empty (`/dev/null`: nothing writes to it), its
//! output goes back in chunks as written rather than lines (a server's
//! prompt without a newline still shows), `stop` without a target spares
//! it, and once its first process exits its whole group is killed, so
//! nothing it left behind runs on unlisted.

use crate::lines::{Line, read_bounded_line};
use crate::state::{Responses, State};
use cortex_protocol::{GuestReply, GuestResponse, OutcomeStatus, OutputStream, ToolOutcome};
use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
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
    pub(crate) background: bool,
    /// Output in chunks and input written as given (a language server's
    /// own framing): see `GuestOp::Spawn`.
    pub(crate) raw: bool,
}

/// The most a background process's output chunk holds: the harness keeps
/// a capped buffer anyway, and a frame must stay far below its limit.
const CHUNK_BYTES: usize = 8 * 1024;

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
/// `seq` is its entry among the running commands (where its process group
/// is noted); `input` is `None` for a background process.
pub(crate) async fn run(
    state: Arc<State>,
    (id, seq): (u64, u64),
    spawn: Spawn,
    input: Option<mpsc::UnboundedReceiver<String>>,
    cancel: CancellationToken,
    tx: Responses,
) -> ToolOutcome {
    let outcome = run_child(&state, (id, seq), spawn, input, cancel, tx).await;
    state.inputs.close(id);
    outcome
}

async fn run_child(
    state: &State,
    (id, seq): (u64, u64),
    spawn: Spawn,
    input: Option<mpsc::UnboundedReceiver<String>>,
    cancel: CancellationToken,
    tx: Responses,
) -> ToolOutcome {
    let mut child = match Command::new(&spawn.command)
        .args(&spawn.args)
        .current_dir(&state.config.root)
        .env_clear()
        .envs(state.config.bash_env.iter().map(|(k, v)| (k, v)))
        .envs(&spawn.env)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
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
    state.running().set_group(seq, pgid);
    let raw = spawn.raw;
    if let (Some(mut stdin), Some(mut input)) = (child.stdin.take(), input) {
        tokio::spawn(async move {
            while let Some(mut line) = input.recv().await {
                if !raw {
                    line.push('\n');
                }
                if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
    }
    let background = spawn.background;
    let chunks = background || raw;
    let readers = [
        child.stdout.take().map(|out| {
            let tx = tx.clone();
            tokio::spawn(forward_any(out, OutputStream::Stdout, id, tx, chunks))
        }),
        child.stderr.take().map(|err| {
            let tx = tx.clone();
            tokio::spawn(forward_any(err, OutputStream::Stderr, id, tx, chunks))
        }),
    ];
    let (status, stopped) = tokio::select! {
        status = child.wait() => (status, false),
        _ = cancel.cancelled() => {
            // SAFETY: as in GroupGuard.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
            (child.wait().await, true)
        }
    };
    if background {
        // What the command left running in its group ends with it (and
        // its output pipes close, so the readers below end too).
        // SAFETY: as in GroupGuard.
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
    }
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
            attachments: Vec::new(),
        },
    }
}

/// [`forward`] (lines), or [`forward_chunks`] for a background or raw
/// process.
async fn forward_any(
    output: impl AsyncRead + Unpin,
    stream: OutputStream,
    id: u64,
    tx: Responses,
    chunks: bool,
) {
    if chunks {
        forward_chunks(output, stream, id, tx).await;
    } else {
        forward(output, stream, id, tx).await;
    }
}

/// What `output` writes as deltas of request `id`, a chunk per read (at
/// most [`CHUNK_BYTES`]), until it closes. A character split across reads
/// is held back for the next; invalid UTF-8 becomes U+FFFD.
async fn forward_chunks(
    mut output: impl AsyncRead + Unpin,
    stream: OutputStream,
    id: u64,
    tx: Responses,
) {
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut held: Vec<u8> = Vec::new();
    loop {
        let read = match output.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        held.extend_from_slice(&buf[..read]);
        let text = take_text(&mut held);
        if text.is_empty() {
            continue;
        }
        let reply = GuestReply::Delta { stream, text };
        if tx.send(GuestResponse { id, reply }).is_err() {
            return;
        }
    }
    if !held.is_empty() {
        let text = String::from_utf8_lossy(&held).into_owned();
        let _ = tx.send(GuestResponse {
            id,
            reply: GuestReply::Delta { stream, text },
        });
    }
}

/// The text of `bytes`, leaving in it only an incomplete character at its
/// end (at most 3 bytes), to be completed by the next read.
fn take_text(bytes: &mut Vec<u8>) -> String {
    let keep_from = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => {
            // Invalid in the middle: find an incomplete tail, if any.
            let tail = bytes.len().saturating_sub(3);
            (tail..bytes.len())
                .find(|&i| {
                    std::str::from_utf8(&bytes[i..]).is_err_and(|e| e.error_len().is_none())
                        && bytes[i] >= 0xC0
                })
                .unwrap_or(bytes.len())
        }
    };
    let rest = bytes.split_off(keep_from);
    let text = String::from_utf8_lossy(bytes).into_owned();
    *bytes = rest;
    text
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

#[cfg(test)]
mod tests {
    use super::take_text;

    #[test]
    fn a_split_character_waits_for_its_end() {
        let mut bytes = "añ".as_bytes()[..2].to_vec();
        assert_eq!(take_text(&mut bytes), "a");
        assert_eq!(bytes, vec![0xC3]);
        bytes.push(0xB1);
        assert_eq!(take_text(&mut bytes), "ñ");
        assert!(bytes.is_empty());
        // Invalid bytes in the middle are replaced, an incomplete tail kept.
        let mut bytes = vec![b'x', 0xFF, b'y', 0xE2, 0x82];
        assert_eq!(take_text(&mut bytes), "x\u{FFFD}y");
        assert_eq!(bytes, vec![0xE2, 0x82]);
    }
}
