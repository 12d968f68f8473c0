//! run_bash: output, exit codes, env, timeouts, Stop, floods. No timed
//! assertions beyond generous upper bounds.

use cortex_protocol::{BashArgs, OutputStream};
use cortex_tools::{BashEnding, BashOutcome, MAX_OUTPUT_BYTES, run_bash};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn env() -> Vec<(String, String)> {
    vec![
        ("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned()),
        ("CORTEX_TEST_VAR".to_owned(), "42".to_owned()),
    ]
}

async fn run_in(
    cwd: &Path,
    command: &str,
    timeout_ms: Option<u64>,
    cancel: CancellationToken,
    on_output: &mut (dyn FnMut(OutputStream, String) + Send),
) -> BashOutcome {
    let args = BashArgs {
        command: command.to_owned(),
        timeout_ms,
        background: None,
    };
    run_bash(cwd, &args, &env(), on_output, cancel)
        .await
        .expect("run_bash")
}

async fn run(command: &str, timeout_ms: Option<u64>) -> (BashOutcome, Vec<(OutputStream, String)>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut chunks = Vec::new();
    let mut on_output = |stream, text| chunks.push((stream, text));
    let outcome = run_in(
        dir.path(),
        command,
        timeout_ms,
        CancellationToken::new(),
        &mut on_output,
    )
    .await;
    (outcome, chunks)
}

/// Whether `pid` is a live (non-zombie) process.
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// Wait (generously) for `pid` to be gone.
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test]
async fn output_exit_code_and_stderr() {
    let (out, chunks) = run("echo out; echo err >&2; exit 3", None).await;
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.ending, BashEnding::Exited);
    assert!(out.output.contains("out\n"), "{}", out.output);
    assert!(out.output.contains("err\n"), "{}", out.output);
    assert!(out.output.ends_with("[exit code 3]"), "{}", out.output);
    let stdout: String = chunks
        .iter()
        .filter(|(s, _)| *s == OutputStream::Stdout)
        .map(|(_, t)| t.as_str())
        .collect();
    let stderr: String = chunks
        .iter()
        .filter(|(s, _)| *s == OutputStream::Stderr)
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(stdout, "out\n");
    assert_eq!(stderr, "err\n");
    let (out, _) = run("true", None).await;
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.output, "[exit code 0]");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("cstring");
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

#[tokio::test]
async fn output_keeps_arrival_order() {
    // The command waits on a fifo until the previous line was delivered, so
    // the order is fixed without relying on sleeps.
    let dir = tempfile::tempdir().expect("tempdir");
    mkfifo(&dir.path().join("go1"));
    mkfifo(&dir.path().join("go2"));
    let (go1, go2) = (dir.path().join("go1"), dir.path().join("go2"));
    let mut on_output = |_, chunk: String| {
        for (word, fifo) in [("one", &go1), ("two", &go2)] {
            if chunk.contains(word) {
                let fifo = fifo.clone();
                std::thread::spawn(move || std::fs::write(fifo, "go\n"));
            }
        }
    };
    let out = run_in(
        dir.path(),
        "echo one; read x < go1; echo two >&2; read x < go2; echo three",
        Some(60_000),
        CancellationToken::new(),
        &mut on_output,
    )
    .await;
    assert_eq!(out.output, "one\ntwo\nthree\n[exit code 0]");
}

#[tokio::test]
async fn runs_in_cwd() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("marker.txt"), "here").expect("write");
    let mut sink = |_, _| {};
    let out = run_in(
        dir.path(),
        "cat marker.txt",
        None,
        CancellationToken::new(),
        &mut sink,
    )
    .await;
    assert!(out.output.starts_with("here"), "{}", out.output);
}

#[tokio::test]
async fn env_is_exactly_the_given_env() {
    let (out, _) = run("env", None).await;
    assert!(
        out.output.contains("CORTEX_TEST_VAR=42\n"),
        "{}",
        out.output
    );
    // bash itself adds PWD, SHLVL and `_`; nothing may come from our process.
    let allowed = ["PATH", "CORTEX_TEST_VAR", "PWD", "SHLVL", "_", "OLDPWD"];
    for line in out.output.lines().filter(|l| !l.starts_with('[')) {
        let name = line.split('=').next().unwrap_or_default();
        assert!(allowed.contains(&name), "inherited `{line}`");
    }
    for (name, _) in std::env::vars() {
        if !allowed.contains(&name.as_str()) {
            assert!(
                !out.output.contains(&format!("\n{name}=")),
                "inherited {name}"
            );
        }
    }
}

#[tokio::test]
async fn stdin_is_closed() {
    let (out, _) = run("cat; echo done", Some(30_000)).await;
    assert_ne!(out.ending, BashEnding::TimedOut);
    assert_eq!(out.output, "done\n[exit code 0]");
}

#[tokio::test]
async fn timeout_kills_the_group() {
    let (out, chunks) = run("echo $$; sleep 100 & echo $!; sleep 100", Some(1000)).await;
    assert_eq!(out.ending, BashEnding::TimedOut);
    assert_ne!(out.ending, BashEnding::Stopped);
    assert_eq!(out.exit_code, None);
    assert!(
        out.output.contains("timed out after 1000 ms"),
        "{}",
        out.output
    );
    assert!(out.output.contains("SIGKILL"), "{}", out.output);
    let text: String = chunks.into_iter().map(|(_, t)| t).collect();
    let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert_eq!(pids.len(), 2, "{text}");
    for pid in pids {
        assert!(gone(pid), "pid {pid} survived");
    }
}

#[tokio::test]
async fn cancel_kills_background_jobs_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let mut text = String::new();
    let mut on_output = |_, chunk: String| {
        text.push_str(&chunk);
        if text.lines().count() >= 2 {
            trigger.cancel();
        }
    };
    let out = run_in(
        dir.path(),
        "echo $$; sleep 100 & echo $!; sleep 100",
        None,
        cancel,
        &mut on_output,
    )
    .await;
    assert_eq!(out.ending, BashEnding::Stopped);
    assert_ne!(out.ending, BashEnding::TimedOut);
    assert_eq!(out.exit_code, None);
    assert!(out.output.contains("stopped"), "{}", out.output);
    let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert_eq!(pids.len(), 2, "{text}");
    for pid in pids {
        assert!(gone(pid), "pid {pid} survived");
    }
}

#[tokio::test]
async fn escaped_grandchild_does_not_hang_the_tool() {
    // setsid leaves the group but keeps our stdout pipe open.
    let started = Instant::now();
    let (out, chunks) = run("setsid sleep 30 & echo $!; sleep 100", Some(500)).await;
    assert_eq!(out.ending, BashEnding::TimedOut);
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "hung on the pipe"
    );
    let text: String = chunks.into_iter().map(|(_, t)| t).collect();
    if let Some(pid) = text.lines().find_map(|l| l.trim().parse::<i32>().ok()) {
        // SAFETY: plain kill of the process this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

#[tokio::test]
async fn flood_is_bounded() {
    let mut streamed = 0usize;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut on_output = |_, chunk: String| streamed += chunk.len();
    let out = run_in(
        dir.path(),
        "yes | head -c 5000000",
        None,
        CancellationToken::new(),
        &mut on_output,
    )
    .await;
    assert_eq!(out.exit_code, Some(0));
    assert!(out.output.len() <= MAX_OUTPUT_BYTES, "{}", out.output.len());
    assert!(out.output.starts_with("y\ny\n"));
    assert!(
        out.output.ends_with("y\n[exit code 0]"),
        "{}",
        &out.output[out.output.len() - 50..]
    );
    assert!(out.output.contains("bytes cut from the middle"));
    assert!(
        streamed <= 1024 * 1024 + 32 * 1024 + 200,
        "streamed {streamed}"
    );
}

#[tokio::test]
async fn endless_flood_times_out_bounded() {
    let mut streamed = 0usize;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut on_output = |_, chunk: String| streamed += chunk.len();
    let out = run_in(
        dir.path(),
        "yes",
        Some(1000),
        CancellationToken::new(),
        &mut on_output,
    )
    .await;
    assert_eq!(out.ending, BashEnding::TimedOut);
    assert!(out.output.len() <= MAX_OUTPUT_BYTES, "{}", out.output.len());
    assert!(out.output.contains("bytes cut from the middle"));
    assert!(
        streamed <= 1024 * 1024 + 32 * 1024 + 200,
        "streamed {streamed}"
    );
}

#[tokio::test]
async fn signal_death_is_reported() {
    let (out, _) = run("kill -TERM $$", None).await;
    assert_eq!(out.exit_code, None);
    assert!(out.output.contains("SIGTERM"), "{}", out.output);
}

#[tokio::test]
async fn utf8_split_across_chunks_streams_intact() {
    let (out, chunks) = run("printf 'caf\\xc3'; sleep 0.1; printf '\\xa9\\n'", None).await;
    let text: String = chunks.into_iter().map(|(_, t)| t).collect();
    assert_eq!(text, "café\n");
    assert!(out.output.starts_with("café\n"));
}
