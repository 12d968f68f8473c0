//! The client against a real server on a Unix socket: short requests reuse
//! idle connections, and a connection the server closed meanwhile is
//! replaced without the caller noticing.

use cortex_client::{Client, Endpoint};
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::EventKind;
use cortex_runtime::InProcessProvider;
use cortex_server::{AppState, ModelChoice, Providers, ServerConfig, Tokens};
use cortex_store::{SqliteStore, Store};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const TOKEN: &str = "t";

fn providers() -> Providers {
    let script = serde_json::json!({"responses": [
        {"text": "", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "Done."}
    ]});
    Providers {
        model: Arc::new(ScriptedProvider::from_json(&script.to_string()).expect("script")),
        guests: Arc::new(InProcessProvider),
        guest_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
    }
}

/// Serve `store` on `socket` until the sender is used or dropped.
fn serve(store: Arc<dyn Store>, socket: &Path) -> (oneshot::Sender<()>, JoinHandle<()>) {
    let factory = |_: ModelChoice<'_>| Ok(providers());
    let state = AppState::new(
        store,
        Tokens::new().with(TOKEN, "me"),
        Arc::new(factory),
        ServerConfig::default(),
    );
    let _ = std::fs::remove_file(socket);
    let listener = tokio::net::UnixListener::bind(socket).expect("bind");
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let _ = cortex_server::serve_unix(listener, state, async {
            let _ = stopped.await;
        })
        .await;
    });
    (stop, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_survive_a_server_restart_between_them() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("a.txt"), "hello\n").expect("file");
    let socket = dir.path().join("api.sock");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let client = Client::new(Endpoint::Unix(socket.clone()), TOKEN);

    let (stop, server) = serve(store.clone(), &socket);
    let view = client
        .create_session(serde_json::json!({"repository": dir.path(), "mode": "ask"}))
        .await
        .expect("create");
    // Several requests in a row, on the connection the first one left idle.
    for _ in 0..3 {
        assert_eq!(client.session(&view.id).await.expect("show").id, view.id);
    }
    let _ = stop.send(());
    server.await.expect("server");

    // A new server on the same socket: the idle connection is dead.
    let (stop, server) = serve(store, &socket);
    assert_eq!(client.session(&view.id).await.expect("show").id, view.id);
    let mut events = client.events(&view.id, 0).await.expect("events");
    client
        .start_turn(&view.id, "read a.txt")
        .await
        .expect("turn");
    let mut results = 0;
    while let Some(event) = events.next().await {
        let event = event.expect("event");
        if matches!(event.kind, EventKind::ToolResult { .. }) {
            results += 1;
        }
        if event.kind.ends_turn() {
            assert!(matches!(event.kind, EventKind::TurnCompleted { .. }));
            break;
        }
    }
    assert_eq!(results, 1);
    client.close(&view.id).await.expect("close");
    drop(events);
    let _ = stop.send(());
    server.await.expect("server");
}
