//! Special files and odd trees under every tool that walks or opens the
//! workspace (issue 20, principle 4): FIFOs, sockets, symlink loops, deep
//! trees, names with control characters, ignore files that are FIFOs. Each
//! test would hang (the test harness's timeout) or fail if a tool opened a
//! FIFO in blocking mode.

mod common;

use common::Fixture;
use cortex_protocol::{EditFileArgs, GlobArgs, GrepArgs, GrepMode, ReadFileArgs, WriteFileArgs};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).expect("path");
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

fn read(path: &str) -> ReadFileArgs {
    ReadFileArgs {
        path: path.to_owned(),
        offset: None,
        limit: None,
    }
}

fn glob_all(path: Option<&str>) -> GlobArgs {
    GlobArgs {
        pattern: "*".to_owned(),
        path: path.map(str::to_owned),
    }
}

fn grep(pattern: &str, path: Option<&str>) -> GrepArgs {
    GrepArgs {
        pattern: pattern.to_owned(),
        path: path.map(str::to_owned),
        glob: None,
        mode: Some(GrepMode::Files),
        context: None,
        ignore_case: None,
    }
}

/// A tree with a regular file beside a FIFO and a socket.
fn with_specials() -> (Fixture, std::os::unix::net::UnixListener) {
    let f = Fixture::new();
    f.write("src/a.txt", "needle\n");
    mkfifo(&f.root().join("src/pipe"));
    let sock = std::os::unix::net::UnixListener::bind(f.root().join("src/sock")).expect("bind");
    (f, sock)
}

#[test]
fn read_file_of_a_fifo_or_socket_is_an_error_at_once() {
    let (f, _sock) = with_specials();
    for name in ["src/pipe", "src/sock"] {
        let err = f.ws.read_file(&read(name)).expect_err("refused");
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    // A symlink to the FIFO resolves to it and is refused the same way.
    std::os::unix::fs::symlink("pipe", f.root().join("src/link")).expect("symlink");
    let err = f.ws.read_file(&read("src/link")).expect_err("refused");
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn write_and_edit_of_a_fifo_are_refused_without_blocking() {
    let (f, _sock) = with_specials();
    let err =
        f.ws.write_file(&WriteFileArgs {
            path: "src/pipe".to_owned(),
            content: "x".to_owned(),
        })
        .expect_err("refused");
    assert!(err.to_string().contains("not a regular file"), "{err}");
    let err =
        f.ws.edit_file(&EditFileArgs {
            path: "src/pipe".to_owned(),
            old_string: "a".to_owned(),
            new_string: "b".to_owned(),
            replace_all: None,
        })
        .expect_err("refused");
    assert!(err.to_string().contains("not a regular file"), "{err}");
    let meta = std::fs::symlink_metadata(f.root().join("src/pipe")).expect("stat");
    assert!(!meta.is_file(), "the FIFO is still a FIFO");
}

#[test]
fn grep_and_glob_skip_fifos_and_sockets() {
    let (f, _sock) = with_specials();
    assert_eq!(f.ws.grep(&grep("needle", None)).expect("grep"), "src/a.txt");
    assert_eq!(f.ws.glob(&glob_all(None)).expect("glob"), "src/a.txt");
}

#[test]
fn a_fifo_gitignore_in_a_folder_skips_that_folder_with_a_note() {
    let f = Fixture::new();
    f.write("a.txt", "needle\n");
    f.write("trap/b.txt", "needle\n");
    mkfifo(&f.root().join("trap/.gitignore"));
    let out = f.ws.grep(&grep("needle", None)).expect("grep");
    assert!(out.starts_with("a.txt\n"), "{out}");
    assert!(
        out.contains("1 folders not searched") && out.contains("trap"),
        "{out}"
    );
    let out = f.ws.glob(&glob_all(None)).expect("glob");
    assert!(out.starts_with("a.txt\n(1 folders not searched"), "{out}");
    // Searching inside it (or with one on the way) is refused with the reason.
    let err =
        f.ws.grep(&grep("needle", Some("trap")))
            .expect_err("refused");
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn a_fifo_ignore_file_at_the_root_refuses_the_search() {
    let f = Fixture::new();
    f.write("a.txt", "needle\n");
    mkfifo(&f.root().join(".ignore"));
    let err = f.ws.glob(&glob_all(None)).expect_err("refused");
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn a_git_file_naming_a_fifo_exclude_is_not_followed() {
    let f = Fixture::new();
    f.write("sub/a.txt", "needle\n");
    f.write("planted/info/.keep", "");
    mkfifo(&f.root().join("planted/info/exclude"));
    mkfifo(&f.root().join("planted/commondir"));
    let gitdir = f.root().join("planted");
    f.write("sub/.git", &format!("gitdir: {}\n", gitdir.display()));
    assert_eq!(f.ws.grep(&grep("needle", None)).expect("grep"), "sub/a.txt");
}

#[test]
fn the_workspaces_own_git_exclude_still_applies() {
    let f = Fixture::new();
    f.write("a.txt", "needle\n");
    f.write("secret.key", "needle\n");
    f.write(".git/info/exclude", "*.key\n");
    assert_eq!(f.ws.grep(&grep("needle", None)).expect("grep"), "a.txt");
}

#[test]
fn symlink_loops_end() {
    let f = Fixture::new();
    f.write("d/a.txt", "needle\n");
    std::os::unix::fs::symlink("..", f.root().join("d/up")).expect("symlink");
    std::os::unix::fs::symlink("loop", f.root().join("d/loop")).expect("symlink");
    assert_eq!(f.ws.grep(&grep("needle", None)).expect("grep"), "d/a.txt");
    assert_eq!(f.ws.glob(&glob_all(None)).expect("glob"), "d/a.txt");
    assert!(f.ws.read_file(&read("d/loop")).is_err());
}

#[test]
fn a_very_deep_tree_is_walked_to_a_bound() {
    let f = Fixture::new();
    let shallow = "d/".repeat(100);
    let deep = "d/".repeat(200);
    f.write(&format!("{shallow}shallow.txt"), "needle\n");
    f.write(&format!("{deep}deep.txt"), "needle\n");
    let out = f.ws.grep(&grep("needle", None)).expect("grep");
    assert!(out.ends_with("shallow.txt"), "{out}");
    assert!(!out.contains("deep.txt"), "{out}");
}

#[test]
fn names_with_control_characters_are_one_line_each() {
    let f = Fixture::new();
    f.write("evil\n(999 more not shown)", "needle\n");
    f.write("esc\x1b]52;c;aGk=\x07.txt", "needle\n");
    let out = f.ws.glob(&glob_all(None)).expect("glob");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("evil\\u{a}(999 more not shown)"), "{out}");
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out}");
    let content =
        f.ws.grep(&GrepArgs {
            mode: Some(GrepMode::Content),
            ..grep("needle", None)
        })
        .expect("grep");
    assert_eq!(content.lines().count(), 2, "{content}");
    assert!(!content.contains('\x1b'), "{content}");
}
