//! Escape attempts against the user's terminal and the harness's own
//! descriptors, from `bash` inside a real local sandbox (issue 13, "no
//! terminal"; issue 20, "no inherited privilege"). The harness here is given
//! a controlling terminal and a leaked descriptor on purpose: a Python
//! wrapper opens a pseudo-terminal, makes it its controlling terminal, leaves
//! it and a canary file open without `O_CLOEXEC`, and `exec`s the agent, just
//! as a `cortex` started from a shell would be.
//!
//! Each case runs as root and, when the test runs as root, as `nobody`.

mod common;

use common::guest_binary;
use common::sandbox::{Sandbox, as_nobody, bash, is_root, marker, start};
use cortex_runtime::SandboxProvider;
use std::path::PathBuf;

/// `python3 -c WRAPPER CANARY AGENT ARGS…`: a session of its own with a pty
/// as its controlling terminal (the slave also on fd 9) and CANARY open on
/// fd 7, then the agent. A child holds the master, as a terminal emulator
/// would (a closed master would hang the terminal up), until the agent ends.
const WRAPPER: &str = "\
import ctypes, fcntl, os, sys, termios, time
master, slave = os.openpty()
os.setsid()
fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
if os.fork() == 0:
    ctypes.CDLL(None).prctl(1, 9)
    os.closerange(0, master)
    while True:
        time.sleep(60)
os.dup2(slave, 9)
os.dup2(os.open(sys.argv[1], os.O_RDONLY), 7)
os.execv(sys.argv[2], sys.argv[2:])
";

/// The sandbox's agent started through [`WRAPPER`], as root or as nobody.
fn with_terminal(sandbox: &Sandbox, canary: &std::path::Path, nobody: bool) -> SandboxProvider {
    let wrapped = vec![
        "-c".to_owned(),
        WRAPPER.to_owned(),
        canary.display().to_string(),
        guest_binary().display().to_string(),
    ];
    let mut provider = if nobody {
        as_nobody(sandbox)
    } else {
        common::sandbox::provider(
            PathBuf::from("/usr/bin/python3"),
            Vec::new(),
            sandbox.homes.path(),
        )
    };
    if nobody {
        // setpriv … AGENT  becomes  setpriv … python3 -c WRAPPER CANARY AGENT
        provider.args.pop();
        provider.args.push("/usr/bin/python3".to_owned());
    }
    provider.args.extend(wrapped);
    provider
}

fn users() -> Vec<bool> {
    if is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

#[tokio::test]
async fn the_users_terminal_is_out_of_reach() {
    for nobody in users() {
        let sandbox = Sandbox::new();
        let canary_dir = tempfile::tempdir().expect("canary dir");
        let canary = canary_dir.path().join("canary");
        std::fs::write(&canary, marker()).expect("canary");
        if nobody {
            common::sandbox::give_to_nobody(canary_dir.path());
        }
        let provider = with_terminal(&sandbox, &canary, nobody);
        let Some(guest) = start(&provider, &sandbox.spec()).await else {
            return;
        };
        // The harness side really had a terminal: the agent's outer process
        // (the wrapper, exec'd) still has it as controlling terminal.
        let pid = guest.pid().expect("pid");
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
        let tty_nr = stat_field(&stat, 7);
        assert_ne!(tty_nr, "0", "the wrapper gave no terminal: {stat}");

        let attempts = [
            // The terminal by name.
            "echo pwned > /dev/tty",
            "exec 3<>/dev/tty",
            "python3 -c \"open('/dev/tty', 'w')\"",
            "ls /dev/pts/ /dev/ptmx /dev/console",
            // A controlling terminal of any process of the guest.
            "for s in /proc/[0-9]*/stat; do f=$(cut -d' ' -f7 $s); [ \"$f\" != 0 ] && exit 0; done; exit 1",
            // A descriptor on the pty (or the canary file) left open by the parent.
            "for f in /proc/[0-9]*/fd/*; do readlink $f; done 2>/dev/null | grep -E 'pts|ptmx|tty|canary'",
            // Typing into the terminal, whichever descriptor is one.
            "python3 -c \"import fcntl,termios\nfor fd in range(0, 11):\n  try: fcntl.ioctl(fd, termios.TIOCSTI, b'x'); break\n  except OSError: pass\nelse: raise SystemExit(1)\"",
        ];
        for attempt in attempts {
            let out = bash(&guest, attempt).await;
            assert!(
                !out.is_ok(),
                "`{attempt}` succeeded (nobody: {nobody}): {}",
                out.output
            );
        }
        // The guest's processes are in a session of their own, led by its init.
        let out = bash(&guest, "cut -d' ' -f6,7 /proc/self/stat").await;
        let first = out.output.lines().next().unwrap_or_default();
        assert_eq!(first, "1 0", "session, tty: {}", out.output);
        guest.close().await;
    }
}

/// Field `n` (1-based, as in proc(5)) of a `/proc/PID/stat` line.
fn stat_field(stat: &str, n: usize) -> String {
    let (_, rest) = stat.rsplit_once(')').expect("a stat line");
    rest.split_whitespace()
        .nth(n - 3)
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn terminal_injection_is_refused_by_the_filter_itself() {
    let sandbox = Sandbox::new();
    let Some(guest) = sandbox.start().await else {
        return;
    };
    // On /dev/null the kernel answers ENOTTY (25); the filter answers EPERM
    // (1) before the kernel looks at the descriptor. TIOCGWINSZ shows the
    // difference: it is not filtered.
    let probe = "import fcntl,errno\n\
                 for name, req in (('TIOCSTI', 0x5412), ('TIOCLINUX', 0x541C), ('TIOCGWINSZ', 0x5413)):\n  \
                   try: fcntl.ioctl(0, req, b'\\0' * 8)\n  \
                   except OSError as e: print(name, errno.errorcode[e.errno])";
    let out = bash(&guest, &format!("python3 -c \"{probe}\" </dev/null")).await;
    assert!(out.is_ok(), "{}", out.output);
    assert!(out.output.contains("TIOCSTI EPERM"), "{}", out.output);
    assert!(out.output.contains("TIOCLINUX EPERM"), "{}", out.output);
    assert!(out.output.contains("TIOCGWINSZ ENOTTY"), "{}", out.output);
    guest.close().await;
}

#[tokio::test]
async fn commands_get_no_stdin_and_cannot_reach_the_agents_pipes() {
    let sandbox = Sandbox::new();
    let Some(guest) = sandbox.start().await else {
        return;
    };
    let out = bash(
        &guest,
        "readlink /proc/self/fd/0; ls /proc/self/fd | tr '\\n' ' '",
    )
    .await;
    assert!(out.is_ok(), "{}", out.output);
    assert!(out.output.starts_with("/dev/null"), "{}", out.output);
    // The agent is pid 2: its stdout is the harness's channel; init (pid 1)
    // started with copies of the same pipes.
    for attempt in [
        "echo '{\"id\":1,\"result\":{}}' > /proc/2/fd/1",
        "cat /proc/2/fd/0",
        "cat /proc/2/environ",
        "echo '{\"id\":1,\"result\":{}}' > /proc/1/fd/1",
        "readlink /proc/1/fd/* | grep pipe",
        "cat /proc/1/fd/0",
    ] {
        let out = bash(&guest, attempt).await;
        assert!(!out.is_ok(), "`{attempt}` succeeded: {}", out.output);
    }
    guest.ping().await.expect("the agent is unharmed");
    guest.close().await;
}

#[tokio::test]
async fn device_nodes_in_the_workspace_do_not_open_and_set_uid_is_off() {
    if !is_root() {
        cortex_testkit::skip_current("root", "planting a device node needs root on the host");
        return;
    }
    let sandbox = Sandbox::new();
    // As an earlier session run with more privilege might leave it.
    let node = sandbox.path("node");
    let status = std::process::Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .status()
        .expect("mknod");
    assert!(status.success());
    let Some(guest) = sandbox.start().await else {
        return;
    };
    let out = bash(&guest, "echo x > node").await;
    assert!(!out.is_ok(), "the device node opened: {}", out.output);
    let mounts = bash(&guest, "grep \" $PWD \" /proc/self/mountinfo").await;
    let options = mounts.output.split_whitespace().nth(5).unwrap_or_default();
    assert!(
        options.contains("nosuid") && options.contains("nodev"),
        "{}",
        mounts.output
    );
    guest.close().await;
}
