//! The request loop: read requests, answer the quick ones inline, run tools on
//! tasks, write every response through one writer task.

use crate::lines::{Line, read_bounded_line};
use crate::process;
use crate::quota;
use crate::state::{Capabilities, GuestConfig, Responses, State, respond};
use crate::tool::{self, AbortOnDrop};
use cortex_protocol::{GuestOp, GuestRequest, GuestResponse, MAX_ARGUMENT_BYTES, ToolOutcome};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// A request line longer than this is refused unread. A tool's arguments may
/// be up to [`MAX_ARGUMENT_BYTES`]; the envelope and JSON escaping need room.
pub const MAX_REQUEST_BYTES: usize = 2 * MAX_ARGUMENT_BYTES + 64 * 1024;

/// How long running commands get to end after the connection closed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// How long the last responses get to be written after that.
const FLUSH_GRACE: Duration = Duration::from_secs(5);

/// Serve requests from `reader` until it closes; then kill whatever still
/// runs and return.
///
/// Requests are read one line at a time (at most [`MAX_REQUEST_BYTES`]).
/// Protocol operations (capabilities, stop, input, ping, describe) are
/// answered inline, in the order they arrive; tools and spawned processes
/// run on tasks of their own, so their answers may come in any order and
/// each carries its request's id. A malformed line is answered with an
/// `ok: false` result (id 0 when the line's id cannot be read) and serving
/// goes on.
///
/// On end of input (the harness closed the connection), or when writing a
/// response fails, every running command is cancelled; the requests still
/// running get 5 s to finish and report, and the last responses 5 s to be
/// written. `Err` is a read or write failure on the connection (or the
/// final flush timing out); end of input is `Ok`. Dropping the future skips
/// that grace: its tasks are aborted, which kills a `bash` command's process
/// group (`run_bash`'s drop guard) and a spawned process (`kill_on_drop`,
/// its leader only), with no response written.
pub async fn serve<R, W>(reader: R, writer: W, config: GuestConfig) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let writer_failed = CancellationToken::new();
    let writer_task = tokio::spawn(write_responses(writer, rx, writer_failed.clone()));
    let quota = match config.quotas {
        Some(quotas) => {
            let (root, home) = (config.root.clone(), config.home.clone());
            tokio::task::spawn_blocking(move || {
                Some(quota::Guard::new(&root, home.as_deref(), &quotas))
            })
            .await
            .map_err(std::io::Error::other)?
        }
        None => None,
    };
    let state = Arc::new(State::new(config, quota));
    let _watchdog = AbortOnDrop(tokio::spawn(watch_quotas(Arc::clone(&state))));
    let _memory = AbortOnDrop(tokio::spawn(crate::memory::watch(Arc::clone(&state))));
    let mut tasks = JoinSet::new();
    let mut reader = BufReader::new(reader);

    let read_result = loop {
        let line = tokio::select! {
            line = read_bounded_line(&mut reader, MAX_REQUEST_BYTES) => line,
            _ = writer_failed.cancelled() => break Ok(()),
        };
        while tasks.try_join_next().is_some() {}
        match line {
            Err(e) => {
                tracing::warn!("reading requests failed: {e}");
                break Err(e);
            }
            Ok(Line::Eof) => break Ok(()),
            Ok(Line::TooLong(size)) => respond(
                &tx,
                0,
                ToolOutcome::error(format!(
                    "malformed request: the line is {size} bytes; the limit is {MAX_REQUEST_BYTES}"
                )),
            ),
            Ok(Line::Text(bytes)) => {
                if !bytes.trim_ascii().is_empty() {
                    dispatch(&state, &tx, &mut tasks, &bytes);
                }
            }
        }
    };

    // The harness is gone (or we failed): kill what runs, let it report, flush.
    let cancelled = state.running().cancel_all();
    if cancelled > 0 {
        tracing::debug!("connection closed: stopping {cancelled} running command(s)");
    }
    if tokio::time::timeout(SHUTDOWN_GRACE, async {
        while tasks.join_next().await.is_some() {}
    })
    .await
    .is_err()
    {
        tracing::warn!("running requests did not end in time; abandoning them");
        tasks.shutdown().await;
    }
    drop(tx);
    let write_result = match tokio::time::timeout(FLUSH_GRACE, writer_task).await {
        Ok(Ok(result)) => result,
        Ok(Err(join)) => Err(std::io::Error::other(format!(
            "response writer failed: {join}"
        ))),
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the last responses could not be written in time",
        )),
    };
    read_result.and(write_result)
}

/// Measure the quota'd trees while any process but the agent runs in the
/// guest, and kill every such process when one grows past its quota.
async fn watch_quotas(state: Arc<State>) {
    if state.quota.is_none() {
        return;
    }
    let mut interval = quota::MIN_INTERVAL;
    loop {
        tokio::time::sleep(interval).await;
        let watched = Arc::clone(&state);
        let measured = tokio::task::spawn_blocking(move || {
            let guard = watched.quota.as_ref()?;
            if !quota::others_running() {
                return None;
            }
            let (took, verdict) = quota::timed(|| guard.watch());
            Some((took, verdict))
        })
        .await;
        let Ok(Some((took, verdict))) = measured else {
            continue;
        };
        interval = quota::next_interval(took);
        if let (Some(reason), Some(guard)) = (verdict, state.quota.as_ref()) {
            tracing::warn!("{reason}: killing the guest's commands");
            guard.note_killed(reason);
            cortex_sandbox::kill_all_other_processes();
        }
    }
}

/// Handle one request line: answer protocol ops inline (so they are applied
/// in order), start tools on tasks.
fn dispatch(state: &Arc<State>, tx: &Responses, tasks: &mut JoinSet<()>, line: &[u8]) {
    let request: GuestRequest = match serde_json::from_slice(line) {
        Ok(request) => request,
        Err(e) => {
            let id = request_id(line).unwrap_or(0);
            tracing::debug!(id, "malformed request: {e}");
            respond(
                tx,
                id,
                ToolOutcome::error(format!("malformed request: {e}")),
            );
            return;
        }
    };
    let id = request.id;
    match request.op {
        GuestOp::Ping => respond(tx, id, ToolOutcome::ok("pong")),
        GuestOp::Capabilities { writable, bash } => {
            state.set_caps(Capabilities { writable, bash });
            tracing::debug!(writable, bash, "capabilities set");
            respond(
                tx,
                id,
                ToolOutcome::ok(format!("capabilities: writable={writable}, bash={bash}")),
            );
        }
        GuestOp::Describe => {
            let description = serde_json::json!({ "sandbox": state.config.sandbox });
            respond(tx, id, ToolOutcome::ok(description.to_string()));
        }
        GuestOp::Stop { target } => {
            let count = state.running().cancel(target);
            // In a sandbox, Stop also ends what escaped its process group
            // (`setsid`, `nohup … &`): every process but this one, init and
            // the background processes' groups.
            if target.is_none() && state.config.sandbox.is_some() {
                let keep = state.running().background_groups();
                cortex_sandbox::kill_other_processes_sparing(&keep);
            }
            respond(
                tx,
                id,
                ToolOutcome::ok(format!("stop signalled to {count} running command(s)")),
            );
        }
        GuestOp::Spawn {
            command,
            args,
            env,
            background,
            raw,
        } => {
            let spawn = process::Spawn {
                command,
                args,
                env,
                background,
                raw,
            };
            spawn_process(state, tx, tasks, id, spawn)
        }
        GuestOp::Input { target, line } => respond(tx, id, state.inputs.send(target, line)),
        GuestOp::WebFetch { args, allow } => {
            let (seq, token) = state.running().register(id);
            let state = Arc::clone(state);
            let tx = tx.clone();
            tasks.spawn(async move {
                let outcome = tool::web_fetch(&args, &allow, token).await;
                state.finished(seq);
                respond(&tx, id, outcome);
            });
        }
        GuestOp::Tool(args) => {
            if let Err(refusal) = tool::admit(state.caps(), &args) {
                respond(tx, id, ToolOutcome::error(refusal.to_string()));
                return;
            }
            // Registered before the task starts, so a `stop` on the next line
            // already reaches this command.
            let command = tool::needs_token(&args).then(|| state.running().register(id));
            let state = Arc::clone(state);
            let tx = tx.clone();
            tasks.spawn(async move {
                let outcome =
                    tool::run_supervised(Arc::clone(&state), id, args, command, tx.clone()).await;
                respond(&tx, id, outcome);
            });
        }
    }
}

/// Start a long-lived process on a task; it is a command like `bash`'s
/// (refused without the `bash` capability, reached by `stop`; a background
/// one only by a `stop` that targets it, or the connection's end).
fn spawn_process(
    state: &Arc<State>,
    tx: &Responses,
    tasks: &mut JoinSet<()>,
    id: u64,
    spawn: process::Spawn,
) {
    if !state.caps().bash {
        respond(
            tx,
            id,
            ToolOutcome::error("this guest may not run commands: spawn refused"),
        );
        return;
    }
    let (seq, token) = state.running().register_as(id, spawn.background);
    // A background process reads nothing: no input to register.
    let input = (!spawn.background).then(|| state.inputs.open(id));
    let state = Arc::clone(state);
    let tx = tx.clone();
    tasks.spawn(async move {
        let run = process::run(
            Arc::clone(&state),
            (id, seq),
            spawn,
            input,
            token,
            tx.clone(),
        );
        let outcome = run.await;
        state.finished(seq);
        respond(&tx, id, outcome);
    });
}

/// The `id` of a request that did not parse, when it has a readable one.
fn request_id(line: &[u8]) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_slice(line).ok()?;
    value.get("id")?.as_u64()
}

/// The one place responses are written, so lines never interleave.
async fn write_responses<W>(
    writer: W,
    mut rx: mpsc::UnboundedReceiver<GuestResponse>,
    failed: CancellationToken,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut writer = BufWriter::new(writer);
    let result = async {
        while let Some(response) = rx.recv().await {
            let mut line = serde_json::to_vec(&response).map_err(std::io::Error::other)?;
            line.push(b'\n');
            writer.write_all(&line).await?;
            // Batch what is already queued, then flush.
            if rx.is_empty() {
                writer.flush().await?;
            }
        }
        writer.flush().await?;
        writer.shutdown().await
    }
    .await;
    if let Err(e) = &result {
        tracing::warn!("writing responses failed: {e}");
        failed.cancel();
    }
    result
}
