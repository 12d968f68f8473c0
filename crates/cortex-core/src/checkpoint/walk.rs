//! Walking the workspace for a checkpoint, no link ever followed.
//!
//! The walk runs on directory descriptors (`openat` with `O_NOFOLLOW`,
//! `statat` without following), as `copy.rs` does: a symlink is recorded as
//! a link (its target text), a regular file by its content's sha256, a
//! folder by its mode. What a checkpoint leaves out, by rule:
//! - `.git` at any depth: repository metadata is protected (read-only in the
//!   guest, quarantined when a turn makes it), and a rewind never touches it;
//! - the heavy, regenerable folders of [`EXCLUDED_NAMES`] (`node_modules`,
//!   `target`, …) at any depth, each named in the `checkpoint.taken` event:
//!   copying them every turn would spend the quota on what a build or an
//!   install makes again;
//! - sockets, FIFOs and devices, names that are not UTF-8, and folders deeper
//!   than [`crate::copy::MAX_DEPTH`], each with a note.
//!
//! Excluded and skipped entries are left as they are by a rewind, in both
//! directions: never deleted, never brought back.
//!
//! Two walks: a full one ([`Scan::full`]) reads every folder, adding a
//! watch on each before reading it (`watch.rs`); an incremental one
//! ([`Scan::relist`]) reads again only a folder with events since, and
//! walks in full what is new in it. Either way a regular file whose stat
//! key (size, mtime, ctime, inode, device, mode) is the one it had is not
//! read again.

use super::store::Store;
use super::tree::{Entry, Folder, Tree, child, parent};
use super::watch::{Watcher, local};
use super::{CheckpointError, Node, StatKey};
use crate::copy::{MAX_DEPTH, open_dir, open_root};
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Folder names a checkpoint leaves out at any depth (besides `.git`).
pub const EXCLUDED_NAMES: &[&str] = &["node_modules", "target", ".venv", "__pycache__"];

/// Notes kept per folder.
pub(crate) const NOTES_CAP: usize = 20;

/// One walk: where contents go, and the watches it adds.
pub(crate) struct Scan<'a> {
    pub(crate) store: &'a Store,
    /// Hash changed files without storing them (a rewind's preview: it
    /// must leave the store as it was).
    pub(crate) dry: bool,
    /// Give up once this many new bytes were stored (the quota).
    pub(crate) budget: u64,
    /// Where the folders walked are watched; `None`: not watched.
    pub(crate) watcher: Option<&'a mut Watcher>,
    /// A watch could not be added: the caller stops watching.
    pub(crate) watch_failed: bool,
    /// Content bytes stored that were not there before.
    pub(crate) bytes_new: u64,
    /// Folders read.
    pub(crate) folders: u64,
    /// Files with more than one link whose stat key changed (a link was
    /// made, or they were written): their other names may be in folders
    /// with no event.
    pub(crate) new_links: Vec<(u64, u64)>,
}

/// Whether a folder entry named `name` is left out by rule.
pub(crate) fn excluded_name(name: &OsStr) -> bool {
    name == ".git" || EXCLUDED_NAMES.iter().any(|n| name == *n)
}

fn io(path: &str, e: rustix::io::Errno) -> CheckpointError {
    CheckpointError::Io(format!("{path}: {}", std::io::Error::from(e)))
}

// The stat fields' integer types differ between targets: the conversions
// are identities on some, widenings on others.
#[allow(clippy::useless_conversion)]
pub(crate) fn key_of(stat: &rustix::fs::Stat) -> StatKey {
    let kind = FileType::from_raw_mode(stat.st_mode);
    let mode = stat.st_mode & 0o7777;
    if kind == FileType::Directory {
        // A folder's times change with its entries, which are compared
        // one by one: only its mode is its own.
        return StatKey {
            kind: 'd',
            mode,
            ..StatKey::default()
        };
    }
    StatKey {
        kind: if kind == FileType::Symlink { 'l' } else { 'f' },
        mode,
        size: u64::try_from(stat.st_size).unwrap_or(0),
        mtime: i64::from(stat.st_mtime),
        mtime_ns: u64::from(stat.st_mtime_nsec),
        ctime: i64::from(stat.st_ctime),
        ctime_ns: u64::from(stat.st_ctime_nsec),
        ino: u64::from(stat.st_ino),
        dev: u64::from(stat.st_dev),
    }
}

#[allow(clippy::useless_conversion)]
fn id_of(stat: &rustix::fs::Stat) -> (u64, u64) {
    (u64::from(stat.st_dev), u64::from(stat.st_ino))
}

/// Depth of the folder at `path` (the root's is 0).
fn depth_of(path: &str) -> usize {
    if path.is_empty() {
        0
    } else {
        path.matches('/').count() + 1
    }
}

/// What reading one folder found besides its entries: its subfolders'
/// device and inode.
struct Listed {
    folder: Folder,
    dirs: Vec<(String, (u64, u64))>,
}

impl Scan<'_> {
    /// Walk the whole tree under `root`; `index` (the tree as it was) only
    /// says which files need not be read again.
    pub(crate) fn full(&mut self, root: &Path, index: &mut Tree) -> Result<Tree, CheckpointError> {
        let fd = open_root(root).map_err(|e| CheckpointError::Io(e.to_string()))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| io(".", e))?;
        let mut tree = Tree::new();
        self.walk_new(fd, String::new(), id_of(&stat), None, index, &mut tree)?;
        Ok(tree)
    }

    /// Read again the folder at `path` of `tree` (it had events), and walk
    /// in full what is new in it. `Ok(false)`: the folder is not where the
    /// tree has it (a full walk is needed).
    pub(crate) fn relist(
        &mut self,
        root: &OwnedFd,
        path: &str,
        tree: &mut Tree,
    ) -> Result<bool, CheckpointError> {
        let Some(old) = tree.get(path) else {
            // Gone with a folder above it, or never walked (left out).
            return Ok(true);
        };
        if self.watcher.as_deref().is_some_and(|w| !w.watches(path)) {
            // Deleted and made again, yet its parent, which would have
            // walked it anew, had no event: not what we know.
            return Ok(false);
        }
        let mut fd = rustix::io::dup(root).map_err(|e| io(path, e))?;
        if !path.is_empty() {
            for part in path.split('/') {
                fd = match open_dir(fd.as_fd(), OsStr::new(part)) {
                    Ok(fd) => fd,
                    Err(_) => return Ok(false),
                };
            }
        }
        let stat = rustix::fs::fstat(&fd).map_err(|e| io(path, e))?;
        if id_of(&stat) != old.id {
            return Ok(false);
        }
        let listed = self.list(&fd, path, Some(old))?;
        let Some(old) = tree.remove(path) else {
            return Ok(true);
        };
        let Listed { mut folder, dirs } = listed;
        folder.id = old.id;
        let mut changed = folder.entries != old.entries;
        let mut index = Tree::new();
        // Folders gone, or replaced by another one: forgotten with all
        // they held (and no longer watched).
        for (name, entry) in &old.entries {
            if !matches!(entry.node, Node::Dir { .. }) {
                continue;
            }
            let at = child(path, name);
            let now = dirs.iter().find(|(n, _)| n == name).map(|(_, id)| *id);
            // The same folder: same mode, same inode, and still watched
            // (a folder deleted and made again can get the inode number
            // back, not the watch).
            let kept = folder.entries.get(name) == Some(entry)
                && tree.get(&at).is_some_and(|f| Some(f.id) == now)
                && self.watcher.as_deref().is_none_or(|w| w.watches(&at));
            if !kept {
                self.forget(&at, tree, &mut index);
                changed = true;
            }
        }
        // Folders new here: walked in full.
        for (name, id) in dirs {
            let at = child(path, &name);
            if tree.contains_key(&at) {
                continue;
            }
            changed = true;
            self.open_child(&fd, &name, at, id, old.id.0, &mut folder, &mut index, tree)?;
        }
        folder.object = if changed { None } else { old.object };
        tree.insert(path.to_owned(), folder);
        if changed {
            let mut up = parent(path);
            while let Some(at) = up {
                if let Some(f) = tree.get_mut(at) {
                    f.object = None;
                }
                up = parent(at);
            }
        }
        Ok(true)
    }

    /// Remove the folder at `path` and everything under it from `tree`
    /// into `index`, unwatched.
    fn forget(&mut self, path: &str, tree: &mut Tree, index: &mut Tree) {
        let Some(folder) = tree.remove(path) else {
            return;
        };
        if let Some(watcher) = self.watcher.as_deref_mut() {
            watcher.remove(path);
        }
        for (name, entry) in &folder.entries {
            if matches!(entry.node, Node::Dir { .. }) {
                self.forget(&child(path, name), tree, index);
            }
        }
        index.insert(path.to_owned(), folder);
    }

    /// Open the subfolder `name` of `parent_fd` and walk it in full; when
    /// it cannot be opened it is left out of `folder` (with a note when
    /// that is not because it went away).
    #[allow(clippy::too_many_arguments)]
    fn open_child(
        &mut self,
        parent_fd: &OwnedFd,
        name: &str,
        at: String,
        id: (u64, u64),
        parent_dev: u64,
        folder: &mut Folder,
        index: &mut Tree,
        tree: &mut Tree,
    ) -> Result<(), CheckpointError> {
        match open_dir(parent_fd.as_fd(), OsStr::new(name)) {
            Ok(fd) => {
                let dev = (id.0 != parent_dev).then_some(id.0);
                self.walk_new(fd, at, id, dev, index, tree)
            }
            Err(rustix::io::Errno::NOENT) => {
                folder.entries.remove(name);
                Ok(())
            }
            // A folder the model made unreadable costs that folder, not
            // every later checkpoint.
            Err(e @ (rustix::io::Errno::ACCESS | rustix::io::Errno::PERM)) => {
                folder.entries.remove(name);
                note(
                    &mut folder.skipped,
                    format!("{at}: {}", std::io::Error::from(e)),
                );
                Ok(())
            }
            Err(e) => Err(io(&at, e)),
        }
    }

    /// Walk in full the folder open as `fd` at `path` into `tree`: watched
    /// first, then read. `new_dev`: it is on another filesystem than its
    /// parent (or is the root), whose kind decides whether it is watched.
    fn walk_new(
        &mut self,
        fd: OwnedFd,
        path: String,
        id: (u64, u64),
        new_dev: Option<u64>,
        index: &mut Tree,
        tree: &mut Tree,
    ) -> Result<(), CheckpointError> {
        if path.is_empty() || new_dev.is_some() {
            self.watch_failed |= self.watcher.is_some() && !local(fd.as_fd());
        }
        if !self.watch_failed
            && let Some(watcher) = self.watcher.as_deref_mut()
            && !watcher.add(fd.as_fd(), &path)
        {
            self.watch_failed = true;
        }
        let old = index.remove(&path);
        let Listed { mut folder, dirs } = self.list(&fd, &path, old.as_ref())?;
        folder.id = id;
        let mut all_kept = true;
        for (name, child_id) in dirs {
            let at = child(&path, &name);
            self.open_child(
                &fd,
                &name,
                at.clone(),
                child_id,
                id.0,
                &mut folder,
                index,
                tree,
            )?;
            all_kept &= tree.get(&at).is_none_or(|f| f.object.is_some());
        }
        // Nothing in it or under it changed: its stored object still holds.
        folder.object = match old {
            Some(old) if all_kept && old.entries == folder.entries => old.object,
            _ => None,
        };
        tree.insert(path, folder);
        Ok(())
    }

    /// Read the folder open as `fd` at `path`: every entry, contents
    /// stored for files whose stat key is not the one in `old`.
    fn list(
        &mut self,
        fd: &OwnedFd,
        path: &str,
        old: Option<&Folder>,
    ) -> Result<Listed, CheckpointError> {
        self.folders += 1;
        let shown = if path.is_empty() { "." } else { path };
        // Names first, so no directory stream stays open while we read.
        let mut names: Vec<OsString> = Vec::new();
        let mut stream = Dir::read_from(fd).map_err(|e| io(shown, e))?;
        while let Some(entry) = stream.read() {
            let entry = entry.map_err(|e| io(shown, e))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name != "." && name != ".." {
                names.push(name.to_owned());
            }
        }
        drop(stream);
        names.sort();
        let mut listed = Listed {
            folder: Folder::default(),
            dirs: Vec::new(),
        };
        let depth = depth_of(path);
        for name in names {
            let Some(text) = name.to_str() else {
                note(
                    &mut listed.folder.skipped,
                    format!("{}: not UTF-8", child(path, &name.to_string_lossy())),
                );
                continue;
            };
            let at = child(path, text);
            if excluded_name(&name) {
                if name != ".git" {
                    note(&mut listed.folder.excluded, at);
                }
                continue;
            }
            let previous = old.and_then(|f| f.entries.get(text));
            self.entry(fd.as_fd(), text, at, depth, previous, &mut listed)?;
        }
        Ok(listed)
    }

    fn entry(
        &mut self,
        parent: BorrowedFd<'_>,
        name: &str,
        path: String,
        depth: usize,
        previous: Option<&Entry>,
        listed: &mut Listed,
    ) -> Result<(), CheckpointError> {
        let stat = match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            // Gone since the folder was read (something still runs).
            Err(rustix::io::Errno::NOENT) => return Ok(()),
            Err(e) => return Err(io(&path, e)),
        };
        let key = key_of(&stat);
        let mode = stat.st_mode & 0o777;
        let folder = &mut listed.folder;
        let node = match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory if depth + 1 > MAX_DEPTH => {
                note(
                    &mut folder.skipped,
                    format!("{path}: deeper than {MAX_DEPTH} folders"),
                );
                return Ok(());
            }
            FileType::Directory => {
                listed.dirs.push((name.to_owned(), id_of(&stat)));
                Node::Dir { mode }
            }
            FileType::Symlink => {
                let target = match rustix::fs::readlinkat(parent, name, Vec::new()) {
                    Ok(target) => target,
                    // Replaced since its stat.
                    Err(rustix::io::Errno::NOENT | rustix::io::Errno::INVAL) => return Ok(()),
                    Err(e) => return Err(io(&path, e)),
                };
                let Ok(target) = String::from_utf8(target.into_bytes()) else {
                    note(
                        &mut folder.skipped,
                        format!("{path}: link target not UTF-8"),
                    );
                    return Ok(());
                };
                Node::Link { target }
            }
            FileType::RegularFile => {
                if stat.st_nlink > 1 {
                    folder.linked = true;
                    if previous.is_none_or(|p| p.key != key) {
                        self.new_links.push(id_of(&stat));
                    }
                }
                let object = match previous {
                    Some(Entry {
                        node: Node::File { object, .. },
                        key: known,
                    }) if *known == key => object.clone(),
                    _ => match self.store_file(parent, name, &path)? {
                        Stored::Done(object, new) => {
                            self.bytes_new += new;
                            if self.bytes_new > self.budget {
                                return Err(CheckpointError::OverQuota {
                                    needed: self.bytes_new,
                                    quota: self.budget,
                                });
                            }
                            object
                        }
                        Stored::Gone => return Ok(()),
                        // A file the model made unreadable is left out (a
                        // rewind leaves it alone), with a note.
                        Stored::Unreadable(why) => {
                            note(&mut listed.folder.skipped, format!("{path}: {why}"));
                            return Ok(());
                        }
                    },
                };
                Node::File {
                    mode,
                    object,
                    size: key.size,
                }
            }
            special => {
                note(
                    &mut folder.skipped,
                    format!("{path}: {}", crate::copy::special_kind(special)),
                );
                return Ok(());
            }
        };
        listed
            .folder
            .entries
            .insert(name.to_owned(), Entry { node, key });
        Ok(())
    }

    /// Store the content of the regular file `name`.
    fn store_file(
        &self,
        parent: BorrowedFd<'_>,
        name: &str,
        path: &str,
    ) -> Result<Stored, CheckpointError> {
        let fd = match rustix::fs::openat(
            parent,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => return Ok(Stored::Gone),
            Err(e @ (rustix::io::Errno::ACCESS | rustix::io::Errno::PERM)) => {
                return Ok(Stored::Unreadable(std::io::Error::from(e).to_string()));
            }
            Err(e) => return Err(io(path, e)),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| io(path, e))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Ok(Stored::Gone);
        }
        let file = std::fs::File::from(fd);
        if self.dry {
            return super::store::hash_reader(file)
                .map(|object| Stored::Done(object, 0))
                .map_err(|e| CheckpointError::Io(format!("{path}: {e}")));
        }
        self.store
            .put_reader(file)
            .map(|(object, new)| Stored::Done(object, new))
            .map_err(|e| CheckpointError::Io(format!("{path}: {e}")))
    }
}

/// What storing one file came to.
enum Stored {
    /// Its object, and the bytes it added to the store.
    Done(String, u64),
    /// No longer a regular file (replaced or removed since its stat).
    Gone,
    /// It cannot be read (its mode), and why.
    Unreadable(String),
}

fn note(list: &mut Vec<String>, text: String) {
    if list.len() < NOTES_CAP {
        list.push(text);
    }
}
