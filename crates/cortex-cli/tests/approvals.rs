//! Approvals through `cortex exec` without a terminal: `--approval ask`
//! never waits (it behaves as `deny` and says so once), the default
//! (`auto`) runs the call, the deny list refuses in any policy, and
//! `cortex rules list` shows the (empty) rules of the local principal.

mod common;

use common::{Env, json_lines, run_ok};
use serde_json::{Value, json};
use std::process::Stdio;

fn refused(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "tool.refused")
        .map(|e| {
            e["payload"]["reason"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[test]
fn headless_ask_is_deny_said_once_and_auto_runs() {
    let env = Env::new(&[]);
    let script = json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch one.txt"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch two.txt"}}]},
        {"text": "tried"}
    ]});
    let mut cmd = env.exec(
        &env.script(script.clone()),
        &["--json", "--approval", "ask"],
        "go",
    );
    cmd.stdin(Stdio::null());
    let out = run_ok(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("behaves as --approval deny").count(),
        1,
        "{stderr}"
    );
    let events = json_lines(&out.stdout);
    assert!(events.iter().all(|e| e["type"] != "approval.requested"));
    let reasons = refused(&events);
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons.iter().all(|r| r.contains("`deny`")), "{reasons:?}");
    assert!(!env.repo.path().join("one.txt").exists());

    let mut cmd = env.exec(&env.script(script), &["--json"], "go");
    cmd.stdin(Stdio::null());
    let out = run_ok(cmd);
    assert!(refused(&json_lines(&out.stdout)).is_empty());
    assert!(env.repo.path().join("two.txt").exists());

    let mut list = env.command();
    list.args(["rules", "list"]);
    let out = run_ok(list);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "no rules");
}

#[test]
fn the_deny_list_refuses_under_auto() {
    let env = Env::new(&[]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo pwned > ~/.bashrc"}}]},
        {"text": "tried"}
    ]}));
    let mut cmd = env.exec(&script, &["--json"], "go");
    cmd.stdin(Stdio::null());
    let out = run_ok(cmd);
    let reasons = refused(&json_lines(&out.stdout));
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("deny list"), "{}", reasons[0]);
    assert!(!env.home.path().join(".bashrc").exists());
}
