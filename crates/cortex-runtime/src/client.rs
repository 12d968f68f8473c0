//! The harness side of the guest protocol: one reader task routes responses
//! to the call they answer; writes are serialised behind a lock.

use crate::RuntimeError;
use cortex_guest::lines::{Line, read_bounded_line};
use cortex_protocol::{GuestOp, GuestReply, GuestRequest, GuestResponse, ToolName, ToolOutcome};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;

/// How long a protocol request (capabilities, stop, ping) may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `close` waits for the agent to exit before killing it.
const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// After the agent exited, how long its last output gets to be routed.
const EXIT_DRAIN: Duration = Duration::from_millis(500);
/// A response line longer than this is dropped (results are capped far below).
const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

type BoxWriter = Box<dyn AsyncWrite + Unpin + Send>;
type Pending = HashMap<u64, mpsc::UnboundedSender<GuestReply>>;

/// State shared with the reader and process tasks.
struct Shared {
    /// Calls awaiting replies. `alive` is only changed with this lock held, so
    /// a call is either registered while alive or refused.
    pending: Mutex<Pending>,
    alive: AtomicBool,
    /// Signalled once the reader task has seen the end of the agent's output.
    reader_done: Notify,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The guest is gone: every open call ends without a result.
    fn die(&self, why: &str) {
        let mut pending = self.pending();
        if self.alive.swap(false, Ordering::SeqCst) {
            tracing::debug!("guest connection ended: {why}");
        }
        pending.clear();
    }

    fn route(&self, response: GuestResponse) {
        let mut pending = self.pending();
        let id = response.id;
        match response.reply {
            reply @ GuestReply::Result(_) => match pending.remove(&id) {
                Some(tx) => {
                    let _ = tx.send(reply);
                }
                None => tracing::debug!(id, "guest answered no pending call: {reply:?}"),
            },
            reply @ GuestReply::Delta { .. } => {
                if let Some(tx) = pending.get(&id) {
                    let _ = tx.send(reply);
                }
            }
        }
    }
}

/// A connected guest.
pub struct Guest {
    shared: Arc<Shared>,
    writer: tokio::sync::Mutex<Option<BoxWriter>>,
    next_id: AtomicU64,
    reader: Option<JoinHandle<()>>,
    /// Owns the child process; ends when it exits.
    process: Option<JoinHandle<()>>,
    /// Tells the process task to kill the child (dropping it does too).
    kill: Option<oneshot::Sender<()>>,
    pid: Option<u32>,
}

/// Replies to one call: zero or more `Delta`, then one `Result`. `None`
/// before a `Result` means the guest died mid-call.
pub struct CallHandle {
    rx: tokio::sync::mpsc::UnboundedReceiver<GuestReply>,
    id: u64,
}

impl CallHandle {
    pub async fn next(&mut self) -> Option<GuestReply> {
        self.rx.recv().await
    }

    /// The request id of this call (the `target` of [`Guest::stop_call`]).
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Guest {
    /// Wrap a connection to an agent. `process` is the child to kill on close
    /// (None for in-process or remote agents).
    pub fn connect<R, W>(reader: R, writer: W, process: Option<tokio::process::Child>) -> Guest
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            alive: AtomicBool::new(true),
            reader_done: Notify::new(),
        });
        let reader = tokio::spawn(read_responses(reader, Arc::clone(&shared)));
        let pid = process.as_ref().and_then(|child| child.id());
        let (kill, process) = match process {
            Some(child) => {
                let (kill_tx, kill_rx) = oneshot::channel();
                let task = tokio::spawn(own_process(child, kill_rx, Arc::clone(&shared)));
                (Some(kill_tx), Some(task))
            }
            None => (None, None),
        };
        Guest {
            shared,
            writer: tokio::sync::Mutex::new(Some(Box::new(writer))),
            next_id: AtomicU64::new(1),
            reader: Some(reader),
            process,
            kill,
            pid,
        }
    }

    /// The agent's process id, when this guest is a local child process.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    pub async fn call(
        &self,
        name: ToolName,
        args: serde_json::Value,
    ) -> Result<CallHandle, RuntimeError> {
        let (id, rx) = self.register()?;
        self.send(id, GuestOp::Tool { name, args }).await?;
        Ok(CallHandle { rx, id })
    }

    /// Start a long-lived process in the guest (see [`GuestOp::Spawn`]):
    /// its output lines arrive on the handle as deltas, its end as the
    /// result; [`Guest::input`] writes to it, [`Guest::stop_call`] kills it.
    pub async fn spawn(
        &self,
        command: String,
        args: Vec<String>,
        env: std::collections::BTreeMap<String, String>,
    ) -> Result<CallHandle, RuntimeError> {
        let (id, rx) = self.register()?;
        self.send(id, GuestOp::Spawn { command, args, env }).await?;
        Ok(CallHandle { rx, id })
    }

    /// Write one line to the standard input of the process a
    /// [`Guest::spawn`] started (`target` is its [`CallHandle::id`]).
    pub async fn input(&self, target: u64, line: String) -> Result<(), RuntimeError> {
        self.request(GuestOp::Input { target, line })
            .await
            .map(drop)
    }

    pub async fn set_capabilities(&self, writable: bool, bash: bool) -> Result<(), RuntimeError> {
        self.request(GuestOp::Capabilities { writable, bash })
            .await
            .map(drop)
    }

    /// Kill every running command's process group.
    pub async fn stop(&self) -> Result<(), RuntimeError> {
        self.request(GuestOp::Stop { target: None }).await.map(drop)
    }

    /// Kill the command started by one call (see [`CallHandle::id`]).
    pub async fn stop_call(&self, id: u64) -> Result<(), RuntimeError> {
        self.request(GuestOp::Stop { target: Some(id) })
            .await
            .map(drop)
    }

    pub async fn ping(&self) -> Result<(), RuntimeError> {
        self.request(GuestOp::Ping).await.map(drop)
    }

    /// What the agent runs in: `None` outside a sandbox.
    pub async fn describe(&self) -> Result<Option<cortex_sandbox::Report>, RuntimeError> {
        #[derive(serde::Deserialize)]
        struct Description {
            sandbox: Option<cortex_sandbox::Report>,
        }
        let outcome = self.request(GuestOp::Describe).await?;
        serde_json::from_str::<Description>(&outcome.output)
            .map(|d| d.sandbox)
            .map_err(|e| RuntimeError::Protocol(format!("bad `describe` answer: {e}")))
    }

    /// False once the connection is closed or the process exited.
    pub fn is_alive(&self) -> bool {
        self.shared.alive.load(Ordering::SeqCst)
    }

    /// Stop everything, close the connection, reap the process.
    pub async fn close(mut self) {
        if self.is_alive() {
            let stop = tokio::time::timeout(CLOSE_GRACE, self.stop()).await;
            if let Ok(Err(e)) = stop {
                tracing::debug!("stop on close: {e}");
            }
        }
        // Closing the agent's input is its signal to finish.
        if let Some(mut writer) = self.writer.lock().await.take() {
            let _ = tokio::time::timeout(CLOSE_GRACE, writer.shutdown()).await;
        }
        if let Some(mut process) = self.process.take() {
            if tokio::time::timeout(CLOSE_GRACE, &mut process)
                .await
                .is_err()
            {
                tracing::warn!("the guest did not exit in time; killing it");
                if let Some(kill) = self.kill.take() {
                    let _ = kill.send(());
                }
                let _ = tokio::time::timeout(CLOSE_GRACE, &mut process).await;
                process.abort();
            }
        } else if let Some(mut reader) = self.reader.take() {
            // No process: the agent answers EOF by closing its side.
            if tokio::time::timeout(CLOSE_GRACE, &mut reader)
                .await
                .is_err()
            {
                reader.abort();
            }
        }
        self.shared.die("closed");
    }

    fn register(&self) -> Result<(u64, mpsc::UnboundedReceiver<GuestReply>), RuntimeError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        let mut pending = self.shared.pending();
        if !self.shared.alive.load(Ordering::SeqCst) {
            return Err(RuntimeError::Exited);
        }
        pending.insert(id, tx);
        Ok((id, rx))
    }

    async fn send(&self, id: u64, op: GuestOp) -> Result<(), RuntimeError> {
        let result = self.write_line(&GuestRequest { id, op }).await;
        if result.is_err() {
            self.shared.pending().remove(&id);
        }
        result
    }

    async fn write_line(&self, request: &GuestRequest) -> Result<(), RuntimeError> {
        let mut line = serde_json::to_vec(request)
            .map_err(|e| RuntimeError::Protocol(format!("cannot encode a request: {e}")))?;
        line.push(b'\n');
        let mut writer = self.writer.lock().await;
        let writer = writer.as_mut().ok_or(RuntimeError::Exited)?;
        let written = async {
            writer.write_all(&line).await?;
            writer.flush().await
        }
        .await;
        written.map_err(|e| {
            if self.is_alive() {
                RuntimeError::Io(e)
            } else {
                RuntimeError::Exited
            }
        })
    }

    /// Send a protocol op and wait for its result; an `ok:false` result is an
    /// error carrying the guest's message.
    async fn request(&self, op: GuestOp) -> Result<ToolOutcome, RuntimeError> {
        let what = op_name(&op);
        let (id, mut rx) = self.register()?;
        self.send(id, op).await?;
        let result = async {
            while let Some(reply) = rx.recv().await {
                if let GuestReply::Result(outcome) = reply {
                    return Some(outcome);
                }
            }
            None
        };
        match tokio::time::timeout(REQUEST_TIMEOUT, result).await {
            Err(_) => {
                self.shared.pending().remove(&id);
                Err(RuntimeError::Protocol(format!(
                    "no answer to `{what}` within {} s",
                    REQUEST_TIMEOUT.as_secs()
                )))
            }
            Ok(None) => Err(RuntimeError::Exited),
            Ok(Some(outcome)) if outcome.ok => Ok(outcome),
            Ok(Some(outcome)) => Err(RuntimeError::Protocol(format!(
                "`{what}` failed: {}",
                outcome.output
            ))),
        }
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        if let Some(reader) = &self.reader {
            reader.abort();
        }
        // Dropping the kill sender makes the process task kill the child;
        // aborting it drops the child, which is `kill_on_drop`.
        self.kill.take();
        if let Some(process) = &self.process {
            process.abort();
        }
        self.shared.die("dropped");
    }
}

fn op_name(op: &GuestOp) -> &'static str {
    match op {
        GuestOp::Capabilities { .. } => "capabilities",
        GuestOp::Tool { .. } => "tool",
        GuestOp::Spawn { .. } => "spawn",
        GuestOp::Input { .. } => "input",
        GuestOp::Stop { .. } => "stop",
        GuestOp::Ping => "ping",
        GuestOp::Describe => "describe",
    }
}

async fn read_responses<R>(reader: R, shared: Arc<Shared>)
where
    R: AsyncRead + Unpin + Send,
{
    let mut reader = BufReader::new(reader);
    let why = loop {
        match read_bounded_line(&mut reader, MAX_RESPONSE_BYTES).await {
            Err(e) => break format!("read error: {e}"),
            Ok(Line::Eof) => break "end of output".to_owned(),
            Ok(Line::TooLong(size)) => {
                tracing::warn!("dropped a {size}-byte response line from the guest");
            }
            Ok(Line::Text(bytes)) => {
                if bytes.trim_ascii().is_empty() {
                    continue;
                }
                match serde_json::from_slice::<GuestResponse>(&bytes) {
                    Ok(response) => shared.route(response),
                    Err(e) => tracing::warn!(
                        "unreadable line from the guest ({e}): {}",
                        String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                    ),
                }
            }
        }
    };
    shared.die(&why);
    shared.reader_done.notify_one();
}

/// Own the child: mark the guest dead when it exits; kill it when told to
/// (or when the guest is dropped).
async fn own_process(
    mut child: tokio::process::Child,
    kill: oneshot::Receiver<()>,
    shared: Arc<Shared>,
) {
    tokio::select! {
        status = child.wait() => {
            // Let the reader route what the agent wrote before it exited.
            let _ = tokio::time::timeout(EXIT_DRAIN, shared.reader_done.notified()).await;
            match status {
                Ok(status) => shared.die(&format!("the agent exited ({status})")),
                Err(e) => shared.die(&format!("waiting for the agent failed: {e}")),
            }
        }
        _ = kill => {
            shared.die("killed");
            if let Err(e) = child.kill().await {
                tracing::warn!("killing the guest failed: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>() {}

    #[test]
    fn handles_can_be_shared_across_tasks() {
        send_sync::<Guest>();
        send_sync::<CallHandle>();
    }

    #[tokio::test]
    async fn a_closed_connection_fails_calls_cleanly() {
        let (ours, theirs) = tokio::io::duplex(1024);
        let (reader, writer) = tokio::io::split(ours);
        let guest = Guest::connect(reader, writer, None);
        drop(theirs);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while guest.is_alive() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(!guest.is_alive());
        assert!(matches!(guest.ping().await, Err(RuntimeError::Exited)));
        guest.close().await;
    }

    #[tokio::test]
    async fn replies_are_routed_by_id_and_errors_are_typed() {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(ours);
        let guest = Guest::connect(reader, writer, None);
        let (agent_in, mut agent_out) = tokio::io::split(theirs);
        let mut requests = BufReader::new(agent_in).lines();

        let mut first = guest
            .call(ToolName::ReadFile, serde_json::json!({"path": "a"}))
            .await
            .expect("call");
        let mut second = guest
            .call(ToolName::ReadFile, serde_json::json!({"path": "b"}))
            .await
            .expect("call");
        for _ in 0..2 {
            let line = requests.next_line().await.expect("read").expect("line");
            let request: GuestRequest = serde_json::from_str(&line).expect("request");
            assert!(matches!(request.op, GuestOp::Tool { .. }));
        }
        // Answer out of order, with noise in between.
        let answers = format!(
            "{}\nnot json\n{}\n{}\n",
            r#"{"id":2,"type":"result","ok":true,"output":"B"}"#,
            r#"{"id":1,"type":"delta","stream":"stdout","text":"partial"}"#,
            r#"{"id":1,"type":"result","ok":false,"output":"A failed"}"#,
        );
        agent_out
            .write_all(answers.as_bytes())
            .await
            .expect("write");
        assert_eq!(
            second.next().await,
            Some(GuestReply::Result(ToolOutcome::ok("B")))
        );
        assert!(matches!(first.next().await, Some(GuestReply::Delta { .. })));
        assert_eq!(
            first.next().await,
            Some(GuestReply::Result(ToolOutcome::error("A failed")))
        );
        assert_eq!(first.next().await, None);

        let ping = tokio::spawn(async move {
            let result = guest.ping().await;
            (guest, result)
        });
        let line = requests.next_line().await.expect("read").expect("line");
        let request: GuestRequest = serde_json::from_str(&line).expect("request");
        assert_eq!(request.op, GuestOp::Ping);
        let answer = format!(
            "{{\"id\":{},\"type\":\"result\",\"ok\":false,\"output\":\"nope\"}}\n",
            request.id
        );
        agent_out.write_all(answer.as_bytes()).await.expect("write");
        let (guest, result) = ping.await.expect("join");
        assert!(
            matches!(&result, Err(RuntimeError::Protocol(m)) if m.contains("nope")),
            "{result:?}"
        );
        drop(agent_out);
        drop(requests);
        guest.close().await;
    }
}
