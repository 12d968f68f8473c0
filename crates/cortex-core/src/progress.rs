//! What counts as progress toward a goal in one turn, for the stall rule
//! (`continuation.rs`): a step done that was not done before, or a change
//! to the workspace. A command that ran is not progress by itself: a model
//! that runs `ls` turn after turn has done nothing.
//!
//! A `write_file` or `edit_file` says itself whether it changed the file
//! (its diff). A command (`bash`, or an MCP tool, whose server works in the
//! workspace too) says nothing of what it changed, and the harness has no
//! other signal for it (`git_watch.rs` fingerprints repository metadata
//! only, and the guest's quota walk counts blocks and inodes, which an
//! edit in place leaves as they were). So, while a goal is active, the
//! harness takes a fingerprint of the workspace before the turn's first
//! command and compares it after each round that ran one, until the turn
//! has made progress: no walk at all in a turn without commands, at most
//! two in most turns with them.
//!
//! The fingerprint hashes every entry's path, type, mode, size, inode and
//! modification and change times, read on directory descriptors without
//! following a link (`copy.rs`'s way). It is taken on the host, so it sees
//! a guest whose workspace is a host folder (in place, a copy, a Docker
//! bind mount); a remote guest's workspace is not here, and there a command
//! is never progress (a step done still is). `.git` folders are left out:
//! `git status` refreshing an index is not work on the goal. A tree larger
//! than [`MAX_ENTRIES`] entries (or deeper than [`copy::MAX_DEPTH`]) is
//! compared on what the walk reached first.

use crate::Session;
use crate::answer::Answer;
use crate::copy::{self, open_dir};
use cortex_protocol::{Goal, ToolCallRequest, ToolName, ToolStatus};
use rustix::fs::{AtFlags, Dir};
use std::ffi::{OsStr, OsString};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Entries a fingerprint reads at most.
pub(crate) const MAX_ENTRIES: usize = 200_000;

/// Why a turn counts as progress; the first kind seen is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// The `goal` tool recorded more steps done than the goal ever had.
    StepTicked,
    /// A `write_file` or `edit_file` changed a file (its diff is not empty).
    FileChanged,
    /// The workspace differs after a command from before the turn's first.
    WorkspaceChanged,
}

/// The running turn's progress, and the workspace's fingerprint from before
/// its first command while it has made none.
#[derive(Debug, Default)]
pub(crate) struct TurnProgress {
    made: Option<Progress>,
    baseline: Option<Fingerprint>,
}

impl TurnProgress {
    /// Why the turn counts as progress, if it does.
    pub(crate) fn made(&self) -> Option<Progress> {
        self.made
    }

    /// Note progress of `kind` (the first one noted is kept).
    pub(crate) fn record(&mut self, kind: Progress) {
        self.made.get_or_insert(kind);
        self.baseline = None;
    }

    /// Whether a command about to run needs a fingerprint first.
    pub(crate) fn wants_baseline(&self) -> bool {
        self.made.is_none() && self.baseline.is_none()
    }

    /// Keep the fingerprint from before the turn's first command.
    pub(crate) fn set_baseline(&mut self, print: Fingerprint) {
        self.baseline = Some(print);
    }

    /// The fingerprint commands are compared against, while the turn has
    /// made no progress.
    pub(crate) fn baseline(&self) -> Option<Fingerprint> {
        self.baseline.filter(|_| self.made.is_none())
    }
}

/// Whether an answered call changed a file: a `write_file` or `edit_file`
/// that succeeded with a diff (one that wrote what was there has none).
pub(crate) fn changed_a_file(name: &str, answer: &Answer) -> bool {
    answer.status == ToolStatus::Ok
        && answer.diff.as_deref().is_some_and(|d| !d.is_empty())
        && matches!(
            name.parse::<ToolName>(),
            Ok(ToolName::WriteFile | ToolName::EditFile)
        )
}

/// A fingerprint of a workspace's tree; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fingerprint(u64);

/// Fingerprint the tree at `root` (blocking); `None` when `root` is not a
/// folder here.
pub(crate) fn fingerprint(root: &Path) -> Option<Fingerprint> {
    let root = copy::open_root(root).ok()?;
    let mut hasher = DefaultHasher::new();
    let mut entries = 0;
    let mut pending: Vec<(OwnedFd, OsString, usize)> = vec![(root, OsString::new(), 0)];
    while let Some((dir, shown, depth)) = pending.pop() {
        for name in names(&dir) {
            if entries == MAX_ENTRIES {
                return Some(Fingerprint(hasher.finish()));
            }
            entries += 1;
            let Ok(stat) = rustix::fs::statat(dir.as_fd(), &name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            let mut path = shown.clone();
            path.push("/");
            path.push(&name);
            path.as_bytes().hash(&mut hasher);
            (
                stat.st_mode,
                stat.st_size,
                stat.st_ino,
                stat.st_mtime,
                stat.st_mtime_nsec,
                stat.st_ctime,
                stat.st_ctime_nsec,
            )
                .hash(&mut hasher);
            let is_dir = rustix::fs::FileType::from_raw_mode(stat.st_mode).is_dir();
            if is_dir
                && depth < copy::MAX_DEPTH
                && let Ok(child) = open_dir(dir.as_fd(), &name)
            {
                pending.push((child, path, depth + 1));
            }
        }
    }
    Some(Fingerprint(hasher.finish()))
}

/// A folder's entries but `.`, `..` and `.git`, sorted so the same tree
/// hashes the same whatever order the filesystem lists it in.
fn names(dir: &OwnedFd) -> Vec<OsString> {
    let Ok(mut stream) = Dir::read_from(dir) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    while let Some(Ok(entry)) = stream.read() {
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name != "." && name != ".." && name != ".git" {
            names.push(name.to_owned());
        }
    }
    names.sort();
    names
}

impl Session {
    /// Before a round's commands run: fingerprint the workspace, when a
    /// goal is active and the turn has made no progress nor taken one yet.
    pub(crate) async fn progress_baseline(&mut self) {
        if !self.goal().is_some_and(Goal::is_active) || !self.drive.progress().wants_baseline() {
            return;
        }
        if let Some(print) = self.workspace_fingerprint().await {
            self.drive.progress_mut().set_baseline(print);
        }
    }

    /// After a round: note a file it changed, else (when `commands` ran) a
    /// workspace that differs from the baseline.
    pub(crate) async fn note_progress(
        &mut self,
        calls: &[ToolCallRequest],
        answers: &[Option<Answer>],
        commands: bool,
    ) {
        let changed = calls.iter().zip(answers).any(|(call, answer)| {
            answer
                .as_ref()
                .is_some_and(|a| changed_a_file(&call.name, a))
        });
        if changed {
            self.drive.progress_mut().record(Progress::FileChanged);
            return;
        }
        let Some(before) = self.drive.progress().baseline().filter(|_| commands) else {
            return;
        };
        if self
            .workspace_fingerprint()
            .await
            .is_some_and(|after| after != before)
        {
            self.drive.progress_mut().record(Progress::WorkspaceChanged);
        }
    }

    async fn workspace_fingerprint(&self) -> Option<Fingerprint> {
        let root = self.workspace.clone();
        tokio::task::spawn_blocking(move || fingerprint(&root))
            .await
            .ok()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_changes_the_fingerprint_and_reading_does_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("src")).expect("mkdir");
        std::fs::write(dir.path().join("src/a.txt"), "a").expect("write");
        let before = fingerprint(dir.path()).expect("print");
        let _ = std::fs::read(dir.path().join("src/a.txt")).expect("read");
        assert_eq!(fingerprint(dir.path()), Some(before), "a read is no change");
        std::fs::create_dir_all(dir.path().join(".git/objects")).expect("git");
        std::fs::write(dir.path().join(".git/index"), "i").expect("index");
        assert_eq!(fingerprint(dir.path()), Some(before), ".git is left out");
        std::fs::write(dir.path().join("src/a.txt"), "b").expect("rewrite");
        let after = fingerprint(dir.path()).expect("print");
        assert_ne!(after, before, "same size, new content");
        std::fs::remove_file(dir.path().join("src/a.txt")).expect("remove");
        assert_ne!(fingerprint(dir.path()), Some(after));
        assert_eq!(fingerprint(&dir.path().join("missing")), None);
    }

    #[test]
    fn the_first_progress_is_kept_and_ends_the_comparisons() {
        let mut progress = TurnProgress::default();
        assert!(progress.wants_baseline());
        progress.set_baseline(Fingerprint(1));
        assert!(!progress.wants_baseline());
        assert_eq!(progress.baseline(), Some(Fingerprint(1)));
        progress.record(Progress::WorkspaceChanged);
        progress.record(Progress::StepTicked);
        assert_eq!(progress.made(), Some(Progress::WorkspaceChanged));
        assert_eq!(progress.baseline(), None);
        assert!(!progress.wants_baseline());
    }
}
