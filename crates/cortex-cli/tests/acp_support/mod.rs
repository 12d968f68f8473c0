//! Shared by the ACP tests that drive the real `cortex acp` on stdio with
//! the `agent-client-protocol` crate's client side.
#![allow(dead_code)]

use crate::common::Env;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{InitializeRequest, SessionNotification};
use agent_client_protocol::{Agent, ByteStreams, Client, on_receive_notification};
use serde_json::Value;
use std::process::Stdio;
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

pub type Updates = mpsc::UnboundedReceiver<Value>;

/// Drive a fresh `cortex acp --approval auto` with `body`; then close its
/// stdin and check that it exits cleanly.
pub async fn with_agent<F>(env: &Env, script: Value, body: F)
where
    F: AsyncFnOnce(ConnectionTo<Agent>, Updates) -> agent_client_protocol::Result<()>
        + Send
        + 'static,
{
    let script = env.script(script);
    let mut cmd = env.command();
    cmd.arg("acp")
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .args(["--approval", "auto"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let mut child = cmd.spawn().expect("spawn cortex acp");
    let stdin = child.stdin.take().expect("stdin").compat_write();
    let stdout = child.stdout.take().expect("stdout").compat();
    let (tx, rx) = mpsc::unbounded_channel();
    Client
        .v1()
        .name("test-editor")
        .on_receive_notification(
            async move |note: SessionNotification, _cx| {
                let update = serde_json::to_value(&note.update).expect("update json");
                let _ = tx.send(update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(ByteStreams::new(stdin, stdout), async move |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            body(cx, rx).await
        })
        .await
        .expect("the ACP conversation");
    let status = child.wait().await.expect("wait");
    assert!(status.success(), "{status:?}");
}

/// The next update of kind `kind`, waiting for it (at most ten seconds);
/// the updates before it are dropped.
pub async fn next_of(updates: &mut Updates, kind: &str) -> Value {
    let wait = async {
        while let Some(update) = updates.recv().await {
            if update["sessionUpdate"] == kind {
                return update;
            }
        }
        panic!("the agent closed before a {kind}");
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("no {kind} within ten seconds"))
}
