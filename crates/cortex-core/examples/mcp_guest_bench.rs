//! Measures a stdio MCP server inside the local sandbox against the same
//! server on the host: start time (launch, handshake, tools listed) and the
//! round trip of one tool call. The server is `cortex-mcp`'s `mcp`-package
//! test server; the guest is the `cortex-guest` binary.
//!
//! ```text
//! cargo build --release -p cortex-guest --bin cortex-guest
//! cargo run --release -p cortex-core --example mcp_guest_bench
//! ```
//!
//! `CORTEX_GUEST_BIN` overrides the guest binary (default: `cortex-guest`
//! beside this example's profile folder), `CORTEX_MCP_PYTHON` the Python
//! with the `mcp` package (default `/opt/cortex-test/mcp-venv/bin/python`).

use cortex_core::GuestLauncher;
use cortex_mcp::{Called, HostLauncher, Launcher, Launchers, Lookup, McpHub, Notice, ServerConfig};
use cortex_runtime::{GuestSpec, SandboxProvider};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

const STARTS: usize = 5;
const CALLS: usize = 200;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Start the server `STARTS` times, then time `CALLS` calls of `add` on the
/// last one: (median start ms, median call µs).
async fn measure(launcher: &dyn Launcher, host: &dyn Launcher, python: &Path) -> (f64, f64) {
    let spec = ServerConfig {
        command: Some(python.display().to_string()),
        args: vec!["server.py".into()],
        enabled: true,
        ..ServerConfig::default()
    }
    .to_spec("bench")
    .expect("valid")
    .expect("enabled");
    let launchers = Launchers {
        guest: Some(launcher),
        host,
    };
    let mut starts = Vec::new();
    let mut hub = None;
    for _ in 0..STARTS {
        if let Some(previous) = hub.take() {
            McpHub::close(previous).await;
        }
        let (started, notices) = McpHub::start(std::slice::from_ref(&spec), launchers).await;
        match &notices[0] {
            Notice::Ready { ms, .. } => starts.push(*ms),
            other => panic!("the server did not start: {other:?}"),
        }
        hub = Some(started);
    }
    let hub = hub.expect("started");
    let Lookup::Tool { tool, .. } = hub.lookup("mcp__bench__add") else {
        panic!("no add tool");
    };
    let args = tool.parse_args(r#"{"a": 2, "b": 3}"#).expect("arguments");
    let cancel = CancellationToken::new();
    let mut calls = Vec::new();
    for _ in 0..CALLS {
        let began = Instant::now();
        let called = hub.call(&tool, args.clone(), &cancel).await;
        calls.push(began.elapsed().as_secs_f64() * 1e6);
        assert!(
            matches!(called, Called::Output(ref out) if out.text == "5"),
            "{called:?}"
        );
    }
    hub.close().await;
    (median(starts), median(calls))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let python = std::env::var_os("CORTEX_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/cortex-test/mcp-venv/bin/python"));
    let guest_bin = std::env::var_os("CORTEX_GUEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let exe = std::env::current_exe().expect("current_exe");
            let profile = exe
                .parent()
                .and_then(Path::parent)
                .expect("target/<profile>/examples");
            profile.join("cortex-guest")
        });
    let workspace = tempfile::tempdir().expect("workspace");
    let homes = tempfile::tempdir().expect("homes");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../cortex-mcp/tests/fixtures/py_server.py");
    std::fs::copy(fixture, workspace.path().join("server.py")).expect("copy the server");
    let spec = GuestSpec {
        workspace: workspace.path().to_path_buf(),
        writable: true,
        allow_bash: true,
        env: cortex_runtime::allowed_env(&[]),
        policy: Default::default(),
        network: Default::default(),
    };
    let provider = SandboxProvider::new(guest_bin, Vec::new(), homes.path().into());
    let guest = GuestLauncher::new(Arc::new(provider), spec);
    let host = HostLauncher {
        cwd: workspace.path().to_path_buf(),
    };
    let (guest_start, guest_call) = measure(&guest, &host, &python).await;
    let (host_start, host_call) = measure(&host, &host, &python).await;
    println!("| case | start (median of {STARTS}) | one call (median of {CALLS}) |");
    println!("| --- | --- | --- |");
    println!("| in the local sandbox | {guest_start:.0} ms | {guest_call:.0} µs |");
    println!("| on the host (`sandbox = \"host\"`) | {host_start:.0} ms | {host_call:.0} µs |");
    println!(
        "| sandbox / host | {:.2} | {:.2} |",
        guest_start / host_start,
        guest_call / host_call
    );
}
