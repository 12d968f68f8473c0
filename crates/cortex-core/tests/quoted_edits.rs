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

/// The files a request lets an edit quote.
fn quotable(request: &cortex_model::ModelRequest) -> &[QuotableFile] {
    request
        .hints
        .get::<cortex_model::QuotableFiles>()
        .map_or(&[], |q| q.0.as_slice())
}

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
        texts(quotable(&requests[0])),
        [("calc.py", Some(CALC)), ("notes.txt", None)],
        "shown in the context: calc.py; listed: both"
    );
    assert_eq!(
        texts(quotable(&requests[1])),
        [("calc.py", Some(fixed.as_str())), ("notes.txt", None)],
        "after the edit, the file as the edit left it"
    );
    assert_eq!(
        texts(quotable(&requests[2])),
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
            assert!(quotable(&request).is_empty(), "{format:?}: {request:?}");
        }
    }
}

/// Right after a reminder that says what to change, the next edit may quote
/// only that: the file a two-file change left untouched, then the lines
/// where a renamed name still occurs (a small model quoted the line it had
/// renamed and renamed it back). The request after the edit may quote
/// anything again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_reminder_an_edit_may_quote_only_what_it_names() {
    const CLIENT: &str = "TIMEOUT = 30\n";
    const WORKER: &str = "def run(c):\n    TIMEOUT = 30\n    return c + TIMEOUT\n";
    let edit = |path: &str, old: &str, new: &str| {
        json!({"tool_calls": [{"name": "edit_file", "arguments": {"path": path,
            "old_string": old, "new_string": new}}]})
    };
    let script = json!({"responses": [
        edit("client.py", "TIMEOUT = 30", "TIMEOUT = 45"),
        {"text": "Done."},
        edit("worker.py", "    TIMEOUT = 30", "    TIMEOUT = 45"),
        {"text": "Done, both."},
    ]});
    let files = [("client.py", CLIENT), ("worker.py", WORKER)];
    let (repo, store, scripted) = parts(&files, &script);
    let model = small_model_editing(scripted.clone(), true, 4096, EditFormat::Quoted);
    let prompt = "Change the timeout from 30 to 45 in both client.py and worker.py.";
    let (_session, outcome) = one_agent_turn(repo.path(), store, model, prompt).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 });
    let requests = scripted.requests();
    let paths = |i: usize| -> Vec<&str> {
        quotable(&requests[i])
            .iter()
            .map(|f| f.path.as_str())
            .collect()
    };
    assert_eq!(paths(1), ["client.py", "worker.py"]);
    assert_eq!(paths(2), ["worker.py"], "the reminder's round");
    assert_eq!(paths(3), ["client.py", "worker.py"]);

    let script = json!({"responses": [
        edit("worker.py", "def run(c):", "def run(count):"),
        {"text": "Renamed."},
        edit("worker.py", "    return c + TIMEOUT", "    return count + TIMEOUT"),
        {"text": "Renamed, all of it."},
    ]});
    let (repo, store, scripted) = parts(&[("worker.py", WORKER)], &script);
    let model = small_model_editing(scripted.clone(), true, 4096, EditFormat::Quoted);
    let prompt = "In worker.py, rename the parameter c to count.";
    let (_session, outcome) = one_agent_turn(repo.path(), store, model, prompt).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 });
    let requests = scripted.requests();
    assert_eq!(
        texts(quotable(&requests[2])),
        [("worker.py", Some("    return c + TIMEOUT\n"))],
        "the rename reminder's round"
    );
    assert_eq!(
        texts(quotable(&requests[3])),
        [(
            "worker.py",
            Some("def run(count):\n    TIMEOUT = 30\n    return count + TIMEOUT\n")
        )]
    );
}

/// An edit that gives its quote back unchanged keeps that quote out of the
/// file's text in the next requests, until the file changes (a small
/// model quoted the first heading as itself, twice, while the misspelt one
/// was the other).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quote_given_back_unchanged_is_not_offered_again() {
    const README: &str = "# Todo\n\n## Instalation\n";
    let edit = |old: &str, new: &str| {
        json!({"tool_calls": [{"name": "edit_file", "arguments": {"path": "README.md",
            "old_string": old, "new_string": new}}]})
    };
    let script = json!({"responses": [
        edit("# Todo", "# Todo"),
        edit("## Instalation", "## Installation"),
        {"text": "Fixed the heading."},
    ]});
    let (repo, store, scripted) = parts(&[("README.md", README)], &script);
    let model = small_model_editing(scripted.clone(), true, 4096, EditFormat::Quoted);
    let prompt = "Fix the spelling mistake in the heading of README.md.";
    let (_session, outcome) = one_agent_turn(repo.path(), store, model, prompt).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 3 });
    let requests = scripted.requests();
    assert_eq!(texts(quotable(&requests[0])), [("README.md", Some(README))]);
    assert_eq!(
        texts(quotable(&requests[1])),
        [("README.md", Some("\n## Instalation\n"))]
    );
    assert_eq!(
        texts(quotable(&requests[2])),
        [("README.md", Some("# Todo\n\n## Installation\n"))]
    );
}
