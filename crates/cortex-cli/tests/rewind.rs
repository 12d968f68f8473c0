//! `cortex rewind` as a user runs it: the real binary, a scripted turn that
//! changes files through `bash`, then a rewind through the in-process
//! server that puts them back, refuses to overwrite a file the user
//! changed until `--force`, and `sessions show` stating the storage used.

mod common;

use common::{Env, json_lines, run, run_ok};
use serde_json::json;

#[test]
fn rewind_puts_the_files_back_and_keeps_user_changes_without_force() {
    let env = Env::new(&[("notes.txt", "alpha\n")]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo beta > notes.txt && mkdir -p out && echo x > out/made.txt"}}]},
        {"text": "Changed."}
    ]}));
    let out = run_ok(env.exec(&script, &["--json", "--guest", "process"], "change notes"));
    let events = json_lines(&out.stdout);
    let session = events[0]["session_id"]
        .as_str()
        .expect("session id")
        .to_owned();
    assert!(
        events.iter().any(|e| e["type"] == "checkpoint.taken"),
        "a checkpoint before the turn"
    );
    let notes = env.repo.path().join("notes.txt");
    assert_eq!(std::fs::read_to_string(&notes).expect("notes"), "beta\n");
    let model = format!("scripted:{}", script.display());

    let out = run_ok({
        let mut c = env.command();
        c.args(["rewind", &session, "--json", "--model", &model]);
        c
    });
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(answer["scope"], "both");
    assert_eq!(answer["changed"], json!(["notes.txt"]));
    assert_eq!(answer["deleted"], json!(["out", "out/made.txt"]));
    assert_eq!(std::fs::read_to_string(&notes).expect("notes"), "alpha\n");
    assert!(!env.repo.path().join("out").exists());
    let undo = answer["undo"].as_str().expect("undo").to_owned();

    // Undo it (files), after the user changed the file the rewind restored.
    std::fs::write(&notes, "mine\n").expect("user edit");
    let refused = run({
        let mut c = env.command();
        c.args(["rewind", &session, &undo, "--files", "--model", &model]);
        c
    });
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("notes.txt"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&notes).expect("notes"), "mine\n");

    let out = run_ok({
        let mut c = env.command();
        c.args([
            "rewind", &session, &undo, "--files", "--force", "--model", &model,
        ]);
        c
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("overwritten (changed outside the session): notes.txt"),
        "{stdout}"
    );
    assert!(stdout.contains("undo with: cortex rewind"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&notes).expect("notes"), "beta\n");
    assert!(env.repo.path().join("out/made.txt").exists());

    let out = run_ok({
        let mut c = env.command();
        c.args(["sessions", "show", &session]);
        c
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("checkpoints: "), "{stderr}");
    assert!(stderr.contains("rewound to before"), "{stderr}");
}

#[test]
fn a_conversation_rewind_leaves_the_files_and_excluded_folders_are_named() {
    let env = Env::new(&[("notes.txt", "alpha\n")]);
    let dep = env.repo.path().join("node_modules/dep");
    std::fs::create_dir_all(&dep).expect("mkdir");
    std::fs::write(dep.join("index.js"), "x\n").expect("write");
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo beta > notes.txt"}}]},
        {"text": "Changed."}
    ]}));
    let out = run_ok(env.exec(&script, &["--guest", "process"], "change notes"));
    // Said before the turn runs, so the user knows a rewind will not
    // bring that folder back.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("checkpoint leaves out (regenerable, not rewound): node_modules"),
        "{stderr}"
    );
    // The first line names the session: `session ID · mode · …`.
    let session = stderr
        .lines()
        .find_map(|l| l.strip_prefix("session "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no session line in {stderr}"))
        .to_owned();
    let model = format!("scripted:{}", script.display());

    let rewind = |extra: &[&str]| {
        let mut c = env.command();
        c.args(["rewind", &session, "--conversation", "--model", &model]);
        c.args(extra);
        c
    };
    let out = run_ok(rewind(&["--json"]));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(answer["scope"], "conversation");
    for list in ["created", "changed", "deleted"] {
        assert_eq!(answer[list], json!([]), "{answer}");
    }
    assert!(answer.get("undo").is_none(), "{answer}");
    let notes = std::fs::read_to_string(env.repo.path().join("notes.txt")).expect("notes");
    assert_eq!(notes, "beta\n", "the files stay as the turn left them");
    // The turn is gone from the conversation: nothing left to rewind.
    let again = run(rewind(&[]));
    assert_eq!(again.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("no turn"), "{stderr}");
}
