//! Putting a checkpoint's tree back, never through a link.
//!
//! The workspace may hold anything the model left there, including a folder
//! replaced by a symlink to somewhere outside it. Every write here starts
//! from the workspace's own descriptor and goes down one component at a
//! time with `openat(O_NOFOLLOW | O_DIRECTORY)` (`copy::ensure_dir`): a
//! component that is a link or a file where the checkpoint has a folder is
//! removed (the link itself, never what it names) and made a real folder,
//! so nothing is ever created, written or removed outside the workspace. A
//! file is written to a new name in its folder (`O_CREAT | O_EXCL |
//! O_NOFOLLOW`) and renamed over the old one, which replaces a link or a
//! hard link rather than writing through it.
//!
//! Only the paths of the diff are touched; what the walk leaves out
//! (`.git`, the excluded folders, special files) stays as it is.

use super::store::Store;
use super::{CheckpointError, Manifest, Node};
use crate::copy::{ensure_dir, open_dir, open_root, remove_entry};
use cortex_protocol::RewindDiff;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::OsStr;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

/// What going from `current` to `target` creates, changes and deletes.
pub(crate) fn diff(target: &Manifest, current: &Manifest) -> RewindDiff {
    let mut diff = RewindDiff::default();
    for (path, node) in target {
        match current.get(path) {
            None => diff.created.push(path.clone()),
            Some(now) if now != node => diff.changed.push(path.clone()),
            Some(_) => {}
        }
    }
    diff.deleted = current
        .keys()
        .filter(|p| !target.contains_key(*p))
        .cloned()
        .collect();
    diff
}

fn io(path: &str, e: impl Into<std::io::Error>) -> CheckpointError {
    CheckpointError::Io(format!("{path}: {}", e.into()))
}

/// Split `path` (as the walk wrote it) into its folders and its name;
/// `None` for anything but plain names.
fn split(path: &str) -> Option<(Vec<&str>, &str)> {
    let mut parts: Vec<&str> = path.split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == ".." || p.contains('\0'))
    {
        return None;
    }
    let name = parts.pop()?;
    Some((parts, name))
}

/// The folder `parts` below `root`, made real where it is not (a link or a
/// file in its place is removed first).
fn make_parent(root: &OwnedFd, parts: &[&str], shown: &str) -> Result<OwnedFd, CheckpointError> {
    let mut fd = rustix::io::dup(root).map_err(|e| io(shown, e))?;
    for part in parts {
        fd =
            ensure_dir(fd.as_fd(), OsStr::new(part), Path::new(shown)).map_err(|e| io(shown, e))?;
    }
    Ok(fd)
}

/// The folder `parts` below `root` if every component is a real folder.
fn existing_parent(root: &OwnedFd, parts: &[&str]) -> Option<OwnedFd> {
    let mut fd = rustix::io::dup(root).ok()?;
    for part in parts {
        fd = open_dir(fd.as_fd(), OsStr::new(part)).ok()?;
    }
    Some(fd)
}

/// Apply the diff from `current` to `target` under `root`.
pub(crate) fn apply(
    root: &Path,
    store: &Store,
    target: &Manifest,
    diff: &RewindDiff,
) -> Result<(), CheckpointError> {
    let root = open_root(root).map_err(|e| CheckpointError::Io(e.to_string()))?;
    // Children before their folders.
    let mut deleted: Vec<&String> = diff.deleted.iter().collect();
    deleted.sort_by(|a, b| b.cmp(a));
    for path in deleted {
        let Some((parts, name)) = split(path) else {
            continue;
        };
        // A folder on the way that is no longer a real folder: what was
        // under it is not reachable inside the workspace any more.
        if let Some(parent) = existing_parent(&root, &parts) {
            remove_entry(parent.as_fd(), OsStr::new(name), Path::new(path), 0)
                .map_err(|e| io(path, e))?;
        }
    }
    // Folders before what they hold.
    let mut written: Vec<&String> = diff.created.iter().chain(&diff.changed).collect();
    written.sort();
    let mut folders = Vec::new();
    for path in written {
        let (Some((parts, name)), Some(node)) = (split(path), target.get(path)) else {
            continue;
        };
        let parent = make_parent(&root, &parts, path)?;
        let name = OsStr::new(name);
        match node {
            Node::Dir { mode } => {
                ensure_dir(parent.as_fd(), name, Path::new(path)).map_err(|e| io(path, e))?;
                folders.push((path, *mode));
            }
            Node::File { mode, object, .. } => {
                write_file(store, &parent, name, path, object, *mode)?;
            }
            Node::Link { target } => {
                remove_entry(parent.as_fd(), name, Path::new(path), 0).map_err(|e| io(path, e))?;
                rustix::fs::symlinkat(target.as_str(), parent.as_fd(), name)
                    .map_err(|e| io(path, e))?;
            }
        }
    }
    // Modes last, deepest first, so a read-only folder is made so after
    // everything inside it was written.
    folders.sort_by(|a, b| b.0.cmp(a.0));
    for (path, mode) in folders {
        if let Some((parts, name)) = split(path)
            && let Some(parent) = existing_parent(&root, &parts)
        {
            let fd = open_dir(parent.as_fd(), OsStr::new(name)).map_err(|e| io(path, e))?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode & 0o777)).map_err(|e| io(path, e))?;
        }
    }
    Ok(())
}

/// Write object `object` as `name` in `parent`, replacing whatever is there.
fn write_file(
    store: &Store,
    parent: &OwnedFd,
    name: &OsStr,
    path: &str,
    object: &str,
    mode: u32,
) -> Result<(), CheckpointError> {
    let mut source = store.open_object(object)?;
    let temp = format!(".cortex-rewind-{}", crate::new_id());
    let fd = rustix::fs::openat(
        parent.as_fd(),
        temp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| io(path, e))?;
    let mut file = std::fs::File::from(fd);
    let copied = std::io::copy(&mut source, &mut file)
        .and_then(|_| file.flush())
        .map_err(|e| io(path, e))
        .and_then(|()| {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode & 0o777)).map_err(|e| io(path, e))
        });
    drop(file);
    let placed = copied.and_then(|()| {
        // A folder where the file goes is removed first; rename replaces
        // a file or a link itself.
        if let Ok(stat) = rustix::fs::statat(parent.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
            && rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::Directory
        {
            remove_entry(parent.as_fd(), name, Path::new(path), 0).map_err(|e| io(path, e))?;
        }
        rustix::fs::renameat(parent.as_fd(), temp.as_str(), parent.as_fd(), name)
            .map_err(|e| io(path, e))
    });
    if placed.is_err() {
        let _ = rustix::fs::unlinkat(parent.as_fd(), temp.as_str(), AtFlags::empty());
    }
    placed
}
