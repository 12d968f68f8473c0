//! A JSON-RPC client for one language server running in a guest of its own:
//! LSP's framing (`Content-Length: N\r\n\r\n` then N bytes of JSON) over a
//! `raw` spawned process (output in chunks as written, input written
//! exactly), requests matched to responses by id, and the few requests a
//! server makes of its client answered minimally so it never waits on us.
//!
//! Everything the server writes is untrusted: a broken header or a message
//! over [`MAX_MESSAGE_BYTES`] ends the connection with its reason, a body
//! that is not JSON is skipped, and a server that stops answering is only
//! ever waited for up to a deadline.

use cortex_protocol::{GuestReply, OutputStream, ReadFileArgs, ToolArgs};
use cortex_runtime::{CallHandle, Guest};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The largest message accepted from a server.
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// A header longer than this is not LSP.
const MAX_HEADER_BYTES: usize = 8 * 1024;
/// Stderr chunks kept for the reason a server ended.
const STDERR_KEPT: usize = 4;
/// Lines of a file read back for a server (a longer file is not sent).
const MAX_FILE_LINES: u64 = 20_000;

/// Why a request to the server did not get an answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LspError {
    /// The server (or its guest) ended; the reason.
    #[error("it ended: {0}")]
    Ended(String),
    /// No answer within the deadline.
    #[error("no answer to `{0}` within {1} s")]
    Timeout(&'static str, u64),
    /// It answered with an error.
    #[error("`{0}` failed: {1}")]
    Refused(&'static str, String),
}

/// One diagnostic as the server published it (positions 0-based).
#[derive(Debug, Clone)]
pub(crate) struct Diagnostic {
    pub line: u64,
    pub character: u64,
    /// 1 error, 2 warning, 3 information, 4 hint (absent: error).
    pub severity: u8,
    pub message: String,
    pub source: Option<String>,
}

/// The latest publish for one document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Published {
    /// How many publishes for the document have arrived so far.
    pub count: u64,
    /// The document version it is for, when the server says.
    pub version: Option<i64>,
    pub diagnostics: Vec<Diagnostic>,
}

/// What the reader task and the callers share.
#[derive(Default)]
struct Shared {
    pending: Mutex<HashMap<i64, oneshot::Sender<Result<Value, String>>>>,
    /// By document path (the URI decoded), so differences in how a server
    /// encodes a URI do not matter.
    published: Mutex<HashMap<String, Published>>,
    ended: Mutex<Option<String>>,
    stderr: Mutex<VecDeque<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running language server.
pub(crate) struct LspClient {
    shared: Arc<Shared>,
    /// Framed messages for the writer task.
    out: mpsc::Sender<String>,
    /// Bumped on every publish and at the end, so waiters look again.
    events: watch::Receiver<u64>,
    next_id: AtomicI64,
    /// Cancelled: the writer task closes the guest.
    kill: CancellationToken,
    writer: Option<JoinHandle<()>>,
    /// The guest reads files back through this (`read_file`): shared with
    /// the writer task, which owns the connection's end.
    reader_guest: Arc<tokio::sync::Mutex<Option<Guest>>>,
}

impl LspClient {
    /// Run `command` in `guest` and connect to it (no handshake yet).
    pub(crate) async fn spawn(
        guest: Guest,
        command: &str,
        args: &[String],
        env: &std::collections::BTreeMap<String, String>,
    ) -> Result<LspClient, String> {
        let handle = match guest
            .spawn_raw(command.to_owned(), args.to_vec(), env.clone())
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                guest.close().await;
                return Err(format!("cannot start `{command}`: {e}"));
            }
        };
        let shared = Arc::new(Shared::default());
        let (events_tx, events) = watch::channel(0u64);
        let (out, out_rx) = mpsc::channel::<String>(64);
        let kill = CancellationToken::new();
        let target = handle.id();
        let guest = Arc::new(tokio::sync::Mutex::new(Some(guest)));
        tokio::spawn(read_messages(
            handle,
            shared.clone(),
            events_tx,
            out.clone(),
        ));
        let writer = tokio::spawn(write_messages(guest.clone(), target, out_rx, kill.clone()));
        Ok(LspClient {
            shared,
            out,
            events,
            next_id: AtomicI64::new(1),
            kill,
            writer: Some(writer),
            reader_guest: guest,
        })
    }

    /// Why the server ended; `None` while it runs.
    pub(crate) fn ended(&self) -> Option<String> {
        lock(&self.shared.ended).clone()
    }

    /// Send a request and wait up to `deadline` for its answer.
    pub(crate) async fn request(
        &self,
        method: &'static str,
        params: Value,
        deadline: Duration,
    ) -> Result<Value, LspError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(e) = self.send(&message).await {
            lock(&self.shared.pending).remove(&id);
            return Err(e);
        }
        match tokio::time::timeout(deadline, rx).await {
            Ok(Ok(Ok(value))) => Ok(value),
            // The reader fails every waiting request when the server ends.
            Ok(Ok(Err(message))) => Err(match self.ended() {
                Some(reason) => LspError::Ended(reason),
                None => LspError::Refused(method, message),
            }),
            Ok(Err(_)) => Err(LspError::Ended(self.end_reason())),
            Err(_) => {
                lock(&self.shared.pending).remove(&id);
                Err(LspError::Timeout(method, deadline.as_secs().max(1)))
            }
        }
    }

    /// Send a notification.
    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), LspError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    async fn send(&self, message: &Value) -> Result<(), LspError> {
        if let Some(reason) = self.ended() {
            return Err(LspError::Ended(reason));
        }
        self.out
            .send(frame(message))
            .await
            .map_err(|_| LspError::Ended(self.end_reason()))
    }

    fn end_reason(&self) -> String {
        self.ended()
            .unwrap_or_else(|| "its connection closed".to_owned())
    }

    /// The latest publish for the document at `path` (as the guest sees it).
    pub(crate) fn published(&self, path: &str) -> Option<Published> {
        lock(&self.shared.published).get(path).cloned()
    }

    /// Wait until something is published or the server ends, at most until
    /// `until`; false at the deadline.
    pub(crate) async fn changed(&mut self, until: tokio::time::Instant) -> bool {
        matches!(
            tokio::time::timeout_at(until, self.events.changed()).await,
            Ok(Ok(()))
        )
    }

    /// The text of the workspace file `path` as it is now, read in the
    /// server's guest: `Err` with why it cannot be sent (too long, not
    /// text, unreadable).
    pub(crate) async fn read_file(&self, path: &str) -> Result<String, String> {
        let guest = self.reader_guest.lock().await;
        let Some(guest) = guest.as_ref() else {
            return Err("its guest is closed".to_owned());
        };
        let args = ToolArgs::ReadFile(ReadFileArgs {
            path: path.to_owned(),
            offset: None,
            limit: Some(MAX_FILE_LINES),
        });
        let mut handle = guest.call(args).await.map_err(|e| e.to_string())?;
        while let Some(reply) = handle.next().await {
            if let GuestReply::Result(outcome) = reply {
                if !outcome.is_ok() {
                    return Err(outcome.output);
                }
                if outcome.output.ends_with("is empty (0 lines).") {
                    return Ok(String::new());
                }
                return cortex_tools::shown_file(&outcome.output)
                    .ok_or_else(|| "the file is too long to send to it".to_owned());
            }
        }
        Err("its guest ended".to_owned())
    }

    /// End the server and its guest, waiting for the guest to close.
    pub(crate) async fn close(mut self) {
        self.kill.cancel();
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
        }
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        // A client dropped without `close` still ends its server.
        self.kill.cancel();
    }
}

/// `message` with LSP's header. The guest writes it exactly.
fn frame(message: &Value) -> String {
    let body = message.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// Send each framed message, in order, until `kill`; then close the guest
/// (which kills the server and everything it started).
async fn write_messages(
    guest: Arc<tokio::sync::Mutex<Option<Guest>>>,
    target: u64,
    mut messages: mpsc::Receiver<String>,
    kill: CancellationToken,
) {
    loop {
        tokio::select! {
            message = messages.recv() => match message {
                Some(message) => {
                    let sent = match guest.lock().await.as_ref() {
                        Some(guest) => guest.input(target, message).await,
                        None => break,
                    };
                    if let Err(e) = sent {
                        tracing::debug!("language server input: {e}");
                        break;
                    }
                }
                None => break,
            },
            _ = kill.cancelled() => break,
        }
    }
    kill.cancelled().await;
    let taken = guest.lock().await.take();
    if let Some(guest) = taken {
        guest.close().await;
    }
}

/// Read the server's output into messages until it ends; then fail every
/// waiting request with the reason.
async fn read_messages(
    mut handle: CallHandle,
    shared: Arc<Shared>,
    events: watch::Sender<u64>,
    out: mpsc::Sender<String>,
) {
    let mut buffer: Vec<u8> = Vec::new();
    let ended = loop {
        match handle.next().await {
            Some(GuestReply::Delta {
                stream: OutputStream::Stdout,
                text,
            }) => {
                buffer.extend_from_slice(text.as_bytes());
                match take_messages(&mut buffer) {
                    Ok(messages) => {
                        for message in messages {
                            handle_message(&shared, &events, &out, message).await;
                        }
                    }
                    Err(broken) => {
                        break format!("it broke LSP's framing ({broken})");
                    }
                }
            }
            Some(GuestReply::Delta { text, .. }) => {
                let mut stderr = lock(&shared.stderr);
                if stderr.len() == STDERR_KEPT {
                    stderr.pop_front();
                }
                stderr.push_back(text);
            }
            Some(GuestReply::Result(outcome)) => {
                break if outcome.is_ok() {
                    "it exited".to_owned()
                } else {
                    format!("it ended ({})", outcome.output)
                };
            }
            None => break "its guest ended".to_owned(),
        }
    };
    let last = lock(&shared.stderr)
        .iter()
        .flat_map(|chunk| chunk.lines())
        .rfind(|line| !line.trim().is_empty())
        .map(|line| cortex_tools::cap_middle(line.trim(), 300));
    let reason = match last {
        Some(last) => format!("{ended}: {last}"),
        None => ended,
    };
    *lock(&shared.ended) = Some(reason.clone());
    for (_, waiting) in lock(&shared.pending).drain() {
        let _ = waiting.send(Err(reason.clone()));
    }
    events.send_modify(|n| *n += 1);
}

/// Every whole message at the front of `buffer`, taken out of it; `Err`
/// when the stream is not LSP's framing.
fn take_messages(buffer: &mut Vec<u8>) -> Result<Vec<Value>, String> {
    let mut messages = Vec::new();
    loop {
        let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
            if buffer.len() > MAX_HEADER_BYTES {
                return Err("a header without its end".to_owned());
            }
            return Ok(messages);
        };
        let header = String::from_utf8_lossy(&buffer[..end]).into_owned();
        let length = header
            .split("\r\n")
            .filter_map(|line| line.split_once(':'))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
            .and_then(|(_, value)| value.trim().parse::<usize>().ok())
            .ok_or_else(|| "a header without Content-Length".to_owned())?;
        if length > MAX_MESSAGE_BYTES {
            return Err(format!("a {length}-byte message"));
        }
        let start = end + 4;
        if buffer.len() < start + length {
            return Ok(messages);
        }
        let body: Vec<u8> = buffer.drain(..start + length).skip(start).collect();
        match serde_json::from_slice(&body) {
            Ok(value) => messages.push(value),
            Err(e) => tracing::debug!("a language server message that is not JSON: {e}"),
        }
    }
}

/// A response goes to its request; a server's request gets a minimal
/// answer; `publishDiagnostics` is kept.
async fn handle_message(
    shared: &Shared,
    events: &watch::Sender<u64>,
    out: &mpsc::Sender<String>,
    message: Value,
) {
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id").filter(|id| !id.is_null());
    match (method, id) {
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let Some(waiting) = lock(&shared.pending).remove(&id) else {
                return;
            };
            let answer = match message.get("error") {
                Some(error) => Err(error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(|m| cortex_tools::cap_middle(m, 300))
                    .unwrap_or_else(|| "an error".to_owned())),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = waiting.send(answer);
        }
        (Some(method), Some(id)) => {
            // `workspace/configuration` wants one item per section asked
            // for; null means "no settings" to every server we know. The
            // rest (`client/registerCapability`,
            // `window/workDoneProgress/create`, …) only want an answer.
            let result = if method == "workspace/configuration" {
                let items = message
                    .pointer("/params/items")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                Value::Array(vec![Value::Null; items])
            } else {
                Value::Null
            };
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            let _ = out.send(frame(&answer)).await;
        }
        (Some("textDocument/publishDiagnostics"), None) => {
            let Some(params) = message.get("params") else {
                return;
            };
            let Some(path) = params
                .get("uri")
                .and_then(Value::as_str)
                .and_then(path_of_uri)
            else {
                return;
            };
            let diagnostics = params
                .get("diagnostics")
                .and_then(Value::as_array)
                .map(|items| items.iter().filter_map(diagnostic).collect())
                .unwrap_or_default();
            let version = params.get("version").and_then(Value::as_i64);
            {
                let mut published = lock(&shared.published);
                let entry = published.entry(path).or_default();
                entry.count += 1;
                entry.version = version;
                entry.diagnostics = diagnostics;
            }
            events.send_modify(|n| *n += 1);
        }
        _ => {}
    }
}

fn diagnostic(value: &Value) -> Option<Diagnostic> {
    let start = value.pointer("/range/start")?;
    Some(Diagnostic {
        line: start.get("line")?.as_u64()?,
        character: start.get("character")?.as_u64()?,
        severity: value
            .get("severity")
            .and_then(Value::as_u64)
            .and_then(|s| u8::try_from(s).ok())
            .unwrap_or(1),
        message: value.get("message")?.as_str()?.to_owned(),
        source: value
            .get("source")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// `file://` and the path, each byte outside the unreserved set and `/`
/// percent-encoded.
pub(crate) fn uri_of_path(path: &str) -> String {
    let mut uri = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The path of a `file://` URI, percent-decoded; `None` for any other URI.
fn path_of_uri(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = rest.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cut_by_their_length_across_chunks() {
        let one = frame(&json!({"id": 1, "result": "a\r\n\r\nb"}));
        let two = frame(&json!({"method": "x"}));
        let mut buffer = format!("{one}{}", &two[..10]).into_bytes();
        let messages = take_messages(&mut buffer).expect("framed");
        assert_eq!(messages, vec![json!({"id": 1, "result": "a\r\n\r\nb"})]);
        buffer.extend_from_slice(&two.as_bytes()[10..]);
        let messages = take_messages(&mut buffer).expect("framed");
        assert_eq!(messages, vec![json!({"method": "x"})]);
        assert!(buffer.is_empty());
    }

    #[test]
    fn a_stream_that_is_not_framed_is_refused() {
        let mut buffer = b"Content-Type: x\r\n\r\n{}".to_vec();
        assert!(take_messages(&mut buffer).is_err());
        let mut buffer = vec![b'x'; MAX_HEADER_BYTES + 1];
        assert!(take_messages(&mut buffer).is_err());
        let mut buffer = format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE_BYTES + 1).into_bytes();
        assert!(take_messages(&mut buffer).is_err());
    }

    #[test]
    fn uris_round_trip_through_percent_encoding() {
        let path = "/tmp/a b/ü%.py";
        let uri = uri_of_path(path);
        assert_eq!(uri, "file:///tmp/a%20b/%C3%BC%25.py");
        assert_eq!(path_of_uri(&uri).as_deref(), Some(path));
        assert_eq!(path_of_uri("untitled:1"), None);
    }
}
