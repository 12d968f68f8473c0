//! Background processes: the commands a session runs with `bash` and
//! `background: true` (a dev server, a watcher), which outlive the call
//! that started them and a stopped turn.
//!
//! [`Background`] owns them: each has an id (`bg1`, `bg2`, … in the
//! session), its command, when it started, its output (the last
//! [`buffer::KEEP_BYTES`], with a read cursor) and, once ended, how. A task
//! per process drains what the guest streams into that buffer, so nothing
//! but the buffer grows however long it runs, and records `process.ended`
//! when it ends. The handle is shared (`Clone`): the API lists and kills
//! processes while a turn holds the session, as it answers approvals.
//!
//! The processes live in the session's guest, under its limits, each in a
//! process group of its own (`GuestOp::Spawn` with `background`): Stop of a
//! turn spares them, `bash_kill` or the user's kill ends one with its group,
//! and the session's close ends them all. A guest that dies takes them with
//! it: they are reported ended (`the guest ended`), never re-attached.

pub(crate) mod buffer;
mod tool;

use crate::{CoreError, Timeline};
use buffer::{OutputBuffer, Read};
use cortex_protocol::{EventKind, GuestReply, ProcessInfo, ToolOutcome, TurnId};
use cortex_runtime::{CallHandle, Guest, RuntimeError, StopHandle};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long a start waits for the first output (or the end) to return it
/// with the handle.
pub(crate) const FIRST_OUTPUT_WAIT: Duration = Duration::from_millis(300);
/// How long a kill waits for the process to be reported ended.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Why a background process could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum BackgroundError {
    /// No process of the session has this id.
    #[error("no background command `{id}`; {known}")]
    Unknown {
        /// The id asked for.
        id: String,
        /// The session's processes, for the model or the user to pick.
        known: String,
    },
    /// The guest refused or failed the request.
    #[error("the guest failed: {0}")]
    Guest(#[from] RuntimeError),
    /// The timeline could not be written.
    #[error(transparent)]
    Core(#[from] Box<CoreError>),
}

/// A session's background processes (see the module docs). Cheap to clone;
/// every clone is the same set.
#[derive(Clone)]
pub struct Background {
    inner: Arc<Inner>,
}

struct Inner {
    timeline: Timeline,
    registry: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    /// The number of the last id given (`bg1` is 1).
    last: u32,
    /// Every process of this session object, in the order started.
    processes: Vec<Arc<Process>>,
}

/// One process: what never changes, and its state behind a lock.
struct Process {
    id: String,
    command: String,
    started: Instant,
    started_at: String,
    stop: StopHandle,
    state: Mutex<State>,
    /// Bumped on every output and at the end, for whoever waits for either.
    changed: watch::Sender<u64>,
}

#[derive(Default)]
struct State {
    output: OutputBuffer,
    end: Option<End>,
    /// Who is killing it, once someone is: how its end is told.
    kill_reason: Option<String>,
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct End {
    pub exit_code: Option<i32>,
    pub reason: String,
    pub ran: Duration,
}

/// What a start or a read returns: the new output and, once ended, how.
pub(crate) struct Snapshot {
    pub id: String,
    pub read: Read,
    pub end: Option<End>,
    pub ran: Duration,
}

impl Process {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn info(&self) -> ProcessInfo {
        let state = self.state();
        let ran = state
            .end
            .as_ref()
            .map_or_else(|| self.started.elapsed(), |end| end.ran);
        ProcessInfo {
            id: self.id.clone(),
            command: self.command.clone(),
            started_at: self.started_at.clone(),
            running_ms: u64::try_from(ran.as_millis()).unwrap_or(u64::MAX),
            running: state.end.is_none(),
            output_bytes: state.output.total(),
            exit_code: state.end.as_ref().and_then(|end| end.exit_code),
            ended: state.end.as_ref().map(|end| end.reason.clone()),
        }
    }

    /// The new output (at most `limit` bytes) and the end, if any.
    fn snapshot(&self, limit: usize) -> Snapshot {
        let mut state = self.state();
        let read = state.output.read_new(limit);
        let end = state.end.clone();
        let ran = end
            .as_ref()
            .map_or_else(|| self.started.elapsed(), |end| end.ran);
        Snapshot {
            id: self.id.clone(),
            read,
            end,
            ran,
        }
    }

    /// Wait until `done` holds of the state, or `wait` has passed.
    async fn wait_for(&self, wait: Duration, done: impl Fn(&State) -> bool) {
        let mut changed = self.changed.subscribe();
        let waiting = async {
            loop {
                if done(&self.state()) {
                    return;
                }
                if changed.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(wait, waiting).await;
    }
}

impl Background {
    /// The processes of the session whose timeline is `timeline`: none yet.
    pub(crate) fn new(timeline: Timeline) -> Background {
        Background {
            inner: Arc::new(Inner {
                timeline,
                registry: Mutex::new(Registry::default()),
            }),
        }
    }

    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.inner
            .registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Every process of the session, running or ended, in the order started.
    pub fn list(&self) -> Vec<ProcessInfo> {
        let processes = self.registry().processes.clone();
        processes.iter().map(|p| p.info()).collect()
    }

    /// Whether the session has started any (then `bash_output` and
    /// `bash_kill` are offered).
    pub(crate) fn any(&self) -> bool {
        !self.registry().processes.is_empty()
    }

    fn find(&self, id: &str) -> Result<Arc<Process>, BackgroundError> {
        let registry = self.registry();
        if let Some(process) = registry.processes.iter().find(|p| p.id == id.trim()) {
            return Ok(Arc::clone(process));
        }
        let known = if registry.processes.is_empty() {
            "none was started in this session".to_owned()
        } else {
            let names: Vec<String> = registry
                .processes
                .iter()
                .map(|p| {
                    let running = p.state().end.is_none();
                    format!("{} ({})", p.id, if running { "running" } else { "ended" })
                })
                .collect();
            format!("the session's are: {}", names.join(", "))
        };
        Err(BackgroundError::Unknown {
            id: id.to_owned(),
            known,
        })
    }

    /// Start `command` in `guest` as the next process, record
    /// `process.started`, and wait up to [`FIRST_OUTPUT_WAIT`] for its first
    /// output or its end; what it printed by then is read.
    pub(crate) async fn start(
        &self,
        guest: &Guest,
        turn: &TurnId,
        command: String,
        limit: usize,
    ) -> Result<Snapshot, BackgroundError> {
        let handle = guest.spawn_background(command.clone()).await?;
        let id = {
            let mut registry = self.registry();
            registry.last += 1;
            format!("bg{}", registry.last)
        };
        let process = Arc::new(Process {
            id: id.clone(),
            command: command.clone(),
            started: Instant::now(),
            started_at: cortex_protocol::now_rfc3339(),
            stop: guest.stop_handle(handle.id()),
            state: Mutex::new(State::default()),
            changed: watch::Sender::new(0),
        });
        // Listed before anything can end it, so its end always finds it.
        self.registry().processes.push(Arc::clone(&process));
        let started = EventKind::ProcessStarted {
            id: id.clone(),
            command,
        };
        if let Err(e) = self.inner.timeline.emit(Some(turn), started).await {
            let _ = process.stop.stop().await;
            return Err(BackgroundError::Core(Box::new(e)));
        }
        let timeline = self.inner.timeline.clone();
        tokio::spawn(drain(Arc::clone(&process), handle, timeline));
        process
            .wait_for(FIRST_OUTPUT_WAIT, |s| {
                s.output.has_unread() || s.end.is_some()
            })
            .await;
        Ok(process.snapshot(limit))
    }

    /// What process `id` printed since the last read (at most `limit`
    /// bytes) and, once it ended, how.
    pub(crate) fn read(&self, id: &str, limit: usize) -> Result<Snapshot, BackgroundError> {
        Ok(self.find(id)?.snapshot(limit))
    }

    /// Kill process `id` with its process group, its end told as `reason`,
    /// and wait (a few seconds at most) until it is reported ended. One
    /// that already ended is left as it is. Returns how it stands then.
    pub(crate) async fn kill(
        &self,
        id: &str,
        reason: &str,
    ) -> Result<ProcessInfo, BackgroundError> {
        let process = self.find(id)?;
        kill_process(&process, reason).await?;
        Ok(process.info())
    }

    /// The user's kill (the API, the TUI's `/ps kill`): [`Background::kill`]
    /// told as `killed by the user`.
    pub async fn kill_by_user(&self, id: &str) -> Result<ProcessInfo, BackgroundError> {
        self.kill(id, "killed by the user").await
    }

    /// Kill every running process, each end told as `reason`, and wait
    /// until they are reported ended (the session closes, or its guest is
    /// about to be closed).
    pub(crate) async fn end_all(&self, reason: &str) {
        let processes = self.registry().processes.clone();
        let running = processes.iter().filter(|p| p.state().end.is_none());
        let kills = running.map(|process| async move {
            if let Err(e) = kill_process(process, reason).await {
                tracing::debug!("background {}: {e}", process.id);
            }
        });
        futures::future::join_all(kills).await;
    }

    /// The running processes for a turn's context: one line each (id, how
    /// long it has run, the command's first line, cut), or `None`.
    pub(crate) fn running_lines(&self) -> Option<String> {
        const COMMAND_CHARS: usize = 120;
        let processes = self.registry().processes.clone();
        let lines: Vec<String> = processes
            .iter()
            .filter(|p| p.state().end.is_none())
            .map(|p| {
                let first = p.command.lines().next().unwrap_or_default();
                let mut command: String = first.chars().take(COMMAND_CHARS).collect();
                if command.len() < p.command.len() {
                    command.push('…');
                }
                format!(
                    "- {}, running {}: {command}",
                    p.id,
                    tool::duration(p.started.elapsed())
                )
            })
            .collect();
        (!lines.is_empty()).then(|| {
            format!(
                "Background commands still running (bash_output reads one, bash_kill ends it; \
                 do not start a second copy):\n{}",
                lines.join("\n")
            )
        })
    }
}

/// Record `process.ended` for every process the stored `events` started
/// and never ended: the process that ran them is gone, and so is its
/// guest (a resumed session starts a new one). Clients' lists then agree.
pub(crate) async fn end_stored(
    timeline: &Timeline,
    events: &[cortex_protocol::Event],
) -> Result<(), CoreError> {
    let mut open: Vec<&str> = Vec::new();
    for event in events {
        match &event.kind {
            EventKind::ProcessStarted { id, .. } => open.push(id),
            EventKind::ProcessEnded { id, .. } => open.retain(|o| o != id),
            _ => {}
        }
    }
    for id in open {
        let ended = EventKind::ProcessEnded {
            id: id.to_owned(),
            exit_code: None,
            reason: "interrupted: the process running the session exited".to_owned(),
        };
        timeline.emit(None, ended).await?;
    }
    Ok(())
}

/// Ask the guest to kill `process`'s group, unless it already ended, and
/// wait up to [`KILL_WAIT`] for its end to be reported.
async fn kill_process(process: &Process, reason: &str) -> Result<(), BackgroundError> {
    {
        let mut state = process.state();
        if state.end.is_some() {
            return Ok(());
        }
        state.kill_reason.get_or_insert_with(|| reason.to_owned());
    }
    match process.stop.stop().await {
        // The guest is gone: so is the process; its end is on its way.
        Ok(()) | Err(RuntimeError::Exited) => {}
        Err(e) => return Err(e.into()),
    }
    process.wait_for(KILL_WAIT, |s| s.end.is_some()).await;
    Ok(())
}

/// Keep what `process` streams until it ends; then record `process.ended`
/// and mark it ended (in that order, so whoever waited for the end finds
/// the event stored).
async fn drain(process: Arc<Process>, mut handle: CallHandle, timeline: Timeline) {
    let outcome = loop {
        match handle.next().await {
            Some(GuestReply::Delta { text, .. }) => {
                process.state().output.push(&text);
                process.changed.send_modify(|n| *n += 1);
            }
            Some(GuestReply::Result(outcome)) => break Some(outcome),
            None => break None,
        }
    };
    let kill_reason = process.state().kill_reason.clone();
    let end = ending(outcome, kill_reason, process.started.elapsed());
    let ended = EventKind::ProcessEnded {
        id: process.id.clone(),
        exit_code: end.exit_code,
        reason: end.reason.clone(),
    };
    if let Err(e) = timeline.emit(None, ended).await {
        tracing::warn!("background {}: its end was not recorded: {e}", process.id);
    }
    process.state().end = Some(end);
    process.changed.send_modify(|n| *n += 1);
}

/// How a process ended, from the guest's result (`None`: the connection
/// ended first) and who killed it, if anyone.
fn ending(outcome: Option<ToolOutcome>, kill_reason: Option<String>, ran: Duration) -> End {
    let (exit_code, reason) = match (outcome, kill_reason) {
        (Some(outcome), Some(killer)) if outcome.is_stopped() => (None, killer),
        (Some(outcome), None) if outcome.is_stopped() => (None, "killed".to_owned()),
        // It ended by itself (before a kill landed, if one was asked for).
        (Some(outcome), _) => {
            let reason = match outcome.exit_code {
                Some(_) => "exited".to_owned(),
                // A signal: the guest's words (`exited: signal: 9 (SIGKILL)`).
                None => outcome.output,
            };
            (outcome.exit_code, reason)
        }
        (None, Some(killer)) => (None, killer),
        (None, None) => (None, "the guest ended".to_owned()),
    };
    End {
        exit_code,
        reason,
        ran,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: cortex_protocol::OutcomeStatus, exit_code: Option<i32>) -> ToolOutcome {
        ToolOutcome {
            status,
            output: "exited: signal: 9 (SIGKILL)".into(),
            diff: None,
            exit_code,
            attachments: Vec::new(),
        }
    }

    #[test]
    fn an_end_says_who_ended_it() {
        use cortex_protocol::OutcomeStatus::{Error, Ok, Stopped};
        let ran = Duration::from_secs(1);
        let end = |o, k: Option<&str>| ending(o, k.map(str::to_owned), ran);
        assert_eq!(end(Some(outcome(Ok, Some(0))), None).reason, "exited");
        assert_eq!(end(Some(outcome(Error, Some(2))), None).exit_code, Some(2));
        // Killed by a signal nobody here sent (the guest's memory watch).
        let signal = end(Some(outcome(Error, None)), None);
        assert_eq!(signal.reason, "exited: signal: 9 (SIGKILL)");
        let killed = end(Some(outcome(Stopped, None)), Some("killed by bash_kill"));
        assert_eq!(
            (killed.reason.as_str(), killed.exit_code),
            ("killed by bash_kill", None)
        );
        // It exited by itself before the kill landed: its own end.
        let raced = end(Some(outcome(Ok, Some(0))), Some("killed by the user"));
        assert_eq!(
            (raced.reason.as_str(), raced.exit_code),
            ("exited", Some(0))
        );
        assert_eq!(end(None, None).reason, "the guest ended");
        assert_eq!(
            end(None, Some("killed: the session closed")).reason,
            "killed: the session closed"
        );
    }
}
