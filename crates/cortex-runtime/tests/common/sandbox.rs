//! A real local sandbox for the escape tests: the `cortex-guest` binary
//! started by the `local` provider, as a session starts it, and the helpers
//! each attempt needs (a command through `bash`, a marker, a skip).

use super::{CallJson, collect, guest_binary, spec};
use cortex_protocol::{ToolName, ToolOutcome};
use cortex_runtime::{Guest, GuestProvider, GuestSpec, Limits, SandboxProvider};
use serde_json::json;
use std::path::{Path, PathBuf};

pub struct Sandbox {
    pub workspace: tempfile::TempDir,
    pub homes: tempfile::TempDir,
    pub provider: SandboxProvider,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let workspace = tempfile::tempdir().expect("workspace");
        let homes = tempfile::tempdir().expect("homes");
        let provider = provider(guest_binary(), Vec::new(), homes.path());
        Sandbox {
            workspace,
            homes,
            provider,
        }
    }

    pub fn spec(&self) -> GuestSpec {
        spec(self.workspace.path(), true, true)
    }

    /// The guest, or `None` (the skip recorded) where this machine cannot
    /// create user namespaces: the caller then returns.
    pub async fn start(&self) -> Option<Guest> {
        self.start_with(&self.spec()).await
    }

    pub async fn start_with(&self, spec: &GuestSpec) -> Option<Guest> {
        start(&self.provider, spec).await
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.workspace.path().join(relative)
    }
}

/// A provider with the test limits, for `program args…` as the agent.
pub fn provider(program: PathBuf, args: Vec<String>, homes: &Path) -> SandboxProvider {
    let mut provider = SandboxProvider::new(program, args, homes.to_path_buf());
    provider.limits = Limits {
        memory_bytes: 256 << 20,
        max_processes: 64,
    };
    provider
}

/// Start, or `None` with the skip recorded where namespaces are refused.
pub async fn start(provider: &SandboxProvider, spec: &GuestSpec) -> Option<Guest> {
    match provider.start(spec).await {
        Ok(guest) => Some(guest),
        Err(e)
            if e.to_string()
                .contains("cannot create the guest's namespaces") =>
        {
            cortex_testkit::skip_current("userns", &e.to_string());
            None
        }
        Err(e) => panic!("the sandbox does not start: {e}"),
    }
}

pub async fn bash(guest: &Guest, command: &str) -> ToolOutcome {
    let mut call = guest
        .call_json(
            ToolName::Bash,
            json!({"command": command, "timeout_ms": 20_000}),
        )
        .await
        .expect("call");
    collect(&mut call).await.1.expect("a result")
}

/// Whether this test runs as root (then the `nobody` variants run too).
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `chown -R nobody:nogroup` (the unprivileged variants' folders).
pub fn give_to_nobody(path: &Path) {
    let status = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(path)
        .status()
        .expect("chown");
    assert!(status.success());
}

/// The same sandbox with the agent started as `nobody` (setpriv), as an
/// unprivileged user meets it. Only meaningful when the test runs as root.
pub fn as_nobody(sandbox: &Sandbox) -> SandboxProvider {
    give_to_nobody(sandbox.workspace.path());
    give_to_nobody(sandbox.homes.path());
    provider(
        PathBuf::from("setpriv"),
        vec![
            "--reuid=65534".into(),
            "--regid=65534".into(),
            "--clear-groups".into(),
            guest_binary().display().to_string(),
        ],
        sandbox.homes.path(),
    )
}

/// A string no other process on the host has in its command line.
pub fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{}{:09}", std::process::id(), nanos)
}
