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

/// How deep includes are followed (git's own limit is 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// Files inside `workspace` that the repository's configuration includes
/// (`include.path`, `includeIf.*.path`, followed from include to include),
/// but for those inside the metadata when it is read-only already
/// (`metadata_read_only`; with `git_write` it is not, and an include such
/// as `.git/team.inc` is as much git's configuration as `.git/config`). A
/// model that changed (or created) one would change git's configuration as
/// surely as by editing `.git/config`, so the mounts make each read-only.
pub(crate) fn includes(git: &Metadata, workspace: &Path, metadata_read_only: bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending: Vec<(PathBuf, usize)> = git
        .paths
        .iter()
        .flat_map(|dir| [dir.join("config"), dir.join("config.worktree")])
        .map(|config| (config, 0))
        .collect();
    while let Some((config, depth)) = pending.pop() {
        let Ok(text) = std::fs::read_to_string(&config) else {
            continue;
        };
        let base = config.parent().unwrap_or(Path::new("/"));
        for value in include_paths(&text) {
            let Some(path) = resolve_include(&value, base) else {
                continue;
            };
            let protected = metadata_read_only && git.paths.iter().any(|p| path.starts_with(p));
            if path.starts_with(workspace) && !protected && !found.contains(&path) {
                found.push(path.clone());
            }
            if depth + 1 < MAX_INCLUDE_DEPTH {
                pending.push((path, depth + 1));
            }
        }
    }
    found
}

/// Hook folders inside `workspace` that git would run hooks from but that
/// the metadata's own protection does not cover: the folder `core.hooksPath`
/// names (as husky and lefthook set it, e.g. `.husky/_`), and the target of
/// a `hooks` folder that is a link into the tree. A model that wrote there
/// would plant what the user's next `git commit` runs, so the mounts make
/// each read-only, in every mode and whatever `git_write` says (one inside
/// the metadata only when that is writable: `metadata_read_only` false).
pub(crate) fn hook_folders(
    git: &Metadata,
    workspace: &Path,
    metadata_read_only: bool,
) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut add = |path: PathBuf| {
        let protected = metadata_read_only && git.paths.iter().any(|p| path.starts_with(p));
        if path.starts_with(workspace) && !protected && !found.contains(&path) {
            found.push(path);
        }
    };
    let mut configs = Vec::new();
    for dir in git.paths.iter().filter(|p| p.is_dir()) {
        let hooks = dir.join("hooks");
        if std::fs::symlink_metadata(&hooks).is_ok_and(|m| m.file_type().is_symlink())
            && let Ok(target) = hooks.canonicalize()
        {
            add(target);
        }
        configs.push(dir.join("config"));
        configs.push(dir.join("config.worktree"));
    }
    configs.extend(includes(git, workspace, metadata_read_only));
    for config in configs {
        let Ok(text) = std::fs::read_to_string(&config) else {
            continue;
        };
        for value in config_values(&text, &["core"], "hookspath") {
            // Relative to where hooks run: the top of the work tree.
            if let Some(path) = resolve_include(&value, workspace) {
                add(path);
            }
        }
    }
    found
}

/// The values of `key` in the `sections` (all lower case; git's names are
/// case-insensitive; `[section "sub"]` counts as `section`), unquoted,
/// without a trailing comment.
fn config_values(config: &str, sections: &[&str], key: &str) -> Vec<String> {
    let mut inside = false;
    let mut values = Vec::new();
    for line in config.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            let name = header
                .split(|c: char| c == ']' || c == '"' || c.is_whitespace() || c == '.')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            inside = sections.contains(&name.as_str());
            let rest = header.split_once(']').map_or("", |(_, rest)| rest.trim());
            if inside && let Some(value) = key_value(rest, key) {
                values.push(value);
            }
            continue;
        }
        if inside && let Some(value) = key_value(line, key) {
            values.push(value);
        }
    }
    values
}

/// The `path` values of `[include]` and `[includeIf "…"]` sections, as git
/// reads them (names are case-insensitive; a value may be quoted).
fn include_paths(config: &str) -> Vec<String> {
    config_values(config, &["include", "includeif"], "path")
}

/// The value of a `KEY = VALUE` line, unquoted, without a trailing comment.
fn key_value(line: &str, wanted: &str) -> Option<String> {
    let (key, value) = line.split_once('=')?;
    if !key.trim().eq_ignore_ascii_case(wanted) {
        return None;
    }
    let value = value.trim();
    let value = match value.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next().unwrap_or(""),
        None => value.split(['#', ';']).next().unwrap_or("").trim(),
    };
    (!value.is_empty()).then(|| value.to_owned())
}

/// An include's path: `~/` from `$HOME`, a relative one from the folder of
/// the file that includes it; lexically normalised, then canonical when it
/// exists (a symlink to somewhere else is protected where it leads).
fn resolve_include(value: &str, base: &Path) -> Option<PathBuf> {
    let joined = if let Some(rest) = value.strip_prefix("~/") {
        PathBuf::from(std::env::var_os("HOME")?).join(rest)
    } else {
        base.join(value)
    };
    let mut normal = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                normal.pop();
            }
            std::path::Component::CurDir => {}
            other => normal.push(other),
        }
    }
    Some(normal.canonicalize().unwrap_or(normal))
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

    #[test]
    fn hook_folders_named_by_the_config_or_linked_into_the_tree() {
        let tmp = tempfile::tempdir().expect("tmp");
        let repo = tmp.path().canonicalize().expect("canonical").join("repo");
        std::fs::create_dir(&repo).expect("mkdir");
        git(&repo, &["init", "-q"]);
        git(&repo, &["config", "core.hooksPath", ".husky/_"]);
        std::fs::write(
            repo.join("team.gitconfig"),
            "[Core]\n  HooksPath = \"tools/hooks\" # x\n",
        )
        .expect("write");
        git(&repo, &["config", "include.path", "../team.gitconfig"]);
        let found = hook_folders(&metadata(&repo), &repo, true);
        assert_eq!(found, [repo.join(".husky/_"), repo.join("tools/hooks")]);

        // `.git/hooks` made a link into the tree; a hooks path outside the
        // tree is the host's (read-only in the guest already).
        std::fs::remove_dir_all(repo.join(".git/hooks")).expect("rm");
        std::fs::create_dir(repo.join("githooks")).expect("mkdir");
        std::os::unix::fs::symlink("../githooks", repo.join(".git/hooks")).expect("link");
        git(&repo, &["config", "core.hooksPath", "/usr/share/hooks"]);
        std::fs::write(repo.join("team.gitconfig"), "").expect("write");
        let found = hook_folders(&metadata(&repo), &repo, true);
        assert_eq!(found, [repo.join("githooks")]);
    }

    #[test]
    fn includes_inside_the_workspace_are_found_recursively() {
        let tmp = tempfile::tempdir().expect("tmp");
        let repo = tmp.path().canonicalize().expect("canonical").join("repo");
        std::fs::create_dir(&repo).expect("mkdir");
        git(&repo, &["init", "-q"]);
        let config = repo.join(".git/config");
        let mut text = std::fs::read_to_string(&config).expect("read");
        text.push_str(
            "[include]\n\tpath = ../team.gitconfig\n[includeIf \"gitdir:~/\"]\n\tPath = \"/etc/x\" ; a comment\n[includeif \"onbranch:main\"] path = ../missing.inc\n[core]\n\tpath = ../not-an-include\n",
        );
        std::fs::write(&config, text).expect("write");
        std::fs::write(
            repo.join("team.gitconfig"),
            "[include]\npath = nested.inc\n",
        )
        .expect("write");
        let found = includes(&metadata(&repo), &repo, true);
        let mut found: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(&repo).expect("inside").display().to_string())
            .collect();
        found.sort();
        assert_eq!(found, ["missing.inc", "nested.inc", "team.gitconfig"]);

        // An include inside the git folder counts once that folder is
        // writable (`git_write`), and so does a hooks folder there.
        let mut text = std::fs::read_to_string(&config).expect("read");
        text.push_str("[include]\n\tpath = team.inc\n[core]\n\thooksPath = .git/myhooks\n");
        std::fs::write(&config, text).expect("write");
        let git = metadata(&repo);
        assert!(!includes(&git, &repo, true).contains(&repo.join(".git/team.inc")));
        assert!(includes(&git, &repo, false).contains(&repo.join(".git/team.inc")));
        assert_eq!(hook_folders(&git, &repo, true), Vec::<PathBuf>::new());
        assert_eq!(
            hook_folders(&git, &repo, false),
            [repo.join(".git/myhooks")]
        );
    }
}
