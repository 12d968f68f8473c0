//! `--workspace copy` on hostile trees: links are copied as links and never
//! followed on either side, special files are skipped with a note, odd names
//! and deep trees have a clear outcome, and nothing hangs.

use cortex_core::materialise_copy;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
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

/// Every regular file under `root`, never following a link.
fn files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let entry = entry.expect("entry");
            let kind = entry.file_type().expect("type");
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                out.push((entry.path(), std::fs::read(entry.path()).expect("read")));
            }
        }
    }
    out
}

#[test]
fn a_tracked_folder_swapped_for_a_symlink_is_not_read_through() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(outside.join("passwd"), "SECRET").expect("secret");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("sub")).expect("mkdir");
    sh(
        &repo,
        "echo fake > sub/passwd && git init -q && git add -A && git commit -qm c",
    );
    // What a model in an earlier session did.
    std::fs::remove_dir_all(repo.join("sub")).expect("rm");
    symlink(&outside, repo.join("sub")).expect("ln");

    let copy = tmp.path().join("copy");
    let report = materialise_copy(&repo, &copy).expect("copy");
    assert!(
        files(&copy).iter().all(|(_, c)| c != b"SECRET"),
        "a host file was read into the copy"
    );
    assert_eq!(std::fs::read_link(copy.join("sub")).expect("link"), outside);
    assert!(
        report
            .skipped
            .iter()
            .any(|s| s.contains("beyond a symbolic link")),
        "{report:?}"
    );
}

#[test]
fn a_committed_symlink_is_never_written_through() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    symlink(&outside, repo.join("link")).expect("ln");
    sh(&repo, "git init -q && git add -A && git commit -qm c");
    // The working tree has a real folder where the commit has the link:
    // the clone checks the link out, the overlay writes `link/pwned`.
    std::fs::remove_file(repo.join("link")).expect("rm");
    std::fs::create_dir(repo.join("link")).expect("mkdir");
    std::fs::write(repo.join("link/pwned"), "x").expect("write");

    let copy = tmp.path().join("copy");
    materialise_copy(&repo, &copy).expect("copy");
    assert!(
        !outside.join("pwned").exists(),
        "written through the link onto the host"
    );
    assert!(
        std::fs::symlink_metadata(copy.join("link"))
            .expect("meta")
            .is_dir()
    );
    assert_eq!(std::fs::read(copy.join("link/pwned")).expect("read"), b"x");
}

#[test]
fn special_files_are_skipped_with_a_note_and_nothing_hangs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for git in [false, true] {
        let repo = tmp.path().join(format!("repo-{git}"));
        std::fs::create_dir_all(&repo).expect("mkdir");
        std::fs::write(repo.join("plain"), "p").expect("write");
        // In a repository, a tracked file swapped for a FIFO (git lists it;
        // it lists no untracked special file at all).
        std::fs::write(repo.join("fifo"), "f").expect("write");
        if git {
            sh(
                &repo,
                "git init -q && git add plain fifo && git commit -qm c",
            );
        }
        sh(&repo, "rm fifo && mkfifo fifo");
        let _socket = std::os::unix::net::UnixListener::bind(repo.join("sock")).expect("bind");
        let device = Command::new("mknod")
            .arg(repo.join("null"))
            .args(["c", "1", "3"])
            .status()
            .is_ok_and(|s| s.success());
        if !device {
            cortex_testkit::skip_current(
                "root",
                "mknod not permitted here: the device-node case is not exercised",
            );
        }
        let copy = tmp.path().join(format!("copy-{git}"));
        let report = materialise_copy(&repo, &copy).expect("copy");
        let notes = report.skipped.join("\n");
        assert!(notes.contains("fifo: a FIFO"), "{notes}");
        if !git {
            assert!(notes.contains("sock: a socket"), "{notes}");
        }
        if device && !git {
            assert!(notes.contains("null: a device node"), "{notes}");
        }
        for name in ["fifo", "sock", "null"] {
            assert!(
                std::fs::symlink_metadata(copy.join(name)).is_err(),
                "{name} copied"
            );
        }
        assert_eq!(std::fs::read(copy.join("plain")).expect("plain"), b"p");
    }
}

#[test]
fn a_hard_link_to_an_outside_file_becomes_an_independent_copy() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let outside = tmp.path().join("outside.txt");
    std::fs::write(&outside, "original").expect("write");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    std::fs::hard_link(&outside, repo.join("linked.txt")).expect("link");
    let copy = tmp.path().join("copy");
    materialise_copy(&repo, &copy).expect("copy");
    assert_eq!(
        std::fs::read(copy.join("linked.txt")).expect("read"),
        b"original"
    );
    std::fs::write(copy.join("linked.txt"), "changed in the copy").expect("write");
    assert_eq!(std::fs::read(&outside).expect("read"), b"original");
}

#[test]
fn symlink_loops_and_odd_names_are_copied_as_they_are() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for git in [false, true] {
        let repo = tmp.path().join(format!("repo-{git}"));
        std::fs::create_dir_all(repo.join("d")).expect("mkdir");
        symlink("b", repo.join("a")).expect("ln");
        symlink("a", repo.join("b")).expect("ln");
        symlink("..", repo.join("d/up")).expect("ln");
        symlink("self", repo.join("self")).expect("ln");
        let names: [&OsStr; 3] = [
            OsStr::new("new\nline"),
            OsStr::new("esc\x1b]52;c;eA==\x07\r"),
            OsStr::from_bytes(b"not-utf8-\xff\xfe"),
        ];
        for name in names {
            std::fs::write(repo.join("d").join(name), name.as_bytes()).expect("write");
        }
        if git {
            sh(
                &repo,
                "git init -q && git add -A && git commit -qm c && echo v2 > d/more",
            );
        }
        let copy = tmp.path().join(format!("copy-{git}"));
        let report = materialise_copy(&repo, &copy).expect("copy");
        assert!(report.skipped.is_empty(), "{report:?}");
        assert_eq!(
            std::fs::read_link(copy.join("a")).expect("a"),
            Path::new("b")
        );
        assert_eq!(
            std::fs::read_link(copy.join("self")).expect("s"),
            Path::new("self")
        );
        assert_eq!(
            std::fs::read_link(copy.join("d/up")).expect("up"),
            Path::new("..")
        );
        for name in names {
            assert_eq!(
                std::fs::read(copy.join("d").join(name)).expect("odd name"),
                name.as_bytes()
            );
        }
    }
}

#[test]
fn a_very_deep_tree_is_cut_at_the_depth_bound_with_a_note() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    let mut deep = repo.clone();
    for _ in 0..(cortex_core::copy::MAX_DEPTH + 40) {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).expect("deep");
    std::fs::write(deep.join("bottom"), "b").expect("write");
    let mut kept = repo.clone();
    for _ in 0..cortex_core::copy::MAX_DEPTH {
        kept.push("d");
    }
    std::fs::write(kept.join("at-the-bound"), "k").expect("write");
    let copy = tmp.path().join("copy");
    let report = materialise_copy(&repo, &copy).expect("copy");
    assert!(
        report.skipped.iter().any(|s| s.contains("deeper than")),
        "{report:?}"
    );
    let relative = kept.strip_prefix(&repo).expect("inside");
    assert_eq!(
        std::fs::read(copy.join(relative).join("at-the-bound")).expect("read"),
        b"k"
    );
    assert!(
        !copy
            .join(deep.strip_prefix(&repo).expect("inside"))
            .exists()
    );
}
