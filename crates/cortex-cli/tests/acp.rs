//! `cortex acp` as an editor runs it: the real binary on stdio, driven by
//! the `agent-client-protocol` crate's client side (or by raw JSON-RPC
//! lines), a scripted model, the real sandboxed guest.

mod acp_support;
mod common;

use acp_support::{Permissions, Updates, acp, with_agent, with_agent_answering};
use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, HttpHeader, LoadSessionRequest, McpServer, McpServerHttp,
    McpServerStdio, NewSessionRequest, PromptRequest, SessionId, SetSessionModeRequest, StopReason,
};
use common::Env;

#[path = "../../cortex-mcp/tests/support/mod.rs"]
mod support;
use serde_json::{Value, json};
use std::path::PathBuf;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

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

fn kinds(updates: &[Value]) -> Vec<String> {
    updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn message(updates: &[Value], kind: &str) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

/// The updates of the call of `kind` (`read`, `edit`, `execute`): its
/// `tool_call` first, then its `tool_call_update`s, in order.
fn call_of<'a>(updates: &'a [Value], kind: &str) -> Vec<&'a Value> {
    let Some(call) = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["kind"] == kind)
    else {
        return Vec::new();
    };
    updates
        .iter()
        .filter(|u| u["toolCallId"] == call["toolCallId"])
        .collect()
}

const CALC: &str = "def add(a, b):\n    return a - b\n";
const TEST: &str =
    "grep -q 'a + b' calc.py && echo 'test passed' || { echo 'test failed'; exit 1; }\n";

fn fix_script() -> Value {
    json!({"responses": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"text": "Fixing.", "tool_calls": [{"name": "edit_file", "arguments":
            {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}]},
        {"text": "Testing.", "tool_calls": [{"name": "bash", "arguments": {"command": "sh test.sh"}}]},
        {"text": "Fixed the sign."}
    ]})
}

/// The updates of one prompt that reads, edits and runs the test, checked;
/// returns the session's id.
async fn fix_calc(cx: &ConnectionTo<Agent>, updates: &mut Updates, repo: PathBuf) -> SessionId {
    let session = cx
        .send_request(NewSessionRequest::new(repo.clone()))
        .block_task()
        .await
        .expect("session/new");
    let modes = serde_json::to_value(&session.modes).expect("json");
    assert_eq!(modes["currentModeId"], "agent");
    assert_eq!(modes["availableModes"].as_array().map(Vec::len), Some(4));
    let answer = cx
        .send_request(PromptRequest::new(
            session.session_id.clone(),
            text("fix calc.py"),
        ))
        .block_task()
        .await
        .expect("session/prompt");
    assert_eq!(answer.stop_reason, StopReason::EndTurn);

    let updates = drain(updates);
    let kinds = kinds(&updates);
    assert_eq!(
        message(&updates, "agent_message_chunk"),
        "Reading.Fixing.Testing.Fixed the sign.",
        "{kinds:?}"
    );
    assert!(!kinds.contains(&"user_message_chunk".to_owned()), "live");

    let read = call_of(&updates, "read");
    assert_eq!(read.len(), 2, "{read:?}");
    assert_eq!(read[1]["status"], "completed");

    // The edit: pending (the default, which the wire leaves out), then
    // completed with the diff, at the absolute path.
    let edit = call_of(&updates, "edit");
    assert_eq!(edit.len(), 2, "{edit:?}");
    assert!(edit[0].get("status").is_none(), "pending: {:?}", edit[0]);
    let path = repo.join("calc.py").display().to_string();
    assert_eq!(edit[0]["locations"][0]["path"], path.as_str());
    assert_eq!(edit[1]["status"], "completed");
    let diff = &edit[1]["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["path"], path.as_str());
    assert_eq!(diff["oldText"], "a - b");
    assert_eq!(diff["newText"], "a + b");

    // The test run: pending, in progress with its first output, completed
    // with what it printed.
    let run = call_of(&updates, "execute");
    let statuses: Vec<&Value> = run.iter().map(|u| &u["status"]).collect();
    assert_eq!(
        statuses,
        [&Value::Null, &json!("in_progress"), &json!("completed")]
    );
    assert_eq!(run[0]["title"], "bash: sh test.sh");
    let output = run[2]["content"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(output.contains("test passed"), "{output}");
    session.session_id
}

#[tokio::test]
async fn a_prompt_streams_chunks_calls_and_the_edit_diff_then_load_replays_it() {
    let env = Env::new(&[("calc.py", CALC), ("test.sh", TEST)]);
    let repo = env.repo.path().canonicalize().expect("repo");
    let (id_tx, id_rx) = tokio::sync::oneshot::channel();
    let first_repo = repo.clone();
    with_agent(&env, fix_script(), async move |cx, mut updates| {
        let id = fix_calc(&cx, &mut updates, first_repo).await;
        let _ = id_tx.send(id);
        Ok(())
    })
    .await;
    let fixed = std::fs::read_to_string(repo.join("calc.py")).expect("read");
    assert!(fixed.contains("a + b"), "{fixed}");

    // Another editor process loads the stored session: the history comes
    // back as updates, the user's message included, before the answer.
    let id = id_rx.await.expect("the session's id");
    let again = json!({"responses": [{"text": "Still fixed."}]});
    with_agent(&env, again, async move |cx, mut updates| {
        let loaded = cx
            .send_request(LoadSessionRequest::new(id.clone(), repo.clone()))
            .block_task()
            .await?;
        let modes = serde_json::to_value(&loaded.modes).expect("json");
        assert_eq!(modes["currentModeId"], "agent");
        let replay = drain(&mut updates);
        assert_eq!(message(&replay, "user_message_chunk"), "fix calc.py");
        assert_eq!(
            message(&replay, "agent_message_chunk"),
            "Reading.Fixing.Testing.Fixed the sign."
        );
        let edit = call_of(&replay, "edit");
        assert_eq!(edit.len(), 2, "{replay:?}");
        assert_eq!(edit[1]["content"][0]["newText"], "a + b");
        // The loaded session goes on, without sending the history again.
        let answer = cx
            .send_request(PromptRequest::new(id, text("is it fixed?")))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        let next = drain(&mut updates);
        assert_eq!(message(&next, "agent_message_chunk"), "Still fixed.");
        assert!(call_of(&next, "edit").is_empty(), "{next:?}");
        Ok(())
    })
    .await;
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(cmdline);
        }
    }
    found
}

#[tokio::test]
async fn cancel_mid_bash_answers_cancelled_and_ask_mode_refuses_an_edit() {
    let env = Env::new(&[("notes.txt", "alpha\n")]);
    let repo = env.repo.path().canonicalize().expect("repo");
    // A duration no other process uses, to find what is left running.
    let marker = format!("{}", 700_000 + std::process::id() % 100_000);
    let script = json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments":
            {"command": format!("echo started; sleep {marker}")}}]},
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
            // Cancel once the command runs (its output arrived).
            while let Some(update) = updates.recv().await {
                if update["status"] == "in_progress" {
                    cx.send_notification(CancelNotification::new(id.clone()))?;
                    break;
                }
            }
            Ok::<(), agent_client_protocol::Error>(())
        };
        let (answer, cancelled) = tokio::join!(prompt, cancel);
        cancelled?;
        assert_eq!(answer?.stop_reason, StopReason::Cancelled);
        assert_eq!(processes_with(&format!("sleep {marker}")), Vec::<String>::new());
        let stopped = drain(&mut updates);
        assert!(
            stopped.iter().any(|u| u["status"] == "failed"),
            "the interrupted call is finished: {stopped:?}"
        );

        cx.send_request(SetSessionModeRequest::new(id.clone(), "ask"))
            .block_task()
            .await?;
        let answer = cx
            .send_request(PromptRequest::new(id.clone(), text("overwrite notes")))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        let updates = drain(&mut updates);
        assert!(
            updates
                .iter()
                .any(|u| u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "ask"),
            "{updates:?}"
        );
        let write = call_of(&updates, "edit");
        assert_eq!(write.len(), 2, "{updates:?}");
        assert_eq!(write[1]["status"], "failed");
        assert!(write[1]["content"][0].get("type") != Some(&json!("diff")));
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

#[tokio::test]
async fn approvals_in_ask_policy_are_the_editors_permission_requests() {
    let env = Env::new(&[]);
    let repo = env.repo.path().canonicalize().expect("repo");
    let script = json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo yes > allowed.txt"}}]},
        {"text": "Wrote it."},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo no > rejected.txt"}}]},
        {"text": "Could not."}
    ]});
    let permissions = Permissions::answering(&["allow-once", "reject-once"]);
    let asked = permissions.asked.clone();
    // No `--approval`: `ask` is the default.
    with_agent_answering(
        &env,
        script,
        &[],
        permissions,
        async move |cx, mut updates| {
            let session = cx
                .send_request(NewSessionRequest::new(repo))
                .block_task()
                .await?;
            let id = session.session_id.clone();
            for prompt in ["write allowed.txt", "write rejected.txt"] {
                let answer = cx
                    .send_request(PromptRequest::new(id.clone(), text(prompt)))
                    .block_task()
                    .await?;
                assert_eq!(answer.stop_reason, StopReason::EndTurn);
            }
            let updates = drain(&mut updates);
            let runs: Vec<&Value> = updates
                .iter()
                .filter(|u| u["sessionUpdate"] == "tool_call_update" && u.get("status").is_some())
                .map(|u| &u["status"])
                .collect();
            assert_eq!(runs.last(), Some(&&json!("failed")), "{updates:?}");
            Ok(())
        },
    )
    .await;
    let asked = asked.lock().expect("lock").clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    let options: Vec<(&str, &str)> = asked[0]["options"]
        .as_array()
        .expect("options")
        .iter()
        .map(|o| {
            (
                o["optionId"].as_str().unwrap_or_default(),
                o["kind"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        options,
        [
            ("allow-once", "allow_once"),
            ("allow-always", "allow_always"),
            ("reject-once", "reject_once")
        ]
    );
    let title = asked[0]["toolCall"]["title"].as_str().unwrap_or_default();
    assert!(title.contains("allowed.txt"), "{title}");
    let written = std::fs::read_to_string(env.repo.path().join("allowed.txt")).expect("allowed");
    assert_eq!(written, "yes\n");
    assert!(
        !env.repo.path().join("rejected.txt").exists(),
        "the rejected command did not run"
    );
}

#[tokio::test]
async fn the_editors_mcp_servers_are_tools_of_the_new_session() {
    let Some(python) = support::python() else {
        return;
    };
    let env = Env::new(&[]);
    std::fs::copy(support::fixture(), env.repo.path().join("server.py")).expect("copy the server");
    let repo = env.repo.path().canonicalize().expect("repo");
    let script = json!({"responses": [
        {"tool_calls": [{"name": "mcp__editor_calc__add", "arguments": {"a": 2, "b": 40}}]},
        {"text": "42"}
    ]});
    // The closure may run on another thread, which has another name.
    let test = cortex_testkit::current_test();
    with_agent(&env, script, async move |cx, mut updates| {
        // The editor's name has a space: it is made a valid server name.
        let server = McpServerStdio::new("editor calc", python).args(vec!["server.py".into()]);
        let session = cx
            .send_request(NewSessionRequest::new(repo).mcp_servers(vec![McpServer::Stdio(server)]))
            .block_task()
            .await?;
        let answer = cx
            .send_request(PromptRequest::new(session.session_id, text("add")))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        let updates = drain(&mut updates);
        let done = updates
            .iter()
            .find(|u| u["sessionUpdate"] == "tool_call_update" && u.get("status").is_some())
            .expect("the call's result");
        if done["status"] == "failed"
            && done
                .to_string()
                .contains("cannot create the guest's namespaces")
        {
            cortex_testkit::skip(&test, "userns", "user namespaces are not available here");
            return Ok(());
        }
        assert_eq!(done["status"], "completed", "{updates:?}");
        assert_eq!(done["content"][0]["content"]["text"], "42", "{done}");
        Ok(())
    })
    .await;
}

/// The status and first text of the first finished tool call in `updates`;
/// `None` (the skip recorded for `test`) where the sandbox cannot run here.
fn finished_call(test: &str, updates: &[Value]) -> Option<(String, String)> {
    let done = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u.get("status").is_some())
        .expect("the call's result");
    if done
        .to_string()
        .contains("cannot create the guest's namespaces")
    {
        cortex_testkit::skip(test, "userns", "user namespaces are not available here");
        return None;
    }
    let text = done["content"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    Some((
        done["status"].as_str().unwrap_or_default().to_owned(),
        text.to_owned(),
    ))
}

#[tokio::test]
async fn the_editors_http_servers_and_those_given_at_load_are_tools_of_the_session() {
    let Some(python) = support::python() else {
        return;
    };
    let web = support::HttpServer::start(&python).await;
    let env = Env::new(&[]);
    std::fs::copy(support::fixture(), env.repo.path().join("server.py")).expect("copy the server");
    let repo = env.repo.path().canonicalize().expect("repo");
    let http = |url: &str| {
        McpServer::Http(
            McpServerHttp::new("web", url)
                .headers(vec![HttpHeader::new("X-Editor", "test-editor")]),
        )
    };
    let (id_tx, id_rx) = tokio::sync::oneshot::channel();
    let script = json!({"responses": [
        {"tool_calls": [{"name": "mcp__web__add", "arguments": {"a": 20, "b": 22}}]},
        {"text": "42"}
    ]});
    let (first_repo, url) = (repo.clone(), web.url.clone());
    // The closures may run on another thread, which has another name.
    let test = cortex_testkit::current_test();
    let first_test = test.clone();
    with_agent(&env, script, async move |cx, mut updates| {
        let session = cx
            .send_request(NewSessionRequest::new(first_repo).mcp_servers(vec![http(&url)]))
            .block_task()
            .await?;
        let answer = cx
            .send_request(PromptRequest::new(session.session_id.clone(), text("add")))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        let updates = drain(&mut updates);
        let done = finished_call(&first_test, &updates).expect("an HTTP server needs no sandbox");
        assert_eq!(done, ("completed".into(), "42".into()), "{updates:?}");
        let _ = id_tx.send(session.session_id);
        Ok(())
    })
    .await;

    // Another editor process loads the session and hands over its servers
    // again (a loaded session starts with the configured ones only): they
    // are added to it, a stdio one too.
    let id = id_rx.await.expect("the session's id");
    let script = json!({"responses": [
        // An id of its own: this process's script counts from 1 again.
        {"tool_calls": [{"id": "echo_1", "name": "mcp__calc__echo", "arguments": {"text": "loaded"}}]},
        {"text": "done"}
    ]});
    let url = web.url.clone();
    with_agent(&env, script, async move |cx, mut updates| {
        let stdio = McpServerStdio::new("calc", python).args(vec!["server.py".into()]);
        cx.send_request(
            LoadSessionRequest::new(id.clone(), repo)
                .mcp_servers(vec![McpServer::Stdio(stdio), http(&url)]),
        )
        .block_task()
        .await?;
        drain(&mut updates);
        let answer = cx
            .send_request(PromptRequest::new(id, text("echo")))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        let updates = drain(&mut updates);
        let Some(done) = finished_call(&test, &updates) else {
            return Ok(());
        };
        assert_eq!(done, ("completed".into(), "loaded".into()), "{updates:?}");
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn the_providers_length_limit_and_refusal_are_stop_reasons() {
    let env = Env::new(&[]);
    let repo = env.repo.path().canonicalize().expect("repo");
    let script = json!({"responses": [
        // Cut, retried once by the harness, cut again: the turn ends cut.
        {"text": "The answer is cut", "finish": "length"},
        {"text": "The answer is cut again", "finish": "length"},
        {"refusal": "I can't help with that."},
        {"text": "Fine."}
    ]});
    with_agent(&env, script, async move |cx, _updates| {
        let session = cx
            .send_request(NewSessionRequest::new(repo))
            .block_task()
            .await?;
        let id = session.session_id;
        let mut reasons = Vec::new();
        for prompt in ["long", "forbidden", "plain"] {
            let answer = cx
                .send_request(PromptRequest::new(id.clone(), text(prompt)))
                .block_task()
                .await?;
            reasons.push(answer.stop_reason);
        }
        assert_eq!(
            reasons,
            [
                StopReason::MaxTokens,
                StopReason::Refusal,
                StopReason::EndTurn
            ]
        );
        Ok(())
    })
    .await;
}

/// Send one raw line, read the next frame the agent writes.
async fn exchange(
    stdin: &mut tokio::process::ChildStdin,
    stdout: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    line: &str,
) -> Value {
    stdin.write_all(line.as_bytes()).await.expect("write");
    stdin.write_all(b"\n").await.expect("write");
    let frame = stdout.next_line().await.expect("read").expect("a frame");
    serde_json::from_str(&frame).unwrap_or_else(|e| panic!("not JSON ({e}): {frame}"))
}

#[tokio::test]
async fn raw_frames_negotiate_v1_and_bad_requests_are_json_rpc_errors() {
    let env = Env::new(&[]);
    let script = env.script(json!({"responses": [{"text": "unused"}]}));
    let mut child = acp(&env, &script, &[]);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();

    // A newer version than the agent speaks is answered with version 1.
    let init = exchange(
        &mut stdin,
        &mut stdout,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7,"clientCapabilities":{}}}"#,
    )
    .await;
    assert_eq!(init["id"], 1);
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], 1, "{init}");
    assert_eq!(result["agentCapabilities"]["loadSession"], true);
    let prompts = &result["agentCapabilities"]["promptCapabilities"];
    assert_eq!(prompts["embeddedContext"], true, "{init}");
    assert_eq!(prompts["image"], true, "{init}");
    let mcp = &result["agentCapabilities"]["mcpCapabilities"];
    assert_eq!((&mcp["http"], &mcp["sse"]), (&json!(true), &json!(false)));
    assert_eq!(result["agentInfo"]["name"], "cortex");

    let relative = exchange(
        &mut stdin,
        &mut stdout,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"not/absolute","mcpServers":[]}}"#,
    )
    .await;
    assert_eq!(relative["id"], 2);
    assert_eq!(relative["error"]["code"], -32602, "{relative}");
    assert!(
        relative["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("absolute")),
        "{relative}"
    );

    let unknown = exchange(
        &mut stdin,
        &mut stdout,
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}"#,
    )
    .await;
    assert_eq!(unknown["id"], 3);
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no session `nope`")),
        "{unknown}"
    );

    let missing = exchange(
        &mut stdin,
        &mut stdout,
        r#"{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"0000","cwd":"/tmp","mcpServers":[]}}"#,
    )
    .await;
    assert_eq!(missing["id"], 4);
    assert!(missing["error"]["message"].is_string(), "{missing}");

    // The editor hangs up: the agent exits, having written nothing else.
    drop(stdin);
    let status = child.wait().await.expect("wait");
    assert!(status.success(), "{status:?}");
    while let Some(frame) = stdout.next_line().await.expect("read") {
        let value: Value = serde_json::from_str(&frame).expect("only JSON-RPC frames");
        assert_eq!(value["jsonrpc"], "2.0", "{frame}");
    }
}

/// The next update of kind `kind`, waiting for it (at most ten seconds);
/// the updates before it are dropped.
async fn next_of(updates: &mut Updates, kind: &str) -> Value {
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

#[tokio::test]
async fn the_sessions_commands_are_advertised_and_a_slash_prompt_runs_one() {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let commands = env.repo.path().join(".cortex/commands");
    std::fs::create_dir_all(&commands).expect("mkdir");
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: Review a file\nargument-hint: <file> <focus>\n---\nReview @$1 for $2.\n",
    )
    .expect("write");
    let repo = env.repo.path().canonicalize().expect("repo");
    let script = json!({"responses": [{"text": "Reviewed."}]});
    with_agent(&env, script, async move |cx, mut updates| {
        let session = cx
            .send_request(NewSessionRequest::new(repo.clone()))
            .block_task()
            .await?;
        let advertised = next_of(&mut updates, "available_commands_update").await;
        // The session's own, then the built-in `rewind` (`acp_rewind.rs`).
        assert_eq!(
            advertised["availableCommands"][0],
            json!({"name": "review", "description": "Review a file",
                   "input": {"hint": "<file> <focus>"}})
        );
        assert_eq!(advertised["availableCommands"][1]["name"], "rewind");
        assert_eq!(
            advertised["availableCommands"].as_array().map(Vec::len),
            Some(2)
        );
        let answer = cx
            .send_request(PromptRequest::new(
                session.session_id.clone(),
                text("/review a.txt 'the style'"),
            ))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        assert_eq!(
            message(&drain(&mut updates), "agent_message_chunk"),
            "Reviewed."
        );
        // What the turn's message was: the command's text, arguments
        // substituted (a load replays it); the included file went to the
        // model as the turn's context, read in the guest.
        cx.send_request(LoadSessionRequest::new(session.session_id, repo.clone()))
            .block_task()
            .await?;
        let replay = drain(&mut updates);
        assert_eq!(
            message(&replay, "user_message_chunk"),
            "Review @a.txt for the style."
        );
        // A load advertises them again, after its answer.
        if !kinds(&replay).contains(&"available_commands_update".to_owned()) {
            next_of(&mut updates, "available_commands_update").await;
        }
        Ok(())
    })
    .await;
}
