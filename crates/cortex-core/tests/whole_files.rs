//! The `whole` edit format (issue 19, item 4; Aider's format for weak
//! models): a model whose info says `EditFormat::Whole` is not offered
//! `edit_file` at all, changes a file by writing all of it, has an
//! `edit_file` call refused with that said, and is reminded to call
//! `write_file` where another model is reminded to edit.

mod common;

use common::*;
use cortex_core::TurnOutcome;
use cortex_model::ToolChoice;
use cortex_protocol::{EditFormat, ToolName, ToolStatus};
use serde_json::json;

const CALC: &str = "def add(a, b):\n    return a - b\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_change_only_by_whole_writes() {
    let fixed = CALC.replace("a - b", "a + b");
    let script = json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py",
            "old_string": "a - b", "new_string": "a + b"}}]},
        {"text": "Replace `a - b` with `a + b` in calc.py."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "calc.py",
            "content": fixed}}]},
        {"text": "Fixed: add now adds."},
    ]});
    let (h, outcome) = edit_turn(
        &[("calc.py", CALC)],
        &script,
        true,
        EditFormat::Whole,
        "Fix add in calc.py: it subtracts.",
    )
    .await;
    let (repo, scripted) = (&h.repo, &h.model);
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 5 });
    assert_eq!(
        std::fs::read_to_string(repo.path().join("calc.py")).expect("read"),
        fixed
    );
    let requests = scripted.requests();
    let offered: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert!(!offered.contains(&"edit_file"), "{offered:?}");
    let write = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "write_file")
        .expect("write_file offered");
    assert!(write.description.contains("whole new text"), "{write:?}");
    // The edit was refused, saying how to change the file instead.
    let results = tool_results(&h.store, &h.session).await;
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[1].0, ToolStatus::Refused);
    assert!(results[1].1.contains("write_file"), "{}", results[1].1);
    // Advice to change the file is met with write_file, not edit_file.
    assert_eq!(
        requests[3].tool_choice,
        ToolChoice::Tool(ToolName::WriteFile)
    );
    assert_eq!(results[2].0, ToolStatus::Ok, "{}", results[2].1);
}
