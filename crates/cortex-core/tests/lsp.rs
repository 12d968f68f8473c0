//! Language servers after a write (`lsp/`): a real one (pyright, where
//! `scripts/install-deps` installed it), and the fixture server
//! `fixtures/lsp_server.py`, which speaks real LSP framing and stands in for
//! rust-analyzer (it runs `rustc` on the text it is sent) and for servers
//! that are missing, crash or never publish. Scripted model, in-process
//! guest: every server runs in a guest of its own, as in a session.

mod common;

use common::*;
use cortex_core::LspSpec;
use cortex_protocol::{Mode, ToolStatus};
use serde_json::json;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

const PYTHON: &str = "/usr/bin/python3";
const PYRIGHT: &str = "/opt/cortex-test/node_modules/.bin/pyright-langserver";

fn fixture() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lsp_server.py").to_owned()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The fixture server as `[lsp.NAME]` with `flags`, for `extensions`.
fn fake(name: &str, flags: &[&str], extensions: &[&str], timeout_ms: u64) -> LspSpec {
    let mut args = vec![fixture()];
    args.extend(strings(flags));
    LspSpec::new(
        name,
        PYTHON,
        args,
        &[],
        &strings(extensions),
        Some(timeout_ms),
    )
    .expect("valid spec")
}

/// Whether `/usr/bin/python3` exists (the fixture server's interpreter);
/// records the skip otherwise.
fn have_python(test: &str) -> bool {
    if Path::new(PYTHON).exists() {
        return true;
    }
    cortex_testkit::skip(
        test,
        "python3",
        &format!("{PYTHON} runs the fixture server"),
    );
    false
}

/// A turn of `calls` (one per round), then a closing answer.
fn script(calls: &[serde_json::Value]) -> serde_json::Value {
    let mut responses: Vec<serde_json::Value> = calls
        .iter()
        .map(|call| json!({"tool_calls": [call]}))
        .collect();
    responses.push(json!({"text": "done"}));
    json!({ "responses": responses })
}

fn write(path: &str, content: &str) -> serde_json::Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": content}})
}

async fn run(h: &mut Harness) {
    let outcome = h
        .session
        .run_turn("edit", CancellationToken::new())
        .await
        .expect("turn");
    assert!(
        matches!(outcome, cortex_core::TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The pid the fixture server wrote at its start (the last one).
fn server_pid(log: &Path) -> String {
    log_lines(log)
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("pid ").map(str::to_owned))
        .expect("the server wrote its pid")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_reports_a_python_type_error_after_a_write() {
    let test = "pyright_reports_a_python_type_error_after_a_write";
    if !Path::new(PYRIGHT).exists() {
        cortex_testkit::skip(
            test,
            "pyright",
            &format!("{PYRIGHT} is missing; scripts/install-deps installs it"),
        );
        return;
    }
    let mut h = harness(
        &[],
        Mode::Agent,
        script(&[write("a.py", "x: int = \"a\"\n")]),
    )
    .await;
    let pyright = LspSpec::new(
        "pyright",
        PYRIGHT,
        strings(&["--stdio"]),
        &strings(&["python"]),
        &[],
        // A cold pyright reads its bundled stubs first.
        Some(60_000),
    )
    .expect("valid");
    h.session.set_language_servers(vec![pyright]);
    run(&mut h).await;
    let results = h.results().await;
    assert_eq!(results.len(), 1, "{results:#?}");
    let (_, status, output) = &results[0];
    assert_eq!(*status, ToolStatus::Ok, "{output}");
    assert!(
        output.contains("[language server `pyright`] a.py: 1 error"),
        "{output}"
    );
    assert!(output.contains("a.py:1:10: error: "), "{output}");
    h.session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_type_error_is_reported_after_a_write() {
    let test = "a_rust_type_error_is_reported_after_a_write";
    if !have_python(test) {
        return;
    }
    // The toolchain's own rustc, not rustup's proxy: the guest's HOME is
    // the repository, where rustup finds no toolchain.
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    let rustc = sysroot.map(|root| format!("{root}/bin/rustc"));
    let Some(rustc) = rustc.filter(|path| Path::new(path).exists()) else {
        cortex_testkit::skip(
            test,
            "rustc",
            "rustc is not on PATH; the fixture server runs it",
        );
        return;
    };
    let source = "pub fn f() -> i32 { \"a\" }\n";
    let mut h = harness(&[], Mode::Agent, script(&[write("src/f.rs", source)])).await;
    h.session
        .set_language_servers(vec![fake("rust", &["--rustc", &rustc], &["rs"], 60_000)]);
    run(&mut h).await;
    let results = h.results().await;
    let (_, status, output) = &results[0];
    assert_eq!(*status, ToolStatus::Ok, "{output}");
    assert_eq!(
        std::fs::read_to_string(h.repo.path().join("src/f.rs")).expect("written"),
        source
    );
    let block = output
        .split_once("\n\n[language server `rust`] src/f.rs: 1 error")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no diagnostics block after the write's own text: {output}"));
    assert!(
        block.contains("src/f.rs:1:21: error: mismatched types [E0308] [rustc]"),
        "{output}"
    );
    h.session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_crashing_and_silent_servers_are_notes_and_the_write_stands() {
    if !have_python("missing_crashing_and_silent_servers_are_notes_and_the_write_stands") {
        return;
    }
    let mut h = harness(
        &[],
        Mode::Agent,
        script(&[write("a.fake", "one\n"), write("a.fake", "two\n")]),
    )
    .await;
    let missing = LspSpec::new(
        "missing",
        "/nonexistent/lsp-server",
        Vec::new(),
        &[],
        &strings(&[".fake"]),
        None,
    )
    .expect("valid");
    h.session.set_language_servers(vec![
        missing,
        fake("crashing", &["--crash"], &[".fake"], 30_000),
        fake("silent", &["--silent"], &[".fake"], 300),
    ]);
    run(&mut h).await;
    assert_eq!(
        std::fs::read_to_string(h.repo.path().join("a.fake")).expect("written"),
        "two\n"
    );
    let results = h.results().await;
    assert_eq!(results.len(), 2, "{results:#?}");
    let first = &results[0].2;
    assert_eq!(results[0].1, ToolStatus::Ok, "{first}");
    assert!(
        first.contains("[language server `missing`] not available: ")
            && first.contains("/nonexistent/lsp-server"),
        "{first}"
    );
    assert!(
        first.contains("[language server `crashing`] not available: ")
            && first.contains("fake server: cannot start (as asked)"),
        "{first}"
    );
    assert!(
        first.contains(
            "[language server `silent`] no diagnostics for a.fake within 0.3 s (skipped)"
        ),
        "{first}"
    );
    // A server given up is said once; the silent one is still asked.
    let second = &results[1].2;
    assert_eq!(results[1].1, ToolStatus::Ok, "{second}");
    assert!(
        !second.contains("`missing`") && !second.contains("`crashing`"),
        "{second}"
    );
    assert!(
        second.contains("[language server `silent`] no diagnostics"),
        "{second}"
    );
    h.session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_is_kept_warm_and_sees_each_edit() {
    if !have_python("a_server_is_kept_warm_and_sees_each_edit") {
        return;
    }
    let logs = tempfile::tempdir().expect("logs");
    let log = logs.path().join("server.log");
    let edit = json!({"name": "edit_file", "arguments":
        {"path": "a.fake", "old_string": "ERROR one", "new_string": "fine\nERROR two"}});
    let mut h = harness(
        &[],
        Mode::Agent,
        script(&[write("a.fake", "ok\nERROR one\n"), edit]),
    )
    .await;
    let log_arg = log.display().to_string();
    h.session
        .set_language_servers(vec![fake("warm", &["--log", &log_arg], &["fake"], 30_000)]);
    run(&mut h).await;
    let results = h.results().await;
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(
        results[0]
            .2
            .contains("a.fake: 1 error\na.fake:2:1: error: ERROR one [fake]"),
        "{}",
        results[0].2
    );
    let second = &results[1].2;
    assert_eq!(results[1].1, ToolStatus::Ok, "{second}");
    assert!(
        second.contains("a.fake: 1 error\na.fake:3:1: error: ERROR two [fake]"),
        "{second}"
    );
    assert!(!second.contains("ERROR one"), "{second}");
    let lines = log_lines(&log);
    let initialized: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("initialize "))
        .collect();
    assert_eq!(initialized.len(), 1, "{lines:?}");
    // Its root is the workspace as the guest sees it.
    let root = h.repo.path().canonicalize().expect("canonical");
    assert!(
        initialized[0].ends_with(&format!("file://{}", root.display())),
        "{lines:?}"
    );
    h.session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_start_only_in_agent_mode_and_end_with_the_mode_or_the_session() {
    if !have_python("servers_start_only_in_agent_mode_and_end_with_the_mode_or_the_session") {
        return;
    }
    let logs = tempfile::tempdir().expect("logs");
    let log: PathBuf = logs.path().join("server.log");
    let log_arg = log.display().to_string();
    let spec = fake("warm", &["--log", &log_arg], &["fake"], 30_000);

    // Ask mode: the write is refused, and no server starts.
    let mut ask = harness(&[], Mode::Ask, script(&[write("a.fake", "x\n")])).await;
    ask.session.set_language_servers(vec![spec.clone()]);
    run(&mut ask).await;
    assert_eq!(ask.results().await[0].1, ToolStatus::Refused);
    assert!(!log.exists(), "{:?}", log_lines(&log));
    ask.session.close().await;

    // Agent mode: it starts with the first write; leaving Agent ends it,
    // the next write in Agent starts it again, and the session's close ends
    // that one.
    let turns = json!({"responses": [
        {"tool_calls": [write("a.fake", "x\n")]},
        {"text": "done"},
        {"tool_calls": [write("a.fake", "y\n")]},
        {"text": "done"},
    ]});
    let mut h = harness(&[], Mode::Agent, turns).await;
    h.session.set_language_servers(vec![spec]);
    run(&mut h).await;
    let first = server_pid(&log);
    assert!(
        pid_alive(first.parse().expect("pid")),
        "the server runs warm"
    );
    h.session.set_mode(Mode::Ask).await.expect("ask");
    assert!(ended(&first).await, "leaving Agent mode ends the server");
    h.session.set_mode(Mode::Agent).await.expect("agent");
    run(&mut h).await;
    let second = server_pid(&log);
    assert_ne!(first, second);
    assert!(pid_alive(second.parse().expect("pid")), "started again");
    h.session.close().await;
    assert!(ended(&second).await, "the session's close ends the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_that_writes_gets_the_sessions_language_servers() {
    if !have_python("a_subagent_that_writes_gets_the_sessions_language_servers") {
        return;
    }
    let task = json!({"name": "task", "arguments":
        {"kind": "general", "description": "write it", "prompt": "CHILD: write a.fake"}});
    let script = json!({"responses": [
        {"when": "PARENT", "tool_calls": [task]},
        {"when": "CHILD", "tool_calls": [write("a.fake", "ok\nERROR here\n")]},
        {"when": "CHILD", "text": "written"},
        {"when": "PARENT", "text": "done"}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    h.session
        .set_language_servers(vec![fake("child", &[], &["fake"], 30_000)]);
    let outcome = h
        .session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    assert!(
        matches!(outcome, cortex_core::TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let child = h
        .events()
        .await
        .into_iter()
        .find_map(|e| match e.kind {
            cortex_protocol::EventKind::SubagentStarted { child, .. } => Some(child),
            _ => None,
        })
        .expect("a child");
    let written = h
        .store
        .events(&child, 0)
        .await
        .expect("child events")
        .into_iter()
        .find_map(|e| match e.kind {
            cortex_protocol::EventKind::ToolResult { output, .. } => Some(output),
            _ => None,
        })
        .expect("the child's write");
    assert!(
        written.contains("a.fake:2:1: error: ERROR here [fake]"),
        "{written}"
    );
    h.session.close().await;
}
