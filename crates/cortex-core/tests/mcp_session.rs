//! MCP servers in a session's turns: the `mcp`-package test server of
//! `cortex-mcp` started by the session (stdio, through the session's guest
//! provider: the in-process one here), its tools offered by mode, called by
//! a scripted model through the gates, failures recorded as
//! `mcp.server_failed`. Skips with a printed reason where the Python server
//! is not installed (`scripts/install-deps`).

mod common;

#[path = "../../cortex-mcp/tests/support/mod.rs"]
mod support;

use common::*;
use cortex_core::{McpServerSpec, TurnOutcome};
use cortex_mcp::ServerConfig;
use cortex_protocol::{
    ApprovalDecision, ApprovalPolicy, Attachment, EventKind, Mode, Role, ToolStatus,
};
use serde_json::json;
use std::path::Path;
use tokio_util::sync::CancellationToken;

fn server(name: &str, python: &Path, args: &[&str], read_only: bool) -> McpServerSpec {
    let mut argv = vec!["server.py".to_owned()];
    argv.extend(args.iter().map(|a| a.to_string()));
    ServerConfig {
        command: Some(python.display().to_string()),
        args: argv,
        read_only,
        startup_timeout_sec: Some(5.0),
        enabled: true,
        ..ServerConfig::default()
    }
    .to_spec(name)
    .expect("valid")
    .expect("enabled")
}

/// A session in `mode` with the test server copied into its repository.
async fn with_server(
    mode: Mode,
    script: serde_json::Value,
) -> Option<(Harness, std::path::PathBuf)> {
    let python = support::python()?;
    let h = harness(&[], mode, script).await;
    std::fs::copy(support::fixture(), h.repo.path().join("server.py")).expect("copy the server");
    Some((h, python))
}

/// The names of the tools each model request offered.
fn offered(h: &Harness) -> Vec<Vec<String>> {
    h.model
        .requests()
        .iter()
        .map(|r| r.tools.iter().map(|t| t.name.clone()).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_are_offered_and_called_in_a_turn() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "mcp__py__add", "arguments": {"a": 2, "b": 3}}]},
        {"tool_calls": [{"name": "mcp__py__add", "arguments": {"a": "two"}}]},
        {"text": "2 + 3 = 5"}
    ]});
    let Some((mut h, python)) = with_server(Mode::Agent, script).await else {
        return;
    };
    h.session
        .add_mcp_servers([server("py", &python, &[], false)]);
    let outcome = h
        .session
        .run_turn("add 2 and 3", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    let events = h.events().await;
    let ready = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::McpServerReady { name, tools, .. } => Some((name.clone(), tools.clone())),
            _ => None,
        })
        .expect("mcp.server_ready");
    assert_eq!(ready.0, "py");
    assert!(ready.1.contains(&"mcp__py__add".to_owned()), "{ready:?}");
    // Offered beside the built-in tools, with the server's schema.
    let first = &h.model.requests()[0];
    let add = first
        .tools
        .iter()
        .find(|t| t.name == "mcp__py__add")
        .expect("offered");
    assert!(add.parameters["properties"]["a"].is_object(), "{add:?}");
    assert!(offered(&h)[0].contains(&"read_file".to_owned()));
    let results = h.results().await;
    assert_eq!(
        results[0],
        ("mcp__py__add".into(), ToolStatus::Ok, "5".into())
    );
    // Arguments the schema refuses are a tool error the model reads.
    assert_eq!(results[1].1, ToolStatus::Error);
    assert!(results[1].2.contains("mcp__py__add"), "{}", results[1].2);
    // The model read the result.
    let second = &h.model.requests()[1];
    let last = second.messages.last().expect("a message");
    assert_eq!((last.role, last.content.as_str()), (Role::Tool, "5"));
    h.session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_servers_are_reported_and_the_turn_goes_on() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "mcp__py__die", "arguments": {}}]},
        {"tool_calls": [
            {"name": "mcp__bad__add", "arguments": {"a": 1, "b": 1}},
            {"name": "mcp__py__add", "arguments": {"a": 1, "b": 1}},
            {"name": "read_file", "arguments": {"path": "server.py"}}
        ]},
        {"text": "done"}
    ]});
    let Some((mut h, python)) = with_server(Mode::Agent, script).await else {
        return;
    };
    h.session.add_mcp_servers([
        server("bad", &python, &["crash"], false),
        server("slow", &python, &["hang"], false),
        server("py", &python, &[], false),
    ]);
    let outcome = h
        .session
        .run_turn("try them", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    let failed: Vec<(String, String)> = h
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::McpServerFailed { name, reason } => Some((name, reason)),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = failed.iter().map(|(n, _)| n.as_str()).collect();
    // The crash and the hang at start-up; `py` after it died.
    assert_eq!(names, ["bad", "slow", "py"], "{failed:?}");
    assert!(failed[0].1.contains("cannot open the index"), "{failed:?}");
    // The failed servers' tools were never offered; `py`'s went with it.
    let offered = offered(&h);
    assert!(
        offered[0]
            .iter()
            .all(|t| !t.starts_with("mcp__bad__") && !t.starts_with("mcp__slow__"))
    );
    assert!(offered[0].contains(&"mcp__py__add".to_owned()));
    assert!(
        offered[1].iter().all(|t| !t.starts_with("mcp__")),
        "{:?}",
        offered[1]
    );
    let results = h.results().await;
    let statuses: Vec<_> = results.iter().map(|(n, s, _)| (n.as_str(), *s)).collect();
    assert_eq!(
        statuses,
        [
            ("mcp__py__die", ToolStatus::Error),
            ("mcp__bad__add", ToolStatus::Refused),
            ("mcp__py__add", ToolStatus::Refused),
            ("read_file", ToolStatus::Ok),
        ],
        "{results:#?}"
    );
    assert!(
        results[0].2.contains("no longer available"),
        "{}",
        results[0].2
    );
    assert!(results[1].2.contains("not available"), "{}", results[1].2);
    h.session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_mode_offers_only_read_only_servers() {
    let script = json!({"responses": [
        {"tool_calls": [
            {"name": "mcp__py__write_file", "arguments": {"path": "x.txt", "text": "x"}},
            {"name": "mcp__docs__echo", "arguments": {"text": "hi"}}
        ]},
        {"text": "done"}
    ]});
    let Some((mut h, python)) = with_server(Mode::Ask, script).await else {
        return;
    };
    h.session.add_mcp_servers([
        server("py", &python, &[], false),
        server("docs", &python, &[], true),
    ]);
    let outcome = h
        .session
        .run_turn("look", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    let offered = offered(&h);
    let mcp: Vec<&String> = offered[0]
        .iter()
        .filter(|t| t.starts_with("mcp__"))
        .collect();
    assert!(!mcp.is_empty());
    assert!(mcp.iter().all(|t| t.starts_with("mcp__docs__")), "{mcp:?}");
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Refused, "{results:?}");
    assert!(
        results[0].2.contains("not available in ask mode"),
        "{}",
        results[0].2
    );
    assert_eq!(
        results[1],
        ("mcp__docs__echo".into(), ToolStatus::Ok, "hi".into())
    );
    assert!(!h.repo.path().join("x.txt").exists());
    h.session.close().await;
}

/// Runs one turn of `script` with the `py` server under the `ask` policy,
/// answering its approval requests with `decisions` in order (and denying
/// any beyond them). The names of the calls asked about, and the results.
async fn approval_turn(
    script: serde_json::Value,
    decisions: &[ApprovalDecision],
) -> Option<(Harness, Vec<String>, Vec<(String, ToolStatus, String)>)> {
    let (mut h, python) = with_server(Mode::Agent, script).await?;
    h.session
        .add_mcp_servers([server("py", &python, &[], false)]);
    h.session
        .approvals()
        .set_policy(ApprovalPolicy::Ask)
        .await
        .expect("policy");
    let approvals = h.session.approvals().clone();
    let mut events = h.session.subscribe();
    let mut decisions: std::collections::VecDeque<ApprovalDecision> =
        decisions.iter().copied().collect();
    let answerer = tokio::spawn(async move {
        let mut asked = Vec::new();
        while let Ok(published) = events.recv().await {
            if let EventKind::ApprovalRequested { call_id, name, .. } = &published.event.kind {
                asked.push(name.clone());
                let decision = decisions.pop_front().unwrap_or(ApprovalDecision::Deny);
                approvals.answer(&call_id.0, decision).expect("answer");
            }
            if matches!(published.event.kind, EventKind::TurnCompleted { .. }) {
                break;
            }
        }
        asked
    });
    let outcome = h
        .session
        .run_turn("go", CancellationToken::new())
        .await
        .expect("turn");
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let asked = answerer.await.expect("answerer");
    let results = h.results().await;
    h.session.close().await;
    Some((h, asked, results))
}

fn add_then_done() -> serde_json::Value {
    json!({"responses": [
        {"tool_calls": [{"name": "mcp__py__add", "arguments": {"a": 2, "b": 3}}]},
        {"text": "done"}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_asks_for_approval_under_the_ask_policy() {
    let Some((_h, asked, results)) =
        approval_turn(add_then_done(), &[ApprovalDecision::Allow]).await
    else {
        return;
    };
    assert_eq!(asked, ["mcp__py__add"]);
    assert_eq!(
        results,
        [("mcp__py__add".into(), ToolStatus::Ok, "5".into())]
    );
    let Some((h, asked, results)) = approval_turn(add_then_done(), &[ApprovalDecision::Deny]).await
    else {
        return;
    };
    assert_eq!(asked, ["mcp__py__add"]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1, ToolStatus::Refused, "{results:?}");
    let types = h.types().await;
    let requested = types.iter().position(|t| *t == "approval.requested");
    let resolved = types.iter().position(|t| *t == "approval.resolved");
    assert!(requested.is_some() && requested < resolved, "{types:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_answer_covers_that_tool_of_that_server_only() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "mcp__py__add", "arguments": {"a": 2, "b": 3}}]},
        {"tool_calls": [{"name": "mcp__py__add", "arguments": {"a": 4, "b": 4}}]},
        {"tool_calls": [{"name": "mcp__py__echo", "arguments": {"text": "hi"}}]},
        {"text": "done"}
    ]});
    let Some((_h, asked, results)) = approval_turn(script, &[ApprovalDecision::Always]).await
    else {
        return;
    };
    // The second `add` ran under the new rule; `echo` was asked about (and
    // denied, the decisions having run out).
    assert_eq!(asked, ["mcp__py__add", "mcp__py__echo"]);
    let statuses: Vec<_> = results
        .iter()
        .map(|(n, s, o)| (n.as_str(), *s, o.as_str()))
        .collect();
    assert_eq!(statuses[0], ("mcp__py__add", ToolStatus::Ok, "5"));
    assert_eq!(statuses[1], ("mcp__py__add", ToolStatus::Ok, "8"));
    assert_eq!(statuses[2].1, ToolStatus::Refused, "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_servers_are_tools_of_a_session_and_images_are_attachments() {
    let script = json!({"responses": [
        {"tool_calls": [
            {"name": "mcp__web__add", "arguments": {"a": 20, "b": 22}},
            {"name": "mcp__web__pixel", "arguments": {}},
            {"name": "mcp__web__fail", "arguments": {"message": "no such ticket"}}
        ]},
        {"text": "42"}
    ]});
    let Some(python) = support::python() else {
        return;
    };
    let web = support::HttpServer::start(&python).await;
    let mut h = harness(&[], Mode::Agent, script).await;
    let spec = ServerConfig {
        url: Some(web.url.clone()),
        startup_timeout_sec: Some(10.0),
        enabled: true,
        ..ServerConfig::default()
    }
    .to_spec("web")
    .expect("valid")
    .expect("enabled");
    h.session.add_mcp_servers([spec]);
    let outcome = h
        .session
        .run_turn("add over http", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    assert!(offered(&h)[0].contains(&"mcp__web__add".to_owned()));
    let results = h.results().await;
    assert_eq!(
        results[0],
        ("mcp__web__add".into(), ToolStatus::Ok, "42".into())
    );
    // The result names the image; the image itself goes to the model as
    // an attachment of the tool message, which a text-only model reads as
    // a note.
    assert_eq!(results[1].1, ToolStatus::Ok);
    assert!(
        results[1].2.contains("[image 1: image/png]"),
        "{}",
        results[1].2
    );
    let second = &h.model.requests()[1];
    let pixel = second
        .messages
        .iter()
        .find(|m| m.role == Role::Tool && m.content.contains("[image 1"))
        .expect("the pixel's result");
    assert!(
        matches!(&pixel.attachments[..], [Attachment::Image { mime_type, data }]
            if mime_type == "image/png" && data.starts_with("iVBOR")),
        "{:?}",
        pixel.attachments
    );
    assert!(pixel.text_only_content().contains("not shown to you"));
    // The server's own error is a tool error the model reads.
    assert_eq!(results[2].1, ToolStatus::Error);
    assert!(results[2].2.contains("no such ticket"), "{}", results[2].2);
    h.session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_added_after_the_first_turn_starts_alone() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "mcp__py__add", "arguments": {"a": 1, "b": 2}}]},
        {"text": "3"},
        {"tool_calls": [
            {"name": "mcp__py__add", "arguments": {"a": 2, "b": 2}},
            {"name": "mcp__late__echo", "arguments": {"text": "late"}}
        ]},
        {"text": "done"}
    ]});
    let Some((mut h, python)) = with_server(Mode::Agent, script).await else {
        return;
    };
    let added = h
        .session
        .add_mcp_servers([server("py", &python, &[], false)]);
    assert_eq!(added, ["py"]);
    let outcome = h
        .session
        .run_turn("first", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    // A second server of a name the session has is left out; a new one is
    // added and starts with the next turn.
    let added = h.session.add_mcp_servers([
        server("py", &python, &["crash"], false),
        server("late", &python, &[], false),
    ]);
    assert_eq!(added, ["late"]);
    let outcome = h
        .session
        .run_turn("second", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 2 });
    let ready: Vec<String> = h
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::McpServerReady { name, .. } => Some(name),
            EventKind::McpServerFailed { name, .. } => Some(format!("{name} failed")),
            _ => None,
        })
        .collect();
    // `py` started once and kept running: it was not restarted for `late`.
    assert_eq!(ready, ["py", "late"]);
    let results = h.results().await;
    assert_eq!(
        results[1..],
        [
            ("mcp__py__add".into(), ToolStatus::Ok, "4".into()),
            ("mcp__late__echo".into(), ToolStatus::Ok, "late".into()),
        ]
    );
    h.session.close().await;
}
