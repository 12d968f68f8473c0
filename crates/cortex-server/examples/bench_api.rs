//! Benchmark: N concurrent sessions, each one scripted 5-tool turn against
//! the local guest, run (a) directly through `cortex_core::Session`, with a
//! task following the session's events as a renderer would, and (b) through
//! the session API on an in-process Unix socket (server +
//! client + SSE). Prints sessions per second for both, their ratio in wall
//! time and in CPU time (user + system time of the process and its ended
//! guests, which other processes on a shared machine disturb far less), the
//! CPU time per session, and p50/p99 of the time from a tool result being
//! stored (its `ts`) to its event reaching the SSE subscriber.
//!
//! `--guest local` (the default) is the product's default guest: the
//! `cortex-guest` agent in the local sandbox, one process per session,
//! found beside this example's folder (`--guest-bin PATH` otherwise).
//! `--guest in-process` serves the tools from a task of this process: no
//! guest process at all, so the harness alone, and the API's share looks
//! as large as it can.
//!
//! Each N runs `--rounds R` times (default 5), direct and API alternating;
//! the figures are medians over the rounds (latencies: over all events).
//! `--only api|direct` profiles one path (CPU per session only);
//! `--only requests|connections`: CPU per `GET /v1/sessions/{id}` on a
//! reused or a new connection.
//!
//! ```sh
//! cargo build --release -p cortex-guest
//! cargo run --release -p cortex-server --example bench_api -- 10 100 500 [--guest in-process]
//! ```

use cortex_client::{Client, Endpoint};
use cortex_core::{Session, SessionConfig};
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{EventKind, SessionId};
use cortex_runtime::{GuestProvider, InProcessProvider, SandboxProvider};
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

/// The guest agent binary for the local sandbox guest and the folder for
/// the guests' homes, or none for the in-process guest.
static GUEST: std::sync::OnceLock<Option<(std::path::PathBuf, std::path::PathBuf)>> =
    std::sync::OnceLock::new();

fn guests() -> Arc<dyn GuestProvider> {
    match GUEST.get().and_then(Option::as_ref) {
        Some((program, homes)) => Arc::new(SandboxProvider::new(
            program.clone(),
            Vec::new(),
            homes.clone(),
        )),
        None => Arc::new(InProcessProvider),
    }
}

fn providers() -> Providers {
    Providers {
        model: Arc::new(ScriptedProvider::from_json(&script()).expect("script")),
        guests: guests(),
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
    let days = cortex_protocol::calendar::days_from_civil(y, m, day);
    Some(((days * 86_400 + h * 3600 + min * 60) as f64 + s) * 1000.0)
}

fn now_millis() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
        * 1000.0
}

/// Wall and CPU time of the sessions.
async fn direct(n: usize, repo: &std::path::Path) -> (Duration, Duration) {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let (start, cpu) = (Instant::now(), cpu_time());
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
                harness_dirs: Default::default(),
                checkpoints: None,
                checkpoint_quota: None,
                checkpoint_total_quota: None,
                hooks: Vec::new(),
                hook_trust: None,
                subagents: Default::default(),
            })
            .await
            .expect("session");
            // A library client follows the turn's events as the API's does
            // (a renderer): the same events, handed over in the process.
            let mut events = session.subscribe();
            let follower = tokio::spawn(async move {
                let mut latencies = Vec::new();
                loop {
                    match events.recv().await {
                        Ok(event) => {
                            if let EventKind::ToolResult { .. } = event.kind
                                && let Some(stored) = ts_millis(&event.ts)
                            {
                                latencies.push(now_millis() - stored);
                            }
                            if event.kind.ends_turn() {
                                break;
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                    }
                }
                latencies
            });
            let outcome = session
                .run_turn("read", Default::default())
                .await
                .expect("turn");
            assert!(
                matches!(outcome, cortex_core::TurnOutcome::Completed { .. }),
                "{outcome:?}"
            );
            follower.await.expect("follower");
            session.close().await;
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    (start.elapsed(), cpu_time().saturating_sub(cpu))
}

/// A server with a fresh in-memory store on `socket`, until the sender
/// fires.
fn serve(
    socket: &std::path::Path,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
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
    let server = tokio::spawn(cortex_server::serve_unix(listener, state, async {
        let _ = stopped.await;
    }));
    (stop, server)
}

/// Wall and CPU time of the sessions, and the tool.result→SSE latencies.
async fn api(
    n: usize,
    repo: &std::path::Path,
    socket: &std::path::Path,
) -> (Duration, Duration, Vec<f64>) {
    let (stop, server) = serve(socket);
    let client = Client::new(Endpoint::Unix(socket.to_path_buf()), TOKEN);
    let (start, cpu) = (Instant::now(), cpu_time());
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
    let (elapsed, cpu) = (start.elapsed(), cpu_time().saturating_sub(cpu));
    let _ = stop.send(());
    let _ = server.await;
    (elapsed, cpu, latencies)
}

/// CPU time of `n` × 10 `GET /v1/sessions/{id}` from `n` tasks, per ten
/// requests; `fresh`: each on a new connection.
async fn requests(
    n: usize,
    repo: &std::path::Path,
    socket: &std::path::Path,
    fresh: bool,
) -> Duration {
    let (stop, server) = serve(socket);
    let client = Client::new(Endpoint::Unix(socket.to_path_buf()), TOKEN);
    let view = client
        .create_session(
            serde_json::json!({"repository": repo.display().to_string(), "mode": "ask"}),
        )
        .await
        .expect("create");
    let cpu = cpu_time();
    let mut tasks = Vec::new();
    for _ in 0..n {
        let (client, id) = (client.clone(), view.id.clone());
        let socket = socket.to_path_buf();
        tasks.push(tokio::spawn(async move {
            for _ in 0..10 {
                if fresh {
                    let client = Client::new(Endpoint::Unix(socket.clone()), TOKEN);
                    client.session(&id).await.expect("show");
                } else {
                    client.session(&id).await.expect("show");
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let cpu = cpu_time().saturating_sub(cpu) / 10;
    let _ = stop.send(());
    let _ = server.await;
    cpu
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|x, y| x.total_cmp(y));
    percentile(&values, 0.5)
}

/// User + system CPU time of the process and its ended guests so far.
fn cpu_time() -> Duration {
    Duration::from_micros(cpu_micros(libc::RUSAGE_SELF) + cpu_micros(libc::RUSAGE_CHILDREN))
}

fn cpu_micros(who: libc::c_int) -> u64 {
    {
        // SAFETY: `getrusage` only writes the struct it is given.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut usage);
            usage
        };
        let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        micros(usage.ru_utime) + micros(usage.ru_stime)
    }
}

fn main() {
    let options = Options::parse();
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
    let homes = tempfile::tempdir().expect("homes");
    let local = local_guest(&options, homes.path());
    println!("guest: {}", options.guest);
    let _ = GUEST.set(local);
    println!(
        "| N | direct sessions/s | API sessions/s | API/direct wall | API/direct CPU \
         | CPU ratio, rounds' range | CPU µs/session direct | API | API adds \
         | tool.result→SSE p50 ms | p99 ms |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    runtime.block_on(async {
        for &n in &options.ns {
            match options.only.as_deref() {
                Some(path) => {
                    for _ in 0..options.rounds {
                        profile(path, n, repo.path(), &socket).await;
                    }
                }
                None => row(n, options.rounds, repo.path(), &socket).await,
            }
        }
    });
}

/// The command line: session counts, `--rounds`, `--only PATH`, `--guest`,
/// `--guest-bin`.
struct Options {
    ns: Vec<usize>,
    rounds: usize,
    only: Option<String>,
    guest: String,
    guest_bin: Option<std::path::PathBuf>,
}

impl Options {
    fn parse() -> Options {
        let mut args = std::env::args().skip(1);
        let mut options = Options {
            ns: Vec::new(),
            rounds: 5,
            only: None,
            guest: String::from("local"),
            guest_bin: std::env::current_exe()
                .ok()
                .and_then(|exe| Some(exe.parent()?.parent()?.join("cortex-guest"))),
        };
        while let Some(arg) = args.next() {
            if arg == "--guest" {
                options.guest = args.next().unwrap_or_default();
            } else if arg == "--guest-bin" {
                options.guest_bin = args.next().map(std::path::PathBuf::from);
            } else if arg == "--only" {
                options.only = args.next();
            } else if arg == "--rounds" {
                options.rounds = args
                    .next()
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(options.rounds);
            } else if let Ok(n) = arg.parse() {
                options.ns.push(n);
            }
        }
        if options.ns.is_empty() {
            options.ns = vec![10, 100, 500];
        }
        options
    }
}

/// The local guest's binary and homes folder, `None` for in-process guests;
/// exits on a bad choice.
fn local_guest(
    options: &Options,
    homes: &std::path::Path,
) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    match options.guest.as_str() {
        "local" => match options.guest_bin.clone().filter(|bin| bin.is_file()) {
            Some(bin) => Some((bin, homes.to_path_buf())),
            None => {
                eprintln!(
                    "no cortex-guest binary beside this example: \
                     `cargo build --release -p cortex-guest`, or --guest-bin PATH"
                );
                std::process::exit(2);
            }
        },
        "in-process" => None,
        other => {
            eprintln!("--guest is local or in-process, not {other:?}");
            std::process::exit(2);
        }
    }
}

/// `--only PATH`: one path's CPU time per session, nothing else.
async fn profile(path: &str, n: usize, repo: &std::path::Path, socket: &std::path::Path) {
    let guests = cpu_micros(libc::RUSAGE_CHILDREN);
    let cpu = if path == "requests" || path == "connections" {
        requests(n, repo, socket, path == "connections").await
    } else if path == "api" {
        api(n, repo, socket).await.1
    } else {
        direct(n, repo).await.1
    };
    let guests = cpu_micros(libc::RUSAGE_CHILDREN) - guests;
    println!(
        "{path} {n}: {:.0} µs CPU each (session or request), {:.0} of it in guests",
        cpu.as_secs_f64() * 1e6 / n as f64,
        guests as f64 / n as f64
    );
}

/// One table row: N sessions direct and through the API, `rounds` times;
/// the medians.
async fn row(n: usize, rounds: usize, repo: &std::path::Path, socket: &std::path::Path) {
    let (mut direct_rate, mut api_rate, mut wall_ratio, mut cpu_ratio) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut direct_cpu, mut api_cpu, mut latencies) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (d_wall, d_cpu) = direct(n, repo).await;
        let (a_wall, a_cpu, lat) = api(n, repo, socket).await;
        direct_rate.push(n as f64 / d_wall.as_secs_f64());
        api_rate.push(n as f64 / a_wall.as_secs_f64());
        wall_ratio.push(a_wall.as_secs_f64() / d_wall.as_secs_f64());
        cpu_ratio.push(a_cpu.as_secs_f64() / d_cpu.as_secs_f64().max(1e-9));
        direct_cpu.push(d_cpu.as_secs_f64() * 1e6 / n as f64);
        api_cpu.push(a_cpu.as_secs_f64() * 1e6 / n as f64);
        latencies.extend(lat);
    }
    latencies.sort_by(|x, y| x.total_cmp(y));
    let added = direct_cpu
        .iter()
        .zip(&api_cpu)
        .map(|(d, a)| a - d)
        .collect();
    let (low, high) = cpu_ratio
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
    println!(
        "| {n} | {:.0} | {:.0} | {:.2} | {:.2} | {low:.2}–{high:.2} | {:.0} | {:.0} | {:.0} | {:.1} | {:.1} |",
        median(direct_rate),
        median(api_rate),
        median(wall_ratio),
        median(cpu_ratio),
        median(direct_cpu),
        median(api_cpu),
        median(added),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
    );
}
