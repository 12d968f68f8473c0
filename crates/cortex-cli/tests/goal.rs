//! `cortex exec --goal` and `--resume-goal` with the real binary and a
//! scripted model: exec follows the continuation turns to the goal's end,
//! shows the chip at each turn start (sanitised), and its exit code says
//! how the goal ended (a model that only runs commands that change nothing
//! stalls: 4); a goal whose exec was killed resumes from its steps.

mod common;

use common::*;
use serde_json::{Value, json};
use std::process::{Command, Stdio};

fn steps(done: &[bool]) -> Value {
    // A hostile title: the human output must not pass its escape through.
    let titles = ["write b.txt", "write c.txt", "check \u{1b}[2J both"];
    Value::Array(
        done.iter()
            .zip(titles)
            .map(|(d, t)| json!({"title": t, "done": d}))
            .collect(),
    )
}

fn goal_call(done: &[bool]) -> Value {
    json!({"name": "goal", "arguments": {"steps": steps(done)}})
}

fn write(path: &str) -> Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": "x\n"}})
}

fn complete() -> Value {
    json!({"name": "goal", "arguments": {"steps": steps(&[true, true, true]),
        "complete": true, "evidence": "b.txt and c.txt exist"}})
}

fn exec_goal(env: &Env, script: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = env.command();
    cmd.arg("exec")
        .arg("--repo")
        .arg(env.repo.path())
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .args(args);
    cmd
}

#[test]
fn exec_goal_follows_the_continuations_to_completion_with_the_chip() {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Three steps."},
        {"tool_calls": [write("b.txt"), goal_call(&[true, false, false])]},
        {"text": "b.txt written."},
        {"tool_calls": [write("c.txt"), goal_call(&[true, true, false])]},
        {"text": "c.txt written."},
        {"tool_calls": [complete()]},
        {"text": "Done."}
    ]}));
    let out = run_ok(exec_goal(
        &env,
        &script,
        &["--goal", "write b.txt and c.txt"],
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let chips: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("Agent — Goal"))
        .collect();
    assert_eq!(
        chips,
        [
            "Agent — Goal · 0/0",
            "Agent — Goal · 0/3",
            "Agent — Goal · 1/3",
            "Agent — Goal · 2/3"
        ],
        "{stderr}"
    );
    assert!(
        stderr.contains("goal complete: b.txt and c.txt exist"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "an escape reached the terminal");
    assert!(stderr.contains("check ^[[2J both"), "{stderr}");
    assert!(env.repo.path().join("c.txt").is_file());
}

#[test]
fn a_turn_budget_ends_exec_with_exit_code_3_and_json_is_exact() {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"text": "never asked"}
    ]}));
    let out = run(exec_goal(
        &env,
        &script,
        &["--goal", "write both", "--goal-turns", "1", "--json"],
    ));
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = json_lines(&out.stdout);
    let last = events.last().expect("events");
    assert_eq!(last["type"], "goal.paused");
    assert_eq!(last["payload"]["reason"], "budget");
    // The event shows the effective budget: the limits not given at their
    // defaults.
    let set = events
        .iter()
        .find(|e| e["type"] == "goal.set")
        .expect("goal.set");
    assert_eq!(
        set["payload"]["budget"],
        json!({"turns": 1, "tokens": 2_000_000, "minutes": 120})
    );
    let updated = events
        .iter()
        .find(|e| e["type"] == "goal.updated")
        .expect("goal.updated");
    // --json keeps the model's bytes.
    assert_eq!(
        updated["payload"]["steps"][2]["title"],
        "check \u{1b}[2J both"
    );
    assert_eq!(
        types(&events)
            .iter()
            .filter(|t| *t == "turn.started")
            .count(),
        1
    );
}

#[test]
fn a_goal_survives_kill_9_of_exec_and_resume_goal_completes_it() {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"tool_calls": [write("b.txt"), goal_call(&[true, false, false])]},
        {"text": "working very hard", "hang": true}
    ]}));
    let mut child = exec_goal(&env, &script, &["--goal", "write both", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let seen = read_until(&mut child, |e| {
        e["type"] == "message.delta"
            && e["payload"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("hard"))
    });
    child.kill().expect("kill -9");
    let _ = child.wait();
    let session = seen[0]["session_id"].as_str().expect("id").to_owned();

    // Call ids of its own: the session refuses one it has already run.
    let mut calls = [write("c.txt"), complete()];
    calls[0]["id"] = json!("resumed-0");
    calls[1]["id"] = json!("resumed-1");
    let script = env.script(json!({"responses": [
        {"tool_calls": calls},
        {"text": "Done."}
    ]}));
    let mut cmd = env.command();
    cmd.args(["exec", "--session", &session, "--resume-goal"])
        .arg("--model")
        .arg(format!("scripted:{}", script.display()));
    let out = run_ok(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Reopened: the dead process's turn failed and its goal paused.
    assert!(stderr.contains("goal paused: interrupted"), "{stderr}");
    let resumed = stderr.find("goal resumed").expect("goal resumed");
    let rest = &stderr[resumed..];
    // The chip starts from the stored steps.
    assert!(rest.contains("Agent — Goal · 1/3"), "{stderr}");
    assert!(rest.contains("goal complete"), "{stderr}");
    assert!(env.repo.path().join("c.txt").is_file());

    // Nothing is left to resume.
    let mut cmd = env.command();
    cmd.args(["exec", "--session", &session, "--resume-goal"])
        .arg("--model")
        .arg(format!("scripted:{}", script.display()));
    let out = run(cmd);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("only a paused goal can be resumed"),
        "{stderr}"
    );
}

#[test]
fn a_model_that_keeps_running_harmless_commands_stalls_with_exit_code_4() {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let bash = |command: &str| json!({"name": "bash", "arguments": {"command": command}});
    let script = env.script(json!({"responses": [
        {"tool_calls": [goal_call(&[false, false, false])]},
        {"text": "Planned."},
        {"tool_calls": [bash("ls")]},
        {"text": "Looked."},
        {"tool_calls": [bash("true")]},
        {"text": "Looked again."},
        {"text": "never asked"}
    ]}));
    let out = run(exec_goal(
        &env,
        &script,
        &[
            "--goal",
            "write both",
            "--goal-tokens",
            "100000",
            "--goal-minutes",
            "30",
        ],
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("goal paused: stalled"), "{stderr}");
    assert!(
        stderr.contains("(at most 20 turns, 100000 tokens, 30 minutes)"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("✓ bash true · ok"), "{stdout}");
}

#[test]
fn goal_flags_are_checked() {
    let env = Env::new(&[]);
    let script = env.script(json!({"responses": []}));
    for args in [
        vec!["--goal", "x", "a prompt"],
        vec!["--goal-turns", "2", "a prompt"],
        vec!["--resume-goal"],
        vec!["--goal", "x", "--goal-turns", "0"],
        vec!["--goal", "x", "--goal-tokens", "0"],
        vec!["--goal", "x", "--goal-minutes", "0"],
        vec!["--goal-tokens", "5", "a prompt"],
        vec!["--goal-minutes", "5", "a prompt"],
        vec![],
    ] {
        let out = run(exec_goal(&env, &script, &args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
