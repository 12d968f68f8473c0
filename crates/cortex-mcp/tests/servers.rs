//! Real MCP servers, started by the tests: a small server written with the
//! `mcp` PyPI package (over stdio and streamable HTTP) and, where node is
//! present, `@modelcontextprotocol/server-everything`. Each test records a
//! skip when its server is not installed (`scripts/install-deps` installs
//! both under /opt/cortex-test); one that is installed and does not start
//! fails.
//!
//! These run the servers on the host (`HostLauncher`); the same servers
//! inside the guest are covered by `cortex-core`'s MCP tests.

use cortex_mcp::{
    Called, HostLauncher, Launchers, Lookup, McpHub, Notice, ServerConfig, ServerSpec,
    specs_from_config,
};
use cortex_protocol::Mode;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

mod support;
use support::{fixture, python, server_everything};

fn stdio(python: &Path, args: &[&str]) -> ServerConfig {
    let mut all = vec![fixture().display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    ServerConfig {
        command: Some(python.display().to_string()),
        args: all,
        enabled: true,
        ..ServerConfig::default()
    }
}

fn specs(servers: Vec<(&str, ServerConfig)>) -> Vec<ServerSpec> {
    let map: BTreeMap<String, ServerConfig> = servers
        .into_iter()
        .map(|(name, config)| (name.to_owned(), config))
        .collect();
    specs_from_config(&map).expect("valid config")
}

async fn start(specs: &[ServerSpec]) -> (McpHub, Vec<Notice>) {
    let host = HostLauncher {
        cwd: std::env::temp_dir(),
    };
    McpHub::start(
        specs,
        Launchers {
            guest: None,
            host: &host,
        },
    )
    .await
}

fn host(config: ServerConfig) -> ServerConfig {
    ServerConfig {
        sandbox: Some(cortex_mcp::Placement::Host),
        ..config
    }
}

async fn call(hub: &McpHub, name: &str, args: serde_json::Value) -> Called {
    let Lookup::Tool { tool, .. } = hub.lookup(name) else {
        panic!("{name} is not a tool of a ready server");
    };
    let args = tool.parse_args(&args.to_string()).expect("valid arguments");
    hub.call(&tool, args, &CancellationToken::new()).await
}

fn text(called: Called) -> String {
    match called {
        Called::Output(out) => {
            assert!(!out.is_error, "{}", out.text);
            out.text
        }
        other => panic!("not an output: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_tools_are_listed_checked_and_called() {
    let Some(python) = python() else { return };
    let (hub, notices) = start(&specs(vec![("py", host(stdio(&python, &[])))])).await;
    let Notice::Ready { tools, .. } = &notices[0] else {
        panic!("{notices:?}");
    };
    for expected in [
        "mcp__py__add",
        "mcp__py__echo",
        "mcp__py__pixel",
        "mcp__py__fail",
    ] {
        assert!(
            tools.iter().any(|t| t == expected),
            "{expected} in {tools:?}"
        );
    }
    let offered = hub.offered(Mode::Agent);
    let add = offered
        .iter()
        .find(|s| s.name == "mcp__py__add")
        .expect("add");
    assert_eq!(add.parameters["required"], json!(["a", "b"]));
    assert_eq!(add.description, "Add two integers.");

    assert!(text(call(&hub, "mcp__py__add", json!({"a": 2, "b": 3})).await).contains('5'));
    assert_eq!(
        text(call(&hub, "mcp__py__echo", json!({"text": "héllo"})).await),
        "héllo"
    );
    match call(&hub, "mcp__py__pixel", json!({})).await {
        Called::Output(out) => {
            assert_eq!(out.images.len(), 1);
            assert_eq!(out.images[0].mime_type, "image/png");
            assert!(out.text.contains("[image 1: image/png]"), "{}", out.text);
        }
        other => panic!("{other:?}"),
    }
    match call(
        &hub,
        "mcp__py__fail",
        json!({"message": "the index is stale"}),
    )
    .await
    {
        Called::Output(out) => {
            assert!(out.is_error);
            assert!(out.text.contains("the index is stale"), "{}", out.text);
        }
        other => panic!("{other:?}"),
    }
    // The schema the model was offered is the one its calls are checked by.
    let Lookup::Tool { tool, read_only } = hub.lookup("mcp__py__add") else {
        panic!("add");
    };
    assert!(!read_only);
    let err = tool
        .parse_args(r#"{"a": "two", "b": 3}"#)
        .expect_err("a string is not an integer");
    assert!(err.to_string().contains("mcp__py__add"), "{err}");
    assert!(matches!(hub.lookup("mcp__py__nope"), Lookup::Unknown));
    assert!(matches!(hub.lookup("mcp__other__add"), Lookup::Unknown));
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_to_start_is_reported_with_its_reason() {
    let Some(python) = python() else { return };
    let missing = ServerConfig {
        command: Some("/nonexistent/mcp-server".into()),
        enabled: true,
        sandbox: Some(cortex_mcp::Placement::Host),
        ..ServerConfig::default()
    };
    let (hub, notices) = start(&specs(vec![
        ("crash", host(stdio(&python, &["crash"]))),
        ("missing", missing),
        ("ok", host(stdio(&python, &[]))),
    ]))
    .await;
    let reason = |name: &str| {
        notices
            .iter()
            .find_map(|n| match n {
                Notice::Failed { name: n, reason } if n == name => Some(reason.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{name} did not fail: {notices:?}"))
    };
    let crash = reason("crash");
    assert!(crash.contains("exited with status 3"), "{crash}");
    assert!(crash.contains("cannot open the index"), "{crash}");
    assert!(reason("missing").contains("/nonexistent/mcp-server"));
    // The others go on.
    assert!(
        hub.offered(Mode::Agent)
            .iter()
            .any(|t| t.name == "mcp__ok__add")
    );
    assert!(matches!(
        hub.lookup("mcp__crash__add"),
        Lookup::Unavailable { .. }
    ));
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_at_start_times_out() {
    let Some(python) = python() else { return };
    let hang = ServerConfig {
        startup_timeout_sec: Some(1.0),
        ..host(stdio(&python, &["hang"]))
    };
    let (hub, notices) = start(&specs(vec![("hang", hang)])).await;
    assert!(
        matches!(&notices[0], Notice::Failed { reason, .. } if reason.contains("did not start within")),
        "{notices:?}"
    );
    assert!(hub.offered(Mode::Agent).is_empty());
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_hangs_or_a_server_that_dies_fails_the_server_only() {
    let Some(python) = python() else { return };
    let slow = ServerConfig {
        tool_timeout_sec: Some(1.0),
        ..host(stdio(&python, &[]))
    };
    let (hub, _) = start(&specs(vec![
        ("slow", slow),
        ("dies", host(stdio(&python, &[]))),
    ]))
    .await;
    match call(&hub, "mcp__slow__sleep", json!({"seconds": 60})).await {
        Called::Failed { message, notice } => {
            assert!(message.contains("hung"), "{message}");
            assert!(matches!(notice, Notice::Failed { name, .. } if name == "slow"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        hub.lookup("mcp__slow__add"),
        Lookup::Unavailable { .. }
    ));
    match call(&hub, "mcp__dies__die", json!({})).await {
        Called::Failed { message, .. } => {
            assert!(message.contains("exited with status 7"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        hub.offered(Mode::Agent).is_empty(),
        "both servers' tools are gone"
    );
    assert!(hub.check().is_empty(), "already reported");
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_between_calls_is_noticed() {
    let Some(python) = python() else { return };
    let (hub, _) = start(&specs(vec![("py", host(stdio(&python, &[])))])).await;
    // The call answers, then the process exits on its own (as an OOM kill
    // would end it between two calls).
    assert_eq!(
        text(call(&hub, "mcp__py__die_soon", json!({})).await),
        "bye"
    );
    let mut notices = Vec::new();
    for _ in 0..600 {
        notices = hub.check();
        if !notices.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        matches!(&notices[..], [Notice::Failed { name, reason }] if name == "py" && reason.contains("status 9")),
        "{notices:?}"
    );
    assert!(hub.offered(Mode::Agent).is_empty());
    assert!(matches!(
        hub.lookup("mcp__py__add"),
        Lookup::Unavailable { .. }
    ));
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_modes_offer_only_read_only_servers() {
    let Some(python) = python() else { return };
    let docs = ServerConfig {
        read_only: true,
        ..host(stdio(&python, &[]))
    };
    let (hub, _) = start(&specs(vec![
        ("docs", docs),
        ("tools", host(stdio(&python, &[]))),
    ]))
    .await;
    for mode in [Mode::Ask, Mode::Plan, Mode::Spec] {
        let names: Vec<String> = hub.offered(mode).into_iter().map(|s| s.name).collect();
        assert!(
            names.iter().any(|n| n == "mcp__docs__add"),
            "{mode}: {names:?}"
        );
        assert!(
            !names.iter().any(|n| n.starts_with("mcp__tools__")),
            "{mode}: {names:?}"
        );
    }
    let agent: Vec<String> = hub
        .offered(Mode::Agent)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(agent.iter().any(|n| n.starts_with("mcp__tools__")));
    assert!(agent.iter().any(|n| n.starts_with("mcp__docs__")));
    let Lookup::Tool { read_only, .. } = hub.lookup("mcp__tools__add") else {
        panic!("add");
    };
    assert!(!read_only, "the dispatcher's mode gate reads this");
    hub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_servers_are_listed_and_called() {
    let Some(python) = python() else { return };
    let server = support::HttpServer::start(&python).await;
    let http = ServerConfig {
        url: Some(server.url.clone()),
        enabled: true,
        ..ServerConfig::default()
    };
    let token_missing = ServerConfig {
        url: Some(server.url.clone()),
        bearer_token_env_var: Some("CORTEX_TEST_UNSET_TOKEN_VARIABLE".into()),
        enabled: true,
        ..ServerConfig::default()
    };
    let (hub, notices) = start(&specs(vec![("web", http), ("nokey", token_missing)])).await;
    assert!(
        notices
            .iter()
            .any(|n| matches!(n, Notice::Failed { name, reason }
            if name == "nokey" && reason.contains("CORTEX_TEST_UNSET_TOKEN_VARIABLE"))),
        "{notices:?}"
    );
    assert!(text(call(&hub, "mcp__web__add", json!({"a": 40, "b": 2})).await).contains("42"));
    match call(&hub, "mcp__web__fail", json!({"message": "over http"})).await {
        Called::Output(out) => assert!(out.is_error && out.text.contains("over http")),
        other => panic!("{other:?}"),
    }
    hub.close().await;
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio() {
    let Some((node, script)) = server_everything() else {
        return;
    };
    let config = ServerConfig {
        command: Some(node.display().to_string()),
        args: vec![script.display().to_string(), "stdio".into()],
        sandbox: Some(cortex_mcp::Placement::Host),
        enabled: true,
        ..ServerConfig::default()
    };
    let (hub, notices) = start(&specs(vec![("every", config)])).await;
    assert!(matches!(&notices[0], Notice::Ready { .. }), "{notices:?}");
    // Its tools use dashes; the qualified names keep them.
    assert!(text(call(&hub, "mcp__every__get-sum", json!({"a": 2, "b": 40})).await).contains("42"));
    assert_eq!(
        text(call(&hub, "mcp__every__echo", json!({"message": "hi"})).await),
        "Echo: hi"
    );
    match call(&hub, "mcp__every__get-tiny-image", json!({})).await {
        Called::Output(out) => assert!(!out.images.is_empty(), "{}", out.text),
        other => panic!("{other:?}"),
    }
    hub.close().await;
}
