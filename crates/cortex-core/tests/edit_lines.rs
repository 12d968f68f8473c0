//! The line-range edit format (issue 19, item 4): a model whose info says
//! `EditFormat::Lines` is offered `edit_file` with `start_line`, `end_line`
//! and `new_text`; its calls run in the guest, echo the lines replaced, and
//! are refused with the file's current numbering when made without a read.

mod common;

use common::*;
use cortex_core::TurnOutcome;
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{EditFormat, ToolStatus};
use serde_json::{Value, json};
use std::sync::Arc;

const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n";

fn edit(start: u64, end: u64, text: &str) -> Value {
    json!({"tool_calls": [{"name": "edit_file", "arguments":
        {"path": "calc.py", "start_line": start, "end_line": end, "new_text": text}}]})
}

/// Runs `script` as one Agent turn; the outcome, each tool result's status
/// and output, the scripted model and the repository.
async fn run(
    reads_first: bool,
    script: Value,
) -> (
    TurnOutcome,
    Vec<(ToolStatus, String)>,
    Arc<ScriptedProvider>,
    tempfile::TempDir,
) {
    let (h, outcome) = edit_turn(
        &[("calc.py", CALC)],
        &script,
        reads_first,
        EditFormat::Lines,
        "Fix add in calc.py: it subtracts.",
    )
    .await;
    let results = tool_results(&h.store, &h.session).await;
    let (scripted, repo) = (h.model, h.repo);
    (outcome, results, scripted, repo)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_range_edit_is_offered_runs_and_echoes_what_it_replaced() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        edit(2, 2, "    return a + b"),
        {"text": "Fixed: add now adds."},
    ]});
    let (outcome, results, scripted, repo) = run(false, script).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    let fixed = std::fs::read_to_string(repo.path().join("calc.py")).expect("read");
    assert_eq!(fixed, CALC.replacen("a - b", "a + b", 1));
    let (status, output) = &results[1];
    assert_eq!(*status, ToolStatus::Ok, "{output}");
    assert!(
        output.contains("The lines replaced were:\n     2\t    return a - b"),
        "{output}"
    );
    // The offered edit_file is the line-range one, in every request.
    for request in scripted.requests() {
        let spec = request
            .tools
            .iter()
            .find(|t| t.name == "edit_file")
            .expect("edit_file offered");
        let schema = spec.parameters.to_string();
        assert!(
            schema.contains("start_line") && !schema.contains("old_string"),
            "{schema}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_line_edit_is_refused_with_the_numbered_file() {
    let script = json!({"responses": [
        edit(2, 2, "    return a + b"),
        edit(2, 2, "    return a + b"),
        {"text": "Fixed: add now adds."},
        {"text": "Fixed: add now adds."},
    ]});
    let (_, results, _, repo) = run(true, script).await;
    let (status, refusal) = &results[0];
    assert_eq!(*status, ToolStatus::Error);
    assert!(refusal.contains("     2\t    return a - b"), "{refusal}");
    assert!(refusal.contains("start_line and end_line"), "{refusal}");
    assert_eq!(results[1].0, ToolStatus::Ok, "{}", results[1].1);
    let fixed = std::fs::read_to_string(repo.path().join("calc.py")).expect("read");
    assert_eq!(fixed, CALC.replacen("a - b", "a + b", 1));
}
