//! The harness's decisions do not depend on the words of its messages.
//!
//! Each scenario is a turn in which reminders and refusals decide the next
//! request (a tool to call, a tool barred, an answer due, any tool). It
//! runs twice: as written, and with every reminder's and refusal's text
//! rewritten (reversed) before it is recorded. Both runs must send the
//! same requests' tool choices, refuse the same calls and end the same way,
//! while the texts they sent differ.

mod coach_support;
mod common;

use coach_support::*;
use cortex_core::TurnOutcome;
use cortex_model::ToolChoice;
use serde_json::{Value, json};
use std::future::Future;

/// Every reminder and refusal said backwards: no phrase of the original
/// is left for anything to find.
fn reword(text: &str) -> String {
    format!("(reworded) {}", text.chars().rev().collect::<String>())
}

/// What a run decided, beside the words it sent.
#[derive(Debug, PartialEq)]
struct Decisions {
    outcome: TurnOutcome,
    choices: Vec<ToolChoice>,
    statuses: Vec<String>,
    reminders: usize,
}

/// Runs `scenario` as written and reworded (on this thread: the rewording
/// is per thread, and a current-thread runtime runs the turn here).
async fn both<F, Fut>(scenario: F) -> (Decisions, Vec<String>, Vec<String>)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Ran>,
{
    let decide = |ran: &Ran| Decisions {
        outcome: ran.outcome.clone(),
        choices: ran.choices.clone(),
        statuses: ran.results.iter().map(|(s, _)| s.clone()).collect(),
        reminders: ran.reminders.len(),
    };
    cortex_core::wording::reword_on_this_thread(None);
    let plain = scenario().await;
    cortex_core::wording::reword_on_this_thread(Some(reword));
    let reworded = scenario().await;
    cortex_core::wording::reword_on_this_thread(None);
    assert_eq!(
        decide(&plain),
        decide(&reworded),
        "\nas written: {:?}\nreworded: {:?}",
        plain.reminders,
        reworded.reminders
    );
    // The rewording did reach the model: the same decisions came from
    // other words.
    let said = |ran: &Ran| -> Vec<String> {
        ran.reminders
            .iter()
            .cloned()
            .chain(
                ran.results
                    .iter()
                    .filter(|(s, o)| s == "refused" || o.starts_with("not made"))
                    .map(|(_, o)| o.clone()),
            )
            .collect()
    };
    let (plain_said, reworded_said) = (said(&plain), said(&reworded));
    assert!(!plain_said.is_empty(), "the scenario sends no message");
    assert!(
        reworded_said.iter().all(|t| t.starts_with("(reworded) ")),
        "{reworded_said:?}"
    );
    (decide(&plain), plain_said, reworded_said)
}

/// A scenario: its name, whether the model gets the answer checks, the
/// repository's files, the prompt and the model's script.
type Scenario = (
    &'static str,
    bool,
    Vec<(&'static str, &'static str)>,
    &'static str,
    Value,
);

fn scripts() -> Vec<Scenario> {
    let cli = "def usage():\n    return 'Usage: tool [--verbse] FILE'\n";
    let dropped = edit("cli.py", "[--verbse]", "--verbose");
    let glob = json!({"tool_calls": [{"name": "glob", "arguments": {"pattern": "src/**/*.py"}}]});
    // The third read is refused as a repeat.
    let repeated_read = json!({"responses": [
        read("calc.py"), read("calc.py"), read("calc.py"),
        edit("calc.py", "a - b", "a + b"),
        text("add now returns a + b."),
    ]});
    vec![
        (
            "advice, then the tool it names",
            true,
            vec![("calc.py", CALC), ("test_calc.py", TEST)],
            FIX,
            json!({"responses": [
                text("Replace the minus with a plus in calc.py: `return a + b`."),
                read("calc.py"),
                edit("calc.py", "a - b", "a + b"),
                bash("python3 test_calc.py"),
                text("Fixed; the test passes."),
            ]}),
        ),
        (
            "a change never tested",
            true,
            vec![("calc.py", CALC), ("test_calc.py", TEST)],
            FIX,
            json!({"responses": [
                read("calc.py"),
                edit("calc.py", "a - b", "a + b"),
                text("Fixed."),
                bash("python3 test_calc.py"),
                text("Fixed; the test prints ok."),
            ]}),
        ),
        (
            "a refusal that hands over a call",
            true,
            vec![("cli.py", cli)],
            "There is a typo in cli.py: --verbse should be --verbose. Fix it.",
            json!({"responses": [
                read("cli.py"),
                dropped.clone(),
                dropped,
                edit("cli.py", "[--verbse]", "[--verbose]"),
                text("Fixed the typo."),
            ]}),
        ),
        (
            "a repeat, then the change to make",
            true,
            vec![("calc.py", CALC)],
            "Fix add in calc.py so that it adds.",
            repeated_read.clone(),
        ),
        (
            "a repeat barred for any model",
            false,
            vec![("calc.py", CALC)],
            "Fix add in calc.py so that it adds.",
            repeated_read,
        ),
        (
            "a repeat in a question: the answer is due",
            true,
            vec![("app.py", "def greet():\n    return 'Hello, Cortex'\n")],
            "What does greet() in app.py return?",
            json!({"responses": [
                read("app.py"), read("app.py"), read("app.py"),
                text("{\"name\": \"read_file\", \"arguments\": {\"path\": \"app.py\"}}"),
                text("It returns 'Hello, Cortex'."),
            ]}),
        ),
        (
            "a count given unchecked",
            true,
            vec![
                ("src/one.py", "x = 1\n"),
                ("src/two.py", "y = 2\n"),
                ("setup.py", ""),
            ],
            "How many .py files are in the src folder? Answer with a number.",
            json!({"responses": [text("3"), glob, text("2")]}),
        ),
        (
            "a guess without any tool",
            true,
            vec![("app.py", "def greet():\n    return 'Hello, Cortex'\n")],
            "What does greet() in app.py return?",
            json!({"responses": [
                text("Hello, world!"),
                read("app.py"),
                text("Hello, Cortex"),
            ]}),
        ),
    ]
}

#[tokio::test]
async fn every_decision_is_the_same_when_every_message_is_reworded() {
    let mut seen = Vec::new();
    for (name, small, files, prompt, script) in scripts() {
        let (decisions, plain, reworded) =
            both(|| run(small, &files, prompt, script.clone())).await;
        assert_ne!(plain, reworded, "{name}");
        seen.extend(decisions.choices);
    }
    // Each kind of decision was exercised (a test that cannot fail
    // otherwise: a run whose requests all choose `auto` proves nothing).
    let has = |f: fn(&ToolChoice) -> bool| seen.iter().any(f);
    assert!(has(|c| matches!(c, ToolChoice::Tool(_))), "{seen:?}");
    assert!(has(|c| matches!(c, ToolChoice::AutoWithout(_))), "{seen:?}");
    assert!(has(|c| matches!(c, ToolChoice::Answer)), "{seen:?}");
    assert!(has(|c| matches!(c, ToolChoice::Required)), "{seen:?}");
}
