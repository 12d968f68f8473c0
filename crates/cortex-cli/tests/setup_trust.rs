//! `.cortex/setup` through the real CLI and guest: a committed script runs,
//! and whatever it left running in the background is gone before the model's
//! first command.

mod common;

use common::{Env, json_lines, run_ok};
use serde_json::json;
use std::process::Command;

#[test]
fn a_committed_setup_runs_and_its_background_processes_end_with_it() {
    let env = Env::new(&[]);
    let repo = env.repo.path();
    std::fs::create_dir_all(repo.join(".cortex")).expect("mkdir");
    std::fs::write(
        repo.join(".cortex/setup"),
        "sleep 300 >/dev/null 2>&1 &\necho $! > /tmp/setup.pid\necho setup ran\n",
    )
    .expect("setup");
    let status = Command::new("bash")
        .args(["-c", "git init -q && git add -A && git commit -qm setup"])
        .current_dir(repo)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .expect("git");
    assert!(status.success());
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command":
            "pid=$(cat /tmp/setup.pid); if kill -0 \"$pid\" 2>/dev/null; then echo ALIVE; else echo GONE; fi"}}]},
        {"text": "checked"}
    ]}));
    let out = run_ok(env.exec(&script, &["--json", "--mode", "agent"], "check"));
    let events = json_lines(&out.stdout);
    let setup: String = events
        .iter()
        .filter(|e| e["type"] == "env.output")
        .filter_map(|e| e["payload"]["text"].as_str())
        .collect();
    assert!(setup.contains("setup ran"), "{events:?}");
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.result")
        .expect("tool result");
    let output = result["payload"]["output"].as_str().unwrap_or_default();
    assert!(
        output.contains("GONE"),
        "the setup's background process survived: {output}"
    );
}

#[test]
fn an_uncommitted_setup_is_skipped_with_the_reason() {
    let env = Env::new(&[]);
    let repo = env.repo.path();
    let status = Command::new("bash")
        .args(["-c", "git init -q && git commit -q --allow-empty -m empty"])
        .current_dir(repo)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .expect("git");
    assert!(status.success());
    std::fs::create_dir_all(repo.join(".cortex")).expect("mkdir");
    std::fs::write(repo.join(".cortex/setup"), "echo planted ran\n").expect("setup");
    let script = env.script(json!({"responses": [{"text": "ok"}]}));
    let out = run_ok(env.exec(&script, &["--mode", "ask"], "hi"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("setup skipped: it is not committed in HEAD"),
        "{stderr}"
    );
    assert!(!stderr.contains("planted ran"), "{stderr}");
}
