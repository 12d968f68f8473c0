//! The harness side of the guest protocol: one reader task routes responses
//! to the call they answer (within the rules of [`crate::channel`]); writes
//! are serialised behind a lock; a heartbeat notices an agent that stopped
//! answering.

use crate::RuntimeError;
use crate::channel::{Budget, MAX_FRAME_BYTES, Shared};
use cortex_guest::lines::{Line, read_bounded_line};
use cortex_protocol::{
    GuestOp, GuestReply, GuestRequest, GuestResponse, ToolArgs, ToolOutcome, WebFetchArgs,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// How long a protocol request (capabilities, stop, ping) may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `close` waits for the agent to exit before killing it.
const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// After the agent exited, how long its last output gets to be routed.
const EXIT_DRAIN: Duration = Duration::from_millis(500);

/// How often the harness checks that the agent still answers, and how long
/// an answer may take. The agent answers pings inline, also while tools run,
/// so a missing answer means it is stopped, hung or gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    /// The pause between the end of one ping and the next (2 s by default).
    pub interval: Duration,
    /// How long a ping may go unanswered before the harness gives up on the
    /// agent: the connection ends and its process is killed (10 s by
    /// default).
    pub timeout: Duration,
}

impl Default for Liveness {
    fn default() -> Liveness {
        Liveness {
            interval: Duration::from_secs(2),
            timeout: REQUEST_TIMEOUT,
        }
    }
}

type BoxWriter = Box<dyn AsyncWrite + Unpin + Send>;
type Writer = Arc<tokio::sync::Mutex<Option<BoxWriter>>>;

/// The sending half, shared by the [`Guest`] and its heartbeat.
struct Link {
    shared: Arc<Shared>,
    writer: Writer,
    next_id: AtomicU64,
}

/// A connected guest: the harness's client for one agent.
///
/// Cheap to share (`&Guest` from any task; every method takes `&self` but
/// [`Guest::close`]): calls are multiplexed over the one connection, each
/// with its own request id, and their replies are routed back by a reader
/// task. The connection ends when the agent closes its output or exits, when
/// it breaks the framing (see `channel`), when the heartbeat gives up on it,
/// or on [`Guest::close`] / drop; from then on every open call ends without
/// a result, new requests fail with [`RuntimeError::Exited`],
/// [`Guest::is_alive`] is false and [`Guest::ended_because`] says why. A
/// dead guest never comes back: the session starts a new one.
///
/// **Cancellation.** The request methods (`call`, `spawn`, `input`,
/// `set_capabilities`, `stop`, `stop_call`, `ping`, `describe`) write one
/// request line and then wait. Dropping their future while the line is
/// being written (only possible when the agent has stopped reading and the
/// pipe is full) can leave half a line on the connection, which the agent
/// then refuses together with the next request as malformed; dropping it
/// after the write only stops the waiting, the agent still does the work.
/// To cancel work in the guest, use [`Guest::stop_call`] or [`Guest::stop`].
///
/// Dropping a `Guest` ends the connection and kills a child agent at once;
/// [`Guest::close`] is the orderly way.
pub struct Guest {
    link: Arc<Link>,
    reader: Option<JoinHandle<()>>,
    heartbeat: Option<JoinHandle<()>>,
    /// Owns the child process; ends when it exits.
    process: Option<JoinHandle<()>>,
    /// Tells the process task to kill the child (dropping it does too).
    kill: Option<oneshot::Sender<()>>,
    pid: Option<u32>,
}

/// Replies to one call: zero or more `Delta`, then one `Result`. `None`
/// before a `Result` means the connection ended mid-call
/// ([`CallHandle::ended_because`] says why).
///
/// Dropping the handle stops nothing in the guest: the call runs on, its
/// replies are discarded as they arrive (still counted against the call's
/// budget), and the harness forgets the call when its result comes or the
/// connection ends. Use [`Guest::stop_call`] with [`CallHandle::id`] first
/// to end a command.
pub struct CallHandle {
    rx: mpsc::UnboundedReceiver<GuestReply>,
    id: u64,
    shared: Arc<Shared>,
}

impl CallHandle {
    /// The next reply: deltas in the order the guest sent them (within the
    /// harness's budget for the call), then the result. `None` after the
    /// result, or when the connection ended without one. There is no
    /// timeout: a call whose command never ends waits until it is stopped
    /// or the connection ends. Cancel-safe: dropping the future loses no
    /// reply.
    pub async fn next(&mut self) -> Option<GuestReply> {
        self.rx.recv().await
    }

    /// The request id of this call (the `target` of [`Guest::stop_call`]).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Why the connection ended (the agent exited, sent a malformed frame,
    /// stopped answering); `None` while it is alive.
    pub fn ended_because(&self) -> Option<String> {
        self.shared.ended_because()
    }
}

impl Guest {
    /// Wrap a connection to an agent, with the default [`Liveness`].
    /// `process` is the child to kill on close (None for in-process or
    /// remote agents).
    pub fn connect<R, W>(reader: R, writer: W, process: Option<tokio::process::Child>) -> Guest
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Guest::connect_with(reader, writer, process, Some(Liveness::default()))
    }

    /// [`Guest::connect`] with the heartbeat chosen (`None`: no heartbeat,
    /// for tests that script the agent's side line by line).
    pub fn connect_with<R, W>(
        reader: R,
        writer: W,
        process: Option<tokio::process::Child>,
        liveness: Option<Liveness>,
    ) -> Guest
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared::new());
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
        let boxed: BoxWriter = Box::new(writer);
        let link = Arc::new(Link {
            shared,
            writer: Arc::new(tokio::sync::Mutex::new(Some(boxed))),
            next_id: AtomicU64::new(1),
        });
        let heartbeat =
            liveness.map(|liveness| tokio::spawn(heartbeat(Arc::clone(&link), liveness)));
        Guest {
            link,
            reader: Some(reader),
            heartbeat,
            process,
            kill,
            pid,
        }
    }

    /// The agent's process id, when this guest is a local child process.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Run a tool in the guest. Returns once the request is written (not
    /// when the tool is done): the handle yields its output and result. The
    /// streamed output is kept up to `MAX_STREAMED_BYTES` (the rest counted
    /// and noted in a last stderr delta), and the result's output and diff
    /// are capped to the tool caps, whatever the guest sent.
    ///
    /// `args` were parsed and checked by the caller (the dispatcher); the
    /// guest still refuses what its capabilities do not allow, as an
    /// `ok: false` result, not an error here. Errors:
    /// [`RuntimeError::Exited`] once the connection has ended,
    /// [`RuntimeError::Io`] when the write fails on a live connection.
    pub async fn call(&self, args: ToolArgs) -> Result<CallHandle, RuntimeError> {
        self.link.open(GuestOp::Tool(args), Budget::Tool).await
    }

    /// Fetch a web page from the guest's network namespace (see
    /// [`GuestOp::WebFetch`]): `allow` is the user's allow-list, whose hosts
    /// may resolve to private addresses. Capped and answered as
    /// [`Guest::call`]; [`Guest::stop`] cancels it.
    pub async fn web_fetch(
        &self,
        args: WebFetchArgs,
        allow: Vec<String>,
    ) -> Result<CallHandle, RuntimeError> {
        let op = GuestOp::WebFetch { args, allow };
        self.link.open(op, Budget::Tool).await
    }

    /// Start a long-lived process in the guest (see [`GuestOp::Spawn`]):
    /// its output lines arrive on the handle as deltas, its end as the
    /// result; [`Guest::input`] writes to it, [`Guest::stop_call`] kills it.
    /// Unlike [`Guest::call`], nothing it streams is capped here (each frame
    /// is still bounded by the frame limit); errors as for `call`.
    pub async fn spawn(
        &self,
        command: String,
        args: Vec<String>,
        env: std::collections::BTreeMap<String, String>,
    ) -> Result<CallHandle, RuntimeError> {
        let op = GuestOp::Spawn {
            command,
            args,
            env,
            background: false,
            raw: false,
        };
        self.link.open(op, Budget::Unbounded).await
    }

    /// [`Guest::spawn`] for a process with a framing of its own (a language
    /// server): its output arrives in chunks as written, and
    /// [`Guest::input`] writes exactly the text given, no newline added.
    pub async fn spawn_raw(
        &self,
        command: String,
        args: Vec<String>,
        env: std::collections::BTreeMap<String, String>,
    ) -> Result<CallHandle, RuntimeError> {
        let op = GuestOp::Spawn {
            command,
            args,
            env,
            background: false,
            raw: true,
        };
        self.link.open(op, Budget::Unbounded).await
    }

    /// Start `command` with `bash -c` as a background process of the
    /// session (see [`GuestOp::Spawn`]'s `background`): its output arrives
    /// on the handle as deltas in chunks, its end as the result. Only a
    /// [`Guest::stop_call`] with its id (or a [`StopHandle`]) or the
    /// connection's end kills it; [`Guest::stop`] spares it. Nothing it
    /// streams is capped here: the caller keeps what it wants. Errors as
    /// for `call`.
    pub async fn spawn_background(&self, command: String) -> Result<CallHandle, RuntimeError> {
        let op = GuestOp::Spawn {
            command: "bash".to_owned(),
            args: vec!["-c".to_owned(), command],
            env: Default::default(),
            background: true,
            raw: false,
        };
        self.link.open(op, Budget::Unbounded).await
    }

    /// A handle that can kill the command call `id` started, usable
    /// without the `Guest` (by a task that lists a session's background
    /// processes while a turn holds the session). It does not keep the
    /// connection alive: once the guest is gone, stopping is
    /// [`RuntimeError::Exited`].
    pub fn stop_handle(&self, id: u64) -> StopHandle {
        StopHandle {
            link: Arc::downgrade(&self.link),
            id,
        }
    }

    /// Write one line to the standard input of the process a
    /// [`Guest::spawn`] started (`target` is its [`CallHandle::id`]).
    ///
    /// Like every protocol request (`set_capabilities`, `stop`,
    /// `stop_call`, `ping`, `describe`), it waits up to 10 s for the guest's
    /// answer: no answer is [`RuntimeError::Protocol`], a refusal
    /// (`ok: false`) is [`RuntimeError::Protocol`]
    /// with the guest's message, a connection that ends first is
    /// [`RuntimeError::Exited`].
    pub async fn input(&self, target: u64, line: String) -> Result<(), RuntimeError> {
        self.link
            .request(GuestOp::Input { target, line }, REQUEST_TIMEOUT)
            .await
            .map(drop)
    }

    /// Allow the guest to change the workspace (`writable`) and to run
    /// commands (`bash`). An agent starts read-only and refuses writes and
    /// `bash` until this says otherwise; providers send it once from
    /// [`crate::GuestProvider::start`]. Errors as for [`Guest::input`].
    pub async fn set_capabilities(&self, writable: bool, bash: bool) -> Result<(), RuntimeError> {
        let op = GuestOp::Capabilities { writable, bash };
        self.link.request(op, REQUEST_TIMEOUT).await.map(drop)
    }

    /// Kill every running command's process group (in the local sandbox,
    /// also every process that escaped its group), but the background
    /// processes ([`Guest::spawn_background`]): a stopped turn leaves them. Their calls then end
    /// with whatever result the guest gives a killed command; success only
    /// means the signal was sent. Errors as for [`Guest::input`].
    pub async fn stop(&self) -> Result<(), RuntimeError> {
        let op = GuestOp::Stop { target: None };
        self.link.request(op, REQUEST_TIMEOUT).await.map(drop)
    }

    /// Kill the command started by one call (see [`CallHandle::id`]); an id
    /// with no running command is not an error (nothing is signalled).
    /// Errors as for [`Guest::input`].
    pub async fn stop_call(&self, id: u64) -> Result<(), RuntimeError> {
        let op = GuestOp::Stop { target: Some(id) };
        self.link.request(op, REQUEST_TIMEOUT).await.map(drop)
    }

    /// Check that the agent answers (it answers pings inline, even while
    /// tools run). Errors as for [`Guest::input`].
    pub async fn ping(&self) -> Result<(), RuntimeError> {
        self.link
            .request(GuestOp::Ping, REQUEST_TIMEOUT)
            .await
            .map(drop)
    }

    /// What the agent runs in: `None` outside a sandbox. Errors as for
    /// [`Guest::input`], and [`RuntimeError::Protocol`] when the answer is
    /// not a description.
    pub async fn describe(&self) -> Result<Option<cortex_sandbox::Report>, RuntimeError> {
        #[derive(serde::Deserialize)]
        struct Description {
            sandbox: Option<cortex_sandbox::Report>,
        }
        let outcome = self
            .link
            .request(GuestOp::Describe, REQUEST_TIMEOUT)
            .await?;
        serde_json::from_str::<Description>(&outcome.output)
            .map(|d| d.sandbox)
            .map_err(|e| RuntimeError::Protocol(format!("bad `describe` answer: {e}")))
    }

    /// False once the connection is closed, the process exited or the
    /// harness gave up on the agent.
    pub fn is_alive(&self) -> bool {
        self.link.shared.is_alive()
    }

    /// Why the connection ended; `None` while it is alive.
    pub fn ended_because(&self) -> Option<String> {
        self.link.shared.ended_because()
    }

    /// Stop everything, close the connection, reap the process. Never
    /// fails and takes at most a few seconds: each step (stop the commands,
    /// close the agent's input, wait for it to exit) gets 2 s, after which a
    /// child is killed. An agent that is not a local child (docker, remote,
    /// in-process) is not killed: closing its input is its signal to end.
    pub async fn close(mut self) {
        if let Some(heartbeat) = self.heartbeat.take() {
            heartbeat.abort();
        }
        if self.is_alive() {
            let stop = tokio::time::timeout(CLOSE_GRACE, self.stop()).await;
            if let Ok(Err(e)) = stop {
                tracing::debug!("stop on close: {e}");
            }
        }
        // Closing the agent's input is its signal to finish.
        if let Some(mut writer) = self.link.writer.lock().await.take() {
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
        self.link.shared.die("closed");
    }
}

/// Kills one call's command (see [`Guest::stop_handle`]).
#[derive(Clone)]
pub struct StopHandle {
    link: std::sync::Weak<Link>,
    id: u64,
}

impl StopHandle {
    /// [`Guest::stop_call`] for this handle's call. Errors as for
    /// [`Guest::input`]; [`RuntimeError::Exited`] once the guest is gone.
    pub async fn stop(&self) -> Result<(), RuntimeError> {
        let link = self.link.upgrade().ok_or(RuntimeError::Exited)?;
        let op = GuestOp::Stop {
            target: Some(self.id),
        };
        link.request(op, REQUEST_TIMEOUT).await.map(drop)
    }
}

impl Link {
    /// Open a call and send its request.
    async fn open(&self, op: GuestOp, budget: Budget) -> Result<CallHandle, RuntimeError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let rx = self
            .shared
            .register(id, budget)
            .ok_or(RuntimeError::Exited)?;
        if let Err(e) = self.write_line(&GuestRequest { id, op }).await {
            self.shared.forget(id);
            return Err(e);
        }
        Ok(CallHandle {
            rx,
            id,
            shared: Arc::clone(&self.shared),
        })
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
            if self.shared.is_alive() {
                RuntimeError::Io(e)
            } else {
                RuntimeError::Exited
            }
        })
    }

    /// Send a protocol op and wait up to `timeout` for its result; a
    /// result that is not `status: ok` is an error carrying the guest's message.
    async fn request(&self, op: GuestOp, timeout: Duration) -> Result<ToolOutcome, RuntimeError> {
        let what = op_name(&op);
        let mut handle = self.open(op, Budget::Unbounded).await?;
        let result = async {
            while let Some(reply) = handle.next().await {
                if let GuestReply::Result(outcome) = reply {
                    return Some(outcome);
                }
            }
            None
        };
        match tokio::time::timeout(timeout, result).await {
            Err(_) => {
                self.shared.forget(handle.id);
                Err(RuntimeError::Protocol(format!(
                    "no answer to `{what}` within {} s",
                    timeout.as_secs()
                )))
            }
            Ok(None) => Err(RuntimeError::Exited),
            Ok(Some(outcome)) if outcome.is_ok() => Ok(outcome),
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
        if let Some(heartbeat) = &self.heartbeat {
            heartbeat.abort();
        }
        // Dropping the kill sender makes the process task kill the child;
        // aborting it drops the child, which is `kill_on_drop`.
        self.kill.take();
        if let Some(process) = &self.process {
            process.abort();
        }
        self.link.shared.die("dropped");
    }
}

fn op_name(op: &GuestOp) -> &'static str {
    match op {
        GuestOp::Capabilities { .. } => "capabilities",
        GuestOp::Tool(_) => "tool",
        GuestOp::WebFetch { .. } => "web_fetch",
        GuestOp::Spawn { .. } => "spawn",
        GuestOp::Input { .. } => "input",
        GuestOp::Stop { .. } => "stop",
        GuestOp::Ping => "ping",
        GuestOp::Describe => "describe",
    }
}

/// Ping the agent every `interval` while the connection lives; one ping
/// left unanswered for `timeout` ends the connection (and the process).
async fn heartbeat(link: Arc<Link>, liveness: Liveness) {
    loop {
        tokio::time::sleep(liveness.interval).await;
        if !link.shared.is_alive() {
            return;
        }
        match link.request(GuestOp::Ping, liveness.timeout).await {
            Ok(_) | Err(RuntimeError::Exited) => {}
            Err(e) => {
                link.shared.give_up(&format!(
                    "the agent stopped answering (no answer to a heartbeat within {} s: {e})",
                    liveness.timeout.as_secs()
                ));
                return;
            }
        }
    }
}

/// Read frames until the agent's output ends or breaks the framing.
async fn read_responses<R>(reader: R, shared: Arc<Shared>)
where
    R: AsyncRead + Unpin + Send,
{
    let mut reader = BufReader::new(reader);
    loop {
        let frame = match read_bounded_line(&mut reader, MAX_FRAME_BYTES).await {
            Err(e) => {
                shared.die(&format!("reading from the agent failed: {e}"));
                break;
            }
            Ok(Line::Eof) => {
                shared.die("the agent closed its output");
                break;
            }
            Ok(Line::TooLong(size)) => Err(format!(
                "a {size}-byte frame (the limit is {MAX_FRAME_BYTES})"
            )),
            Ok(Line::Text(bytes)) if bytes.trim_ascii().is_empty() => continue,
            Ok(Line::Text(bytes)) => serde_json::from_slice::<GuestResponse>(&bytes)
                .map_err(|e| format!("a frame that is not a response ({e})")),
        };
        match frame {
            Ok(response) => shared.route(response),
            Err(what) => {
                shared.give_up(&format!("the agent sent {what}"));
                break;
            }
        }
    }
    shared.reader_done.notify_one();
}

/// Own the child: mark the guest dead when it exits; kill it when told to
/// (or when the guest is dropped, or the harness gave up on it).
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
        _ = shared.kill.notified() => {
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

    fn read(path: &str) -> ToolArgs {
        ToolArgs::ReadFile(cortex_protocol::ReadFileArgs {
            path: path.into(),
            offset: None,
            limit: None,
        })
    }

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
        let guest = Guest::connect_with(reader, writer, None, None);
        let (agent_in, mut agent_out) = tokio::io::split(theirs);
        let mut requests = BufReader::new(agent_in).lines();

        let mut first = guest.call(read("a")).await.expect("call");
        let mut second = guest.call(read("b")).await.expect("call");
        for _ in 0..2 {
            let line = requests.next_line().await.expect("read").expect("line");
            let request: GuestRequest = serde_json::from_str(&line).expect("request");
            assert!(matches!(request.op, GuestOp::Tool(ToolArgs::ReadFile(_))));
        }
        // Answer out of order, with a forged answer to a call never sent.
        let answers = format!(
            "{}\n{}\n{}\n{}\n",
            r#"{"id":2,"type":"result","status":"ok","output":"B"}"#,
            r#"{"id":99,"type":"result","status":"ok","output":"forged"}"#,
            r#"{"id":1,"type":"delta","stream":"stdout","text":"partial"}"#,
            r#"{"id":1,"type":"result","status":"error","output":"A failed"}"#,
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
            "{{\"id\":{},\"type\":\"result\",\"status\":\"error\",\"output\":\"nope\"}}\n",
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

    /// The agent's side of a scripted connection: its requests and its
    /// output.
    type Agent = (
        tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    );

    fn scripted(liveness: Option<Liveness>) -> (Guest, Agent) {
        use tokio::io::AsyncBufReadExt;
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(ours);
        let guest = Guest::connect_with(reader, writer, None, liveness);
        let (agent_in, agent_out) = tokio::io::split(theirs);
        (guest, (BufReader::new(agent_in).lines(), agent_out))
    }

    #[tokio::test]
    async fn a_malformed_frame_ends_the_connection_and_says_why() {
        use tokio::io::AsyncWriteExt;
        for garbage in [
            &b"not json\n"[..],
            b"{\"id\":1,\"type\":\"result\",\"status\":\"ok\",\"output\":\"\xff\"}\n",
        ] {
            let (guest, (_requests, mut agent_out)) = scripted(None);
            let mut call = guest.call(read("a")).await.expect("call");
            agent_out.write_all(garbage).await.expect("write");
            assert_eq!(call.next().await, None, "the call ends without a result");
            assert!(!guest.is_alive());
            let why = call.ended_because().expect("a reason");
            assert!(why.contains("not a response"), "{why}");
            assert!(matches!(guest.ping().await, Err(RuntimeError::Exited)));
            guest.close().await;
        }
    }

    #[tokio::test]
    async fn an_agent_that_stops_answering_is_given_up() {
        let liveness = Liveness {
            interval: Duration::from_millis(20),
            timeout: Duration::from_millis(200),
        };
        // The agent reads requests (so writes never block) and answers none.
        let (guest, (mut requests, _agent_out)) = scripted(Some(liveness));
        let mut call = guest.call(read("a")).await.expect("call");
        let drain =
            tokio::spawn(async move { while let Ok(Some(_)) = requests.next_line().await {} });
        assert_eq!(call.next().await, None, "the call ends without a result");
        let why = guest.ended_because().expect("a reason");
        assert!(why.contains("stopped answering"), "{why}");
        guest.close().await;
        drain.abort();
    }
}
