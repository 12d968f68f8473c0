//! Whether the repository's `.cortex/setup` may run.
//!
//! The script runs before the model is asked anything, in every mode, so a
//! script that a model wrote in an earlier session (or that arrived with
//! untracked files) would run again in the next one. It runs only when its
//! content is exactly the one committed in the repository's `HEAD`: a change
//! to it has to be committed by someone first. Anything else is skipped with
//! the reason (`env.setup_skipped`). The check reads the workspace's file
//! without following a link and the committed one with the hardened git, and
//! the guest is then given the checked content itself, not the path, so the
//! file cannot change between the check and the run.

use crate::copy::{open_dir, open_root};
use crate::git::{self, Repo};
use rustix::fs::{FileType, Mode, OFlags};
use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::Path;

/// The largest script run (it is passed to bash as one argument).
pub const SETUP_MAX_BYTES: u64 = 64 * 1024;

/// What to do about `.cortex/setup`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setup {
    /// There is none.
    Absent,
    /// Run this content (equal to the committed one).
    Trusted(String),
    /// Do not run it, for this reason.
    Skipped(String),
}

/// Decide for the workspace `workspace` of `repository` (the same folder in
/// place, the copy's folder for a copy).
pub fn check(repository: &Path, workspace: &Path) -> Setup {
    let content = match read_script(workspace) {
        Ok(Some(content)) => content,
        Ok(None) => return Setup::Absent,
        Err(reason) => return Setup::Skipped(reason.to_string()),
    };
    let committed = match Repo::open(repository) {
        Ok(Some(repo)) => git::command(Some(&repo)).and_then(|c| {
            git::run(
                c,
                &[
                    "cat-file".as_ref(),
                    "blob".as_ref(),
                    "HEAD:.cortex/setup".as_ref(),
                ],
            )
        }),
        Ok(None) => {
            return Setup::Skipped(
                "the repository is not a git repository, so no committed version vouches for it"
                    .into(),
            );
        }
        Err(e) => return Setup::Skipped(format!("its committed version cannot be read: {e}")),
    };
    match committed {
        Err(_) => Setup::Skipped("it is not committed in HEAD".into()),
        Ok(committed) if committed != content => {
            Setup::Skipped("it differs from the version committed in HEAD".into())
        }
        Ok(_) => match String::from_utf8(content) {
            Ok(text) => Setup::Trusted(text),
            Err(_) => Setup::Skipped("it is not UTF-8 text".into()),
        },
    }
}

/// The bash command that runs `content` as `.cortex/setup` (`$0` names it).
pub fn command(content: &str) -> String {
    format!("bash -c '{}' .cortex/setup", content.replace('\'', r"'\''"))
}

/// Why the workspace's `.cortex/setup` cannot be used; the message is the
/// reason `env.setup_skipped` gives.
#[derive(Debug, thiserror::Error)]
enum Unusable {
    #[error("the workspace cannot be opened: {0}")]
    Workspace(std::io::Error),
    #[error("`.cortex` is not a folder")]
    NotAFolder,
    #[error("`.cortex`: {0}")]
    Folder(rustix::io::Errno),
    #[error("it is a symbolic link")]
    Link,
    #[error("it is not a regular file")]
    NotRegular,
    #[error("it is larger than {} KiB", SETUP_MAX_BYTES / 1024)]
    TooLarge,
    #[error("{0}")]
    Read(std::io::Error),
}

/// The workspace's `.cortex/setup`, read without following any link:
/// `Ok(None)` when absent, `Err` with the reason it cannot be used.
fn read_script(workspace: &Path) -> Result<Option<Vec<u8>>, Unusable> {
    use rustix::io::Errno;
    let root = open_root(workspace).map_err(Unusable::Workspace)?;
    let dir = match open_dir(root.as_fd(), OsStr::new(".cortex")) {
        Ok(dir) => dir,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP | Errno::NOTDIR) => return Err(Unusable::NotAFolder),
        Err(e) => return Err(Unusable::Folder(e)),
    };
    let file = match rustix::fs::openat(
        &dir,
        "setup",
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(file) => file,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP) => return Err(Unusable::Link),
        Err(e) => return Err(Unusable::Read(e.into())),
    };
    let stat = rustix::fs::fstat(&file).map_err(|e| Unusable::Read(e.into()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(Unusable::NotRegular);
    }
    let mut content = Vec::new();
    std::fs::File::from(file)
        .take(SETUP_MAX_BYTES + 1)
        .read_to_end(&mut content)
        .map_err(Unusable::Read)?;
    if content.len() as u64 > SETUP_MAX_BYTES {
        return Err(Unusable::TooLarge);
    }
    Ok(Some(content))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::sh;
    use std::process::Command;

    #[test]
    fn only_the_committed_content_is_trusted() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path();
        sh(
            repo,
            "git init -q && echo hi > f && git add f && git commit -qm c",
        );
        assert_eq!(check(repo, repo), Setup::Absent);
        sh(repo, "mkdir .cortex && echo 'echo planted' > .cortex/setup");
        assert_eq!(
            check(repo, repo),
            Setup::Skipped("it is not committed in HEAD".into())
        );
        sh(repo, "git add .cortex && git commit -qm setup");
        assert_eq!(check(repo, repo), Setup::Trusted("echo planted\n".into()));
        sh(repo, "echo 'echo more' >> .cortex/setup");
        assert_eq!(
            check(repo, repo),
            Setup::Skipped("it differs from the version committed in HEAD".into())
        );
        sh(repo, "rm .cortex/setup && ln -s ../f .cortex/setup");
        assert_eq!(
            check(repo, repo),
            Setup::Skipped("it is a symbolic link".into())
        );
    }

    #[test]
    fn a_folder_that_is_not_a_repository_runs_no_setup() {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(tmp.path().join(".cortex")).expect("mkdir");
        std::fs::write(tmp.path().join(".cortex/setup"), "echo x").expect("write");
        assert!(
            matches!(check(tmp.path(), tmp.path()), Setup::Skipped(r) if r.contains("not a git repository"))
        );
    }

    #[test]
    fn the_command_quotes_the_content_whole() {
        let script = "echo 'it''s' \"$0\"\n";
        let out = Command::new("bash")
            .args(["-c", &command(script)])
            .output()
            .expect("bash");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "its .cortex/setup\n");
    }
}
