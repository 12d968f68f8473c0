//! Background commands (`bash` with `background: true`, `bash_output`,
//! `bash_kill`) end to end: scripted model, the in-process guest, real
//! processes on the host's loopback.
//!
//! The in-process guest is the real agent (`cortex_guest::serve`) over a
//! pipe, so what it covers is the whole path but the sandbox: the spawn in
//! a process group of its own, Stop sparing background processes
//! (`Running::cancel`), the kill of the group, the drain into the capped
//! buffer, the events, the context and the mode's lock. What only the
//! sandbox does (its namespace-wide kill on Stop sparing background groups)
//! is covered by `cortex-cli/tests/background.rs` through `cortex exec`.

mod common;

use common::*;
use cortex_protocol::{EventKind, Mode, ProcessInfo, ToolStatus};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A server on a free loopback port that writes the port to `port` once
/// it listens and prints each path it serves before answering it.
const SERVER: &str = r#"import http.server, os
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print("served " + self.path, flush=True)
        body = b"hello from the background\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open("port.tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename("port.tmp", "port")
print("listening", flush=True)
server.serve_forever()
"#;

/// A later `bash` call's fetch of `path` from the server: waits for the
/// port file (the command's own loop, not the test's clock), then uses
/// python's urllib, as `curl` may be missing.
fn fetch(path: &str) -> serde_json::Value {
    let command = format!(
        "for i in $(seq 200); do [ -s port ] && break; sleep 0.05; done; \
         python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:' + open('port').read() + '{path}').read().decode(), end='')\""
    );
    json!({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]})
}

fn call(name: &str, arguments: serde_json::Value) -> serde_json::Value {
    json!({"tool_calls": [{"name": name, "arguments": arguments}]})
}

fn python3() -> bool {
    let found = std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        cortex_testkit::skip_current("python3", "python3 is not installed");
    }
    found
}

/// Wait until `done` holds of the session's only process (the condition,
/// not a duration, is what the test checks; the deadline only turns a hang
/// into a failure).
async fn until(h: &Harness, what: &str, done: impl Fn(&ProcessInfo) -> bool) -> ProcessInfo {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let list = h.session.background().list();
        if let Some(process) = list.first().filter(|p| done(p)) {
            return process.clone();
        }
        assert!(Instant::now() < deadline, "{what}: {list:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn turn(h: &mut Harness, prompt: &str) {
    let outcome = h
        .session
        .run_turn(prompt, CancellationToken::new())
        .await
        .expect("turn");
    assert!(
        matches!(outcome, cortex_core::TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
}

/// The pid a command wrote to `file` in the workspace.
async fn pid_in(h: &Harness, file: &str) -> i32 {
    let path = h.repo.path().join(file);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(pid) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {file}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pid_alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !pid_alive(pid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_server_is_reached_read_and_killed_with_its_children() {
    if !python3() {
        return;
    }
    let start = "sleep 1000 & echo $! > child.pid; exec python3 -u server.py";
    let script = json!({"responses": [
        call("bash", json!({"command": start, "background": true})),
        fetch("/a"),
        {"text": "started"},
        call("bash_output", json!({"id": "bg1"})),
        fetch("/b"),
        {"text": "read"},
        call("bash_output", json!({"id": "bg1"})),
        call("bash_kill", json!({"id": "bg1"})),
        call("bash_output", json!({"id": "bg1"})),
        {"text": "killed"},
    ]});
    let mut h = harness(&[("server.py", SERVER)], Mode::Agent, script).await;
    turn(&mut h, "start the server").await;
    let child = pid_in(&h, "child.pid").await;
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Ok, "{results:?}");
    assert!(
        results[0].2.starts_with("Started in the background as bg1"),
        "{results:?}"
    );
    // A later call reached the server on loopback.
    assert!(
        results[1].2.starts_with("hello from the background\n"),
        "{results:?}"
    );
    // "listening\n" and "served /a\n" have reached the buffer.
    until(&h, "the first request's line", |p| p.output_bytes >= 20).await;

    turn(&mut h, "read it").await;
    until(&h, "the second request's line", |p| p.output_bytes >= 30).await;
    turn(&mut h, "kill it").await;
    let results = h.results().await;
    let (first_read, second_read) = (&results[2].2, &results[4].2);
    assert!(first_read.starts_with("bg1 is running"), "{first_read}");
    assert!(first_read.contains("served /a\n"), "{first_read}");
    // Only what is new since the last read.
    assert!(second_read.contains("served /b\n"), "{second_read}");
    assert!(!second_read.contains("served /a"), "{second_read}");
    assert!(!second_read.contains("listening"), "{second_read}");
    assert_eq!(
        results[5].2, "bg1 was killed, with everything it started.",
        "{results:?}"
    );
    let after = &results[6].2;
    assert!(
        after.starts_with("bg1 has ended: killed by bash_kill"),
        "{after}"
    );
    // The server's child, in its process group, went with it.
    assert!(gone(child).await, "the child {child} survived bash_kill");
    let list = h.session.background().list();
    assert_eq!(list.len(), 1);
    assert!(!list[0].running);
    assert_eq!(list[0].ended.as_deref(), Some("killed by bash_kill"));
    let ended: Vec<_> = h
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::ProcessStarted { id, command } => Some(format!("started {id} {command}")),
            EventKind::ProcessEnded { id, reason, .. } => Some(format!("ended {id} {reason}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        ended,
        [
            format!("started bg1 {start}"),
            "ended bg1 killed by bash_kill".to_owned()
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_turn_leaves_it_running_and_closing_the_session_ends_it() {
    let script = json!({"responses": [
        call("bash", json!({"command": "echo $$ > bg.pid; exec sleep 1000", "background": true})),
        call("bash", json!({"command": "echo $$ > fg.pid; echo running; sleep 1000"})),
        {"text": "never reached"},
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    let mut live = h.session.subscribe();
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    // Stop once the foreground command runs.
    let watcher = tokio::spawn(async move {
        while let Ok(event) = live.recv().await {
            if let EventKind::ToolOutputDelta { text, .. } = &event.kind
                && text.contains("running")
            {
                stopper.cancel();
                return;
            }
        }
    });
    let outcome = h.session.run_turn("serve", cancel).await.expect("turn");
    watcher.await.expect("watcher");
    assert!(
        matches!(outcome, cortex_core::TurnOutcome::Stopped { .. }),
        "{outcome:?}"
    );
    let (bg, fg) = (pid_in(&h, "bg.pid").await, pid_in(&h, "fg.pid").await);
    assert!(gone(fg).await, "the foreground command {fg} survived Stop");
    assert!(
        pid_alive(bg),
        "the background command {bg} did not survive Stop"
    );
    let list = h.session.background().list();
    assert!(list[0].running, "{list:?}");

    h.session.close().await;
    assert!(
        gone(bg).await,
        "the background command {bg} survived the close"
    );
    let list = h.session.background().list();
    assert_eq!(
        list[0].ended.as_deref(),
        Some("killed: the session closed"),
        "{list:?}"
    );
    let types = h.types().await;
    assert_eq!(types.last(), Some(&"process.ended"), "{types:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_mode_offers_no_background_command_and_refuses_a_forced_one() {
    let script = json!({"responses": [
        call("bash", json!({"command": "echo $$ > bg.pid; exec sleep 1000", "background": true})),
        call("bash_output", json!({"id": "bg1"})),
        call("bash_kill", json!({"id": "bg1"})),
        {"text": "could not"},
    ]});
    let mut h = harness(&[], Mode::Ask, script).await;
    turn(&mut h, "start a server").await;
    for request in h.model.requests() {
        let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        for tool in ["bash", "bash_output", "bash_kill"] {
            assert!(!names.contains(&tool), "{tool} offered in Ask: {names:?}");
        }
    }
    let results = h.results().await;
    assert_eq!(results.len(), 3);
    for (name, status, output) in &results {
        assert_eq!(*status, ToolStatus::Refused, "{name}: {output}");
        assert!(output.contains("not available in ask mode"), "{output}");
    }
    assert!(h.session.background().list().is_empty());
    assert!(!h.repo.path().join("bg.pid").exists());
    assert!(!h.types().await.contains(&"process.started"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_turn_lists_the_running_command_and_offers_reading_it() {
    let script = json!({"responses": [
        call("bash_output", json!({"id": "bg1"})),
        call("bash", json!({"command": "exec sleep 1000", "background": true})),
        {"text": "started"},
        {"text": "still there"},
    ]});
    let mut h = harness(&[("a.txt", "a\n")], Mode::Agent, script).await;
    turn(&mut h, "start it").await;
    turn(&mut h, "is it there?").await;
    let requests = h.model.requests();
    let offers = |i: usize, tool: &str| requests[i].tools.iter().any(|t| t.name == tool);
    // Not offered before there is one; a forced call says how to start one.
    assert!(!offers(0, "bash_output") && !offers(0, "bash_kill"));
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Refused);
    assert!(results[0].2.contains("background: true"), "{results:?}");
    assert!(offers(2, "bash_output") && offers(2, "bash_kill"));
    let contexts: Vec<String> = h
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::TurnContext { text } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(contexts.len(), 2, "{contexts:?}");
    assert!(!contexts[0].contains("Background"), "{}", contexts[0]);
    assert!(
        contexts[1].contains("Background commands still running"),
        "{}",
        contexts[1]
    );
    assert!(
        contexts[1].contains("- bg1, running ") && contexts[1].contains(": exec sleep 1000"),
        "{}",
        contexts[1]
    );
    // Changing to a read-only mode closes the guest, and the command with it.
    h.session.set_mode(Mode::Ask).await.expect("mode");
    let list = h.session.background().list();
    assert_eq!(
        list[0].ended.as_deref(),
        Some("killed: the session changed to ask mode"),
        "{list:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_judge_a_background_command_as_any_bash_command() {
    let script = json!({"responses": [
        call("bash", json!({"command": "echo $$ > bg.pid; exec sleep 1000", "background": true})),
        {"text": "refused"},
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    h.session
        .approvals()
        .set_policy(cortex_protocol::ApprovalPolicy::Deny)
        .await
        .expect("policy");
    turn(&mut h, "start it").await;
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Refused, "{results:?}");
    assert!(results[0].2.contains("`deny`"), "{results:?}");
    assert!(h.session.background().list().is_empty());
    assert!(!h.repo.path().join("bg.pid").exists());
}
