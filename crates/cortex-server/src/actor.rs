//! The session actor: one task per live session owns its
//! [`cortex_core::Session`], so requests never contend for it.
//!
//! A turn runs on its own task (the session moves there and comes back when
//! the turn ends); meanwhile the actor keeps answering: a second turn is a
//! conflict, Stop cancels the running one, Close waits for it to end. An
//! explicit compaction runs the same way (it calls the summariser, which
//! may take a while) and answers its request when it ends; a turn or a
//! compaction asked for while either runs is a conflict. When a turn ends
//! with the session's goal active, the next (continuation) turn starts at
//! once (`goal_driver`). Events never pass through here: subscribers read
//! the session's timeline directly.

use crate::error::ApiError;
use crate::goal_driver::{self, GoalOp, GoalOpDone, NextTurn};
use axum::http::StatusCode;
use cortex_core::{
    Approvals, CompactError, CompactionReport, CoreError, ImageError, PlanError, Published,
    Session, SpecError, Timeline, TurnOutcome, UserTurn,
};
use cortex_protocol::{Goal, Mode, SessionId, TurnId};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Requests waiting for one actor. Small: a client that floods a session
/// waits for room instead of growing memory.
const MAILBOX: usize = 32;

enum Command {
    StartTurn {
        input: UserTurn,
        reply: oneshot::Sender<Result<TurnId, ApiError>>,
    },
    Stop {
        reply: oneshot::Sender<Result<TurnId, ApiError>>,
    },
    /// The user's verdict on the proposed plan or spec phase; either
    /// starts a turn.
    Verdict {
        on: Proposal,
        verdict: PlanVerdict,
        reply: oneshot::Sender<Result<TurnId, ApiError>>,
    },
    SetMode {
        mode: Mode,
        reply: oneshot::Sender<Result<(), ApiError>>,
    },
    Compact {
        reply: oneshot::Sender<Result<CompactionReport, ApiError>>,
    },
    /// Back to before a turn (between turns only).
    Rewind {
        body: cortex_api::Rewind,
        reply: oneshot::Sender<Result<cortex_core::Rewound, ApiError>>,
    },
    /// A goal control (`goal_driver`).
    Goal {
        op: GoalOp,
        reply: oneshot::Sender<Result<GoalOpDone, ApiError>>,
    },
    Close {
        reply: oneshot::Sender<()>,
    },
    /// MCP servers a client hands over to the live session.
    AddMcp {
        specs: Vec<cortex_core::McpServerSpec>,
        reply: oneshot::Sender<Result<Vec<String>, ApiError>>,
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
    /// The session's goal as it changes, turns running or not.
    goal: watch::Receiver<Option<Goal>>,
    /// The session's approval state, answered without the session.
    approvals: Approvals,
    /// The session's background commands, listed and killed without it.
    background: cortex_core::Background,
    /// Where its custom commands are looked for (they are read without it).
    extension_roots: cortex_core::extensions::Roots,
}

/// A job that has the session: it comes back with it and how the job ended.
type JobTask = JoinHandle<(Session, JobEnd)>;

struct JobEnd {
    /// `Err`: the timeline could not be written.
    written: Result<(), CoreError>,
    /// How a turn ended (for the goal's continuation).
    outcome: Option<TurnOutcome>,
    /// A compaction's answer, sent once the session is back, so a client
    /// that gets it can start a turn at once.
    compacted: Option<Result<CompactionReport, ApiError>>,
}

type CompactReply = oneshot::Sender<Result<CompactionReport, ApiError>>;

/// What holds the session now.
enum Job {
    Turn(TurnId),
    Compaction(CompactReply),
}

struct Running {
    job: Job,
    cancel: CancellationToken,
    task: JobTask,
}

/// What a verdict is about.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Proposal {
    Plan,
    Spec,
}

/// What the user said of the proposed plan or spec phase.
pub(crate) enum PlanVerdict {
    Accept,
    Reject { feedback: String },
}

/// Run a turn for `message` on its own task; the session comes back with it.
fn spawn_turn(session: Session, input: UserTurn) -> (TurnId, Running) {
    spawn_next(session, NextTurn::Message(input))
}

/// Run `next` on its own task; the session comes back with it.
fn spawn_next(mut session: Session, next: NextTurn) -> (TurnId, Running) {
    let turn = Session::new_turn_id();
    let cancel = CancellationToken::new();
    let task = {
        let (turn, cancel) = (turn.clone(), cancel.clone());
        tokio::spawn(async move {
            let outcome = match next {
                NextTurn::Message(input) => session.run_user_turn_as(turn, input, cancel).await,
                NextTurn::Continuation => session.run_continuation_as(turn, cancel).await,
            };
            let id = session.id().clone();
            let (written, outcome) = match outcome {
                Ok(outcome) => {
                    tracing::debug!(session = %id, ?outcome, "turn ended");
                    (Ok(()), Some(outcome))
                }
                Err(e) => (Err(e), None),
            };
            (
                session,
                JobEnd {
                    written,
                    outcome,
                    compacted: None,
                },
            )
        })
    };
    let running = Running {
        job: Job::Turn(turn.clone()),
        cancel,
        task,
    };
    (turn, running)
}

/// Record the verdict; the message of the turn that follows.
async fn record_verdict(
    session: &mut Session,
    on: Proposal,
    verdict: PlanVerdict,
) -> Result<String, ApiError> {
    let none =
        |code: &'static str, message: String| ApiError::new(StatusCode::CONFLICT, code, message);
    let empty =
        |message: String| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body", message);
    match on {
        Proposal::Plan => match verdict {
            PlanVerdict::Accept => session.accept_plan().await,
            PlanVerdict::Reject { feedback } => session.reject_plan(&feedback).await,
        }
        .map_err(|e| match e {
            PlanError::NoProposedPlan => none("no_proposed_plan", e.to_string()),
            PlanError::EmptyFeedback => empty(e.to_string()),
            PlanError::Core(e) => e.into(),
        }),
        Proposal::Spec => match verdict {
            PlanVerdict::Accept => session.accept_spec().await,
            PlanVerdict::Reject { feedback } => session.reject_spec(&feedback).await,
        }
        .map_err(|e| match e {
            SpecError::NoProposedSpec => none("no_proposed_spec", e.to_string()),
            SpecError::EmptyFeedback => empty(e.to_string()),
            SpecError::Core(e) => e.into(),
        }),
    }
}

impl Running {
    fn busy(&self) -> ApiError {
        match &self.job {
            Job::Turn(turn) => ApiError::conflict(format!(
                "turn `{turn}` is still running in this session; wait for its \
                 turn.* end event or POST …/stop first"
            )),
            Job::Compaction(_) => {
                ApiError::conflict("a compaction is running in this session; wait for it to end")
            }
        }
    }
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
            goal: session.watch_goal(),
            approvals: session.approvals().clone(),
            background: session.background().clone(),
            extension_roots: session.extension_roots(),
        });
        tokio::spawn(async move {
            run(session, rx, running).await;
            on_exit();
        });
        handle
    }

    /// Where the session's custom commands are looked for.
    pub(crate) fn extension_roots(&self) -> &cortex_core::extensions::Roots {
        &self.extension_roots
    }

    pub(crate) fn owner(&self) -> &str {
        &self.owner
    }

    /// The approval policy and the calls waiting for an answer.
    pub(crate) fn approvals(&self) -> &Approvals {
        &self.approvals
    }

    /// The session's background commands.
    pub(crate) fn background(&self) -> &cortex_core::Background {
        &self.background
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

    /// Start a turn of `input` (its message, images and a command's
    /// includes): a 422 before the turn starts when the model takes no
    /// images or one is not an image within the limits.
    pub(crate) async fn start_user_turn(&self, input: UserTurn) -> Result<TurnId, ApiError> {
        self.ask(|reply| Command::StartTurn { input, reply })
            .await?
    }

    /// Accept or reject the proposed plan or spec phase; the id of the
    /// turn it starts.
    pub(crate) async fn verdict(
        &self,
        on: Proposal,
        verdict: PlanVerdict,
    ) -> Result<TurnId, ApiError> {
        self.ask(|reply| Command::Verdict { on, verdict, reply })
            .await?
    }

    pub(crate) async fn stop(&self) -> Result<TurnId, ApiError> {
        self.ask(|reply| Command::Stop { reply }).await?
    }

    /// The session's goal now.
    pub(crate) fn goal(&self) -> Option<Goal> {
        self.goal.borrow().clone()
    }

    /// Carry out a goal control (see `goal_driver`).
    pub(crate) async fn goal_op(&self, op: GoalOp) -> Result<GoalOpDone, ApiError> {
        self.ask(|reply| Command::Goal { op, reply }).await?
    }

    pub(crate) async fn set_mode(&self, mode: Mode) -> Result<(), ApiError> {
        self.ask(|reply| Command::SetMode { mode, reply }).await?
    }

    /// Add MCP servers between turns; they start with the next turn. The
    /// names added.
    pub(crate) async fn add_mcp(
        &self,
        specs: Vec<cortex_core::McpServerSpec>,
    ) -> Result<Vec<String>, ApiError> {
        self.ask(|reply| Command::AddMcp { specs, reply }).await?
    }

    /// Compact the history now; answers when the compaction has ended.
    pub(crate) async fn compact(&self) -> Result<CompactionReport, ApiError> {
        self.ask(|reply| Command::Compact { reply }).await?
    }

    /// Rewind the session between turns; answers when it is done.
    pub(crate) async fn rewind(
        &self,
        body: cortex_api::Rewind,
    ) -> Result<cortex_core::Rewound, ApiError> {
        self.ask(|reply| Command::Rewind { body, reply }).await?
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
    let mut actor = Actor {
        id: session.id().clone(),
        idle: Some(session),
        running: None,
        waiting: Vec::new(),
        shown,
    };
    loop {
        let flow = tokio::select! {
            command = rx.recv() => match command {
                Some(command) => actor.handle(command).await,
                None => Flow::Lost,
            },
            joined = actor.job_end() => actor.job_ended(joined).await,
        };
        match flow {
            Flow::Go => {}
            Flow::Lost => break,
            Flow::Closed => return,
        }
    }
    if let Some(mut session) = actor.idle {
        session.close().await;
    }
}

/// What the actor loop does after a command or a job's end.
enum Flow {
    /// Wait for the next command or job end.
    Go,
    /// The mailbox closed or the session is gone: close what is left.
    Lost,
    /// Closed on request; nothing is left.
    Closed,
}

/// The actor's state: the session when idle, or the job holding it.
struct Actor {
    id: SessionId,
    idle: Option<Session>,
    running: Option<Running>,
    /// Goal controls that arrived while a turn ran, applied when it ends.
    waiting: Vec<GoalOp>,
    shown: Arc<Mutex<Option<TurnId>>>,
}

impl Actor {
    fn set_shown(&self, turn: Option<TurnId>) {
        *self.shown.lock().unwrap_or_else(PoisonError::into_inner) = turn;
    }

    /// The running job's end (never, while idle).
    async fn job_end(&mut self) -> Result<(Session, JobEnd), tokio::task::JoinError> {
        match self.running.as_mut() {
            Some(r) => (&mut r.task).await,
            None => std::future::pending().await,
        }
    }

    /// Run `r`, the job that now holds the session, shown as `turn`.
    fn start(&mut self, turn: Option<TurnId>, r: Running) {
        self.set_shown(turn);
        self.running = Some(r);
    }

    async fn handle(&mut self, command: Command) -> Flow {
        match command {
            Command::StartTurn { input, reply } => self.start_turn(input, reply),
            Command::Verdict { on, verdict, reply } => self.verdict(on, verdict, reply).await,
            Command::Compact { reply } => self.compact(reply),
            Command::Goal { op, reply } => self.goal(op, reply).await,
            Command::Stop { reply } => {
                let answer = match &self.running {
                    Some(Running {
                        job: Job::Turn(turn),
                        cancel,
                        ..
                    }) => {
                        cancel.cancel();
                        Ok(turn.clone())
                    }
                    _ => Err(ApiError::conflict("no turn is running in this session")),
                };
                let _ = reply.send(answer);
                Flow::Go
            }
            Command::AddMcp { specs, reply } => {
                let answer = match (&self.running, self.idle.as_mut()) {
                    (None, Some(session)) => Ok(session.add_mcp_servers(specs)),
                    _ => Err(ApiError::conflict(
                        "a turn or a compaction is running; MCP servers can be added between \
                         turns",
                    )),
                };
                let _ = reply.send(answer);
                Flow::Go
            }
            Command::Rewind { body, reply } => {
                let answer = match (&self.running, self.idle.as_mut()) {
                    (None, Some(session)) if body.dry_run => session
                        .preview_rewind(body.turn_id.as_deref(), body.scope)
                        .await
                        .map_err(ApiError::from),
                    (None, Some(session)) => session
                        .rewind(body.turn_id.as_deref(), body.scope, body.force)
                        .await
                        .map_err(ApiError::from),
                    _ => Err(ApiError::conflict(
                        "a turn or a compaction is running; a session rewinds between turns \
                         (POST …/stop first)",
                    )),
                };
                let _ = reply.send(answer);
                Flow::Go
            }
            Command::SetMode { mode, reply } => {
                let answer = match (&self.running, self.idle.as_mut()) {
                    (None, Some(session)) => session.set_mode(mode).await.map_err(ApiError::from),
                    (
                        Some(Running {
                            job: Job::Compaction(_),
                            ..
                        }),
                        _,
                    ) => Err(ApiError::conflict(
                        "a compaction is running; wait for it to end",
                    )),
                    _ => Err(ApiError::conflict(
                        "a turn is running; the mode can change between turns \
                         (POST …/stop first)",
                    )),
                };
                let _ = reply.send(answer);
                Flow::Go
            }
            Command::Close { reply } => {
                if let Some(mut r) = self.running.take() {
                    r.cancel.cancel();
                    let joined = (&mut r.task).await;
                    self.idle = finish(&self.id, r.job, joined).0;
                }
                if let Some(session) = self.idle.as_mut() {
                    session.close().await;
                }
                self.set_shown(None);
                let _ = reply.send(());
                Flow::Closed
            }
        }
    }

    fn start_turn(
        &mut self,
        input: UserTurn,
        reply: oneshot::Sender<Result<TurnId, ApiError>>,
    ) -> Flow {
        if let Some(r) = &self.running {
            let _ = reply.send(Err(r.busy()));
            return Flow::Go;
        }
        let Some(session) = self.idle.take() else {
            return Flow::Lost;
        };
        if let Err(e) = session.check_images(&input.images) {
            self.idle = Some(session);
            let code = match e {
                ImageError::ModelTakesNone { .. } => "model_takes_no_images",
                _ => "invalid_image",
            };
            let refused = ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, e.to_string());
            let _ = reply.send(Err(refused));
            return Flow::Go;
        }
        let (turn, r) = spawn_turn(session, input);
        self.start(Some(turn.clone()), r);
        let _ = reply.send(Ok(turn));
        Flow::Go
    }

    async fn verdict(
        &mut self,
        on: Proposal,
        verdict: PlanVerdict,
        reply: oneshot::Sender<Result<TurnId, ApiError>>,
    ) -> Flow {
        if let Some(r) = &self.running {
            let _ = reply.send(Err(r.busy()));
            return Flow::Go;
        }
        let Some(mut session) = self.idle.take() else {
            return Flow::Lost;
        };
        match record_verdict(&mut session, on, verdict).await {
            Ok(message) => {
                let (turn, r) = spawn_turn(session, UserTurn::text(message));
                self.start(Some(turn.clone()), r);
                let _ = reply.send(Ok(turn));
            }
            Err(e) => {
                self.idle = Some(session);
                let _ = reply.send(Err(e));
            }
        }
        Flow::Go
    }

    fn compact(&mut self, reply: CompactReply) -> Flow {
        if let Some(r) = &self.running {
            let _ = reply.send(Err(r.busy()));
            return Flow::Go;
        }
        let Some(mut session) = self.idle.take() else {
            return Flow::Lost;
        };
        let cancel = CancellationToken::new();
        let task = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                let (answer, written) = match session.compact(cancel).await {
                    Ok(report) => (Ok(report), Ok(())),
                    Err(CompactError::Core(e)) => (
                        Err(ApiError::internal(format!(
                            "the timeline could not be written: {e}"
                        ))),
                        Err(e),
                    ),
                    Err(e) => (Err(compact_error(e)), Ok(())),
                };
                let end = JobEnd {
                    written,
                    outcome: None,
                    compacted: Some(answer),
                };
                (session, end)
            })
        };
        self.running = Some(Running {
            job: Job::Compaction(reply),
            cancel,
            task,
        });
        Flow::Go
    }

    async fn goal(
        &mut self,
        op: GoalOp,
        reply: oneshot::Sender<Result<GoalOpDone, ApiError>>,
    ) -> Flow {
        let answer = match (self.running.as_ref().map(|r| &r.job), self.idle.take()) {
            (Some(Job::Turn(_)), _) => goal_driver::may_wait(&op).map(|()| {
                self.waiting.push(op);
                GoalOpDone::Deferred
            }),
            (Some(Job::Compaction(_)), _) => Err(ApiError::conflict(
                "a compaction is running; wait for it to end",
            )),
            (None, None) => return Flow::Lost,
            (None, Some(mut session)) => match goal_driver::apply(&mut session, op).await {
                Ok(Some(next)) => {
                    let (turn, r) = spawn_next(session, next);
                    self.start(Some(turn.clone()), r);
                    Ok(GoalOpDone::Started(turn))
                }
                done => {
                    self.idle = Some(session);
                    done.map(|_| GoalOpDone::Done)
                }
            },
        };
        let _ = reply.send(answer);
        Flow::Go
    }

    /// A job ended: the session is back (a compaction's request answered),
    /// and after a turn the goal may start the next one at once.
    async fn job_ended(
        &mut self,
        joined: Result<(Session, JobEnd), tokio::task::JoinError>,
    ) -> Flow {
        let Some(r) = self.running.take() else {
            return Flow::Lost;
        };
        self.set_shown(None);
        let (session, outcome) = finish(&self.id, r.job, joined);
        let Some(mut session) = session else {
            return Flow::Lost;
        };
        let waited = std::mem::take(&mut self.waiting);
        let next = match outcome {
            Some(outcome) => goal_driver::after_turn(&mut session, &outcome, waited).await,
            None => None,
        };
        match next {
            Some(next) => {
                let (turn, r) = spawn_next(session, next);
                self.start(Some(turn), r);
            }
            None => self.idle = Some(session),
        }
        Flow::Go
    }
}

/// A compaction that did not happen, as the client sees it. The history is
/// unchanged either way.
fn compact_error(e: CompactError) -> ApiError {
    match e {
        CompactError::NothingToCompact => {
            ApiError::new(StatusCode::CONFLICT, "nothing_to_compact", e.to_string())
        }
        // The summariser is upstream of the server: its failure is a 502.
        CompactError::Failed(_) => {
            ApiError::new(StatusCode::BAD_GATEWAY, "compaction_failed", e.to_string())
        }
        CompactError::Core(e) => e.into(),
    }
}

/// The session back from a finished job's task (a compaction's request is
/// answered now), or `None` when the task panicked (the session is lost;
/// reopening it from the store marks a turn failed); and how a turn ended.
fn finish(
    id: &SessionId,
    job: Job,
    joined: Result<(Session, JobEnd), tokio::task::JoinError>,
) -> (Option<Session>, Option<TurnOutcome>) {
    let (session, end) = match joined {
        Ok((session, end)) => (Some(session), end),
        Err(e) => {
            tracing::error!(session = %id, "a session job failed: {e}");
            let lost = ApiError::internal("the compaction task failed; the session is reopened");
            let end = JobEnd {
                written: Ok(()),
                outcome: None,
                compacted: Some(Err(lost)),
            };
            (None, end)
        }
    };
    if let Err(e) = end.written {
        tracing::error!(session = %id, "a job could not write its timeline: {e}");
    }
    if let (Job::Compaction(reply), Some(answer)) = (job, end.compacted) {
        let _ = reply.send(answer);
    }
    (session, end.outcome)
}
