//! The user's hooks (issue 40, items 3-5): a `PreToolUse` hook refuses a
//! call approvals (`auto`) would run, by exit code 2 or by JSON, and one
//! that answers `ask` makes the user decide the call even under `auto`
//! (refused where nobody can answer); a `PostToolUse` hook's context
//! reaches the next request; a `Stop` hook sends the model back once; a
//! hook that hangs is killed at its timeout and its call refused; what a
//! hook says is stripped of escape sequences; a hook never sees the
//! provider's key. The scripts are written by each test.

mod common;

use common::Harness;
use cortex_core::{HookEvent, HookSpec, TurnOutcome};
use cortex_protocol::{EventKind, Mode, ReminderKind, ToolStatus};
use serde_json::json;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// An executable `#!/bin/sh` script named `name` in `dir`, its path.
fn hook_script(dir: &Path, name: &str, body: &str) -> String {
    common::shell_script(dir, name, body).display().to_string()
}

fn hook(event: HookEvent, matcher: Option<&str>, command: String) -> HookSpec {
    HookSpec {
        origin: cortex_core::hooks::HookOrigin::User,
        event,
        matcher: matcher.map(str::to_owned),
        command,
        timeout_ms: None,
        source: "test".into(),
        claude: false,
    }
}

/// A session on a repository of `files` with `hooks`, the scripted model of
/// `script`, approvals `auto`.
async fn session(
    files: &[(&str, &str)],
    mode: Mode,
    script: serde_json::Value,
    hooks: Vec<HookSpec>,
) -> Harness {
    common::hooked_harness(files, mode, script, hooks, None).await
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

/// (event, decision) of every `hook.ran`, and (event, error) of every
/// `hook.failed`.
async fn hook_events(h: &Harness) -> (Vec<(String, String)>, Vec<(String, String)>) {
    let (mut ran, mut failed) = (Vec::new(), Vec::new());
    for event in h.events().await {
        match event.kind {
            EventKind::HookRan {
                event, decision, ..
            } => ran.push((event, decision)),
            EventKind::HookFailed { event, error, .. } => failed.push((event, error)),
            _ => {}
        }
    }
    (ran, failed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_use_hook_denies_rm_by_exit_code_and_by_json_while_approvals_are_auto() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let exit_two = hook_script(
        hooks_dir.path(),
        "exit2.sh",
        "input=$(cat)\ncase \"$input\" in *'rm '*) echo 'no rm in this repository' >&2; exit 2;; esac\nexit 0\n",
    );
    let by_json = hook_script(
        hooks_dir.path(),
        "json.sh",
        "input=$(cat)\ncase \"$input\" in *'rm '*) echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"no rm in this repository\"}}';; esac\nexit 0\n",
    );
    // Claude Code's tool name in one matcher, Cortex's in the other.
    for (matcher, command, decision) in [
        ("Bash", exit_two, "block"),
        ("bash|edit_file", by_json, "deny"),
    ] {
        let script = json!({"responses": [
            bash("rm victim.txt"),
            bash("echo kept > other.txt"),
            {"text": "done"}
        ]});
        let hooks = vec![hook(HookEvent::PreToolUse, Some(matcher), command)];
        let mut h = session(&[("victim.txt", "keep me\n")], Mode::Agent, script, hooks).await;
        let outcome = turn(&mut h, "clean up").await;
        assert!(
            matches!(outcome, TurnOutcome::Completed { .. }),
            "{outcome:?}"
        );
        assert!(
            h.repo.path().join("victim.txt").exists(),
            "{matcher}: rm ran"
        );
        let results = h.results().await;
        assert_eq!(results[0].1, ToolStatus::Refused, "{matcher}: {results:?}");
        assert!(
            results[0].2.contains("no rm in this repository"),
            "{matcher}: {}",
            results[0].2
        );
        // Any other call goes on to approvals, which run it.
        assert_eq!(results[1].1, ToolStatus::Ok, "{matcher}: {results:?}");
        assert!(h.repo.path().join("other.txt").exists());
        let (ran, failed) = hook_events(&h).await;
        let decisions: Vec<&str> = ran.iter().map(|(_, d)| d.as_str()).collect();
        assert_eq!(decisions[0], decision, "{decisions:?}");
        assert_eq!(decisions[1], "continue", "{decisions:?}");
        assert!(failed.is_empty(), "{failed:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_cannot_allow_what_the_mode_forbids() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let allow = hook_script(
        hooks_dir.path(),
        "allow.sh",
        "cat >/dev/null\necho '{\"decision\":\"allow\"}'\n",
    );
    let script = json!({"responses": [bash("echo x > made.txt"), {"text": "done"}]});
    let hooks = vec![hook(HookEvent::PreToolUse, None, allow)];
    let mut h = session(&[("a.txt", "a\n")], Mode::Ask, script, hooks).await;
    turn(&mut h, "make a file").await;
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Refused, "{results:?}");
    assert!(!h.repo.path().join("made.txt").exists());
    // The mode refused it before any hook was asked.
    assert!(hook_events(&h).await.0.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_tool_use_hooks_context_reaches_the_next_request() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let seen = hooks_dir.path().join("stdin.json");
    let note = hook_script(
        hooks_dir.path(),
        "note.sh",
        &format!(
            "cat > '{}'\necho '{{\"additionalContext\":\"remember the changelog\"}}'\n",
            seen.display()
        ),
    );
    let script = json!({"responses": [bash("echo hello"), {"text": "done"}]});
    let hooks = vec![hook(HookEvent::PostToolUse, Some("bash"), note)];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    turn(&mut h, "say hello").await;
    let requests = h.model.requests();
    assert_eq!(requests.len(), 2);
    let second = serde_json::to_string(&requests[1].messages).expect("json");
    assert!(second.contains("remember the changelog"), "{second}");
    let first = serde_json::to_string(&requests[0].messages).expect("json");
    assert!(!first.contains("remember the changelog"));
    // What the hook read: the event, the call and its result.
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).expect("stdin")).expect("json");
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_name"], "bash");
    assert_eq!(input["tool_input"]["command"], "echo hello");
    assert!(
        input["tool_response"]
            .as_str()
            .is_some_and(|r| r.contains("hello"))
    );
    assert_eq!(input["session_id"], h.session.id().to_string());
    assert_eq!(input["cwd"], h.session.repository().display().to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_hook_sends_the_model_back_once() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let never = hook_script(
        hooks_dir.path(),
        "stop.sh",
        "cat >/dev/null\necho 'run the tests first' >&2\nexit 2\n",
    );
    let script = json!({"responses": [{"text": "done"}, {"text": "done, really"}]});
    let hooks = vec![hook(HookEvent::Stop, None, never)];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    let outcome = turn(&mut h, "finish").await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { rounds: 2 }),
        "{outcome:?}"
    );
    let reminders: Vec<(Option<ReminderKind>, String)> = h
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::TurnReminder { kind, text, .. } => Some((kind, text)),
            _ => None,
        })
        .collect();
    assert_eq!(reminders.len(), 1, "{reminders:?}");
    assert_eq!(reminders[0].0, Some(ReminderKind::Hook));
    let second = serde_json::to_string(&h.model.requests()[1].messages).expect("json");
    assert!(second.contains("run the tests first"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_hangs_is_killed_and_its_call_refused() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let pid_file = hooks_dir.path().join("sleep.pid");
    // What it started is killed with it: its whole process group.
    let hang = hook_script(
        hooks_dir.path(),
        "hang.sh",
        &format!("sleep 30 &\necho $! > '{}'\nwait\n", pid_file.display()),
    );
    let script = json!({"responses": [bash("echo x > made.txt"), {"text": "done"}]});
    let mut spec = hook(HookEvent::PreToolUse, None, hang);
    spec.timeout_ms = Some(300);
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, vec![spec]).await;
    let outcome = turn(&mut h, "make a file").await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    assert!(!h.repo.path().join("made.txt").exists());
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Refused);
    assert!(
        results[0].2.contains("hook") && results[0].2.contains("timed out after 300 ms"),
        "{}",
        results[0].2
    );
    assert!(
        results[0].2.contains("the call was refused"),
        "{}",
        results[0].2
    );
    let (_, failed) = hook_events(&h).await;
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, "PreToolUse");
    let pid = std::fs::read_to_string(&pid_file).expect("pid");
    assert!(
        common::ended(pid.trim()).await,
        "the hook's child {pid} still runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_hook_says_is_stripped_of_escape_sequences() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let noisy = "cat >/dev/null\nprintf '\\033]0;pwned\\007\\033[31mred\\033[0m' >&2\n";
    let blocks = hook_script(hooks_dir.path(), "blocks.sh", &format!("{noisy}exit 2\n"));
    let fails = hook_script(hooks_dir.path(), "fails.sh", &format!("{noisy}exit 1\n"));
    let script = json!({"responses": [bash("echo one"), {"text": "done"}]});
    let hooks = vec![
        hook(HookEvent::PostToolUse, None, fails),
        hook(HookEvent::PreToolUse, None, blocks),
    ];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    turn(&mut h, "go").await;
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Refused);
    assert!(results[0].2.contains("red"), "{}", results[0].2);
    for event in h.events().await {
        let text = serde_json::to_string(&event.kind).expect("json");
        assert!(
            !text.contains("\\u001b") && !text.contains("\\u0007"),
            "{text}"
        );
    }
    // The PostToolUse hook never ran (the call was refused); a failing one
    // is tested through a call it follows.
    let script = json!({"responses": [bash("echo two"), {"text": "done"}]});
    let fails = script_path(&hooks_dir, "fails.sh");
    let hooks = vec![hook(HookEvent::PostToolUse, None, fails)];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    turn(&mut h, "go").await;
    let results = h.results().await;
    // A failed PostToolUse hook is passed over: the call's result stands.
    assert_eq!(results[0].1, ToolStatus::Ok);
    let (_, failed) = hook_events(&h).await;
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].1.contains("status 1") && failed[0].1.contains("red"));
    assert!(!failed[0].1.contains('\u{1b}') && !failed[0].1.contains('\u{7}'));
}

fn script_path(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_cannot_read_the_provider_key() {
    // SAFETY: set before this test's hooks run; the variable is read only
    // by the hook's own process (which must not get it), and std's own
    // environment lock orders this with spawning.
    unsafe { std::env::set_var("OPENAI_API_KEY", "sk-hook-test-secret") };
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let leak = hook_script(
        hooks_dir.path(),
        "leak.sh",
        "cat >/dev/null\nprintf '{\"additionalContext\":\"key=[%s] env=[%s]\"}' \"$OPENAI_API_KEY\" \"$(env | grep -c KEY)\"\n",
    );
    let script = json!({"responses": [bash("echo hi"), {"text": "done"}]});
    let hooks = vec![hook(HookEvent::PostToolUse, None, leak)];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    turn(&mut h, "go").await;
    let results = h.results().await;
    assert!(results[0].2.contains("key=[] env=[0]"), "{}", results[0].2);
    for event in h.events().await {
        let text = serde_json::to_string(&event.kind).expect("json");
        assert!(!text.contains("sk-hook-test-secret"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_prompt_submit_hook_adds_context_or_fails_the_turn() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let context = hook_script(
        hooks_dir.path(),
        "context.sh",
        "cat >/dev/null\necho '{\"hookSpecificOutput\":{\"additionalContext\":\"the release is on Friday\"}}'\n",
    );
    let script = json!({"responses": [{"text": "done"}]});
    let hooks = vec![hook(HookEvent::UserPromptSubmit, None, context)];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    turn(&mut h, "when is it").await;
    let first = serde_json::to_string(&h.model.requests()[0].messages).expect("json");
    assert!(first.contains("the release is on Friday"), "{first}");

    let block = hook_script(
        hooks_dir.path(),
        "block.sh",
        "input=$(cat)\ncase \"$input\" in *password*) echo 'no secrets in prompts' >&2; exit 2;; esac\n",
    );
    let script = json!({"responses": [{"text": "done"}]});
    let hooks = vec![hook(HookEvent::UserPromptSubmit, None, block)];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    let outcome = turn(&mut h, "the password is hunter2").await;
    match outcome {
        TurnOutcome::Failed { error } => {
            assert!(error.contains("no secrets in prompts"), "{error}")
        }
        other => panic!("{other:?}"),
    }
    assert!(h.model.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_use_hook_that_asks_makes_the_user_decide_even_under_auto() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    // Claude Code's form for `rm`, the plain one for `read_file` (a tool
    // approvals never ask about).
    let asks = hook_script(
        hooks_dir.path(),
        "asks.sh",
        "input=$(cat)\ncase \"$input\" in\n\
         *'rm '*) echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"rm deletes files\"}}';;\n\
         *read_file*) echo '{\"decision\":\"ask\"}';;\n\
         esac\n",
    );
    let script = json!({"responses": [
        bash("rm victim.txt"),
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "victim.txt"}}]},
        bash("rm victim.txt"),
        bash("echo unasked > other.txt"),
        {"text": "done"}
    ]});
    let hooks = vec![hook(HookEvent::PreToolUse, None, asks)];
    let mut h = session(&[("victim.txt", "keep me\n")], Mode::Agent, script, hooks).await;
    // The user denies the first request and allows the others.
    let approvals = h.session.approvals().clone();
    let mut events = h.session.subscribe();
    let answerer = tokio::spawn(async move {
        let mut asked = Vec::new();
        while let Ok(published) = events.recv().await {
            match &published.event.kind {
                EventKind::ApprovalRequested {
                    call_id,
                    summary,
                    reason,
                    ..
                } => {
                    let decision = if asked.is_empty() {
                        cortex_protocol::ApprovalDecision::Deny
                    } else {
                        cortex_protocol::ApprovalDecision::Allow
                    };
                    asked.push((summary.clone(), reason.clone()));
                    approvals.answer(&call_id.0, decision).expect("answer");
                }
                EventKind::TurnCompleted { .. } => break,
                _ => {}
            }
        }
        asked
    });
    let outcome = turn(&mut h, "clean up").await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let asked = answerer.await.expect("answerer");
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert_eq!(asked[0].0, "rm victim.txt");
    assert!(
        asked[0].1.contains("PreToolUse hook") && asked[0].1.ends_with("asks: rm deletes files"),
        "{asked:?}"
    );
    assert!(asked[1].0.starts_with("read_file "), "{asked:?}");
    assert!(asked[1].1.ends_with("asks for your approval"), "{asked:?}");
    let results = h.results().await;
    let statuses: Vec<ToolStatus> = results.iter().map(|r| r.1).collect();
    // Denied, then allowed twice; a call the hook does not ask about runs
    // unasked, as `auto` runs it.
    assert_eq!(
        statuses,
        [
            ToolStatus::Refused,
            ToolStatus::Ok,
            ToolStatus::Ok,
            ToolStatus::Ok
        ],
        "{results:?}"
    );
    assert!(results[0].2.contains("the user denied this call"));
    assert!(!h.repo.path().join("victim.txt").exists(), "allowed rm ran");
    assert!(h.repo.path().join("other.txt").exists());
    let decisions: Vec<String> = hook_events(&h).await.0.into_iter().map(|r| r.1).collect();
    assert_eq!(decisions, ["ask", "ask", "ask", "continue"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_asks_under_the_deny_policy_refuses_the_call() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let asks = hook_script(
        hooks_dir.path(),
        "asks.sh",
        "cat >/dev/null\necho '{\"decision\":\"ask\",\"reason\":\"a person must look\"}'\n",
    );
    let script = json!({"responses": [bash("echo x > made.txt"), {"text": "done"}]});
    let hooks = vec![hook(HookEvent::PreToolUse, Some("Bash"), asks)];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    h.session
        .approvals()
        .set_policy(cortex_protocol::ApprovalPolicy::Deny)
        .await
        .expect("policy");
    turn(&mut h, "make a file").await;
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Refused, "{results:?}");
    assert!(
        results[0].2.contains("a person must look") && results[0].2.contains("`deny`"),
        "{}",
        results[0].2
    );
    assert!(!h.repo.path().join("made.txt").exists());
    assert!(
        !h.types().await.contains(&"approval.requested"),
        "nobody to ask"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hooks_allow_neither_passes_the_deny_list_nor_answers_for_the_user() {
    let hooks_dir = tempfile::tempdir().expect("tempdir");
    let allow = hook_script(
        hooks_dir.path(),
        "allow.sh",
        "cat >/dev/null\necho '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'\n",
    );
    // Under `auto`: the built-in deny list still refuses.
    let script = json!({"responses": [bash("mkfs.ext4 disk.img"), {"text": "done"}]});
    let hooks = vec![hook(HookEvent::PreToolUse, None, allow.clone())];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    turn(&mut h, "format it").await;
    let results = h.results().await;
    assert_eq!(results[0].1, ToolStatus::Refused, "{results:?}");
    assert!(results[0].2.contains("deny list"), "{}", results[0].2);
    assert_eq!(hook_events(&h).await.0[0].1, "allow");

    // Under `ask`: the user is still asked, and the user's "deny" stands.
    let script = json!({"responses": [bash("echo x > made.txt"), {"text": "done"}]});
    let hooks = vec![hook(HookEvent::PreToolUse, None, allow)];
    let mut h = session(&[("a.txt", "a\n")], Mode::Agent, script, hooks).await;
    h.session
        .approvals()
        .set_policy(cortex_protocol::ApprovalPolicy::Ask)
        .await
        .expect("policy");
    let approvals = h.session.approvals().clone();
    let mut events = h.session.subscribe();
    let answerer = tokio::spawn(async move {
        let mut asked = 0;
        while let Ok(published) = events.recv().await {
            match &published.event.kind {
                EventKind::ApprovalRequested { call_id, .. } => {
                    asked += 1;
                    approvals
                        .answer(&call_id.0, cortex_protocol::ApprovalDecision::Deny)
                        .expect("answer");
                }
                EventKind::TurnCompleted { .. } => break,
                _ => {}
            }
        }
        asked
    });
    turn(&mut h, "make a file").await;
    assert_eq!(answerer.await.expect("answerer"), 1);
    assert_eq!(h.results().await[0].1, ToolStatus::Refused);
    assert!(!h.repo.path().join("made.txt").exists());
}
