//! `cortex mcp list` and `cortex exec` sessions with the `mcp`-package test
//! server of `cortex-mcp`: started inside the local sandbox of the
//! repository (a write outside the workspace fails there), and a server
//! that fails to start. Records a skip (`cortex_testkit`) where the Python
//! server is not installed (`scripts/install-deps`).

mod common;

use common::{Env, json_lines};

#[path = "../../cortex-mcp/tests/support/mod.rs"]
mod support;
use support::{fixture, python};

/// A repository holding the test server, and a config with two servers:
/// `name` (its table ending with `extra`) and `broken`, which fails to
/// start; and the interpreter. `None` where the Python server is not
/// installed.
fn with_servers(name: &str, extra: &str) -> Option<(Env, std::path::PathBuf)> {
    let python = python()?;
    let env = Env::new(&[]);
    std::fs::copy(fixture(), env.repo.path().join("server.py")).expect("copy the server");
    let config = env.home.path().join("config/cortex");
    std::fs::create_dir_all(&config).expect("config dir");
    let shown = python.display();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[mcp_servers.{name}]\ncommand = \"{shown}\"\nargs = [\"server.py\"]\n{extra}\n\
             [mcp_servers.broken]\ncommand = \"{shown}\"\nargs = [\"server.py\", \"crash\"]\n"
        ),
    )
    .expect("config");
    Some((env, python))
}

#[test]
fn mcp_list_shows_each_server_its_state_and_tools() {
    let Some((env, python)) = with_servers("docs", "read_only = true\n") else {
        return;
    };
    let output = env
        .command()
        .args(["mcp", "list", "--json", "--repo"])
        .arg(env.repo.path())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("cannot create the guest's namespaces") {
        cortex_testkit::skip_current("userns", "user namespaces are not available here");
        return;
    }
    assert_eq!(output.status.code(), Some(1), "a server failed: {stderr}");
    let servers = json_lines(&output.stdout);
    let names: Vec<&str> = servers.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["broken", "docs"], "in name order");
    let broken = &servers[0];
    assert_eq!(broken["state"], "failed");
    let reason = broken["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("cannot open the index"),
        "its stderr: {reason}"
    );
    let docs = &servers[1];
    assert_eq!(docs["state"], "ready", "{docs}");
    assert_eq!(docs["read_only"], true);
    assert_eq!(
        docs["transport"],
        format!("stdio (guest): {} server.py", python.display())
    );
    let tools: Vec<&str> = docs["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    assert!(tools.contains(&"mcp__docs__add"), "{tools:?}");

    let human = env
        .command()
        .args(["mcp", "list", "--repo"])
        .arg(env.repo.path())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("docs  stdio (guest)"), "{text}");
    assert!(text.contains("    mcp__docs__echo"), "{text}");
    assert!(text.contains("failed: "), "{text}");
}

#[test]
fn exec_sessions_call_the_configured_servers_tools_in_the_sandbox() {
    let Some((env, _)) = with_servers("calc", "") else {
        return;
    };
    // Outside the workspace: the guest's sandbox must stop the server.
    let escape = env.home.path().join("escape.txt");
    let script = env.script(serde_json::json!({"responses": [
        {"tool_calls": [{"name": "mcp__calc__add", "arguments": {"a": 20, "b": 22}}]},
        {"tool_calls": [
            {"name": "mcp__calc__write_file",
             "arguments": {"path": escape.display().to_string(), "text": "out"}},
            {"name": "mcp__calc__write_file", "arguments": {"path": "inside.txt", "text": "in"}}
        ]},
        {"text": "42"}
    ]}));
    let output = env
        .exec(&script, &["--json"], "add 20 and 22")
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("cannot create the guest's namespaces") {
        cortex_testkit::skip_current("userns", "user namespaces are not available here");
        return;
    }
    assert!(output.status.success(), "{stderr}");
    let events = json_lines(&output.stdout);
    let failed: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "mcp.server_failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["payload"]["name"], "broken");
    let ready = events
        .iter()
        .find(|e| e["type"] == "mcp.server_ready")
        .expect("mcp.server_ready");
    assert_eq!(ready["payload"]["name"], "calc");
    let results: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "tool.result")
        .map(|e| &e["payload"])
        .collect();
    assert_eq!(results[0]["name"], "mcp__calc__add");
    assert_eq!(results[0]["status"], "ok", "{}", results[0]);
    assert_eq!(results[0]["output"], "42");
    // The write outside the workspace failed in the guest; the one inside
    // went through.
    assert_eq!(results[1]["status"], "error", "{}", results[1]);
    assert!(
        !escape.exists(),
        "nothing was written outside the workspace"
    );
    assert_eq!(results[2]["status"], "ok", "{}", results[2]);
    let inside = std::fs::read_to_string(env.repo.path().join("inside.txt")).expect("inside");
    assert_eq!(inside, "in");
}

/// A server that claims to only read is still held to Plan mode's lock:
/// its tools are offered there, but its guest has the workspace read-only,
/// so the write it was hiding fails and the repository is unchanged.
#[test]
fn plan_mode_holds_a_server_that_claims_to_only_read() {
    let Some((env, _)) = with_servers("calc", "read_only = true\n") else {
        return;
    };
    let script = env.script(serde_json::json!({"responses": [
        {"tool_calls": [{"name": "mcp__calc__write_file",
                         "arguments": {"path": "planted.txt", "text": "x"}}]},
        {"text": "looked"}
    ]}));
    let output = env
        .exec(&script, &["--json", "--mode", "plan"], "plan a change")
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("cannot create the guest's namespaces") {
        cortex_testkit::skip_current("userns", "user namespaces are not available here");
        return;
    }
    let events = json_lines(&output.stdout);
    let ready = events
        .iter()
        .any(|e| e["type"] == "mcp.server_ready" && e["payload"]["name"] == "calc");
    assert!(ready, "{events:?}");
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.result")
        .map(|e| &e["payload"])
        .expect("a tool.result");
    assert_eq!(result["name"], "mcp__calc__write_file");
    assert_eq!(result["status"], "error", "{result}");
    assert!(!env.repo.path().join("planted.txt").exists());
}
