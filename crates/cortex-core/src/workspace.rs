//! Workspace materialisation (design §5): the folder the guest works in.
//!
//! `in-place` is the user's checkout itself. `copy` is an isolated copy in the
//! session's own folder: for a git repository a local clone (history and
//! branches) with the working tree's current state laid over it, tracked
//! changes and untracked files included, ignored files not; for any other
//! folder a plain recursive copy. A copy is made once; a resumed session
//! finds it again. A git URL is cloned by [`clone_url`] before the session is
//! created.

use crate::copy::{self, CopyReport};
use crate::git::{self, GitError, Repo};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why a workspace (a clone or an isolated copy) could not be made. The
/// messages name what failed; the variants carry the underlying error.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// Reading or writing `path` failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// Cloning `url` failed.
    #[error("cannot clone {url}: {error}")]
    Clone {
        /// The URL.
        url: String,
        /// Why git failed.
        error: GitError,
    },
    /// The path has no parent folder to make a copy beside.
    #[error("{} has no parent folder", .0.display())]
    NoParent(PathBuf),
    /// Copying `from` to `to` failed.
    #[error("cannot copy {} to {}: {error}", from.display(), to.display())]
    Copy {
        /// The source.
        from: PathBuf,
        /// The destination.
        to: PathBuf,
        /// What went wrong.
        error: CopyFailure,
    },
    /// The blocking task making the copy panicked or was cancelled.
    #[error("the copy did not finish: {0}")]
    Interrupted(tokio::task::JoinError),
}

/// What went wrong inside a copy.
#[derive(Debug, thiserror::Error)]
pub enum CopyFailure {
    /// git failed (cloning the repository for a copy).
    #[error("{0}")]
    Git(#[from] GitError),
    /// Reading or writing the copy failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> WorkspaceError + '_ {
    move |error| WorkspaceError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Whether `repository` looks like something `git clone` fetches rather than
/// a local folder.
pub fn is_git_url(repository: &str) -> bool {
    repository.contains("://")
        || (repository.starts_with("git@") && repository.contains(':'))
        || repository.ends_with(".git") && !Path::new(repository).exists()
}

/// Create the folder of copies or clones (and any missing parent) with
/// mode `0700`: what it holds is the user's code and the model's work, for
/// no other user to read. The copies inside keep the repository's modes.
fn private_folder(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
}

/// Clone `url` into `dest` (reused when it already holds a clone).
pub fn clone_url(url: &str, dest: &Path) -> Result<(), WorkspaceError> {
    if dest.join(".git").is_dir() {
        return Ok(());
    }
    if let Some(parent) = dest.parent() {
        private_folder(parent).map_err(io_at(parent))?;
    }
    git::command(None)
        .and_then(|c| {
            git::run(
                c,
                &[
                    "clone".as_ref(),
                    "--quiet".as_ref(),
                    "--".as_ref(),
                    url.as_ref(),
                    dest.as_os_str(),
                ],
            )
        })
        .map(drop)
        .map_err(|error| WorkspaceError::Clone {
            url: url.to_owned(),
            error,
        })
}

/// Clone `url` into a new folder of `dir` named after the repository
/// (`calc-1733000000000`); returns the folder.
pub fn clone_into(url: &str, dir: &Path) -> Result<PathBuf, WorkspaceError> {
    let name: String = url
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .rsplit(['/', ':'])
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let name = if name.is_empty() || name.starts_with('.') {
        "repo"
    } else {
        &name
    };
    let dest = dir.join(format!("{name}-{stamp}"));
    clone_url(url, &dest)?;
    Ok(dest)
}

/// Make (or find) the isolated copy of `repository` at `dest`. No link is
/// followed on either side (see [`crate::copy`]); the report lists what was
/// left out (special files, paths beyond a symlink, too-deep folders).
pub fn materialise_copy(repository: &Path, dest: &Path) -> Result<CopyReport, WorkspaceError> {
    if dest.is_dir() {
        return Ok(CopyReport::default());
    }
    let parent = dest
        .parent()
        .ok_or_else(|| WorkspaceError::NoParent(dest.to_path_buf()))?;
    private_folder(parent).map_err(io_at(parent))?;
    let staging = parent.join(format!(
        ".{}.partial",
        dest.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    let _ = std::fs::remove_dir_all(&staging);
    let made = match git_repository(repository) {
        Ok(Some(repo)) => git_copy(&repo, &staging),
        Ok(None) => std::fs::create_dir(&staging)
            .and_then(|()| copy::copy_tree(repository, &staging))
            .map_err(CopyFailure::from),
        Err(e) => Err(e.into()),
    };
    match made.and_then(|report| Ok(std::fs::rename(&staging, dest).map(|()| report)?)) {
        Ok(report) => Ok(report),
        Err(error) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(WorkspaceError::Copy {
                from: repository.to_path_buf(),
                to: dest.to_path_buf(),
                error,
            })
        }
    }
}

/// The repository at `path` when it is a git repository's top folder whose
/// git directory is inside it; `Ok(None)` for any other folder (copied
/// plainly). A git directory that points outside is an error.
fn git_repository(path: &Path) -> Result<Option<Repo>, GitError> {
    let Some(repo) = Repo::open(path)? else {
        return Ok(None);
    };
    // Something named `.git` that git does not take for a repository is
    // just a folder.
    let valid = git::command(Some(&repo))
        .and_then(|c| git::run(c, &["rev-parse".as_ref(), "--git-dir".as_ref()]))
        .is_ok();
    Ok(valid.then_some(repo))
}

fn git_copy(repo: &Repo, dest: &Path) -> Result<CopyReport, CopyFailure> {
    // `--no-hardlinks`: a hard-linked object file would let the copy's
    // workspace write into the user's own repository.
    let clone: [&OsStr; 6] = [
        "clone".as_ref(),
        "--quiet".as_ref(),
        "--local".as_ref(),
        "--no-hardlinks".as_ref(),
        "--".as_ref(),
        repo.git_dir.as_os_str(),
    ];
    git::command(None).and_then(|c| git::run(c, &[&clone[..], &[dest.as_os_str()]].concat()))?;
    // The working tree as it is now: every tracked or untracked, not ignored
    // path, copied over the clone (or removed where the user deleted it).
    let listed = git::command(Some(repo)).and_then(|c| {
        git::run(
            c,
            &[
                "ls-files".as_ref(),
                "-z".as_ref(),
                "--cached".as_ref(),
                "--others".as_ref(),
                "--exclude-standard".as_ref(),
            ],
        )
    })?;
    let mut report = CopyReport::default();
    let src = copy::open_root(&repo.top)?;
    let dst = copy::open_root(dest)?;
    for relative in listed.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let relative = Path::new(OsStr::from_bytes(relative));
        copy::overlay(&src, &dst, relative, &mut report)?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::sh;

    #[test]
    fn a_git_copy_has_history_and_the_current_working_tree() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).expect("mkdir");
        sh(
            &repo,
            "git init -q && printf 'v1\\n' > a && printf 'gone\\n' > b && \
             printf 'target/\\n' > .gitignore && git add -A && git commit -qm one && \
             printf 'v2\\n' > a && rm b && printf 'new\\n' > c && mkdir target && \
             printf 'junk\\n' > target/x",
        );
        let copy = tmp.path().join("copies/s1");
        materialise_copy(&repo, &copy).expect("copy");
        let read = |p: &str| std::fs::read_to_string(copy.join(p)).ok();
        assert_eq!(
            read("a").as_deref(),
            Some("v2\n"),
            "uncommitted change kept"
        );
        assert_eq!(read("b"), None, "deletion kept");
        assert_eq!(read("c").as_deref(), Some("new\n"), "untracked file kept");
        assert_eq!(read("target/x"), None, "ignored file left out");
        assert!(copy.join(".git").is_dir(), "history is there");
        // The copy is isolated: changing it leaves the user's checkout alone.
        std::fs::write(copy.join("a"), "changed in copy\n").expect("write");
        assert_eq!(
            std::fs::read_to_string(repo.join("a")).expect("read"),
            "v2\n"
        );
        // Made once: a second call (a resumed session) reuses it.
        materialise_copy(&repo, &copy).expect("again");
        assert_eq!(read("a").as_deref(), Some("changed in copy\n"));
    }

    #[test]
    fn a_plain_folder_is_copied_whole() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let src = tmp.path().join("src");
        std::fs::create_dir_all(src.join("d")).expect("mkdir");
        std::fs::write(src.join("d/f"), "x").expect("write");
        std::os::unix::fs::symlink("d/f", src.join("link")).expect("symlink");
        let copy = tmp.path().join("copy");
        materialise_copy(&src, &copy).expect("copy");
        assert_eq!(
            std::fs::read_to_string(copy.join("d/f")).expect("read"),
            "x"
        );
        assert_eq!(
            std::fs::read_link(copy.join("link")).expect("link"),
            PathBuf::from("d/f")
        );
    }

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_git_url("https://github.com/a/b"));
        assert!(is_git_url("git@github.com:a/b.git"));
        assert!(is_git_url("file:///srv/repo.git"));
        assert!(!is_git_url("/home/ann/src/calc"));
        assert!(!is_git_url("examples/calc"));
    }

    #[test]
    fn clone_url_clones_a_file_url() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let origin = tmp.path().join("origin");
        std::fs::create_dir(&origin).expect("mkdir");
        sh(
            &origin,
            "git init -q && echo hi > f && git add f && git commit -qm c",
        );
        let dest = clone_into(
            &format!("file://{}/", origin.display()),
            &tmp.path().join("clones"),
        )
        .expect("clone");
        assert!(
            dest.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("origin-")),
            "{}",
            dest.display()
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("f")).expect("read"),
            "hi\n"
        );
        let err =
            clone_url("file:///nonexistent/repo", &tmp.path().join("x")).expect_err("no repo");
        assert!(matches!(err, WorkspaceError::Clone { .. }), "{err}");
        assert!(err.to_string().contains("cannot clone"), "{err}");
    }
}
