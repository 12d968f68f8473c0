//! Times whole-workspace checkpoints on a generated tree: the first one
//! (every file read and stored, every folder watched), ones of the
//! unchanged tree (no folder read: no event since), and ones after 10 and
//! 1,000 files changed (only the folders with events read); then the seal
//! a turn's end takes, a rewind of the 1,000 changes, and a full walk of
//! the unchanged tree (what a session's first checkpoint after a restart,
//! or one after lost events, costs).
//!
//! ```text
//! CARGO_TARGET_DIR=/var/tmp/cortex-ci-target cargo build --release -p cortex-core --locked --example checkpoint_bench
//! /var/tmp/cortex-ci-target/release/examples/checkpoint_bench [FILES|storage]
//! ```
//!
//! FILES defaults to 50,000 (100 per folder, ~200 bytes each). The tree and
//! the store are made under the system's temporary folder.
//!
//! `checkpoint_bench storage` instead compares storage and time over 100
//! turns that each change 10 files of a 1 MiB tree (256 files of 4 KiB in
//! 16 folders): a checkpoint per turn against a shadow-git snapshot per
//! turn of the same tree (`git add -A && git commit` with a separate
//! `GIT_DIR` and the workspace as the work tree, as Gemini CLI and OpenCode
//! do). Both stores are measured the same way: the bytes of every file in
//! them (the shadow repository also after `git gc`, which peers do not run
//! per turn).

use cortex_core::checkpoint::{Checkpoints, DEFAULT_QUOTA};
use std::path::Path;
use std::time::Instant;

fn write_tree(root: &Path, files: usize, salt: &str) -> std::io::Result<()> {
    for i in 0..files {
        let dir = root.join(format!("d{:04}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir)?;
        }
        let line = format!("file {i} {salt} ");
        std::fs::write(
            dir.join(format!("f{i}.txt")),
            line.repeat(200 / line.len() + 1),
        )?;
    }
    Ok(())
}

fn change(root: &Path, count: usize, files: usize, salt: &str) -> std::io::Result<()> {
    let step = (files / count).max(1);
    for i in (0..files).step_by(step).take(count) {
        let path = root.join(format!("d{:04}/f{i}.txt", i / 100));
        std::fs::write(path, format!("changed {i} {salt}\n"))?;
    }
    Ok(())
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// CPU time the process has used, in milliseconds: what a checkpoint costs
/// whatever the machine's load (wall time adds the waits for a core).
fn cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6
}

/// Bytes of every file under `dir` (no link followed).
fn bytes_under(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = std::fs::symlink_metadata(entry.path())?;
        total += if meta.is_dir() {
            bytes_under(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

/// A 4 KiB file's content for turn `turn` (distinct per file and turn, so
/// neither store can deduplicate it away; mildly compressible text).
fn page(file: usize, turn: usize) -> String {
    let mut text = String::with_capacity(4096);
    let mut n = 0u64;
    while text.len() < 4096 {
        n += 1;
        text.push_str(&format!(
            "file {file} turn {turn} line {n} {:x}\n",
            (n * 2654435761 * (file as u64 + 1)) ^ turn as u64
        ));
    }
    text.truncate(4096);
    text
}

fn git(git_dir: &Path, work: &Path, args: &[&str]) -> Result<(), Box<dyn std::error::Error>> {
    let status = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .arg("--work-tree")
        .arg(work)
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()?;
    if !status.success() {
        return Err(format!("git {args:?}: {status}").into());
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// 100 turns × 10 changed files of a 1 MiB tree: checkpoints against a
/// shadow git repository.
fn storage() -> Result<(), Box<dyn std::error::Error>> {
    const FILES: usize = 256;
    const TURNS: usize = 100;
    const CHANGED: usize = 10;
    let workspace = tempfile::tempdir()?;
    let data = tempfile::tempdir()?;
    for i in 0..FILES {
        let dir = workspace.path().join(format!("d{:02}", i / 16));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("f{i}.txt")), page(i, 0))?;
    }
    let tree = bytes_under(workspace.path())?;
    let shadow = data.path().join("shadow.git");
    std::fs::create_dir_all(&shadow)?;
    let status = std::process::Command::new("git")
        .args(["init", "--quiet", "--bare"])
        .arg(&shadow)
        .status()?;
    if !status.success() {
        return Err("git init".into());
    }
    let mut cp = Checkpoints::open(
        &data.path().join("checkpoints"),
        "bench",
        workspace.path(),
        DEFAULT_QUOTA,
    )?;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for turn in 0..=TURNS {
        if turn > 0 {
            // The turn's 10 files, spread over the tree.
            for k in 0..CHANGED {
                let i = (turn * 7 + k * (FILES / CHANGED)) % FILES;
                let path = workspace.path().join(format!("d{:02}/f{i}.txt", i / 16));
                std::fs::write(path, page(i, turn))?;
            }
        }
        let start = Instant::now();
        cp.take(&format!("t{turn}"))?;
        ours.push(ms(start));
        let start = Instant::now();
        git(&shadow, workspace.path(), &["add", "-A"])?;
        git(
            &shadow,
            workspace.path(),
            &[
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                &format!("turn {turn}"),
            ],
        )?;
        theirs.push(ms(start));
    }
    let ours_bytes = cp.used()?;
    let theirs_bytes = bytes_under(&shadow)?;
    let start = Instant::now();
    git(&shadow, workspace.path(), &["gc", "--quiet"])?;
    let gc_ms = ms(start);
    let theirs_gc = bytes_under(&shadow)?;
    let (first_ours, first_theirs) = (ours.remove(0), theirs.remove(0));
    let (o, omin, omax) = median(ours);
    let (t, tmin, tmax) = median(theirs);
    println!("tree: {FILES} files, {tree} bytes; {TURNS} turns × {CHANGED} files changed");
    println!(
        "checkpoints: first {first_ours:.1} ms; per turn median {o:.1} ms (min {omin:.1}, max {omax:.1}); store {ours_bytes} bytes"
    );
    println!(
        "shadow git: first {first_theirs:.1} ms; per turn median {t:.1} ms (min {tmin:.1}, max {tmax:.1}); store {theirs_bytes} bytes, {theirs_gc} bytes after git gc ({gc_ms:.0} ms)"
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files: usize = match std::env::args().nth(1).as_deref() {
        Some("storage") => return storage(),
        Some(n) => n.parse()?,
        None => 50_000,
    };
    let workspace = tempfile::tempdir()?;
    let data = tempfile::tempdir()?;
    write_tree(workspace.path(), files, "v0")?;
    let mut cp = Checkpoints::open(
        &data.path().join("checkpoints"),
        "bench",
        workspace.path(),
        DEFAULT_QUOTA,
    )?;
    println!("{files} files");
    let start = Instant::now();
    let first = cp.take("t0")?;
    println!(
        "first checkpoint: {:.1} ms ({} entries, {} bytes new)",
        ms(start),
        first.files,
        first.bytes_new
    );
    let (mut unchanged, mut cpu) = (Vec::new(), Vec::new());
    for i in 1..=21 {
        let (start, cpu_start) = (Instant::now(), cpu_ms());
        cp.take(&format!("u{i}"))?;
        unchanged.push(ms(start));
        cpu.push(cpu_ms() - cpu_start);
    }
    let (med, min, max) = median(unchanged);
    let (cmed, cmin, cmax) = median(cpu);
    println!(
        "unchanged tree: median {med:.2} ms (min {min:.2}, max {max:.2}, 21 runs); \
         CPU median {cmed:.2} ms (min {cmin:.2}, max {cmax:.2})"
    );
    println!(
        "walks so far (full, incremental, folders read): {:?}",
        cp.walks()
    );
    for (count, salt) in [(10, "c10"), (1_000, "c1000")] {
        let used = cp.used()?;
        change(workspace.path(), count, files, salt)?;
        let (start, cpu_start) = (Instant::now(), cpu_ms());
        let taken = cp.take(&format!("c{count}"))?;
        let (elapsed, cpu) = (ms(start), cpu_ms() - cpu_start);
        println!(
            "{count} files changed: {elapsed:.1} ms, CPU {cpu:.1} ms ({} content bytes new, {} \
             bytes stored in all)",
            taken.bytes_new,
            cp.used()? - used
        );
    }
    println!(
        "walks so far (full, incremental, folders read): {:?}",
        cp.walks()
    );
    change(workspace.path(), 10, files, "seal")?;
    let (start, cpu_start) = (Instant::now(), cpu_ms());
    cp.seal()?;
    println!(
        "seal after 10 files changed (a turn's end): {:.1} ms, CPU {:.1} ms",
        ms(start),
        cpu_ms() - cpu_start
    );
    let (start, cpu_start) = (Instant::now(), cpu_ms());
    cp.take("after-seal")?;
    println!(
        "checkpoint right after that seal: {:.2} ms, CPU {:.2} ms",
        ms(start),
        cpu_ms() - cpu_start
    );
    let (start, cpu_start) = (Instant::now(), cpu_ms());
    let restored = cp.rewind("c10", false)?;
    println!(
        "rewind of the 1,000 changes: {:.1} ms, CPU {:.1} ms ({} paths)",
        ms(start),
        cpu_ms() - cpu_start,
        restored.diff.changed.len()
    );
    println!("store: {} bytes", cp.used()?);
    drop(cp);
    // A new session object on the same store: its first walk is a full
    // one (no watch yet), with the stored tree as its stat index.
    let mut cp = Checkpoints::open(
        &data.path().join("checkpoints"),
        "bench",
        workspace.path(),
        DEFAULT_QUOTA,
    )?;
    let (start, cpu_start) = (Instant::now(), cpu_ms());
    cp.take("reopened")?;
    println!(
        "full walk of the unchanged tree (reopened store): {:.1} ms, CPU {:.1} ms",
        ms(start),
        cpu_ms() - cpu_start
    );
    Ok(())
}
