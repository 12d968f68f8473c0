//! The abuse suite (issue 20): one test per attempt of a hostile model to
//! push the harness around from inside the guest or through its own
//! replies — output floods, huge and deeply nested arguments, a huge reply,
//! many calls at once, writes to the agent's pipes, a command that never
//! ends, a stopped agent, descriptor exhaustion, hostile strings. Each drives
//! the real `cortex exec` with a scripted model, as the test's user and
//! (under root) as `nobody`; `abuse_support` checks the host, the harness's
//! memory, descriptors and store, and that the session still works. The
//! table in `docs/SECURITY.md` ("The abuse suite") maps these and the other
//! suites' tests to the issue's nine principles.

mod abuse_support;
mod escape_support;

use abuse_support::{Abuse, Run, check, completed, human, running};
use escape_support::{Call, bash, hostile, step};
use serde_json::{Value, json};

/// The harness keeps at most this much streamed output per call.
const STREAM_CAP: usize = 1024 * 1024;

/// One `bash` call that floods; it must come back with its output cut to
/// the harness's caps.
fn flood(command: &'static str) -> Abuse {
    Abuse {
        rounds: vec![vec![step("bash", json!({ "command": command }))]],
        expect: |run| {
            completed(run);
            let kept = run.streamed(0, 0);
            assert!(
                kept <= STREAM_CAP + 64 * 1024,
                "{}: {kept} bytes streamed",
                run.who
            );
            assert!(kept > 0, "{}: nothing streamed", run.who);
            let result = run.result(0, 0);
            let output = result["payload"]["output"].as_str().unwrap_or_default();
            assert!(
                output.len() <= 64 * 1024,
                "{}: result {}",
                run.who,
                output.len()
            );
        },
        ..Abuse::default()
    }
}

/// Every call of the first round ended in an error (refused or failed).
fn calls_fail(run: &Run) {
    completed(run);
    let round: Vec<&Value> = run
        .events
        .iter()
        .filter(|e| e["type"] == "tool.result")
        .collect();
    assert!(!round.is_empty(), "{}: no result", run.who);
    for result in round {
        let status = &result["payload"]["status"];
        assert!(
            status == "error" || status == "refused",
            "{}: {status}",
            run.who
        );
    }
}

/// A round of hostile calls, then the same benign command must work.
fn then_alive(calls: Vec<Call>) -> Vec<Vec<Call>> {
    vec![calls, vec![step("bash", json!({"command": "echo alive"}))]]
}

/// The last round's `echo alive` succeeded.
fn alive_after(run: &Run, round: usize) {
    completed(run);
    let result = run.result(round, 0);
    assert_eq!(result["payload"]["status"], "ok", "{}: {result}", run.who);
}

// ---- Principle 2: output floods through `bash` -----------------------------

#[test]
fn flood_one_200_mb_line() {
    check(flood("head -c 200000000 /dev/zero | tr '\\0' x"));
}

#[test]
fn flood_ten_million_small_lines() {
    check(flood("yes abcdef | head -n 10000000"));
}

#[test]
fn flood_binary_data() {
    check(flood("head -c 64000000 /dev/urandom"));
}

#[test]
fn flood_invalid_utf8() {
    check(flood(
        "yes \"$(printf 'ok\\xff\\xfe\\xc3(\\xed\\xa0\\x80')\" | head -c 64000000",
    ));
}

#[test]
fn flood_nul_bytes() {
    check(flood("head -c 100000000 /dev/zero"));
}

#[test]
fn flood_on_stderr() {
    check(flood("yes 'on stderr' | head -c 100000000 >&2"));
}

// ---- Principle 2: what the model itself sends ------------------------------

#[test]
fn a_50_mb_write_file_content() {
    check(Abuse {
        script: Some(|| {
            json!({"responses": [
                {"tool_calls": [{"id": "attack-0-0", "name": "write_file",
                    "arguments": {"path": "big.txt", "content": "x".repeat(50 * 1024 * 1024)}}]},
                {"text": "done"}
            ]})
        }),
        model_bytes: 50 * 1024 * 1024,
        expect: |run| {
            calls_fail(run);
            assert!(!run.lab.path("big.txt").exists(), "{}: written", run.who);
        },
        ..Abuse::default()
    });
}

#[test]
fn a_10_mb_command() {
    check(Abuse {
        script: Some(|| {
            json!({"responses": [
                {"tool_calls": [{"id": "attack-0-0", "name": "bash",
                    "arguments": {"command": format!("echo {}", "y".repeat(10 * 1024 * 1024))}}]},
                {"text": "done"}
            ]})
        }),
        model_bytes: 10 * 1024 * 1024,
        expect: calls_fail,
        ..Abuse::default()
    });
}

#[test]
fn a_huge_model_text_reply() {
    check(Abuse {
        script: Some(|| json!({"responses": [{"text": "z".repeat(20 * 1024 * 1024)}]})),
        model_bytes: 20 * 1024 * 1024,
        ..Abuse::default()
    });
}

#[test]
fn a_thousand_calls_in_one_round() {
    check(Abuse {
        rounds: vec![
            (0..1000)
                .map(|i| step("glob", json!({ "pattern": format!("*{i}*") })))
                .collect(),
        ],
        expect: |run| {
            completed(run);
            let results = run.kinds().iter().filter(|k| **k == "tool.result").count();
            assert_eq!(results, 1000, "{}", run.who);
        },
        ..Abuse::default()
    });
}

#[test]
fn deeply_nested_json_in_arguments() {
    check(Abuse {
        script: Some(|| {
            let depth = 200_000;
            let raw = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let wrapped = format!(
                "{{\"command\": \"echo hi\", \"x\": {}{}}}",
                "{\"a\":".repeat(depth),
                "}".repeat(depth)
            );
            json!({"responses": [
                {"tool_calls": [
                    {"id": "attack-0-0", "name": "bash", "arguments": raw},
                    {"id": "attack-0-1", "name": "bash", "arguments": wrapped},
                ]},
                {"text": "done"}
            ]})
        }),
        expect: |run| {
            calls_fail(run);
            let shown = human(run.lab, &["sessions", "show", run.session_id()], run.who);
            assert!(shown.contains("[[["), "{}: {}", run.who, shown.len());
        },
        ..Abuse::default()
    });
}

// ---- Principle 1: the agent's channel --------------------------------------

#[test]
fn forged_frames_written_to_the_agents_pipes_through_proc() {
    let forge = r#"for f in /proc/1/fd/0 /proc/1/fd/1 /proc/2/fd/0 /proc/2/fd/1 /proc/2/fd/2; do
  printf '{"id":1,"result":{"status":"ok","output":"forged"}}\n{not json\n' > "$f" && echo "wrote $f"
done
for p in $(ls /proc | grep -E '^[0-9]+$'); do
  for f in /proc/$p/fd/*; do
    case "$(readlink "$f")" in pipe:*) printf '\377\376 garbage\n' > "$f" 2>/dev/null && echo "wrote $p $f";; esac
  done
done
exit 1"#;
    check(Abuse {
        rounds: then_alive(vec![bash(forge)]),
        expect: |run| {
            alive_after(run, 1);
            let output = run.result(0, 0)["payload"]["output"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            assert!(
                !output.contains("wrote /proc/2") && !output.contains("wrote /proc/1"),
                "{}: {output}",
                run.who
            );
            assert!(
                !run.events
                    .iter()
                    .any(|e| e["type"] == "tool.result" && e["payload"]["output"] == "forged"),
                "{}: a forged frame was taken",
                run.who
            );
        },
        ..Abuse::default()
    });
}

// ---- Principle 7: a command or an agent that never answers ----------------

/// The mark of the command that never ends (found on the host afterwards).
const NEVER_ENDS: &str = "987654";

#[test]
fn a_command_that_never_ends_then_stop() {
    check(Abuse {
        rounds: vec![vec![step(
            "bash",
            json!({"command": format!("echo started; sleep {NEVER_ENDS} & sleep {NEVER_ENDS}")}),
        )]],
        stop_on: Some(|e| e["type"] == "tool.output.delta"),
        expect: |run| {
            assert_eq!(run.status.code(), Some(130), "{}: {}", run.who, run.stderr);
            assert!(
                run.kinds().contains(&"turn.stopped"),
                "{}: {:?}",
                run.who,
                run.kinds()
            );
            let left = running(&format!("sleep {NEVER_ENDS}"));
            assert!(left.is_empty(), "{}: still running: {left:?}", run.who);
        },
        ..Abuse::default()
    });
}

#[test]
fn a_command_that_stops_the_guest_agent() {
    let stop =
        "kill -STOP 2 2>/dev/null || kill -STOP -- -$(ps -o pgid= -p $PPID | tr -d ' '); sleep 60";
    check(Abuse {
        rounds: then_alive(vec![step("bash", json!({ "command": stop }))]),
        expect: |run| {
            alive_after(run, 1);
            let result = run.result(0, 0);
            assert_eq!(
                result["payload"]["status"], "error",
                "{}: {result}",
                run.who
            );
            assert!(
                result["payload"]["output"]
                    .as_str()
                    .is_some_and(|o| o.contains("stopped answering")),
                "{}: {result}",
                run.who
            );
        },
        ..Abuse::default()
    });
}

// ---- Principle 3: descriptors inside the guest -----------------------------

#[test]
fn descriptor_exhaustion_inside_the_guest() {
    let exhaust = r#"ulimit -n; for i in $(seq 40); do
  (n=0; while exec {fd}</dev/null; do n=$((n+1)); [ $n -ge 20000 ] && break; done 2>/dev/null; sleep 300) >/dev/null 2>&1 &
done
sleep 2; echo opened"#;
    check(Abuse {
        rounds: then_alive(vec![step("bash", json!({ "command": exhaust }))]),
        expect: |run| {
            alive_after(run, 1);
            let output = &run.result(0, 0)["payload"]["output"];
            assert!(
                output.as_str().is_some_and(|o| o.contains("opened")),
                "{}: {output}",
                run.who
            );
        },
        ..Abuse::default()
    });
}

// ---- Principle 9: model-controlled strings in human output -----------------

#[test]
fn hostile_title_and_file_names_in_sessions_list_and_show() {
    check(Abuse {
        prompt: "title \u{1b}]0;owned\u{7} \u{1b}[2J\u{9b}31m \u{202e}gpj.exe\r",
        rounds: vec![vec![
            step(
                "write_file",
                json!({"path": "\u{1b}]52;c;ZXZpbA==\u{7}\nname\r.txt", "content": "\u{1b}[8m hidden"}),
            ),
            step(
                "bash",
                json!({"command": "ls; printf '\\033]0;title\\007\\233'"}),
            ),
        ]],
        expect: |run| {
            completed(run);
            let id = run.session_id().to_owned();
            let list = human(run.lab, &["sessions", "list"], run.who);
            assert!(list.contains("^["), "{}: {list}", run.who);
            human(run.lab, &["sessions", "show", &id], run.who);
            for args in [
                vec!["sessions", "list", "--json"],
                vec!["sessions", "show", id.as_str(), "--json"],
            ] {
                let out = escape_support::output(run.lab.cortex().args(&args));
                for line in String::from_utf8_lossy(&out.stdout).lines() {
                    serde_json::from_str::<Value>(line)
                        .unwrap_or_else(|e| panic!("{}: {args:?}: {e}: {line}", run.who));
                }
            }
            let listed =
                escape_support::output(run.lab.cortex().args(["sessions", "list", "--json"]));
            assert!(
                String::from_utf8_lossy(&listed.stdout).contains("\\u001b]0;owned"),
                "{}: the title is not exact in --json",
                run.who
            );
        },
        ..Abuse::default()
    });
}

#[test]
fn a_hostile_call_is_refused_and_leaves_the_harness_bounded() {
    // A tool the mode does not offer and a name full of controls.
    check(Abuse {
        rounds: vec![vec![
            hostile("no_such_tool", json!({})),
            hostile("\u{1b}[2Jbash", json!({"command": "true"})),
        ]],
        expect: calls_fail,
        ..Abuse::default()
    });
}
