//! Shared by the ACP tests that drive the real `cortex acp` on stdio with
//! the `agent-client-protocol` crate's client side.
#![allow(dead_code)]

use crate::common::Env;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    InitializeRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification,
};
use agent_client_protocol::{
    Agent, ByteStreams, Client, on_receive_notification, on_receive_request,
};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// Each update as its wire JSON, in the order received.
pub type Updates = mpsc::UnboundedReceiver<Value>;

/// `cortex acp` with the scripted model; `extra` arguments after it.
pub fn acp(env: &Env, script: &Path, extra: &[&str]) -> tokio::process::Child {
    let mut cmd = env.command();
    cmd.arg("acp")
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    cmd.spawn().expect("spawn cortex acp")
}

/// Drive a fresh `cortex acp --approval auto` with `body` on a connected,
/// initialized client; then close its stdin and check that it exits
/// cleanly.
pub async fn with_agent<F>(env: &Env, script: Value, body: F)
where
    F: AsyncFnOnce(ConnectionTo<Agent>, Updates) -> agent_client_protocol::Result<()>
        + Send
        + 'static,
{
    with_agent_answering(
        env,
        script,
        &["--approval", "auto"],
        Permissions::default(),
        body,
    )
    .await
}

/// The editor's side of permission requests: the option ids it answers
/// with, in order (cancelled once they run out), and each request it got
/// as its wire JSON.
#[derive(Clone, Default)]
pub struct Permissions {
    answers: Arc<Mutex<VecDeque<&'static str>>>,
    /// Each request the editor got, as its wire JSON.
    pub asked: Arc<Mutex<Vec<Value>>>,
}

impl Permissions {
    pub fn answering(answers: &[&'static str]) -> Permissions {
        Permissions {
            answers: Arc::new(Mutex::new(answers.iter().copied().collect())),
            asked: Arc::default(),
        }
    }

    pub fn answer(&self, request: &RequestPermissionRequest) -> RequestPermissionResponse {
        self.asked
            .lock()
            .expect("lock")
            .push(serde_json::to_value(request).expect("request json"));
        let outcome = match self.answers.lock().expect("lock").pop_front() {
            Some(id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
            None => RequestPermissionOutcome::Cancelled,
        };
        RequestPermissionResponse::new(outcome)
    }
}

/// [`with_agent`] with `extra` arguments for `cortex acp`, answering its
/// permission requests from `permissions`.
pub async fn with_agent_answering<F>(
    env: &Env,
    script: Value,
    extra: &[&str],
    permissions: Permissions,
    body: F,
) where
    F: AsyncFnOnce(ConnectionTo<Agent>, Updates) -> agent_client_protocol::Result<()>
        + Send
        + 'static,
{
    let script = env.script(script);
    let mut child = acp(env, &script, extra);
    let stdin = child.stdin.take().expect("stdin").compat_write();
    let stdout = child.stdout.take().expect("stdout").compat();
    let (tx, rx) = mpsc::unbounded_channel();
    Client
        .v1()
        .name("test-editor")
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                responder.respond(permissions.answer(&request))
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |note: SessionNotification, _cx| {
                let update = serde_json::to_value(&note.update).expect("update json");
                let _ = tx.send(update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(ByteStreams::new(stdin, stdout), async move |cx| {
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            assert_eq!(init.protocol_version, ProtocolVersion::V1);
            let capabilities = serde_json::to_value(&init.agent_capabilities).expect("json");
            assert_eq!(capabilities["loadSession"], true, "{capabilities}");
            body(cx, rx).await
        })
        .await
        .expect("the ACP conversation");
    // The connection is closed: the agent stops its server and exits.
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
