//! The real `cortex-guest` binary as a child process.

mod common;

use common::{CallJson, WAIT, collect, guest_binary, pid_alive, run, spec, wait_gone};
use cortex_protocol::{GuestReply, ToolName};
use cortex_runtime::{Guest, GuestProvider, ProcessProvider, RuntimeError};
use serde_json::json;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn provider() -> ProcessProvider {
    ProcessProvider {
        program: guest_binary(),
        args: Vec::new(),
    }
}

/// A guest process connected without any capabilities request.
fn raw_guest(workspace: &std::path::Path) -> Guest {
    let mut child = tokio::process::Command::new(guest_binary())
        .arg("--root")
        .arg(workspace)
        .env_clear()
        .envs(cortex_runtime::allowed_env(&[]))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn guest");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    Guest::connect(stdout, stdin, Some(child))
}

#[tokio::test]
async fn ping_and_close_reaps_the_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = provider()
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    assert!(guest.is_alive());
    guest.ping().await.expect("ping");
    let pid = guest.pid().expect("a child pid") as i32;
    assert!(pid_alive(pid));
    guest.close().await;
    assert!(
        wait_gone(pid, Duration::from_secs(5)).await,
        "guest {pid} still alive"
    );
}

#[tokio::test]
async fn dropping_the_guest_kills_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = provider()
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    let pid = guest.pid().expect("a child pid") as i32;
    drop(guest);
    assert!(
        wait_gone(pid, Duration::from_secs(5)).await,
        "guest {pid} still alive"
    );
}

#[tokio::test]
async fn start_errors_are_clear() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = ProcessProvider {
        program: dir.path().join("no-such-agent"),
        args: Vec::new(),
    };
    let err = missing
        .start(&spec(dir.path(), false, false))
        .await
        .err()
        .expect("no agent");
    assert!(
        matches!(&err, RuntimeError::Start { program, .. } if program.contains("no-such-agent")),
        "{err}"
    );
    let err = provider()
        .start(&spec(&dir.path().join("nope"), false, false))
        .await
        .err()
        .expect("no workspace");
    assert!(err.to_string().contains("not an existing folder"), "{err}");
    let not_a_guest = ProcessProvider {
        program: "true".into(),
        args: Vec::new(),
    };
    let err = not_a_guest
        .start(&spec(dir.path(), false, false))
        .await
        .err()
        .expect("`true` is no guest");
    assert!(matches!(err, RuntimeError::Start { .. }), "{err}");
}

#[tokio::test]
async fn guest_starts_read_only_until_granted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = raw_guest(dir.path());
    let write = json!({"path": "a.txt", "content": "hi\n"});
    let outcome = run(&guest, ToolName::WriteFile, write.clone()).await;
    assert!(!outcome.is_ok());
    assert_eq!(
        outcome.output,
        "this guest is read-only: write_file refused"
    );
    let outcome = run(&guest, ToolName::Bash, json!({"command": "touch b"})).await;
    assert!(!outcome.is_ok());
    assert!(outcome.output.contains("bash refused"), "{outcome:?}");
    assert!(!dir.path().join("a.txt").exists());
    assert!(!dir.path().join("b").exists());

    guest.set_capabilities(true, false).await.expect("grant");
    let outcome = run(&guest, ToolName::WriteFile, write).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(outcome.diff.is_some());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("written"),
        "hi\n"
    );
    let outcome = run(&guest, ToolName::Bash, json!({"command": "touch b"})).await;
    assert!(
        !outcome.is_ok(),
        "writable does not grant bash: {outcome:?}"
    );
    guest.close().await;
}

#[tokio::test]
async fn read_file_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.md"), "alpha\nbeta\n").expect("write");
    let guest = provider()
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    let outcome = run(&guest, ToolName::ReadFile, json!({"path": "notes.md"})).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(outcome.output.contains("alpha") && outcome.output.contains("beta"));
    let outcome = run(&guest, ToolName::ReadFile, json!({"path": "missing.md"})).await;
    assert!(!outcome.is_ok());
    // Arguments that do not parse cannot be sent: the client takes typed
    // `ToolArgs` (the guest's answer to a raw malformed request is tested in
    // cortex-guest's tests/serve.rs).
    guest.close().await;
}

#[tokio::test]
async fn bash_streams_deltas_then_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = provider()
        .start(&spec(dir.path(), true, true))
        .await
        .expect("start");
    let mut handle = guest
        .call_json(
            ToolName::Bash,
            json!({"command": "echo first; sleep 0.3; echo second >&2; pwd"}),
        )
        .await
        .expect("call");
    let first = tokio::time::timeout(WAIT, handle.next())
        .await
        .expect("in time");
    assert!(
        matches!(&first, Some(GuestReply::Delta { text, .. }) if text.contains("first")),
        "{first:?}"
    );
    let (rest, outcome) = collect(&mut handle).await;
    let outcome = outcome.expect("a result");
    assert!(rest.contains("second"), "{rest}");
    assert!(outcome.is_ok(), "{outcome:?}");
    assert_eq!(outcome.exit_code, Some(0));
    assert!(outcome.output.contains("first") && outcome.output.contains("second"));
    let canonical = dir.path().canonicalize().expect("canonical");
    assert!(
        outcome.output.contains(&*canonical.to_string_lossy()),
        "runs in the workspace: {outcome:?}"
    );
    assert!(handle.next().await.is_none(), "nothing after the result");

    let outcome = run(&guest, ToolName::Bash, json!({"command": "exit 7"})).await;
    assert!(!outcome.is_ok());
    assert_eq!(outcome.exit_code, Some(7));
    assert!(outcome.output.contains('7'), "{outcome:?}");
    guest.close().await;
}

/// Read deltas until `count` numbers (one per line) were printed.
async fn read_pids(handle: &mut cortex_runtime::CallHandle, count: usize) -> Vec<i32> {
    let mut text = String::new();
    loop {
        let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        if pids.len() >= count && text.ends_with('\n') {
            return pids;
        }
        match tokio::time::timeout(WAIT, handle.next())
            .await
            .expect("in time")
        {
            Some(GuestReply::Delta { text: t, .. }) => text.push_str(&t),
            other => panic!("expected output, got {other:?} after {text:?}"),
        }
    }
}

#[tokio::test]
async fn stop_kills_the_whole_process_tree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = provider()
        .start(&spec(dir.path(), true, true))
        .await
        .expect("start");
    let mut handle = guest
        .call_json(
            ToolName::Bash,
            json!({"command": "echo $$; sleep 100 & echo $!; sleep 100"}),
        )
        .await
        .expect("call");
    let pids = read_pids(&mut handle, 2).await;
    for &pid in &pids {
        assert!(pid_alive(pid), "{pid} runs before stop");
    }
    let started = Instant::now();
    guest.stop().await.expect("stop");
    let (_, outcome) = collect(&mut handle).await;
    let outcome = outcome.expect("a result");
    assert!(outcome.is_stopped(), "{outcome:?}");
    assert!(!outcome.is_ok());
    for &pid in &pids {
        assert!(
            wait_gone(pid, Duration::from_secs(5)).await,
            "{pid} survived stop"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    guest.ping().await.expect("still serving");
    guest.close().await;
}

#[tokio::test]
async fn calls_are_multiplexed() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "one\n").expect("write");
    std::fs::write(dir.path().join("b.txt"), "two\n").expect("write");
    let guest = provider()
        .start(&spec(dir.path(), false, true))
        .await
        .expect("start");
    let started = Instant::now();
    let mut slow = guest
        .call_json(ToolName::Bash, json!({"command": "sleep 3; echo slow"}))
        .await
        .expect("call");
    let mut a = guest
        .call_json(ToolName::ReadFile, json!({"path": "a.txt"}))
        .await
        .expect("call");
    let mut b = guest
        .call_json(ToolName::ReadFile, json!({"path": "b.txt"}))
        .await
        .expect("call");
    assert_ne!(a.id(), b.id());
    let (ra, rb) = tokio::join!(collect(&mut a), collect(&mut b));
    let (ra, rb) = (ra.1.expect("a result"), rb.1.expect("b result"));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "reads waited for bash"
    );
    assert!(ra.is_ok() && ra.output.contains("one"), "{ra:?}");
    assert!(rb.is_ok() && rb.output.contains("two"), "{rb:?}");
    guest.ping().await.expect("ping while bash runs");
    let (_, slow) = collect(&mut slow).await;
    let slow = slow.expect("bash result");
    assert!(slow.is_ok() && slow.output.contains("slow"), "{slow:?}");
    guest.close().await;
}

#[tokio::test]
async fn killed_guest_ends_calls_without_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = provider()
        .start(&spec(dir.path(), false, true))
        .await
        .expect("start");
    let mut handle = guest
        .call_json(ToolName::Bash, json!({"command": "echo $$; sleep 100"}))
        .await
        .expect("call");
    // The command's process group outlives a SIGKILLed guest (no pid
    // namespace here); remember it to clean up.
    let group = read_pids(&mut handle, 1).await[0];
    let pid = guest.pid().expect("pid") as i32;
    // SAFETY: plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let (_, outcome) = collect(&mut handle).await;
    assert!(
        outcome.is_none(),
        "no result from a dead guest: {outcome:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while guest.is_alive() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!guest.is_alive());
    assert!(matches!(
        guest
            .call_json(ToolName::ReadFile, json!({"path": "x"}))
            .await,
        Err(RuntimeError::Exited)
    ));
    assert!(guest.ping().await.is_err());
    guest.close().await;
    // SAFETY: plain killpg(2) of the group our test command leads.
    unsafe { libc::killpg(group, libc::SIGKILL) };
}

#[tokio::test]
async fn malformed_lines_do_not_kill_the_agent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = tokio::process::Command::new(guest_binary())
        .arg("--root")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn guest");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    stdin
        .write_all(b"garbage\n{\"id\": 4, \"op\": \"nonsense\"}\n\n{\"id\":5,\"op\":\"ping\"}\n")
        .await
        .expect("write");
    stdin.flush().await.expect("flush");
    let mut lines = Vec::new();
    for _ in 0..3 {
        let line = tokio::time::timeout(WAIT, stdout.next_line())
            .await
            .expect("in time")
            .expect("read")
            .expect("a line");
        lines.push(serde_json::from_str::<serde_json::Value>(&line).expect("json"));
    }
    assert_eq!(lines[0]["id"], 0);
    assert_eq!(lines[0]["status"], "error");
    assert!(
        lines[0]["output"]
            .as_str()
            .is_some_and(|s| s.contains("malformed"))
    );
    assert_eq!(lines[1]["id"], 4);
    assert_eq!(lines[1]["status"], "error");
    assert_eq!(
        lines[2],
        json!({"id": 5, "type": "result", "status": "ok", "output": "pong"})
    );
    drop(stdin);
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("exits on EOF")
        .expect("wait");
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn bad_arguments_exit_2() {
    for args in [
        &["--bogus"][..],
        &["--root"][..],
        &["--root", "/no/such/dir/x"][..],
    ] {
        let output = tokio::process::Command::new(guest_binary())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .await
            .expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("usage"));
    }
    let output = tokio::process::Command::new(guest_binary())
        .arg("--help")
        .output()
        .await
        .expect("run");
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("--root"));
}

/// Set by `env_allow_list_hides_secrets` in the child test process it starts.
const PROBE: &str = "CORTEX_RUNTIME_ENV_PROBE";
const SECRET: &str = "sk-test-secret";

/// Runs the real check in a child test process whose environment holds a
/// provider key (setting it here would be `unsafe` in a threaded process).
#[test]
fn env_allow_list_hides_secrets() {
    let exe = std::env::current_exe().expect("current_exe");
    let output = std::process::Command::new(exe)
        .args([
            "env_child_probe",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PROBE, "1")
        .env("OPENAI_API_KEY", SECRET)
        .env("CORTEX_GUEST_BIN", guest_binary())
        .output()
        .expect("run the probe");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the probe ran: {stdout}");
}

#[tokio::test]
async fn env_child_probe() {
    if std::env::var_os(PROBE).is_none() {
        return; // only meaningful inside env_allow_list_hides_secrets
    }
    assert_eq!(std::env::var("OPENAI_API_KEY").as_deref(), Ok(SECRET));
    let env = cortex_runtime::allowed_env(&[]);
    assert!(env.iter().all(|(name, _)| name != "OPENAI_API_KEY"));
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = provider()
        .start(&spec(dir.path(), false, true))
        .await
        .expect("start");
    let outcome = run(&guest, ToolName::Bash, json!({"command": "env"})).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(!outcome.output.contains(SECRET), "{}", outcome.output);
    // Variables bash sets itself.
    let shell = ["PWD", "OLDPWD", "SHLVL", "_"];
    for line in outcome.output.lines() {
        let Some((name, _)) = line.split_once('=') else {
            continue;
        };
        assert!(
            cortex_runtime::BASE_ENV_ALLOWLIST.contains(&name) || shell.contains(&name),
            "`{name}` leaked into the guest:\n{}",
            outcome.output
        );
    }
    guest.close().await;
}
