//! `--die-with PID`: the agent ends with the harness that started it, even
//! when the harness is killed, and refuses to start for a parent that has
//! already gone.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const GUEST: &str = env!("CARGO_BIN_EXE_cortex-guest");

/// Running and not a zombie.
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

#[test]
fn the_agent_is_killed_with_its_parent() {
    let dir = tempfile::tempdir().expect("dir");
    let fifo = dir.path().join("stdin");
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(status.success());
    // The shell starts the agent with its stdin on the FIFO (open as long
    // as this test holds the writing end), prints its pid, and becomes
    // `sleep`, still the agent's parent.
    let script = format!(
        "{GUEST} --die-with $$ --root {root} < {fifo} & echo $!; exec sleep 60",
        root = dir.path().display(),
        fifo = fifo.display()
    );
    let mut parent = Command::new("sh")
        .args(["-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .expect("sh");
    let mut line = String::new();
    let stdout = parent.stdout.take().expect("stdout");
    BufReader::new(stdout).read_line(&mut line).expect("pid");
    let agent: i32 = line.trim().parse().expect("agent pid");
    let _writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open the agent's stdin");
    std::thread::sleep(Duration::from_millis(300));
    assert!(running(agent), "the agent serves while its parent lives");

    parent.kill().expect("kill -9 the parent");
    let _ = parent.wait();
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(agent) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!running(agent), "the agent outlived its parent");
}

#[test]
fn a_parent_that_is_not_the_one_named_is_refused() {
    let output = Command::new(GUEST)
        .args(["--die-with", "1", "--root", "/"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("has already ended"), "{stderr}");

    let output = Command::new(GUEST)
        .args(["--die-with", "me"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&output.stderr).contains("process id"));
}
