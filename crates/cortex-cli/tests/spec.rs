//! `cortex exec --mode spec` and `cortex spec accept|reject` as a user runs
//! them: each command a new process (the session resumed from the store),
//! each with its own scripted model. The proposal is printed with the
//! commands that decide it; the spec's files appear only after the tasks
//! are accepted.

mod common;

use common::{Env, run_ok};
use serde_json::json;
use std::path::Path;
use std::process::Output;

const REQ: &str = "# Word count\n- WHEN the user runs wc THE SYSTEM SHALL print the count\n";
const DESIGN: &str = "# Design\n```mermaid\nflowchart TD\n  Read-->Count\n```\n";
const TASKS: &str = "# Tasks\n- [ ] add wc.py\n";

fn spec_turn(env: &Env, phase: &str, markdown: &str) -> std::path::PathBuf {
    env.script(json!({"responses": [
        {"tool_calls": [{
            // Each process's script counts from 1: ids of its own.
            "id": format!("call_{}", common::rand_suffix()),
            "name": "spec",
            "arguments": {"phase": phase, "markdown": markdown}
        }]},
        {"text": format!("Proposed the {phase}.")}
    ]}))
}

/// `cortex spec VERB ID [FEEDBACK]` with the model of `script`.
fn spec(env: &Env, script: &Path, verb: &str, id: &str, feedback: Option<&str>) -> Output {
    let mut c = env.command();
    c.args(["spec", verb, id, "--model"])
        .arg(format!("scripted:{}", script.display()))
        .args(feedback);
    run_ok(c)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn exec_prints_each_phase_and_the_commands_and_the_last_accept_writes_the_spec() {
    let env = Env::new(&[("notes.txt", "alpha\n")]);
    let first = spec_turn(&env, "requirements", REQ);
    let out = stdout(&run_ok(env.exec(&first, &["--mode", "spec"], "spec wc")));
    assert!(out.contains("── spec requirements v1 ──"), "{out}");
    assert!(out.contains("WHEN the user runs wc"), "{out}");
    let id = out
        .split("cortex spec accept ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no accept command: {out}"))
        .to_owned();
    assert!(
        out.contains(&format!("cortex spec reject {id} \"FEEDBACK\"")),
        "{out}"
    );

    let again = spec_turn(&env, "requirements", REQ);
    let out = stdout(&spec(&env, &again, "reject", &id, Some("fine, again")));
    assert!(out.contains("spec requirements v2"), "{out}");

    for (phase, markdown, version) in [("design", DESIGN, 3), ("tasks", TASKS, 4)] {
        let script = spec_turn(&env, phase, markdown);
        let out = stdout(&spec(&env, &script, "accept", &id, None));
        assert!(
            out.contains(&format!("── spec {phase} v{version} ──")),
            "{out}"
        );
        assert!(out.contains(&format!("cortex spec accept {id}")), "{out}");
        assert!(!env.repo.path().join("specs").exists());
    }

    let last = env.script(json!({"responses": [{"text": "Implementing."}]}));
    let out = stdout(&spec(&env, &last, "accept", &id, None));
    assert!(
        out.contains("spec written: specs/word-count/requirements.md"),
        "{out}"
    );
    assert!(!out.contains("cortex spec accept"), "nothing waits: {out}");
    let dir = env.repo.path().join("specs/word-count");
    for (file, want) in [
        ("requirements.md", REQ),
        ("design.md", DESIGN),
        ("tasks.md", TASKS),
    ] {
        assert_eq!(std::fs::read_to_string(dir.join(file)).expect(file), want);
    }
}

#[test]
fn exec_in_plan_mode_prints_the_plan_and_the_commands_that_decide_it() {
    let env = Env::new(&[("notes.txt", "alpha\n")]);
    let markdown = "# Count words\n1. Read notes.txt\n2. Print the count\n\n```mermaid\nflowchart TD\n  Read-->Print\n```\n";
    let script = env.script(json!({"responses": [
        {"tool_calls": [{
            "id": format!("call_{}", common::rand_suffix()),
            "name": "plan",
            "arguments": {"title": "Count words", "markdown": markdown}
        }]},
        {"text": "Proposed."}
    ]}));
    let out = stdout(&run_ok(env.exec(&script, &["--mode", "plan"], "plan wc")));
    assert!(out.contains("Read notes.txt"), "{out}");
    let id = out
        .split("cortex plan accept ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no accept command: {out}"))
        .to_owned();
    assert!(
        out.contains(&format!("cortex plan reject {id} \"FEEDBACK\"")),
        "{out}"
    );
}
