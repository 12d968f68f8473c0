//! Tests of the answer checks and of how they read the task's words.

use super::words::*;
use super::*;
use cortex_protocol::{CallId, NextReply};

mod after_calls;

/// The one tool a reminder makes the next reply call, if any.
fn chosen_tool(reminder: &Reminder) -> Option<ToolName> {
    match reminder.next {
        NextReply::Tool { tool } => Some(tool),
        _ => None,
    }
}

/// A call to `name` with `args`; an edit's or write's text, which the
/// checks do not read, is filled in when left out, so that it parses.
fn call(name: &str, mut args: serde_json::Value) -> ToolCallRequest {
    let filler = match name {
        "edit_file" => serde_json::json!({"old_string": "a", "new_string": "b"}),
        "write_file" => serde_json::json!({"content": ""}),
        _ => serde_json::json!({}),
    };
    if let (Some(args), Some(filler)) = (args.as_object_mut(), filler.as_object()) {
        for (key, value) in filler {
            args.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
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
        "What does the add function return for 2 and 3?",
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
    let run = call(
        "bash",
        serde_json::json!({"command": "python3 test_ages.py"}),
    );
    // ages.py edited, then the test run with `status`.
    let edited_then_ran = |status| {
        let mut work = TurnWork::new(prompt);
        work.set_files("ages.py\ntest_ages.py");
        work.record(
            &call("edit_file", serde_json::json!({"path": "ages.py"})),
            ToolStatus::Ok,
            None,
            None,
        );
        work.record(&run, status, None, None);
        work
    };
    let mut work = edited_then_ran(ToolStatus::Error);
    let text = work
        .next_reminder("You need to ensure that is_adult returns True.", None)
        .expect("the test failed");
    assert!(text.contains("`python3 test_ages.py` failed"), "{text}");
    assert_eq!(chosen_tool(&text), Some(ToolName::EditFile));
    // Once it passes, nothing is said; another command's failure is not the test's.
    let mut passed = edited_then_ran(ToolStatus::Error);
    passed.record(&run, ToolStatus::Ok, None, None);
    assert_eq!(passed.test_fails(""), None);
    passed.record(
        &call("bash", serde_json::json!({"command": "cargo test"})),
        ToolStatus::Error,
        None,
        None,
    );
    assert_eq!(passed.test_fails(""), None);
    // The fixed file shown in the answer: write it.
    let mut shown = edited_then_ran(ToolStatus::Error);
    let text = shown
        .next_reminder("Add the import:\n```python\nimport os\n```", None)
        .expect("the test failed");
    assert_eq!(chosen_tool(&text), Some(ToolName::WriteFile), "{text}");
}

#[test]
fn a_tool_output_given_back_as_the_answer_is_met_once_with_the_task() {
    let task = "What does Square.describe() return for a square of side 2?";
    let mut work = TurnWork::new(task);
    let echo =
        "<tool_response>\nnot made: the task asks a question and no change\n</tool_response>";
    let text = work.next_reminder(echo, None).expect("echo");
    assert!(
        text.contains("not an answer") && text.ends_with(task),
        "{text}"
    );
    assert_eq!(
        chosen_tool(&text),
        None,
        "an answer, not a call, is wanted: {text}"
    );
    assert_eq!(work.next_reminder(echo, None), None, "once a turn");
    let mut work = TurnWork::new(task);
    assert_eq!(
        work.next_reminder("{'kind': 'square', 'side': 2}", None),
        None
    );
}

#[test]
fn advice_is_met_once_and_only_before_any_change() {
    let mut work = TurnWork::new("python3 test_calc.py fails. Fix calc.py.");
    let advice = "Change the minus to a plus:\n```python\nreturn a + b\n```";
    let text = work.next_reminder(advice, None).expect("advice");
    assert!(text.starts_with(DO_IT_PREFIX), "{text}");
    // Code to paste is met with a forced write_file; words alone, an edit.
    assert_eq!(chosen_tool(&text), Some(ToolName::WriteFile), "{text}");
    assert_eq!(work.next_reminder(advice, None), None);
    let mut work = TurnWork::new("python3 test_calc.py fails. Fix calc.py.");
    let text = work
        .next_reminder("Replace the minus with a plus in calc.py.", None)
        .expect("advice in words");
    assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
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
        None,
    );
    let mut narrated = work.clone();
    let text = work
        .next_reminder(
            "You can use the `write_file` function. Here's the updated code:\n```python\n\
             def sub(a, b):\n    return a - b\n```",
            None,
        )
        .expect("a described call");
    assert!(text.contains("describes a write_file call"), "{text}");
    // The words that came with its own call, said again with nothing to
    // paste, are no advice.
    let again = narrated.next_reminder(
        "You can use the `write_file` function. Here's how you can do it:",
        None,
    );
    assert!(
        again.as_deref().is_none_or(|t| !t.contains("describes")),
        "{again:?}"
    );
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
        None,
    );
    assert!(work.focus().in_focus("client.py"));
    let text = work.next_reminder("Done.", None).expect("untouched");
    assert!(
        text.contains("changed client.py only")
            && text.contains("change the task asks for in worker.py"),
        "{text}"
    );
    // The next edit is made to change worker.py, and only it.
    assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
    assert!(work.focus().in_focus("./worker.py") && !work.focus().in_focus("client.py"));
    work.record(
        &call("edit_file", serde_json::json!({"path": "./worker.py"})),
        ToolStatus::Ok,
        None,
        None,
    );
    assert!(
        work.focus().in_focus("client.py"),
        "any file again after the call"
    );
    let mut both = work.clone();
    both.sent.clear();
    assert_eq!(both.untouched_files(), None);
    // A model that edits by writing whole files is made to write it.
    let mut whole =
        TurnWork::new("Change the timeout from 30 to 45 in both client.py and worker.py.")
            .with_edit_format(EditFormat::Whole);
    whole.record(
        &call("write_file", serde_json::json!({"path": "client.py"})),
        ToolStatus::Ok,
        None,
        None,
    );
    let text = whole.next_reminder("Done.", None).expect("untouched");
    assert_eq!(chosen_tool(&text), Some(ToolName::WriteFile), "{text}");
    // A file named as a reference, not in a list of files to change: asked,
    // not forced, and any file may be edited.
    let prompt = "Fix the import in report.py (mean lives in stats/mathutils.py).";
    assert!(!lists_files(prompt, &named_files(prompt)));
    assert!(lists_files(
        "Rename f in a.py, b.py.",
        &named_files("Rename f in a.py, b.py.")
    ));
    let mut reference = TurnWork::new(prompt);
    reference.record(
        &call("edit_file", serde_json::json!({"path": "report.py"})),
        ToolStatus::Ok,
        None,
        None,
    );
    let text = reference.next_reminder("Done.", None).expect("untouched");
    assert!(
        text.contains("If stats/mathutils.py needs a change too"),
        "{text}"
    );
    assert_eq!(chosen_tool(&text), None, "{text}");
    assert!(reference.focus().in_focus("report.py"));
}

#[test]
fn a_test_the_task_asks_to_write_is_run_and_may_be_what_to_fix() {
    let prompt = "Write a test file test_slug.py that checks slugify('Hello World') == \
                  'hello-world' with an assert, and run it with python3.";
    assert_eq!(
        test_command(prompt, &[]),
        Some("python3 test_slug.py".into())
    );
    let write = call("write_file", serde_json::json!({"path": "test_slug.py"}));
    let mut work = TurnWork::new(prompt);
    work.record(&write, ToolStatus::Ok, None, None);
    let text = work.next_reminder("", None).expect("never run");
    assert!(text.contains("`python3 test_slug.py`"), "{text}");
    work.record(
        &call(
            "bash",
            serde_json::json!({"command": "python3 test_slug.py"}),
        ),
        ToolStatus::Error,
        None,
        None,
    );
    let text = work.next_reminder("It fails.", None).expect("it failed");
    assert!(
        text.contains("the test you wrote or the code it tests"),
        "{text}"
    );
    // A test the task only says to run stays the task's yardstick, also
    // when a function the task names is called like a verb (scripts/setup's
    // turn: "the add function" read as "add" the test).
    let mut fix = TurnWork::new(
        "python3 test_calc.py fails: add(2, 3) returns -1 instead of 5. Fix the add function \
         in calc.py, then run python3 test_calc.py to check.",
    );
    fix.record(
        &call("edit_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        None,
        None,
    );
    fix.record(
        &call(
            "bash",
            serde_json::json!({"command": "python3 test_calc.py"}),
        ),
        ToolStatus::Error,
        None,
        None,
    );
    let text = fix.next_reminder("It fails.", None).expect("it failed");
    assert!(text.contains("not the test"), "{text}");
}

#[test]
fn an_empty_reply_is_met_once_with_the_task() {
    let mut work = TurnWork::new("Run check.py and tell me what it prints.");
    work.record(
        &call("bash", serde_json::json!({"command": "python3 check.py"})),
        ToolStatus::Ok,
        None,
        None,
    );
    let text = work.next_reminder(" \n", None).expect("empty");
    assert!(text.contains("Run check.py"), "{text}");
    assert_eq!(chosen_tool(&text), None, "{text}");
    assert_eq!(work.next_reminder("", None), None, "once");
    assert_eq!(TurnWork::new("x").next_reminder("55", None), None);
}

#[test]
fn a_change_never_tested_is_met_with_the_command_the_task_named() {
    let mut work =
        TurnWork::new("python3 test_calc.py fails. Fix the bug in calc.py and run the test.");
    work.record(
        &call("edit_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        None,
        None,
    );
    // test_calc.py is named, but it is the test to run, not a file to change.
    work.record(
        &call("edit_file", serde_json::json!({"path": "x"})),
        ToolStatus::Error,
        None,
        None,
    );
    let text = work.next_reminder("Fixed.", None).expect("a reminder");
    assert!(text.contains("test_calc.py"), "{text}");
    let mut ran = TurnWork::new("python3 test_calc.py fails. Fix calc.py.");
    ran.record(
        &call("edit_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        None,
        None,
    );
    ran.record(
        &call(
            "bash",
            serde_json::json!({"command": "python3 test_calc.py"}),
        ),
        ToolStatus::Ok,
        None,
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
    let prompt = "build.sh should write the word ok into out/stamp. Fix it and run it.";
    assert_eq!(test_command(prompt, &[]), Some("sh build.sh".into()));
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
        None,
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
        None,
    );
    assert_eq!(back.removed_by_mistake(), None);
    // A removal the task asks for is not a mistake.
    let mut asked = TurnWork::new("Remove the unused function add from calc.py.");
    asked.record(
        &call("edit_file", serde_json::json!({"path": "calc.py"})),
        ToolStatus::Ok,
        Some(replaced),
        None,
    );
    assert_eq!(asked.removed_by_mistake(), None);
    // Named as a place, not as something to remove, it is to be kept.
    let section = TurnWork::new("Add a section '## Usage' to README.md, after Install.");
    assert!(!section.asks_to_remove("Install"));
    assert!(TurnWork::new("Rename old_name to double.").asks_to_remove("old_name"));
}

#[test]
fn renames_are_read_from_the_prompt() {
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        rename_pairs("Rename old_name to double in util.py and main.py."),
        [pair("old_name", "double")]
    );
    assert_eq!(
        rename_pairs("Please rename the function `fetch()` to `load` everywhere"),
        [pair("fetch", "load")]
    );
    assert_eq!(
        rename_pairs(
            "In temps.py, rename the parameter c to celsius and the variable f to fahrenheit."
        ),
        [pair("c", "celsius"), pair("f", "fahrenheit")]
    );
    assert!(rename_pairs("Rename a.py to b.py").is_empty());
    assert!(rename_pairs("Fix the rename logic").is_empty());
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

#[test]
fn the_removal_note_is_left_out_only_for_what_the_task_asks_to_remove() {
    let note = format!(
        "Edited util.py (1 replacement)\n{} `old_name` from the file. If the task did not ask \
         for that (a rename or a removal), put it back beside the new code.",
        cortex_tools::defs::REMOVED_NOTE
    );
    let rename = TurnWork::new("Rename old_name to double in util.py and main.py.");
    let answer = crate::answer::Answer::ok(note.clone()).read_in_turn(&rename);
    assert_eq!(answer.output, "Edited util.py (1 replacement)");
    let add = TurnWork::new("Add a function double to util.py.");
    let answer = crate::answer::Answer::ok(note.clone()).read_in_turn(&add);
    assert_eq!(answer.output, note);
}

#[test]
fn the_rename_reminder_lets_the_next_edit_quote_only_the_lines_left() {
    let mut work = TurnWork::new("In temps.py, rename the parameter c to celsius.");
    work.record(
        &call("edit_file", serde_json::json!({"path": "temps.py"})),
        ToolStatus::Ok,
        None,
        None,
    );
    // The lines come as grep's, not read back from the reminder's words.
    let left = RenameLeft {
        said: crate::steer::Said::call(ToolName::EditFile, "the old name is left"),
        lines: vec![
            "temps.py:2:    f = c * 9 / 5 + 32".to_owned(),
            "./temps.py:4:    return c".to_owned(),
        ],
    };
    let text = work.next_reminder("Done.", Some(left)).expect("a reminder");
    assert_eq!(&*text, "the old name is left");
    assert_eq!(text.kind, ReminderKind::RenameLeft);
    assert_eq!(
        work.focus().lines("temps.py"),
        Some(
            [
                "    f = c * 9 / 5 + 32".to_owned(),
                "    return c".to_owned()
            ]
            .as_slice()
        )
    );
    assert!(!work.focus().in_focus("other.py"));
    work.record(
        &call("edit_file", serde_json::json!({"path": "temps.py"})),
        ToolStatus::Ok,
        None,
        None,
    );
    assert_eq!(work.focus().lines("temps.py"), None);
    assert!(work.focus().in_focus("other.py"));
}

#[test]
fn a_question_about_what_code_returns_is_run_once() {
    let prompt = "What does Square.describe() return for a square of side 2? Answer with the \
                  Python value.";
    assert!(asks_what_code_does(prompt));
    assert!(!asks_what_code_does(
        "What does the README say about installing?"
    ));
    assert!(!asks_what_code_does("What does add() in calc.py return?"));
    let mut work = TurnWork::new(prompt);
    work.set_files("shapes.py");
    let text = work
        .next_reminder("It returns a dictionary with two keys.", None)
        .expect("run it");
    assert_eq!(chosen_tool(&text), Some(ToolName::Bash), "{text}");
    assert_eq!(
        work.next_reminder("Still a dictionary.", None),
        None,
        "once"
    );
    // Once something ran, the answer stands.
    let mut ran = TurnWork::new(prompt);
    ran.set_files("shapes.py");
    ran.record(
        &call(
            "bash",
            serde_json::json!({"command": "python3 -c 'print(1)'"}),
        ),
        ToolStatus::Ok,
        None,
        None,
    );
    assert_eq!(
        ran.next_reminder("{'kind': 'square', 'side': 2}", None),
        None
    );
    // Not for code there is no interpreter of here.
    let mut rust = TurnWork::new("What does area() return for 2?");
    rust.set_files("src/lib.rs");
    assert_eq!(rust.next_reminder("4", None), None);
}

#[test]
fn an_answer_without_the_output_it_was_asked_for_is_met_once() {
    let mut work =
        TurnWork::new("Run check.py and tell me what it prints. Answer with the output only.");
    let run = call("bash", serde_json::json!({"command": "python3 check.py"}));
    work.record(&run, ToolStatus::Ok, None, Some("55\n[exit code 0]"));
    let text = work
        .next_reminder("```bash\npython check.py\n```", None)
        .expect("no output in it");
    assert!(text.contains("`python3 check.py` printed"), "{text}");
    assert_eq!(work.next_reminder("Still nothing.", None), None, "once");
    let mut answered = TurnWork::new("Run check.py and tell me what it prints.");
    answered.record(&run, ToolStatus::Ok, None, Some("55\n[exit code 0]"));
    assert_eq!(answered.next_reminder("It prints 55.", None), None);
}

#[test]
fn a_question_for_an_exception_needs_its_name() {
    let prompt = "Which exception does parse_age raise for a negative age?";
    let mut work = TurnWork::new(prompt);
    let text = work
        .next_reminder("I found the exception in people.py at line 4.", None)
        .expect("no name");
    assert!(text.contains("the exception's name"), "{text}");
    assert_eq!(
        TurnWork::new(prompt).next_reminder("It raises ValueError.", None),
        None
    );
}

#[test]
fn a_question_for_a_function_needs_a_name_from_the_code() {
    let prompt = "Which function calls vat()? Answer with the function's name.";
    let asked = |answer: &str| {
        let mut work = TurnWork::new(prompt);
        work.set_files("billing/__init__.py\nbilling/invoice.py\nbilling/tax.py");
        work.next_reminder(answer, None)
    };
    let narrated = "The function call `grep` is used to search for the string \"vat\" in the \
                    files within the `billing` directory.";
    let text = asked(narrated).expect("no name");
    assert!(text.contains("does not give the name"), "{text}");
    assert!(asked("The function `vat` is called there.").is_some());
    assert!(asked("It is in `invoice`.").is_some());
    // A plan of steps naming files only.
    assert!(asked("`vat()` is defined in `billing/tax.py`. Here's the call:").is_some());
    for named in [
        "invoice_total calls it.",
        "`total` calls vat().",
        "It is total() in billing/invoice.py.",
        "InvoiceBuilder does.",
    ] {
        assert_eq!(asked(named), None, "{named}");
    }
}

#[test]
fn a_question_counting_files_gives_the_pattern_that_lists_them() {
    let cases = [
        (
            "How many .py files are in the src folder?",
            Some("src/**/*.py"),
        ),
        (
            "How many *.rs files are under crates/?",
            Some("crates/**/*.rs"),
        ),
        ("how many `.md` files does the repo have?", Some("*.md")),
        (
            "How many .json files are in the /etc directory?",
            Some("*.json"),
        ),
        ("How many lines of main.py contain a # comment?", None),
        ("How many functions are in the .py files in lib?", None),
        ("Which .py files import os?", None),
    ];
    for (prompt, pattern) in cases {
        assert_eq!(
            counted_files_pattern(prompt).as_deref(),
            pattern,
            "{prompt}"
        );
    }
}

#[test]
fn a_write_to_the_file_to_run_is_refused_for_as_long_as_the_task_names_the_fix_elsewhere() {
    let work = |prompt: &str| {
        let mut work = TurnWork::new(prompt);
        work.set_files("calc.py\ntest_calc.py\nbuild.sh");
        work
    };
    let held = work("python3 test_calc.py fails. Fix the bug in calc.py and run the test.");
    assert!(held.holds_write_to_run("test_calc.py"));
    assert!(held.holds_write_to_run("./test_calc.py"));
    assert!(!held.holds_write_to_run("calc.py"));
    // No other file named for the fix: refused once, then the model's call.
    let mut once = work("python3 test_calc.py fails. Fix it.");
    assert!(!once.holds_write_to_run("test_calc.py"));
    assert!(once.refuses_write_to_run("test_calc.py"));
    assert!(!once.refuses_write_to_run("test_calc.py"));
    // A test the task asks to write, or one not there yet, is written.
    let write = work("Write test_calc.py for add() in calc.py, then run python3 test_calc.py.");
    assert!(!write.holds_write_to_run("test_calc.py"));
    let absent = work("Fix calc.py so that python3 test_new.py passes.");
    assert!(!absent.holds_write_to_run("test_new.py"));
    // A script the task says to fix and run is not held.
    let script = work("Fix build.sh and run bash build.sh.");
    assert!(!script.holds_write_to_run("build.sh"));
}
