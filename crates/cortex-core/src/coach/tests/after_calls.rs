//! What a turn's calls leave for the checks: a file left broken or unable
//! to run, a failing test's named cause, a call repeated until refused.

use super::*;

#[test]
fn a_file_left_broken_is_met_with_a_forced_whole_file_write_until_it_parses() {
    let edit = call(
        "edit_file",
        serde_json::json!({"path": "./account.py", "old_string": "a", "new_string": "b"}),
    );
    let broke = format!(
        "Edited account.py (1 replacement)\n{}: it no longer parses",
        cortex_tools::BROKE_THE_FILE
    );
    // A name used and not imported is the same kind of breakage.
    let unbound = format!(
        "Created test_x.py (2 lines)\n{} uses `f` without importing or defining it",
        cortex_tools::WONT_RUN
    );
    let mut work = TurnWork::new("Add test_x.py that checks f.");
    let write = call(
        "write_file",
        serde_json::json!({"path": "test_x.py", "content": "f()"}),
    );
    work.record(&write, ToolStatus::Ok, None, Some(&unbound));
    let text = work.next_reminder("Done.", None).expect("unbound");
    assert!(text.contains("test_x.py cannot run"), "{text}");
    assert_eq!(chosen_tool(&text), Some(ToolName::WriteFile), "{text}");
    let mut work = TurnWork::new("Add a withdraw method to Account in account.py.");
    work.record(&edit, ToolStatus::Ok, None, Some(&broke));
    let text = work
        .next_reminder("Here is the fixed file.", None)
        .expect("broken");
    assert!(text.contains("account.py no longer parses"), "{text}");
    assert_eq!(chosen_tool(&text), Some(ToolName::WriteFile), "{text}");
    // A later change that parses clears it; a failed one does not.
    let mut work = TurnWork::new("Add a withdraw method to Account in account.py.");
    work.record(&edit, ToolStatus::Ok, None, Some(&broke));
    work.record(&edit, ToolStatus::Error, None, Some("old_string not found"));
    assert!(work.broken().is_some());
    work.record(
        &edit,
        ToolStatus::Ok,
        None,
        Some("Edited account.py (1 replacement)"),
    );
    assert_eq!(work.broken(), None);
}

#[test]
fn a_file_that_still_cannot_run_stays_to_be_fixed() {
    let write = call(
        "write_file",
        serde_json::json!({"path": "test_slug.py", "content": "x"}),
    );
    let mut work = TurnWork::new("Write test_slug.py and run it with python3.");
    work.record(&write, ToolStatus::Ok, None, None);
    let warned = format!(
        "Created test_slug.py (2 lines)\n{} only defines test functions",
        cortex_tools::WONT_RUN
    );
    work.record(&write, ToolStatus::Ok, None, Some(&warned));
    // The import added, the tests still never called: still to fix.
    let still = format!(
        "Updated test_slug.py (4 lines)\n{} only defines test functions",
        cortex_tools::STILL_WONT_RUN
    );
    work.record(&write, ToolStatus::Ok, None, Some(&still));
    assert!(work.wont_run().is_some());
    // Met twice a turn while it stays so, not more.
    let mut met = work.clone();
    for _ in 0..2 {
        let text = met.next_reminder("Done.", None).expect("still cannot run");
        assert!(text.contains("test_slug.py cannot run"), "{text}");
    }
    assert!(
        met.next_reminder("Done.", None)
            .is_none_or(|t| !t.contains("cannot run"))
    );
    work.record(
        &write,
        ToolStatus::Ok,
        None,
        Some("Updated test_slug.py (6 lines)"),
    );
    assert_eq!(work.wont_run(), None);
}

#[test]
fn a_repeated_call_is_followed_by_the_task_s_next_step() {
    let read = call("read_file", serde_json::json!({"path": "calc.py"}));
    let mut gate = crate::stop_rule::StopRuleState::new(cortex_protocol::StopRule::Code);
    let refusal = (0..3)
        .map(|_| gate.check_call("read_file", &read.arguments, true))
        .find_map(|check| match check {
            crate::stop_rule::CallCheck::Refuse(text) => Some(text),
            _ => None,
        })
        .expect("the third is refused");
    let prompt = "python3 test_calc.py fails. Fix the bug in calc.py and run the test.";
    // The gate's refusal of a repeat decides that the tool is barred.
    let bars_read = Some(CallSteer::Bars {
        tool: ToolName::ReadFile,
    });
    let mut work = TurnWork::new(prompt);
    work.set_files("calc.py\ntest_calc.py");
    assert_eq!(work.after_repeat(), None, "nothing repeated yet");
    work.record(&read, ToolStatus::Refused, None, Some(&refusal));
    work.note_steer(bars_read);
    let text = work.after_repeat().expect("no change made");
    assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
    assert_eq!(work.after_repeat(), None, "said once per repeat");
    // Changed and not run: the test is the next step.
    let edit = call("edit_file", serde_json::json!({"path": "calc.py"}));
    work.record(&edit, ToolStatus::Ok, None, Some("Edited calc.py"));
    work.record(&read, ToolStatus::Refused, None, Some(&refusal));
    work.note_steer(bars_read);
    let text = work.after_repeat().expect("not run");
    assert_eq!(chosen_tool(&text), Some(ToolName::Bash), "{text}");
    // Twice a turn at most; a question is to be answered.
    work.record(&read, ToolStatus::Refused, None, Some(&refusal));
    work.note_steer(bars_read);
    assert_eq!(work.after_repeat(), None);
    // A file the task names that is not there yet is written.
    let mut create = TurnWork::new("Create a file hello.txt whose whole content is hi.");
    create.set_files("README.md");
    create.record(&read, ToolStatus::Refused, None, Some(&refusal));
    create.note_steer(bars_read);
    let text = create.after_repeat().expect("no change made");
    assert_eq!(chosen_tool(&text), Some(ToolName::WriteFile), "{text}");
    let mut question = TurnWork::new("What does add() return?");
    question.record(&read, ToolStatus::Refused, None, Some(&refusal));
    question.note_steer(bars_read);
    let text = question.after_repeat().expect("to answer");
    assert!(
        text.starts_with(NO_MORE) && text.contains("Answer the question now"),
        "{text}"
    );
    assert_eq!(text.next, cortex_protocol::NextReply::Answer, "{text}");
}

#[test]
fn a_failing_test_s_named_cause_is_the_reminder_s_not_the_answer_s_code() {
    let prompt =
        "python3 test_users.py fails with a KeyError. Fix users.py so that the test passes.";
    let mut work = TurnWork::new(prompt);
    work.set_files("test_users.py\nusers.py");
    let edit = call("edit_file", serde_json::json!({"path": "users.py"}));
    work.record(&edit, ToolStatus::Ok, None, Some("Edited users.py"));
    let run = call(
        "bash",
        serde_json::json!({"command": "python3 test_users.py"}),
    );
    let failed = format!(
        "Traceback …\nKeyError: 'mail'\n{} 'mail' is not in the dict; a line of the traceback \
         above has 'email', close to it: the code may look up the key under the wrong name.\n\
         [exit code 1]",
        cortex_tools::KEY_HINT
    );
    work.record(&run, ToolStatus::Error, None, Some(&failed));
    let answer =
        "Here is the fix:\n```python\ndef contact(user):\n    return user.get('mail')\n```";
    let text = work.next_reminder(answer, None).expect("the test failed");
    assert!(
        text.contains("Its output above says why: the key 'mail' is not in the dict")
            && !text.contains("the code your answer shows"),
        "{text}"
    );
    assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
}

#[test]
fn a_file_the_turn_broke_is_not_said_to_have_been_broken_before() {
    let edit = call("edit_file", serde_json::json!({"path": "calc.py"}));
    let mut work = TurnWork::new("Add a function sub to calc.py.");
    let broke = format!(
        "Edited calc.py (1 replacement)\n{}: it no longer parses",
        cortex_tools::BROKE_THE_FILE
    );
    work.record(&edit, ToolStatus::Ok, None, Some(&broke));
    let still = format!(
        "Edited calc.py (1 replacement)\n{} as Python (unexpected indent at line 2){}",
        cortex_tools::STILL_BROKEN,
        cortex_tools::NOT_BEFORE_EITHER
    );
    let read = crate::answer::Answer::ok(still.clone()).read_in_turn(&work);
    assert!(
        read.output.ends_with(
            "it did before an earlier change of this turn broke it. Fix it before going on."
        ),
        "{}",
        read.output
    );
    // Broken before the turn: said as the tool said it.
    let fresh = TurnWork::new("Add a function sub to calc.py.");
    let read = crate::answer::Answer::ok(still.clone()).read_in_turn(&fresh);
    assert_eq!(read.output, still);
}

#[test]
fn an_output_given_for_a_command_that_did_not_run_is_met_with_running_it() {
    let prompt = "How many lines of main.py contain a # comment? Answer with a number.";
    let made_up = "Here's the command I'll run:\n\n```bash\ngrep -c '#' main.py\n```\n\nThe \
                   output will be:\n\n```\n3\n```\n\nSo there are 3.";
    let grep = call(
        "grep",
        serde_json::json!({"pattern": "#", "path": "main.py"}),
    );
    let mut work = TurnWork::new(prompt);
    work.record(&grep, ToolStatus::Ok, None, Some("main.py:1:# entry point"));
    let text = work.next_reminder(made_up, None).expect("made up");
    assert!(text.contains("`grep -c '#' main.py`"), "{text}");
    assert_eq!(chosen_tool(&text), Some(ToolName::Bash), "{text}");
    // Once it ran, what the answer says it printed is held to what it did
    // print: a wrong count goes back with the real output, a true one stands.
    let mut work = TurnWork::new(prompt);
    let run = call(
        "bash",
        serde_json::json!({"command": "grep -c '#' main.py"}),
    );
    work.record(&run, ToolStatus::Ok, None, Some("4\n"));
    let text = work.next_reminder(made_up, None).expect("a wrong output");
    assert_eq!(text.kind, ReminderKind::WrongOutput);
    assert!(text.contains("printed:\n4"), "{text}");
    let mut work = TurnWork::new(prompt);
    work.record(&run, ToolStatus::Ok, None, Some("4\n"));
    assert_eq!(work.next_reminder(&made_up.replace('3', "4"), None), None);
    // A block with no claim of its output, or the model's own tool named
    // as a command, is not an output made up.
    assert_eq!(
        imagined_output("You can check with:\n```bash\ngrep -c x a\n```", &[]),
        None
    );
    assert_eq!(
        imagined_output(
            "```bash\nread_file cli.py\n```\nThis should output:\n1",
            &[]
        ),
        None
    );
}
