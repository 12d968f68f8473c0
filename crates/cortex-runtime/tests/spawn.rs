//! Long-lived processes in a guest (`spawn` and `input`, what a stdio MCP
//! server runs on), through the in-process provider: lines in and out, the
//! result at exit, `stop_call` killing it, and refusal without `bash`.

mod common;

use common::spec;
use cortex_protocol::{GuestReply, OutputStream};
use cortex_runtime::{CallHandle, GuestProvider, InProcessProvider};
use std::collections::BTreeMap;

async fn next_line(handle: &mut CallHandle) -> (OutputStream, String) {
    match handle.next().await {
        Some(GuestReply::Delta { stream, text }) => (stream, text),
        other => panic!("expected a line, got {other:?}"),
    }
}

async fn result(handle: &mut CallHandle) -> cortex_protocol::ToolOutcome {
    loop {
        match handle.next().await {
            Some(GuestReply::Result(outcome)) => return outcome,
            Some(GuestReply::Delta { .. }) => {}
            None => panic!("the guest ended without a result"),
        }
    }
}

#[tokio::test]
async fn a_spawned_process_echoes_input_lines_and_reports_its_exit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = InProcessProvider
        .start(&spec(dir.path(), true, true))
        .await
        .expect("start");
    let env = BTreeMap::from([("GREETING".to_owned(), "hi".to_owned())]);
    let script = "echo \"$GREETING from $PWD\"; echo oops >&2; \
                  while read -r line; do [ \"$line\" = quit ] && exit 3; echo \"got $line\"; done";
    let mut process = guest
        .spawn("sh".into(), vec!["-c".into(), script.into()], env)
        .await
        .expect("spawn");
    let workspace = dir.path().canonicalize().expect("canonical");
    assert_eq!(
        next_line(&mut process).await,
        (
            OutputStream::Stdout,
            format!("hi from {}", workspace.display())
        )
    );
    assert_eq!(
        next_line(&mut process).await,
        (OutputStream::Stderr, "oops".into())
    );
    guest
        .input(process.id(), "one".into())
        .await
        .expect("input");
    guest
        .input(process.id(), "two".into())
        .await
        .expect("input");
    assert_eq!(next_line(&mut process).await.1, "got one");
    assert_eq!(next_line(&mut process).await.1, "got two");
    guest
        .input(process.id(), "quit".into())
        .await
        .expect("input");
    let end = result(&mut process).await;
    assert!(!end.is_ok(), "{end:?}");
    assert_eq!(end.exit_code, Some(3));
    let after = guest.input(process.id(), "late".into()).await;
    assert!(after.is_err(), "no process reads it any more");
    guest.close().await;
}

#[tokio::test]
async fn stop_call_kills_a_spawned_process_and_read_only_guests_refuse_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guest = InProcessProvider
        .start(&spec(dir.path(), true, true))
        .await
        .expect("start");
    let mut process = guest
        .spawn(
            "sh".into(),
            vec!["-c".into(), "echo up; sleep 600".into()],
            BTreeMap::new(),
        )
        .await
        .expect("spawn");
    assert_eq!(next_line(&mut process).await.1, "up");
    guest.stop_call(process.id()).await.expect("stop");
    let end = result(&mut process).await;
    assert!(end.is_stopped(), "{end:?}");
    guest.close().await;

    let read_only = InProcessProvider
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    let mut refused = read_only
        .spawn(
            "sh".into(),
            vec!["-c".into(), "echo no".into()],
            BTreeMap::new(),
        )
        .await
        .expect("sent");
    let end = result(&mut refused).await;
    assert!(
        !end.is_ok() && end.output.contains("may not run commands"),
        "{end:?}"
    );
    read_only.close().await;
}
