//! Three `explore` subagents of one round run at once against the same
//! three run one after another (`[subagents] parallel` 3 against 1). Each
//! child reads a file and answers; the scripted model waits `DELAY_MS`
//! before each response, standing in for a hosted model's latency, so the
//! figure says how much of that wait parallel children overlap, and with
//! `DELAY_MS` 0 what a child costs the harness (a session, a guest, two
//! requests). The guest is the local sandbox (`cortex-guest`).
//!
//! ```text
//! cargo build --release -p cortex-guest --bin cortex-guest
//! cargo run --release -p cortex-core --example subagent_bench -- RUNS DELAY_MS
//! ```
//!
//! `CORTEX_GUEST_BIN` overrides the guest binary (default: `cortex-guest`
//! beside this example's profile folder).

use cortex_core::{Session, SessionConfig};
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{Mode, StopRule};
use cortex_runtime::SandboxProvider;
use cortex_store::{SqliteStore, Store};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn script(delay_ms: u64) -> serde_json::Value {
    let task = |tag: &str| json!({"name": "task", "arguments": {"kind": "explore", "description": tag, "prompt": tag}});
    let mut responses = vec![json!({"when": "PARENT", "delay_ms": delay_ms,
        "tool_calls": [task("CHILD-A"), task("CHILD-B"), task("CHILD-C")]})];
    for tag in ["CHILD-A", "CHILD-B", "CHILD-C"] {
        responses.push(json!({"when": tag, "delay_ms": delay_ms,
            "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}));
        responses.push(json!({"when": tag, "delay_ms": delay_ms, "text": "found"}));
    }
    responses.push(json!({"when": "PARENT", "delay_ms": delay_ms, "text": "done"}));
    json!({ "responses": responses })
}

async fn one_turn(guest_bin: &Path, delay_ms: u64, parallel: usize) -> Duration {
    let repo = tempfile::tempdir().expect("repo");
    let homes = tempfile::tempdir().expect("homes");
    std::fs::write(repo.path().join("a.txt"), "alpha\n").expect("write");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let model = ScriptedProvider::from_json(&script(delay_ms).to_string()).expect("script");
    let guests = SandboxProvider::new(guest_bin.to_path_buf(), Vec::new(), homes.path().into());
    let config = SessionConfig {
        repository: repo.path().to_path_buf(),
        mode: Mode::Agent,
        stop_rule: StopRule::Code,
        store,
        model: Arc::new(model),
        guests: Arc::new(guests),
        guest_env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        sandbox: Default::default(),
        workspaces: None,
        compaction: Default::default(),
        harness_dirs: Default::default(),
        checkpoints: None,
        checkpoint_quota: None,
        checkpoint_total_quota: None,
        hooks: Vec::new(),
        hook_trust: None,
        subagents: cortex_core::subagents::SubagentConfig { parallel },
    };
    let mut session = Session::create(config).await.expect("session");
    let started = Instant::now();
    let outcome = session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    let took = started.elapsed();
    assert!(
        matches!(outcome, cortex_core::TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    session.close().await;
    took
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(9);
    let delay_ms: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
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
    let mut serial = Vec::new();
    let mut parallel = Vec::new();
    // Interleaved, so a change in the machine's load hits both alike.
    for _ in 0..runs {
        serial.push(one_turn(&guest_bin, delay_ms, 1).await);
        parallel.push(one_turn(&guest_bin, delay_ms, 3).await);
    }
    let (serial, parallel) = (median(serial), median(parallel));
    println!(
        "model delay {delay_ms} ms, {runs} runs: 3 explore subagents serially {:.1} ms, in parallel {:.1} ms ({:.2}x)",
        serial.as_secs_f64() * 1000.0,
        parallel.as_secs_f64() * 1000.0,
        serial.as_secs_f64() / parallel.as_secs_f64()
    );
}
