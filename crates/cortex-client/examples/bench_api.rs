//! Benchmark: N concurrent sessions, each one scripted 5-tool turn against
//! the in-process guest, run (a) directly through `cortex_core::Session` and
//! (b) through the session API on an in-process Unix socket (server +
//! client + SSE). Prints sessions per second for both, their ratio, and
//! p50/p99 of the time from a tool result being stored (its `ts`) to its
//! event reaching the SSE subscriber.
//!
//! `cargo run --release -p cortex-client --example bench_api -- 10 100 500`

use cortex_client::{Client, Endpoint};
use cortex_core::{Session, SessionConfig};
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{EventKind, SessionId};
use cortex_runtime::InProcessProvider;
use cortex_server::{AppState, ModelChoice, Providers, ServerConfig, Tokens};
use cortex_store::{SqliteStore, Store};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const TOKEN: &str = "bench";

fn script() -> String {
    let calls: Vec<_> = (0..5)
        .map(|i| serde_json::json!({"name": "read_file", "arguments": {"path": format!("f{i}.txt")}}))
        .collect();
    serde_json::json!({"responses": [
        {"text": "Reading five files.", "tool_calls": calls},
        {"text": "Done."}
    ]})
    .to_string()
}

fn providers() -> Providers {
    Providers {
        model: Arc::new(ScriptedProvider::from_json(&script()).expect("script")),
        guests: Arc::new(InProcessProvider),
        guest_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
    }
}

/// Milliseconds since the epoch of an RFC 3339 `…T hh:mm:ss.mmmZ` stamp.
fn ts_millis(ts: &str) -> Option<f64> {
    let (date, time) = ts.trim_end_matches('Z').split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>());
    let (y, m, day) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let mut t = time.split(':');
    let (h, min) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
    );
    let s: f64 = t.next()?.parse().ok()?;
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + h * 3600 + min * 60) as f64 + s) * 1000.0)
}

fn now_millis() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
        * 1000.0
}

async fn direct(n: usize, repo: &std::path::Path) -> Duration {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..n {
        let (store, repo) = (store.clone(), repo.to_path_buf());
        tasks.push(tokio::spawn(async move {
            let p = providers();
            let mut session = Session::create(SessionConfig {
                repository: repo,
                mode: cortex_protocol::Mode::Ask,
                stop_rule: Default::default(),
                store,
                model: p.model,
                guests: p.guests,
                guest_env: p.guest_env,
                sandbox: Default::default(),
                workspaces: None,
                compaction: Default::default(),
            })
            .await
            .expect("session");
            let outcome = session
                .run_turn("read", Default::default())
                .await
                .expect("turn");
            assert!(matches!(
                outcome,
                cortex_core::TurnOutcome::Completed { .. }
            ));
            session.close().await;
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    start.elapsed()
}

async fn api(n: usize, repo: &std::path::Path, socket: &std::path::Path) -> (Duration, Vec<f64>) {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let factory = |_: ModelChoice<'_>| Ok(providers());
    let state = AppState::new(
        store,
        Tokens::new().with(TOKEN, "bench"),
        Arc::new(factory),
        ServerConfig::default(),
    );
    let _ = std::fs::remove_file(socket);
    let listener = tokio::net::UnixListener::bind(socket).expect("bind");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(cortex_server::serve_unix(listener, state.clone(), async {
        let _ = stopped.await;
    }));
    let client = Client::new(Endpoint::Unix(socket.to_path_buf()), TOKEN);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..n {
        let (client, repo) = (client.clone(), repo.display().to_string());
        tasks.push(tokio::spawn(async move {
            let view = client
                .create_session(serde_json::json!({"repository": repo, "mode": "ask"}))
                .await
                .expect("create");
            let id: SessionId = view.id;
            let mut events = client.events(&id, 0).await.expect("events");
            client.start_turn(&id, "read").await.expect("turn");
            let mut latencies = Vec::new();
            while let Some(event) = events.next().await {
                let event = event.expect("event");
                if let EventKind::ToolResult { .. } = event.kind
                    && let Some(stored) = ts_millis(&event.ts)
                {
                    latencies.push(now_millis() - stored);
                }
                if event.kind.ends_turn() {
                    assert!(matches!(event.kind, EventKind::TurnCompleted { .. }));
                    break;
                }
            }
            client.close(&id).await.expect("close");
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.expect("task"));
    }
    let elapsed = start.elapsed();
    let _ = stop.send(());
    let _ = server.await;
    (elapsed, latencies)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    let ns: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let ns = if ns.is_empty() {
        vec![10, 100, 500]
    } else {
        ns
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let repo = tempfile::tempdir().expect("repo");
    for i in 0..5 {
        std::fs::write(repo.path().join(format!("f{i}.txt")), "x\n".repeat(50)).expect("file");
    }
    let socket = repo.path().join("bench.sock");
    println!(
        "| N | direct sessions/s | API sessions/s | API/direct time | tool.result→SSE p50 ms | p99 ms |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    runtime.block_on(async {
        for n in ns {
            let d = direct(n, repo.path()).await;
            let (a, mut lat) = api(n, repo.path(), &socket).await;
            lat.sort_by(|x, y| x.total_cmp(y));
            println!(
                "| {n} | {:.0} | {:.0} | {:.2} | {:.1} | {:.1} |",
                n as f64 / d.as_secs_f64(),
                n as f64 / a.as_secs_f64(),
                a.as_secs_f64() / d.as_secs_f64(),
                percentile(&lat, 0.5),
                percentile(&lat, 0.99),
            );
        }
    });
}
