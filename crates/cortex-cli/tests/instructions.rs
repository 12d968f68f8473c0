//! Project instructions in `cortex exec`: the human renderer names the files
//! read on one stderr line (sanitised: a folder's name is the repository's),
//! and `--json` carries the `instructions.loaded` event.

mod common;

use common::{Env, json_lines, run_ok};
use serde_json::json;

/// A folder whose name would recolour a terminal printed raw.
const HOSTILE_FOLDER: &str = "ev\u{1b}[31mil";

fn env() -> Env {
    let env = Env::new(&[("AGENTS.md", "Run the tests with `make test`.\n")]);
    let sub = env.repo.path().join(HOSTILE_FOLDER);
    std::fs::create_dir(&sub).expect("mkdir");
    std::fs::write(sub.join("AGENTS.md"), "Nested rule.\n").expect("write");
    std::fs::write(sub.join("x.py"), "x = 1\n").expect("write");
    let user = env.home.path().join("config/cortex");
    std::fs::create_dir_all(&user).expect("mkdir");
    std::fs::write(user.join("AGENTS.md"), "Be terse.\n").expect("write");
    env
}

fn script(env: &Env) -> std::path::PathBuf {
    env.script(json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": format!("{HOSTILE_FOLDER}/x.py")}}]},
        {"text": "x is 1."}
    ]}))
}

#[test]
fn exec_names_the_instructions_on_stderr() {
    let env = env();
    let out = run_ok(env.exec(&script(&env), &["--mode", "ask"], "what is x?"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("instructions: "))
        .collect();
    assert_eq!(
        lines,
        [
            "instructions: ~/config/cortex/AGENTS.md, AGENTS.md (40 B)",
            "instructions: ~/config/cortex/AGENTS.md, AGENTS.md, ev^[[31mil/AGENTS.md (52 B)",
        ],
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

#[test]
fn exec_json_carries_the_event() {
    let env = env();
    let out = run_ok(env.exec(&script(&env), &["--json", "--mode", "ask"], "what is x?"));
    let events = json_lines(&out.stdout);
    let loaded: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "instructions.loaded")
        .collect();
    assert_eq!(loaded.len(), 2, "{events:?}");
    assert_eq!(
        loaded[0]["payload"]["files"],
        json!(["~/config/cortex/AGENTS.md", "AGENTS.md"])
    );
    assert_eq!(loaded[0]["payload"]["bytes"], 40);
    assert_eq!(loaded[0]["payload"]["cut"], false);
    let text = loaded[1]["payload"]["text"].as_str().expect("text");
    assert!(text.contains("--- AGENTS.md\nRun the tests with `make test`."));
    assert!(text.ends_with("/AGENTS.md\nNested rule."), "{text}");
}

#[test]
fn init_runs_an_agent_turn_that_writes_agents_md() {
    let env = Env::new(&[("Makefile", "test:\n\tpytest\n")]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "Makefile"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {
            "path": "AGENTS.md", "content": "# Commands\n- test: `make test`\n"}}]},
        {"text": "Wrote AGENTS.md."}
    ]}));
    let mut cmd = env.command();
    cmd.arg("init")
        .arg("--repo")
        .arg(env.repo.path())
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .args(["--mode", "ask", "--json"]);
    let events = json_lines(&run_ok(cmd).stdout);
    let started = events
        .iter()
        .find(|e| e["type"] == "turn.started")
        .expect("turn.started");
    assert_eq!(
        started["payload"]["mode"], "agent",
        "an Agent turn whatever --mode"
    );
    let message = started["payload"]["message"].as_str().expect("message");
    assert!(message.starts_with("Write AGENTS.md"), "{message}");
    let written = std::fs::read_to_string(env.repo.path().join("AGENTS.md")).expect("AGENTS.md");
    assert_eq!(written, "# Commands\n- test: `make test`\n");
}
