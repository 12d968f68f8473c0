//! What the workspace's tests share: the one way a test says it did not
//! run because something it needs is missing.
//!
//! A test that cannot run its real dependency (PostgreSQL, the `mcp`
//! package, user namespaces, root, …) calls [`skip`] (or [`skip_current`])
//! and returns. That writes one line,
//!
//! ```text
//! SKIP <test>: <dependency>: <reason>
//! ```
//!
//! to stderr, and appends the same line to the file `CORTEX_SKIP_LOG` names
//! when it is set: cargo shows a passing test's stderr only with
//! `--nocapture`, so the file is what `scripts/test` counts. Under
//! `CI=true` it fails the run for any dependency `.ci/optional-deps` does
//! not list, so a missing dependency CI needs cannot pass unnoticed.
//!
//! `dependency` is a short fixed name (`userns`, `root`, `postgresql`,
//! `python-mcp`, `node`, `tmux`, `docker`, `cgroup`, …): the summary groups
//! skips by it and `.ci/optional-deps` lists it.
//!
//! Depends on nothing, so it sits below every crate in the layer table of
//! ARCHITECTURE.md; it is only ever a dev-dependency.

#![warn(missing_docs)]

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// The environment variable naming the file skips are appended to.
pub const SKIP_LOG: &str = "CORTEX_SKIP_LOG";

/// Records that `test` did not run because `dependency` is missing, for
/// `reason` (what was looked for, and how to get it). The caller then
/// returns without running the test.
///
/// A test reports each dependency once, however often it is called (a
/// test that skips case by case in a loop counts once). Newlines in the
/// reason become spaces, so the record stays one line. Never panics: a
/// log that cannot be written is reported on stderr (the skip line is
/// still printed).
pub fn skip(test: &str, dependency: &str, reason: &str) {
    if !first_time(test, dependency) {
        return;
    }
    let line = format!(
        "SKIP {}: {}: {}\n",
        one_line(test),
        one_line(dependency),
        one_line(reason)
    );
    eprint!("{line}");
    if let Some(path) = std::env::var_os(SKIP_LOG) {
        // O_APPEND and one write per line: tests of one binary run on
        // parallel threads and binaries may run at once, and each line
        // must land whole.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!(
                "cannot append to {} ({SKIP_LOG}): {e}",
                path.to_string_lossy()
            );
        }
    }
}

/// [`skip`] for the test running on this thread, named by
/// [`current_test`]: for helpers shared by many tests, which do not know
/// which one called them.
pub fn skip_current(dependency: &str, reason: &str) {
    skip(&current_test(), dependency, reason);
}

/// The running test's name, `BINARY::PATH` (`escape_git::hooks_are_refused`,
/// `cortex_tools::syntax::tests::toml_and_yaml_are_checked`): the test
/// harness runs each test on a thread named by its path, and the binary's
/// name, less cargo's hash, says which file it is in. Code on another thread
/// (a spawned task) gets that thread's name instead.
pub fn current_test() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| match stem.rsplit_once('-') {
            // cargo names test binaries `NAME-HASH`, HASH 16 hex digits.
            Some((name, hash))
                if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                name.to_owned()
            }
            _ => stem,
        })
        .unwrap_or_else(|| "?".into());
    let thread = std::thread::current();
    format!("{binary}::{}", thread.name().unwrap_or("?"))
}

/// Whether `test` has not reported `dependency` yet in this process.
fn first_time(test: &str, dependency: &str) -> bool {
    static SEEN: OnceLock<Mutex<HashSet<(String, String)>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    seen.insert((test.to_owned(), dependency.to_owned()))
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_name_is_the_binary_and_the_thread() {
        assert_eq!(
            current_test(),
            "cortex_testkit::tests::the_test_name_is_the_binary_and_the_thread"
        );
    }

    #[test]
    fn a_reason_stays_on_one_line_and_a_test_counts_once() {
        assert_eq!(one_line("a\nb\r\n"), "a b");
        assert!(first_time("t", "dep"));
        assert!(!first_time("t", "dep"));
        assert!(first_time("t", "other"));
    }
}
