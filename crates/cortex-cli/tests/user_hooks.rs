//! The user's own hooks through `cortex exec` (issue 40, items 3, 4 and 6):
//! `[[hooks.EVENT]]` of `config.toml` and a Claude Code `hooks.json` beside
//! it, used unchanged (a guard script written for Claude Code, reading
//! `tool_name` `Bash` and `tool_input.command` from stdin, answering by exit
//! code 2; a `Stop` hook answering Claude Code's `{"decision": "block"}`),
//! each run on the host without the provider's key. `cortex hooks list`
//! says where each hook comes from, where it runs, and which entries of the
//! file are not run.

mod common;

use common::{Env, json_lines, run_ok};
use serde_json::{Value, json};
use std::path::Path;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A guard as Claude Code's documentation writes one: JSON on stdin, exit 2
/// with the reason on stderr.
const CLAUDE_GUARD: &str = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
if data.get("tool_name") == "Bash" and "rm " in data.get("tool_input", {}).get("command", ""):
    print("Blocked by guard: no rm here", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"#;

/// A Stop hook in Claude Code's form: block once, unless it already did.
const CLAUDE_STOP: &str = r#"#!/usr/bin/env python3
import json, os, sys
data = json.load(sys.stdin)
marker = os.path.join(os.environ["HOME"], "stop-ran")
if data.get("stop_hook_active") or os.path.exists(marker):
    sys.exit(0)
open(marker, "w").close()
print(json.dumps({"decision": "block", "reason": "Run the tests before you finish."}))
"#;

fn script(path: &Path, text: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    write(path, text);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

fn setup() -> Option<Env> {
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_err()
    {
        cortex_testkit::skip_current("python3", "python3 is not installed");
        return None;
    }
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let config = env.home.path().join("config/cortex");
    let guard = script(&env.home.path().join("hooks/guard.py"), CLAUDE_GUARD);
    let stop = script(&env.home.path().join("hooks/stop.py"), CLAUDE_STOP);
    let hooks = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": guard, "timeout": 30}
        ]}],
        "Stop": [{"hooks": [{"type": "command", "command": stop}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    }});
    write(&config.join("hooks.json"), &hooks.to_string());
    write(
        &config.join("config.toml"),
        "[[hooks.PostToolUse]]\nmatcher = \"bash\"\ntimeout_ms = 5000\ncommand = \"\"\"\
         cat >/dev/null; printf '{\"additionalContext\": \"from config.toml, key=[%s]\"}' \
         \"$OPENAI_API_KEY\"\"\"\"\n",
    );
    Some(env)
}

#[test]
fn config_toml_and_an_unchanged_claude_code_hooks_json_run_through_exec() {
    let Some(env) = setup() else { return };
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "rm a.txt"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hello"}}]},
        {"text": "Done."},
        {"text": "Tests run; done."},
    ]}));
    let mut cmd = env.exec(&script, &["--json", "--approval", "auto"], "Tidy up.");
    cmd.env("OPENAI_API_KEY", "sk-user-hooks-secret");
    let out = run_ok(cmd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("sk-user-hooks-secret"), "{stdout}");
    let events = json_lines(&out.stdout);
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool.result")
        .collect();
    assert_eq!(results.len(), 2, "{events:?}");
    // The Claude Code guard refused `rm` by its exit code, with its words.
    assert_eq!(results[0]["payload"]["status"], "refused", "{}", results[0]);
    assert!(
        results[0]
            .to_string()
            .contains("Blocked by guard: no rm here"),
        "{}",
        results[0]
    );
    assert!(env.repo.path().join("a.txt").exists(), "rm ran");
    // config.toml's PostToolUse hook added to the result, without the key.
    assert_eq!(results[1]["payload"]["status"], "ok", "{}", results[1]);
    assert!(
        results[1]
            .to_string()
            .contains("[PostToolUse hook] from config.toml, key=[]"),
        "{}",
        results[1]
    );
    // The Stop hook sent the model back once, with its reason.
    let reminders: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "turn.reminder")
        .collect();
    assert_eq!(reminders.len(), 1, "{reminders:?}");
    assert!(
        reminders[0]
            .to_string()
            .contains("Run the tests before you finish."),
        "{}",
        reminders[0]
    );
    let ran: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["type"] == "hook.ran")
        .map(|e| {
            assert!(e["payload"]["ms"].as_f64().is_some(), "{e}");
            (
                e["payload"]["event"].as_str().unwrap_or("").to_owned(),
                e["payload"]["decision"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let ran: Vec<(&str, &str)> = ran.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(
        ran,
        [
            ("PreToolUse", "block"),
            ("PreToolUse", "continue"),
            ("PostToolUse", "continue"),
            // Once sent back, the next answer stands (once per turn).
            ("Stop", "block"),
        ]
    );
    let completed = events
        .iter()
        .find(|e| e["type"] == "turn.completed")
        .expect("turn.completed");
    assert_eq!(completed["payload"]["rounds"], 4, "{completed}");
}

#[test]
fn hooks_list_says_where_each_hook_is_from_and_what_is_not_run() {
    let Some(env) = setup() else { return };
    let mut cmd = env.command();
    cmd.args(["hooks", "list", "--json", "--repo"])
        .arg(env.repo.path());
    let listed: Value = json_lines(&run_ok(cmd).stdout).remove(0);
    let hooks = listed["hooks"].as_array().expect("hooks");
    let config = env.home.path().join("config/cortex");
    let from: Vec<(&str, &str, bool)> = hooks
        .iter()
        .map(|h| {
            (
                h["event"].as_str().expect("event"),
                h["source"].as_str().expect("source"),
                h["claude"].as_bool().expect("claude"),
            )
        })
        .collect();
    let toml = config.join("config.toml").display().to_string();
    let json_file = config.join("hooks.json").display().to_string();
    assert_eq!(
        from,
        [
            ("PostToolUse", toml.as_str(), false),
            ("PreToolUse", json_file.as_str(), true),
            ("Stop", json_file.as_str(), true),
        ]
    );
    assert!(hooks.iter().all(|h| h["origin"]["kind"] == "user"));
    assert_eq!(
        listed["skipped"],
        json!(["Notification: an event Cortex does not run yet"])
    );

    let mut cmd = env.command();
    cmd.args(["hooks", "list", "--repo"]).arg(env.repo.path());
    let human = String::from_utf8_lossy(&run_ok(cmd).stdout).into_owned();
    assert!(
        human.contains(&format!(
            "PreToolUse [Bash]  {}\n    user {json_file}; timeout 30000 ms; runs on this machine\n",
            env.home.path().join("hooks/guard.py").display()
        )),
        "{human}"
    );
    assert!(
        human.contains("not run (1):\n  Notification: an event Cortex does not run yet\n"),
        "{human}"
    );
    assert!(human.contains("no hook files in the repository"), "{human}");
}
