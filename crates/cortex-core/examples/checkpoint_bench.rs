//! Times whole-workspace checkpoints on a generated tree: the first one
//! (every file read and stored), one of the unchanged tree (a stat per
//! entry), and ones after 10 and 1,000 files changed; then the stat seal a
//! turn's end takes and a rewind of the 1,000 changes.
//!
//! ```text
//! CARGO_TARGET_DIR=/var/tmp/cortex-ci-target cargo build --release --workspace --locked --example checkpoint_bench
//! /var/tmp/cortex-ci-target/release/examples/checkpoint_bench [FILES]
//! ```
//!
//! FILES defaults to 50,000 (100 per folder, ~200 bytes each). The tree and
//! the store are made under the system's temporary folder.

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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files: usize = match std::env::args().nth(1) {
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
    let mut unchanged = Vec::new();
    for i in 1..=5 {
        let start = Instant::now();
        cp.take(&format!("u{i}"))?;
        unchanged.push(ms(start));
    }
    unchanged.sort_by(f64::total_cmp);
    println!(
        "unchanged tree: median {:.1} ms (min {:.1}, max {:.1}, 5 runs)",
        unchanged[2], unchanged[0], unchanged[4]
    );
    for (count, salt) in [(10, "c10"), (1_000, "c1000")] {
        change(workspace.path(), count, files, salt)?;
        let start = Instant::now();
        let taken = cp.take(&format!("c{count}"))?;
        println!(
            "{count} files changed: {:.1} ms ({} bytes new)",
            ms(start),
            taken.bytes_new
        );
    }
    let start = Instant::now();
    cp.seal()?;
    println!("seal (a turn's end, stat only): {:.1} ms", ms(start));
    let start = Instant::now();
    let restored = cp.rewind("c10", false)?;
    println!(
        "rewind of the 1,000 changes: {:.1} ms ({} paths)",
        ms(start),
        restored.diff.changed.len()
    );
    println!("store: {} bytes", cp.used()?);
    Ok(())
}
