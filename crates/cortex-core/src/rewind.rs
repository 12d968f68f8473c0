//! The session's side of checkpoints: one before each turn, the stat seal
//! at each turn's end, and [`Session::rewind`].
//!
//! The engine (`checkpoint/`) is blocking file work; it runs here on the
//! blocking pool, behind a mutex so the session stays movable between
//! tasks.

use crate::checkpoint::{CheckpointError, Checkpoints, DEFAULT_QUOTA, Pruned};
use crate::{CoreError, Session};
use cortex_protocol::{EventKind, PruneScope, RewindDiff, RewindScope, TurnId};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// Paths per list a `session.rewound` event names (the API's answer has all).
const EVENT_PATHS: usize = 100;

/// A session's checkpoint settings and, once opened, its store.
#[derive(Default)]
pub(crate) struct CheckpointSlot {
    /// `<data>/checkpoints`; `None`: checkpoints are off.
    root: Option<PathBuf>,
    quota: u64,
    /// The most bytes every session's checkpoints may use together.
    total_quota: u64,
    open: Option<Arc<Mutex<Checkpoints>>>,
    /// The user was told checkpoints are unavailable (once per session
    /// object).
    told: bool,
}

impl CheckpointSlot {
    pub(crate) fn new(
        root: Option<PathBuf>,
        quota: Option<u64>,
        total_quota: Option<u64>,
    ) -> CheckpointSlot {
        CheckpointSlot {
            root,
            quota: quota.unwrap_or(DEFAULT_QUOTA),
            total_quota: total_quota.unwrap_or(crate::checkpoint::DEFAULT_TOTAL_QUOTA),
            open: None,
            told: false,
        }
    }
}

/// Why a rewind was not done.
#[derive(Debug, thiserror::Error)]
pub enum RewindError {
    /// The session has no such turn in its conversation (never, or
    /// already rewound).
    #[error("turn `{0}` is not in this session's conversation (unknown, or already rewound)")]
    NotInConversation(String),
    /// Nothing to rewind: the session has no turn yet.
    #[error("this session has no turn to rewind")]
    NoTurn,
    /// Checkpoints are off or impossible for this session.
    #[error("checkpoints are unavailable: {0}")]
    Unavailable(String),
    /// The files the user changed outside the session, which a rewind
    /// would overwrite (`force` overwrites them).
    #[error("changed outside the session since it last ran (rewind with force to overwrite): {}", .0.join(", "))]
    Conflict(Vec<String>),
    /// The checkpoint engine failed.
    #[error(transparent)]
    Checkpoint(CheckpointError),
    /// The timeline could not be written.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// What a rewind did.
#[derive(Debug, Clone, Default)]
pub struct Rewound {
    /// The turn (or checkpoint) gone back to.
    pub turn_id: String,
    /// What was restored.
    pub scope: RewindScope,
    /// Paths created, changed and deleted (empty for the conversation).
    pub diff: RewindDiff,
    /// Rewinding to this checkpoint (scope `files`) undoes the rewind.
    pub undo: Option<String>,
    /// User-changed paths overwritten because of `force`.
    pub forced: Vec<String>,
    /// A preview only ([`Session::preview_rewind`]): the paths of `diff`
    /// changed outside the session, which the rewind refuses without
    /// `force`.
    pub changed_outside: Vec<String>,
}

fn lock(slot: &Mutex<Checkpoints>) -> std::sync::MutexGuard<'_, Checkpoints> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, CheckpointError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(CheckpointError::Io(format!("checkpoint task failed: {e}"))))
}

impl Session {
    /// Why this session cannot checkpoint, or `None` when it can.
    fn checkpoints_unavailable(&self) -> Option<String> {
        self.checkpoints.root.as_ref()?;
        if self.guests.name() == "remote" {
            return Some(
                "the workspace is on a remote guest, not on this host: no checkpoint is \
                 taken and files cannot be rewound"
                    .to_owned(),
            );
        }
        None
    }

    /// The session's checkpoint store, opened on first use; `None` when
    /// checkpoints are off or unavailable.
    async fn checkpoint_store(&mut self) -> Result<Option<Arc<Mutex<Checkpoints>>>, String> {
        if let Some(open) = &self.checkpoints.open {
            return Ok(Some(open.clone()));
        }
        let Some(root) = self.checkpoints.root.clone() else {
            return Ok(None);
        };
        if let Some(why) = self.checkpoints_unavailable() {
            return Err(why);
        }
        let (id, workspace, quota, total) = (
            self.id.to_string(),
            self.workspace.clone(),
            self.checkpoints.quota,
            self.checkpoints.total_quota,
        );
        let opened = blocking(move || {
            let mut store = Checkpoints::open(&root, &id, &workspace, quota)?;
            store.set_total_quota(total);
            Ok::<_, crate::checkpoint::CheckpointError>(store)
        })
        .await;
        match opened {
            Ok(store) => {
                let store = Arc::new(Mutex::new(store));
                self.checkpoints.open = Some(store.clone());
                Ok(Some(store))
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// Checkpoint the workspace before `turn` runs: `checkpoint.taken`, or
    /// `checkpoint.failed` saying why (the turn runs either way).
    pub(crate) async fn checkpoint_turn(&mut self, turn: &TurnId) -> Result<(), CoreError> {
        let store = match self.checkpoint_store().await {
            Ok(Some(store)) => store,
            Ok(None) => return Ok(()),
            Err(reason) => {
                // Unavailable for good (a remote guest) is said once; a
                // store that cannot be opened is said before every turn.
                let for_good = self.checkpoints_unavailable().is_some();
                if !for_good || !std::mem::replace(&mut self.checkpoints.told, true) {
                    self.record(Some(turn), EventKind::CheckpointFailed { reason })
                        .await?;
                }
                return Ok(());
            }
        };
        let id = turn.0.clone();
        let taken = blocking(move || lock(&store).take(&id)).await;
        match taken {
            Ok(taken) => {
                self.record(
                    Some(turn),
                    EventKind::CheckpointTaken {
                        checkpoint: turn.0.clone(),
                        files: taken.files,
                        bytes_new: taken.bytes_new,
                        ms: taken.ms,
                        excluded: taken.excluded,
                        skipped: taken.skipped,
                    },
                )
                .await?;
                self.record_pruned(Some(turn), taken.pruned, PruneScope::Session)
                    .await?;
                self.record_pruned(Some(turn), taken.pruned_total, PruneScope::Total)
                    .await?;
            }
            Err(e) => {
                self.record(
                    Some(turn),
                    EventKind::CheckpointFailed {
                        reason: e.to_string(),
                    },
                )
                .await?;
            }
        }
        Ok(())
    }

    async fn record_pruned(
        &mut self,
        turn: Option<&TurnId>,
        pruned: Option<Pruned>,
        scope: PruneScope,
    ) -> Result<(), CoreError> {
        if let Some(p) = pruned {
            self.record(
                turn,
                EventKind::CheckpointPruned {
                    checkpoints: p.checkpoints,
                    bytes_freed: p.bytes_freed,
                    used: p.used,
                    quota: p.quota,
                    scope,
                },
            )
            .await?;
        }
        Ok(())
    }

    /// Note the tree as the turn left it: at a rewind, what differs was
    /// changed outside the session.
    pub(crate) async fn seal_checkpoints(&mut self) {
        let Some(store) = self.checkpoints.open.clone() else {
            return;
        };
        if let Err(e) = blocking(move || lock(&store).seal()).await {
            tracing::warn!("sealing the checkpoint state: {e}");
        }
    }

    /// Bytes this session's checkpoints use (`None`: checkpoints are off,
    /// unavailable, or none was taken by this process and none is stored).
    pub async fn checkpoint_usage(&mut self) -> Option<u64> {
        let store = self.checkpoint_store().await.ok()??;
        blocking(move || lock(&store).used()).await.ok()
    }

    /// The last turn of the conversation as it is now.
    pub fn last_turn(&self) -> Option<TurnId> {
        self.state.last_turn().map(TurnId::from)
    }

    /// Go back to before `turn` (the last turn when `None`): its files,
    /// its conversation, or both. Between turns only (the caller holds the
    /// session). Files the user changed outside the session since it last
    /// ran are listed and left alone unless `force`; a files rewind is
    /// itself checkpointed (`undo`). Records `session.rewound`.
    pub async fn rewind(
        &mut self,
        turn: Option<&str>,
        scope: RewindScope,
        force: bool,
    ) -> Result<Rewound, RewindError> {
        let turn = self.rewind_target(turn, scope)?;
        let mut rewound = Rewound {
            turn_id: turn.clone(),
            scope,
            ..Rewound::default()
        };
        let mut pruned = None;
        if scope.files() {
            let store = self.rewind_store().await?;
            let id = turn.clone();
            let restored = blocking(move || lock(&store).rewind(&id, force))
                .await
                .map_err(|e| match e {
                    CheckpointError::Conflict(paths) => RewindError::Conflict(paths),
                    e => RewindError::Checkpoint(e),
                })?;
            rewound.diff = restored.diff;
            rewound.undo = restored.undo;
            rewound.forced = restored.forced;
            pruned = restored.pruned;
            // What the model saw of the files is not what they are now.
            self.seen = Default::default();
        }
        let diff = &rewound.diff;
        let paths = (diff.created.len() + diff.changed.len() + diff.deleted.len()) as u64;
        self.record(
            None,
            EventKind::SessionRewound {
                turn_id: turn,
                scope,
                diff: diff.capped(EVENT_PATHS),
                paths,
                undo: rewound.undo.clone(),
                forced: rewound.forced.clone(),
            },
        )
        .await?;
        self.record_pruned(None, pruned, PruneScope::Session)
            .await?;
        Ok(rewound)
    }

    /// What [`Session::rewind`] would do, done to nothing (the API's
    /// `dry_run`): the same checks, the diff a files rewind would apply and
    /// the paths changed outside the session it would refuse without
    /// `force`. Records nothing; the checkpoint store is left as it was.
    pub async fn preview_rewind(
        &mut self,
        turn: Option<&str>,
        scope: RewindScope,
    ) -> Result<Rewound, RewindError> {
        let turn = self.rewind_target(turn, scope)?;
        let mut preview = Rewound {
            turn_id: turn.clone(),
            scope,
            ..Rewound::default()
        };
        if scope.files() {
            let store = self.rewind_store().await?;
            let found = blocking(move || lock(&store).preview(&turn))
                .await
                .map_err(RewindError::Checkpoint)?;
            preview.diff = found.diff;
            preview.changed_outside = found.changed_outside;
        }
        Ok(preview)
    }

    /// The turn a rewind goes back to before (`None`: the last one), when
    /// `scope` can go there.
    fn rewind_target(&self, turn: Option<&str>, scope: RewindScope) -> Result<String, RewindError> {
        let turn = match turn {
            Some(turn) => turn.to_owned(),
            None => self
                .state
                .last_turn()
                .map(str::to_owned)
                .ok_or(RewindError::NoTurn)?,
        };
        if scope.conversation() && !self.state.in_conversation(&turn) {
            return Err(RewindError::NotInConversation(turn));
        }
        Ok(turn)
    }

    /// The checkpoint store a files rewind needs.
    async fn rewind_store(&mut self) -> Result<Arc<Mutex<Checkpoints>>, RewindError> {
        match self.checkpoint_store().await {
            Ok(Some(store)) => Ok(store),
            Ok(None) => Err(RewindError::Unavailable(
                "this session keeps no checkpoints".to_owned(),
            )),
            Err(why) => Err(RewindError::Unavailable(why)),
        }
    }
}
