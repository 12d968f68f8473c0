//! The harness against a guest agent that the model has taken over: a
//! process in the guest can reach the agent's pipes, so every frame may be
//! hostile. Each test runs a small Python agent that answers the start-up
//! requests honestly and then attacks on the first tool call.
//!
//! What must hold: the harness keeps at most its own caps of whatever the
//! agent sends, a broken frame or a silent agent ends that call with an
//! error that says why (never the harness), and the agent process is gone
//! afterwards.

mod common;

use common::{CallJson, WAIT, spec, wait_gone};
use cortex_protocol::{GuestReply, OutputStream, ToolName};
use cortex_runtime::{GuestProvider, ProcessProvider};
use serde_json::json;
use std::time::Duration;

/// An agent that answers every protocol request with `ok` and handles the
/// first tool call with `ATTACK` (Python, with `out(obj)` writing a frame,
/// `raw(bytes)` writing bytes and `rid` the call's id).
const AGENT: &str = r#"
import json, os, signal, sys
def raw(b):
    sys.stdout.buffer.write(b); sys.stdout.buffer.flush()
def out(obj):
    raw(json.dumps(obj).encode() + b"\n")
for line in sys.stdin:
    req = json.loads(line)
    rid = req["id"]
    if req["op"] != "tool":
        out({"id": rid, "type": "result", "status": "ok", "output": "{}"})
        continue
    ATTACK
"#;

fn hostile(attack: &str) -> ProcessProvider {
    let body = attack.trim().replace('\n', "\n    ");
    ProcessProvider {
        program: "python3".into(),
        args: vec!["-c".into(), AGENT.replace("ATTACK", &body)],
    }
}

#[tokio::test]
async fn a_flood_of_frames_is_kept_to_the_harness_caps() {
    // 64 MiB of streamed output in 1 MiB frames, frames for calls never
    // sent, then a 4 MiB result with a 4 MiB diff.
    let attack = r#"
chunk = "A" * (1 << 20)
for i in range(64):
    out({"id": rid, "type": "delta", "stream": "stdout", "text": chunk})
    out({"id": rid + 1000 + i, "type": "delta", "stream": "stdout", "text": chunk})
out({"id": rid, "type": "result", "status": "ok", "output": "B" * (4 << 20), "diff": "C" * (4 << 20)})
"#;
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = hostile(attack)
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    let mut call = guest
        .call_json(ToolName::ReadFile, json!({"path": "a"}))
        .await
        .expect("call");
    let (mut streamed, mut note, mut result) = (0, String::new(), None);
    while let Some(reply) = tokio::time::timeout(WAIT, call.next())
        .await
        .expect("replies in time")
    {
        match reply {
            GuestReply::Delta {
                stream: OutputStream::Stdout,
                text,
            } => streamed += text.len(),
            GuestReply::Delta { text, .. } => note.push_str(&text),
            GuestReply::Result(outcome) => result = Some(outcome),
        }
    }
    assert_eq!(streamed, cortex_tools::MAX_STREAMED_BYTES);
    let cut = (64 << 20) - cortex_tools::MAX_STREAMED_BYTES;
    assert!(note.contains(&format!("{cut} more bytes")), "{note}");
    let result = result.expect("a result");
    assert!(result.output.len() <= cortex_tools::MAX_OUTPUT_BYTES);
    assert!(result.diff.expect("a diff").len() <= cortex_tools::MAX_DIFF_BYTES);
    assert!(guest.is_alive(), "well-formed frames keep the connection");
    guest.ping().await.expect("still usable");
    guest.close().await;
}

#[tokio::test]
async fn broken_frames_end_the_call_with_the_reason_and_kill_the_agent() {
    let attacks = [
        (
            "a line that is not JSON",
            r#"raw(b"garbage\n")"#,
            "not a response",
        ),
        (
            "invalid UTF-8",
            r#"raw(b'{"id": %d, "type": "result", "status": "ok", "output": "\xff"}\n' % rid)"#,
            "not a response",
        ),
        (
            "a 17 MiB line",
            r#"raw(b"x" * (17 << 20) + b"\n")"#,
            "the limit is",
        ),
        (
            "a NUL byte",
            r#"raw(b'{"id": %d, "type": "result", "status": "ok",' % rid + b'\0}\n')"#,
            "not a response",
        ),
    ];
    for (what, attack, reason) in attacks {
        let dir = tempfile::tempdir().expect("tempdir");
        let guest = hostile(&format!("{attack}\nsys.stdin.readline()"))
            .start(&spec(dir.path(), false, false))
            .await
            .expect("start");
        let pid = guest.pid().expect("a pid") as i32;
        let mut call = guest
            .call_json(ToolName::ReadFile, json!({"path": "a"}))
            .await
            .expect("call");
        let reply = tokio::time::timeout(WAIT, call.next())
            .await
            .expect("an end in time");
        assert_eq!(reply, None, "{what}: the call ends without a result");
        let why = call.ended_because().expect("a reason");
        assert!(why.contains(reason), "{what}: {why}");
        assert!(!guest.is_alive(), "{what}");
        assert!(
            wait_gone(pid, Duration::from_secs(10)).await,
            "{what}: the agent {pid} still runs"
        );
        guest.close().await;
    }
}

#[tokio::test]
async fn an_agent_that_stops_itself_is_given_up_and_killed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = hostile("os.kill(os.getpid(), signal.SIGSTOP)")
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    let pid = guest.pid().expect("a pid") as i32;
    let mut call = guest
        .call_json(ToolName::ReadFile, json!({"path": "a"}))
        .await
        .expect("call");
    // The default heartbeat: a ping every 2 s, 10 s to answer.
    let reply = tokio::time::timeout(Duration::from_secs(60), call.next())
        .await
        .expect("the harness gives up in time");
    assert_eq!(reply, None);
    let why = call.ended_because().expect("a reason");
    assert!(why.contains("stopped answering"), "{why}");
    assert!(
        wait_gone(pid, Duration::from_secs(10)).await,
        "the stopped agent {pid} still exists"
    );
    guest.close().await;
}
