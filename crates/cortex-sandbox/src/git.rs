//! Where a workspace's repository metadata lives, so the mounts can make all
//! of it read-only: the `.git` folder, or for a linked worktree or a
//! submodule the folder its `.git` file names (and a worktree's common
//! folder). Git reads configuration and runs hooks from any of them, so a
//! model that could change one could run code the next time anyone runs git
//! on the host.
//!
//! A `.git` file may have been written by an earlier session, so a folder it
//! names outside the workspace is only followed when git's own layout
//! vouches for it: a worktree's folder `C/worktrees/NAME` whose `gitdir`
//! file points back at this workspace and whose `commondir` is `C`, or a
//! submodule's folder under `S/.git/modules/` of a superproject `S` that
//! contains the workspace. Anything else is reported and not mounted.

use std::path::{Path, PathBuf};

/// The metadata folders (and files) to mount read-only, and warnings.
pub(crate) struct Metadata {
    pub paths: Vec<PathBuf>,
    pub warnings: Vec<String>,
}

/// What to protect for `workspace` (a canonical path).
pub(crate) fn metadata(workspace: &Path) -> Metadata {
    let mut found = Metadata {
        paths: Vec::new(),
        warnings: Vec::new(),
    };
    let dot_git = workspace.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return found;
    };
    if meta.is_dir() {
        found.paths.push(dot_git);
        return found;
    }
    if !meta.is_file() {
        found.warnings.push(format!(
            "{} is neither a folder nor a file; git metadata not protected",
            dot_git.display()
        ));
        return found;
    }
    // The file itself: the model must not point it elsewhere.
    found.paths.push(dot_git.clone());
    match linked_git_dir(workspace, &dot_git) {
        Ok(dirs) => found.paths.extend(dirs),
        Err(reason) => found.warnings.push(format!(
            "{}: {reason}; its git folder is not mounted in the guest",
            dot_git.display()
        )),
    }
    found
}

/// Why a `.git` file's folder is not mounted; the message is the warning.
#[derive(Debug, thiserror::Error)]
enum Unlinked {
    #[error("unreadable ({0})")]
    Unreadable(std::io::Error),
    #[error("not a `gitdir:` file")]
    NotGitdir,
    #[error("names {target}, which does not resolve ({error})")]
    Unresolved {
        target: String,
        error: std::io::Error,
    },
    #[error("a worktree folder without a common folder")]
    NoCommonFolder,
    #[error("names {}, outside the workspace and not a worktree or submodule folder of it", .0.display())]
    Outside(PathBuf),
}

/// The folders a `.git` file leads to, checked as the module docs say.
fn linked_git_dir(workspace: &Path, dot_git: &Path) -> Result<Vec<PathBuf>, Unlinked> {
    let text = std::fs::read_to_string(dot_git).map_err(Unlinked::Unreadable)?;
    let target = text
        .strip_prefix("gitdir:")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or(Unlinked::NotGitdir)?;
    let git_dir = workspace
        .join(target)
        .canonicalize()
        .map_err(|error| Unlinked::Unresolved {
            target: target.to_owned(),
            error,
        })?;
    if git_dir.starts_with(workspace) {
        return Ok(vec![git_dir]);
    }
    if is_worktree_of(&git_dir, dot_git) {
        let common = git_dir
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .ok_or(Unlinked::NoCommonFolder)?;
        return Ok(vec![git_dir, common]);
    }
    if is_module_of(&git_dir, workspace) {
        return Ok(vec![git_dir]);
    }
    Err(Unlinked::Outside(git_dir))
}

/// `C/worktrees/NAME` with `gitdir` naming `dot_git` and `commondir` = `C`.
fn is_worktree_of(git_dir: &Path, dot_git: &Path) -> bool {
    let Some(common) = git_dir.parent().filter(|p| p.ends_with("worktrees")) else {
        return false;
    };
    let Some(common) = common.parent() else {
        return false;
    };
    let back = read_path(git_dir, "gitdir");
    let commondir = read_path(git_dir, "commondir");
    back.as_deref() == Some(dot_git) && commondir.as_deref() == Some(common)
}

/// Under `S/.git/modules/` where `S` contains the workspace.
fn is_module_of(git_dir: &Path, workspace: &Path) -> bool {
    git_dir.ancestors().any(|dir| {
        dir.ends_with(".git/modules")
            && dir
                .parent()
                .and_then(Path::parent)
                .is_some_and(|superproject| workspace.starts_with(superproject))
    })
}

/// The canonical path a one-line file in `dir` names (relative to `dir`).
fn read_path(dir: &Path, name: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join(name)).ok()?;
    dir.join(text.trim()).canonicalize().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn a_repository_a_worktree_and_a_forged_file() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().canonicalize().expect("canonical");
        let repo = root.join("repo");
        std::fs::create_dir(&repo).expect("mkdir");
        git(&repo, &["init", "-q"]);
        git(&repo, &["commit", "-q", "--allow-empty", "-m", "one"]);
        assert_eq!(metadata(&repo).paths, [repo.join(".git")]);

        git(&repo, &["worktree", "add", "-q", "../wt"]);
        let wt = root.join("wt");
        let found = metadata(&wt);
        assert_eq!(
            found.paths,
            [
                wt.join(".git"),
                repo.join(".git/worktrees/wt"),
                repo.join(".git")
            ],
            "{:?}",
            found.warnings
        );

        // A `.git` file pointing at another repository's metadata (or any
        // folder) is not followed.
        let forged = root.join("forged");
        std::fs::create_dir(&forged).expect("mkdir");
        std::fs::write(
            forged.join(".git"),
            format!("gitdir: {}\n", repo.join(".git").display()),
        )
        .expect("write");
        let found = metadata(&forged);
        assert_eq!(found.paths, [forged.join(".git")]);
        assert!(
            found.warnings[0].contains("not a worktree"),
            "{:?}",
            found.warnings
        );
        std::fs::write(
            forged.join(".git"),
            format!("gitdir: {}\n", repo.join(".git/worktrees/wt").display()),
        )
        .expect("write");
        assert_eq!(metadata(&forged).paths, [forged.join(".git")]);
        assert!(metadata(&root.join("none")).paths.is_empty());
    }
}
