//! The abuse suite's harness-side checks (issue 20). An attempt is a hostile
//! scripted model driving the real `cortex exec --json` (in-process server,
//! local sandbox, Agent mode) in the escape suite's laboratory
//! (`escape_support`: the prepared repository, a host folder outside it, as
//! the test's user and, under root, as `nobody`). While `cortex` runs, its
//! `/proc/PID/status` and `/proc/PID/fd` are sampled; afterwards every
//! attempt checks:
//! - the host: the repository's metadata and the outside folder are byte
//!   for byte unchanged;
//! - the harness: the peak resident memory of the `cortex` process
//!   (`VmHWM`, which only grows, so the last sample before exit misses at
//!   most the last few milliseconds), its open descriptors at every sample,
//!   and the store (the SQLite files of the data folder) growth per tool
//!   call, each under a fixed bound;
//! - that the session is still usable: `cortex exec --session ID` runs one
//!   more benign turn to completion;
//! - the attempt's own expectation on the timeline.
//!
//! No check is timed: bounds are on sizes and counts only.
#![allow(dead_code)]

use crate::escape_support::{
    Call, Lab, call_id, json_lines, output, prepared, rounds_script, watched,
    without_new_placeholders,
};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

/// Peak resident memory of the `cortex` process (harness, in-process server
/// and store) under any attempt, beyond what the model itself sent (see
/// [`Abuse::model_bytes`]). An idle `exec` peaks near 20 MiB in a debug build.
pub const RSS_BOUND_KIB: u64 = 96 * 1024;
/// Open descriptors of the `cortex` process at any sample.
pub const FD_BOUND: usize = 128;
/// The store's size after a session's first turn with no tool call: its
/// events and the reply's text, up to its 1 MiB cap, twice (the deltas and
/// `message.done`).
pub const STORE_BASE_BYTES: u64 = 3 * 1024 * 1024;
/// What one tool call may add to the store: 1 MiB of kept output, escaped
/// as JSON (a NUL byte is six bytes, `\u0000`), plus the 30 KiB result,
/// 8 KiB diff and the call's own (capped) arguments.
pub const STORE_PER_CALL_BYTES: u64 = 8 * 1024 * 1024;

/// One attempt.
pub struct Abuse {
    /// The repository before the session (beyond the laboratory's default).
    pub prepare: fn(&Lab),
    /// The model's rounds of calls; a last round answers "done". Ignored
    /// when `script` is set.
    pub rounds: Vec<Vec<Call>>,
    /// A whole scripted-model script instead of `rounds`.
    pub script: Option<fn() -> Value>,
    /// The prompt (the session's title).
    pub prompt: &'static str,
    /// Send SIGINT to `cortex` (the user's Stop) when an event matches.
    pub stop_on: Option<fn(&Value) -> bool>,
    /// Bytes the model's reply itself carries, which the model provider
    /// (here the scripted one, in the same process) holds while it streams:
    /// the RSS bound allows four times this on top of [`RSS_BOUND_KIB`].
    pub model_bytes: u64,
    /// The attempt's own check of the run.
    pub expect: fn(&Run),
}

impl Default for Abuse {
    fn default() -> Self {
        Abuse {
            prepare: |_| {},
            rounds: Vec::new(),
            script: None,
            prompt: "go",
            stop_on: None,
            model_bytes: 0,
            expect: completed,
        }
    }
}

/// What one run of `cortex exec` left.
pub struct Run<'a> {
    pub lab: &'a Lab,
    pub who: &'static str,
    pub events: Vec<Value>,
    pub status: ExitStatus,
    pub stderr: String,
    /// Peak `VmHWM` of the `cortex` process, KiB.
    pub peak_rss_kib: u64,
    /// Most descriptors `cortex` had open at one sample.
    pub peak_fds: usize,
    /// Size of the store's files afterwards.
    pub store_bytes: u64,
}

impl Run<'_> {
    /// The `tool.result` of call `index` of round `round`.
    pub fn result(&self, round: usize, index: usize) -> &Value {
        let id = call_id(round, index);
        self.events
            .iter()
            .find(|e| e["type"] == "tool.result" && e["payload"]["call_id"] == id.as_str())
            .unwrap_or_else(|| panic!("{}: no result for {id}: {:?}", self.who, self.kinds()))
    }

    /// The event types, in order.
    pub fn kinds(&self) -> Vec<&str> {
        self.events
            .iter()
            .filter_map(|e| e["type"].as_str())
            .collect()
    }

    /// Bytes of streamed output the timeline kept for call `id`.
    pub fn streamed(&self, round: usize, index: usize) -> usize {
        let id = call_id(round, index);
        self.events
            .iter()
            .filter(|e| e["type"] == "tool.output.delta" && e["payload"]["call_id"] == id.as_str())
            .filter_map(|e| e["payload"]["text"].as_str())
            .map(str::len)
            .sum()
    }

    pub fn session_id(&self) -> &str {
        self.events
            .first()
            .and_then(|e| e["session_id"].as_str())
            .unwrap_or_else(|| panic!("{}: no event: {}", self.who, self.stderr))
    }
}

/// The default expectation: the turn completed.
pub fn completed(run: &Run) {
    assert!(
        run.kinds().contains(&"turn.completed"),
        "{}: {:?}\n{}",
        run.who,
        run.kinds(),
        run.stderr
    );
}

/// The model's script: `script`, or the rounds (ids as in the escape suite).
fn script_of(abuse: &Abuse) -> Value {
    match abuse.script {
        Some(script) => script(),
        None => rounds_script(&abuse.rounds, ""),
    }
}

/// Run `abuse` as the current user and, under root, as nobody.
pub fn check(abuse: Abuse) {
    let mut users = vec![false];
    if crate::escape_support::is_root() {
        users.push(true);
    }
    for nobody in users {
        if !run_once(&abuse, nobody) {
            return;
        }
    }
}

/// One run; `false` when this machine cannot run a sandbox (skipped).
fn run_once(abuse: &Abuse, nobody: bool) -> bool {
    let lab = prepared(nobody, abuse.prepare);
    let who = if nobody {
        "as nobody"
    } else {
        "as the test's user"
    };
    let before = watched(&lab);
    let script = lab.script("abuse.json", &script_of(abuse));
    let mut cmd = lab.exec_prompt(&script, &[], abuse.prompt);
    cmd.arg("--json");
    let sampled = sample(cmd, abuse.stop_on);
    if sampled
        .stderr
        .contains("cannot create the guest's namespaces")
    {
        cortex_testkit::skip_current(
            "userns",
            &format!("user namespaces are not available here: {}", sampled.stderr),
        );
        return false;
    }
    let run = Run {
        lab: &lab,
        who,
        events: sampled.events,
        status: sampled.status,
        stderr: sampled.stderr,
        peak_rss_kib: sampled.peak_rss_kib,
        peak_fds: sampled.peak_fds,
        store_bytes: store_bytes(&lab),
    };
    eprintln!(
        "{who}: peak RSS {} KiB, peak fds {}, store {} bytes, {} tool calls",
        run.peak_rss_kib,
        run.peak_fds,
        run.store_bytes,
        tool_calls(&run)
    );
    (abuse.expect)(&run);
    assert_eq!(
        before,
        without_new_placeholders(&lab, &before, watched(&lab)),
        "{who}: the host changed"
    );
    check_bounds(&run, abuse.model_bytes);
    still_usable(&run);
    true
}

fn tool_calls(run: &Run) -> u64 {
    run.kinds().iter().filter(|k| **k == "tool.call").count() as u64
}

fn check_bounds(run: &Run, model_bytes: u64) {
    let who = run.who;
    let rss_bound = RSS_BOUND_KIB + 4 * model_bytes / 1024;
    assert!(run.peak_rss_kib > 0, "{who}: no RSS sample");
    assert!(
        run.peak_rss_kib <= rss_bound,
        "{who}: peak RSS {} KiB over {rss_bound} KiB",
        run.peak_rss_kib
    );
    assert!(
        run.peak_fds <= FD_BOUND,
        "{who}: {} open descriptors",
        run.peak_fds
    );
    let store_bound = STORE_BASE_BYTES + tool_calls(run) * STORE_PER_CALL_BYTES;
    assert!(
        run.store_bytes <= store_bound,
        "{who}: the store is {} bytes, over {store_bound}",
        run.store_bytes
    );
}

/// One more benign turn on the same session completes.
fn still_usable(run: &Run) {
    let lab = run.lab;
    let script = lab.script(
        "after.json",
        &json!({"responses": [
            {"tool_calls": [{"id": "after", "name": "bash", "arguments": {"command": "echo still-here"}}]},
            {"text": "fine"}
        ]}),
    );
    let out =
        output(&mut lab.exec_prompt(&script, &["--session", run.session_id(), "--json"], "again"));
    let events = json_lines(&out.stdout);
    let who = run.who;
    assert!(
        out.status.success(),
        "{who}: the session is not usable afterwards: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.result")
        .unwrap_or_else(|| panic!("{who}: no result after the attempt"));
    assert_eq!(result["payload"]["status"], "ok", "{who}: {result}");
    assert!(
        result["payload"]["output"]
            .as_str()
            .is_some_and(|o| o.contains("still-here")),
        "{who}: {result}"
    );
}

/// The store's files (SQLite, its WAL and shared memory), in bytes.
pub fn store_bytes(lab: &Lab) -> u64 {
    let dir = lab.home.path().join("data").join("cortex");
    std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("cortex.db"))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

struct Sampled {
    events: Vec<Value>,
    status: ExitStatus,
    stderr: String,
    peak_rss_kib: u64,
    peak_fds: usize,
}

/// Run `cmd` (stdout JSON lines), sampling `cortex`'s memory and
/// descriptors until it exits; SIGINT it once an event matches `stop_on`.
fn sample(mut cmd: std::process::Command, stop_on: Option<fn(&Value) -> bool>) -> Sampled {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cortex");
    let pid = child.id() as i32;
    let stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let reader = std::thread::spawn(move || {
        let mut stopped = false;
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            let event: Value = serde_json::from_slice(&line)
                .unwrap_or_else(|e| panic!("--json wrote a line that is not JSON: {e}"));
            if !stopped && stop_on.is_some_and(|f| f(&event)) {
                stopped = true;
                // SAFETY: kill has no memory preconditions.
                unsafe { libc::kill(pid, libc::SIGINT) };
            }
            seen.lock().expect("events").push(event);
        }
    });
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    });
    let (mut peak_rss_kib, mut peak_fds) = (0, 0);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if let Some((rss, fds)) = probe(pid) {
            peak_rss_kib = peak_rss_kib.max(rss);
            peak_fds = peak_fds.max(fds);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    reader.join().expect("reader");
    let events = std::mem::take(&mut *events.lock().expect("events"));
    Sampled {
        events,
        status,
        stderr: errors.join().expect("stderr"),
        peak_rss_kib,
        peak_fds,
    }
}

/// `VmHWM` (KiB) and open descriptors of a live process. The descriptors
/// are counted in `/proc/PID/fd`; where that is not readable (`cortex` makes
/// itself non-dumpable, which hides it from an unprivileged user) the size
/// of its descriptor table, `FDSize`, bounds them instead.
fn probe(pid: i32) -> Option<(u64, usize)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    // A zombie or a process still in exec has no memory fields.
    let rss = field("VmHWM:")?;
    let fds = match std::fs::read_dir(format!("/proc/{pid}/fd")) {
        Ok(dir) => dir.count(),
        Err(_) => field("FDSize:")? as usize,
    };
    Some((rss, fds))
}

/// Processes on the host whose command line contains `needle`.
pub fn running(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(needle))
        .collect()
}

/// A human command's output, which must hold no control sequence but
/// Cortex's own colours.
pub fn human(lab: &Lab, args: &[&str], who: &str) -> String {
    let out = output(lab.cortex().args(args));
    assert!(out.status.success(), "{who}: {args:?}: {out:?}");
    crate::escape_support::check_screen(&out.stdout, who);
    String::from_utf8_lossy(&out.stdout).into_owned()
}
