//! The `blocks` edit format (issue 19, item 4; Aider's SEARCH/REPLACE
//! blocks): a model whose info says `EditFormat::Blocks` is told how to
//! write them, is offered no `edit_file`, and the blocks in its reply run as
//! `edit_file` calls (a new file's as `write_file`), recorded and gated as
//! any call.

mod common;

use common::*;
use cortex_core::TurnOutcome;
use cortex_protocol::{EditFormat, EventKind, ToolStatus};
use serde_json::json;

const CALC: &str = "def add(a, b):\n    return a - b\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_in_a_reply_run_as_edits() {
    let reply = "Fixing it.\n\ncalc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    \
                 return a + b\n>>>>>>> REPLACE\n\ntest_calc.py\n<<<<<<< SEARCH\n=======\n\
                 from calc import add\nassert add(2, 3) == 5\n>>>>>>> REPLACE\n";
    let script = json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
        {"text": reply},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "python3 test_calc.py"}}]},
        {"text": "Fixed add and added a test; it passes."},
    ]});
    let (h, outcome) = edit_turn(
        &[("calc.py", CALC)],
        &script,
        true,
        EditFormat::Blocks,
        "Fix add in calc.py: it subtracts. Add test_calc.py with an assert for it.",
    )
    .await;
    let (repo, store, scripted, session) = (&h.repo, &h.store, &h.model, &h.session);
    let results = tool_results(store, session).await;
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 4 }, "{results:?}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("calc.py")).expect("read"),
        CALC.replace("a - b", "a + b")
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("test_calc.py")).expect("read"),
        "from calc import add\nassert add(2, 3) == 5\n"
    );
    let events = store.events(session.id(), 0).await.expect("events");
    let requests = scripted.requests();
    assert!(requests[0].system.contains("<<<<<<< SEARCH"));
    assert!(requests[0].tools.iter().all(|t| t.name != "edit_file"));
    let calls: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { call_id, name, .. } => Some((call_id.0.clone(), name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert!(calls[1].0.starts_with("block_") && calls[1].1 == "edit_file");
    assert!(calls[2].0.starts_with("block_") && calls[2].1 == "write_file");
    let statuses: Vec<ToolStatus> = results.iter().map(|(status, _)| *status).collect();
    assert_eq!(statuses, [ToolStatus::Ok; 4], "the test passes");
    // The reply keeps its blocks: the model reads its edits back as it wrote them.
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::MessageDone { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(texts.contains(&reply), "{texts:?}");
}

/// In a mode that may not edit, a block in a reply is only text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_in_ask_mode_is_only_text() {
    let reply = "You could change it:\n\ncalc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    \
                 return a + b\n>>>>>>> REPLACE\n";
    let script = json!({"responses": [{"text": reply}]});
    let (repo, store, scripted) = parts(&[("calc.py", CALC)], &script);
    let model = small_model_editing(scripted.clone(), false, 0, EditFormat::Blocks);
    let config = config(
        repo.path(),
        store.clone(),
        model,
        cortex_protocol::Mode::Ask,
        cortex_protocol::StopRule::Code,
    );
    let mut session = cortex_core::Session::create(config).await.expect("session");
    let outcome = session
        .run_turn(
            "How would you fix add in calc.py?",
            tokio_util::sync::CancellationToken::new(),
        )
        .await
        .expect("turn");
    assert_eq!(outcome, TurnOutcome::Completed { rounds: 1 });
    assert!(tool_results(&store, &session).await.is_empty());
    assert_eq!(
        std::fs::read_to_string(repo.path().join("calc.py")).expect("read"),
        CALC
    );
    assert!(!scripted.requests()[0].system.contains("<<<<<<< SEARCH"));
}
