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
//! A regular file whose stat key (size, mtime, ctime, inode, device, mode)
//! matches the stat index is not read again: an unchanged tree costs one
//! `statat` per entry.

use super::store::Store;
use super::{CheckpointError, Indexed, Manifest, Node, StatKey};
use crate::copy::{MAX_DEPTH, open_dir, open_root};
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Folder names a checkpoint leaves out at any depth (besides `.git`).
pub const EXCLUDED_NAMES: &[&str] = &["node_modules", "target", ".venv", "__pycache__"];

/// Notes kept per list in an event.
const NOTES_CAP: usize = 20;

/// What one walk found.
#[derive(Default)]
pub(crate) struct Walked {
    /// Every entry with its content's object (only when hashing).
    pub(crate) manifest: Manifest,
    /// Every entry's stat key (for the user-change check).
    pub(crate) stats: HashMap<String, StatKey>,
    /// The stat index after this walk (only when hashing).
    pub(crate) index: HashMap<String, Indexed>,
    pub(crate) excluded: Vec<String>,
    pub(crate) skipped: Vec<String>,
    /// Content bytes stored that were not there before.
    pub(crate) bytes_new: u64,
}

/// How to walk: with the store (hash and keep content) or stat only.
pub(crate) struct Walker<'a> {
    /// Where content goes; `None` walks stat keys only.
    pub(crate) store: Option<&'a Store>,
    /// The previous stat index: files whose key matches are not read.
    pub(crate) index: &'a HashMap<String, Indexed>,
    /// Give up once this many new bytes were stored (the quota).
    pub(crate) budget: u64,
    /// Keep every entry's stat key in [`Walked::stats`].
    pub(crate) stats: bool,
    /// Hash changed files without storing them (a rewind's preview: it
    /// must leave the store as it was).
    pub(crate) dry: bool,
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

impl Walker<'_> {
    /// Walk the tree under `root`.
    pub(crate) fn walk(&self, root: &Path) -> Result<Walked, CheckpointError> {
        let fd = open_root(root).map_err(|e| CheckpointError::Io(e.to_string()))?;
        let mut walked = Walked::default();
        self.dir(&fd, "", 0, &mut walked)?;
        Ok(walked)
    }

    fn dir(
        &self,
        fd: &OwnedFd,
        prefix: &str,
        depth: usize,
        walked: &mut Walked,
    ) -> Result<(), CheckpointError> {
        let shown = if prefix.is_empty() { "." } else { prefix };
        // Names first, so no directory stream stays open while we descend.
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
        for name in names {
            let Some(text) = name.to_str() else {
                note(
                    &mut walked.skipped,
                    format!("{prefix}/{}: not UTF-8", name.to_string_lossy()),
                );
                continue;
            };
            let path = if prefix.is_empty() {
                text.to_owned()
            } else {
                format!("{prefix}/{text}")
            };
            if excluded_name(&name) {
                if name != ".git" {
                    note(&mut walked.excluded, path);
                }
                continue;
            }
            self.entry(fd.as_fd(), &name, path, depth, walked)?;
        }
        Ok(())
    }

    fn entry(
        &self,
        parent: BorrowedFd<'_>,
        name: &OsStr,
        path: String,
        depth: usize,
        walked: &mut Walked,
    ) -> Result<(), CheckpointError> {
        let stat = match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            // Gone since the folder was read (something still runs).
            Err(rustix::io::Errno::NOENT) => return Ok(()),
            Err(e) => return Err(io(&path, e)),
        };
        let key = key_of(&stat);
        let mode = stat.st_mode & 0o777;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory if depth + 1 > MAX_DEPTH => {
                note(
                    &mut walked.skipped,
                    format!("{path}: deeper than {MAX_DEPTH} folders"),
                );
            }
            FileType::Directory => {
                let fd = match open_dir(parent, name) {
                    Ok(fd) => fd,
                    Err(rustix::io::Errno::NOENT) => return Ok(()),
                    // A folder the model made unreadable costs that folder,
                    // not every later checkpoint.
                    Err(e @ (rustix::io::Errno::ACCESS | rustix::io::Errno::PERM)) => {
                        note(
                            &mut walked.skipped,
                            format!("{path}: {}", std::io::Error::from(e)),
                        );
                        return Ok(());
                    }
                    Err(e) => return Err(io(&path, e)),
                };
                if self.stats {
                    walked.stats.insert(path.clone(), key);
                }
                walked.manifest.insert(path.clone(), Node::Dir { mode });
                self.dir(&fd, &path, depth + 1, walked)?;
            }
            FileType::Symlink => {
                let target =
                    rustix::fs::readlinkat(parent, name, Vec::new()).map_err(|e| io(&path, e))?;
                let Ok(target) = String::from_utf8(target.into_bytes()) else {
                    note(
                        &mut walked.skipped,
                        format!("{path}: link target not UTF-8"),
                    );
                    return Ok(());
                };
                if self.stats {
                    walked.stats.insert(path.clone(), key);
                }
                walked.manifest.insert(path, Node::Link { target });
            }
            FileType::RegularFile => {
                if self.stats {
                    walked.stats.insert(path.clone(), key);
                }
                let Some(store) = self.store else {
                    return Ok(());
                };
                let object = match self.index.get(&path) {
                    // The index never names an object the store pruned (`prune`
                    // drops those entries).
                    Some(indexed) if indexed.key == key => indexed.object.clone(),
                    _ => {
                        let (object, new) = match self.store_file(store, parent, name, &path)? {
                            Stored::Done(object, new) => (object, new),
                            Stored::Gone => return Ok(()),
                            // A file the model made unreadable is left out
                            // (a rewind leaves it alone), with a note.
                            Stored::Unreadable(why) => {
                                note(&mut walked.skipped, format!("{path}: {why}"));
                                return Ok(());
                            }
                        };
                        walked.bytes_new += new;
                        if walked.bytes_new > self.budget {
                            return Err(CheckpointError::OverQuota {
                                needed: walked.bytes_new,
                                quota: self.budget,
                            });
                        }
                        object
                    }
                };
                walked.index.insert(
                    path.clone(),
                    Indexed {
                        key,
                        object: object.clone(),
                    },
                );
                walked.manifest.insert(
                    path,
                    Node::File {
                        mode,
                        object,
                        size: key.size,
                    },
                );
            }
            special => note(
                &mut walked.skipped,
                format!("{path}: {}", crate::copy::special_kind(special)),
            ),
        }
        Ok(())
    }

    /// Store the content of the regular file `name`.
    fn store_file(
        &self,
        store: &Store,
        parent: BorrowedFd<'_>,
        name: &OsStr,
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
        store
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
