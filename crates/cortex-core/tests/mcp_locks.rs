//! The mode's lock holds for MCP servers as for `bash`: a server's guest is
//! started with the writability of the session's own guest (read-only in
//! Plan, whatever the server claims), a mode change that flips it restarts
//! the servers, and a server placed on the host waits for a mode that may
//! change files. The guests are the in-process provider's, recorded by a
//! wrapper (the local sandbox's mounts are tested in the CLI's `mcp.rs`).
//! Skips with a printed reason where the Python server is not installed.

mod common;

#[path = "../../cortex-mcp/tests/support/mod.rs"]
mod support;

use common::*;
use cortex_core::{McpServerSpec, Session};
use cortex_mcp::{Placement, ServerConfig};
use cortex_protocol::{EventKind, Mode};
use cortex_runtime::{Guest, GuestProvider, GuestSpec, InProcessProvider, RuntimeError};
use cortex_store::Store;
use serde_json::json;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// The in-process provider, noting the spec of every guest it starts.
#[derive(Default)]
struct Recording {
    specs: Mutex<Vec<GuestSpec>>,
}

#[async_trait::async_trait]
impl GuestProvider for Recording {
    fn name(&self) -> &'static str {
        "recording"
    }

    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError> {
        self.specs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(spec.clone());
        InProcessProvider.start(spec).await
    }
}

impl Recording {
    /// (writable, allow_bash) of each guest started so far.
    fn started(&self) -> Vec<(bool, bool)> {
        self.specs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|s| (s.writable, s.allow_bash))
            .collect()
    }
}

fn server(name: &str, python: &Path, placement: Placement) -> McpServerSpec {
    ServerConfig {
        command: Some(python.display().to_string()),
        args: vec!["server.py".to_owned()],
        // The server's own claim; it must not lift the lock.
        read_only: true,
        startup_timeout_sec: Some(10.0),
        enabled: true,
        sandbox: Some(placement),
        ..ServerConfig::default()
    }
    .to_spec(name)
    .expect("valid")
    .expect("enabled")
}

/// A Plan-mode session whose guests `recording` starts, with the test
/// server in its repository; two turns that answer at once.
async fn plan_session(recording: Arc<Recording>) -> Option<(Session, Arc<dyn Store>, TempDir)> {
    let python = support::python()?;
    let script = json!({"responses": [{"text": "looked"}, {"text": "done"}]});
    let (repo, store, model) = parts(&[], &script);
    std::fs::copy(support::fixture(), repo.path().join("server.py")).expect("copy the server");
    let mut config = config(
        repo.path(),
        store.clone(),
        model,
        Mode::Plan,
        Default::default(),
    );
    config.guests = recording;
    let mut session = Session::create(config).await.expect("session");
    session.add_mcp_servers([
        server("docs", &python, Placement::Guest),
        server("local", &python, Placement::Host),
    ]);
    Some((session, store, repo))
}

/// (name, ready) for each `mcp.server_ready` / `mcp.server_failed`, with
/// the failure's reason.
async fn server_events(
    store: &Arc<dyn Store>,
    session: &Session,
) -> Vec<(String, Result<(), String>)> {
    store
        .events(session.id(), 0)
        .await
        .expect("events")
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::McpServerReady { name, .. } => Some((name, Ok(()))),
            EventKind::McpServerFailed { name, reason } => Some((name, Err(reason))),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_start_under_the_modes_lock_and_restart_when_it_changes() {
    let recording = Arc::new(Recording::default());
    let Some((mut session, store, _repo)) = plan_session(recording.clone()).await else {
        return;
    };
    session
        .run_turn("look around", CancellationToken::new())
        .await
        .expect("turn");
    // Every guest of the Plan turn is read-only, the server's (which may
    // run its process) included.
    let planned = recording.started();
    assert!(
        planned.contains(&(false, true)),
        "no server guest: {planned:?}"
    );
    assert!(planned.iter().all(|(writable, _)| !writable), "{planned:?}");
    let events = server_events(&store, &session).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.contains(&("docs".to_owned(), Ok(()))), "{events:?}");
    assert!(
        events.iter().any(|(name, r)| name == "local"
            && r.as_ref()
                .is_err_and(|r| r.contains("not started in plan mode"))),
        "{events:?}"
    );

    session.set_mode(Mode::Agent).await.expect("mode");
    session
        .run_turn("now change it", CancellationToken::new())
        .await
        .expect("turn");
    let after: Vec<(bool, bool)> = recording.started()[planned.len()..].to_vec();
    assert!(after.contains(&(true, true)), "{after:?}");
    let events = server_events(&store, &session).await;
    let ready: Vec<&str> = events
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(n, _)| n.as_str())
        .collect();
    // `docs` again, in a writable guest; `local` at last, on the host.
    assert_eq!(ready, ["docs", "docs", "local"], "{events:?}");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_server_waiting_for_the_lock_is_recorded_once() {
    let recording = Arc::new(Recording::default());
    let Some((mut session, store, _repo)) = plan_session(recording).await else {
        return;
    };
    for prompt in ["look", "look again"] {
        session
            .run_turn(prompt, CancellationToken::new())
            .await
            .expect("turn");
    }
    let waits = server_events(&store, &session)
        .await
        .into_iter()
        .filter(|(name, r)| name == "local" && r.is_err())
        .count();
    assert_eq!(waits, 1);
    session.close().await;
}
