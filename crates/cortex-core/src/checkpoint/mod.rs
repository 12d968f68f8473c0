//! Whole-workspace checkpoints and rewind.
//!
//! Before each turn the session checkpoints every file the guest can change
//! (not only what the edit tools wrote: `bash` writes too), on the host, in
//! the session's data: `<checkpoints>/<session id>/` (`store.rs`), never in
//! the repository or its `.git`. Contents are stored once by sha256; a stat
//! index skips reading files that did not change (`walk.rs`), and a tree
//! that did not change at all reuses the previous manifest.
//!
//! A rewind (`restore.rs`) first checkpoints the tree as it is (so the
//! rewind can be undone: its `undo-…` checkpoint), compares it with the
//! tree as the session last left it (`sealed.json`, written at each turn's
//! end) to find what the user changed outside the session, refuses to
//! overwrite those without `force`, and then creates, changes and deletes
//! exactly the paths that differ from the checkpoint, modes included,
//! never through a link.
//!
//! Bounded: past the quota the oldest checkpoints are pruned (with their
//! objects no other checkpoint holds); a checkpoint that alone is over the
//! quota is not kept, and the turn is told so.
//!
//! Everything here is blocking file work: the session runs it on the
//! blocking pool.

mod restore;
mod store;
mod total;
mod walk;

pub use total::DEFAULT_TOTAL_QUOTA;
pub use walk::EXCLUDED_NAMES;

use cortex_protocol::RewindDiff;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;
use store::Store;
use walk::Walker;

/// The default quota of one session's checkpoints: 1 GiB.
pub const DEFAULT_QUOTA: u64 = 1 << 30;

/// Why checkpoints or a rewind failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// Reading the workspace or writing the store failed.
    #[error("{0}")]
    Io(String),
    /// Something in the store is not as it was written.
    #[error("the checkpoint store is damaged: {0}")]
    Corrupt(String),
    /// No checkpoint by that id (never taken, or pruned).
    #[error("no checkpoint `{0}` in this session (never taken, or pruned for the quota)")]
    NotFound(String),
    /// The content did not fit in the quota.
    #[error(
        "the workspace needs {needed} bytes or more of new checkpoint storage, over the quota of {quota} bytes"
    )]
    OverQuota {
        /// Bytes needed so far.
        needed: u64,
        /// The quota.
        quota: u64,
    },
    /// Paths the user changed outside the session that the rewind would
    /// overwrite.
    #[error("changed outside the session since it last ran: {}", .0.join(", "))]
    Conflict(Vec<String>),
}

/// One entry of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Node {
    Dir {
        mode: u32,
    },
    File {
        mode: u32,
        object: String,
        size: u64,
    },
    Link {
        target: String,
    },
}

/// A checkpoint's tree: path (relative, `/`-separated) → entry.
pub(crate) type Manifest = BTreeMap<String, Node>;

/// What tells a changed entry from an unchanged one without reading it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StatKey {
    kind: char,
    mode: u32,
    size: u64,
    mtime: i64,
    mtime_ns: u64,
    ctime: i64,
    ctime_ns: u64,
    ino: u64,
    dev: u64,
}

/// A stat index entry: the key a file had and its content's object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Indexed {
    key: StatKey,
    object: String,
}

/// One checkpoint as the store lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    id: String,
    seq: u64,
    manifest: String,
    files: u64,
    /// When it was taken, in milliseconds since the epoch (0 in records
    /// written before this was kept: the oldest).
    #[serde(default)]
    at: u64,
}

/// What taking a checkpoint did.
#[derive(Debug, Clone, Default)]
pub struct Taken {
    /// Entries it holds.
    pub files: u64,
    /// Content bytes it stored that were not there.
    pub bytes_new: u64,
    /// Milliseconds it took.
    pub ms: f64,
    /// Folders left out by rule (at most 20).
    pub excluded: Vec<String>,
    /// Entries that could not be checkpointed (at most 20).
    pub skipped: Vec<String>,
    /// Older checkpoints pruned to make room.
    pub pruned: Option<Pruned>,
    /// Checkpoints of any session pruned for the total quota of all
    /// sessions (others' named `SESSION/CHECKPOINT`).
    pub pruned_total: Option<Pruned>,
}

/// Checkpoints removed for the quota.
#[derive(Debug, Clone, Default)]
pub struct Pruned {
    /// Their ids, oldest first.
    pub checkpoints: Vec<String>,
    /// Bytes freed.
    pub bytes_freed: u64,
    /// Bytes used now.
    pub used: u64,
    /// The quota.
    pub quota: u64,
}

/// What a files rewind did.
#[derive(Debug, Clone, Default)]
pub struct Restored {
    /// The paths created, changed and deleted.
    pub diff: RewindDiff,
    /// The checkpoint of the files as they were before (rewinding to it
    /// undoes this rewind); `None` when nothing changed.
    pub undo: Option<String>,
    /// User-changed paths overwritten because the rewind was forced.
    pub forced: Vec<String>,
    /// Checkpoints pruned to keep the undo checkpoint.
    pub pruned: Option<Pruned>,
}

/// What a files rewind would do (a dry run).
#[derive(Debug, Clone, Default)]
pub struct Preview {
    /// The paths it would create, change and delete.
    pub diff: RewindDiff,
    /// Of those, the paths changed outside the session since it last ran
    /// (refused without `force`).
    pub changed_outside: Vec<String>,
}

/// Whether `id` can name a checkpoint (it is also a file name).
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Bytes the checkpoints of session `session` under `root` use; `None`
/// when it has none (or the name cannot be one).
pub fn stored_bytes(root: &Path, session: &str) -> Option<u64> {
    let dir = root.join(session);
    if !valid_id(session) || !dir.is_dir() {
        return None;
    }
    Store::at(dir).used().ok()
}

/// One session's checkpoints of one workspace.
pub struct Checkpoints {
    store: Store,
    workspace: PathBuf,
    quota: u64,
    /// The quota of all sessions' checkpoints together.
    total_quota: u64,
    /// This session's store lock while this holds it (`total.rs`).
    _lock: Option<std::fs::File>,
    index: HashMap<String, Indexed>,
    /// The newest checkpoint's manifest object and tree, to reuse when the
    /// tree did not change.
    last: Option<(String, Manifest)>,
    /// Bytes the store uses, kept up to date after it was measured once
    /// (measuring stats every object, which costs more than a walk of an
    /// unchanged tree); `None`: measure again.
    used: Option<u64>,
}

impl Checkpoints {
    /// Open (creating) the store of session `session` under `root`.
    pub fn open(
        root: &Path,
        session: &str,
        workspace: &Path,
        quota: u64,
    ) -> Result<Checkpoints, CheckpointError> {
        if !valid_id(session) {
            return Err(CheckpointError::NotFound(session.to_owned()));
        }
        let store = Store::open(root.join(session))?;
        let index = store
            .read_json(&store.json_path("index.json"))?
            .unwrap_or_default();
        let lock = total::try_lock(&root.join(session));
        Ok(Checkpoints {
            store,
            workspace: workspace.to_path_buf(),
            quota,
            total_quota: DEFAULT_TOTAL_QUOTA,
            _lock: lock,
            index,
            last: None,
            used: None,
        })
    }

    /// Set the quota of all sessions' checkpoints together (the default
    /// is [`DEFAULT_TOTAL_QUOTA`]).
    pub fn set_total_quota(&mut self, total: u64) {
        self.total_quota = total;
    }

    /// Bytes the session's checkpoints use.
    pub fn used(&self) -> Result<u64, CheckpointError> {
        self.store.used()
    }

    /// The ids of the checkpoints kept, oldest first.
    pub fn list(&self) -> Result<Vec<String>, CheckpointError> {
        Ok(self.store.records()?.into_iter().map(|r| r.id).collect())
    }

    fn manifest(&self, record: &Record) -> Result<Manifest, CheckpointError> {
        if let Some((hash, manifest)) = &self.last
            && *hash == record.manifest
        {
            return Ok(manifest.clone());
        }
        let bytes = self.store.read_object(&record.manifest)?;
        serde_json::from_slice(&bytes).map_err(|e| CheckpointError::Corrupt(e.to_string()))
    }

    /// Walk the workspace: `hash` stores contents and builds the manifest
    /// (`dry`: hashes without storing), `stats` keeps every entry's stat
    /// key (the seal, a rewind's check).
    fn walk(&self, hash: bool, stats: bool, dry: bool) -> Result<walk::Walked, CheckpointError> {
        Walker {
            store: hash.then_some(&self.store),
            index: &self.index,
            budget: self.quota,
            stats,
            dry,
        }
        .walk(&self.workspace)
    }

    /// Checkpoint the workspace as `id` (a turn's id).
    pub fn take(&mut self, id: &str) -> Result<Taken, CheckpointError> {
        let started = Instant::now();
        if !valid_id(id) {
            return Err(CheckpointError::NotFound(id.to_owned()));
        }
        let walked = match self.walk(true, false, false) {
            Ok(walked) => walked,
            Err(e) => {
                // What the failed walk stored belongs to no checkpoint.
                self.used = None;
                let _ = self.prune(None);
                return Err(e);
            }
        };
        let bytes_new = walked.bytes_new;
        let files = walked.manifest.len() as u64;
        self.keep(id, walked.manifest, walked.index, bytes_new)?;
        let pruned = self.prune(Some(id))?;
        self.note_used()?;
        let pruned_total = self.prune_total(id)?;
        Ok(Taken {
            files,
            bytes_new,
            ms: started.elapsed().as_secs_f64() * 1000.0,
            excluded: walked.excluded,
            skipped: walked.skipped,
            pruned,
            pruned_total,
        })
    }

    /// Record `manifest` as checkpoint `id`, and the new stat index.
    /// `bytes_new`: the content the walk that made `manifest` stored.
    fn keep(
        &mut self,
        id: &str,
        manifest: Manifest,
        index: HashMap<String, Indexed>,
        bytes_new: u64,
    ) -> Result<(), CheckpointError> {
        let records = self.store.records()?;
        if records.iter().any(|r| r.id == id) {
            // Replaced: its old record's size is not known here.
            self.used = None;
        }
        let seq = records.last().map_or(1, |r| r.seq + 1);
        let (hash, manifest_new) = match &self.last {
            // The tree did not change: the same manifest object.
            Some((hash, last)) if *last == manifest => (hash.clone(), 0),
            _ => {
                let bytes = serde_json::to_vec(&manifest)
                    .map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
                self.store.put_bytes(&bytes)?
            }
        };
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let record_bytes = self.store.write_record(&Record {
            id: id.to_owned(),
            seq,
            manifest: hash.clone(),
            files: manifest.len() as u64,
            at,
        })?;
        if let Some(used) = &mut self.used {
            *used += bytes_new + manifest_new + record_bytes;
        }
        self.last = Some((hash, manifest));
        if index != self.index {
            self.index = index;
            self.store
                .write_json(&self.store.json_path("index.json"), &self.index)?;
        }
        Ok(())
    }

    /// Bytes the store uses, measured once and then kept up to date.
    fn used_now(&mut self) -> Result<u64, CheckpointError> {
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
    fn prune(&mut self, newest: Option<&str>) -> Result<Option<Pruned>, CheckpointError> {
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
                self.last = None;
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

    /// Remove objects no record in `records` holds, and forget them in the
    /// stat index.
    fn collect(&mut self, records: &[Record]) -> Result<(), CheckpointError> {
        let mut keep = HashSet::new();
        for record in records {
            keep.insert(record.manifest.clone());
            for node in self.manifest(record)?.into_values() {
                if let Node::File { object, .. } = node {
                    keep.insert(object);
                }
            }
        }
        let removed = self.store.gc(&keep)?;
        if !removed.is_empty() {
            self.used = None;
            if self
                .last
                .as_ref()
                .is_some_and(|(hash, _)| removed.contains(hash))
            {
                // Its manifest is gone: never reuse it.
                self.last = None;
            }
            let before = self.index.len();
            self.index.retain(|_, i| !removed.contains(&i.object));
            if self.index.len() != before {
                self.store
                    .write_json(&self.store.json_path("index.json"), &self.index)?;
            }
        }
        Ok(())
    }

    /// Note the tree as the session leaves it (a turn's end): what differs
    /// from this at a rewind was changed outside the session.
    pub fn seal(&self) -> Result<(), CheckpointError> {
        let walked = self.walk(false, true, false)?;
        self.store
            .write_json(&self.store.json_path("sealed.json"), &walked.stats)
            .map(|_| ())
    }

    /// The paths of `diff` whose stat differs from the seal (the tree as
    /// the session last left it): changed outside the session. Sorted;
    /// empty when the session never sealed.
    fn outside(
        &self,
        diff: &RewindDiff,
        stats: &HashMap<String, StatKey>,
    ) -> Result<Vec<String>, CheckpointError> {
        let sealed: Option<HashMap<String, StatKey>> =
            self.store.read_json(&self.store.json_path("sealed.json"))?;
        let mut outside: Vec<String> = match &sealed {
            Some(sealed) => diff
                .created
                .iter()
                .chain(&diff.changed)
                .chain(&diff.deleted)
                .filter(|p| stats.get(*p) != sealed.get(*p))
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        outside.sort();
        Ok(outside)
    }

    /// What [`Checkpoints::rewind`] to `id` would do, done to nothing: the
    /// diff it would apply and the paths changed outside the session it
    /// would refuse without `force`. Changed files are hashed, not stored:
    /// the store and the stat index are left as they were.
    pub fn preview(&self, id: &str) -> Result<Preview, CheckpointError> {
        let record = self.record(id)?;
        let target = self.manifest(&record)?;
        let now = self.walk(true, true, true)?;
        let diff = restore::diff(&target, &now.manifest);
        let changed_outside = self.outside(&diff, &now.stats)?;
        Ok(Preview {
            diff,
            changed_outside,
        })
    }

    /// Checkpoint `id`'s record; `NotFound` for an id that is not one or
    /// is not kept.
    fn record(&self, id: &str) -> Result<Record, CheckpointError> {
        if !valid_id(id) {
            return Err(CheckpointError::NotFound(id.to_owned()));
        }
        self.store
            .read_record(id)?
            .ok_or_else(|| CheckpointError::NotFound(id.to_owned()))
    }

    /// Whether checkpoint `id` is kept.
    pub fn has(&self, id: &str) -> Result<bool, CheckpointError> {
        Ok(valid_id(id) && self.store.read_record(id)?.is_some())
    }

    /// Put the workspace's files back as checkpoint `id` holds them.
    pub fn rewind(&mut self, id: &str, force: bool) -> Result<Restored, CheckpointError> {
        let record = self.record(id)?;
        let target = self.manifest(&record)?;
        // The tree as it is, stored: the undo checkpoint if anything changes.
        let now = self.walk(true, true, false)?;
        let diff = restore::diff(&target, &now.manifest);
        if diff.is_empty() {
            return Ok(Restored::default());
        }
        let outside = self.outside(&diff, &now.stats)?;
        if !outside.is_empty() && !force {
            // What the walk stored belongs to no checkpoint.
            self.used = None;
            let _ = self.prune(None);
            return Err(CheckpointError::Conflict(outside));
        }
        let undo = format!("undo-{}", crate::new_id());
        self.keep(&undo, now.manifest, now.index, now.bytes_new)?;
        restore::apply(&self.workspace, &self.store, &target, &diff)?;
        self.seal()?;
        // Over the quota on its own, the undo checkpoint is not kept: the
        // rewind is done, it cannot be undone.
        let (pruned, undo) = match self.prune(Some(&undo)) {
            Ok(pruned) => (pruned, Some(undo)),
            Err(e) => {
                tracing::warn!("the undo checkpoint of a rewind was not kept: {e}");
                (None, None)
            }
        };
        Ok(Restored {
            diff,
            undo,
            forced: outside,
            pruned,
        })
    }
}

#[cfg(test)]
mod tests;
