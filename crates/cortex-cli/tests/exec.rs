//! `cortex exec` as a user runs it: the real binary, the real guest process,
//! a scripted model from a file, a private data and config folder.

mod common;

use common::{Env, json_lines, pid_alive, read_until, run, run_ok, types};
use serde_json::json;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn exec_json_streams_the_timeline_and_sessions_show_replays_it() {
    let env = Env::new(&[("notes.txt", "alpha\nbeta\n")]);
    let script = env.script(json!({"responses": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "It has two lines."}
    ]}));
    let out = run_ok(env.exec(
        &script,
        &["--json", "--mode", "ask"],
        "what is in notes.txt?",
    ));
    let events = json_lines(&out.stdout);
    let kinds = types(&events);
    for expected in [
        "session.created",
        "runtime.attached",
        "env.ready",
        "turn.started",
        "model.request",
        "message.delta",
        "tool.call",
        "tool.result",
        "turn.completed",
    ] {
        assert!(
            kinds.iter().any(|k| k == expected),
            "{expected} missing: {kinds:?}"
        );
    }
    let seqs: Vec<u64> = events.iter().filter_map(|e| e["seq"].as_u64()).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "gapless, in order"
    );
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.result")
        .expect("result");
    assert_eq!(result["payload"]["status"], "ok");
    assert!(
        result["payload"]["output"]
            .as_str()
            .unwrap_or_default()
            .contains("beta")
    );

    let session = events[0]["session_id"]
        .as_str()
        .expect("session id")
        .to_owned();
    let list = run({
        let mut c = env.command();
        c.args(["sessions", "list"]);
        c
    });
    assert!(String::from_utf8_lossy(&list.stdout).contains(&session));
    let show = run({
        let mut c = env.command();
        c.args(["sessions", "show", &session, "--json"]);
        c
    });
    assert!(show.status.success());
    assert_eq!(
        json_lines(&show.stdout),
        events,
        "the stored timeline is what was streamed"
    );
}

#[test]
fn human_output_streams_text_and_one_row_per_tool_call() {
    let env = Env::new(&[("a.txt", "x\n")]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [
            {"name": "glob", "arguments": {"pattern": "*.txt"}},
            {"name": "bash", "arguments": {"command": "echo hi from bash"}}
        ]},
        {"text": "All done."}
    ]}));
    let out = run_ok(env.exec(&script, &[], "look around"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("✓ glob *.txt · ok"), "{stdout}");
    assert!(stdout.contains("✓ bash echo hi from bash · ok"), "{stdout}");
    assert!(stdout.contains("│ hi from bash"), "{stdout}");
    assert!(stdout.contains("All done."), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("turn completed"));
}

#[test]
fn a_missing_repository_or_model_fails_with_a_clear_message() {
    let env = Env::new(&[]);
    let script = env.script(json!({"responses": [{"text": "x"}]}));
    let mut cmd = env.command();
    cmd.args(["exec", "--repo", "/no/such/repo", "--model"])
        .arg(format!("scripted:{}", script.display()))
        .arg("hi");
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/repo"));

    let mut cmd = env.command();
    cmd.args(["exec", "--repo"]).arg(env.repo.path()).arg("hi");
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // With no model configured the embedded default is used; its file is
    // not in this fresh data folder, so the message says how to get it.
    assert!(stderr.contains("fetch-default-model"), "{stderr}");
}

/// A git URL is cloned by the server into its workspaces (the one place in
/// Cortex's data a repository may be) and the turn works on the clone; the
/// original is untouched.
#[test]
fn a_git_url_is_cloned_and_the_turn_works_on_the_clone() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(env.repo.path())
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "a.txt"]);
    git(&["commit", "-qm", "one"]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "two\n"}}]},
        {"text": "changed"}
    ]}));
    let url = format!("file://{}", env.repo.path().display());
    let mut cmd = env.command();
    cmd.args(["exec", "--json", "--repo", &url, "--model"])
        .arg(format!("scripted:{}", script.display()))
        .arg("change a.txt");
    let out = run_ok(cmd);
    let events = json_lines(&out.stdout);
    let created = events
        .iter()
        .find(|e| e["type"] == "session.created")
        .expect("session.created");
    let clone = std::path::PathBuf::from(
        created["payload"]["repository"]
            .as_str()
            .expect("repository"),
    );
    assert!(
        clone.starts_with(env.home.path().join("data/cortex/workspaces")),
        "{}",
        clone.display()
    );
    assert_eq!(
        std::fs::read_to_string(clone.join("a.txt")).expect("clone"),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.repo.path().join("a.txt")).expect("original"),
        "one\n"
    );
}

#[test]
fn provider_keys_never_reach_the_guest() {
    let env = Env::new(&[]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "env"}}]},
        {"text": "ok"}
    ]}));
    let mut cmd = env.exec(&script, &["--json"], "env?");
    cmd.env("OPENAI_API_KEY", "sk-should-not-leak")
        .env("ANTHROPIC_API_KEY", "sk-ant-nope")
        .env("CORTEX_TOKEN", "secret-token");
    let out = run_ok(cmd);
    let events = json_lines(&out.stdout);
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.result")
        .expect("result");
    let output = result["payload"]["output"].as_str().unwrap_or_default();
    assert!(output.contains("PATH="), "{output}");
    for secret in ["sk-should-not-leak", "sk-ant-nope", "secret-token"] {
        assert!(!output.contains(secret), "{secret} leaked: {output}");
    }
    for line in output.lines().filter(|l| l.contains('=')) {
        let name = line.split('=').next().unwrap_or_default();
        assert!(
            [
                "PATH",
                "HOME",
                "LANG",
                "TERM",
                "PWD",
                "SHLVL",
                "_",
                "OLDPWD",
                "GIT_OPTIONAL_LOCKS"
            ]
            .contains(&name),
            "unexpected variable {name} in the guest"
        );
    }
}

#[test]
fn ctrl_c_stops_the_turn_and_kills_the_command_tree() {
    let env = Env::new(&[]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo main=$$; sleep 100 & echo bg=$!; sleep 100"}}]},
        {"text": "never"}
    ]}));
    // Host pids are compared, so the guest shares the host's pid namespace
    // here; tests/sandbox.rs checks the same through the sandbox.
    let mut child = env
        .exec(&script, &["--json", "--guest", "process"], "sleep")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut output = String::new();
    let seen = read_until(&mut child, |e| {
        e["type"] == "tool.output.delta"
            && e["payload"]["text"]
                .as_str()
                .unwrap_or_default()
                .contains("bg=")
    });
    for e in &seen {
        if e["type"] == "tool.output.delta" {
            output.push_str(e["payload"]["text"].as_str().unwrap_or_default());
        }
    }
    let pid = |key: &str| -> i32 {
        output
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {output:?}"))
    };
    let (main, bg) = (pid("main="), pid("bg="));
    assert!(pid_alive(main) && pid_alive(bg));
    // Twice back to back, as GNU `timeout` does (the command, then its
    // process group): one interrupt, so the turn still stops cleanly.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    let deadline = Instant::now() + Duration::from_secs(5);
    while (pid_alive(main) || pid_alive(bg)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !pid_alive(main) && !pid_alive(bg),
        "a process of the command survived"
    );

    let session = seen[0]["session_id"].as_str().expect("id").to_owned();
    let show = run({
        let mut c = env.command();
        c.args(["sessions", "show", &session, "--json"]);
        c
    });
    let kinds = types(&json_lines(&show.stdout));
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("turn.stopped"),
        "{kinds:?}"
    );
    let stored = json_lines(&show.stdout);
    let result = stored
        .iter()
        .find(|e| e["type"] == "tool.result")
        .expect("result");
    assert_eq!(result["payload"]["status"], "stopped");
}

#[test]
fn kill_9_mid_turn_keeps_the_timeline_and_the_session_resumes() {
    let env = Env::new(&[("a.txt", "hello\n")]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "thinking very hard", "hang": true}
    ]}));
    let mut child = env
        .exec(&script, &["--json"], "read")
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
    let show = run({
        let mut c = env.command();
        c.args(["sessions", "show", &session, "--json"]);
        c
    });
    let stored = json_lines(&show.stdout);
    assert!(stored.len() >= seen.len());
    assert_eq!(
        &stored[..seen.len()],
        &seen[..],
        "every event shown before the kill is stored"
    );

    let script = env.script(json!({"responses": [{"text": "resumed fine"}]}));
    let out = run_ok(env.exec(&script, &["--json", "--session", &session], "again"));
    let resumed = json_lines(&out.stdout);
    let kinds = types(&resumed);
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("turn.failed"),
        "the interrupted turn is closed first: {kinds:?}"
    );
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("turn.completed"),
        "{resumed:#?}"
    );
    assert!(resumed.iter().all(|e| e["session_id"] == session.as_str()));
}

#[test]
fn every_command_has_help() {
    let env = Env::new(&[]);
    for args in [
        vec!["--help"],
        vec!["exec", "--help"],
        vec!["attach", "--help"],
        vec!["sessions", "--help"],
        vec!["sessions", "list", "--help"],
        vec!["sessions", "show", "--help"],
        vec!["sessions", "compact", "--help"],
        vec!["models", "--help"],
        vec!["models", "list", "--help"],
    ] {
        let out = run({
            let mut c = env.command();
            c.args(&args);
            c
        });
        assert!(out.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage"),
            "{args:?}"
        );
    }
    let version = run({
        let mut c = env.command();
        c.arg("--version");
        c
    });
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("cortex "));
}

#[test]
fn models_list_and_path_name_the_files_and_how_to_fetch_them() {
    let env = Env::new(&[]);
    let out = run_ok({
        let mut c = env.command();
        c.args(["models", "list"]);
        c
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("qwen2.5-coder-1.5b") && stdout.contains("(default)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("missing: scripts/fetch-default-model"),
        "{stdout}"
    );
    let out = run({
        let mut c = env.command();
        c.args(["models", "path", "smollm2-135m"]);
        c
    });
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fetch-default-model"));
}

#[test]
fn sessions_compact_goes_through_the_api_and_fails_closed() {
    let env = Env::new(&[("notes.txt", "alpha\nbeta\n")]);
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "It has two lines."}
    ]}));
    let out = run_ok(env.exec(
        &script,
        &["--json", "--mode", "ask"],
        "what is in notes.txt?",
    ));
    let session = json_lines(&out.stdout)[0]["session_id"]
        .as_str()
        .expect("session id")
        .to_owned();
    let compact = |summariser: serde_json::Value| {
        let summariser = env.script(summariser);
        run({
            let mut c = env.command();
            c.args(["sessions", "compact", &session, "--model"])
                .arg(format!("scripted:{}", summariser.display()));
            c
        })
    };

    // A summariser that fails: an error, and the history stays.
    let failed = compact(json!({"responses": [{"error": {"status": 500, "body": "down"}}]}));
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains("history is unchanged"), "{stderr}");

    let done = compact(json!({"responses": [{"text": "SUMMARY: notes.txt has two lines."}]}));
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        done.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.starts_with(&format!("compacted {session}: ~")),
        "{stdout}"
    );

    let show = run({
        let mut c = env.command();
        c.args(["sessions", "show", &session, "--json"]);
        c
    });
    let kinds = types(&json_lines(&show.stdout));
    let compactions: Vec<&str> = kinds
        .iter()
        .map(String::as_str)
        .filter(|k| k.starts_with("compaction."))
        .collect();
    assert_eq!(
        compactions,
        [
            "compaction.started",
            "compaction.failed",
            "compaction.started",
            "compaction.done"
        ]
    );
}

/// Every file and folder under `dir` (itself included) whose mode grants
/// the group or others anything, with its mode.
fn shared_entries(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut shared = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 && !meta.file_type().is_symlink() {
            shared.push((path.clone(), mode));
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).expect("read_dir") {
                pending.push(entry.expect("entry").path());
            }
        }
    }
    shared
}

#[test]
fn the_data_folder_is_the_users_alone() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let open = |path: &std::path::Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod")
    };
    open(env.repo.path(), 0o755);
    open(&env.repo.path().join("a.txt"), 0o644);
    let script = env.script(json!({"responses": [
        {"tool_calls": [
            {"name": "bash", "arguments": {"command": "ls"}},
            {"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}}
        ]},
        {"text": "Done."}
    ]}));
    run_ok(env.exec(&script, &["--json"], "write b.txt"));
    let data = env.home.path().join("data");
    assert!(data.join("cortex/cortex.db").is_file());
    let shared = shared_entries(&data);
    assert!(shared.is_empty(), "readable by others: {shared:?}");

    // A data folder an older version left open is tightened at the next run.
    let folder = data.join("cortex");
    open(&folder, 0o755);
    open(&folder.join("cortex.db"), 0o644);
    let script = env.script(json!({"responses": [{"text": "Hello."}]}));
    run_ok(env.exec(&script, &["--json"], "hello"));
    let shared = shared_entries(&data);
    assert!(shared.is_empty(), "readable by others: {shared:?}");
    // The repository is the user's: its modes are left as they were.
    let mode = |path: &std::path::Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(env.repo.path()), 0o755);
    assert_eq!(mode(&env.repo.path().join("a.txt")), 0o644);
}
