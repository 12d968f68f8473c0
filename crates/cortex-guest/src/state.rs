//! What every request of one connection shares: the agent's configuration,
//! its capabilities, the running commands that `stop` reaches, the inputs of
//! spawned processes, and where responses go. The request loop (`serve`),
//! the tools (`tool`) and spawned processes (`process`) all use it.

use cortex_protocol::{GuestReply, GuestResponse, ToolOutcome};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What one agent serves, fixed for its life (capabilities are not here:
/// they start read-only and change only by request).
#[derive(Debug, Clone)]
pub struct GuestConfig {
    /// The workspace root.
    pub root: PathBuf,
    /// Exactly the environment `bash` commands get.
    pub bash_env: Vec<(String, String)>,
    /// What the local sandbox enforced, when the agent runs in one.
    pub sandbox: Option<cortex_sandbox::Report>,
    /// Disk quotas the agent enforces on the workspace and [`home`](Self::home)
    /// (see the `quota` module); `None`: none (no sandbox).
    pub quotas: Option<cortex_sandbox::Quotas>,
    /// The guest's home, measured against its quota.
    pub home: Option<PathBuf>,
    /// The memory limit the agent watches for the whole guest, in bytes,
    /// when no cgroup enforces it (see the `memory` module); `None`: a
    /// cgroup does, or there is no sandbox.
    pub memory_watch: Option<u64>,
}

/// Where responses go; every task holds a clone.
pub(crate) type Responses = mpsc::UnboundedSender<GuestResponse>;

pub(crate) fn respond(tx: &Responses, id: u64, outcome: ToolOutcome) {
    // The receiver only goes away when the writer failed; serve is ending then.
    let _ = tx.send(GuestResponse {
        id,
        reply: GuestReply::Result(outcome),
    });
}

/// The cancellation tokens of running commands, keyed by a private sequence
/// number (request ids are the harness's and might repeat).
#[derive(Default)]
pub(crate) struct Running {
    next: u64,
    commands: HashMap<u64, Command>,
}

/// One running command: the request that started it, its token, and
/// whether it is a background process (which `stop` without a target
/// spares), with its process group once known.
struct Command {
    id: u64,
    token: CancellationToken,
    background: bool,
    group: Option<i32>,
}

impl Running {
    pub(crate) fn register(&mut self, id: u64) -> (u64, CancellationToken) {
        self.register_as(id, false)
    }

    /// [`Running::register`] for a command that is a background process
    /// when `background` is set.
    pub(crate) fn register_as(&mut self, id: u64, background: bool) -> (u64, CancellationToken) {
        self.next += 1;
        let token = CancellationToken::new();
        let command = Command {
            id,
            token: token.clone(),
            background,
            group: None,
        };
        self.commands.insert(self.next, command);
        (self.next, token)
    }

    /// The process group of command `seq`, once it has started.
    pub(crate) fn set_group(&mut self, seq: u64, group: i32) {
        if let Some(command) = self.commands.get_mut(&seq) {
            command.group = Some(group);
        }
    }

    /// Cancel every command but the background processes (or only request
    /// `target`'s, background or not); how many.
    pub(crate) fn cancel(&mut self, target: Option<u64>) -> usize {
        self.cancel_where(|command| match target {
            Some(target) => command.id == target,
            None => !command.background,
        })
    }

    /// Cancel every command, background processes included (the
    /// connection ended); how many.
    pub(crate) fn cancel_all(&mut self) -> usize {
        self.cancel_where(|_| true)
    }

    fn cancel_where(&mut self, pick: impl Fn(&Command) -> bool) -> usize {
        let mut count = 0;
        for command in self.commands.values().filter(|c| pick(c)) {
            command.token.cancel();
            count += 1;
        }
        count
    }

    /// The process groups of the background processes that have started:
    /// what a `stop` without a target spares.
    pub(crate) fn background_groups(&self) -> Vec<i32> {
        self.commands
            .values()
            .filter(|c| c.background)
            .filter_map(|c| c.group)
            .collect()
    }
}

pub(crate) struct State {
    pub(crate) config: GuestConfig,
    caps: Mutex<Capabilities>,
    running: Mutex<Running>,
    pub(crate) inputs: Inputs,
    /// The disk quotas, when the agent enforces them.
    pub(crate) quota: Option<crate::quota::Guard>,
}

impl State {
    /// A connection's state at its start: read-only, nothing running.
    pub(crate) fn new(config: GuestConfig, quota: Option<crate::quota::Guard>) -> State {
        State {
            config,
            caps: Mutex::new(Capabilities::default()),
            running: Mutex::new(Running::default()),
            inputs: Inputs::default(),
            quota,
        }
    }

    pub(crate) fn caps(&self) -> Capabilities {
        *self.caps.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn set_caps(&self, caps: Capabilities) {
        *self.caps.lock().unwrap_or_else(PoisonError::into_inner) = caps;
    }

    pub(crate) fn running(&self) -> std::sync::MutexGuard<'_, Running> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A command ended: forget its token.
    pub(crate) fn finished(&self, seq: u64) {
        self.running().commands.remove(&seq);
    }
}

/// What this guest may do. The default is the safe one: read-only, no bash.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Capabilities {
    pub(crate) writable: bool,
    pub(crate) bash: bool,
}

/// The stdin of each running process, by the id of the request that
/// spawned it.
#[derive(Default)]
pub(crate) struct Inputs(Mutex<HashMap<u64, mpsc::UnboundedSender<String>>>);

impl Inputs {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u64, mpsc::UnboundedSender<String>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The input of request `id`'s process, registered before it starts so
    /// that no line sent right after the `spawn` request is refused.
    pub(crate) fn open(&self, id: u64) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.map().insert(id, tx);
        rx
    }

    /// Queue `line` for the process request `target` spawned.
    pub(crate) fn send(&self, target: u64, line: String) -> ToolOutcome {
        match self.map().get(&target).map(|tx| tx.send(line)) {
            Some(Ok(())) => ToolOutcome::ok(""),
            Some(Err(_)) => ToolOutcome::error(format!(
                "the process of request {target} no longer reads its input"
            )),
            None => ToolOutcome::error(format!("no process was spawned by request {target}")),
        }
    }

    /// Request `id`'s process has ended: its input goes.
    pub(crate) fn close(&self, id: u64) {
        self.map().remove(&id);
    }
}
