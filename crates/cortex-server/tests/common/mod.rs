//! Shared harness: a real server on 127.0.0.1 (SQLite store, in-process
//! guest, scripted models), an HTTP client, and an SSE reader.

#![allow(dead_code)]

use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::Event;
use cortex_runtime::InProcessProvider;
use cortex_server::{AppState, ModelChoice, Providers, ServerConfig, Tokens};
use cortex_store::{SqliteStore, Store};
use futures::StreamExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const ALICE: &str = "token-alice";
pub const BOB: &str = "token-bob";

pub struct Server {
    pub base: String,
    pub http: reqwest::Client,
    pub state: Arc<AppState>,
    pub store: Arc<dyn Store>,
    /// The script a resumed session (or one created without `model`) gets.
    pub default_script: Arc<Mutex<String>>,
    pub repo: tempfile::TempDir,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

pub fn factory(
    default_script: Arc<Mutex<String>>,
) -> impl Fn(ModelChoice<'_>) -> Result<Providers, cortex_server::ProviderError> + Send + Sync + 'static
{
    move |choice| {
        let model = match choice {
            ModelChoice::New(Some(spec)) => {
                let path = spec
                    .strip_prefix("scripted:")
                    .ok_or_else(|| format!("unknown model `{spec}` (tests know scripted:PATH)"))?;
                ScriptedProvider::from_file(Path::new(path)).map_err(|e| e.to_string())?
            }
            ModelChoice::New(None) | ModelChoice::Resume(_) => {
                let script = default_script.lock().expect("lock").clone();
                ScriptedProvider::from_json(&script).map_err(|e| e.to_string())?
            }
        };
        Ok(Providers {
            model: Arc::new(model),
            guests: Arc::new(InProcessProvider),
            guest_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
        })
    }
}

pub async fn start() -> Server {
    start_with(ServerConfig {
        heartbeat: Duration::from_millis(200),
        ..ServerConfig::default()
    })
    .await
}

pub async fn start_with(config: ServerConfig) -> Server {
    let repo = tempfile::tempdir().expect("tempdir");
    std::fs::write(repo.path().join("a.txt"), "alpha\n").expect("write");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let default_script = Arc::new(Mutex::new(r#"{"responses":[{"text":"ok"}]}"#.to_owned()));
    serve(store, default_script, repo, config).await
}

/// A server (alice's and bob's tokens) on `store`, listening on a free
/// loopback port.
async fn serve(
    store: Arc<dyn Store>,
    default_script: Arc<Mutex<String>>,
    repo: tempfile::TempDir,
    config: ServerConfig,
) -> Server {
    let tokens = Tokens::new().with(ALICE, "alice").with(BOB, "bob");
    let state = AppState::new(
        store.clone(),
        tokens,
        Arc::new(factory(default_script.clone())),
        config,
    );
    state.recover_interrupted().await.expect("recover");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(cortex_server::serve_tcp(listener, state.clone(), async {
        let _ = stop.await;
    }));
    Server {
        base,
        http: reqwest::Client::new(),
        state,
        store,
        default_script,
        repo,
        shutdown: Some(shutdown),
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
    }
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn script(&self, json: serde_json::Value) -> String {
        let path = self
            .repo
            .path()
            .parent()
            .expect("parent")
            .join(format!("script-{}.json", uuid_like()));
        std::fs::write(&path, json.to_string()).expect("write script");
        format!("scripted:{}", path.display())
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let mut request = self.http.request(method, self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("send");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        let json = if text.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
        };
        (status, json)
    }

    /// A new session of alice's in `mode`, its model scripted by `script`.
    pub async fn session_in(&self, mode: &str, script: serde_json::Value) -> String {
        let model = self.script(script);
        self.create_session(&model, Some(mode)).await
    }

    /// A new session of alice's with `model` (a `scripted:` spec).
    pub async fn session(&self, model: &str) -> String {
        self.create_session(model, None).await
    }

    async fn create_session(&self, model: &str, mode: Option<&str>) -> String {
        let mut body = serde_json::json!({
            "repository": self.repo.path(),
            "model": model,
        });
        if let Some(mode) = mode {
            body["mode"] = serde_json::json!(mode);
        }
        let (status, body) = self
            .send(
                reqwest::Method::POST,
                "/v1/sessions",
                Some(ALICE),
                Some(body),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().expect("id").to_owned()
    }

    pub async fn turn(&self, id: &str, message: &str) -> (u16, serde_json::Value) {
        self.send(
            reqwest::Method::POST,
            &format!("/v1/sessions/{id}/turns"),
            Some(ALICE),
            Some(serde_json::json!({ "message": message })),
        )
        .await
    }

    /// `POST …/stop` as `token`.
    pub async fn stop(&self, id: &str, token: &str) -> (u16, serde_json::Value) {
        self.send(
            reqwest::Method::POST,
            &format!("/v1/sessions/{id}/stop"),
            Some(token),
            None,
        )
        .await
    }

    /// `POST …/{what}` (`plan/accept`, `spec/reject`, …) once the actor
    /// has the session back after a turn's end event (until then it
    /// answers `conflict`).
    pub async fn verdict(
        &self,
        id: &str,
        what: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        for _ in 0..100 {
            let answer = self.verdict_now(id, what, body.clone()).await;
            if answer.1["error"]["code"] != "conflict" {
                return answer;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the session stayed busy");
    }

    /// `POST …/{what}` at once.
    pub async fn verdict_now(
        &self,
        id: &str,
        what: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        self.send(
            reqwest::Method::POST,
            &format!("/v1/sessions/{id}/{what}"),
            Some(ALICE),
            body,
        )
        .await
    }

    /// Open the event stream.
    pub async fn events(&self, id: &str, token: &str, last_event_id: Option<u64>) -> Sse {
        let mut request = self
            .http
            .get(self.url(&format!("/v1/sessions/{id}/events")))
            .bearer_auth(token);
        if let Some(last) = last_event_id {
            request = request.header("Last-Event-ID", last.to_string());
        }
        let response = request.send().await.expect("events");
        assert_eq!(response.status().as_u16(), 200);
        Sse {
            body: Box::pin(response.bytes_stream()),
            buffer: String::new(),
        }
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

type Body = std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// A minimal SSE reader: `id:` and `data:` fields, comments (heartbeats)
/// skipped.
pub struct Sse {
    body: Body,
    buffer: String,
}

/// One SSE message.
#[derive(Debug)]
pub struct Message {
    pub id: Option<u64>,
    pub event: Event,
}

impl Sse {
    /// The next message, or `None` when the stream ends or 10 s pass.
    pub async fn next(&mut self) -> Option<Message> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut id = None;
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().parse().expect("numeric id"));
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if data.is_empty() {
                    continue; // a heartbeat
                }
                let event = serde_json::from_str(&data).expect("event JSON");
                return Some(Message { id, event });
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.body.next())
                .await
                .ok()??
                .ok()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Messages until the end of a turn (inclusive).
    pub async fn until_turn_end(&mut self) -> Vec<Message> {
        let mut out = Vec::new();
        while let Some(message) = self.next().await {
            let end = message.event.kind.ends_turn();
            out.push(message);
            if end {
                return out;
            }
        }
        panic!("the stream ended before the turn did: {out:?}");
    }
}

impl Sse {
    /// A stream already partly read: `buffer` holds what was read of it.
    pub fn from_stream(body: Body, buffer: String) -> Sse {
        Sse { body, buffer }
    }

    pub fn from_response(response: reqwest::Response) -> Sse {
        assert_eq!(response.status().as_u16(), 200);
        Sse {
            body: Box::pin(response.bytes_stream()),
            buffer: String::new(),
        }
    }
}

impl Server {
    /// The server restarted: this one stops listening and a new one (a new
    /// `AppState`, so no live session) serves the same store and repository
    /// after recovering the turns it finds running, as `cortex serve` does.
    /// Live sessions of the old one are left behind in memory, as a killed
    /// process would leave them: never answered.
    pub async fn restarted(mut self) -> Server {
        let repo = std::mem::replace(&mut self.repo, tempfile::tempdir().expect("tempdir"));
        let store = self.store.clone();
        let default_script = self.default_script.clone();
        drop(self);
        let config = ServerConfig {
            heartbeat: Duration::from_millis(200),
            ..ServerConfig::default()
        };
        serve(store, default_script, repo, config).await
    }

    /// The kinds of the events until the end of a turn (inclusive).
    /// Wait until the actor has the session back: the last event of a turn
    /// can reach a subscriber before the session is free for the next
    /// request (and a goal's continuation may have started meanwhile).
    pub async fn idle(&self, id: &str) -> serde_json::Value {
        for _ in 0..200 {
            let (status, view) = self
                .send(
                    reqwest::Method::GET,
                    &format!("/v1/sessions/{id}"),
                    Some(ALICE),
                    None,
                )
                .await;
            assert_eq!(status, 200, "{view}");
            if view["running_turn"].is_null() {
                return view;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the session stayed busy");
    }

    pub async fn turn_kinds(sse: &mut Sse) -> Vec<cortex_protocol::EventKind> {
        sse.until_turn_end()
            .await
            .into_iter()
            .map(|m| m.event.kind)
            .collect()
    }
}
