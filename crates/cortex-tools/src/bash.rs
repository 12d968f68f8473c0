//! Running a shell command in the workspace, in its own process group.
//!
//! The command runs as `bash -c` with exactly the given environment, stdin
//! closed, in a new process group so that a timeout or Stop can kill the
//! whole tree (`killpg`), background jobs included. Output is read from both
//! pipes concurrently: streamed to the caller (bounded) and kept for the
//! model as a head plus a tail ring buffer, so memory stays bounded however
//! much a command prints.

use crate::cap::{MAX_OUTPUT_BYTES, cut_note};
use cortex_protocol::{BashArgs, OutputStream};
use std::collections::VecDeque;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

/// Timeout when the model gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest timeout the model may ask for.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Bytes passed through `on_output` at most; the rest is still captured.
pub const MAX_STREAMED_BYTES: usize = 1024 * 1024;
/// How long to keep draining the pipes after the group was killed (a process
/// that escaped the group may hold them open forever).
const POST_KILL_DRAIN: Duration = Duration::from_secs(1);
/// Room kept for the notes appended after the output.
const NOTE_ROOM: usize = 512;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashOutcome {
    /// Combined output for the model, capped by cutting the middle.
    pub output: String,
    /// bash's exit code; `None` when it was killed by a signal (the output
    /// then names the signal).
    pub exit_code: Option<i32>,
    /// Why it ended.
    pub ending: BashEnding,
}

/// Why a command ended: one of three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BashEnding {
    /// bash exited (or was killed by a signal) on its own.
    Exited,
    /// Killed because the timeout ran out.
    TimedOut,
    /// Killed because `cancel` fired.
    Stopped,
}

/// Run `bash -c command` in `cwd` with exactly `env` as its environment, in a
/// new process group. Output is streamed through `on_output` (itself capped so
/// a flood cannot flood the caller). On timeout or `cancel` the whole process
/// group is killed.
///
/// - `cwd` is used as given: the caller has confined it (the guest passes
///   the workspace root). The command itself is not confined by this
///   function; isolation is the sandbox's job.
/// - The timeout is `args.timeout_ms`, or [`DEFAULT_TIMEOUT_MS`], clamped
///   to 1 ms..=[`MAX_TIMEOUT_MS`].
/// - `on_output` gets stdout and stderr chunks as they arrive, as valid
///   UTF-8 (a character split across reads is held back), up to
///   [`MAX_STREAMED_BYTES`] in all; it is called from this future, so it
///   must not block.
/// - The command is done when bash has exited *and* both pipes are closed:
///   a background job that keeps a pipe open keeps the call running until
///   it closes it or the timeout. After a normal exit the group is not
///   killed, so background jobs that let go of the pipes live on.
/// - `Ok` for every command that ran, whatever its exit (see
///   [`BashOutcome`]; the output ends with a `[exit code N]`-style line).
///   `Err` only when bash could not be started or waited for.
/// - Cancellation: dropping the future before the command ended kills the
///   process group, as `cancel` does, but returns nothing.
pub async fn run_bash(
    cwd: &Path,
    args: &BashArgs,
    env: &[(String, String)],
    on_output: &mut (dyn FnMut(OutputStream, String) + Send),
    cancel: CancellationToken,
) -> std::io::Result<BashOutcome> {
    let timeout_ms = args
        .timeout_ms
        .unwrap_or(DEFAULT_TIMEOUT_MS)
        .clamp(1, MAX_TIMEOUT_MS);
    let mut child = spawn(cwd, &args.command, env)?;
    let pgid = child
        .id()
        .and_then(|id| libc::pid_t::try_from(id).ok())
        .ok_or_else(|| std::io::Error::other("bash exited before its pid was known"))?;
    // Kills the group if this future is dropped before the command ends.
    let mut guard = GroupGuard(Some(pgid));
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut collected = Collected::new(on_output);

    let deadline = tokio::time::sleep(Duration::from_millis(timeout_ms));
    tokio::pin!(deadline);
    let mut status: Option<ExitStatus> = None;
    let mut ending = BashEnding::Exited;
    let mut out_buf = vec![0u8; 32 * 1024];
    let mut err_buf = vec![0u8; 32 * 1024];
    // Until the pipes close and bash has exited, or the deadline or Stop.
    while stdout.is_some() || stderr.is_some() || status.is_none() {
        tokio::select! {
            n = read_some(&mut stdout, &mut out_buf) => {
                collected.pipe_read(&mut stdout, OutputStream::Stdout, &out_buf, n);
            }
            n = read_some(&mut stderr, &mut err_buf) => {
                collected.pipe_read(&mut stderr, OutputStream::Stderr, &err_buf, n);
            }
            s = child.wait(), if status.is_none() => status = Some(s?),
            () = &mut deadline => { ending = BashEnding::TimedOut; break; }
            () = cancel.cancelled() => { ending = BashEnding::Stopped; break; }
        }
    }
    if ending != BashEnding::Exited {
        guard.kill();
        if status.is_none() {
            status = Some(child.wait().await?);
        }
        drain(
            &mut stdout,
            &mut stderr,
            [&mut out_buf, &mut err_buf],
            &mut collected,
        )
        .await;
    }
    guard.disarm();
    collected.flush_stream();

    let exit_code = status.and_then(|s| s.code());
    let mut output = collected.finish();
    if !output.is_empty() && !output.ends_with('\n') {
        output.push('\n');
    }
    if let Some(hint) = crate::traceback::key_error_hint(&output) {
        output.push_str(&hint);
        output.push('\n');
    }
    output.push_str(&end_notes(timeout_ms, ending, status));
    Ok(BashOutcome {
        output,
        exit_code,
        ending,
    })
}

/// `bash -c COMMAND` in `cwd` with exactly `env`, in a process group of its
/// own, its output on pipes.
fn spawn(
    cwd: &Path,
    command: &str,
    env: &[(String, String)],
) -> std::io::Result<tokio::process::Child> {
    Command::new(bash_path())
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
}

/// After a kill: whatever was written before it, but no waiting on a
/// process that escaped the group and still holds a pipe.
async fn drain<O: AsyncRead + Unpin, E: AsyncRead + Unpin>(
    stdout: &mut Option<O>,
    stderr: &mut Option<E>,
    [out_buf, err_buf]: [&mut [u8]; 2],
    collected: &mut Collected<'_>,
) {
    let drain = tokio::time::sleep(POST_KILL_DRAIN);
    tokio::pin!(drain);
    while stdout.is_some() || stderr.is_some() {
        tokio::select! {
            n = read_some(stdout, out_buf) => {
                collected.pipe_read(stdout, OutputStream::Stdout, out_buf, n);
            }
            n = read_some(stderr, err_buf) => {
                collected.pipe_read(stderr, OutputStream::Stderr, err_buf, n);
            }
            () = &mut drain => break,
        }
    }
}

/// The output's last lines: why the group was killed, if it was, and how
/// the command ended.
fn end_notes(timeout_ms: u64, ending: BashEnding, status: Option<ExitStatus>) -> String {
    let mut notes = String::new();
    match ending {
        BashEnding::Exited => {}
        BashEnding::TimedOut => notes.push_str(&format!(
            "[timed out after {timeout_ms} ms; the process group was killed]\n"
        )),
        BashEnding::Stopped => {
            notes.push_str("[stopped by the user; the process group was killed]\n")
        }
    }
    match (
        status.and_then(|s| s.code()),
        status.and_then(|s| s.signal()),
    ) {
        (Some(code), _) => notes.push_str(&format!("[exit code {code}]")),
        (None, Some(signal)) => notes.push_str(&format!(
            "[killed by signal {signal} ({})]",
            signal_name(signal)
        )),
        (None, None) => notes.push_str("[no exit status]"),
    }
    notes
}

/// Read from a pipe that may already be closed (then never ready).
async fn read_some<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

/// `bash` by absolute path: the child's `PATH` is the caller's business, so
/// it cannot be used to find bash itself.
fn bash_path() -> PathBuf {
    for candidate in ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"] {
        let path = Path::new(candidate);
        if path.is_file() {
            return path.to_path_buf();
        }
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("bash"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("bash"))
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGHUP => "SIGHUP",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGQUIT => "SIGQUIT",
        _ => "signal",
    }
}

/// SIGKILLs the process group on `kill` or when dropped armed.
struct GroupGuard(Option<libc::pid_t>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: killpg has no memory-safety preconditions; the group id
            // is the one our child leads (pgid == its pid).
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The output: streamed to the caller (bounded) and kept as head + tail.
struct Collected<'a> {
    on_output: &'a mut (dyn FnMut(OutputStream, String) + Send),
    streamed: usize,
    stream_stopped: bool,
    /// Bytes of an incomplete UTF-8 character carried to the next chunk.
    carry: [Vec<u8>; 2],
    kept: HeadTail,
}

impl<'a> Collected<'a> {
    fn new(on_output: &'a mut (dyn FnMut(OutputStream, String) + Send)) -> Self {
        let half = (MAX_OUTPUT_BYTES - NOTE_ROOM) / 2;
        Collected {
            on_output,
            streamed: 0,
            stream_stopped: false,
            carry: [Vec::new(), Vec::new()],
            kept: HeadTail::new(half, half),
        }
    }

    /// Handle one read result; closes the pipe on EOF or error.
    fn pipe_read<R>(
        &mut self,
        pipe: &mut Option<R>,
        stream: OutputStream,
        buf: &[u8],
        n: std::io::Result<usize>,
    ) {
        match n {
            Ok(0) | Err(_) => *pipe = None,
            Ok(n) => self.chunk(stream, &buf[..n]),
        }
    }

    fn chunk(&mut self, stream: OutputStream, bytes: &[u8]) {
        self.kept.push(bytes);
        if self.stream_stopped {
            return;
        }
        let carry = &mut self.carry[stream_index(stream)];
        carry.extend_from_slice(bytes);
        let valid = complete_utf8_prefix(carry);
        if valid == 0 {
            return;
        }
        let text = String::from_utf8_lossy(&carry[..valid]).into_owned();
        carry.drain(..valid);
        self.emit(stream, text);
    }

    fn emit(&mut self, stream: OutputStream, text: String) {
        self.streamed += text.len();
        (self.on_output)(stream, text);
        if self.streamed >= MAX_STREAMED_BYTES {
            self.stream_stopped = true;
            (self.on_output)(
                OutputStream::Stderr,
                format!(
                    "\n[streaming stopped after {MAX_STREAMED_BYTES} bytes; the command keeps running]\n"
                ),
            );
        }
    }

    /// Stream what is left of incomplete characters.
    fn flush_stream(&mut self) {
        for stream in [OutputStream::Stdout, OutputStream::Stderr] {
            let rest = std::mem::take(&mut self.carry[stream_index(stream)]);
            if !rest.is_empty() && !self.stream_stopped {
                self.emit(stream, String::from_utf8_lossy(&rest).into_owned());
            }
        }
    }

    fn finish(self) -> String {
        self.kept.finish()
    }
}

fn stream_index(stream: OutputStream) -> usize {
    match stream {
        OutputStream::Stdout => 0,
        OutputStream::Stderr => 1,
    }
}

/// Length of the prefix of `bytes` that does not end inside an incomplete
/// UTF-8 character (invalid bytes count as complete: they become U+FFFD).
fn complete_utf8_prefix(bytes: &[u8]) -> usize {
    let mut start = 0;
    loop {
        match std::str::from_utf8(&bytes[start..]) {
            Ok(_) => return bytes.len(),
            Err(e) => match e.error_len() {
                Some(len) => start += e.valid_up_to() + len,
                None => return start + e.valid_up_to(),
            },
        }
    }
}

/// The first `head_max` bytes and a ring of the last `tail_max` bytes.
struct HeadTail {
    head: Vec<u8>,
    head_max: usize,
    tail: VecDeque<u8>,
    tail_max: usize,
    total: usize,
}

impl HeadTail {
    fn new(head_max: usize, tail_max: usize) -> Self {
        HeadTail {
            head: Vec::with_capacity(head_max.min(4096)),
            head_max,
            tail: VecDeque::new(),
            tail_max,
            total: 0,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        let room = self.head_max - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_max {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_max..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_max);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    fn finish(self) -> String {
        let cut = self.total - self.head.len() - self.tail.len();
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        let tail: Vec<u8> = self.tail.into_iter().collect();
        if cut > 0 {
            out.push_str(&cut_note(cut));
            // The tail may start inside a character; skip its continuation bytes.
            let start = tail
                .iter()
                .position(|b| (*b & 0xC0) != 0x80)
                .unwrap_or(tail.len());
            out.push_str(&String::from_utf8_lossy(&tail[start..]));
        } else {
            out.push_str(&String::from_utf8_lossy(&tail));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_keeps_both_ends() {
        let mut kept = HeadTail::new(4, 4);
        kept.push(b"ab");
        kept.push(b"cdefgh");
        assert_eq!(kept.finish(), "abcdefgh");
        let mut kept = HeadTail::new(4, 4);
        for chunk in [&b"0123"[..], b"456789", b"ab", b"cdefghijklmnop"] {
            kept.push(chunk);
        }
        let out = kept.finish();
        assert!(out.starts_with("0123\n... [18 bytes cut"), "{out}");
        assert!(out.ends_with("mnop"), "{out}");
    }

    #[test]
    fn utf8_prefix_stops_before_incomplete_char() {
        let e = "é".as_bytes();
        assert_eq!(complete_utf8_prefix(b"abc"), 3);
        assert_eq!(complete_utf8_prefix(&[b'a', e[0]]), 1);
        assert_eq!(complete_utf8_prefix(&[b'a', 0xFF, b'b']), 3);
    }
}
