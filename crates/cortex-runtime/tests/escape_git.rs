//! Escape attempts through repository metadata, from `bash` inside a real
//! local sandbox (issue 13, "repository metadata"; "protection of paths that
//! do not exist yet"). Git runs hooks and reads configuration from the whole
//! git folder (and from the folders a `.git` file leads to), so in
//! `workspace-write` all of it is read-only unless the user opted in; git's
//! read-only commands still work. Each case checks the host's metadata is
//! byte for byte what it was.

mod common;

use common::sandbox::{Sandbox, as_nobody, bash, is_root, start};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with one commit, a hook folder and an uncommitted change.
fn repository(dir: &Path) {
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "one\n").expect("write");
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-q", "-m", "first"]);
    std::fs::write(dir.join("a.txt"), "two\n").expect("write");
}

/// Every file under `dir` with its contents (symlinks as their target).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        if meta.is_dir() {
            files.insert(path.clone(), b"<dir>".to_vec());
            for entry in std::fs::read_dir(&path).expect("read_dir") {
                stack.push(entry.expect("entry").path());
            }
        } else if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).expect("link");
            files.insert(path, target.as_os_str().as_encoded_bytes().to_vec());
        } else {
            files.insert(path.clone(), std::fs::read(&path).expect("read"));
        }
    }
    files
}

/// What a hostile model tries against git's metadata, each on its own.
const ATTACKS: &[&str] = &[
    "echo 'touch /tmp/pwned' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    "mv .git/hooks .git/hooks.old && mkdir .git/hooks",
    "git config core.hooksPath .githooks",
    "git config core.fsmonitor 'touch /tmp/pwned'",
    "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config",
    "mv .git/config .git/config.old; printf '[core]\\n\\tpager = evil\\n' > .git/config",
    "echo /tmp > .git/commondir",
    "mkdir -p .git/info && echo '* filter=evil' > .git/info/attributes",
    "mkdir -p .git/modules/x && echo '[core]' > .git/modules/x/config",
    "echo ref: refs/heads/evil > .git/HEAD",
    "git commit -qam 'by the model'",
    "git branch evil",
    "rm -rf .git/objects",
];

#[tokio::test]
async fn the_git_folder_is_read_only_and_git_still_reads() {
    let runs: Vec<bool> = if is_root() {
        vec![false, true]
    } else {
        vec![false]
    };
    for nobody in runs {
        let sandbox = Sandbox::new();
        repository(sandbox.workspace.path());
        let provider = if nobody {
            as_nobody(&sandbox)
        } else {
            common::sandbox::provider(common::guest_binary(), Vec::new(), sandbox.homes.path())
        };
        let before = snapshot(&sandbox.path(".git"));
        let Some(guest) = start(&provider, &sandbox.spec()).await else {
            return;
        };
        for attack in ATTACKS {
            let out = bash(&guest, attack).await;
            assert!(
                !out.is_ok(),
                "`{attack}` succeeded (nobody: {nobody}): {}",
                out.output
            );
        }
        // Read-only git works: history, diff, status, stash list.
        let out = bash(
            &guest,
            "git log --oneline && git diff --stat && git status --short && git stash list && echo READ-OK",
        )
        .await;
        assert!(
            out.is_ok() && out.output.contains("READ-OK"),
            "{}",
            out.output
        );
        assert!(out.output.contains("first"), "{}", out.output);
        assert!(out.output.contains(" M a.txt"), "{}", out.output);
        // The working tree itself stays the model's to change.
        let out = bash(&guest, "echo three > a.txt && git diff --stat").await;
        assert!(out.is_ok(), "{}", out.output);
        guest.close().await;
        assert_eq!(
            before,
            snapshot(&sandbox.path(".git")),
            "the git folder changed"
        );
        assert!(!Path::new("/tmp/pwned").exists());
    }
}

#[tokio::test]
async fn a_linked_worktree_protects_the_folders_its_git_file_names() {
    let root = tempfile::tempdir().expect("root");
    let main = root.path().join("main");
    std::fs::create_dir(&main).expect("mkdir");
    repository(&main);
    git(&main, &["worktree", "add", "-q", "../wt"]);
    let sandbox = Sandbox::new();
    let wt = root.path().join("wt");
    let main_git = main.join(".git").canonicalize().expect("canonical");
    let before = snapshot(&main_git);
    let dot_git = std::fs::read(wt.join(".git")).expect(".git file");
    let spec = common::spec(&wt, true, true);
    let Some(guest) = sandbox.start_with(&spec).await else {
        return;
    };
    let worktree_git = main_git.join("worktrees/wt");
    for attack in [
        format!("echo evil > '{}/config'", main_git.display()),
        format!("echo x > '{}/hooks/post-checkout'", main_git.display()),
        format!("echo /tmp > '{}/commondir'", worktree_git.display()),
        "echo 'gitdir: /tmp/evil' > .git".to_owned(),
        "rm .git".to_owned(),
        "git commit -qam 'by the model'".to_owned(),
    ] {
        let out = bash(&guest, &attack).await;
        assert!(!out.is_ok(), "`{attack}` succeeded: {}", out.output);
    }
    let out = bash(
        &guest,
        "git log --oneline && git status --short && echo READ-OK",
    )
    .await;
    assert!(
        out.is_ok() && out.output.contains("READ-OK"),
        "{}",
        out.output
    );
    guest.close().await;
    assert_eq!(before, snapshot(&main_git));
    assert_eq!(dot_git, std::fs::read(wt.join(".git")).expect(".git file"));
}

#[tokio::test]
async fn missing_protected_paths_cannot_be_created() {
    // No .git and no .cortex: the model must not create either (a `.git`
    // it made would be a repository whose config the host's git reads).
    let sandbox = Sandbox::new();
    let Some(guest) = sandbox.start().await else {
        return;
    };
    for attack in [
        "mkdir -p .cortex && echo 'touch /tmp/pwned' > .cortex/setup",
        "git init -q",
        "rmdir .cortex && mkdir .cortex",
        "mkdir -p .git/hooks",
    ] {
        let out = bash(&guest, attack).await;
        assert!(!out.is_ok(), "`{attack}` succeeded: {}", out.output);
    }
    guest.close().await;
    assert!(!sandbox.path(".cortex/setup").exists());
    assert!(!sandbox.path(".git/config").exists());
    assert!(!sandbox.path(".git/hooks").exists());
}

#[tokio::test]
async fn git_write_allows_commits_but_never_hooks_or_config() {
    let mut sandbox = Sandbox::new();
    repository(sandbox.workspace.path());
    std::fs::remove_dir_all(sandbox.path(".git/hooks")).expect("no hooks folder");
    let config = std::fs::read(sandbox.path(".git/config")).expect("config");
    sandbox.provider.git_write = true;
    let Some(guest) = sandbox.start().await else {
        return;
    };
    let out = bash(
        &guest,
        "git -c user.name=m -c user.email=m@m commit -qam 'by the model' && git log --oneline",
    )
    .await;
    assert!(
        out.is_ok() && out.output.contains("by the model"),
        "{}",
        out.output
    );
    for attack in [
        "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
        "git config core.fsmonitor evil",
        "echo evil >> .git/config",
        // Configuration and objects from elsewhere, by the files that
        // redirect them (empty read-only placeholders where missing).
        "printf '[core]\\n\\thooksPath = /tmp\\n' > .git/config.worktree",
        "echo /tmp/objects > .git/objects/info/alternates",
    ] {
        let out = bash(&guest, attack).await;
        assert!(!out.is_ok(), "`{attack}` succeeded: {}", out.output);
    }
    guest.close().await;
    assert!(!sandbox.path(".git/hooks/pre-commit").exists());
    assert_eq!(
        config,
        std::fs::read(sandbox.path(".git/config")).expect("config")
    );
}

/// With `git_write` (issue 38, principle 4): the git folder cannot be moved
/// aside with its protections, and nothing in it that sends git to another
/// config, hook folder or object store can change or be made: a linked
/// worktree's `commondir`, `gitdir` and `config.worktree`, the `worktrees`
/// and `modules` folders, an existing `commondir`, an include and a hooks
/// folder the config names inside the git folder. Commits still work. As
/// the test's user and, under root, as `nobody`.
#[tokio::test]
async fn git_write_cannot_redirect_git_elsewhere() {
    let mut users = vec![false];
    if is_root() {
        users.push(true);
    }
    for nobody in users {
        let mut sandbox = Sandbox::new();
        let ws = sandbox.workspace.path().to_path_buf();
        repository(&ws);
        let elsewhere = tempfile::tempdir().expect("elsewhere");
        git(
            &ws,
            &[
                "worktree",
                "add",
                "-q",
                &elsewhere.path().join("wt").display().to_string(),
            ],
        );
        git(&ws, &["config", "include.path", "team.inc"]);
        git(&ws, &["config", "core.hooksPath", ".git/team-hooks"]);
        std::fs::write(ws.join(".git/team.inc"), "[user]\n\tname = team\n").expect("write");
        if nobody {
            sandbox.provider = as_nobody(&sandbox);
            common::sandbox::give_to_nobody(elsewhere.path());
        }
        sandbox.provider.git_write = true;
        let protected: Vec<PathBuf> = [".git/worktrees", ".git/team.inc", ".git/config"]
            .iter()
            .map(|p| ws.join(p))
            .collect();
        let before: Vec<_> = protected.iter().map(|p| snapshot(p)).collect();
        let Some(guest) = start(&sandbox.provider, &sandbox.spec()).await else {
            return;
        };
        let who = if nobody { "nobody" } else { "own user" };
        for attack in [
            "mv .git .git-old",
            "mv .git/objects .git/objects-old",
            "mv .git/objects/info .git/info-old",
            "echo \"$PWD/evil\" > .git/worktrees/wt/commondir",
            "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/worktrees/wt/config.worktree",
            "echo /tmp/x/.git > .git/worktrees/wt/gitdir",
            "mv .git/worktrees .git/worktrees-old",
            "mkdir .git/worktrees/planted",
            "mkdir -p .git/modules/lib && echo '[core]' > .git/modules/lib/config",
            "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/team.inc",
            "mkdir -p .git/team-hooks && echo 'touch /tmp/pwned' > .git/team-hooks/pre-commit",
        ] {
            let out = bash(&guest, attack).await;
            assert!(!out.is_ok(), "{who}: `{attack}` succeeded: {}", out.output);
        }
        let out = bash(
            &guest,
            "git -c user.name=m -c user.email=m@m commit -qam 'by the model' && git log --oneline",
        )
        .await;
        assert!(
            out.is_ok() && out.output.contains("by the model"),
            "{who}: {}",
            out.output
        );
        guest.close().await;
        let after: Vec<_> = protected.iter().map(|p| snapshot(p)).collect();
        assert_eq!(before, after, "{who}");
        for path in [
            ".git/modules/lib",
            ".git/team-hooks/pre-commit",
            ".git/commondir",
        ] {
            assert!(!ws.join(path).exists(), "{who}: {path}");
        }
    }
}

#[tokio::test]
async fn an_isolated_copy_keeps_its_git_folder_writable() {
    let copies = tempfile::tempdir().expect("copies");
    let copy = copies.path().join("s1");
    std::fs::create_dir(&copy).expect("mkdir");
    repository(&copy);
    let mut sandbox = Sandbox::new();
    sandbox.provider.copies = Some(copies.path().to_path_buf());
    let Some(guest) = sandbox.start_with(&common::spec(&copy, true, true)).await else {
        return;
    };
    let out = bash(
        &guest,
        "git -c user.name=m -c user.email=m@m commit -qam 'in the copy' && git log --oneline",
    )
    .await;
    assert!(
        out.is_ok() && out.output.contains("in the copy"),
        "{}",
        out.output
    );
    let out = bash(&guest, "echo evil > .git/hooks/pre-commit").await;
    assert!(!out.is_ok(), "{}", out.output);
    guest.close().await;
}

// Below the workspace's own `.git` (issue 20, principle 5): the user's nested
// repositories and bare repositories, and the files the repository's config
// includes, are read-only in the guest too. (What the model makes new is the
// harness's to neutralise after the turn: cortex-core's tests/nested_git.rs.)

#[tokio::test]
async fn the_users_nested_and_bare_repositories_are_read_only() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace.path();
    repository(ws);
    std::fs::create_dir(ws.join("sub")).expect("mkdir");
    repository(&ws.join("sub"));
    git(ws, &["init", "-q", "--bare", "bare.git"]);
    let before = (
        snapshot(&ws.join("sub/.git")),
        snapshot(&ws.join("bare.git")),
    );
    let Some(guest) = sandbox.start().await else {
        return;
    };
    for attack in [
        "echo 'touch /tmp/pwned' > sub/.git/hooks/pre-commit",
        "git -C sub config core.fsmonitor 'touch /tmp/pwned'",
        "printf '[core]\\n\\thooksPath = /tmp\\n' >> sub/.git/config",
        "mv sub/.git sub/.git.old",
        "echo 'touch /tmp/pwned' > bare.git/hooks/reference-transaction",
        "git -C bare.git config core.hooksPath /tmp",
        "rm bare.git/HEAD",
    ] {
        let out = bash(&guest, attack).await;
        assert!(!out.is_ok(), "`{attack}` succeeded: {}", out.output);
    }
    // The nested working tree stays the model's, and git still reads it.
    let out = bash(
        &guest,
        "echo two > sub/a.txt && git -C sub log --oneline && git -C sub status --short",
    )
    .await;
    assert!(
        out.is_ok() && out.output.contains("first"),
        "{}",
        out.output
    );
    guest.close().await;
    let after = (
        snapshot(&ws.join("sub/.git")),
        snapshot(&ws.join("bare.git")),
    );
    assert!(before == after, "nested metadata changed");
    assert!(!Path::new("/tmp/pwned").exists());
}

#[tokio::test]
async fn files_the_config_includes_are_read_only_even_when_missing() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace.path();
    repository(ws);
    std::fs::write(ws.join("team.gitconfig"), "[user]\n\tname = team\n").expect("write");
    git(ws, &["config", "include.path", "../team.gitconfig"]);
    git(
        ws,
        &["config", "includeIf.gitdir:/.path", "../later.gitconfig"],
    );
    // The plant is live: an ordinary git reads the included file.
    let name = Command::new("git")
        .args(["config", "user.name"])
        .current_dir(ws)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git");
    assert_eq!(String::from_utf8_lossy(&name.stdout).trim(), "team");
    let team = std::fs::read(ws.join("team.gitconfig")).expect("read");
    let Some(guest) = sandbox.start().await else {
        return;
    };
    for attack in [
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> team.gitconfig",
        "printf '[core]\\n\\thooksPath = /tmp\\n' > later.gitconfig",
        "rm -f team.gitconfig && echo '[core]' > team.gitconfig",
    ] {
        let out = bash(&guest, attack).await;
        assert!(!out.is_ok(), "`{attack}` succeeded: {}", out.output);
    }
    // The rest of the working tree is writable.
    let out = bash(&guest, "echo two > a.txt").await;
    assert!(out.is_ok(), "{}", out.output);
    guest.close().await;
    assert_eq!(
        team,
        std::fs::read(ws.join("team.gitconfig")).expect("read")
    );
    assert_eq!(
        std::fs::read(ws.join("later.gitconfig")).expect("placeholder"),
        b""
    );
}
