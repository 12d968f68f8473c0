//! Whole-workspace checkpoints and rewind.
//!
//! Before each turn the session checkpoints every file the guest can change
//! (not only what the edit tools wrote: `bash` writes too), on the host, in
//! the session's data: `<checkpoints>/<session id>/` (`store.rs`), never in
//! the repository or its `.git`. Contents are stored once by sha256, and a
//! checkpoint's tree as one object per folder (`tree.rs`), so a folder that
//! did not change is not written again.
//!
//! The session keeps the tree as it last walked it, with an inotify watch
//! on every folder (`watch.rs`): a checkpoint reads again only the folders
//! with events since (`walk.rs`), so one of an unchanged tree reads no
//! folder at all. Whenever the events may be incomplete (the queue
//! overflowed, a watch could not be added, the session's first walk) the
//! walk is a full one, and a file whose stat key (size, mtime, ctime,
//! inode) is the one it had is still not read again.
//!
//! A rewind (`restore.rs`) first checkpoints the tree as it is (so the
//! rewind can be undone: its `undo-…` checkpoint), compares it with the
//! tree as the session last left it (the seal: a tree stored at each
//! turn's end, named in `sealed.json`; the next checkpoint, taken before
//! the next turn, is usually that very tree) to find what the user changed
//! outside the session, refuses to
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
mod tree;
mod walk;
mod watch;

pub use total::DEFAULT_TOTAL_QUOTA;
pub use walk::EXCLUDED_NAMES;

use cortex_protocol::RewindDiff;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;
use store::Store;
use tree::Tree;
use walk::Scan;
use watch::{Drained, Watcher};

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

/// An entry of the stat index stores kept before trees were stored per
/// folder (`index.json`): the key a file had and its content's object.
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
    /// Its tree's root folder object (`tree`), or its whole manifest's
    /// (records written before trees were stored per folder).
    manifest: String,
    #[serde(default)]
    tree: bool,
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

/// `sealed.json`: the tree as the session last left it.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Sealed {
    /// Its root folder object.
    Tree { tree: String },
    /// Every entry's stat key (stores written before trees were stored
    /// per folder).
    Stats(HashMap<String, StatKey>),
}

/// Every object the records and the seal of `store` hold.
pub(crate) fn reachable(
    store: &Store,
    records: &[Record],
) -> Result<HashSet<String>, CheckpointError> {
    let mut keep = HashSet::new();
    for record in records {
        if record.tree {
            tree::reachable(store, &record.manifest, &mut keep)?;
            continue;
        }
        keep.insert(record.manifest.clone());
        for node in flat_manifest(store, &record.manifest)?.into_values() {
            if let Node::File { object, .. } = node {
                keep.insert(object);
            }
        }
    }
    if let Some(Sealed::Tree { tree }) = store.read_json(&store.json_path("sealed.json"))? {
        tree::reachable(store, &tree, &mut keep)?;
    }
    Ok(keep)
}

/// A manifest stored whole (before trees were stored per folder).
fn flat_manifest(store: &Store, object: &str) -> Result<Manifest, CheckpointError> {
    let bytes = store.read_object(object)?;
    serde_json::from_slice(&bytes).map_err(|e| CheckpointError::Corrupt(e.to_string()))
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
    /// The workspace as the last walk saw it.
    tree: Tree,
    /// A watch on each of the tree's folders; `None`: not watching (yet).
    watcher: Option<Watcher>,
    /// Folders with events not read again yet.
    dirty: BTreeSet<String>,
    /// The tree may differ from the disk in ways no event will tell (the
    /// first walk, events lost, a walk that failed half-way): the next
    /// walk is a full one.
    stale: bool,
    /// Watching failed once: every walk is a full one.
    watch_off: bool,
    /// `index.json` of an older store is still there (removed once a walk
    /// succeeded: it would name objects this store prunes).
    legacy_index: bool,
    /// Content bytes the seal stored since the last checkpoint (reported
    /// with the next one).
    pending_new: u64,
    /// Bytes the store uses, kept up to date after it was measured once
    /// (measuring stats every object, which costs more than a checkpoint
    /// of an unchanged tree); `None`: measure again.
    used: Option<u64>,
    /// The newest record's seq once read.
    seq: Option<u64>,
    /// Walks done: full ones, incremental ones, and folders read by
    /// either (for tests and the benchmark).
    walks: (u64, u64, u64),
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
        let lock = total::try_lock(&root.join(session));
        let (tree, legacy_index) = Self::last_tree(&store);
        Ok(Checkpoints {
            store,
            workspace: workspace.to_path_buf(),
            quota,
            total_quota: DEFAULT_TOTAL_QUOTA,
            _lock: lock,
            tree,
            watcher: None,
            dirty: BTreeSet::new(),
            stale: true,
            watch_off: false,
            legacy_index,
            pending_new: 0,
            used: None,
            seq: None,
            walks: (0, 0, 0),
        })
    }

    /// The tree the store last recorded (the seal, or else the newest
    /// checkpoint), as the first walk's stat index; and whether it came
    /// from an older store's `index.json`. Best effort: an empty tree only
    /// costs reading every file once.
    fn last_tree(store: &Store) -> (Tree, bool) {
        let sealed = match store.read_json(&store.json_path("sealed.json")) {
            Ok(Some(Sealed::Tree { tree })) => Some(tree),
            _ => None,
        };
        let newest = store
            .records()
            .ok()
            .and_then(|r| r.into_iter().next_back())
            .filter(|r| r.tree)
            .map(|r| r.manifest);
        if let Some(root) = sealed.or(newest)
            && let Ok(tree) = tree::load(store, &root)
        {
            return (tree, false);
        }
        let Ok(Some(index)) =
            store.read_json::<HashMap<String, Indexed>>(&store.json_path("index.json"))
        else {
            return (Tree::new(), false);
        };
        let mut tree = Tree::new();
        for (path, indexed) in index {
            let (folder, name) = path.rsplit_once('/').unwrap_or(("", &path));
            let node = Node::File {
                mode: indexed.key.mode & 0o777,
                object: indexed.object,
                size: indexed.key.size,
            };
            let entry = tree::Entry {
                node,
                key: indexed.key,
            };
            tree.entry(folder.to_owned())
                .or_default()
                .entries
                .insert(name.to_owned(), entry);
        }
        (tree, true)
    }

    /// Walks done since this opened: full ones, incremental ones (reading
    /// only the folders with events), and folders read by either.
    pub fn walks(&self) -> (u64, u64, u64) {
        self.walks
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

    /// Every entry checkpoint `record` holds.
    fn manifest(&self, record: &Record) -> Result<Manifest, CheckpointError> {
        if record.tree {
            return Ok(tree::flatten_stored(&self.store, &record.manifest)?.0);
        }
        flat_manifest(&self.store, &record.manifest)
    }

    /// Move the watcher's events into the set of folders to read again.
    fn drain(&mut self) {
        if let Some(watcher) = &mut self.watcher {
            match watcher.drain() {
                Drained::Dirty(dirty) => self.dirty.extend(dirty),
                Drained::Lost => self.stale = true,
            }
        }
    }

    fn scan(&mut self, dry: bool, watched: bool) -> Scan<'_> {
        Scan {
            store: &self.store,
            dry,
            budget: self.quota,
            watcher: if watched { self.watcher.as_mut() } else { None },
            watch_failed: false,
            bytes_new: 0,
            folders: 0,
            new_links: Vec::new(),
        }
    }

    /// Bring the tree up to the workspace, storing new contents; the
    /// content bytes stored.
    fn refresh(&mut self) -> Result<u64, CheckpointError> {
        let refreshed = self.refresh_inner();
        if refreshed.is_err() {
            // What it stored is not counted, and the tree is only a stat
            // index now.
            self.used = None;
            self.stale = true;
        }
        refreshed
    }

    fn refresh_inner(&mut self) -> Result<u64, CheckpointError> {
        self.drain();
        let mut bytes = 0;
        if !self.stale && self.watcher.is_some() {
            let dirty = std::mem::take(&mut self.dirty);
            let workspace = self.workspace.clone();
            let mut tree = std::mem::take(&mut self.tree);
            let mut scan = self.scan(false, true);
            let done = incremental(&mut scan, &workspace, &dirty, &mut tree);
            let (failed, new) = (scan.watch_failed, scan.bytes_new);
            self.walks.2 += scan.folders;
            self.tree = tree;
            bytes += new;
            if failed {
                // The tree is still whole; the next walk is a full one.
                self.stop_watching();
            }
            if done? {
                self.walks.1 += 1;
                return Ok(bytes);
            }
        }
        // A full walk, with new watches.
        self.dirty.clear();
        self.stale = true;
        self.watcher = if self.watch_off { None } else { Watcher::new() };
        let workspace = self.workspace.clone();
        let mut index = std::mem::take(&mut self.tree);
        let mut scan = self.scan(false, true);
        let walked = scan.full(&workspace, &mut index);
        let (failed, new) = (scan.watch_failed, scan.bytes_new);
        self.walks.2 += scan.folders;
        bytes += new;
        if failed {
            self.stop_watching();
        }
        self.walks.0 += 1;
        match walked {
            Ok(tree) => {
                self.tree = tree;
                self.stale = self.watcher.is_none();
                if std::mem::take(&mut self.legacy_index) {
                    let _ = std::fs::remove_file(self.store.json_path("index.json"));
                }
                Ok(bytes)
            }
            Err(e) => {
                // What the walk did not reach still serves as an index.
                self.tree = index;
                Err(e)
            }
        }
    }

    fn stop_watching(&mut self) {
        if !self.watch_off {
            tracing::warn!(
                "the workspace cannot be watched for changes (inotify limit, or a filesystem \
                 inotify does not fully see): every checkpoint walks the whole tree"
            );
        }
        self.watch_off = true;
        self.watcher = None;
        self.stale = true;
    }

    /// The tree as it is now, nothing stored and nothing of `self` changed
    /// but the events drained (they stay to be read).
    fn dry_tree(&mut self) -> Result<Tree, CheckpointError> {
        self.drain();
        let (stale, watching) = (self.stale, self.watcher.is_some());
        let dirty = self.dirty.clone();
        let workspace = self.workspace.clone();
        let mut tree = self.tree.clone();
        let mut scan = self.scan(true, false);
        if !stale && watching && incremental(&mut scan, &workspace, &dirty, &mut tree)? {
            return Ok(tree);
        }
        scan.full(&workspace, &mut tree)
    }

    /// Entries the tree holds.
    fn files(&self) -> u64 {
        self.tree.values().map(|f| f.entries.len() as u64).sum()
    }

    /// The tree's notes: folders excluded by rule and entries skipped.
    fn notes(&self) -> (Vec<String>, Vec<String>) {
        let gather = |pick: fn(&tree::Folder) -> &Vec<String>| {
            let mut all: Vec<String> = self.tree.values().flat_map(pick).cloned().collect();
            all.sort();
            all.truncate(walk::NOTES_CAP);
            all
        };
        (gather(|f| &f.excluded), gather(|f| &f.skipped))
    }

    /// Walk the workspace and store its tree; the content bytes stored
    /// and the root folder object.
    fn store_now(&mut self) -> Result<(u64, String), CheckpointError> {
        let bytes = self.refresh()?;
        let (root, tree_bytes) = match tree::store(&mut self.tree, &self.store) {
            Ok(stored) => stored,
            Err(e) => {
                self.used = None;
                return Err(e);
            }
        };
        if let Some(used) = &mut self.used {
            *used += bytes + tree_bytes;
        }
        Ok((bytes, root))
    }

    /// Checkpoint the workspace as `id` (a turn's id).
    pub fn take(&mut self, id: &str) -> Result<Taken, CheckpointError> {
        let started = Instant::now();
        if !valid_id(id) {
            return Err(CheckpointError::NotFound(id.to_owned()));
        }
        let (bytes, root) = match self.store_now() {
            Ok(stored) => stored,
            Err(e) => {
                // What the failed walk stored belongs to no checkpoint.
                let _ = self.prune(None);
                return Err(e);
            }
        };
        let bytes_new = std::mem::take(&mut self.pending_new) + bytes;
        let files = self.files();
        self.keep(id, &root, files)?;
        let pruned = self.prune(Some(id))?;
        self.note_used()?;
        let pruned_total = self.prune_total(id)?;
        let (excluded, skipped) = self.notes();
        Ok(Taken {
            files,
            bytes_new,
            ms: started.elapsed().as_secs_f64() * 1000.0,
            excluded,
            skipped,
            pruned,
            pruned_total,
        })
    }

    /// Record the stored tree `root` as checkpoint `id`.
    fn keep(&mut self, id: &str, root: &str, files: u64) -> Result<(), CheckpointError> {
        if self.store.read_record(id)?.is_some() {
            // Replaced: its old record's size is not known here.
            self.used = None;
        }
        // The newest record's seq is read once, then counted here (reading
        // every record at each checkpoint costs more than the rest of one
        // of an unchanged tree).
        let newest = match self.seq {
            Some(seq) => seq,
            None => self.store.records()?.last().map_or(0, |r| r.seq),
        };
        let seq = newest + 1;
        self.seq = Some(seq);
        let at = total::taken_at();
        let record_bytes = self.store.write_record(&Record {
            id: id.to_owned(),
            seq,
            manifest: root.to_owned(),
            tree: true,
            files,
            at,
        })?;
        if let Some(used) = &mut self.used {
            *used += record_bytes;
        }
        Ok(())
    }

    /// Note the tree as the session leaves it (a turn's end): what differs
    /// from this at a rewind was changed outside the session. The tree is
    /// stored (its new contents too): the next checkpoint is usually this
    /// very tree.
    pub fn seal(&mut self) -> Result<(), CheckpointError> {
        let (bytes, root) = self.store_now()?;
        self.pending_new += bytes;
        self.store
            .write_json(
                &self.store.json_path("sealed.json"),
                &Sealed::Tree { tree: root },
            )
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
        let sealed = match self.store.read_json(&self.store.json_path("sealed.json"))? {
            None => return Ok(Vec::new()),
            Some(Sealed::Stats(stats)) => stats,
            Some(Sealed::Tree { tree }) => tree::flatten_stored(&self.store, &tree)?.1,
        };
        let mut outside: Vec<String> = diff
            .created
            .iter()
            .chain(&diff.changed)
            .chain(&diff.deleted)
            .filter(|p| stats.get(*p) != sealed.get(*p))
            .cloned()
            .collect();
        outside.sort();
        Ok(outside)
    }

    /// What [`Checkpoints::rewind`] to `id` would do, done to nothing: the
    /// diff it would apply and the paths changed outside the session it
    /// would refuse without `force`. Changed files are hashed, not stored:
    /// the store is left as it was.
    pub fn preview(&mut self, id: &str) -> Result<Preview, CheckpointError> {
        let record = self.record(id)?;
        let target = self.manifest(&record)?;
        let (now, stats) = tree::flatten(&self.dry_tree()?);
        let diff = restore::diff(&target, &now);
        let changed_outside = self.outside(&diff, &stats)?;
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
        let (bytes, root) = self.store_now()?;
        self.pending_new += bytes;
        let (now, stats) = tree::flatten(&self.tree);
        let diff = restore::diff(&target, &now);
        if diff.is_empty() {
            return Ok(Restored::default());
        }
        let outside = self.outside(&diff, &stats)?;
        if !outside.is_empty() && !force {
            // What the walk stored belongs to no checkpoint.
            let _ = self.prune(None);
            return Err(CheckpointError::Conflict(outside));
        }
        let undo = format!("undo-{}", crate::new_id());
        let files = self.files();
        self.keep(&undo, &root, files)?;
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

/// Read again every folder in `dirty` and every folder holding a file with
/// more than one link (parents before what they hold); `Ok(false)`: the
/// tree is not what it should be, a full walk is needed.
fn incremental(
    scan: &mut Scan<'_>,
    workspace: &Path,
    dirty: &BTreeSet<String>,
    tree: &mut Tree,
) -> Result<bool, CheckpointError> {
    let mut todo = dirty.clone();
    todo.extend(
        tree.iter()
            .filter(|(_, f)| f.linked)
            .map(|(path, _)| path.clone()),
    );
    if todo.is_empty() {
        return Ok(true);
    }
    let root = crate::copy::open_root(workspace).map_err(|e| CheckpointError::Io(e.to_string()))?;
    for path in &todo {
        if !scan.relist(&root, path, tree)? {
            return Ok(false);
        }
    }
    // A file that gained a link (its ctime changed) may have its other
    // name in a folder with no event: those folders are read too, and
    // from then on at every checkpoint (they are `linked`).
    while !scan.new_links.is_empty() {
        let links: HashSet<(u64, u64)> = scan.new_links.drain(..).collect();
        let others: BTreeSet<String> = tree
            .iter()
            .filter(|(_, f)| {
                !f.linked
                    && f.entries
                        .values()
                        .any(|e| e.key.kind == 'f' && links.contains(&(e.key.dev, e.key.ino)))
            })
            .map(|(path, _)| path.clone())
            .collect();
        for path in &others {
            if !scan.relist(&root, path, tree)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod watch_tests;
