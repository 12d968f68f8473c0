//! A repository's hooks (issue 40, item 4) and the session-level hook
//! events: a repository's hook file runs only once the user trusted it at
//! its content, is recorded once while untrusted, and is untrusted again
//! when it changes; `SessionStart` runs once and its context reaches the
//! model; `PreCompact` runs before a compaction; Stop kills a hook that is
//! running. (That a trusted repository hook runs inside the sandbox, not on
//! the host, is tested through the CLI with the real guest:
//! `cortex-cli/tests/repository_hooks.rs`.)

mod common;

use common::Harness;
use cortex_core::hooks::trust::TrustedHooks;
use cortex_core::{HookEvent, HookOrigin, HookSpec, TurnOutcome};
use cortex_protocol::{EventKind, Mode, ToolStatus};
use serde_json::json;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

/// A hook file that refuses every `bash` call, by exit code 2.
const REFUSING: &str = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
  {"type": "command", "command": "cat >/dev/null; echo 'the repository says no' >&2; exit 2"}
]}]}}"#;

async fn session(
    files: &[(&str, &str)],
    script: serde_json::Value,
    user_hooks: Vec<HookSpec>,
    trust: &Path,
) -> Harness {
    common::hooked_harness(
        files,
        Mode::Agent,
        script,
        user_hooks,
        Some(trust.to_path_buf()),
    )
    .await
}

async fn turn(h: &mut Harness, message: &str) -> TurnOutcome {
    h.session
        .run_turn(message, CancellationToken::new())
        .await
        .expect("turn")
}

fn bash(command: &str) -> serde_json::Value {
    json!({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]})
}

/// (file, sha256) of every `hooks.untrusted`.
async fn untrusted(h: &Harness) -> Vec<(String, String)> {
    h.events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::HooksUntrusted { file, sha256, .. } => Some((file, sha256)),
            _ => None,
        })
        .collect()
}

/// (event, hook, decision) of every `hook.ran`.
async fn ran(h: &Harness) -> Vec<(String, String, String)> {
    h.events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::HookRan {
                event,
                hook,
                decision,
                ..
            } => Some((event, hook, decision)),
            _ => None,
        })
        .collect()
}

fn user_hook(event: HookEvent, command: String) -> HookSpec {
    HookSpec {
        origin: HookOrigin::User,
        event,
        matcher: None,
        command,
        timeout_ms: None,
        source: "test".into(),
        claude: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_hook_runs_only_while_trusted_at_its_content() {
    let data = tempfile::tempdir().expect("tempdir");
    let trust = data.path().join("trusted-hooks.json");
    let script = json!({"responses": [
        bash("echo one"), {"text": "done"},
        bash("echo two"), {"text": "done"},
        bash("echo three"), {"text": "done"},
        bash("echo four"), {"text": "done"},
    ]});
    let files = [("a.txt", "a\n"), (".cortex/hooks.json", REFUSING)];
    let mut h = session(&files, script, Vec::new(), &trust).await;

    // Untrusted: the call runs, the file is recorded once.
    turn(&mut h, "one").await;
    turn(&mut h, "two").await;
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Ok, "{results:?}");
    assert_eq!(results[1].1, ToolStatus::Ok, "{results:?}");
    assert!(ran(&h).await.is_empty());
    let seen = untrusted(&h).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, ".cortex/hooks.json");

    // Trusted at that content: from the next turn on, it refuses.
    TrustedHooks::trust(&trust, h.session.repository(), &seen[0].0, &seen[0].1).expect("trust");
    turn(&mut h, "three").await;
    let results = h.results().await;
    assert_eq!(results[2].1, ToolStatus::Refused, "{results:?}");
    assert!(
        results[2].2.contains("the repository says no"),
        "{}",
        results[2].2
    );
    let hooks = ran(&h).await;
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert_eq!(hooks[0].0, "PreToolUse");
    assert!(hooks[0].1.starts_with(".cortex/hooks.json: "), "{hooks:?}");
    assert_eq!(hooks[0].2, "block");

    // Changed (by anyone, the model included): untrusted again.
    std::fs::write(
        h.repo.path().join(".cortex/hooks.json"),
        REFUSING.replace("says no", "says no twice"),
    )
    .expect("write");
    turn(&mut h, "four").await;
    let results = h.results().await;
    assert_eq!(results[3].1, ToolStatus::Ok, "{results:?}");
    assert_eq!(ran(&h).await.len(), 1);
    let seen = untrusted(&h).await;
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_ne!(seen[0].1, seen[1].1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_trust_file_no_repository_hook_runs() {
    let script = json!({"responses": [bash("echo one"), {"text": "done"}]});
    let files = [("a.txt", "a\n"), (".claude/settings.json", REFUSING)];
    let mut h = common::hooked_harness(&files, Mode::Agent, script, Vec::new(), None).await;
    turn(&mut h, "one").await;
    assert_eq!(h.results().await[0].1, ToolStatus::Ok);
    assert_eq!(untrusted(&h).await.len(), 1);
    assert!(ran(&h).await.is_empty());
}

fn script_file(dir: &Path, name: &str, body: &str) -> PathBuf {
    common::shell_script(dir, name, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_runs_once_and_pre_compact_before_a_compaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seen = dir.path().join("compact.json");
    let start = script_file(
        dir.path(),
        "start.sh",
        "cat >/dev/null\necho 'This project indents with tabs.'\n",
    );
    let compact = script_file(
        dir.path(),
        "compact.sh",
        &format!("cat > '{}'\n", seen.display()),
    );
    let hooks = vec![
        user_hook(HookEvent::SessionStart, start.display().to_string()),
        user_hook(HookEvent::PreCompact, compact.display().to_string()),
    ];
    let script = json!({"responses": [
        {"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"},
        {"text": "The user asked three things; each was answered."},
    ]});
    let trust = dir.path().join("trusted-hooks.json");
    let mut h = session(&[("a.txt", "a\n")], script, hooks, &trust).await;
    turn(&mut h, "first").await;
    turn(&mut h, "second").await;
    turn(&mut h, "third").await;
    let requests = h.model.requests();
    let first = serde_json::to_string(&requests[0].messages).expect("json");
    assert!(first.contains("This project indents with tabs."), "{first}");
    let starts = ran(&h)
        .await
        .into_iter()
        .filter(|(event, ..)| event == "SessionStart")
        .count();
    assert_eq!(starts, 1);

    h.session
        .compact(CancellationToken::new())
        .await
        .expect("compaction");
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).expect("stdin")).expect("json");
    assert_eq!(input["hook_event_name"], "PreCompact");
    assert_eq!(input["trigger"], "manual");
    assert!(
        ran(&h)
            .await
            .iter()
            .any(|(event, ..)| event == "PreCompact")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_kills_a_running_hook() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("sleep.pid");
    let hang = script_file(
        dir.path(),
        "hang.sh",
        &format!("sleep 30 &\necho $! > '{}'\nwait\n", pid_file.display()),
    );
    let hooks = vec![user_hook(
        HookEvent::UserPromptSubmit,
        hang.display().to_string(),
    )];
    let script = json!({"responses": [{"text": "never asked"}]});
    let trust = dir.path().join("trusted-hooks.json");
    let mut h = session(&[("a.txt", "a\n")], script, hooks, &trust).await;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let pid_seen = pid_file.clone();
    tokio::spawn(async move {
        // Stop once the hook has started its child.
        for _ in 0..200 {
            if pid_seen.exists() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        stop.cancel();
    });
    let outcome = h.session.run_turn("go", cancel).await.expect("turn");
    assert!(
        matches!(outcome, TurnOutcome::Stopped { .. }),
        "{outcome:?}"
    );
    assert!(h.model.requests().is_empty(), "no request after Stop");
    let failed: Vec<String> = h
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::HookFailed { error, .. } => Some(error),
            _ => None,
        })
        .collect();
    assert_eq!(failed, vec!["stopped by the user".to_owned()]);
    let pid = std::fs::read_to_string(&pid_file).expect("pid");
    let gone = common::ended(pid.trim()).await;
    assert!(gone, "the hook's child {pid} still runs");
}
