//! A repository's hooks through the CLI and the real sandboxed guest (issue
//! 40, item 4): a hook file runs only after `cortex hooks trust`, and then
//! in the guest: a hook that tries to write a canary on the host cannot,
//! and in Ask mode it cannot write the workspace either (the mode's lock
//! holds for it). `cortex hooks list` says which files are trusted, and
//! `trust` without a terminal needs `--yes`.

mod common;

use common::{Env, json_lines, run, run_ok};
use serde_json::{Value, json};

fn write(root: &std::path::Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn listed(env: &Env) -> Value {
    let mut cmd = env.command();
    cmd.args(["hooks", "list", "--json", "--repo"])
        .arg(env.repo.path());
    let out = run_ok(cmd);
    serde_json::from_slice(&out.stdout).expect("json")
}

fn exec(env: &Env, mode: &str, responses: Value) -> Vec<Value> {
    let script = env.script(json!({ "responses": responses }));
    let out = run_ok(env.exec(
        &script,
        &["--json", "--approval", "auto", "--mode", mode],
        "Go.",
    ));
    json_lines(&out.stdout)
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[test]
fn a_repository_hook_runs_in_the_guest_only_once_trusted() {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let canary = env.home.path().join("canary");
    let refuse = format!(
        "cat >/dev/null; touch '{}' 2>/dev/null; echo 'the repository refuses bash' >&2; exit 2",
        canary.display()
    );
    let prompt = "cat >/dev/null; if echo x > hooked.txt 2>/dev/null; \
        then echo 'the hook wrote the workspace'; \
        else echo 'the workspace is read-only for the hook'; fi";
    let hooks = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": refuse}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": prompt}]}],
    }});
    write(env.repo.path(), ".cortex/hooks.json", &hooks.to_string());
    let bash_turn = || {
        json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo ran"}}]},
            {"text": "Done."}
        ])
    };

    // Untrusted: said once, nothing of it runs.
    let events = exec(&env, "agent", bash_turn());
    let untrusted = of_type(&events, "hooks.untrusted");
    assert_eq!(untrusted.len(), 1, "{events:?}");
    assert_eq!(untrusted[0]["payload"]["file"], ".cortex/hooks.json");
    assert_eq!(untrusted[0]["payload"]["hooks"], 2);
    assert!(of_type(&events, "hook.ran").is_empty());
    assert_eq!(
        of_type(&events, "tool.result")[0]["payload"]["status"],
        "ok"
    );
    assert!(!env.repo.path().join("hooked.txt").exists());
    assert_eq!(listed(&env)["repository"]["files"][0]["trusted"], false);

    // Trusting needs a terminal or --yes.
    let mut cmd = env.command();
    cmd.args(["hooks", "trust", "--repo"]).arg(env.repo.path());
    let out = run(cmd);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    let mut cmd = env.command();
    cmd.args(["hooks", "trust", "--yes", "--repo"])
        .arg(env.repo.path());
    let out = run_ok(cmd);
    assert!(String::from_utf8_lossy(&out.stdout).contains("trusted 1 file"));
    assert_eq!(listed(&env)["repository"]["files"][0]["trusted"], true);

    // Trusted, in Ask mode: the prompt hook runs in the guest, read-only.
    let events = exec(&env, "ask", json!([{"text": "Nothing to do."}]));
    let ran = of_type(&events, "hook.ran");
    assert_eq!(ran.len(), 1, "{events:?}");
    assert_eq!(ran[0]["payload"]["event"], "UserPromptSubmit");
    let context = of_type(&events, "turn.context");
    assert!(
        context.iter().any(|c| c
            .to_string()
            .contains("the workspace is read-only for the hook")),
        "{context:?}"
    );
    assert!(!env.repo.path().join("hooked.txt").exists());

    // In Agent mode: the workspace is the hook's to write, the host is not,
    // and the PreToolUse hook refuses the call.
    let events = exec(&env, "agent", bash_turn());
    let result = of_type(&events, "tool.result")[0];
    assert_eq!(result["payload"]["status"], "refused", "{result}");
    assert!(
        result.to_string().contains("the repository refuses bash"),
        "{result}"
    );
    assert!(env.repo.path().join("hooked.txt").exists());
    assert!(!canary.exists(), "a repository hook wrote on the host");
}
