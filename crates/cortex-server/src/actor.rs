//! The session actor: one task per live session owns its
//! [`cortex_core::Session`], so requests never contend for it.
//!
//! A turn runs on its own task (the session moves there and comes back when
//! the turn ends); meanwhile the actor keeps answering: a second turn is a
//! conflict, Stop cancels the running one, Close waits for it to end. Events
//! never pass through here: subscribers read the session's timeline directly.

use crate::error::ApiError;
use cortex_core::{CoreError, Published, Session, Timeline, TurnOutcome};
use cortex_protocol::{Mode, SessionId, TurnId};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Requests waiting for one actor. Small: a client that floods a session
/// waits for room instead of growing memory.
const MAILBOX: usize = 32;

enum Command {
    StartTurn {
        message: String,
        reply: oneshot::Sender<Result<TurnId, ApiError>>,
    },
    Stop {
        reply: oneshot::Sender<Result<TurnId, ApiError>>,
    },
    SetMode {
        mode: Mode,
        reply: oneshot::Sender<Result<(), ApiError>>,
    },
    Close {
        reply: oneshot::Sender<()>,
    },
}

/// How to reach a live session.
pub(crate) struct ActorHandle {
    id: SessionId,
    /// The principal the session belongs to (set once, never changes).
    owner: String,
    tx: mpsc::Sender<Command>,
    timeline: Timeline,
    running: Arc<Mutex<Option<TurnId>>>,
}

type TurnTask = JoinHandle<(Session, Result<TurnOutcome, CoreError>)>;

struct Running {
    turn: TurnId,
    cancel: CancellationToken,
    task: TurnTask,
}

impl ActorHandle {
    /// Start the actor. `on_exit` runs when it ends (closed, or its session
    /// was lost to a panic), so the registry can forget it; the next request
    /// then reopens the session from the store.
    pub(crate) fn spawn(
        session: Session,
        owner: String,
        on_exit: impl FnOnce() + Send + 'static,
    ) -> Arc<ActorHandle> {
        let (tx, rx) = mpsc::channel(MAILBOX);
        let running = Arc::new(Mutex::new(None));
        let handle = Arc::new(ActorHandle {
            id: session.id().clone(),
            owner,
            tx,
            timeline: session.timeline().clone(),
            running: running.clone(),
        });
        tokio::spawn(async move {
            run(session, rx, running).await;
            on_exit();
        });
        handle
    }

    pub(crate) fn owner(&self) -> &str {
        &self.owner
    }

    /// Live events from now on; each is already persisted.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Published>> {
        self.timeline.subscribe()
    }

    pub(crate) fn running_turn(&self) -> Option<TurnId> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) async fn start_turn(&self, message: String) -> Result<TurnId, ApiError> {
        self.ask(|reply| Command::StartTurn { message, reply })
            .await?
    }

    pub(crate) async fn stop(&self) -> Result<TurnId, ApiError> {
        self.ask(|reply| Command::Stop { reply }).await?
    }

    pub(crate) async fn set_mode(&self, mode: Mode) -> Result<(), ApiError> {
        self.ask(|reply| Command::SetMode { mode, reply }).await?
    }

    /// Stop any turn, close the guest, end the actor.
    pub(crate) async fn close(&self) -> Result<(), ApiError> {
        self.ask(|reply| Command::Close { reply }).await
    }

    async fn ask<T>(
        &self,
        command: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, ApiError> {
        let gone = || {
            ApiError::conflict(format!(
                "session `{}` was closed while this request waited; retry it",
                self.id
            ))
        };
        let (reply, answer) = oneshot::channel();
        self.tx.send(command(reply)).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())
    }
}

async fn run(session: Session, mut rx: mpsc::Receiver<Command>, shown: Arc<Mutex<Option<TurnId>>>) {
    let id = session.id().clone();
    let mut idle = Some(session);
    let mut running: Option<Running> = None;
    let set_shown = |turn: Option<TurnId>| {
        *shown.lock().unwrap_or_else(PoisonError::into_inner) = turn;
    };
    loop {
        tokio::select! {
            command = rx.recv() => {
                let Some(command) = command else { break };
                match command {
                    Command::StartTurn { message, reply } => {
                        if let Some(r) = &running {
                            let _ = reply.send(Err(ApiError::conflict(format!(
                                "turn `{}` is still running in this session; wait for its \
                                 turn.* end event or POST …/stop first",
                                r.turn
                            ))));
                            continue;
                        }
                        let Some(mut session) = idle.take() else { break };
                        let turn = Session::new_turn_id();
                        let cancel = CancellationToken::new();
                        let task = {
                            let (turn, cancel) = (turn.clone(), cancel.clone());
                            tokio::spawn(async move {
                                let outcome = session.run_turn_as(turn, &message, cancel).await;
                                (session, outcome)
                            })
                        };
                        set_shown(Some(turn.clone()));
                        running = Some(Running { turn: turn.clone(), cancel, task });
                        let _ = reply.send(Ok(turn));
                    }
                    Command::Stop { reply } => {
                        let answer = match &running {
                            Some(r) => {
                                r.cancel.cancel();
                                Ok(r.turn.clone())
                            }
                            None => Err(ApiError::conflict("no turn is running in this session")),
                        };
                        let _ = reply.send(answer);
                    }
                    Command::SetMode { mode, reply } => {
                        let answer = match (&running, idle.as_mut()) {
                            (None, Some(session)) => {
                                session.set_mode(mode).await.map_err(ApiError::from)
                            }
                            _ => Err(ApiError::conflict(
                                "a turn is running; the mode can change between turns \
                                 (POST …/stop first)",
                            )),
                        };
                        let _ = reply.send(answer);
                    }
                    Command::Close { reply } => {
                        if let Some(r) = running.take() {
                            r.cancel.cancel();
                            idle = finish(&id, r.task.await);
                        }
                        if let Some(session) = idle.as_mut() {
                            session.close().await;
                        }
                        set_shown(None);
                        let _ = reply.send(());
                        return;
                    }
                }
            }
            joined = async {
                match running.as_mut() {
                    Some(r) => (&mut r.task).await,
                    None => std::future::pending().await,
                }
            } => {
                running = None;
                set_shown(None);
                idle = finish(&id, joined);
                if idle.is_none() {
                    break;
                }
            }
        }
    }
    if let Some(mut session) = idle {
        session.close().await;
    }
}

/// The session back from a finished turn task, or `None` when the task
/// panicked (the session is lost; reopening it from the store marks the turn
/// failed).
fn finish(
    id: &SessionId,
    joined: Result<(Session, Result<TurnOutcome, CoreError>), tokio::task::JoinError>,
) -> Option<Session> {
    match joined {
        Ok((session, Ok(outcome))) => {
            tracing::debug!(session = %id, ?outcome, "turn ended");
            Some(session)
        }
        Ok((session, Err(e))) => {
            tracing::error!(session = %id, "turn could not write its timeline: {e}");
            Some(session)
        }
        Err(e) => {
            tracing::error!(session = %id, "turn task failed: {e}");
            None
        }
    }
}
