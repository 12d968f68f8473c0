//! Escape attempts through repository metadata below the workspace's own
//! `.git` (issue 20, principle 5), from `bash` inside a real local sandbox:
//! the user's nested repositories and bare repositories, and the files the
//! repository's config includes, are read-only in the guest, as `.git` is.
//! (What the model makes new is the harness's to neutralise after the turn:
//! `crates/cortex-core/tests/nested_git.rs`.)

mod common;

use common::sandbox::{Sandbox, bash};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file under `dir` with its contents.
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
        } else {
            files.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
        }
    }
    files
}

fn repository(dir: &Path) {
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "one\n").expect("write");
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

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
        assert!(!out.ok, "`{attack}` succeeded: {}", out.output);
    }
    // The nested working tree stays the model's, and git still reads it.
    let out = bash(
        &guest,
        "echo two > sub/a.txt && git -C sub log --oneline && git -C sub status --short",
    )
    .await;
    assert!(out.ok && out.output.contains("first"), "{}", out.output);
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
        assert!(!out.ok, "`{attack}` succeeded: {}", out.output);
    }
    // The rest of the working tree is writable.
    let out = bash(&guest, "echo two > a.txt").await;
    assert!(out.ok, "{}", out.output);
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
