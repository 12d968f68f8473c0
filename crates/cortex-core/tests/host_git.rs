//! Plant, then trigger: a hostile repository's git metadata (a hook,
//! `core.hooksPath` into the tree, `core.fsmonitor`, an included config, a
//! `.git` file or `commondir` pointing elsewhere) must not run anything when
//! Cortex itself runs git on the host (the copy materialisation). Each plant
//! is first shown to be live with an ordinary `git`, so a test cannot pass
//! because the plant was inert.

use cortex_core::git::{self, Repo};
use cortex_core::materialise_copy;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

fn sh(dir: &Path, script: &str) {
    let status = Command::new("bash")
        .args(["-c", script])
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .expect("bash");
    assert!(status.success(), "{script}");
}

/// An executable script at `path` that appends its name to `marker`.
fn plant(path: &Path, marker: &Path) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        path,
        format!(
            "#!/bin/sh\necho \"{} $*\" >> {}\nexit 0\n",
            path.display(),
            marker.display()
        ),
    )
    .expect("plant");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

const HOOKS: &[&str] = &[
    "pre-commit",
    "post-commit",
    "post-checkout",
    "reference-transaction",
    "post-index-change",
    "pre-auto-gc",
];

/// A repository with one commit and every plant: hooks in `.git/hooks`,
/// `core.hooksPath` and `core.fsmonitor` into the tree, and an included
/// config file in the tree that sets them again.
fn hostile_repo(root: &Path, marker: &Path) -> PathBuf {
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    sh(
        &repo,
        "git init -q && echo v1 > a && git add a && git commit -qm one && echo v2 > a",
    );
    for hook in HOOKS {
        plant(&repo.join(".git/hooks").join(hook), marker);
        plant(&repo.join("tree-hooks").join(hook), marker);
    }
    plant(&repo.join("fsmonitor.sh"), marker);
    std::fs::write(
        repo.join("included.cfg"),
        format!(
            "[core]\n\tfsmonitor = {}\n\thooksPath = {}\n",
            repo.join("fsmonitor.sh").display(),
            repo.join("tree-hooks").display()
        ),
    )
    .expect("include");
    sh(
        &repo,
        "git config core.fsmonitor \"$PWD/fsmonitor.sh\" && \
         git config core.hooksPath \"$PWD/tree-hooks\" && \
         git config include.path \"$PWD/included.cfg\"",
    );
    repo
}

fn ran(marker: &Path) -> String {
    std::fs::read_to_string(marker).unwrap_or_default()
}

#[test]
fn copying_a_planted_repository_runs_none_of_its_programs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let marker = tmp.path().join("marker");
    let repo = hostile_repo(tmp.path(), &marker);
    // Live: an ordinary `git ls-files` (what the copy runs) runs the monitor,
    // an ordinary commit runs the hooks.
    sh(
        &repo,
        "git ls-files -z --cached --others --exclude-standard >/dev/null",
    );
    assert!(
        ran(&marker).contains("fsmonitor.sh"),
        "plant inert: {}",
        ran(&marker)
    );
    sh(&repo, "git commit -q --allow-empty -m live");
    assert!(
        ran(&marker).contains("tree-hooks/pre-commit"),
        "{}",
        ran(&marker)
    );
    std::fs::remove_file(&marker).expect("reset");

    let copy = tmp.path().join("copies/s1");
    materialise_copy(&repo, &copy).expect("copy");
    assert_eq!(ran(&marker), "", "a planted program ran on the host");
    assert_eq!(std::fs::read_to_string(copy.join("a")).expect("a"), "v2\n");
    assert!(copy.join(".git").is_dir());
}

#[test]
fn the_hardened_command_runs_no_hook_even_for_a_commit() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let marker = tmp.path().join("marker");
    let repo = hostile_repo(tmp.path(), &marker);
    let opened = Repo::open(&repo).expect("open").expect("a repository");
    let mut commit = git::command(Some(&opened)).expect("git");
    commit.args([
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "hardened",
    ]);
    let out = commit.output().expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(ran(&marker), "", "a hook or the monitor ran");
    // The commit happened: hooks were skipped, not the command.
    sh(&repo, "git log -1 --format=%s | grep -qx hardened");
}

#[test]
fn a_git_directory_outside_the_repository_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let marker = tmp.path().join("marker");
    let elsewhere = hostile_repo(&tmp.path().join("elsewhere"), &marker);

    // A `.git` file pointing at another repository's git directory.
    let linked = tmp.path().join("linked");
    std::fs::create_dir_all(&linked).expect("mkdir");
    std::fs::write(linked.join("a"), "x").expect("write");
    std::fs::write(
        linked.join(".git"),
        format!("gitdir: {}\n", elsewhere.join(".git").display()),
    )
    .expect(".git file");
    let err = materialise_copy(&linked, &tmp.path().join("c1"))
        .expect_err("refused")
        .to_string();
    assert!(err.contains("points outside the repository"), "{err}");

    // A `commondir` leading out of an otherwise local `.git`.
    let common = tmp.path().join("common");
    std::fs::create_dir_all(&common).expect("mkdir");
    sh(
        &common,
        "git init -q && echo y > b && git add b && git commit -qm c",
    );
    std::fs::write(
        common.join(".git/commondir"),
        elsewhere.join(".git").display().to_string(),
    )
    .expect("commondir");
    let err = materialise_copy(&common, &tmp.path().join("c2"))
        .expect_err("refused")
        .to_string();
    assert!(err.contains("commondir"), "{err}");

    // A `.git` symlink out of the tree.
    let symlinked = tmp.path().join("symlinked");
    std::fs::create_dir_all(&symlinked).expect("mkdir");
    std::os::unix::fs::symlink(elsewhere.join(".git"), symlinked.join(".git")).expect("ln");
    let err = materialise_copy(&symlinked, &tmp.path().join("c3"))
        .expect_err("refused")
        .to_string();
    assert!(err.contains("points outside"), "{err}");

    assert_eq!(ran(&marker), "", "the other repository's programs ran");
    for copy in ["c1", "c2", "c3"] {
        assert!(!tmp.path().join(copy).exists(), "{copy} made anyway");
    }
}

#[test]
fn the_copy_shares_no_object_file_with_the_repository() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    sh(
        &repo,
        "git init -q && echo hi > f && git add f && git commit -qm c",
    );
    let copy = tmp.path().join("copy");
    materialise_copy(&repo, &copy).expect("copy");
    let objects = |root: &Path| -> Vec<(u64, u64)> {
        let mut found = Vec::new();
        for dir in std::fs::read_dir(root.join(".git/objects")).expect("objects") {
            let dir = dir.expect("entry").path();
            if dir.is_dir() {
                for file in std::fs::read_dir(&dir).expect("dir") {
                    let meta = file.expect("file").metadata().expect("meta");
                    found.push((meta.dev(), meta.ino()));
                }
            }
        }
        found
    };
    let (ours, theirs) = (objects(&repo), objects(&copy));
    assert!(!ours.is_empty() && !theirs.is_empty());
    assert!(
        theirs.iter().all(|inode| !ours.contains(inode)),
        "an object file is hard-linked into the copy"
    );
}
