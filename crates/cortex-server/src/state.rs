//! Shared server state: the store, tokens, provider factory and the registry
//! of live sessions (one actor each).

use crate::actor::ActorHandle;
use crate::error::ApiError;
use crate::factory::{ModelChoice, ProviderFactory, Providers};
use crate::tokens::{Principal, Tokens};
use axum::http::StatusCode;
use cortex_api::{GoalSummary, SessionView};
use cortex_core::{HarnessDirs, Session, SessionConfig, Timeline};
use cortex_protocol::{EventKind, Mode, Sandbox, SessionId, StopRule, WorkspaceMode};
use cortex_store::{SessionRecord, Store};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::Notify;

/// Tunables.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Largest request body accepted (413 above).
    pub body_limit: usize,
    /// SSE comment lines sent this often keep proxies from closing idle
    /// streams and let clients notice a dead server.
    pub heartbeat: Duration,
    /// Where isolated copies and clones of git URLs live; without it,
    /// sessions work in place and git URLs are refused.
    pub workspaces: Option<PathBuf>,
    /// The workspace mode of sessions that do not say: `copy` for a server
    /// with a folder for copies (the user's checkout stays untouched).
    pub default_workspace: WorkspaceMode,
    /// The server's own config, data and runtime folders: no session's
    /// repository may contain one or sit inside one (422).
    pub harness_dirs: HarnessDirs,
    /// `full-access` sessions (no sandbox) are refused unless the operator
    /// started the server with `--allow-full-access` (403).
    pub allow_full_access: bool,
    /// Connection caps and read timeouts against hostile clients.
    pub connections: crate::ConnectionLimits,
    /// MCP servers every session gets (the `[mcp_servers]` of the config
    /// file); they start with a session's first turn.
    pub mcp_servers: Vec<cortex_core::McpServerSpec>,
    /// Where sessions keep their whole-workspace checkpoints
    /// (`<data>/checkpoints`); `None` turns checkpoints and file rewinds off.
    pub checkpoints: Option<PathBuf>,
    /// The most bytes one session's checkpoints may use (`None`: 1 GiB).
    pub checkpoint_quota: Option<u64>,
    /// The most bytes every session's checkpoints may use together
    /// (`None`: 10 GiB).
    pub checkpoint_total_quota: Option<u64>,
    /// The user's own hooks (the config file's `[hooks]` and their
    /// `hooks.json`), given to every session; run on the host.
    pub hooks: Vec<cortex_core::HookSpec>,
    /// The user's trusted repository hook files (`hooks::trust`); `None`:
    /// no repository hook runs and none can be trusted over the API.
    pub hook_trust: Option<std::path::PathBuf>,
    /// Subagents of one round at once (`[subagents] parallel`); 0: no `task`.
    pub subagents: cortex_core::subagents::SubagentConfig,
    /// What `web_fetch` may reach besides each session's network policy
    /// (the config's `[network] allow`).
    pub web: cortex_core::WebAccess,
    /// Language servers every session may start (the `[lsp.NAME]` of the
    /// config file), in Agent mode, on the first write they check.
    pub lsp: Vec<cortex_core::LspSpec>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            body_limit: 1024 * 1024,
            heartbeat: Duration::from_secs(15),
            workspaces: None,
            default_workspace: WorkspaceMode::InPlace,
            harness_dirs: HarnessDirs::new(),
            allow_full_access: false,
            connections: crate::ConnectionLimits::default(),
            mcp_servers: Vec::new(),
            checkpoints: None,
            checkpoint_quota: None,
            checkpoint_total_quota: None,
            hooks: Vec::new(),
            hook_trust: None,
            subagents: Default::default(),
            web: Default::default(),
            lsp: Vec::new(),
        }
    }
}

/// What every request handler shares: the store, the accepted tokens, the
/// provider factory, the configuration and the live sessions.
pub struct AppState {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) tokens: Tokens,
    pub(crate) factory: Arc<dyn ProviderFactory>,
    pub(crate) config: ServerConfig,
    pub(crate) registry: Registry,
    /// Read-only share links (in memory: a restart revokes them).
    pub(crate) shares: crate::shares::Shares,
}

#[derive(Default)]
pub(crate) struct Registry {
    actors: Mutex<HashMap<SessionId, (u64, Arc<ActorHandle>)>>,
    /// One reopening at a time, so a session is never resumed twice (a
    /// second resume would fail the first one's running turn).
    loading: tokio::sync::Mutex<()>,
    /// Fires whenever a session becomes live, for event streams waiting on it.
    pub(crate) spawned: Notify,
    next_generation: AtomicU64,
}

impl AppState {
    /// The state of a server that has no live session yet; sessions go live
    /// when a request needs them.
    pub fn new(
        store: Arc<dyn Store>,
        tokens: Tokens,
        factory: Arc<dyn ProviderFactory>,
        config: ServerConfig,
    ) -> Arc<Self> {
        Arc::new(AppState {
            store,
            tokens,
            factory,
            config,
            registry: Registry::default(),
            shares: Default::default(),
        })
    }

    /// Close the turns a previous server process left running in sessions
    /// the API owns: they failed when it died, and a goal they worked on
    /// pauses as `interrupted` (`POST …/goal/resume` continues it). Call once at start-up, before
    /// serving; sessions without an owner (run by `cortex exec` directly) are
    /// left to their own process.
    pub async fn recover_interrupted(&self) -> Result<usize, ApiError> {
        let mut closed = 0;
        for turn in self.store.running_turns().await? {
            if self.store.owner(&turn.session_id).await?.is_none() {
                continue;
            }
            let timeline = Timeline::new(self.store.clone(), turn.session_id.clone());
            // Before the turn is failed, so no call is left half-approved.
            cortex_core::resolve_interrupted_approvals(&timeline).await?;
            timeline
                .emit(
                    Some(&turn.id),
                    EventKind::TurnFailed {
                        error: "interrupted: the server running this turn exited".into(),
                        finish: None,
                    },
                )
                .await?;
            cortex_core::pause_interrupted_goal(&timeline).await?;
            closed += 1;
        }
        Ok(closed)
    }

    /// Whether `principal` owns the session: the same 404 otherwise. A live
    /// session answers from memory (its owner never changes); others with
    /// one store query.
    pub(crate) async fn check_owner(
        &self,
        principal: &Principal,
        id: &SessionId,
    ) -> Result<(), ApiError> {
        if let Some(handle) = self.live(id) {
            return if handle.owner() == principal.0 {
                Ok(())
            } else {
                Err(ApiError::no_session(id.as_str()))
            };
        }
        match self.store.owner(id).await {
            Ok(Some(owner)) if owner == principal.0 => Ok(()),
            Ok(_) | Err(cortex_store::StoreError::NoSession(_)) => {
                Err(ApiError::no_session(id.as_str()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The live session if `principal` owns it, reopened from the store when
    /// this process has not got it; the same 404 for another's.
    pub(crate) async fn owned_actor(
        self: &Arc<Self>,
        principal: &Principal,
        id: &SessionId,
    ) -> Result<Arc<ActorHandle>, ApiError> {
        if let Some(handle) = self.live(id) {
            return if handle.owner() == principal.0 {
                Ok(handle)
            } else {
                Err(ApiError::no_session(id.as_str()))
            };
        }
        let record = self.authorize(principal, id).await?;
        self.load(&record, principal).await
    }

    /// The session, if `principal` owns it; the same 404 otherwise.
    pub(crate) async fn authorize(
        &self,
        principal: &Principal,
        id: &SessionId,
    ) -> Result<SessionRecord, ApiError> {
        let not_found = || ApiError::no_session(id.as_str());
        match self.store.owner(id).await {
            Ok(Some(owner)) if owner == principal.0 => {}
            Ok(_) | Err(cortex_store::StoreError::NoSession(_)) => return Err(not_found()),
            Err(e) => return Err(e.into()),
        }
        self.store.get_session(id).await?.ok_or_else(not_found)
    }

    pub(crate) fn live(&self, id: &SessionId) -> Option<Arc<ActorHandle>> {
        self.registry
            .actors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .map(|(_, handle)| handle.clone())
    }

    /// The session resource; its goal only when the session is live (see
    /// `routes::goal`: a session that is not live folds it from the store).
    pub(crate) fn view(&self, record: SessionRecord) -> SessionView {
        let live = self.live(&record.id);
        let running_turn = live.as_ref().and_then(|h| h.running_turn());
        let goal = live.and_then(|h| h.goal());
        SessionView {
            id: record.id,
            repository: record.repository,
            mode: record.mode,
            model: record.model,
            stop_rule: record.stop_rule,
            created_at: record.created_at,
            title: record.title,
            last_seq: record.last_seq,
            running_turn,
            goal: goal.as_ref().map(GoalSummary::from),
            checkpoint_bytes: None,
            parent: record.parent,
        }
    }

    /// Bytes session `id`'s checkpoints use (`None` where checkpoints are
    /// off or it has none).
    pub(crate) async fn checkpoint_bytes(&self, id: &SessionId) -> Option<u64> {
        let root = self.config.checkpoints.clone()?;
        let id = id.to_string();
        tokio::task::spawn_blocking(move || cortex_core::checkpoint::stored_bytes(&root, &id))
            .await
            .ok()
            .flatten()
    }

    async fn providers(&self, choice: ModelChoice<'_>) -> Result<Providers, ApiError> {
        let factory = self.factory.clone();
        let (resume, spec) = match choice {
            ModelChoice::New(spec) => (false, spec.map(str::to_owned)),
            ModelChoice::Resume(spec) => (true, Some(spec.to_owned())),
        };
        // Building a provider may load a model file: not on the async threads.
        let built = tokio::task::spawn_blocking(move || {
            let choice = if resume {
                ModelChoice::Resume(spec.as_deref().unwrap_or_default())
            } else {
                ModelChoice::New(spec.as_deref())
            };
            factory.providers(choice)
        })
        .await
        .map_err(|e| ApiError::internal(format!("the provider factory failed: {e}")))?;
        built.map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "bad_model", e.message()))
    }

    /// A folder a client named may not be inside the server's workspaces:
    /// those are other sessions' copies and clones (of any principal), only
    /// ever handed to the session the server made them for.
    fn refuse_workspaces(&self, repository: &std::path::Path) -> Result<(), ApiError> {
        let Some(workspaces) = &self.config.workspaces else {
            return Ok(());
        };
        let canonical = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if canonical(repository).starts_with(canonical(workspaces)) {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "bad_repository",
                format!(
                    "`{}` is inside this server's workspaces (the copies and clones of \
                     sessions); name the repository itself, or its git URL",
                    repository.display()
                ),
            ));
        }
        Ok(())
    }

    /// A folder for the repository a client named: a git URL is cloned into
    /// the server's workspaces folder first.
    async fn local_repository(&self, repository: String) -> Result<PathBuf, ApiError> {
        if !cortex_core::is_git_url(&repository) {
            return Ok(PathBuf::from(repository));
        }
        let Some(workspaces) = self.config.workspaces.clone() else {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "bad_repository",
                "this server does not clone git URLs; give a folder on the server".to_owned(),
            ));
        };
        tokio::task::spawn_blocking(move || {
            cortex_core::clone_into(&repository, &workspaces.join("clones"))
        })
        .await
        .map_err(|e| ApiError::internal(format!("the clone did not finish: {e}")))?
        .map_err(|e| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "bad_repository",
                e.to_string(),
            )
        })
    }

    /// Create a session owned by `principal` and make it live.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn create(
        self: &Arc<Self>,
        principal: &Principal,
        repository: String,
        mode: Mode,
        model: Option<&str>,
        sandbox: Sandbox,
        stop_rule: StopRule,
        client_mcp: Vec<cortex_core::McpServerSpec>,
    ) -> Result<SessionView, ApiError> {
        let named_folder = !cortex_core::is_git_url(&repository);
        let repository = self.local_repository(repository).await?;
        if named_folder {
            self.refuse_workspaces(&repository)?;
        }
        // Checked again by `Session::create`, but first here: building the
        // model may load a file for seconds or fail for reasons of its own,
        // and a repository that is not there is the first thing to fix.
        if !repository.is_dir() {
            return Err(
                cortex_core::CoreError::Repository(repository.display().to_string()).into(),
            );
        }
        let providers = self.providers(ModelChoice::New(model)).await?;
        let mut session = Session::create(SessionConfig {
            repository,
            mode,
            stop_rule,
            store: self.store.clone(),
            model: providers.model,
            guests: guests_for(providers.guests, principal),
            guest_env: providers.guest_env,
            sandbox,
            workspaces: self.config.workspaces.clone(),
            compaction: Default::default(),
            harness_dirs: self.config.harness_dirs.clone(),
            checkpoints: self.config.checkpoints.clone(),
            checkpoint_quota: self.config.checkpoint_quota,
            checkpoint_total_quota: self.config.checkpoint_total_quota,
            hooks: self.config.hooks.clone(),
            hook_trust: self.config.hook_trust.clone(),
            subagents: self.config.subagents,
        })
        .await?;
        session.add_mcp_servers(self.config.mcp_servers.iter().cloned());
        session.set_web_access(self.config.web.clone());
        session.set_language_servers(self.config.lsp.clone());
        // The configured servers keep their names.
        session.add_mcp_servers(client_mcp.into_iter().filter(|client| {
            !self
                .config
                .mcp_servers
                .iter()
                .any(|c| c.name == client.name)
        }));
        let id = session.id().clone();
        self.store.set_owner(&id, &principal.0).await?;
        self.insert(session, principal);
        let record = self
            .store
            .get_session(&id)
            .await?
            .ok_or_else(|| ApiError::no_session(id.as_str()))?;
        Ok(self.view(record))
    }

    /// The live session, reopened from the store if this process has not
    /// got it (after a restart, or after DELETE). `owner` owns `record`
    /// (checked by [`AppState::authorize`]).
    async fn load(
        self: &Arc<Self>,
        record: &SessionRecord,
        owner: &Principal,
    ) -> Result<Arc<ActorHandle>, ApiError> {
        if let Some(handle) = self.live(&record.id) {
            return Ok(handle);
        }
        let _one_at_a_time = self.registry.loading.lock().await;
        if let Some(handle) = self.live(&record.id) {
            return Ok(handle);
        }
        let providers = self.providers(ModelChoice::Resume(&record.model)).await?;
        let mut session = Session::resume(
            &record.id,
            SessionConfig {
                repository: PathBuf::from(&record.repository),
                mode: record.mode,
                stop_rule: record.stop_rule,
                store: self.store.clone(),
                model: providers.model,
                guests: guests_for(providers.guests, owner),
                guest_env: providers.guest_env,
                // The stored settings win on resume.
                sandbox: Sandbox::default(),
                workspaces: self.config.workspaces.clone(),
                compaction: Default::default(),
                harness_dirs: self.config.harness_dirs.clone(),
                checkpoints: self.config.checkpoints.clone(),
                checkpoint_quota: self.config.checkpoint_quota,
                checkpoint_total_quota: self.config.checkpoint_total_quota,
                hooks: self.config.hooks.clone(),
                hook_trust: self.config.hook_trust.clone(),
                subagents: self.config.subagents,
            },
        )
        .await?;
        session.add_mcp_servers(self.config.mcp_servers.iter().cloned());
        session.set_web_access(self.config.web.clone());
        session.set_language_servers(self.config.lsp.clone());
        Ok(self.insert(session, owner))
    }

    fn insert(self: &Arc<Self>, session: Session, owner: &Principal) -> Arc<ActorHandle> {
        let id = session.id().clone();
        let generation = self
            .registry
            .next_generation
            .fetch_add(1, Ordering::Relaxed);
        let weak = Arc::downgrade(self);
        let exit_id = id.clone();
        let handle = ActorHandle::spawn(session, owner.0.clone(), move || {
            if let Some(state) = weak.upgrade() {
                let mut actors = state
                    .registry
                    .actors
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                // Only forget this actor, not a newer one for the same session.
                if actors.get(&exit_id).is_some_and(|(g, _)| *g == generation) {
                    actors.remove(&exit_id);
                }
            }
        });
        self.registry
            .actors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, (generation, handle.clone()));
        self.registry.spawned.notify_waiters();
        handle
    }

    /// Close a live session (stop its turn, close its guest). Nothing to do
    /// when it is not live.
    pub(crate) async fn close(&self, id: &SessionId) -> Result<(), ApiError> {
        if let Some(handle) = self.live(id) {
            handle.close().await?;
            // The actor's exit hook removes it, but do not leave a window in
            // which a request finds a closed actor.
            let mut actors = self
                .registry
                .actors
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if actors.get(id).is_some_and(|(_, h)| Arc::ptr_eq(h, &handle)) {
                actors.remove(id);
            }
        }
        Ok(())
    }

    /// Close every live session (shutdown).
    pub async fn close_all(&self) {
        let handles: Vec<_> = self
            .registry
            .actors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .map(|(_, h)| h.clone())
            .collect();
        for handle in handles {
            let _ = handle.close().await;
        }
    }
}

/// The guest provider for `principal`'s sessions: what it keeps between
/// guests (the local sandbox's homes) is that principal's alone, so two
/// principals working on the same repository share no home. The reserved
/// principal (the CLI's own in-process server, `CORTEX_TOKEN`) keeps the
/// provider's own, where `cortex exec` sessions have always had theirs.
fn guests_for(
    guests: Arc<dyn cortex_runtime::GuestProvider>,
    principal: &Principal,
) -> Arc<dyn cortex_runtime::GuestProvider> {
    if principal.0 == crate::tokens::RESERVED_PRINCIPAL {
        return guests;
    }
    guests.for_principal(&principal.0).unwrap_or(guests)
}
