//! The quotas: a session's own (past it, its oldest checkpoints go first,
//! with every object no kept checkpoint or the seal holds), and the one of
//! all sessions' checkpoints together (`<checkpoints>/*`): past it, the
//! oldest checkpoints of any session go first, until the total fits.
//!
//! Another session's store is only touched while its lock is ours: a live
//! session holds its own (`lock`, an exclusive `flock` taken when its
//! [`Checkpoints`] opens), so a store whose walk may be storing objects
//! this very moment is never collected under it; such a session is
//! counted but not pruned (it prunes for the total itself at its next
//! checkpoint). A session's bytes are read from its `used.json`, which it
//! writes after each checkpoint, so the total costs one small read per
//! session rather than a stat per object.

use super::store::Store;
use super::{CheckpointError, Checkpoints, Indexed, Pruned, Record, tree, valid_id};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The default quota of all sessions' checkpoints together: 10 GiB.
pub const DEFAULT_TOTAL_QUOTA: u64 = 10 << 30;

/// When a checkpoint is taken, in milliseconds since the epoch, and always
/// later than the one this process took before: checkpoints of several
/// sessions taken within one millisecond still order by when they were
/// taken, and the total quota prunes the oldest by this.
pub(super) fn taken_at() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let mut taken = now;
    let _ = LAST.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
        taken = now.max(last.saturating_add(1));
        Some(taken)
    });
    taken
}

/// Take `dir`'s lock without waiting; `None` when another holds it.
pub(super) fn try_lock(dir: &Path) -> Option<File> {
    // Private like everything else in the checkpoint store.
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(dir.join("lock"))
        .ok()?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(file)
}

/// Another session's store, locked for pruning.
struct Other {
    id: String,
    store: Store,
    records: Vec<Record>,
    used: u64,
    _lock: File,
}

fn read_used(store: &Store) -> Result<Option<u64>, CheckpointError> {
    store.read_json(&store.json_path("used.json"))
}

impl Other {
    fn remove_oldest(&mut self) -> Result<String, CheckpointError> {
        let oldest = self.records.remove(0);
        self.store.remove_record(&oldest.id)?;
        let keep = super::reachable(&self.store, &self.records)?;
        let removed = self.store.gc(&keep)?;
        // An older store's stat index must never name a removed object.
        let path = self.store.json_path("index.json");
        if let Some(mut index) = self.store.read_json::<HashMap<String, Indexed>>(&path)? {
            let before = index.len();
            index.retain(|_, i| !removed.contains(&i.object));
            if index.len() != before {
                self.store.write_json(&path, &index)?;
            }
        }
        self.used = self.store.used()?;
        self.store
            .write_json(&self.store.json_path("used.json"), &self.used)?;
        Ok(format!("{}/{}", self.id, oldest.id))
    }
}

impl Checkpoints {
    /// Bytes the store uses, measured once and then kept up to date.
    pub(super) fn used_now(&mut self) -> Result<u64, CheckpointError> {
        if let Some(used) = self.used {
            return Ok(used);
        }
        let used = self.store.used()?;
        self.used = Some(used);
        Ok(used)
    }

    /// Remove the oldest checkpoints while over the quota (never `newest`
    /// unless it alone is over, which is then an error), and every object
    /// no checkpoint holds.
    pub(super) fn prune(
        &mut self,
        newest: Option<&str>,
    ) -> Result<Option<Pruned>, CheckpointError> {
        // Within the quota after a checkpoint: nothing to read.
        if newest.is_some() && self.used_now()? <= self.quota {
            return Ok(None);
        }
        let mut records = self.store.records()?;
        if newest.is_none() {
            // Objects a failed walk or a refused rewind left behind go
            // first: they must not cost a kept checkpoint its place.
            self.collect(&records)?;
        }
        let before = self.used_now()?;
        let mut removed = Vec::new();
        let mut used = before;
        loop {
            if used <= self.quota {
                break;
            }
            let Some(oldest) = records.first().cloned() else {
                break;
            };
            if Some(oldest.id.as_str()) == newest && records.len() == 1 {
                self.store.remove_record(&oldest.id)?;
                self.used = None;
                self.collect(&[])?;
                return Err(CheckpointError::OverQuota {
                    needed: used,
                    quota: self.quota,
                });
            }
            self.store.remove_record(&oldest.id)?;
            self.used = None;
            records.remove(0);
            removed.push(oldest.id);
            self.collect(&records)?;
            used = self.used_now()?;
        }
        if removed.is_empty() {
            return Ok(None);
        }
        Ok(Some(Pruned {
            checkpoints: removed,
            bytes_freed: before.saturating_sub(used),
            used,
            quota: self.quota,
        }))
    }

    /// Remove objects neither a record in `records` nor the seal holds,
    /// and forget them in the tree.
    pub(super) fn collect(&mut self, records: &[Record]) -> Result<(), CheckpointError> {
        let keep = super::reachable(&self.store, records)?;
        let removed = self.store.gc(&keep)?;
        if !removed.is_empty() {
            self.used = None;
            if tree::forget_objects(&mut self.tree, &removed) {
                self.stale = true;
            }
        }
        Ok(())
    }

    /// Write this session's bytes for the others' total.
    pub(super) fn note_used(&mut self) -> Result<(), CheckpointError> {
        let used = self.used_now()?;
        self.store
            .write_json(&self.store.json_path("used.json"), &used)
            .map(|_| ())
    }

    /// While all sessions' checkpoints are over the total quota, remove
    /// the oldest of any session (never `newest`, this session's
    /// checkpoint just taken). Checkpoints of other sessions are named
    /// `SESSION/CHECKPOINT`.
    pub(super) fn prune_total(&mut self, newest: &str) -> Result<Option<Pruned>, CheckpointError> {
        let Some(root) = self.store.dir().parent().map(Path::to_path_buf) else {
            return Ok(None);
        };
        let own = self.store.dir().to_path_buf();
        let mut others = Vec::new();
        let mut unprunable = 0u64;
        for entry in std::fs::read_dir(&root).map_err(|e| CheckpointError::Io(e.to_string()))? {
            let Ok(entry) = entry else { continue };
            let dir: PathBuf = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if dir == own || !valid_id(&name) || !dir.is_dir() {
                continue;
            }
            let store = Store::at(dir.clone());
            match try_lock(&dir) {
                Some(lock) => {
                    let used = match read_used(&store)? {
                        Some(used) => used,
                        None => store.used()?,
                    };
                    let records = store.records()?;
                    others.push(Other {
                        id: name,
                        store,
                        records,
                        used,
                        _lock: lock,
                    });
                }
                None => unprunable += read_used(&store)?.unwrap_or(0),
            }
        }
        let total = |me: &mut Checkpoints, others: &[Other]| -> Result<u64, CheckpointError> {
            Ok(me.used_now()? + unprunable + others.iter().map(|o| o.used).sum::<u64>())
        };
        let before = total(self, &others)?;
        let mut now = before;
        let mut removed = Vec::new();
        while now > self.total_quota {
            // The oldest checkpoint of any session, by the time it was taken.
            let mine = self
                .store
                .records()?
                .into_iter()
                .next()
                .filter(|r| r.id != newest);
            let theirs = others
                .iter()
                .enumerate()
                .filter_map(|(i, o)| o.records.first().map(|r| (i, r.at)))
                .min_by_key(|(_, at)| *at);
            match (mine, theirs) {
                (Some(m), Some((_, at))) if m.at <= at => removed.push(self.remove_own(&m.id)?),
                (_, Some((i, _))) => removed.push(others[i].remove_oldest()?),
                (Some(m), None) => removed.push(self.remove_own(&m.id)?),
                (None, None) => break,
            }
            now = total(self, &others)?;
        }
        if removed.is_empty() {
            return Ok(None);
        }
        self.note_used()?;
        Ok(Some(Pruned {
            checkpoints: removed,
            bytes_freed: before.saturating_sub(now),
            used: now,
            quota: self.total_quota,
        }))
    }

    fn remove_own(&mut self, id: &str) -> Result<String, CheckpointError> {
        self.store.remove_record(id)?;
        self.used = None;
        let records = self.store.records()?;
        self.collect(&records)?;
        Ok(id.to_owned())
    }
}
