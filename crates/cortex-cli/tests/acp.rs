//! `cortex acp` as an editor runs it: the real binary on stdio, driven by
//! the `agent-client-protocol` crate's client side, a scripted model, the
//! real guest.

mod common;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest,
    SessionNotification, SetSessionModeRequest, StopReason,
};
use agent_client_protocol::{ByteStreams, Client, on_receive_notification};
use common::Env;
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// Each update as its wire JSON, in the order received.
type Updates = mpsc::UnboundedReceiver<Value>;

fn acp(env: &Env, script: &std::path::Path) -> tokio::process::Child {
    let mut cmd = env.command();
    cmd.arg("acp")
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    cmd.spawn().expect("spawn cortex acp")
}

/// Drive `cortex acp` with `body` on a connected, initialized client.
async fn with_agent<F>(env: &Env, script: Value, body: F)
where
    F: AsyncFnOnce(
            agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
            Updates,
        ) -> agent_client_protocol::Result<()>
        + Send
        + 'static,
{
    let script = env.script(script);
    let mut child = acp(env, &script);
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
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            assert_eq!(init.protocol_version, ProtocolVersion::V1);
            let capabilities = serde_json::to_value(&init.agent_capabilities).expect("json");
            assert_eq!(
                capabilities["loadSession"], false,
                "load is not yet supported"
            );
            body(cx, rx).await
        })
        .await
        .expect("the ACP conversation");
    drop(child);
}

fn drain(updates: &mut Updates) -> Vec<Value> {
    let mut all = Vec::new();
    while let Ok(update) = updates.try_recv() {
        all.push(update);
    }
    all
}

fn text(prompt: &str) -> Vec<ContentBlock> {
    vec![ContentBlock::from(prompt)]
}

#[tokio::test]
async fn a_prompt_streams_chunks_and_an_edit_with_its_diff() {
    let env = Env::new(&[("calc.py", "def add(a, b):\n    return a - b\n")]);
    let repo = env.repo.path().canonicalize().expect("repo");
    let script = json!({"responses": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"text": "Fixing.", "tool_calls": [{"name": "edit_file", "arguments":
            {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}]},
        {"text": "Fixed the sign."}
    ]});
    let check_repo = repo.clone();
    with_agent(&env, script, async move |cx, mut updates| {
        let session = cx
            .send_request(NewSessionRequest::new(repo))
            .block_task()
            .await?;
        let modes = serde_json::to_value(&session.modes).expect("json");
        assert_eq!(modes["currentModeId"], "agent");
        assert_eq!(modes["availableModes"].as_array().map(Vec::len), Some(4));
        let answer = cx
            .send_request(PromptRequest::new(
                session.session_id.clone(),
                text("fix calc.py"),
            ))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, StopReason::EndTurn);

        let updates = drain(&mut updates);
        let kinds: Vec<&str> = updates
            .iter()
            .filter_map(|u| u["sessionUpdate"].as_str())
            .collect();
        let message: String = updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str())
            .collect();
        assert_eq!(message, "Reading.Fixing.Fixed the sign.", "{kinds:?}");
        let calls: Vec<&Value> = updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "tool_call")
            .collect();
        assert_eq!(calls.len(), 2, "{kinds:?}");
        assert_eq!(calls[0]["kind"], "read");
        assert_eq!(calls[1]["kind"], "edit");
        // Pending is the default, which the wire leaves out.
        assert!(calls[1].get("status").is_none(), "{:?}", calls[1]);
        let edit_id = &calls[1]["toolCallId"];
        let position = |pred: &dyn Fn(&Value) -> bool| updates.iter().position(pred);
        let call_at =
            position(&|u| u["sessionUpdate"] == "tool_call" && &u["toolCallId"] == edit_id);
        let done_at = position(&|u| {
            u["sessionUpdate"] == "tool_call_update"
                && &u["toolCallId"] == edit_id
                && u["status"] == "completed"
        });
        assert!(call_at < done_at, "pending before completed: {kinds:?}");
        let done = &updates[done_at.expect("edit completed")];
        assert_eq!(done["content"][0]["type"], "diff");
        assert_eq!(done["content"][0]["path"], "calc.py");
        assert_eq!(done["content"][0]["oldText"], "a - b");
        assert_eq!(done["content"][0]["newText"], "a + b");
        Ok(())
    })
    .await;
    let fixed = std::fs::read_to_string(check_repo.join("calc.py")).expect("read");
    assert!(fixed.contains("a + b"), "{fixed}");
}

#[tokio::test]
async fn cancel_mid_bash_answers_cancelled_and_ask_mode_refuses_an_edit() {
    let env = Env::new(&[("notes.txt", "alpha\n")]);
    let repo = env.repo.path().canonicalize().expect("repo");
    let script = json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 600"}}]},
        {"text": "Writing.", "tool_calls": [{"name": "write_file", "arguments":
            {"path": "notes.txt", "content": "pwned\n"}}]},
        {"text": "Could not write."}
    ]});
    let check_repo = repo.clone();
    with_agent(&env, script, async move |cx, mut updates| {
        let session = cx
            .send_request(NewSessionRequest::new(repo))
            .block_task()
            .await?;
        let id = session.session_id.clone();
        let prompt = cx
            .send_request(PromptRequest::new(id.clone(), text("run it")))
            .block_task();
        let cancel = async {
            while let Some(update) = updates.recv().await {
                if update["sessionUpdate"] == "tool_call" && update["kind"] == "execute" {
                    cx.send_notification(CancelNotification::new(id.clone()))?;
                    break;
                }
            }
            Ok::<(), agent_client_protocol::Error>(())
        };
        let (answer, cancelled) = tokio::join!(prompt, cancel);
        cancelled?;
        assert_eq!(answer?.stop_reason, StopReason::Cancelled);

        cx.send_request(SetSessionModeRequest::new(id.clone(), "ask"))
            .block_task()
            .await?;
        drain(&mut updates);
        let answer = cx
            .send_request(PromptRequest::new(id.clone(), text("overwrite notes")))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        let updates = drain(&mut updates);
        let failed = updates
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed");
        assert!(failed, "the write failed in ask mode: {updates:?}");
        let bad_mode = cx
            .send_request(SetSessionModeRequest::new(id, "yolo"))
            .block_task()
            .await;
        let error = bad_mode.expect_err("unknown mode");
        assert!(error.message.contains("yolo"), "{error:?}");
        Ok(())
    })
    .await;
    let notes = std::fs::read_to_string(check_repo.join("notes.txt")).expect("read");
    assert_eq!(notes, "alpha\n", "nothing written in ask mode");
}
