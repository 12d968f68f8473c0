//! Benchmark: what a goal costs per continuation turn.
//!
//! 1. Overhead: a goal of S steps runs through the session API (an
//!    in-process server on a Unix socket, SQLite on disk, the in-process
//!    guest) with a scripted model: a first turn that lists the steps, then
//!    one continuation turn per step (a `goal` call ticking it, then an
//!    answer). The model provider is wrapped to note when each request
//!    starts and when its stream finishes; the overhead of a continuation
//!    is the time from the end of a turn's last model stream to the start
//!    of the next turn's first request: the turn's end, the goal's counters
//!    and the continuation decision, the actor starting the next turn, its
//!    `turn.started`, `goal.continued` and context. For comparison, the same
//!    gap inside a turn (a tool round's end to the next request: running the
//!    `goal` call, its events and the next request).
//! 2. Prompt bytes: what the goal adds to a request, encoded as each wire
//!    format sends it: the `goal` tool's spec (in every request while the
//!    goal is active) and the continuation prompt (one user message per
//!    continuation turn, which stays in the history), for S steps.
//!
//! ```sh
//! cargo run --release -p cortex-server --example bench_goal -- 20 [--rounds 5]
//! ```

use cortex_client::{Client, Endpoint};
use cortex_model::encode::{WireFormat, request_body};
use cortex_model::scripted::ScriptedProvider;
use cortex_model::{ModelEvent, ModelInfo, ModelProvider, ModelRequest, ModelStream};
use cortex_protocol::{EventKind, Role};
use cortex_runtime::InProcessProvider;
use cortex_server::{AppState, ModelChoice, Providers, ServerConfig, Tokens};
use cortex_store::{SqliteStore, Store};
use futures::StreamExt;
use std::sync::{Arc, Mutex};
use std::time::Instant;

const TOKEN: &str = "bench";

/// When a request started and when its stream finished.
#[derive(Default)]
struct Marks {
    starts: Vec<Instant>,
    ends: Vec<Instant>,
}

/// The scripted model, timed.
struct Timed {
    inner: ScriptedProvider,
    marks: Arc<Mutex<Marks>>,
}

impl ModelProvider for Timed {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn info(&self) -> Option<ModelInfo> {
        self.inner.info()
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.marks
            .lock()
            .expect("marks")
            .starts
            .push(Instant::now());
        let marks = self.marks.clone();
        Box::pin(self.inner.stream(request).inspect(move |event| {
            if matches!(event, Ok(ModelEvent::Finish(_))) {
                marks.lock().expect("marks").ends.push(Instant::now());
            }
        }))
    }
}

fn titles(steps: usize) -> Vec<String> {
    (0..steps)
        .map(|i| format!("write the module part_{i}.rs and its unit tests"))
        .collect()
}

fn step_list(steps: usize, done: usize) -> serde_json::Value {
    let list: Vec<_> = titles(steps)
        .into_iter()
        .enumerate()
        .map(|(i, title)| serde_json::json!({"title": title, "done": i < done}))
        .collect();
    serde_json::Value::Array(list)
}

/// First turn: the steps; then one continuation per step, the last one
/// completing the goal.
fn script(steps: usize) -> String {
    let mut responses = vec![
        serde_json::json!({"tool_calls": [{"name": "goal", "arguments": {"steps": step_list(steps, 0)}}]}),
        serde_json::json!({"text": "Planned."}),
    ];
    for done in 1..=steps {
        let mut arguments = serde_json::json!({"steps": step_list(steps, done)});
        if done == steps {
            arguments["complete"] = true.into();
            arguments["evidence"] = "every part is written and its tests pass".into();
        }
        responses
            .push(serde_json::json!({"tool_calls": [{"name": "goal", "arguments": arguments}]}));
        responses.push(serde_json::json!({"text": format!("Step {done} done.")}));
    }
    serde_json::json!({ "responses": responses }).to_string()
}

struct Run {
    /// Turn end → next turn's first request, per continuation (µs).
    between: Vec<f64>,
    /// Tool round end → next request inside a turn (µs).
    within: Vec<f64>,
    /// The requests, for the byte counts.
    requests: Vec<ModelRequest>,
}

async fn run(steps: usize) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("repo");
    std::fs::write(repo.join("README.md"), "bench\n").expect("write");
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&dir.path().join("cortex.db")).expect("store"));
    let marks = Arc::new(Mutex::new(Marks::default()));
    let script = script(steps);
    let model = Arc::new(Timed {
        inner: ScriptedProvider::from_json(&script).expect("script"),
        marks: marks.clone(),
    });
    let scripted = model.clone();
    let factory = move |_: ModelChoice<'_>| -> Result<Providers, cortex_server::ProviderError> {
        Ok(Providers {
            model: scripted.clone(),
            guests: Arc::new(InProcessProvider),
            guest_env: Vec::new(),
        })
    };
    let state = AppState::new(
        store,
        Tokens::new().with(TOKEN, "bench"),
        Arc::new(factory),
        ServerConfig::default(),
    );
    let socket = dir.path().join("api.sock");
    let listener = tokio::net::UnixListener::bind(&socket).expect("bind");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(cortex_server::serve_unix(listener, state.clone(), async {
        let _ = stopped.await;
    }));
    let client = Client::new(Endpoint::Unix(socket), TOKEN);
    let view = client
        .create_session(serde_json::json!({"repository": repo}))
        .await
        .expect("session");
    let mut events = client.events(&view.id, 0).await.expect("events");
    client
        .set_goal(&view.id, "write every part with its tests", None)
        .await
        .expect("goal");
    let mut completed = false;
    while let Some(event) = events.next().await {
        let kind = event.expect("event").kind;
        if std::env::var_os("BENCH_GOAL_TRACE").is_some() {
            eprintln!("{}", kind.type_name());
        }
        completed |= matches!(kind, EventKind::GoalCompleted { .. });
        if matches!(kind, EventKind::GoalPaused { .. }) {
            panic!("the goal paused");
        }
        if completed && kind.ends_turn() {
            break;
        }
    }
    // The open event stream would hold the graceful shutdown.
    drop(events);
    state.close_all().await;
    let _ = stop.send(());
    let _ = server.await;
    let marks = marks.lock().expect("marks");
    // Requests 2k and 2k+1 are turn k's: a tool round, then the answer.
    let gap = |from: usize, to: usize| {
        marks.starts[to]
            .duration_since(marks.ends[from])
            .as_secs_f64()
            * 1e6
    };
    let turns = marks.starts.len() / 2;
    Run {
        between: (1..turns).map(|k| gap(2 * k - 1, 2 * k)).collect(),
        within: (0..turns).map(|k| gap(2 * k, 2 * k + 1)).collect(),
        requests: model.inner.requests(),
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn summary(mut values: Vec<f64>) -> String {
    values.sort_by(f64::total_cmp);
    format!(
        "p50 {:.0} µs, p90 {:.0} µs, min {:.0} µs ({} samples)",
        percentile(&values, 0.5),
        percentile(&values, 0.9),
        values[0],
        values.len()
    )
}

/// Bytes of `request` as `format` encodes it.
fn bytes(format: WireFormat, request: &ModelRequest) -> usize {
    request_body(format, request).expect("encode").len()
}

/// The goal tool's bytes and the continuation prompt's, in the first
/// request of the first continuation turn (request 2: after the first
/// turn's two).
fn goal_bytes(requests: &[ModelRequest]) {
    let request = &requests[2];
    let mut without_tool = request.clone();
    without_tool.tools.retain(|t| t.name != "goal");
    let mut without_prompt = request.clone();
    let Some(prompt) = without_prompt
        .messages
        .iter_mut()
        .rev()
        .find(|m| m.role == Role::User)
    else {
        panic!("no continuation prompt");
    };
    println!(
        "continuation prompt: {} bytes of text (one user message per continuation turn)",
        prompt.content.len()
    );
    prompt.content.clear();
    for format in WireFormat::ALL {
        let full = bytes(format, request);
        println!(
            "  {:<17} request {full} B; the goal tool's spec {} B; the continuation prompt {} B",
            format.name(),
            full - bytes(format, &without_tool),
            full - bytes(format, &without_prompt),
        );
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let steps: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(20);
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let (mut between, mut within) = (Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..rounds {
        let run = run(steps).await;
        between.extend(run.between);
        within.extend(run.within);
        last = Some(run.requests);
    }
    println!("{steps} steps, {rounds} rounds");
    println!(
        "turn end → next continuation's first request: {}",
        summary(between)
    );
    println!(
        "tool round end → next request, inside a turn:  {}",
        summary(within)
    );
    if let Some(requests) = last {
        goal_bytes(&requests);
    }
}
