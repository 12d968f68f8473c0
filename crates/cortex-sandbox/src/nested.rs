//! Repository metadata anywhere in a tree, not only the top-level `.git`.
//!
//! Git honours a `.git` folder, a `.git` file (`gitdir: …`) or a `.git`
//! symlink in any subfolder, and a bare repository (a folder holding `HEAD`,
//! `objects` and `refs`) when run inside it. Each can carry a `config` with
//! `core.hooksPath`, `core.fsmonitor` or filters, and hooks, which the user's
//! own git would run on the host when they work in that subfolder later.
//! [`scan`] finds every such place under a root, without following a link
//! and without opening anything but folders: the sandbox makes the ones that
//! exist when a guest starts read-only (the user's own nested repositories),
//! and the harness compares scans before and after a turn to neutralise the
//! ones a model made or changed.

use std::path::{Path, PathBuf};

/// The deepest folder scanned (as a copy's and a search's bound).
pub const MAX_SCAN_DEPTH: usize = 128;

/// Folders read at most by one scan; a larger tree is scanned in part and
/// the scan says so ([`Scan::complete`]).
pub const MAX_SCAN_FOLDERS: usize = 200_000;

/// What kind of repository metadata was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetadataKind {
    /// A `.git` folder in a subfolder (a nested repository, `git init sub`).
    GitDir,
    /// A `.git` file, which names a git folder anywhere (`gitdir: PATH`).
    GitFile,
    /// A `.git` symlink.
    GitLink,
    /// A folder git takes for a bare repository (`HEAD`, `objects`, `refs`).
    Bare,
}

/// One piece of metadata, by its path relative to the scanned root (for a
/// `.git` entry the entry itself, for a bare repository its folder).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Found {
    /// Relative to the root; never empty.
    pub path: PathBuf,
    /// What is there.
    pub kind: MetadataKind,
}

/// The result of [`scan`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Everything found, in no particular order.
    pub found: Vec<Found>,
    /// False when the scan stopped at [`MAX_SCAN_FOLDERS`]; folders deeper
    /// than [`MAX_SCAN_DEPTH`] are never scanned and do not count.
    pub complete: bool,
}

/// Every nested `.git` and bare repository under `root`, except `root`'s own
/// `.git` (which the mounts protect as the repository's metadata). Symlinks
/// are never followed; nothing below a found entry is scanned (it is
/// metadata itself, protected or neutralised as a whole); unreadable folders
/// are skipped.
pub fn scan(root: &Path) -> Scan {
    let mut scan = Scan {
        found: Vec::new(),
        complete: true,
    };
    let mut pending: Vec<(PathBuf, usize)> = vec![(PathBuf::new(), 0)];
    let mut folders = 0;
    while let Some((relative, depth)) = pending.pop() {
        if folders == MAX_SCAN_FOLDERS {
            scan.complete = false;
            break;
        }
        folders += 1;
        let Ok(entries) = std::fs::read_dir(root.join(&relative)) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = relative.join(entry.file_name());
            if entry.file_name() == ".git" {
                if depth == 0 {
                    continue;
                }
                let kind = if kind.is_dir() {
                    MetadataKind::GitDir
                } else if kind.is_symlink() {
                    MetadataKind::GitLink
                } else {
                    MetadataKind::GitFile
                };
                scan.found.push(Found { path, kind });
            } else if kind.is_dir() {
                if is_bare(&root.join(&path)) {
                    scan.found.push(Found {
                        path,
                        kind: MetadataKind::Bare,
                    });
                } else if depth < MAX_SCAN_DEPTH {
                    pending.push((path, depth + 1));
                }
            }
        }
    }
    scan
}

/// Whether git would take `dir` for a repository's folder: `HEAD` a file
/// (or a symlink, as old repositories have), `objects` and `refs` folders.
/// Nothing is followed but `dir` itself.
pub fn is_bare(dir: &Path) -> bool {
    let is = |name: &str, folder: bool| {
        std::fs::symlink_metadata(dir.join(name)).is_ok_and(|m| {
            if folder {
                m.is_dir()
            } else {
                m.is_file() || m.file_type().is_symlink()
            }
        })
    };
    is("HEAD", false) && is("objects", true) && is("refs", true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut found: Vec<Found>) -> Vec<(String, MetadataKind)> {
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found
            .into_iter()
            .map(|f| (f.path.display().to_string(), f.kind))
            .collect()
    }

    #[test]
    fn finds_every_kind_and_skips_the_roots_own() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path();
        for dir in [
            ".git/objects",
            "a/.git/hooks",
            "b/c",
            "bare/objects",
            "bare/refs",
            "deep/x/y/.git",
        ] {
            std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        }
        std::fs::write(root.join("b/c/.git"), "gitdir: ../../bare\n").expect("write");
        std::fs::write(root.join("bare/HEAD"), "ref: refs/heads/main\n").expect("write");
        std::os::unix::fs::symlink("/etc", root.join("b/.git")).expect("symlink");
        // A link to a folder holding a repository is not followed.
        std::os::unix::fs::symlink("a", root.join("alias")).expect("symlink");
        let scan = scan(root);
        assert!(scan.complete);
        assert_eq!(
            sorted(scan.found),
            [
                ("a/.git".to_owned(), MetadataKind::GitDir),
                ("b/.git".to_owned(), MetadataKind::GitLink),
                ("b/c/.git".to_owned(), MetadataKind::GitFile),
                ("bare".to_owned(), MetadataKind::Bare),
                ("deep/x/y/.git".to_owned(), MetadataKind::GitDir),
            ]
        );
    }

    #[test]
    fn a_deep_tree_ends_at_the_bound() {
        let tmp = tempfile::tempdir().expect("tmp");
        let shallow = "d/".repeat(MAX_SCAN_DEPTH - 1);
        let deep = "d/".repeat(MAX_SCAN_DEPTH + 10);
        std::fs::create_dir_all(tmp.path().join(&deep).join(".git")).expect("mkdir");
        std::fs::create_dir_all(tmp.path().join(&shallow).join(".git")).expect("mkdir");
        let found = scan(tmp.path()).found;
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, Path::new(&shallow).join(".git"));
    }
}
