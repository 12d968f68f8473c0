//! Compaction end to end: a long scripted turn passes the threshold, the
//! history is summarised and continues; a failing summariser fails closed;
//! the timeline rebuilds the compacted history.

mod common;

use common::*;
use cortex_core::{CompactError, CompactionConfig, Rebuilt, Session, TurnOutcome};
use cortex_model::ModelRequest;
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{CompactionTrigger, EventKind, Mode, Role, StopRule};
use cortex_store::{SqliteStore, Store};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

const TASK: &str = "read every part and report";
/// Reads in the long turn.
const READS: usize = 8;
const SUMMARY: &str = "SUMMARY: read part 1 to part 5; nothing changed yet.";

/// A 4 KB file: 40 lines of 99 characters.
fn part(n: usize) -> String {
    (0..40)
        .map(|line| format!("part {n} line {line:02} {}\n", "x".repeat(80)))
        .collect()
}

fn files() -> Vec<(String, String)> {
    (1..=READS)
        .map(|n| (format!("part{n}.txt"), part(n)))
        .collect()
}

/// One read per round, then a final answer.
fn long_turn() -> serde_json::Value {
    let mut responses: Vec<serde_json::Value> = (1..=READS)
        .map(|n| json!({"tool_calls": [{"name": "read_file", "arguments": {"path": format!("part{n}.txt")}}]}))
        .collect();
    responses.push(json!({"text": "All parts read."}));
    json!({ "responses": responses })
}

fn tokens_of(request: &ModelRequest) -> u64 {
    let bytes = request.system.len()
        + serde_json::to_vec(&request.messages).expect("json").len()
        + serde_json::to_vec(&request.tools).expect("json").len();
    bytes.div_ceil(4) as u64
}

/// A context window where the threshold (80 %) is passed after about four
/// and a half reads: measured from a first request of the same mode, so it
/// does not depend on the size of the prompt or the tool schemas.
async fn window() -> u64 {
    let h = harness(&[], Mode::Agent, json!({"responses": [{"text": "hi"}]})).await;
    let mut session = h.session;
    session
        .run_turn(TASK, CancellationToken::new())
        .await
        .expect("turn");
    let base = tokens_of(&h.model.requests()[0]);
    let file = (part(1).len() as u64 + 400) / 4;
    ((base + file * 9 / 2) as f64 / 0.8) as u64
}

struct Compacting {
    h: Harness,
    summariser: Arc<ScriptedProvider>,
    window: u64,
}

async fn compacting(summariser: serde_json::Value) -> Compacting {
    let window = window().await;
    let repo = tempfile::tempdir().expect("tempdir");
    for (path, content) in files() {
        write(repo.path(), &path, &content);
    }
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let model = Arc::new(ScriptedProvider::from_json(&long_turn().to_string()).expect("script"));
    let summariser =
        Arc::new(ScriptedProvider::from_json(&summariser.to_string()).expect("script"));
    let mut cfg = config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Agent,
        StopRule::Code,
    );
    cfg.compaction = CompactionConfig {
        context_window: Some(window),
        summariser: Some(summariser.clone()),
        ..CompactionConfig::default()
    };
    let session = Session::create(cfg).await.expect("session");
    Compacting {
        h: Harness {
            repo,
            store,
            model,
            session,
        },
        summariser,
        window,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_turn_compacts_at_the_threshold_and_goes_on() {
    let summaries: Vec<_> = (0..4).map(|_| json!({ "text": SUMMARY })).collect();
    let Compacting {
        mut h,
        summariser,
        window,
    } = compacting(json!({ "responses": summaries })).await;
    let outcome = h
        .session
        .run_turn(TASK, CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(
        outcome,
        TurnOutcome::Completed {
            rounds: READS as u32 + 1
        }
    );
    let events = h.events().await;
    let types: Vec<_> = events.iter().map(|e| e.kind.type_name()).collect();
    assert!(!types.contains(&"compaction.failed"), "{types:?}");
    let done_at = types
        .iter()
        .position(|t| *t == "compaction.done")
        .unwrap_or_else(|| panic!("no compaction: {types:?}"));
    let started_at = types[..done_at]
        .iter()
        .rposition(|t| *t == "compaction.started")
        .expect("compaction.started");
    // Between them only the summariser's usage.
    assert_eq!(types[started_at + 1..done_at], ["usage"], "{types:?}");
    // Compacted before a request, never in the middle of a round.
    assert_eq!(types[done_at + 1], "model.request", "{types:?}");
    let EventKind::CompactionDone {
        trigger,
        tokens_before,
        tokens_after,
        messages_before,
        messages_after,
        summarised,
        kept,
        summary,
        context,
    } = &events[done_at].kind
    else {
        unreachable!("checked above")
    };
    assert_eq!(*trigger, CompactionTrigger::Threshold);
    assert!(
        *tokens_before as f64 > window as f64 * 0.8,
        "{tokens_before} of {window}"
    );
    assert!(tokens_after < tokens_before, "{tokens_after}");
    assert!(messages_after < messages_before);
    assert_eq!(*messages_after, 1 + kept.recent_messages);
    assert_eq!(*summarised + kept.recent_messages, *messages_before);
    assert!(kept.recent_messages >= 1, "{kept:?}");
    assert!(kept.task, "the task was summarised away, so it is restated");
    assert!(!kept.open_files.is_empty(), "{kept:?}");
    assert_eq!(summary, SUMMARY);
    assert!(
        context.contains(SUMMARY) && context.contains(TASK),
        "{context}"
    );
    assert!(context.contains(&format!("### {}", kept.open_files[0])));

    // The next request starts with the summary and the keep-set, then the
    // kept messages; it is smaller than the one before it.
    let requests = h.model.requests();
    let round = types[..done_at]
        .iter()
        .filter(|t| **t == "model.request")
        .count();
    let after = &requests[round];
    assert_eq!(after.messages.len(), *messages_after);
    assert_eq!(after.messages[0].role, Role::User);
    assert_eq!(after.messages[0].content, *context);
    assert_ne!(after.messages[1].role, Role::Tool, "no orphaned result");
    assert!(after.messages.len() < requests[round - 1].messages.len());
    assert!(tokens_of(after) < tokens_of(&requests[round - 1]));

    // The summariser got the dropped part as a transcript, without tools.
    let asked = &summariser.requests()[0];
    assert!(asked.tools.is_empty());
    assert!(asked.messages[0].content.contains(TASK));
    assert!(asked.messages[0].content.contains("part 1 line 00"));

    // The timeline rebuilds exactly the live, compacted history, and a
    // resumed session continues from it.
    let rebuilt = Rebuilt::from_events(&events);
    assert_eq!(rebuilt.messages, h.session.history());
    let last_context = events
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            EventKind::CompactionDone { context, .. } => Some(context.clone()),
            _ => None,
        })
        .expect("compaction.done");
    assert_eq!(h.session.history()[0].content, last_context);
    let live = h.session.history().to_vec();
    let id = h.session.id().clone();
    h.session.close().await;
    let next = Arc::new(
        ScriptedProvider::from_json(&json!({"responses": [{"text": "go on"}]}).to_string())
            .expect("script"),
    );
    let mut resumed = Session::resume(
        &id,
        config(
            h.repo.path(),
            h.store.clone(),
            next.clone(),
            Mode::Agent,
            StopRule::Code,
        ),
    )
    .await
    .expect("resume");
    assert_eq!(resumed.history(), live.as_slice());
    resumed
        .run_turn("and now?", CancellationToken::new())
        .await
        .expect("turn");
    let first = &next.requests()[0];
    assert_eq!(first.messages[0].content, last_context);
    assert_eq!(&first.messages[..live.len()], live.as_slice());
}

/// The summariser's failure leaves everything as it was and fails the turn.
async fn fails_closed(summariser: serde_json::Value, expected: &str) {
    let Compacting { mut h, .. } = compacting(summariser).await;
    let outcome = h
        .session
        .run_turn(TASK, CancellationToken::new())
        .await
        .expect("turn");
    let TurnOutcome::Failed { error } = outcome else {
        panic!("the turn went on: {outcome:?}");
    };
    assert!(error.contains("compaction failed"), "{error}");
    assert!(error.contains("history is unchanged"), "{error}");
    assert!(error.contains(expected), "{error}");
    let events = h.events().await;
    let types: Vec<_> = events.iter().map(|e| e.kind.type_name()).collect();
    assert!(!types.contains(&"compaction.done"), "{types:?}");
    assert_eq!(
        types[types.len() - 3..],
        ["compaction.started", "compaction.failed", "turn.failed"],
        "{types:?}"
    );
    let Some(EventKind::CompactionStarted { messages, .. }) = events
        .iter()
        .map(|e| &e.kind)
        .find(|k| matches!(k, EventKind::CompactionStarted { .. }))
    else {
        unreachable!("checked above")
    };
    // Untouched: every message is still there, the task first.
    let history = h.session.history();
    assert_eq!(history.len(), *messages);
    assert!(history[0].content.ends_with(TASK), "{}", history[0].content);
    let last_request = h.model.requests().pop().expect("requests");
    assert!(history.starts_with(&last_request.messages));
    assert_eq!(Rebuilt::from_events(&events).messages, history);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summariser_error_fails_the_turn_and_keeps_the_history() {
    fails_closed(
        json!({"responses": [{"error": {"status": 500, "body": "summariser down"}}]}),
        "summariser down",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_summary_fails_the_turn_and_keeps_the_history() {
    fails_closed(json!({"responses": [{"text": ""}]}), "returned no text").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_compaction_between_turns_and_nothing_to_compact() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"text": "It says alpha."},
        {"text": "SUMMARY: the user asked what a.txt says; it says alpha."},
    ]});
    let mut h = harness(&[("a.txt", "alpha\n")], Mode::Ask, script).await;
    // A new session has nothing to summarise, and says so without writing.
    let before = h.events().await.len();
    let refused = h.session.compact(CancellationToken::new()).await;
    assert!(
        matches!(refused, Err(CompactError::NothingToCompact)),
        "{refused:?}"
    );
    assert_eq!(h.events().await.len(), before);

    h.session
        .run_turn("what does a.txt say?", CancellationToken::new())
        .await
        .expect("turn");
    let history = h.session.history().to_vec();
    let report = h
        .session
        .compact(CancellationToken::new())
        .await
        .expect("compact");
    assert_eq!(report.messages_before, history.len());
    assert_eq!(report.messages_after, h.session.history().len());
    assert!(report.summarised >= 1, "{report:?}");
    let history_now = h.session.history();
    assert!(history_now[0].content.contains("it says alpha"));
    assert_eq!(
        &history_now[1..],
        &history[history.len() - report.kept.recent_messages..]
    );
    let events = h.events().await;
    let done = events.last().expect("events");
    assert!(done.turn_id.is_none(), "not part of a turn");
    assert!(matches!(
        done.kind,
        EventKind::CompactionDone {
            trigger: CompactionTrigger::Explicit,
            ..
        }
    ));
    assert_eq!(Rebuilt::from_events(&events).messages, history_now);
}
