//! glob and grep: gitignore, ordering, caps, modes, context, errors.

mod common;

use common::{Fixture, set_mtime};
use cortex_protocol::{GlobArgs, GrepArgs, GrepMode};
use cortex_tools::ToolError;

fn glob(pattern: &str, path: Option<&str>) -> GlobArgs {
    GlobArgs {
        pattern: pattern.to_owned(),
        path: path.map(str::to_owned),
    }
}

fn grep(pattern: &str, mode: GrepMode) -> GrepArgs {
    GrepArgs {
        pattern: pattern.to_owned(),
        path: None,
        glob: None,
        mode: Some(mode),
        context: None,
        ignore_case: None,
    }
}

/// A small tree with a .gitignore, a hidden folder and a .git folder.
fn tree() -> Fixture {
    let f = Fixture::new();
    f.write(".gitignore", "target/\n*.log\n");
    f.write("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n");
    f.write(
        "src/lib.rs",
        "pub fn hello() -> &'static str {\n    \"Hello\"\n}\n",
    );
    f.write("src/util/mod.rs", "// nothing to see\n");
    f.write("README.md", "say hello\n");
    f.write("target/debug/gen.rs", "fn hello() {}\n");
    f.write("build.log", "hello from the log\n");
    f.write(".hidden/h.rs", "fn hello() {}\n");
    f.write(".git/config.rs", "hello\n");
    f
}

#[test]
fn glob_respects_gitignore_and_hidden() {
    let f = tree();
    let out = f.ws.glob(&glob("**/*.rs", None)).expect("glob");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, ["src/lib.rs", "src/main.rs", "src/util/mod.rs"]);
    let out = f.ws.glob(&glob("*.log", None)).expect("glob");
    assert_eq!(out, "No files matched");
}

#[test]
fn glob_pattern_semantics() {
    let f = tree();
    // No slash: the file name at any depth.
    let out = f.ws.glob(&glob("mod.rs", None)).expect("name");
    assert_eq!(out, "src/util/mod.rs");
    // With a slash: relative to the searched folder, `*` not crossing `/`.
    let out = f.ws.glob(&glob("src/*.rs", None)).expect("anchored");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, ["src/lib.rs", "src/main.rs"]);
    // Searching a subfolder: patterns are relative to it, output to the root.
    let out = f.ws.glob(&glob("util/*.rs", Some("src"))).expect("sub");
    assert_eq!(out, "src/util/mod.rs");
    // The searched folder named again at the pattern's start is read once.
    let out =
        f.ws.glob(&glob("src/util/*.rs", Some("src")))
            .expect("doubled");
    assert_eq!(out, "src/util/mod.rs");
    // An absolute pattern inside the workspace works like a relative one.
    let abs = format!("{}/src/util/*.rs", f.root().display());
    assert_eq!(
        f.ws.glob(&glob(&abs, None)).expect("abs"),
        "src/util/mod.rs"
    );
    let err = f.ws.glob(&glob("a[", None)).expect_err("bad glob");
    assert!(err.to_string().contains("invalid glob"), "{err}");
    let err =
        f.ws.glob(&glob("*", Some("../outside")))
            .expect_err("escape");
    assert!(matches!(err, ToolError::Escape { .. }), "{err}");
    let err = f.ws.glob(&glob("*", Some("nope"))).expect_err("missing");
    assert!(matches!(err, ToolError::NotFound { .. }), "{err}");
}

#[test]
fn glob_is_newest_first_and_capped() {
    let f = Fixture::new();
    for i in 0..150 {
        let rel = format!("d{}/f{i:03}.txt", i % 7);
        f.write(&rel, "x");
        set_mtime(&f.root().join(&rel), 1_000_000 + i);
    }
    let out = f.ws.glob(&glob("*.txt", None)).expect("glob");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], "d2/f149.txt");
    assert_eq!(lines[1], "d1/f148.txt");
    assert_eq!(lines[99], "d1/f050.txt");
    assert_eq!(lines[100], "(50 more not shown)");
}

#[test]
fn glob_does_not_follow_symlinks_outside() {
    let f = Fixture::new();
    f.link(&f.outside, "linkdir");
    f.link(&f.outside.join("secret.txt"), "secret.txt");
    let out = f.ws.glob(&glob("**/*", None)).expect("glob");
    assert_eq!(out, "No files matched");
}

#[test]
fn grep_files_mode_respects_gitignore() {
    let f = tree();
    let out = f.ws.grep(&grep("hello", GrepMode::Files)).expect("grep");
    assert_eq!(out, "README.md\nsrc/lib.rs\nsrc/main.rs");
    let mut args = grep("hello", GrepMode::Files);
    args.ignore_case = Some(true);
    args.glob = Some("*.rs".into());
    let out = f.ws.grep(&args).expect("glob filter");
    assert_eq!(out, "src/lib.rs\nsrc/main.rs");
    let out =
        f.ws.grep(&grep("no such text", GrepMode::Files))
            .expect("none");
    assert_eq!(out, "No matches found");
}

#[test]
fn grep_content_and_count_modes() {
    let f = tree();
    let out =
        f.ws.grep(&grep("hel+o", GrepMode::Content))
            .expect("content");
    assert_eq!(
        out,
        "README.md:1:say hello\nsrc/lib.rs:1:pub fn hello() -> &'static str {\nsrc/main.rs:2:    println!(\"hello\");\n"
    );
    let mut args = grep("hello", GrepMode::Count);
    args.ignore_case = Some(true);
    let out = f.ws.grep(&args).expect("count");
    assert_eq!(
        out,
        "README.md: 1 matching line\nsrc/lib.rs: 2 matching lines\nsrc/main.rs: 1 matching line\n\
         (4 matching lines in 3 files)"
    );
}

#[test]
fn grep_context_lines_and_breaks() {
    let f = Fixture::new();
    let text: String = (1..=20)
        .map(|i| {
            if i == 5 || i == 15 {
                "MATCH\n".to_owned()
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    f.write("a.txt", &text);
    f.write("b.txt", "x\nMATCH\n");
    let mut args = grep("MATCH", GrepMode::Content);
    args.context = Some(1);
    let out = f.ws.grep(&args).expect("context");
    assert_eq!(
        out,
        "a.txt-4-line 4\na.txt:5:MATCH\na.txt-6-line 6\n--\na.txt-14-line 14\na.txt:15:MATCH\na.txt-16-line 16\n--\nb.txt-1-x\nb.txt:2:MATCH\n"
    );
}

#[test]
fn grep_path_may_be_a_file_or_folder() {
    let f = tree();
    let mut args = grep("hello", GrepMode::Count);
    args.path = Some("src/main.rs".into());
    assert_eq!(
        f.ws.grep(&args).expect("file"),
        "src/main.rs: 1 matching line"
    );
    args.path = Some("src".into());
    assert_eq!(
        f.ws.grep(&args).expect("folder"),
        "src/lib.rs: 1 matching line\nsrc/main.rs: 1 matching line\n(2 matching lines in 2 files)"
    );
    args.path = Some("../outside".into());
    assert!(matches!(f.ws.grep(&args), Err(ToolError::Escape { .. })));
}

#[test]
fn grep_invalid_regex_is_explained() {
    let f = tree();
    let err =
        f.ws.grep(&grep("fn (", GrepMode::Files))
            .expect_err("bad regex");
    assert!(matches!(err, ToolError::Invalid(_)), "{err}");
    assert!(err.to_string().contains("invalid regex"), "{err}");
    assert!(err.to_string().contains("unclosed group"), "{err}");
}

#[test]
fn grep_skips_binary_and_symlinks_outside() {
    let f = Fixture::new();
    std::fs::write(f.root().join("bin.dat"), b"secret\0secret").expect("write");
    f.link(&f.outside, "linkdir");
    f.link(&f.outside.join("secret.txt"), "link.txt");
    let out = f.ws.grep(&grep("secret", GrepMode::Files)).expect("grep");
    assert_eq!(out, "No matches found");
}

#[test]
fn grep_caps_files_and_content() {
    let f = Fixture::new();
    for i in 0..250 {
        f.write(&format!("f{i:03}.txt"), "hit\nhit\nhit\n");
    }
    let out = f.ws.grep(&grep("hit", GrepMode::Files)).expect("files");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 201);
    assert_eq!(lines[0], "f000.txt");
    assert_eq!(lines[200], "(50 more files not shown)");
    let out = f.ws.grep(&grep("hit", GrepMode::Content)).expect("content");
    assert!(out.len() <= cortex_tools::MAX_OUTPUT_BYTES);
    assert_eq!(out.lines().filter(|l| l.ends_with(":hit")).count(), 500);
    assert!(
        out.ends_with("(showing 500 of 750 matching lines in 250 files; 83 files not shown; narrow the pattern, path or glob to see the rest)"),
        "{}",
        &out[out.len() - 300..]
    );
    let out = f.ws.grep(&grep("hit", GrepMode::Count)).expect("count");
    assert!(
        out.ends_with("(50 more files not shown; 750 matching lines in 250 files)"),
        "{out}"
    );
}
