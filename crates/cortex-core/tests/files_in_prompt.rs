//! The files in the prompt (issue 19, item 3): a small model's turn context
//! carries a small workspace's files, or in a larger one the files the task
//! names, as `read_file` shows them; what it was shown counts as read.

mod common;

use common::*;
use cortex_core::TurnOutcome;
use cortex_protocol::{EventKind, ToolStatus};
use serde_json::{Value, json};

const CALC: &str = "def add(a, b):\n    return a - b\n";

struct Ran {
    outcome: TurnOutcome,
    /// The turn's `turn.context` text.
    context: String,
    statuses: Vec<ToolStatus>,
    repo: tempfile::TempDir,
}

async fn run(budget: u32, files: &[(String, String)], prompt: &str, script: Value) -> Ran {
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let (repo, store, scripted) = parts(&files, &script);
    // Answer checks off, so that only the files in the prompt are at work;
    // read before write on (it reads `verify_answers`) is what the second
    // test needs, so it asks for it.
    let (session, outcome) = one_agent_turn(
        repo.path(),
        store.clone(),
        small_model(scripted, budget > 0, budget),
        prompt,
    )
    .await;
    let events = store.events(session.id(), 0).await.expect("events");
    let context = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::TurnContext { text } => Some(text.clone()),
            _ => None,
        })
        .expect("a turn.context");
    let statuses = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    Ran {
        outcome,
        context,
        statuses,
        repo,
    }
}

fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, c)| ((*p).to_owned(), (*c).to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_workspace_is_shown_whole_and_an_edit_runs_without_a_read() {
    let fix = json!({"responses": [
        {"tool_calls": [{"name": "edit_file", "arguments":
            {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}]},
        {"text": "Fixed: add now adds."},
        {"text": "Checked: calc.py returns a + b."},
    ]});
    let ran = run(
        4096,
        &files(&[("calc.py", CALC), ("README.md", "A calculator.\n")]),
        "Fix the bug in add.",
        fix,
    )
    .await;
    assert!(
        matches!(ran.outcome, TurnOutcome::Completed { .. }),
        "{:?}",
        ran.outcome
    );
    assert!(
        ran.context.starts_with("Repository: ")
            && ran.context.contains("\nFiles in the repository (2):"),
        "{}",
        ran.context
    );
    // A small model is given no name or path it would write to.
    let (repository, _) = ran.context.split_once('\n').expect("two parts");
    assert_eq!(
        repository,
        "Repository: the current folder (give every path relative to it)"
    );
    assert!(
        ran.context
            .contains("--- calc.py\n     1\tdef add(a, b):\n     2\t    return a - b"),
        "{}",
        ran.context
    );
    assert!(
        ran.context.contains("--- README.md\n     1\tA calculator."),
        "{}",
        ran.context
    );
    // Shown counts as read: the edit ran at once (read before write is on).
    assert_eq!(
        ran.statuses.first(),
        Some(&ToolStatus::Ok),
        "{:?}",
        ran.statuses
    );
    let calc = std::fs::read_to_string(ran.repo.path().join("calc.py")).expect("read");
    assert!(calc.contains("a + b"), "{calc}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_larger_workspace_shows_the_files_the_task_names_and_a_map_of_the_rest() {
    let mut list: Vec<(String, String)> = (0..40)
        .map(|i| (format!("pkg/m{i:02}.py"), format!("X = {i}\n")))
        .collect();
    list.push(("src/calc.py".to_owned(), CALC.to_owned()));
    list.push((
        "pkg/util.py".to_owned(),
        "def parse(s):\n    return s\n\n\nclass Loader:\n    def load(self):\n        pass\n"
            .to_owned(),
    ));
    let ran = run(4096, &list, "Fix add in calc.py.", json!({"responses": [{"text": "Done."}, {"text": "Done."}, {"text": "Done."}, {"text": "Done."}]})).await;
    assert!(
        ran.context
            .contains("The contents of the files the task names"),
        "{}",
        ran.context
    );
    assert!(
        ran.context.contains("--- src/calc.py\n     1\tdef add"),
        "{}",
        ran.context
    );
    assert!(!ran.context.contains("X = "), "{}", ran.context);
    // The symbol map names the other files' definitions, not the shown one.
    assert!(
        ran.context.ends_with(
            "Definitions in the other files (read_file a file for its code):\n\
             pkg/util.py: parse, Loader, load"
        ),
        "{}",
        ran.context
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_over_the_budget_is_not_shown_whole() {
    let big = "y = 0\n".repeat(200);
    let ran = run(
        1024,
        &files(&[("big.py", &big), ("calc.py", CALC)]),
        "Fix add in calc.py.",
        json!({"responses": [{"text": "Done."}, {"text": "Done."}, {"text": "Done."}, {"text": "Done."}]}),
    )
    .await;
    assert!(ran.context.contains("--- calc.py\n"), "{}", ran.context);
    assert!(!ran.context.contains("--- big.py"), "{}", ran.context);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_the_budget_gets_names_only() {
    let ran = run(
        0,
        &files(&[("calc.py", CALC)]),
        "Fix add in calc.py.",
        json!({"responses": [{"text": "Done."}]}),
    )
    .await;
    let (repository, files) = ran.context.split_once('\n').expect("two parts");
    assert!(repository.starts_with("Repository: /"), "{repository}");
    assert_eq!(files, "Files in the repository (1):\ncalc.py");
}
