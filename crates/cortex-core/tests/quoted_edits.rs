//! The `quoted` edit format (issue 19, item 4): each request carries the
//! workspace's files an `edit_file` may name, with the text of those the
//! model has seen whole, as it saw it — what the embedded model's grammar
//! holds `old_string` to. The text follows the model's own edits and reads.

mod common;

use common::*;
use cortex_core::TurnOutcome;
use cortex_model::QuotableFile;
use cortex_protocol::EditFormat;
use serde_json::json;

const CALC: &str = "def add(a, b):\n    return a - b\n";
const NOTES: &str = "remember the milk\n";

fn texts(files: &[QuotableFile]) -> Vec<(&str, Option<&str>)> {
    files
        .iter()
        .map(|f| (f.path.as_str(), f.text.as_deref()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_carries_the_files_as_the_model_last_saw_them() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py",
            "old_string": "    return a - b", "new_string": "    return a + b"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "Fixed: add now adds."},
    ]});
    let (repo, store, scripted) = parts(&[("calc.py", CALC), ("notes.txt", NOTES)], &script);
    // Room for calc.py in the turn's context, not for both files: notes.txt
    // is listed by name only.
    let model = small_model_editing(scripted.clone(), true, 80, EditFormat::Quoted);
    let (_session, outcome) = one_agent_turn(
        repo.path(),
        store,
        model,
        "Fix add in calc.py: it subtracts.",
    )
    .await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    let fixed = CALC.replace("a - b", "a + b");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("calc.py")).expect("read"),
        fixed
    );
    let requests = scripted.requests();
    assert_eq!(
        texts(&requests[0].quotable),
        [("calc.py", Some(CALC)), ("notes.txt", None)],
        "shown in the context: calc.py; listed: both"
    );
    assert_eq!(
        texts(&requests[1].quotable),
        [("calc.py", Some(fixed.as_str())), ("notes.txt", None)],
        "after the edit, the file as the edit left it"
    );
    assert_eq!(
        texts(&requests[2].quotable),
        [
            ("calc.py", Some(fixed.as_str())),
            ("notes.txt", Some(NOTES))
        ],
        "after the read, the file read"
    );
    let edit = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "edit_file")
        .expect("edit_file offered");
    assert!(edit.description.contains("whole lines"), "{edit:?}");
    assert!(edit.parameters.to_string().contains("old_string"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_formats_carry_no_files() {
    for format in [EditFormat::String, EditFormat::Lines] {
        let script = json!({"responses": [{"text": "Nothing to do."}]});
        let (repo, store, scripted) = parts(&[("calc.py", CALC)], &script);
        let model = small_model_editing(scripted.clone(), false, 4096, format);
        one_agent_turn(repo.path(), store, model, "Look at calc.py.").await;
        for request in scripted.requests() {
            assert!(request.quotable.is_empty(), "{format:?}: {request:?}");
        }
    }
}
