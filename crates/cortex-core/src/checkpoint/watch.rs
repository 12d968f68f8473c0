//! Which folders changed since the last walk, from inotify.
//!
//! Every folder a walk reads gets a watch (added on the descriptor the walk
//! opened, through `/proc/self/fd`, so it is on that very folder and no
//! link is followed), and a checkpoint reads again only the folders with
//! events since. A watch is on the inode, so a change made through any
//! path to it is reported: by the guest in its own mount namespace, by a
//! child process, by the user's editor.
//!
//! Whatever makes the list of changed folders doubtful makes the next walk
//! a full one ([`Drained::Lost`]): the queue overflowed, a watched
//! filesystem was unmounted, a watch went away without its folder being
//! deleted, or the root itself moved. Watching stops for the session (every
//! walk is a full one) when a watch cannot be added: the user's limit
//! (`fs.inotify.max_user_watches`; we take at most half of it, leaving the
//! rest to the user's other tools), or a filesystem where inotify does not
//! see every change (network and FUSE filesystems: only the local ones of
//! [`LOCAL_FILESYSTEMS`] are watched).
//!
//! What inotify cannot report, the walk makes up for where it can: a file
//! with more than one link can be written through a name in another folder,
//! so the folders holding such files are read at every checkpoint
//! (`Folder::linked`), and a file that gains a link inside the workspace
//! has the folders of its other names read as well. Not seen until the
//! next full walk: a hard link made from outside the workspace (by the
//! user on the host: the guest writes nowhere else on the workspace's
//! filesystem) to a file that had one, then written through. A write
//! through a shared memory map is reported when the map is released (the
//! file's last close), not before.

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

/// Filesystems (`statfs` magic numbers) where every change to a watched
/// folder is seen by inotify: local ones. ext2/3/4, XFS, Btrfs, tmpfs,
/// F2FS, ZFS, bcachefs.
pub(crate) const LOCAL_FILESYSTEMS: &[u64] = &[
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0x0102_1994,
    0xF2F5_2010,
    0x2FC1_2FC1,
    0xCA45_1A4E,
];

/// The most watches taken when the user's limit cannot be read.
const DEFAULT_CAP: usize = 8192;

/// What happened since the last drain.
pub(crate) enum Drained {
    /// The folders with events (their paths; `""` is the root).
    Dirty(BTreeSet<String>),
    /// Events may have been missed: walk everything.
    Lost,
}

/// One inotify instance with a watch on every folder walked.
pub(crate) struct Watcher {
    fd: OwnedFd,
    by_wd: HashMap<i32, String>,
    by_path: HashMap<String, i32>,
    /// Watches whose folder was deleted (`IN_DELETE_SELF`): their
    /// `IN_IGNORED` is expected.
    deleted: HashSet<i32>,
    cap: usize,
}

fn mask() -> WatchFlags {
    WatchFlags::MODIFY
        | WatchFlags::ATTRIB
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::ONLYDIR
        // A file unlinked while still open is no longer in the tree.
        | WatchFlags::EXCL_UNLINK
}

/// Whether inotify sees every change on the filesystem of `dir`.
pub(crate) fn local(dir: BorrowedFd<'_>) -> bool {
    rustix::fs::fstatfs(dir).is_ok_and(|s| {
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        let magic = s.f_type as u64;
        LOCAL_FILESYSTEMS.contains(&magic)
    })
}

impl Watcher {
    /// A new instance; `None` when inotify is unavailable (the limit of
    /// instances reached).
    pub(crate) fn new() -> Option<Watcher> {
        let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()?;
        let cap = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .map_or(DEFAULT_CAP, |max| max / 2);
        Some(Watcher {
            fd,
            by_wd: HashMap::new(),
            by_path: HashMap::new(),
            deleted: HashSet::new(),
            cap,
        })
    }

    /// Watch the folder open as `dir`, at `path`; `false` when it cannot be
    /// watched (the caller stops watching).
    pub(crate) fn add(&mut self, dir: BorrowedFd<'_>, path: &str) -> bool {
        if self.by_path.len() >= self.cap {
            return false;
        }
        // The descriptor's own folder: `/proc/self/fd/N` names what was
        // opened, not a path that could have been swapped for a link.
        let at = format!("/proc/self/fd/{}", dir.as_raw_fd());
        let Ok(wd) = inotify::add_watch(&self.fd, at.as_str(), mask()) else {
            return false;
        };
        // The same folder under a new path (it was moved): the watch is
        // the inode's, it now reports for the new path.
        if let Some(old) = self.by_wd.insert(wd, path.to_owned())
            && old != path
            && self.by_path.get(&old) == Some(&wd)
        {
            self.by_path.remove(&old);
        }
        self.by_path.insert(path.to_owned(), wd);
        true
    }

    /// Whether the folder at `path` has a live watch. One whose watch went
    /// with its folder (deleted) but that is there again was made anew,
    /// possibly with the same inode number.
    pub(crate) fn watches(&self, path: &str) -> bool {
        self.by_path.contains_key(path)
    }

    /// Stop watching the folder at `path` (gone from the tree).
    pub(crate) fn remove(&mut self, path: &str) {
        let Some(wd) = self.by_path.remove(path) else {
            return;
        };
        if self.by_wd.get(&wd).is_some_and(|p| p == path) {
            self.by_wd.remove(&wd);
            // Already gone with its folder is fine.
            let _ = inotify::remove_watch(&self.fd, wd);
        }
    }

    /// Every event since the last drain, as folders to read again.
    pub(crate) fn drain(&mut self) -> Drained {
        let mut dirty = BTreeSet::new();
        let mut lost = false;
        let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(rustix::io::Errno::AGAIN) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return Drained::Lost,
            };
            let flags = event.events();
            if flags.intersects(ReadFlags::QUEUE_OVERFLOW | ReadFlags::UNMOUNT) {
                lost = true;
                continue;
            }
            let wd = event.wd();
            if flags.contains(ReadFlags::IGNORED) {
                // A watch we removed is no longer in `by_wd`; one whose
                // folder was deleted is expected; any other went away for
                // a reason we did not see.
                if !self.deleted.remove(&wd) && self.by_wd.contains_key(&wd) {
                    lost = true;
                }
                if let Some(path) = self.by_wd.remove(&wd)
                    && self.by_path.get(&path) == Some(&wd)
                {
                    self.by_path.remove(&path);
                }
                continue;
            }
            let Some(path) = self.by_wd.get(&wd) else {
                continue;
            };
            if flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF) {
                if path.is_empty() {
                    // The workspace itself moved or went.
                    lost = true;
                }
                if flags.contains(ReadFlags::DELETE_SELF) {
                    self.deleted.insert(wd);
                }
                if let Some(up) = super::tree::parent(path) {
                    dirty.insert(up.to_owned());
                }
            }
            dirty.insert(path.clone());
        }
        if lost {
            Drained::Lost
        } else {
            Drained::Dirty(dirty)
        }
    }
}
