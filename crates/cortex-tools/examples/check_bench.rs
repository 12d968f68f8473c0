//! The checks after a write, timed: what `edit_file` adds to its result
//! (syntax, names left unbound, tests nothing calls, definitions removed)
//! after a one-line change of a 1,000-line Python file and of a 1,000-line
//! Rust file, and the whole `edit_file` call around it.
//!
//! `cargo run --release -p cortex-tools --example check_bench [RUNS]`
//! prints the median and the slowest of RUNS (default 200) for each, and
//! the CPU time a run took; the figures are in docs/BENCHMARKS.md,
//! "In-process checks after a write". Two cases: the first change of a
//! file this process has not parsed ("first edit": the whole file is
//! parsed), and a change of a file it checked before ("next edit": the
//! kept tree is reparsed around the change, as for the second and later
//! edits of a file in a turn). Every run's change is one no run made
//! before, and a "first edit" renames every definition, so nothing kept
//! from an earlier run (trees, each statement's findings) answers for it.

use cortex_protocol::EditFileArgs;
use cortex_tools::Workspace;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs: usize = match std::env::args().nth(1) {
        Some(arg) => arg.parse()?,
        None => 200,
    };
    let dir = tempfile::tempdir()?;
    let ws = Workspace::new(dir.path())?;
    for (name, text, old_line, comment) in [
        ("service.py", python_file(), "    return total + 30\n", "#"),
        ("service.rs", rust_file(), "    total + 30\n", "//"),
    ] {
        let lines = text.lines().count();
        let path = dir.path().join(name);
        // The changed line of run `run`: a change no run made before, so
        // that nothing kept from an earlier run answers for it.
        let line_of = |run: usize| old_line.replace("+ 30", &format!("- {run}"));
        let edited = text.replacen(old_line, &line_of(0), 1);
        assert!(edited != text, "the edit must change {name}");
        let notes = ws.notes_after_write(&path, name, Some(&text), &edited);
        assert!(
            notes.is_empty(),
            "a clean file has nothing to say: {notes:?}"
        );
        // A file no run has seen, every definition renamed: nothing of it
        // is kept (trees, findings), as for a file first edited unread.
        let mut run = 0;
        let first = time(runs, || {
            run += 1;
            let fresh = |t: &str| t.replace("step_", &format!("s{run}_"));
            let (old, new) = (fresh(&text), fresh(&edited));
            std::hint::black_box(ws.notes_after_write(&path, name, Some(&old), &new));
        });
        report(
            &format!("checks, first edit of {name} ({lines} lines)"),
            first,
        );
        // Each run changes the text the run before left: what is kept of
        // the rest of the file is used, the changed line is new.
        let mut run = 0;
        let mut current = edited.clone();
        let next = time(runs, || {
            run += 1;
            let new = text.replacen(old_line, &line_of(run), 1);
            std::hint::black_box(ws.notes_after_write(&path, name, Some(&current), &new));
            current = new;
        });
        report(
            &format!("checks, next edit of {name} ({lines} lines)"),
            next,
        );
        // The usual turn: the file read (its tree then parsed on a thread
        // of its own while the model writes the edit), then edited once.
        let mut after_read = Vec::with_capacity(runs);
        let mut cpu = Duration::ZERO;
        for run in 1..=runs.clamp(1, 100) {
            let fresh = text.replace("step_", &format!("r{run}_"));
            std::fs::write(&path, format!("{fresh}{comment} read {run}\n"))?;
            ws.read_file(&cortex_protocol::ReadFileArgs {
                path: name.into(),
                offset: None,
                limit: None,
            })?;
            std::thread::sleep(Duration::from_millis(50));
            let args = EditFileArgs {
                path: name.into(),
                old_string: old_line.into(),
                new_string: line_of(run),
                replace_all: None,
            };
            let (took, used) = time(1, || {
                std::hint::black_box(ws.edit_file(&args).expect("the edit"));
            });
            after_read.extend(took);
            cpu += used;
        }
        after_read.sort();
        report(
            &format!("edit_file, first edit of {name} after read_file ({lines} lines)"),
            (after_read, cpu),
        );
        std::fs::write(&path, &text)?;
        let mut run = 0;
        let mut current = old_line.to_owned();
        let whole = time(runs, || {
            run += 1;
            let args = EditFileArgs {
                path: name.into(),
                old_string: current.clone(),
                new_string: line_of(run),
                replace_all: None,
            };
            std::hint::black_box(ws.edit_file(&args).expect("the edit"));
            current = line_of(run);
        });
        report(
            &format!("edit_file, next edit of {name} ({lines} lines)"),
            whole,
        );
    }
    Ok(())
}

/// Each of `runs` calls of `f` (sorted), and the CPU time they took in
/// all: on a machine shared with other work, wall time includes waiting
/// for a core.
fn time(runs: usize, mut f: impl FnMut()) -> (Vec<Duration>, Duration) {
    let cpu_before = thread_cpu();
    let mut took: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    took.sort();
    (took, thread_cpu().saturating_sub(cpu_before))
}

/// The CPU time this thread has used (user and system).
fn thread_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_THREAD names
    // the calling thread.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn report(what: &str, (sorted, cpu): (Vec<Duration>, Duration)) {
    let median = sorted[sorted.len() / 2];
    let max = sorted[sorted.len() - 1];
    println!(
        "{what}: median {:.3} ms, slowest {:.3} ms, CPU {:.3} ms a run ({} runs)",
        median.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3,
        cpu.as_secs_f64() * 1e3 / sorted.len() as f64,
        sorted.len()
    );
}

/// A Python module of 1,000 lines in the shapes the checks walk: imports,
/// a dataclass, classes with methods, comprehensions, try/except, a main.
fn python_file() -> String {
    let mut text = String::from(
        "\"\"\"A service, generated for the benchmark.\"\"\"\n\
         import os\nimport json\nfrom dataclasses import dataclass, field\n\
         from typing import Optional\n\n\n\
         @dataclass\nclass Config:\n    name: str\n    retries: int = 3\n    \
         tags: list = field(default_factory=list)\n\n\n",
    );
    let mut n = 0;
    while text.lines().count() < 990 {
        text.push_str(&format!(
            "def step_{n}(items, scale=2):\n    \
             \"\"\"Step {n}.\"\"\"\n    \
             total = 0\n    \
             for i, item in enumerate(items):\n        \
             if item is None:\n            continue\n        \
             total += sum(x * scale for x in range(i) if x % 2)\n    \
             try:\n        data = json.loads(os.environ.get('STEP_{n}', '{{}}'))\n    \
             except ValueError as err:\n        data = {{'error': str(err)}}\n    \
             squares = [v * v for v in data.values() if isinstance(v, int)]\n    \
             return total + {n}\n\n\n"
        ));
        n += 1;
    }
    text.push_str(
        "def main() -> Optional[int]:\n    config = Config('svc')\n    \
         return step_0([1, 2, 3], config.retries)\n\n\n\
         if __name__ == '__main__':\n    main()\n",
    );
    text
}

/// A Rust file of 1,000 lines: a struct, an impl, functions with loops,
/// matches and closures.
fn rust_file() -> String {
    let mut text = String::from(
        "//! A service, generated for the benchmark.\n\n\
         use std::collections::HashMap;\n\n\
         #[derive(Debug, Clone, Default)]\n\
         pub struct Config {\n    pub name: String,\n    pub retries: u32,\n}\n\n",
    );
    let mut n = 0;
    while text.lines().count() < 990 {
        text.push_str(&format!(
            "/// Step {n}.\n\
             pub fn step_{n}(items: &[Option<u64>], scale: u64) -> u64 {{\n    \
             let mut total = 0;\n    \
             for (i, item) in items.iter().enumerate() {{\n        \
             let Some(item) = item else {{ continue }};\n        \
             total += (0..i as u64).filter(|x| x % 2 == 1).map(|x| x * scale).sum::<u64>();\n        \
             total += match item {{\n            0 => 1,\n            n => *n,\n        }};\n    }}\n    \
             let mut seen: HashMap<u64, usize> = HashMap::new();\n    \
             *seen.entry(total).or_default() += 1;\n    \
             total + {n}\n}}\n\n"
        ));
        n += 1;
    }
    text
}
