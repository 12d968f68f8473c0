//! Answers the harness knows to be grounded are not sent back for another
//! round (issue 19, item 10: fewer rounds): a question answered from the
//! files the turn's context showed whole, a count the harness's own glob
//! agrees with, a command's output claimed after running it written
//! another way, and what `cat` prints claimed after writing the file.

mod coach_support;
mod common;

use coach_support::*;
use cortex_core::TurnOutcome;
use serde_json::json;

/// The turn completed in `rounds`, its first reminder saying `reminded`
/// (none at all when `None`).
fn ended(ran: &Ran, rounds: u32, reminded: Option<&str>) {
    assert_eq!(
        ran.outcome,
        TurnOutcome::Completed { rounds },
        "{:?}",
        ran.reminders
    );
    match reminded {
        Some(words) => assert!(
            ran.reminders.first().is_some_and(|r| r.contains(words)),
            "{:?}",
            ran.reminders
        ),
        None => assert!(ran.reminders.is_empty(), "{:?}", ran.reminders),
    }
}

const APP: (&str, &str) = ("app.py", "def greet():\n    return 'Hello, Cortex'\n");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_answered_from_the_files_shown_whole_ends_the_turn() {
    let script = json!({"responses": [text("Hello, Cortex")]});
    let ran = run_shown(&[APP], "What does greet() return?", script).await;
    ended(&ran, 1, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_files_shown_or_for_a_change_the_answer_is_still_checked() {
    // Names only in the context (no budget): the answer is a guess.
    let script =
        json!({"responses": [text("Hello, Cortex"), read("app.py"), text("Hello, Cortex")]});
    let ran = run(true, &[APP], "What does greet() return?", script).await;
    ended(&ran, 3, Some("not based on any successful tool call"));
    // Shown whole, but the task asks for a change that was never made.
    let script = json!({"responses": [text("Done."), read("app.py"), text("Done.")]});
    let ran = run_shown(&[APP], "Change greet() to return 'Hi'.", script).await;
    ended(&ran, 3, Some("not based on any successful tool call"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_stands_only_when_the_harness_glob_agrees() {
    let files = [
        ("src/one.py", "x = 1\n"),
        ("src/two.py", "y = 2\n"),
        ("src/notes.txt", "n\n"),
    ];
    let prompt = "How many .py files are in the src folder? Answer with a number.";
    let script = json!({"responses": [text("2")]});
    let ran = run_shown(&files, prompt, script).await;
    ended(&ran, 1, None);
    let glob = json!({"tool_calls": [{"name": "glob", "arguments": {"pattern": "src/**/*.py"}}]});
    let script = json!({"responses": [text("3"), glob, text("2")]});
    let ran = run_shown(&files, prompt, script).await;
    ended(&ran, 3, Some("Call glob now"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_ran_written_another_way_is_not_run_again() {
    let script = json!({"responses": [
        read("calc.py"),
        edit("calc.py", "a - b", "a + b"),
        bash("python3 -B test_calc.py"),
        text("Fixed. Running the test:\n\n```sh\npython3 test_calc.py\n```\n\nThe output will be:\n\n```\nok\n```"),
    ]});
    let ran = run_fix(true, script).await;
    ended(&ran, 4, None);
    // A command that did not run is still sent to be run.
    let script = json!({"responses": [
        read("calc.py"),
        edit("calc.py", "a - b", "a + b"),
        bash("python3 -B test_calc.py"),
        text("```sh\npython3 calc.py\n```\n\nThe output will be:\n\n```\n5\n```"),
        bash("python3 calc.py"),
        text("It printed nothing."),
    ]});
    let ran = run_fix(true, script).await;
    ended(&ran, 6, Some("says what `python3 calc.py` prints"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cat_prints_is_checked_against_the_file_by_the_harness() {
    let write = json!({"tool_calls": [{"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi\n"}}]});
    let claim = |output: &str| {
        text(&format!(
            "To verify, you can run:\n\n```sh\ncat hello.txt\n```\n\nThis should output:\n\n```\n{output}\n```"
        ))
    };
    let prompt = "Create a file hello.txt whose whole content is the word hi.";
    let script = json!({"responses": [write.clone(), claim("hi")]});
    let ran = run(true, &[("README.md", "# demo\n")], prompt, script).await;
    ended(&ran, 2, None);
    // A claim the file contradicts is sent to be run.
    let script =
        json!({"responses": [write, claim("hello"), bash("cat hello.txt"), text("It prints hi.")]});
    let ran = run(true, &[("README.md", "# demo\n")], prompt, script).await;
    ended(&ran, 4, Some("says what `cat hello.txt` prints"));
}
