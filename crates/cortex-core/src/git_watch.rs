//! Repository metadata a turn made or changed anywhere in the workspace is
//! neutralised when the turn ends.
//!
//! The workspace's own `.git` is read-only in the guest, and so is every
//! nested repository that was there when the guest started. But the model
//! may still make new ones (`git init sub`, a `.git` file naming a folder it
//! planted, a bare repository), or change one that appeared while the guest
//! ran, and the user's own git would read their configuration and run their
//! hooks the next time they work in that folder. So the harness scans the
//! tree ([`cortex_runtime::nested::scan`], no link followed) before the
//! first turn and after each, and compares a fingerprint of every
//! repository's configuration (`config`, `config.worktree`, `commondir`,
//! `info/attributes`, every hook) with the previous scan. What is new or
//! changed is renamed to a name git does not read (`.git` →
//! `.git.cortex-quarantined-N`; a bare repository's `HEAD` →
//! `HEAD.cortex-quarantined-N`), with a `runtime.warning` naming it. The
//! renames are made on directory descriptors opened without following a
//! link, so nothing outside the workspace is touched even if the tree
//! changes meanwhile.
//!
//! The workspace's own git folder is watched for the files that redirect
//! git elsewhere which the guest's mounts cannot hold read-only when
//! `git_write` lets the model commit: a `commondir` (git takes its config
//! and hooks from the folder it names, and an empty placeholder would be
//! an error to git, so a missing one cannot be mounted over) and the `.git`
//! entry itself when it is a file or a link (`gitdir: …`). One that
//! appeared or changed during the turn is renamed the same way.

use crate::copy::open_dir;
use crate::{CoreError, Session};
use cortex_protocol::{EventKind, TurnId};
use cortex_runtime::nested::{Found, MetadataKind, scan};
use rustix::fs::{AtFlags, CWD, Mode, OFlags, RenameFlags};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Bytes of one metadata file kept in a fingerprint; past that, its size.
const MAX_FINGERPRINT_FILE: u64 = 256 * 1024;

/// Files of a git folder whose content decides what git runs.
const CONFIG_FILES: &[&str] = &["config", "config.worktree", "commondir", "info/attributes"];

/// Quarantine names tried per entry.
const MAX_QUARANTINE_NAMES: u32 = 1000;

/// The metadata found by one scan, with each entry's fingerprint.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    entries: HashMap<PathBuf, (MetadataKind, Vec<u8>)>,
    /// The workspace's own redirecting entries ([`OWN_REDIRECTS`]) that
    /// exist, by path relative to the root, with what they hold.
    own: HashMap<PathBuf, Vec<u8>>,
    complete: bool,
}

/// The workspace's own entries that send git elsewhere when present: the
/// `.git` entry as a file or link, and a `commondir` in its git folder.
const OWN_REDIRECTS: &[&str] = &[".git", ".git/commondir"];

/// Scan `root` (blocking).
pub(crate) fn snapshot(root: &Path) -> Snapshot {
    let scanned = scan(root);
    let entries = scanned
        .found
        .into_iter()
        .map(|found| {
            let print = fingerprint(&root.join(&found.path), found.kind);
            (found.path, (found.kind, print))
        })
        .collect();
    Snapshot {
        entries,
        own: own_redirects(root),
        complete: scanned.complete,
    }
}

/// [`OWN_REDIRECTS`] that exist under `root` as a file or a link (a `.git`
/// folder is the ordinary case and is not listed), with their content.
fn own_redirects(root: &Path) -> HashMap<PathBuf, Vec<u8>> {
    OWN_REDIRECTS
        .iter()
        .map(PathBuf::from)
        .filter_map(|relative| {
            let meta = std::fs::symlink_metadata(root.join(&relative)).ok()?;
            if meta.is_dir() {
                return None;
            }
            let mut print = if meta.is_symlink() {
                b"link\0".to_vec()
            } else {
                b"file\0".to_vec()
            };
            print.extend(read_small(&root.join(&relative)));
            Some((relative, print))
        })
        .collect()
}

/// What decides what git would do with this entry: the configuration files
/// and hooks of a folder, the text of a `.git` file, a link's target.
fn fingerprint(path: &Path, kind: MetadataKind) -> Vec<u8> {
    match kind {
        MetadataKind::GitLink => std::fs::read_link(path)
            .map(|target| target.into_os_string().into_encoded_bytes())
            .unwrap_or_default(),
        MetadataKind::GitFile => read_small(path),
        MetadataKind::GitDir | MetadataKind::Bare => {
            let mut print = Vec::new();
            for name in CONFIG_FILES {
                print.extend_from_slice(name.as_bytes());
                print.push(0);
                print.extend(read_small(&path.join(name)));
                print.push(0);
            }
            let hooks = path.join("hooks");
            let mut names: Vec<_> = std::fs::read_dir(&hooks)
                .map(|dir| dir.flatten().map(|e| e.file_name()).collect())
                .unwrap_or_default();
            names.sort();
            for name in names {
                print.extend_from_slice(name.as_encoded_bytes());
                print.push(0);
                print.extend(read_small(&hooks.join(&name)));
                print.push(0);
            }
            print
        }
    }
}

/// A file's first bytes (opened without following a link or blocking on a
/// FIFO), its size when larger; empty when it is not a regular file.
fn read_small(path: &Path) -> Vec<u8> {
    let Ok(fd) = rustix::fs::openat(
        CWD,
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return std::fs::read_link(path)
            .map(|target| target.into_os_string().into_encoded_bytes())
            .unwrap_or_default();
    };
    let mut file = std::fs::File::from(fd);
    let Ok(meta) = file.metadata() else {
        return Vec::new();
    };
    if !meta.is_file() {
        return Vec::new();
    }
    if meta.len() > MAX_FINGERPRINT_FILE {
        return format!("size {} mtime {:?}", meta.len(), meta.modified().ok()).into_bytes();
    }
    let mut bytes = Vec::new();
    let _ = (&mut file)
        .take(MAX_FINGERPRINT_FILE)
        .read_to_end(&mut bytes);
    bytes
}

/// Rename every entry of `after` that `before` does not hold with the same
/// fingerprint; one message per entry for the user (blocking).
pub(crate) fn neutralise(root: &Path, before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut notes = Vec::new();
    let mut paths: Vec<&PathBuf> = after.entries.keys().collect();
    paths.sort();
    for path in paths {
        let (kind, print) = &after.entries[path];
        let how = match before.entries.get(path) {
            Some((old_kind, old_print)) if old_kind == kind && old_print == print => continue,
            Some(_) => "changed",
            None => "created",
        };
        let found = Found {
            path: path.clone(),
            kind: *kind,
        };
        notes.push(match quarantine(root, &found) {
            Ok(renamed) => format!(
                "{} ({}) was {how} during this turn; renamed to {} so that git run there reads none of its configuration or hooks (rename it back only if you trust it)",
                path.display(),
                describe(*kind),
                renamed.display()
            ),
            Err(e) => format!(
                "{} ({}) was {how} during this turn and could not be renamed ({e}); do not run git in that folder before checking its configuration and hooks",
                path.display(),
                describe(*kind)
            ),
        });
    }
    notes.extend(neutralise_own(root, before, after));
    if !after.complete {
        notes.push(format!(
            "the workspace has more than {} folders; repository metadata beyond them was not checked after this turn",
            cortex_runtime::nested::MAX_SCAN_FOLDERS
        ));
    }
    notes
}

/// Rename each of the workspace's own redirecting entries that appeared or
/// changed since `before` (see the module docs).
fn neutralise_own(root: &Path, before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut paths: Vec<&PathBuf> = after.own.keys().collect();
    paths.sort();
    let mut notes = Vec::new();
    for path in paths {
        let how = match before.own.get(path) {
            Some(print) if *print == after.own[path] => continue,
            Some(_) => "changed",
            None => "created",
        };
        let what = if path.ends_with("commondir") {
            "the git folder's `commondir`, which makes git read its config and hooks from another folder"
        } else {
            "the repository's `.git` as a file or link naming another git folder"
        };
        let (folder, name) = match (path.parent(), path.file_name()) {
            (Some(folder), Some(name)) => (folder.to_path_buf(), name),
            _ => continue,
        };
        notes.push(match quarantine_entry(root, &folder, name) {
            Ok(renamed) => format!(
                "{} ({what}) was {how} during this turn; renamed to {} so that git reads none of it (rename it back only if you trust it)",
                path.display(),
                renamed.display()
            ),
            Err(e) => format!(
                "{} ({what}) was {how} during this turn and could not be renamed ({e}); do not run git in this repository before checking it",
                path.display()
            ),
        });
    }
    notes
}

fn describe(kind: MetadataKind) -> &'static str {
    match kind {
        MetadataKind::GitDir => "a nested repository's git folder",
        MetadataKind::GitFile => "a `.git` file naming a git folder",
        MetadataKind::GitLink => "a `.git` symlink",
        MetadataKind::Bare => "a bare repository",
    }
}

/// Rename `found` (a `.git` entry, or a bare repository's `HEAD`) to the
/// first free `NAME.cortex-quarantined-N`; the new path, relative to root.
fn quarantine(root: &Path, found: &Found) -> std::io::Result<PathBuf> {
    let (folder, name): (PathBuf, &OsStr) = match found.kind {
        MetadataKind::Bare => (found.path.clone(), OsStr::new("HEAD")),
        _ => {
            let name = found
                .path
                .file_name()
                .ok_or_else(|| std::io::Error::other("no name"))?;
            (
                found
                    .path
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
                name,
            )
        }
    };
    quarantine_entry(root, &folder, name)
}

/// Rename `folder/name` (relative to `root`) to the first free
/// `NAME.cortex-quarantined-N`; the new path, relative to root.
fn quarantine_entry(root: &Path, folder: &Path, name: &OsStr) -> std::io::Result<PathBuf> {
    let dir = open_folder(root, folder)?;
    for n in 1..=MAX_QUARANTINE_NAMES {
        let mut new_name = name.to_os_string();
        new_name.push(format!(".cortex-quarantined-{n}"));
        match rustix::fs::renameat_with(
            dir.as_fd(),
            name,
            dir.as_fd(),
            new_name.as_os_str(),
            RenameFlags::NOREPLACE,
        ) {
            Ok(()) => return Ok(folder.join(new_name)),
            Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(std::io::Error::other("no free quarantine name"))
}

/// `root`/`relative`, each component opened without following a link.
fn open_folder(root: &Path, relative: &Path) -> std::io::Result<OwnedFd> {
    let mut dir = crate::copy::open_root(root)?;
    for part in relative.components() {
        dir = open_dir(dir.as_fd(), part.as_os_str())?;
    }
    // The folder must still be a folder of the tree (not swapped for a link).
    rustix::fs::statat(dir.as_fd(), ".", AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(dir)
}

impl Session {
    /// The metadata the next turn is compared against: the previous turn's
    /// end, or a fresh scan for the session's first turn here. A copy not
    /// made yet is compared against the repository it will copy. `None`
    /// when the guest cannot write (nothing to watch).
    pub(crate) async fn metadata_before_turn(&mut self) -> Option<Snapshot> {
        if !self.guest_may_write() {
            return None;
        }
        if let Some(kept) = self.metadata_baseline.take() {
            return Some(kept);
        }
        let root = if self.workspace.exists() {
            self.workspace.clone()
        } else {
            self.repository.clone()
        };
        tokio::task::spawn_blocking(move || snapshot(&root))
            .await
            .ok()
    }

    /// After a turn: neutralise what it made or changed (see the module
    /// docs), one `runtime.warning` each, and keep the result as the next
    /// turn's baseline.
    pub(crate) async fn neutralise_metadata(
        &mut self,
        turn: &TurnId,
        before: Option<Snapshot>,
    ) -> Result<(), CoreError> {
        let Some(before) = before else {
            return Ok(());
        };
        let root = self.workspace.clone();
        let done = tokio::task::spawn_blocking(move || {
            let after = snapshot(&root);
            let notes = neutralise(&root, &before, &after);
            let baseline = if notes.is_empty() {
                after
            } else {
                snapshot(&root)
            };
            (notes, baseline)
        })
        .await;
        let Ok((notes, baseline)) = done else {
            return Ok(());
        };
        self.metadata_baseline = Some(baseline);
        for message in notes {
            self.timeline
                .emit(Some(turn), EventKind::RuntimeWarning { message })
                .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace with a `.git` folder as `git init` leaves it (enough of
    /// it for the scan: the folder is never read beyond these names).
    fn workspace() -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(root.path().join(".git/hooks")).expect("mkdir");
        std::fs::write(root.path().join(".git/config"), "[core]\n").expect("write");
        root
    }

    #[test]
    fn a_commondir_made_in_the_own_git_folder_is_renamed() {
        let root = workspace();
        let before = snapshot(root.path());
        assert!(before.own.is_empty(), "{:?}", before.own);
        std::fs::create_dir_all(root.path().join("evil/hooks")).expect("mkdir");
        std::fs::write(root.path().join(".git/commondir"), "../evil\n").expect("write");
        let notes = neutralise(root.path(), &before, &snapshot(root.path()));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains(".git/commondir") && notes[0].contains("created"));
        assert!(!root.path().join(".git/commondir").exists());
        assert_eq!(
            std::fs::read_to_string(root.path().join(".git/commondir.cortex-quarantined-1"))
                .expect("renamed"),
            "../evil\n"
        );
        // One the user had before the turn is theirs, and stays.
        std::fs::write(root.path().join(".git/commondir"), "../mine\n").expect("write");
        let before = snapshot(root.path());
        let notes = neutralise(root.path(), &before, &snapshot(root.path()));
        assert!(notes.is_empty(), "{notes:?}");
        // Changed during a turn, it goes too.
        std::fs::write(root.path().join(".git/commondir"), "../evil\n").expect("write");
        let notes = neutralise(root.path(), &before, &snapshot(root.path()));
        assert!(notes[0].contains("changed"), "{notes:?}");
        assert!(
            root.path()
                .join(".git/commondir.cortex-quarantined-2")
                .exists()
        );
    }

    #[test]
    fn a_git_folder_replaced_by_a_gitdir_file_is_renamed() {
        let root = workspace();
        let before = snapshot(root.path());
        std::fs::rename(root.path().join(".git"), root.path().join("old")).expect("mv");
        std::fs::write(root.path().join(".git"), "gitdir: evil\n").expect("write");
        let notes = neutralise(root.path(), &before, &snapshot(root.path()));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(!root.path().join(".git").exists());
        assert!(root.path().join(".git.cortex-quarantined-1").is_file());
        // A linked worktree's own `.git` file, unchanged, is left alone.
        std::fs::write(root.path().join(".git"), "gitdir: /elsewhere\n").expect("write");
        let before = snapshot(root.path());
        assert!(neutralise(root.path(), &before, &snapshot(root.path())).is_empty());
        assert!(root.path().join(".git").is_file());
    }
}
