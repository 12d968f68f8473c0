//! Writers side by side, each in a copy: when two or more children of one
//! round may write, each works in an isolated copy of the parent's
//! workspace (made as a `workspace: copy` session's is), so that they can
//! run at once without undoing each other's edits. When a child ends, what
//! it changed in its copy is laid back over the parent's workspace, file by
//! file, never through a link (`copy::overlay`), and only where the
//! parent's file is still as it was when the copy was made. A file changed
//! there meanwhile (by another child's merge, by the user) is a conflict:
//! the parent's version stays, and the child's answer names it.
//!
//! "As it was" is a file's stat key (type, mode, size, inode, modification
//! and change times): the change time cannot be set back, so a file
//! written since, even to the same content and times, has another key.
//! The paths compared are those git lists in the copy (tracked, and
//! untracked but not ignored: a child's build output is not carried back)
//! or, outside git, every file of the copy; `.git` itself never is (commits
//! a child made in its copy stay there).

use crate::copy::{self, CopyReport};
use crate::git::{self, Repo};
use crate::workspace::{self, WorkspaceError};
use rustix::fs::{AtFlags, Dir, FileType};
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// At most this many paths are named in a child's answer.
const MAX_NAMED: usize = 20;

/// What a file was, for telling whether it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    mode: u32,
    size: u64,
    ino: u64,
    mtime: (i64, u64),
    ctime: (i64, u64),
}

/// A child's copy, with what its files and the parent's were when it was
/// made.
pub(crate) struct WriterCopy {
    copy: PathBuf,
    /// The copy's files when made (absent ones are not listed).
    copy_before: HashMap<PathBuf, Key>,
    /// The parent's files at the same paths then (`None`: absent).
    parent_before: HashMap<PathBuf, Option<Key>>,
}

/// What a merge did: the paths laid over the parent's workspace, and those
/// left as the parent has them.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    pub(crate) applied: Vec<PathBuf>,
    pub(crate) conflicts: Vec<PathBuf>,
    pub(crate) skipped: Vec<String>,
}

impl Merged {
    /// The note appended to the child's answer.
    pub(crate) fn note(&self) -> String {
        let list = |paths: &[PathBuf]| {
            let mut named: Vec<String> = paths
                .iter()
                .take(MAX_NAMED)
                .map(|p| p.display().to_string())
                .collect();
            if paths.len() > MAX_NAMED {
                named.push(format!("and {} more", paths.len() - MAX_NAMED));
            }
            named.join(", ")
        };
        let mut note = String::from(
            "[The subagent worked in a copy of the workspace, beside another that writes. ",
        );
        if self.applied.is_empty() {
            note.push_str("It changed no file.");
        } else {
            note.push_str(&format!(
                "Its changes were applied: {}.",
                list(&self.applied)
            ));
        }
        if !self.conflicts.is_empty() {
            note.push_str(&format!(
                " Not applied, because the file changed in the workspace meanwhile (the \
                 workspace's version stays; the subagent's is gone): {}.",
                list(&self.conflicts)
            ));
        }
        if !self.skipped.is_empty() {
            note.push_str(&format!(" Not applied: {}.", self.skipped.join("; ")));
        }
        note.push(']');
        note
    }
}

impl WriterCopy {
    /// Make the copy of `parent` at `dest` and note what both hold.
    pub(crate) fn make(parent: &Path, dest: &Path) -> Result<WriterCopy, WorkspaceError> {
        workspace::materialise_copy(parent, dest)?;
        let io_at = |path: &Path| {
            let path = path.to_path_buf();
            move |error| WorkspaceError::Io { path, error }
        };
        let paths = listed(dest).map_err(io_at(dest))?;
        let (copy_root, parent_root) = (
            copy::open_root(dest).map_err(io_at(dest))?,
            copy::open_root(parent).map_err(io_at(parent))?,
        );
        let mut copy_before = HashMap::new();
        let mut parent_before = HashMap::new();
        for path in paths {
            if let Some(key) = key_of(copy_root.as_fd(), &path) {
                copy_before.insert(path.clone(), key);
            }
            parent_before.insert(path.clone(), key_of(parent_root.as_fd(), &path));
        }
        Ok(WriterCopy {
            copy: dest.to_path_buf(),
            copy_before,
            parent_before,
        })
    }

    /// Lay what the child changed over `parent`, then remove the copy.
    pub(crate) fn merge_into(self, parent: &Path) -> io::Result<Merged> {
        let merged = self.merge(parent);
        std::fs::remove_dir_all(&self.copy)?;
        merged
    }

    /// Remove the copy, its changes unapplied (the child's task was lost).
    pub(crate) fn discard(self) {
        let _ = std::fs::remove_dir_all(&self.copy);
    }

    fn merge(&self, parent: &Path) -> io::Result<Merged> {
        let mut paths: BTreeSet<PathBuf> = self.copy_before.keys().cloned().collect();
        paths.extend(listed(&self.copy)?);
        let copy_root = copy::open_root(&self.copy)?;
        let parent_root = copy::open_root(parent)?;
        let mut merged = Merged::default();
        let mut report = CopyReport::default();
        for path in paths {
            let now = key_of(copy_root.as_fd(), &path);
            if now == self.copy_before.get(&path).copied() {
                continue;
            }
            let parent_now = key_of(parent_root.as_fd(), &path);
            let parent_then = match self.parent_before.get(&path) {
                Some(then) => *then,
                // A path the copy did not have: the parent's is unknown then,
                // so only a path it does not have now either is free.
                None => None,
            };
            if parent_now == parent_then {
                copy::overlay(&copy_root, &parent_root, &path, &mut report)?;
                merged.applied.push(path);
            } else if !same_content(&self.copy, parent, &path) {
                merged.conflicts.push(path);
            }
        }
        merged.skipped = report.skipped;
        Ok(merged)
    }
}

/// The paths of `root` to compare: what git lists (tracked, and untracked
/// but not ignored) in a git repository, else every file and link.
fn listed(root: &Path) -> io::Result<Vec<PathBuf>> {
    let repo = Repo::open(root).map_err(io::Error::other)?;
    let Some(repo) = repo else {
        let mut paths = Vec::new();
        walk(&copy::open_root(root)?, Path::new(""), 0, &mut paths)?;
        return Ok(paths);
    };
    let args: [&OsStr; 5] = [
        "ls-files".as_ref(),
        "-z".as_ref(),
        "--cached".as_ref(),
        "--others".as_ref(),
        "--exclude-standard".as_ref(),
    ];
    let listed = git::command(Some(&repo))
        .and_then(|c| git::run(c, &args))
        .map_err(io::Error::other)?;
    Ok(listed
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(OsStr::from_bytes(p)))
        .collect())
}

/// Every file and link under `dir`, by path from the root.
fn walk(dir: &OwnedFd, shown: &Path, depth: usize, paths: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut names = Vec::new();
    let mut stream = Dir::read_from(dir)?;
    while let Some(entry) = stream.read() {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name != "." && name != ".." {
            names.push(name.to_owned());
        }
    }
    drop(stream);
    for name in names {
        let stat = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW)?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory if depth < copy::MAX_DEPTH => {
                let child = copy::open_dir(dir.as_fd(), &name)?;
                walk(&child, &shown.join(&name), depth + 1, paths)?;
            }
            FileType::RegularFile | FileType::Symlink => paths.push(shown.join(&name)),
            _ => {}
        }
    }
    Ok(())
}

/// The key of `path` under `root`, reached through no link; `None` when it
/// is absent (or beyond a link, or not a plain relative path).
fn key_of(root: BorrowedFd<'_>, path: &Path) -> Option<Key> {
    let parts = copy::plain_components(path)?;
    let (last, folders) = parts.split_last()?;
    let mut dir: Option<OwnedFd> = None;
    for folder in folders {
        let here = dir.as_ref().map_or(root, |fd| fd.as_fd());
        dir = Some(copy::open_dir(here, folder).ok()?);
    }
    let here = dir.as_ref().map_or(root, |fd| fd.as_fd());
    let stat = rustix::fs::statat(here, *last, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    Some(Key {
        mode: stat.st_mode,
        size: u64::try_from(stat.st_size).unwrap_or_default(),
        ino: stat.st_ino,
        mtime: (stat.st_mtime, stat.st_mtime_nsec as u64),
        ctime: (stat.st_ctime, stat.st_ctime_nsec as u64),
    })
}

/// Whether `path` has the same bytes in both trees (both regular files
/// reached through no link), or is absent from both.
fn same_content(a: &Path, b: &Path, path: &Path) -> bool {
    let read = |root: &Path| -> Option<Option<Vec<u8>>> {
        let root = copy::open_root(root).ok()?;
        let parts = copy::plain_components(path)?;
        let (last, folders) = parts.split_last()?;
        let mut dir: Option<OwnedFd> = None;
        for folder in folders {
            let here = dir.as_ref().map_or(root.as_fd(), |fd| fd.as_fd());
            match copy::open_dir(here, folder) {
                Ok(fd) => dir = Some(fd),
                Err(rustix::io::Errno::NOENT) => return Some(None),
                Err(_) => return None,
            }
        }
        let here = dir.as_ref().map_or(root.as_fd(), |fd| fd.as_fd());
        let flags = rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::NONBLOCK
            | rustix::fs::OFlags::CLOEXEC;
        match rustix::fs::openat(here, *last, flags, rustix::fs::Mode::empty()) {
            Ok(fd) => {
                let stat = rustix::fs::fstat(&fd).ok()?;
                if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
                    return None;
                }
                let mut bytes = Vec::new();
                io::Read::read_to_end(&mut std::fs::File::from(fd), &mut bytes).ok()?;
                Some(Some(bytes))
            }
            Err(rustix::io::Errno::NOENT) => Some(None),
            Err(_) => None,
        }
    };
    matches!((read(a), read(b)), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }

    #[test]
    fn a_copy_merges_back_what_changed_and_keeps_what_changed_meanwhile() {
        let tmp = tempfile::tempdir().expect("tmp");
        let parent = tmp.path().join("parent");
        let copies = tmp.path().join("copies");
        std::fs::create_dir_all(&copies).expect("mkdir");
        write(&parent, "kept.txt", "kept\n");
        write(&parent, "edited.txt", "before\n");
        write(&parent, "removed.txt", "gone soon\n");
        write(&parent, "contested.txt", "before\n");
        write(&parent, "same.txt", "before\n");
        let one = WriterCopy::make(&parent, &copies.join("one")).expect("copy");
        let copy = copies.join("one");
        write(&copy, "edited.txt", "after\n");
        write(&copy, "sub/new.txt", "new\n");
        std::fs::remove_file(copy.join("removed.txt")).expect("rm");
        write(&copy, "contested.txt", "the child's\n");
        write(&copy, "same.txt", "both\n");
        // Meanwhile, in the workspace: one file changed otherwise, one the same way.
        write(&parent, "contested.txt", "someone else's\n");
        write(&parent, "same.txt", "both\n");
        let merged = one.merge_into(&parent).expect("merge");
        let read = |p: &str| std::fs::read_to_string(parent.join(p)).ok();
        assert_eq!(read("edited.txt").as_deref(), Some("after\n"));
        assert_eq!(read("sub/new.txt").as_deref(), Some("new\n"));
        assert_eq!(read("removed.txt"), None);
        assert_eq!(read("contested.txt").as_deref(), Some("someone else's\n"));
        assert_eq!(read("kept.txt").as_deref(), Some("kept\n"));
        assert_eq!(merged.conflicts, [PathBuf::from("contested.txt")]);
        let mut applied = merged.applied.clone();
        applied.sort();
        let expected: Vec<PathBuf> = ["edited.txt", "removed.txt", "sub/new.txt"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(applied, expected);
        assert!(!copy.exists(), "the copy is removed");
        let note = merged.note();
        assert!(
            note.contains("edited.txt") && note.contains("contested.txt"),
            "{note}"
        );
    }

    #[test]
    fn a_link_the_child_made_is_copied_as_a_link_and_never_followed() {
        let tmp = tempfile::tempdir().expect("tmp");
        let (parent, copies, outside) = (
            tmp.path().join("parent"),
            tmp.path().join("copies"),
            tmp.path().join("outside"),
        );
        std::fs::create_dir_all(&copies).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        write(&parent, "a.txt", "a\n");
        let one = WriterCopy::make(&parent, &copies.join("one")).expect("copy");
        let copy = copies.join("one");
        // The child replaces a folder of the workspace's path with a link
        // out of it, and writes through it in its copy.
        std::os::unix::fs::symlink(&outside, copy.join("sub")).expect("link");
        write(&outside, "planted.txt", "x\n");
        let merged = one.merge_into(&parent).expect("merge");
        assert_eq!(merged.applied, [PathBuf::from("sub")]);
        let link = std::fs::symlink_metadata(parent.join("sub")).expect("sub");
        assert!(link.file_type().is_symlink());
        // Nothing was written outside through it.
        assert_eq!(
            std::fs::read_dir(&outside).expect("outside").count(),
            1,
            "only the file the test made"
        );
    }
}
