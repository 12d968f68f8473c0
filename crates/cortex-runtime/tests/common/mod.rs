//! Shared by the integration tests: the real `cortex-guest` binary and
//! helpers to drive a guest.
#![allow(dead_code)]

use cortex_protocol::{GuestReply, ToolName, ToolOutcome};
use cortex_runtime::{CallHandle, Guest, GuestSpec};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

pub const WAIT: Duration = Duration::from_secs(30);

/// The `cortex-guest` binary of this build, built on first use: a test of
/// another package cannot use `CARGO_BIN_EXE_cortex-guest`. `CORTEX_GUEST_BIN`
/// overrides it.
pub fn guest_binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(build_guest_binary).clone()
}

fn build_guest_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("CORTEX_GUEST_BIN") {
        return PathBuf::from(path);
    }
    // target/<profile>/deps/<test> -> target/<profile>
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps")
        .to_path_buf();
    let binary = profile_dir.join(format!("cortex-guest{}", std::env::consts::EXE_SUFFIX));
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev".to_owned(),
        Some(other) => other.to_owned(),
    };
    let mut command = std::process::Command::new(env!("CARGO"));
    command
        .args([
            "build",
            "--quiet",
            "-p",
            "cortex-guest",
            "--bin",
            "cortex-guest",
        ])
        .args(["--profile", &profile])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(target_dir) = profile_dir.parent() {
        command.arg("--target-dir").arg(target_dir);
    }
    // Always build (cheap when fresh) so a stale binary is never tested.
    let status = command.status();
    match status {
        Ok(s) if s.success() => {}
        other if binary.exists() => {
            eprintln!("building cortex-guest failed ({other:?}); using the existing binary")
        }
        other => panic!("cannot build cortex-guest: {other:?}"),
    }
    assert!(binary.exists(), "no guest binary at {}", binary.display());
    binary
}

pub fn spec(workspace: &Path, writable: bool, allow_bash: bool) -> GuestSpec {
    GuestSpec {
        workspace: workspace.to_path_buf(),
        writable,
        allow_bash,
        env: cortex_runtime::allowed_env(&[]),
        policy: Default::default(),
        network: Default::default(),
    }
}

/// Deltas (concatenated) and the result of a call; `None` result when the
/// stream ended without one.
pub async fn collect(handle: &mut CallHandle) -> (String, Option<ToolOutcome>) {
    let mut streamed = String::new();
    loop {
        let reply = tokio::time::timeout(WAIT, handle.next())
            .await
            .expect("a reply in time");
        match reply {
            Some(GuestReply::Delta { text, .. }) => streamed.push_str(&text),
            Some(GuestReply::Result(outcome)) => return (streamed, Some(outcome)),
            None => return (streamed, None),
        }
    }
}

/// [`Guest::call`] with the arguments as a model writes them (parsed here,
/// as the harness's dispatcher does).
pub trait CallJson {
    fn call_json(
        &self,
        name: ToolName,
        args: serde_json::Value,
    ) -> impl std::future::Future<Output = Result<CallHandle, cortex_runtime::RuntimeError>> + Send;
}

impl CallJson for Guest {
    async fn call_json(
        &self,
        name: ToolName,
        args: serde_json::Value,
    ) -> Result<CallHandle, cortex_runtime::RuntimeError> {
        let parsed = cortex_protocol::ToolArgs::parse(name, &args.to_string())
            .unwrap_or_else(|e| panic!("test arguments for {name}: {e}"));
        self.call(parsed).await
    }
}

pub async fn run(guest: &Guest, name: ToolName, args: serde_json::Value) -> ToolOutcome {
    let mut handle = guest.call_json(name, args).await.expect("call");
    collect(&mut handle).await.1.expect("a result")
}

/// Alive and not a zombie.
pub fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    if !exists {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// Poll until `pid` is gone (or the deadline passes); whether it is gone.
pub async fn wait_gone(pid: i32, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < deadline {
        if !pid_alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    !pid_alive(pid)
}
pub mod sandbox;
