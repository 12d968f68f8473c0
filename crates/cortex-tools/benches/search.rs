//! grep and glob against ripgrep on a generated tree.
//!
//! The tree (default 50,000 files: 500 folders × 100 small text files, some
//! with matching lines, plus a `.gitignore` excluding some of them) is built
//! once in a temporary folder. `CORTEX_BENCH_FILES` shrinks (or grows) it.
//!
//! The ripgrep side runs `rg` as a subprocess on the same tree, so its times
//! include process spawn and reading its stdout through a pipe (a few ms);
//! ours are in-process calls. If `rg` is not installed the comparisons are
//! skipped with a note.

use cortex_protocol::{GlobArgs, GrepArgs, GrepMode};
use cortex_tools::Workspace;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::process::{Command, Stdio};

const FILES_PER_DIR: usize = 100;
const LITERAL: &str = "needle_literal";
const REGEX: &str = r"fn \w+_handler\(\w+: u(32|64)\)";
const EXTENSIONS: [&str; 5] = ["rs", "txt", "md", "py", "log"];

/// Build the tree under `root`: `d000/f000.rs` …; `.gitignore` excludes
/// every `*.log` file and the folders `d**7/`.
fn build_tree(root: &Path, files: usize) {
    let dirs = files.div_ceil(FILES_PER_DIR).max(1);
    // rg only honours .gitignore inside a git repository.
    std::fs::create_dir_all(root.join(".git")).expect("mkdir .git");
    std::fs::write(root.join(".gitignore"), "*.log\n/d*7/\n").expect("gitignore");
    let mut made = 0;
    for d in 0..dirs {
        let dir = root.join(format!("d{d:03}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..FILES_PER_DIR {
            if made == files {
                return;
            }
            made += 1;
            let n = d * FILES_PER_DIR + f;
            let ext = EXTENSIONS[n % EXTENSIONS.len()];
            let mut text = String::with_capacity(2048);
            for line in 0..40 {
                text.push_str(&format!(
                    "line {line} of file {n}: some ordinary text about item_{line} and more words\n"
                ));
                if n.is_multiple_of(10) && line % 13 == 5 {
                    text.push_str(&format!("    let x = {LITERAL}({line});\n"));
                }
                if n.is_multiple_of(7) && line == 20 {
                    text.push_str(&format!(
                        "fn item{n}_handler(arg: u{}) {{}}\n",
                        32 + 32 * (n % 2)
                    ));
                }
            }
            std::fs::write(dir.join(format!("f{f:03}.{ext}")), text).expect("write");
        }
    }
}

fn rg_available() -> bool {
    Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Run rg in `root` and return how many bytes it printed.
fn rg(root: &Path, args: &[&str]) -> usize {
    let out = Command::new("rg")
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("run rg");
    out.stdout.len()
}

fn grep_args(pattern: &str, mode: GrepMode) -> GrepArgs {
    GrepArgs {
        pattern: pattern.to_owned(),
        path: None,
        glob: None,
        mode: Some(mode),
        context: None,
        ignore_case: None,
    }
}

fn bench(c: &mut Criterion) {
    let files = std::env::var("CORTEX_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000usize);
    let dir = tempfile::tempdir().expect("tempdir");
    eprintln!(
        "building a tree of {files} files in {}",
        dir.path().display()
    );
    build_tree(dir.path(), files);
    let ws = Workspace::new(dir.path()).expect("workspace");
    let root = ws.root().to_path_buf();
    let have_rg = rg_available();
    if !have_rg {
        eprintln!("note: `rg` not found; skipping the ripgrep comparisons");
    } else {
        eprintln!("note: rg times include spawning the rg process and reading its output");
    }

    let cases = [
        ("grep_files_literal", LITERAL, GrepMode::Files, "-l"),
        ("grep_files_regex", REGEX, GrepMode::Files, "-l"),
        ("grep_content_literal", LITERAL, GrepMode::Content, "-n"),
        ("grep_content_regex", REGEX, GrepMode::Content, "-n"),
    ];
    for (name, pattern, mode, flag) in cases {
        let args = grep_args(pattern, mode);
        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        group.bench_function("ours", |b| {
            b.iter(|| black_box(ws.grep(black_box(&args)).expect("grep")))
        });
        if have_rg {
            group.bench_function("rg", |b| b.iter(|| black_box(rg(&root, &[flag, pattern]))));
        }
        group.finish();
    }

    let glob = GlobArgs {
        pattern: "**/*.rs".to_owned(),
        path: None,
    };
    let mut group = c.benchmark_group("glob_rs");
    group.sample_size(10);
    group.bench_function("ours", |b| {
        b.iter(|| black_box(ws.glob(black_box(&glob)).expect("glob")))
    });
    if have_rg {
        group.bench_function("rg", |b| {
            b.iter(|| black_box(rg(&root, &["--files", "-g", "*.rs"])))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
