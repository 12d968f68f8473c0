//! Tests of the answer checks and of how they read the task's words.

use super::words::*;
use super::*;
use cortex_protocol::CallId;

fn call(name: &str, args: serde_json::Value) -> ToolCallRequest {
    ToolCallRequest {
        id: CallId("c".into()),
        name: name.into(),
        arguments: args.to_string(),
    }
}

#[test]
fn work_is_asked_for_in_words_not_in_names() {
    for prompt in [
        "Fix the bug in calc.py.",
        "Turn debug off in config.json.",
        "python3 test_calc.py fails. Fix it.",
        "Add a function sub(a, b) to calc.py.",
    ] {
        assert!(asks_for_work(prompt), "{prompt}");
    }
    for prompt in [
        "What does add() in calc.py return for 2 and 3?",
        "Which function calls vat()?",
        "What does `make_user` return?",
        "Run check.py and tell me what it prints.",
    ] {
        assert!(!asks_for_work(prompt), "{prompt}");
    }
}

#[test]
fn files_to_run_are_those_after_run_or_before_fails() {
    assert_eq!(
        files_to_run("Fix ages.py and run test_ages.py."),
        ["test_ages.py"]
    );
    assert_eq!(
        files_to_run("python3 test_calc.py fails. Fix the bug in calc.py."),
        ["test_calc.py"]
    );
    assert_eq!(
        files_to_run("test_loop.py fails. Fix first_n in loop.py, then run the test."),
        ["test_loop.py"]
    );
    assert!(files_to_run("Rename old_name to double in util.py and main.py.").is_empty());
}

#[test]
fn a_test_that_failed_last_is_met_until_it_passes() {
    let prompt = "Fix ages.py and run test_ages.py.";
    let mut work = TurnWork::new(prompt);
    work.set_files("ages.py\ntest_ages.py");
    work.record(
        &call("edit_file", serde_json::json!({"path": "ages.py"})),
        ToolStatus::Ok,
        None,
    );
    let run = call(
        "bash",
        serde_json::json!({"command": "python3 test_ages.py"}),
    );
    work.record(&run, ToolStatus::Error, None);
    let text = work
        .next_reminder("You need to ensure that is_adult returns True.", None)
        .expect("the test failed");
    assert!(text.contains("`python3 test_ages.py` failed"), "{text}");
    assert_eq!(chosen_tool(&text), Some(ToolName::EditFile));
    // Once it passes, nothing is said; another command's failure is not the test's.
    let mut passed = TurnWork::new(prompt);
    passed.set_files("ages.py\ntest_ages.py");
    passed.record(
        &call("edit_file", serde_json::json!({"path": "ages.py"})),
        ToolStatus::Ok,
        None,
    );
    passed.record(&run, ToolStatus::Error, None);
    passed.record(&run, ToolStatus::Ok, None);
    assert_eq!(passed.test_fails(), None);
    passed.record(
        &call("bash", serde_json::json!({"command": "cargo test"})),
        ToolStatus::Error,
        None,
    );
    assert_eq!(passed.test_fails(), None);
}

#[test]
fn only_a_reminder_naming_a_tool_chooses_it() {
    for tool in ToolName::ALL {
        assert_eq!(chosen_tool(&call_now(tool)), Some(tool));
    }
    for text in [
        "Call it now.",
        "Call edit_file (or write_file) now.",
        "Call nothing_known now.",
        crate::verify::VERIFY_ANSWER,
    ] {
        assert_eq!(chosen_tool(text), None, "{text}");
    }
}

#[test]
fn advice_is_met_once_and_only_before_any_change() {
    let mut work = TurnWork::new("python3 test_calc.py fails. Fix calc.py.");
    let advice = "Change the minus to a plus:\n```python\nreturn a + b\n```";
    let text = work.next_reminder(advice, None).expect("advice");
    assert!(text.starts_with(DO_IT_PREFIX), "{text}");
    assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
    assert_eq!(work.next_reminder(advice, None), None);
    let mut work = TurnWork::new("Make the tests pass.");
    let text = work
        .next_reminder("You can run `pytest` to see them fail.", None)
        .expect("command advice");
    assert_eq!(chosen_tool(&text), Some(ToolName::Bash), "{text}");
    // Steps for the user are advice even after a change.
    let mut work = TurnWork::new("Add an is_empty() method to Stack in stack.py.");
    work.record(
        &call("edit_file", serde_json::json!({"path": "stack.py"})),
        ToolStatus::Ok,
        None,
    );
    let steps = "You can follow these steps:\n1. Open the `stack.py` file in a text editor.";
    let text = work.next_reminder(steps, None).expect("steps");
    assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
    // A question is answered, even with code in the answer.
    let mut work = TurnWork::new("How do I run the app?");
    assert_eq!(work.next_reminder("```sh\npython3 app.py\n```", None), None);
    // A described call is advice even after a change.
    let mut work = TurnWork::new("Add a function sub to calc.py.");
    work.record(
        &call("write_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        None,
    );
    let text = work
        .next_reminder(
            "You can use the `write_file` function. Here's the updated code: ...",
            None,
        )
        .expect("a described call");
    assert!(text.contains("describes a write_file call"), "{text}");
    let mut work = TurnWork::new("What does greet() return?");
    assert_eq!(
        work.next_reminder("It returns 'Hello, Cortex'.", None),
        None
    );
}

#[test]
fn a_named_file_left_untouched_is_listed() {
    let mut work =
        TurnWork::new("Change the timeout from 30 to 45 in both client.py and worker.py.");
    work.record(
        &call("edit_file", serde_json::json!({"path": "client.py"})),
        ToolStatus::Ok,
        None,
    );
    let text = work.next_reminder("Done.", None).expect("untouched");
    assert!(
        text.contains("changed client.py only") && text.contains("worker.py needs"),
        "{text}"
    );
    work.record(
        &call("edit_file", serde_json::json!({"path": "./worker.py"})),
        ToolStatus::Ok,
        None,
    );
    let mut both = work.clone();
    both.sent.clear();
    assert_eq!(both.untouched_files(), None);
}

#[test]
fn a_change_never_tested_is_met_with_the_command_the_task_named() {
    let mut work =
        TurnWork::new("python3 test_calc.py fails. Fix the bug in calc.py and run the test.");
    work.record(
        &call("edit_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        None,
    );
    // test_calc.py is named, but it is the test to run, not a file to change.
    work.record(
        &call("edit_file", serde_json::json!({"path": "x"})),
        ToolStatus::Error,
        None,
    );
    let text = work.next_reminder("Fixed.", None).expect("a reminder");
    assert!(text.contains("test_calc.py"), "{text}");
    let mut ran = TurnWork::new("python3 test_calc.py fails. Fix calc.py.");
    ran.record(
        &call("edit_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        None,
    );
    ran.record(
        &call(
            "bash",
            serde_json::json!({"command": "python3 test_calc.py"}),
        ),
        ToolStatus::Ok,
        None,
    );
    assert_eq!(ran.next_reminder("Fixed.", None), None);
}

#[test]
fn test_commands_come_from_the_prompt_or_the_workspace() {
    assert_eq!(
        test_command("Run `cargo test` after.", &[]),
        Some("cargo test".into())
    );
    assert_eq!(test_command("then run pytest", &[]), Some("pytest".into()));
    let files = vec!["src/app.py".to_owned(), "tests/test_app.py".to_owned()];
    assert_eq!(
        test_command("Fix app.py", &files),
        Some("python3 tests/test_app.py".into())
    );
    assert_eq!(test_command("Fix app.py", &["app.py".to_owned()]), None);
}

#[test]
fn a_question_for_a_file_or_a_count_needs_one_in_the_answer() {
    let mut work =
        TurnWork::new("Which file defines the function parse_config? Answer with its path.");
    let text = work
        .next_reminder(
            "I found the file that defines the function `parse_config`.",
            None,
        )
        .expect("unanswered");
    assert!(text.contains("the file's path"), "{text}");
    let mut work = TurnWork::new("Which file defines parse_config?");
    assert_eq!(work.next_reminder("src/config/loader.py", None), None);
    let mut work = TurnWork::new("How many TODO comments are there?");
    assert!(work.next_reminder("I counted them.", None).is_some());
    let mut work = TurnWork::new("How many TODO comments are there?");
    assert_eq!(work.next_reminder("There are three.", None), None);
}

#[test]
fn a_definition_replaced_instead_of_kept_is_met_until_it_is_back() {
    let mut work = TurnWork::new("Add a function sub(a, b) to calc.py.");
    let replaced = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n-def add(a, b):\n+def sub(a, b):\n     return a + b\n";
    work.record(
        &call("edit_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        Some(replaced),
    );
    let text = work.next_reminder("Added sub.", None).expect("removed");
    assert!(
        text.starts_with(DO_IT_PREFIX) && text.contains("`add`"),
        "{text}"
    );
    assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
    let restored =
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,0 +1,3 @@\n+def add(a, b):\n+    return a + b\n+\n";
    let mut back = work.clone();
    back.sent.clear();
    back.record(
        &call("edit_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        Some(restored),
    );
    assert_eq!(back.removed_by_mistake(), None);
    // A removal the task asks for is not a mistake.
    let mut asked = TurnWork::new("Remove the unused function add from calc.py.");
    asked.record(
        &call("edit_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        Some(replaced),
    );
    assert_eq!(asked.removed_by_mistake(), None);
    // Named as a place, not as something to remove, it is to be kept.
    let section = TurnWork::new("Add a section '## Usage' to README.md, after Install.");
    assert!(!section.asks_to_remove("Install"));
    assert!(TurnWork::new("Rename old_name to double.").asks_to_remove("old_name"));
}

#[test]
fn renames_are_read_from_the_prompt() {
    let pair = |a: &str, b: &str| Some((a.to_owned(), b.to_owned()));
    assert_eq!(
        rename_pair("Rename old_name to double in util.py and main.py."),
        pair("old_name", "double")
    );
    assert_eq!(
        rename_pair("Please rename the function `fetch()` to `load` everywhere"),
        pair("fetch", "load")
    );
    assert_eq!(rename_pair("Rename a.py to b.py"), None);
    assert_eq!(rename_pair("Fix the rename logic"), None);
}

#[test]
fn file_names_are_read_from_the_prompt() {
    assert_eq!(
        named_files("Rename old_name to double in util.py and main.py. See https://x.io/a.html"),
        ["util.py", "main.py"]
    );
    assert_eq!(
        named_files("Version 1.2 of e.g. the app"),
        Vec::<String>::new()
    );
    assert_eq!(
        named_files("Fix first_n in loop.py so it returns 1..n inclusive"),
        ["loop.py"]
    );
}
