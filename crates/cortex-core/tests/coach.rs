//! The answer checks for small models (issue 19, items 2, 5, 7 and 8, and
//! the failure classes of docs/BENCHMARKS.md's task set): read before write, advice instead of
//! action, a definition replaced instead of kept, a named file left
//! untouched, a rename left half done, a change never tested. Each check goes back to the model once; a model
//! without `verify_answers` never gets them. This session's refusals and
//! checks of what the model wrote back are in `coach_refusals.rs`.

mod coach_support;
mod common;

use coach_support::*;
use common::*;
use cortex_core::TurnOutcome;
use cortex_model::ToolChoice;
use cortex_protocol::{EventKind, ToolName};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn advice_goes_back_and_the_next_reply_must_act() {
    let script = json!({"responses": [
        // In words: code to paste would be met with a forced write_file.
        text("Replace the minus with a plus in calc.py: `return a + b`."),
        read("calc.py"),
        edit("calc.py", "a - b", "a + b"),
        bash("python3 test_calc.py"),
        text("Fixed; the test passes."),
    ]});
    let ran = run_fix(true, script).await;
    assert_eq!(
        ran.outcome,
        TurnOutcome::Completed { rounds: 5 },
        "{:?} {:?}",
        ran.reminders,
        ran.results
    );
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].contains("edit_file"),
        "{:?}",
        ran.reminders
    );
    assert_eq!(ran.choices[1], ToolChoice::Tool(ToolName::EditFile));
    assert!(file(&ran, "calc.py").contains("a + b"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_never_tested_is_met_with_the_test_to_run() {
    let script = json!({"responses": [
        read("calc.py"),
        edit("calc.py", "a - b", "a + b"),
        text("Fixed."),
        bash("python3 test_calc.py"),
        text("Fixed; the test prints ok."),
    ]});
    let ran = run_fix(true, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 5 });
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].contains("`python3 test_calc.py`"),
        "{:?}",
        ran.reminders
    );
    assert_eq!(ran.choices[3], ToolChoice::Tool(ToolName::Bash));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_file_left_untouched_is_listed_once() {
    let files = [
        ("client.py", "TIMEOUT = 30\n"),
        ("worker.py", "TIMEOUT = 30\n"),
    ];
    let prompt = "Change the timeout from 30 to 45 in both client.py and worker.py.";
    let script = json!({"responses": [
        read("client.py"),
        edit("client.py", "30", "45"),
        text("Done."),
        read("worker.py"),
        edit("worker.py", "30", "45"),
        text("Done, both."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 6 });
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].contains("make the change the task asks for in worker.py"),
        "{:?}",
        ran.reminders
    );
    // The round after it must edit (told in words, a small model gives its
    // answer again).
    assert_eq!(ran.choices[3], ToolChoice::Tool(ToolName::EditFile));
    for path in ["client.py", "worker.py"] {
        assert_eq!(file(&ran, path), "TIMEOUT = 45\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_an_unread_or_changed_file_is_refused_with_its_content() {
    let script = json!({"responses": [
        // Invented old_string, never read: refused, with the file shown.
        edit("calc.py", "fn add(a: i32)", "x"),
        // Quoting what it was shown: runs.
        edit("calc.py", "a - b", "a + b"),
        // A command changes the file behind the model's back (not the
        // test: a change after it passed is refused for another reason)...
        bash("echo '# note' >> calc.py"),
        // ...so the next edit is refused again, with the new content.
        edit("calc.py", "# note", "# checked"),
        edit("calc.py", "# note", "# checked"),
        bash("python3 test_calc.py"),
        text("Fixed and tested."),
    ]});
    let files = [("calc.py", CALC), ("test_calc.py", TEST)];
    let ran = run(true, &files, "Fix the bug in calc.py.", script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 7 });
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
    assert_eq!(
        file(&ran, "calc.py"),
        "def add(a, b):\n    return a + b\n# checked\n"
    );
    assert_eq!(ran.results.len(), 6, "{:?}", ran.results);
    let (status, output) = &ran.results[0];
    assert_eq!(status, "error");
    assert!(
        output.contains("have not read it") && output.contains("def add(a, b):"),
        "{output}"
    );
    assert_eq!(ran.results[1].0, "ok", "{:?}", ran.results[1]);
    let (status, output) = &ran.results[3];
    assert_eq!(status, "error");
    assert!(output.contains("# note"), "{output}");
    assert_eq!(ran.results[4].0, "ok", "{:?}", ran.results[4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_models_get_no_checks() {
    let script = json!({"responses": [
        edit("calc.py", "a - b", "a + b"),
        text("Replace the minus with a plus:\n```python\nreturn a + b\n```"),
    ]});
    let ran = run_fix(false, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 2 });
    assert_eq!(ran.results[0].0, "ok", "{:?}", ran.results);
    assert!(ran.reminders.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_answered_after_reading_gets_no_checks() {
    let script = json!({"responses": [
        read("calc.py"),
        text("add() returns a - b, which is a bug."),
    ]});
    let files = [("calc.py", CALC)];
    let ran = run(true, &files, "What does add() in calc.py return?", script).await;
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 2 });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_left_half_done_lists_what_remains_from_the_workspace() {
    let files = [
        ("util.py", "def old_name(x):\n    return x * 2\n"),
        (
            "main.py",
            "from util import old_name\nprint(old_name(21))\n",
        ),
    ];
    let prompt = "Rename old_name to double in util.py and main.py.";
    let script = json!({"responses": [
        read("util.py"),
        edit("util.py", "old_name", "double"),
        read("main.py"),
        edit("main.py", "old_name(21)", "double(21)"),
        text("Renamed."),
        json!({"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "main.py", "old_string": "import old_name", "new_string": "import double"}}]}),
        text("Renamed everywhere."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 7 });
    // The rename removed `old_name` as asked: no note tells the model to
    // put it back (told so, a small model undid the rename).
    assert_eq!(
        ran.results[1].1, "Edited util.py (1 replacement)",
        "{:?}",
        ran.results
    );
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    let reminder = &ran.reminders[0];
    assert!(
        reminder.contains("renames `old_name` to `double`, but the old name still occurs (1 line)")
            && reminder.contains("main.py:1:from util import old_name"),
        "{reminder}"
    );
    assert_eq!(ran.choices[5], ToolChoice::Tool(ToolName::EditFile));
    assert!(!file(&ran, "main.py").contains("old_name"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_definition_replaced_instead_of_kept_is_noted_and_must_come_back() {
    let files = [("calc.py", "def add(a, b):\n    return a + b\n")];
    let prompt = "Add a function sub(a, b) that returns a - b to calc.py.";
    let script = json!({"responses": [
        read("calc.py"),
        edit("calc.py", "def add(a, b):", "def sub(a, b):"),
        // Refused once before it runs; made when repeated.
        edit("calc.py", "def add(a, b):", "def sub(a, b):"),
        text("Added sub."),
        edit("calc.py", "def sub(a, b):\n    return a + b\n",
             "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"),
        text("Added sub beside add."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 6 });
    assert_eq!(ran.results[1].0, "error", "{:?}", ran.results);
    assert!(
        ran.results[1]
            .1
            .starts_with("not made: this edit_file would remove the definition of `add`")
            && ran.results[1].1.contains("     1\tdef add(a, b):"),
        "{:?}",
        ran.results
    );
    // Made the second time: the result says it, the answer check once more.
    assert!(
        ran.results[2].1.contains("removed the definition of `add`"),
        "{:?}",
        ran.results
    );
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].contains("put `add` back in calc.py"),
        "{:?}",
        ran.reminders
    );
    // The round after it must call the edit tool, not just any tool.
    assert_eq!(ran.choices[4], ToolChoice::Tool(ToolName::EditFile));
    let calc = file(&ran, "calc.py");
    assert!(
        calc.contains("def add") && calc.contains("def sub"),
        "{calc}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_would_drop_a_definition_is_refused_once_with_the_file() {
    let files = [("calc.py", "def add(a, b):\n    return a + b\n")];
    let prompt = "Add a function sub(a, b) that returns a - b to calc.py.";
    let write = |content: &str| {
        json!({"tool_calls": [{"name": "write_file", "arguments":
            {"path": "calc.py", "content": content}}]})
    };
    let only_sub = write("def sub(a, b):\n    return a - b\n");
    let both = write("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n");
    let script = json!({"responses": [
        read("calc.py"), only_sub.clone(), both, text("Added sub beside add."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 4 });
    let (status, refusal) = &ran.results[1];
    assert_eq!(status, "error");
    assert!(
        refusal.contains("remove the definition of `add`")
            && refusal.contains("write_file replaces the whole file")
            && refusal.contains("     2\t    return a + b"),
        "{refusal}"
    );
    // Not shorter than the file: no fragment to add with an edit.
    assert!(!refusal.contains("call edit_file"), "{refusal}");
    assert_eq!(ran.results[2].0, "ok", "{:?}", ran.results);
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
    let calc = file(&ran, "calc.py");
    assert!(
        calc.contains("def add") && calc.contains("def sub"),
        "{calc}"
    );

    // A model without the answer checks (a hosted one) is not second-guessed.
    let script = json!({"responses": [read("calc.py"), only_sub, text("Done.")]});
    let ran = run(false, &files, prompt, script).await;
    assert_eq!(ran.results[1].0, "ok", "{:?}", ran.results);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fragment_that_would_drop_sections_is_shown_the_edit_that_adds_it() {
    let readme = "# tool\n\nA small tool.\n\n## Install\n\npip install tool\n";
    let files = [("README.md", readme)];
    let prompt =
        "Add a section '## Usage' to README.md, after Install, that says: run `tool FILE`.";
    let script = json!({"responses": [
        read("README.md"),
        {"tool_calls": [{"name": "write_file", "arguments":
            {"path": "README.md", "content": "## Usage\n\nrun `tool FILE`\n"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "README.md",
            "old_string": "pip install tool\n",
            "new_string": "pip install tool\n\n## Usage\n\nrun `tool FILE`\n"}}]},
        text("Added the Usage section after Install."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    let (status, refusal) = &ran.results[1];
    assert_eq!(status, "error");
    assert!(
        refusal.contains("remove the definition of `Install`, `tool`")
            && refusal.contains("Or, to add to it, call edit_file: quote the line"),
        "{refusal}"
    );
    assert_eq!(ran.results[2].0, "ok", "{:?}", ran.results);
    assert_eq!(
        file(&ran, "README.md"),
        format!("{readme}\n## Usage\n\nrun `tool FILE`\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_not_answered_by_changing_the_code() {
    let script = json!({"responses": [
        read("calc.py"),
        edit("calc.py", "a - b", "a + b"),
        text("add() returns a - b."),
        bash("python3 -c 'from calc import add; print(add(2, 3))'"),
        text("-1"),
    ]});
    let prompt = "What does add() in calc.py return for 2 and 3?";
    let ran = run(true, &[("calc.py", CALC)], prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 5 });
    // A value asked for is worked out by running the code, once.
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert_eq!(ran.choices[3], ToolChoice::Tool(ToolName::Bash));
    assert_eq!(ran.results[2].0, "ok", "{:?}", ran.results);
    assert!(ran.results[2].1.contains("-1"), "{:?}", ran.results);
    assert_eq!(ran.results[1].0, "error", "{:?}", ran.results);
    assert!(
        ran.results[1]
            .1
            .contains("the task asks a question and no change"),
        "{:?}",
        ran.results
    );
    assert_eq!(file(&ran, "calc.py"), CALC);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_test_the_task_says_to_run_is_not_changed_at_first() {
    let tests = "from calc import add\nassert add(2, 3) == 5\nprint('ok')\n";
    let script = json!({"responses": [
        read("test_calc.py"),
        edit("test_calc.py", "== 5", "== -1"),
        read("calc.py"),
        edit("calc.py", "a - b", "a + b"),
        bash("python3 test_calc.py"),
        text("Fixed add; the test prints ok."),
    ]});
    let prompt = "Fix the bug in calc.py and run test_calc.py.";
    let ran = run(
        true,
        &[("calc.py", CALC), ("test_calc.py", tests)],
        prompt,
        script,
    )
    .await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 6 });
    assert!(
        ran.results[1]
            .1
            .starts_with("not made: the task says to run test_calc.py"),
        "{:?}",
        ran.results
    );
    assert_eq!(file(&ran, "test_calc.py"), tests);
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_that_hands_over_a_call_holds_while_the_call_is_unchanged() {
    let cli = "def usage():\n    return 'Usage: tool [--verbse] FILE'\n";
    let dropped = edit("cli.py", "[--verbse]", "--verbose");
    let script = json!({"responses": [
        read("cli.py"),
        dropped.clone(),
        // The refused call copied back, then the one handed over in words.
        dropped,
        text("To change only that, call edit_file with these arguments: {...}"),
        edit("cli.py", "[--verbse]", "[--verbose]"),
        text("Fixed the typo."),
    ]});
    let prompt = "There is a typo in cli.py: --verbse should be --verbose. Fix it.";
    let ran = run(true, &[("cli.py", cli)], prompt, script).await;
    assert!(
        ran.results[1]
            .1
            .starts_with("not made: the task changes `--verbse`")
            && ran.results[2]
                .1
                .starts_with("not made again (the same call as the one refused above): the task"),
        "{:?}",
        ran.results
    );
    // Each round after a refusal that hands over a call must call its tool.
    assert_eq!(ran.choices[2], ToolChoice::Tool(ToolName::EditFile));
    assert_eq!(ran.choices[3], ToolChoice::Tool(ToolName::EditFile));
    // The handed call given back as text is advice, to be acted on.
    assert!(
        ran.reminders[0].contains("describes a edit_file call"),
        "{:?}",
        ran.reminders
    );
    assert_eq!(ran.choices[4], ToolChoice::Tool(ToolName::EditFile));
    // The next request names the refused call while the refusal holds; not
    // the edit made (its repeat is refused, but drawn again in its place, a
    // reply may undo it).
    let names = |i: usize| -> Vec<(String, Value)> {
        ran.refused[i]
            .iter()
            .map(|c| {
                let args = serde_json::from_str(&c.arguments).expect("arguments");
                (c.name.clone(), args)
            })
            .collect()
    };
    let args = |call: &Value| call["tool_calls"][0]["arguments"].clone();
    let dropped_args = args(&edit("cli.py", "[--verbse]", "--verbose"));
    let made_args = args(&edit("cli.py", "[--verbse]", "[--verbose]"));
    assert!(
        names(0).is_empty() && names(1).is_empty(),
        "{:?}",
        ran.refused
    );
    for i in 2..=4 {
        assert_eq!(names(i), [("edit_file".to_owned(), dropped_args.clone())]);
        // With the call handed over in its place, for a redraw to depart
        // from the refused one towards it.
        let instead = ran.refused[i][0].instead.as_deref().expect("handed over");
        let instead: Value = serde_json::from_str(instead).expect("arguments");
        assert_eq!(instead["path"], "cli.py", "{instead}");
        assert!(
            instead["new_string"]
                .as_str()
                .is_some_and(|s| s.contains("[--verbose]")),
            "{instead}"
        );
    }
    assert!(names(5).is_empty(), "{:?} {made_args}", ran.refused);
    assert_eq!(
        file(&ran, "cli.py"),
        "def usage():\n    return 'Usage: tool [--verbose] FILE'\n",
        "{:?} {:?}",
        ran.results,
        ran.reminders
    );
    // A changed call is the model's to make: refused once per file.
    let script = json!({"responses": [
        read("cli.py"),
        edit("cli.py", "[--verbse]", "--verbose"),
        edit("cli.py", "[--verbse] FILE", "--verbose FILE"),
        text("Fixed the typo."),
    ]});
    let ran = run(true, &[("cli.py", cli)], prompt, script).await;
    assert_eq!(ran.results[2].0, "ok", "{:?}", ran.results);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guess_at_what_a_file_prints_is_checked_by_running_it() {
    let script = json!({"responses": [
        text("45"),
        bash("python3 check.py"),
        text("55"),
    ]});
    let files = [("check.py", "print(sum(range(1, 11)))\n")];
    let prompt = "Run check.py and tell me what it prints.";
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 3 });
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0]
            .contains("The task says to run check.py: Call bash now with `python3 check.py`"),
        "{:?}",
        ran.reminders
    );
    assert_eq!(ran.choices[1], ToolChoice::Tool(ToolName::Bash));
    assert!(ran.results[0].1.starts_with("55\n"), "{:?}", ran.results);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_json_file_written_without_its_opening_brace_is_made_complete() {
    let package = "{\n  \"name\": \"web\",\n  \"scripts\": {\n    \"build\": \"tsc\"\n  }\n}\n";
    let files = [("package.json", package)];
    let prompt = "Add a test script \"jest\" to package.json.";
    let body = "  \"name\": \"web\",\n  \"scripts\": {\n    \"build\": \"tsc\",\n    \"test\": \"jest\"\n  }\n}\n";
    let script = json!({"responses": [
        read("package.json"),
        {"tool_calls": [{"name": "write_file", "arguments":
            {"path": "package.json", "content": body}}]},
        text("Added the test script."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.results[1].0, "ok", "{:?}", ran.results);
    assert!(
        ran.results[1].1.contains("opening `{`; it was added"),
        "{:?}",
        ran.results
    );
    assert_eq!(file(&ran, "package.json"), format!("{{\n{body}"));
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_would_break_a_data_file_is_refused_once_then_a_broken_file_is_met() {
    let package = "{\n  \"name\": \"web\",\n  \"scripts\": {\n    \"build\": \"tsc\"\n  }\n}\n";
    let files = [("package.json", package)];
    let prompt = "Add a test script \"jest\" to package.json.";
    let fragment = "  \"scripts\": {\n    \"test\": \"jest\"\n  }\n";
    let write = |content: &str| {
        json!({"tool_calls": [{"name": "write_file", "arguments":
            {"path": "package.json", "content": content}}]})
    };
    let fixed = "{\n  \"name\": \"web\",\n  \"scripts\": {\n    \"build\": \"tsc\",\n    \"test\": \"jest\"\n  }\n}\n";
    let script = json!({"responses": [
        read("package.json"),
        // Refused once before it runs; made when repeated, and it breaks the file.
        write(fragment),
        write(fragment),
        text("Here is the file:\n```json\n{}\n```"),
        write(fixed),
        text("Added the test script."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 6 });
    assert_eq!(ran.results[1].0, "error", "{:?}", ran.results);
    assert!(
        ran.results[1].1.starts_with(
            "not made: this write_file would leave package.json no longer parsing as JSON"
        ) && ran.results[1].1.contains("     2\t  \"name\": \"web\","),
        "{:?}",
        ran.results
    );
    // A fragment shorter than the file is shown the edit that adds to it.
    assert!(
        ran.results[1]
            .1
            .contains("Or, to add to it, call edit_file"),
        "{:?}",
        ran.results
    );
    assert!(
        ran.results[2].1.contains("this change broke the file"),
        "{:?}",
        ran.results
    );
    // The answer with the broken file left goes back, the next reply must write it whole.
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].contains("package.json no longer parses"),
        "{:?}",
        ran.reminders
    );
    assert_eq!(ran.choices[4], ToolChoice::Tool(ToolName::WriteFile));
    assert_eq!(file(&ran, "package.json"), fixed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_repeated_until_refused_is_followed_by_the_change_the_task_asks_for() {
    let files = [("calc.py", "def add(a, b):\n    return a - b\n")];
    let prompt = "Fix add in calc.py so that it adds.";
    let script = json!({"responses": [
        read("calc.py"), read("calc.py"), read("calc.py"),
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py",
            "old_string": "    return a - b\n", "new_string": "    return a + b\n"}}]},
        text("add now returns a + b."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 5 });
    assert_eq!(ran.results[2].0, "refused", "{:?}", ran.results);
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].contains("cannot show more than it did"),
        "{:?}",
        ran.reminders
    );
    // The reply after it must make the change.
    assert_eq!(ran.choices[3], ToolChoice::Tool(ToolName::EditFile));
    assert_eq!(file(&ran, "calc.py"), "def add(a, b):\n    return a + b\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_failure_the_task_reports_is_run_before_the_first_round() {
    let script = json!({"responses": [text("Looking.")]});
    let context = |small: bool| {
        let script = script.clone();
        async move {
            let files = [("calc.py", CALC), ("test_calc.py", TEST)];
            let (repo, store, scripted) = parts(&files, &script);
            let (session, _) = one_agent_turn(
                repo.path(),
                store.clone(),
                checked_model(scripted, small),
                FIX,
            )
            .await;
            let events = store.events(session.id(), 0).await.expect("events");
            events
                .iter()
                .find_map(|e| match &e.kind {
                    EventKind::TurnContext { text } => Some(text.clone()),
                    _ => None,
                })
                .unwrap_or_default()
        }
    };
    let small = context(true).await;
    assert!(
        small.contains(
            "The task says test_calc.py fails. `python3 -B test_calc.py`, run now, printed:"
        ) && small.contains("AssertionError")
            && small.contains("[exit code 1]"),
        "{small}"
    );
    // Other models run it themselves when they choose to.
    let other = context(false).await;
    assert!(!other.contains("run now"), "{other}");
}
