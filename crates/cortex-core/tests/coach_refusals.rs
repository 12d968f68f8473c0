//! The answer checks and refusals for small models that read what the
//! model wrote back against what the turn did: a write to the file the task
//! says to run, a quote-only edit, a second copy of a named file, an answer
//! that repeats the harness, a count of files never listed or other than
//! the listing's, a call made and written out again, a change after the
//! test passed.

mod coach_support;
mod common;

use coach_support::*;
use cortex_core::TurnOutcome;
use cortex_model::ToolChoice;
use cortex_protocol::ToolName;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_the_file_to_run_names_the_file_its_traceback_ends_in() {
    let files = [
        (
            "report.py",
            "from mathutils import mean\n\n\ndef summary(values):\n    return f'mean={mean(values)}'\n",
        ),
        ("stats/__init__.py", ""),
        (
            "stats/mathutils.py",
            "def mean(values):\n    return sum(values) / len(values)\n",
        ),
        (
            "run.py",
            "from report import summary\nprint(summary([1, 2, 3]))\n",
        ),
    ];
    let to_run = edit(
        "run.py",
        "from report import summary",
        "from stats.mathutils import mean",
    );
    let script = json!({"responses": [read("run.py"), to_run, text("Done.")]});
    let prompt = "python3 run.py fails with ModuleNotFoundError. Fix the import in report.py.";
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(
        ran.results[1].1,
        "not made: the task says to run run.py, not to change it, and the error is not in \
         run.py: the traceback of its run (above) ends in report.py, line 1 (`from mathutils \
         import mean`). Fix report.py so that run.py passes.",
        "{:?}",
        ran.results
    );
    // Where the traceback ends in the file itself and the task names the
    // file to fix, that file; the refusal holds, and the next request says
    // a write to the test will be refused.
    let to_test = edit("test_calc.py", "== 5", "== -1");
    let script = json!({"responses": [
        read("test_calc.py"),
        to_test.clone(),
        edit("test_calc.py", "== 5", "== -2"),
        text("Done."),
    ]});
    let ran = run_fix(true, script).await;
    let named = "not made: the task says to run test_calc.py, not to change it, and names calc.py \
                 for the change. Change calc.py so that test_calc.py passes.";
    assert_eq!(ran.results[1].1, named, "{:?}", ran.results);
    assert_eq!(ran.results[2].1, named, "{:?}", ran.results);
    assert_eq!(ran.refused[2].len(), 1, "{:?}", ran.refused);
    assert!(ran.refused[2][0].matches(
        "edit_file",
        &to_test["tool_calls"][0]["arguments"].to_string()
    ));
    // After the fix passed the test, the refusal says the task is done
    // (told to change calc.py again, a small model gave its fix back as
    // advice).
    let script = json!({"responses": [
        read("calc.py"),
        edit("calc.py", "a - b", "a + b"),
        bash("python3 -B test_calc.py"),
        read("test_calc.py"),
        to_test.clone(),
        text("Done."),
    ]});
    let ran = run_fix(true, script).await;
    assert_eq!(
        ran.results[4].1,
        "not made: the task says to run test_calc.py, not to change it, and `python3 -B \
         test_calc.py` passed after your change to calc.py. If the test passing is what the \
         task asks for, it is done: answer now, saying what you changed.",
        "{:?}",
        ran.results
    );
    // Naming no file to fix, the model may insist.
    let script = json!({"responses": [
        read("test_calc.py"),
        to_test.clone(),
        to_test,
        text("Done."),
    ]});
    let files = [("calc.py", CALC), ("test_calc.py", TEST)];
    let ran = run(true, &files, "python3 test_calc.py fails. Fix it.", script).await;
    assert!(
        ran.results[1]
            .1
            .ends_with("if test_calc.py itself is wrong, make this call again."),
        "{:?}",
        ran.results
    );
    assert_eq!(ran.results[2].0, "ok", "{:?}", ran.results);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_of_files_given_unchecked_is_met_with_listing_them() {
    let files = [
        ("src/one.py", "x = 1\n"),
        ("src/two.py", "y = 2\n"),
        ("src/deep/three.py", "z = 3\n"),
        ("src/notes.txt", ""),
        ("setup.py", ""),
    ];
    let glob = json!({"tool_calls": [{"name": "glob", "arguments": {"pattern": "src/**/*.py"}}]});
    let script = json!({"responses": [text("2"), glob, text("3")]});
    let prompt = "How many .py files are in the src folder? Answer with a number.";
    let ran = run(true, &files, prompt, script).await;
    assert!(
        ran.reminders[0].contains("Call glob now with the pattern `src/**/*.py`"),
        "{:?}",
        ran.reminders
    );
    assert_eq!(ran.choices[1], ToolChoice::Tool(ToolName::Glob));
    // The pattern lists what the question counts.
    let listed: Vec<&str> = ran.results[0].1.lines().collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert!(
        listed
            .iter()
            .all(|p| p.starts_with("src/") && p.ends_with(".py"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_the_listing_contradicts_goes_back_once() {
    let files = [
        ("src/one.py", "x = 1\n"),
        ("src/two.py", "y = 2\n"),
        ("src/three.py", "z = 3\n"),
        ("src/notes.txt", ""),
    ];
    let glob = json!({"tool_calls": [{"name": "glob", "arguments": {"pattern": "src/**/*.py"}}]});
    let prompt = "How many .py files are in the src folder? Answer with a number.";
    let script = json!({"responses": [
        glob.clone(),
        text("There are 4 .py files in the src folder."),
        text("4"),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.reminders.len(), 1, "{:?}", ran.reminders);
    assert!(
        ran.reminders[0].starts_with("Your answer says 4, and the glob you ran listed 3 paths (")
            && ran.reminders[0].contains("src/two.py"),
        "{:?}",
        ran.reminders
    );
    // Once: the answer given again ends the turn.
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 3 });
    // The count the listing gives, and a question that counts no files,
    // go through.
    let script = json!({"responses": [glob.clone(), text("3 files: one.py, two.py, three.py.")]});
    let ran = run(true, &files, prompt, script).await;
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
    let script = json!({"responses": [glob, text("It has 4 modules.")]});
    let ran = run(true, &files, "Which Python files does src hold?", script).await;
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_repeats_a_reminder_goes_back() {
    let script = json!({"responses": [
        read("src/loader.py"),
        read("src/loader.py"),
        read("src/loader.py"),
        text("The same call again cannot show more than it did."),
        text("src/loader.py"),
    ]});
    let files = [("src/loader.py", "def parse_config(path):\n    return {}\n")];
    let prompt = "Which file defines the function parse_config? Answer with its path.";
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 5 });
    assert!(
        ran.reminders[0].starts_with("The same call again cannot show more than it did.")
            && ran.reminders[1].starts_with("Your reply repeats what the harness told you"),
        "{:?}",
        ran.reminders
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_that_only_swaps_quotes_is_refused_every_time() {
    let files = [(
        "users.py",
        "def contact(user):\n    return user[\"mail\"]\n",
    )];
    let swap = edit("users.py", "return user[\"mail\"]", "return user['mail']");
    let script = json!({"responses": [
        read("users.py"),
        swap.clone(),
        swap.clone(),
        text("Done."),
    ]});
    let prompt = "contact() raises a KeyError. Fix users.py.";
    let ran = run(true, &files, prompt, script).await;
    assert!(
        ran.results[1]
            .1
            .starts_with("not made: this edit only changes quotes (`return user[\"mail\"]` to"),
        "{:?}",
        ran.results
    );
    // Made again, it is refused again (a swap never fixes anything), and
    // the request before it said so.
    assert!(
        ran.results[2]
            .1
            .starts_with("not made again: this edit only changes quotes"),
        "{:?}",
        ran.results
    );
    assert!(
        ran.refused[2]
            .iter()
            .any(|c| c.matches("edit_file", &swap["tool_calls"][0]["arguments"].to_string())),
        "{:?}",
        ran.refused
    );
    assert_eq!(file(&ran, "users.py"), files[0].1);
    // A task that speaks of quotes asks for the swap.
    let script = json!({"responses": [read("users.py"), swap, text("Done.")]});
    let ran = run(
        true,
        &files,
        "Change users.py to use single quotes.",
        script,
    )
    .await;
    assert_eq!(ran.results[1].0, "ok", "{:?}", ran.results);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_made_and_written_out_again_is_no_advice() {
    let json = "{\n  \"name\": \"web\",\n  \"scripts\": {\n    \"build\": \"tsc\"\n  }\n}\n";
    let made = edit(
        "package.json",
        "    \"build\": \"tsc\"",
        "    \"build\": \"tsc\",\n    \"test\": \"jest\"",
    );
    let recited = format!(
        "To add a script named `test`, you can use the `edit_file` function. Here's how:\n```json\n{}\n```",
        json!({"name": "edit_file", "arguments": made["tool_calls"][0]["arguments"]})
    );
    let script = json!({"responses": [read("package.json"), made, text(&recited)]});
    let prompt = "Add a script named test that runs \"jest\" to package.json.";
    let ran = run(true, &[("package.json", json)], prompt, script).await;
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 3 });
    assert!(ran.reminders.is_empty(), "{:?}", ran.reminders);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_copy_of_a_named_file_elsewhere_is_refused_every_time() {
    let divide = "def safe_div(a, b):\n    if b == 0:\n        return None\n    return a / b\n";
    let write = |path: &str, content: &str| json!({"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]});
    let first = "assert safe_div(6, 3) == 2\n";
    let fixed = "from divide import safe_div\nassert safe_div(6, 3) == 2\n";
    let script = json!({"responses": [
        write("test_divide.py", first),
        // Its fix written into a copy in another folder, twice.
        write("tests/test_divide.py", fixed),
        write("tests/test_divide.py", fixed),
        text("Done."),
    ]});
    let prompt = "Add test_divide.py with asserts that safe_div(6, 3) == 2, then run it.";
    let ran = run(true, &[("divide.py", divide)], prompt, script).await;
    assert_eq!(ran.results[0].0, "ok", "{:?}", ran.results);
    for result in &ran.results[1..=2] {
        assert!(
            result.1.starts_with(
                "not made: the task names test_divide.py, which is there already, and this call \
                 would create tests/test_divide.py."
            ),
            "{:?}",
            ran.results
        );
    }
    assert!(!ran.repo.path().join("tests").exists());
    // The request after a refusal names the refused call, with the one
    // handed over: the fix, written to the named file.
    let refused = &ran.refused[2];
    assert_eq!(refused.len(), 1, "{refused:?}");
    let instead: serde_json::Value =
        serde_json::from_str(refused[0].instead.as_deref().expect("handed over")).expect("json");
    assert_eq!(instead, json!({"path": "test_divide.py", "content": fixed}));
    // Before the named file exists, a copy elsewhere is refused once.
    let script = json!({"responses": [
        write("tests/test_divide.py", fixed),
        write("tests/test_divide.py", "from divide import safe_div\n"),
        text("Done."),
    ]});
    let ran = run(true, &[("divide.py", divide)], prompt, script).await;
    assert_eq!(ran.results[0].0, "error", "{:?}", ran.results);
    assert_eq!(ran.results[1].0, "ok", "{:?}", ran.results);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_after_the_test_passed_is_refused_while_unchanged() {
    let files = [
        ("ages.py", "def is_adult(age):\n    return age > 18\n"),
        (
            "test_ages.py",
            "from ages import is_adult\nassert is_adult(18)\nprint('ok')\n",
        ),
    ];
    let fix = edit("ages.py", "return age > 18", "return age >= 18");
    let revert = edit("ages.py", "return age >= 18", "return age > 18");
    let script = json!({"responses": [
        read("ages.py"),
        fix,
        bash("python3 test_ages.py"),
        revert.clone(),
        revert.clone(),
        text("Fixed ages.py: 18 counts as an adult."),
    ]});
    let prompt = "is_adult(18) is False. Fix ages.py and run test_ages.py.";
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.results[2].0, "ok", "{:?}", ran.results);
    assert!(
        ran.results[3].1.starts_with(
            "not made: `python3 test_ages.py` passed after your change to ages.py, and this \
             call would change ages.py again."
        ),
        "{:?}",
        ran.results
    );
    assert!(
        ran.results[4].1.starts_with("not made again"),
        "{:?}",
        ran.results
    );
    // The request after the refusal names it, for a redraw.
    let reverted = revert["tool_calls"][0]["arguments"].to_string();
    assert!(
        ran.refused[4]
            .iter()
            .any(|c| c.matches("edit_file", &reverted)),
        "{:?}",
        ran.refused
    );
    assert_eq!(
        file(&ran, "ages.py"),
        "def is_adult(age):\n    return age >= 18\n"
    );
    assert_eq!(ran.outcome, TurnOutcome::Completed { rounds: 6 });
    // Before the test ran, or after it failed, the change is the model's.
    let script = json!({"responses": [
        read("ages.py"),
        edit("ages.py", "return age > 18", "return age > 19"),
        bash("python3 test_ages.py"),
        edit("ages.py", "return age > 19", "return age >= 18"),
        bash("python3 test_ages.py"),
        text("Fixed."),
    ]});
    let ran = run(true, &files, prompt, script).await;
    assert_eq!(ran.results[2].0, "error", "{:?}", ran.results);
    assert_eq!(ran.results[3].0, "ok", "{:?}", ran.results);
}
