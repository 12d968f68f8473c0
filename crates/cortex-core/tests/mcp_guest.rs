//! Stdio MCP servers inside the local sandbox ([`GuestLauncher`]): the real
//! `cortex-guest` binary started by the `local` provider from a session's
//! guest spec, and the `mcp`-package test server of `cortex-mcp` running in
//! it. Skips with a printed reason where the Python server is not installed
//! (`scripts/install-deps`) or user namespaces are refused.

use cortex_core::GuestLauncher;
use cortex_mcp::{
    Called, HostLauncher, Launchers, Lookup, McpHub, Notice, ServerConfig, ServerSpec,
};
use cortex_protocol::Mode;
use cortex_runtime::{GuestSpec, Limits, SandboxProvider};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[path = "../../cortex-mcp/tests/support/mod.rs"]
mod support;
use support::{fixture, python};

/// The `cortex-guest` binary of this profile, built if needed (as the
/// runtime's sandbox tests do).
fn guest_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("CORTEX_GUEST_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps")
        .to_path_buf();
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev".to_owned(),
        Some(other) => other.to_owned(),
    };
    let mut command = Command::new(env!("CARGO"));
    command
        .args([
            "build",
            "--quiet",
            "-p",
            "cortex-guest",
            "--bin",
            "cortex-guest",
        ])
        .args(["--profile", &profile]);
    if let Some(target_dir) = profile_dir.parent() {
        command.arg("--target-dir").arg(target_dir);
    }
    let status = command.status().expect("cargo build");
    assert!(status.success(), "cannot build cortex-guest");
    profile_dir.join("cortex-guest")
}

fn server(name: &str, python: &Path, read_only: bool) -> ServerSpec {
    ServerConfig {
        command: Some(python.display().to_string()),
        args: vec!["server.py".into()],
        read_only,
        enabled: true,
        ..ServerConfig::default()
    }
    .to_spec(name)
    .expect("valid")
    .expect("enabled")
}

async fn call(hub: &McpHub, name: &str, args: serde_json::Value) -> (bool, String) {
    let Lookup::Tool { tool, .. } = hub.lookup(name) else {
        panic!("{name} is not a tool of a ready server");
    };
    let args = tool.parse_args(&args.to_string()).expect("valid arguments");
    match hub.call(&tool, args, &CancellationToken::new()).await {
        Called::Output(out) => (!out.is_error, out.text),
        Called::Error(message) => (false, message),
        other => panic!("{other:?}"),
    }
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) && !cmdline.contains("cortex-guest") {
            found.push(cmdline);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_in_the_guest_is_confined_to_the_workspace_and_gated_by_mode() {
    let Some(python) = python() else { return };
    let workspace = tempfile::tempdir().expect("workspace");
    let outside = tempfile::tempdir().expect("outside");
    let homes = tempfile::tempdir().expect("homes");
    std::fs::copy(fixture(), workspace.path().join("server.py")).expect("copy the server");
    let mut provider = SandboxProvider::new(guest_binary(), Vec::new(), homes.path().into());
    provider.limits = Limits {
        memory_bytes: 512 << 20,
        max_processes: 64,
    };
    // The session's guest spec as Agent mode builds it.
    let spec = GuestSpec {
        workspace: workspace.path().to_path_buf(),
        writable: true,
        allow_bash: true,
        env: cortex_runtime::allowed_env(&[]),
        policy: Default::default(),
        network: Default::default(),
    };
    let launcher = GuestLauncher::new(Arc::new(provider), spec);
    let host = HostLauncher {
        cwd: workspace.path().to_path_buf(),
    };
    let specs = [server("py", &python, false), server("docs", &python, true)];
    let (hub, notices) = McpHub::start(
        &specs,
        Launchers {
            guest: Some(&launcher),
            host: &host,
        },
    )
    .await;
    if let Some(Notice::Failed { reason, .. }) = notices.first()
        && reason.contains("cannot create the guest's namespaces")
    {
        cortex_testkit::skip_current("userns", reason);
        return;
    }
    assert!(
        notices.iter().all(|n| matches!(n, Notice::Ready { .. })),
        "{notices:?}"
    );

    // Agent mode offers both servers; Ask only the read-only one.
    let names = |mode| -> Vec<String> { hub.offered(mode).into_iter().map(|t| t.name).collect() };
    assert!(names(Mode::Agent).contains(&"mcp__py__write_file".to_owned()));
    let ask = names(Mode::Ask);
    assert!(!ask.is_empty(), "the read-only server is offered");
    assert!(ask.iter().all(|n| n.starts_with("mcp__docs__")), "{ask:?}");

    // The server works, and writes in the workspace…
    assert_eq!(
        call(&hub, "mcp__py__add", json!({"a": 2, "b": 3})).await,
        (true, "5".into())
    );
    let (ok, text) = call(
        &hub,
        "mcp__py__write_file",
        json!({"path": "inside.txt", "text": "in"}),
    )
    .await;
    assert!(ok, "{text}");
    let inside = std::fs::read_to_string(workspace.path().join("inside.txt")).expect("written");
    assert_eq!(inside, "in");

    // …but nowhere else on the host.
    let escape = outside.path().join("escape.txt");
    let (ok, text) = call(
        &hub,
        "mcp__py__write_file",
        json!({"path": escape.display().to_string(), "text": "out"}),
    )
    .await;
    assert!(!ok, "the write outside the workspace was refused: {text}");
    assert!(
        !escape.exists(),
        "nothing was written outside the workspace"
    );
    let (ok, text) = call(
        &hub,
        "mcp__py__write_file",
        json!({"path": "/etc/cortex-escape", "text": "out"}),
    )
    .await;
    assert!(!ok, "{text}");
    assert!(!Path::new("/etc/cortex-escape").exists());

    // Closing the hub ends the servers and their guests.
    // (The guests close in the background: wait for them, boundedly.)
    let command = format!("{} server.py", python.display());
    hub.close().await;
    let mut left = processes_with(&command);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        left = processes_with(&command);
    }
    assert_eq!(left, Vec::<String>::new());
}
