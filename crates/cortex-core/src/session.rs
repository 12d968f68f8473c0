//! A session: its configuration, its live state, creation and resumption.

use crate::compaction::CompactionConfig;
use crate::state::SessionState;
use crate::{CoreError, HarnessDirs, Published, Timeline, new_id};
use cortex_model::ModelProvider;
use cortex_protocol::{
    Event, EventKind, Goal, Message, Mode, ParentLink, Sandbox, SessionId, StopRule, Todo, TurnId,
    WorkspaceMode,
};
use cortex_runtime::{Guest, GuestProvider};
use cortex_store::{SessionRecord, Store};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::{broadcast, watch};

/// What a new session is made of.
#[derive(Clone)]
pub struct SessionConfig {
    /// The repository the session works on (canonicalised at creation).
    pub repository: PathBuf,
    /// The mode the session starts in.
    pub mode: Mode,
    /// When a turn ends besides the model's own answer.
    pub stop_rule: StopRule,
    /// Where the timeline is persisted.
    pub store: Arc<dyn Store>,
    /// The model every request goes to.
    pub model: Arc<dyn ModelProvider>,
    /// Starts the session's guest (and MCP servers' guests).
    pub guests: Arc<dyn GuestProvider>,
    /// The guest's whole environment, already built from the allow-list.
    pub guest_env: Vec<(String, String)>,
    /// Policy, network and workspace mode. On resume the stored settings
    /// win, so a session never silently loosens its sandbox.
    pub sandbox: Sandbox,
    /// Where isolated copies live (`<workspaces>/<session id>`); a session
    /// with `workspace: copy` needs one.
    pub workspaces: Option<PathBuf>,
    /// Threshold, context window and summariser for compaction.
    pub compaction: CompactionConfig,
    /// Cortex's own folders: a repository containing one, or inside one
    /// (but for `workspaces`), is refused at creation and at resume.
    pub harness_dirs: HarnessDirs,
    /// Where sessions keep their checkpoints (`<data>/checkpoints`; each
    /// session a folder of its own); `None` turns checkpoints off.
    pub checkpoints: Option<PathBuf>,
    /// The most bytes one session's checkpoints may use; `None` is
    /// [`crate::checkpoint::DEFAULT_QUOTA`] (1 GiB).
    pub checkpoint_quota: Option<u64>,
    /// The most bytes every session's checkpoints may use together (the
    /// oldest of any session pruned first); `None` is
    /// [`crate::checkpoint::DEFAULT_TOTAL_QUOTA`] (10 GiB).
    pub checkpoint_total_quota: Option<u64>,
    /// The user's own hooks (`hooks/`), run on the host; empty for none.
    /// Only the user's configuration may fill this: a repository's hooks
    /// are read by the session itself and run in the guest once trusted.
    pub hooks: Vec<crate::hooks::HookSpec>,
    /// The file of the user's trusted repository hook files
    /// (`hooks::trust`); `None`: no repository hook runs.
    pub hook_trust: Option<PathBuf>,
    /// Subagents of one round at once (`subagents/`); 0 turns `task` off.
    pub subagents: crate::subagents::SubagentConfig,
}

/// A live session: its configuration, its guest, its timeline and the state
/// folded from it. Methods that run a turn or change the state take `&mut
/// self`; a caller runs one at a time (the server's actor owns it).
pub struct Session {
    pub(crate) id: SessionId,
    pub(crate) repository: PathBuf,
    pub(crate) stop_rule: StopRule,
    pub(crate) model: Arc<dyn ModelProvider>,
    pub(crate) guests: Arc<dyn GuestProvider>,
    pub(crate) guest_env: Vec<(String, String)>,
    pub(crate) sandbox: Sandbox,
    /// Where the guest works: the repository, or its isolated copy.
    pub(crate) workspace: PathBuf,
    /// `.cortex/setup` has run for this session object.
    pub(crate) env_prepared: bool,
    pub(crate) guest: Option<Guest>,
    pub(crate) timeline: Timeline,
    /// History, mode, todos, plans, spec, goal and usage anchor: the fold
    /// of the timeline, changed only through [`Session::record`].
    pub(crate) state: SessionState,
    pub(crate) compaction: CompactionConfig,
    /// The goal as other tasks see it (the API shows it while a turn runs).
    pub(crate) goal_watch: watch::Sender<Option<Goal>>,
    /// The goal driver's continuations, stalls and the running turn's
    /// progress (`continuation.rs`).
    pub(crate) drive: crate::continuation::GoalDrive,
    /// What the running turn changed and ran, for the answer checks.
    pub(crate) turn_work: crate::coach::TurnWork,
    /// The running turn's `@path` includes, read once the guest is
    /// attached (`includes.rs`).
    pub(crate) turn_includes: Vec<String>,
    /// What the model last saw of each file (read before write).
    pub(crate) seen: crate::read_first::Seen,
    /// The approval policy and the calls waiting for the user's answer.
    pub(crate) approvals: crate::approvals::Approvals,
    /// MCP servers: added, then started with the next turn.
    pub(crate) mcp: crate::mcp_session::SessionMcp,
    /// Repository metadata in the workspace when the last turn ended
    /// (`git_watch.rs`): the next turn's baseline.
    pub(crate) metadata_baseline: Option<crate::git_watch::Snapshot>,
    /// Where the user's own instructions are, and the folders looked at.
    pub(crate) live_instructions: crate::instructions::LiveInstructions,
    /// Whole-workspace checkpoints (`rewind.rs`).
    pub(crate) checkpoints: crate::rewind::CheckpointSlot,
    /// The user's and the repository's hooks, and what was said of them.
    pub(crate) hooks: crate::hooks::Hooks,
    /// The commands running in the background (`background/`).
    pub(crate) background: crate::background::Background,
    /// The bytes of the images users attached, by sha256.
    pub(crate) images: crate::images::Images,
    /// What its children are made from, or, in a child, its parent's call
    /// and tools (`subagents/`).
    pub(crate) subagents: crate::subagents::Subagents,
    /// What `web_fetch` may reach besides the network policy (`web.rs`).
    pub(crate) web: crate::web::WebAccess,
    /// The user's language servers, started on first use (`lsp/`).
    pub(crate) lsp: crate::lsp::SessionLsp,
}

/// The guest's folder for a session: the repository itself, or its copy.
fn workspace_for(
    config: &SessionConfig,
    sandbox: Sandbox,
    id: &SessionId,
    repository: &Path,
) -> Result<PathBuf, CoreError> {
    match sandbox.workspace {
        WorkspaceMode::InPlace => Ok(repository.to_path_buf()),
        WorkspaceMode::Copy => config
            .workspaces
            .as_ref()
            .map(|dir| dir.join(id.to_string()))
            .ok_or_else(|| {
                CoreError::Workspace("`workspace: copy` needs a folder for copies".to_owned())
            }),
    }
}

fn canonical_repository(path: &Path, config: &SessionConfig) -> Result<PathBuf, CoreError> {
    let display = path.display().to_string();
    let canonical = path
        .canonicalize()
        .map_err(|_| CoreError::Repository(display.clone()))?;
    if !canonical.is_dir() {
        return Err(CoreError::Repository(display));
    }
    config
        .harness_dirs
        .check(&canonical, config.workspaces.as_deref())?;
    Ok(canonical)
}

impl Session {
    /// Create and persist a new session. Fails before anything else if the
    /// repository does not exist.
    pub async fn create(config: SessionConfig) -> Result<Session, CoreError> {
        Session::create_linked(config, None).await
    }

    /// A subagent's session, answering the parent's call `link` with
    /// `tools` at most (`subagents/`).
    pub(crate) async fn create_child(
        config: SessionConfig,
        link: ParentLink,
        tools: Vec<cortex_protocol::ToolName>,
    ) -> Result<Session, CoreError> {
        let mut child = Session::create_linked(config, Some(link.clone())).await?;
        child.subagents = crate::subagents::Subagents::child(link, tools);
        Ok(child)
    }

    async fn create_linked(
        config: SessionConfig,
        parent: Option<ParentLink>,
    ) -> Result<Session, CoreError> {
        let subagents = crate::subagents::Subagents::parent(&config);
        let repository = canonical_repository(&config.repository, &config)?;
        let (checkpoints_root, checkpoint_quota, checkpoint_total) = (
            config.checkpoints.clone(),
            config.checkpoint_quota,
            config.checkpoint_total_quota,
        );
        let id = SessionId(new_id());
        let workspace = workspace_for(&config, config.sandbox, &id, &repository)?;
        let record = SessionRecord {
            id: id.clone(),
            repository: repository.display().to_string(),
            mode: config.mode,
            model: config.model.describe(),
            stop_rule: config.stop_rule,
            created_at: cortex_protocol::now_rfc3339(),
            last_seq: 0,
            title: None,
            parent: parent.clone(),
        };
        config.store.create_session(&record).await?;
        let timeline = Timeline::new(config.store.clone(), id.clone());
        let created = timeline
            .emit(
                None,
                EventKind::SessionCreated {
                    repository: record.repository.clone(),
                    mode: config.mode,
                    model: record.model.clone(),
                    stop_rule: config.stop_rule,
                    sandbox: config.sandbox,
                    parent,
                },
            )
            .await?;
        let mut state = SessionState::default();
        state.apply(&created);
        let live_instructions =
            crate::instructions::LiveInstructions::new(config.harness_dirs.folder("config"));
        Ok(Session {
            background: crate::background::Background::new(timeline.clone()),
            subagents,
            id,
            repository,
            stop_rule: config.stop_rule,
            hooks: crate::hooks::Hooks::new(config.hooks, config.hook_trust),
            images: crate::images::Images::default(),
            web: Default::default(),
            lsp: Default::default(),
            model: config.model,
            guests: config.guests,
            guest_env: config.guest_env,
            sandbox: config.sandbox,
            workspace,
            env_prepared: false,
            guest: None,
            timeline: timeline.clone(),
            state,
            compaction: config.compaction,
            goal_watch: watch::Sender::new(None),
            drive: Default::default(),
            turn_work: Default::default(),
            turn_includes: Vec::new(),
            seen: Default::default(),
            approvals: crate::approvals::Approvals::new(timeline, Default::default()),
            mcp: Default::default(),
            metadata_baseline: None,
            live_instructions,
            checkpoints: crate::rewind::CheckpointSlot::new(
                checkpoints_root,
                checkpoint_quota,
                checkpoint_total,
            ),
        })
    }

    /// Reopen a stored session: history, mode, todos and plan rebuilt from
    /// its timeline. `config.repository`, `mode` and `stop_rule` are taken
    /// from the store; the model and guest provider from `config`. Turns a
    /// crash left `running` are closed as failed first.
    pub async fn resume(id: &SessionId, config: SessionConfig) -> Result<Session, CoreError> {
        let store = config.store.clone();
        let (checkpoints_root, checkpoint_quota, checkpoint_total) = (
            config.checkpoints.clone(),
            config.checkpoint_quota,
            config.checkpoint_total_quota,
        );
        let record = store
            .get_session(id)
            .await?
            .ok_or_else(|| CoreError::NoSession(id.to_string()))?;
        let timeline = Timeline::new(store.clone(), id.clone());
        // Before its turn is failed, so no call is left half-approved.
        crate::approvals::resolve_interrupted_approvals(&timeline).await?;
        for turn in store.turns(id).await? {
            if turn.status == cortex_store::TurnStatus::Running {
                timeline
                    .emit(
                        Some(&turn.id),
                        EventKind::TurnFailed {
                            error: "interrupted: the process running this turn exited".into(),
                            finish: None,
                        },
                    )
                    .await?;
            }
        }
        let events = store.events(id, 0).await?;
        crate::background::end_stored(&timeline, &events).await?;
        let mut state = SessionState::from_events(&events);
        state.mode.get_or_insert(record.mode);
        let repository = canonical_repository(Path::new(&record.repository), &config)?;
        let workspace = workspace_for(&config, state.sandbox, id, &repository)?;
        let approvals = crate::approvals::Approvals::new(
            timeline.clone(),
            crate::approvals::policy_from(&events),
        );
        let live_instructions =
            crate::instructions::LiveInstructions::new(config.harness_dirs.folder("config"));
        // A subagent's session, resumed, stays one: no `task` of its own.
        let subagents = match &record.parent {
            None => crate::subagents::Subagents::parent(&config),
            Some(link) => crate::subagents::Subagents::resumed_child(link.clone()),
        };
        let mut session = Session {
            background: crate::background::Background::new(timeline.clone()),
            subagents,
            id: id.clone(),
            repository,
            stop_rule: record.stop_rule,
            hooks: crate::hooks::Hooks::new(config.hooks, config.hook_trust),
            images: crate::images::Images::default(),
            web: Default::default(),
            lsp: Default::default(),
            model: config.model,
            guests: config.guests,
            guest_env: config.guest_env,
            sandbox: state.sandbox,
            workspace,
            env_prepared: false,
            guest: None,
            timeline,
            goal_watch: watch::Sender::new(state.goal().cloned()),
            state,
            compaction: config.compaction,
            drive: Default::default(),
            turn_work: Default::default(),
            turn_includes: Vec::new(),
            seen: Default::default(),
            approvals,
            mcp: Default::default(),
            metadata_baseline: None,
            live_instructions,
            checkpoints: crate::rewind::CheckpointSlot::new(
                checkpoints_root,
                checkpoint_quota,
                checkpoint_total,
            ),
        };
        session.pause_orphaned_goal().await?;
        Ok(session)
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// The mode now (the last `mode.changed`, else the one it was created with).
    pub fn mode(&self) -> Mode {
        self.state.mode.unwrap_or_default()
    }

    /// Policy, network and workspace mode the session was created with.
    pub fn sandbox(&self) -> Sandbox {
        self.sandbox
    }

    /// The repository, canonicalised.
    pub fn repository(&self) -> &Path {
        &self.repository
    }

    /// Where the guest works: the repository, or its isolated copy.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The conversation as the next request sends it.
    pub fn history(&self) -> &[Message] {
        &self.state.messages
    }

    /// The todo list as `todo_write` or an accepted plan left it.
    pub fn todos(&self) -> &[Todo] {
        &self.state.todos
    }

    /// Append `kind` to the timeline and fold it into the session's state:
    /// the only way the live session changes its state, and exactly what
    /// a resume does with the stored event.
    pub(crate) async fn record(
        &mut self,
        turn: Option<&TurnId>,
        kind: EventKind,
    ) -> Result<Event, CoreError> {
        let event = self.timeline.emit(turn, kind).await?;
        self.state.apply(&event);
        Ok(event)
    }

    /// The session's timeline (persist, then fan out).
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The goal as it changes, for tasks that do not hold the session.
    pub fn watch_goal(&self) -> watch::Receiver<Option<Goal>> {
        self.goal_watch.subscribe()
    }

    pub(crate) fn publish_goal(&self) {
        self.goal_watch.send_replace(self.state.goal().cloned());
    }

    /// Live events from now on (persisted before they arrive here).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Published>> {
        self.timeline.subscribe()
    }

    /// Switch mode (a user action; the model cannot). The guest is told the
    /// new capabilities at once.
    pub async fn set_mode(&mut self, mode: Mode) -> Result<(), CoreError> {
        let from = self.mode();
        if mode == from {
            return Ok(());
        }
        let could_write = self.guest_may_write();
        // The new mode, a fresh usage anchor, and leaving Spec discards the
        // spec in progress: all the event's fold.
        self.record(None, EventKind::ModeChanged { from, to: mode })
            .await?;
        if could_write != self.guest_may_write() {
            // The workspace mount itself changes between read-only and
            // writable: the next call attaches a new guest, and the MCP
            // servers start again in guests of the new mode. Background
            // commands end with the guest that runs them.
            self.background
                .end_all(&format!("killed: the session changed to {mode} mode"))
                .await;
            if let Some(guest) = self.guest.take() {
                guest.close().await;
            }
            self.restart_mcp().await;
            // Language servers start again on the next write that needs
            // one, in a guest of the new mode.
            self.close_lsp().await;
        } else if let Some(guest) = &self.guest
            && let Err(e) = guest
                .set_capabilities(
                    self.guest_may_write(),
                    mode.offers(cortex_protocol::ToolName::Bash),
                )
                .await
        {
            // The next call re-attaches with the right capabilities.
            tracing::warn!("guest did not take new capabilities: {e}");
            self.guest = None;
        }
        Ok(())
    }

    /// Close the guest (kills whatever still runs in it, background
    /// commands first, each recorded `process.ended`) and end the MCP
    /// and language servers.
    pub async fn close(&mut self) {
        self.background.end_all("killed: the session closed").await;
        self.close_mcp().await;
        self.close_lsp().await;
        if let Some(guest) = self.guest.take() {
            guest.close().await;
        }
    }
}
