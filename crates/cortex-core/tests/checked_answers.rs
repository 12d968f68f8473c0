//! Answers are checked, or marked: a model that tries to pass a wrong
//! answer either gets it back or ends the turn unverified, never as plain
//! success.

mod coach_support;
mod common;

use coach_support::*;
use cortex_core::TurnOutcome;
use cortex_model::ToolChoice;
use cortex_protocol::{Doubt, ReminderKind, ToolName};
use serde_json::json;

fn doubted(unverified: &[Doubt]) -> Vec<ReminderKind> {
    unverified.iter().map(|d| d.check).collect()
}

const CHECK: &str = "print(sum(range(11)))\n";

/// A wrong output claimed for a command that did run.
fn claims(printed: &str) -> serde_json::Value {
    text(&format!(
        "I ran it:\n```sh\npython3 check.py\n```\nIt printed:\n```\n{printed}\n```"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_output_that_differs_from_the_run_goes_back_then_is_unverified() {
    let prompt = "Run check.py and tell me what it prints.";
    let script = json!({"responses": [
        bash("python3 check.py"),
        claims("56"),
        claims("56"),
        claims("56"),
    ]});
    let ran = run(true, &[("check.py", CHECK)], prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 4 });
    // Held to what the run printed, then asked for that output.
    assert_eq!(
        ran.kinds,
        [
            Some(ReminderKind::WrongOutput),
            Some(ReminderKind::OutputLeftOut)
        ],
        "{:?}",
        ran.reminders
    );
    // The model is shown what the command did print.
    assert!(ran.reminders[0].contains("55"), "{:?}", ran.reminders);
    assert_eq!(
        doubted(&ran.unverified),
        [ReminderKind::WrongOutput, ReminderKind::OutputLeftOut]
    );

    // The same claim, true, stands.
    let script = json!({"responses": [bash("python3 check.py"), claims("55")]});
    let ran = run(true, &[("check.py", CHECK)], prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 2 });
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
    assert!(ran.unverified.is_empty(), "{:?}", ran.unverified);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn showing_the_test_file_is_not_running_the_test() {
    // A wrong fix, then `cat` of the test as if it were the run.
    let script = json!({"responses": [
        read("calc.py"),
        edit("calc.py", "a - b", "a * b"),
        bash("cat test_calc.py"),
        text("Fixed; the test passes."),
        text("Fixed; the test passes."),
    ]});
    let ran = run_fix(true, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 5 });
    assert_eq!(
        ran.kinds,
        [Some(ReminderKind::Untested)],
        "{:?}",
        ran.reminders
    );
    assert_eq!(ran.choices[4], ToolChoice::Tool(ToolName::Bash));
    assert_eq!(doubted(&ran.unverified), [ReminderKind::Untested]);

    // Nor does it make a later fix "a change after the test passed".
    let script = json!({"responses": [
        read("calc.py"),
        edit("calc.py", "a - b", "a * b"),
        bash("cat test_calc.py"),
        edit("calc.py", "a * b", "a + b"),
        bash("python3 test_calc.py"),
        text("Fixed; the test prints ok."),
    ]});
    let ran = run_fix(true, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 6 });
    let statuses: Vec<&str> = ran.results.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        statuses,
        ["ok", "ok", "ok", "ok", "ok"],
        "{:?}",
        ran.results
    );
    assert_eq!(file(&ran, "calc.py"), "def add(a, b):\n    return a + b\n");
    assert!(ran.unverified.is_empty(), "{:?}", ran.unverified);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchecked_answer_given_twice_ends_unverified() {
    let files = [("app.py", "def greet():\n    return 'Hello, Cortex'\n")];
    let prompt = "What does greet() in app.py return?";
    let script = json!({"responses": [text("Hello, world!"), text("Hello, world!")]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 2 });
    assert_eq!(ran.kinds, [Some(ReminderKind::Unchecked)]);
    assert_eq!(doubted(&ran.unverified), [ReminderKind::Unchecked]);

    // Checked with a call, the answer is not doubted.
    let script = json!({"responses": [
        text("Hello, world!"),
        read("app.py"),
        text("It returns 'Hello, Cortex'."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 3 });
    assert!(ran.unverified.is_empty(), "{:?}", ran.unverified);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_still_fails_when_the_turn_ends_is_doubted() {
    // The model keeps the wrong fix and answers twice that it is done.
    let script = json!({"responses": [
        read("calc.py"),
        edit("calc.py", "a - b", "a * b"),
        bash("python3 test_calc.py"),
        text("Fixed."),
        text("Fixed."),
    ]});
    let ran = run_fix(true, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 5 });
    assert_eq!(ran.kinds, [Some(ReminderKind::TestFails)]);
    assert!(
        doubted(&ran.unverified).contains(&ReminderKind::TestFails),
        "{:?}",
        ran.unverified
    );
}
