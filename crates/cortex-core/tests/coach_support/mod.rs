//! What the answer-check tests share: a small or other model's turn over
//! a temporary repository, its results, reminders and requests.

#![allow(dead_code)]

use crate::common::*;
use cortex_core::TurnOutcome;
use cortex_model::scripted::ScriptedProvider;
use cortex_model::{ModelProvider, RefusedCall, ToolChoice};
use cortex_protocol::{Doubt, EventKind, ReminderKind};
use serde_json::{Value, json};
use std::sync::Arc;

pub struct Ran {
    pub outcome: TurnOutcome,
    /// (status, output) of every tool result, in order.
    pub results: Vec<(String, String)>,
    pub reminders: Vec<String>,
    /// The kind of each reminder, in order.
    pub kinds: Vec<Option<ReminderKind>>,
    /// What `turn.completed` said the checks still doubt.
    pub unverified: Vec<Doubt>,
    pub choices: Vec<ToolChoice>,
    /// Each request's calls that the gates will refuse.
    pub refused: Vec<Vec<RefusedCall>>,
    pub repo: tempfile::TempDir,
}

pub async fn run(small: bool, files: &[(&str, &str)], prompt: &str, script: Value) -> Ran {
    run_on(files, prompt, script, |scripted| {
        checked_model(scripted, small)
    })
    .await
}

/// [`run`] for a small model whose turn context may carry the workspace's
/// files whole (`files_in_prompt`: 24 KiB).
pub async fn run_shown(files: &[(&str, &str)], prompt: &str, script: Value) -> Ran {
    run_on(files, prompt, script, |scripted| {
        small_model(scripted, true, 24 * 1024)
    })
    .await
}

async fn run_on(
    files: &[(&str, &str)],
    prompt: &str,
    script: Value,
    model: impl FnOnce(Arc<ScriptedProvider>) -> Arc<dyn ModelProvider>,
) -> Ran {
    let (repo, store, scripted) = parts(files, &script);
    let (session, outcome) =
        one_agent_turn(repo.path(), store.clone(), model(scripted.clone()), prompt).await;
    let events = store.events(session.id(), 0).await.expect("events");
    let reminders = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TurnReminder { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    let kinds = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TurnReminder { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect();
    let unverified = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::TurnCompleted { unverified, .. } => Some(unverified.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let results = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { status, output, .. } => Some((
                serde_json::to_value(status).ok()?.as_str()?.to_owned(),
                output.clone(),
            )),
            _ => None,
        })
        .collect();
    let requests = scripted.requests();
    let choices = requests.iter().map(|r| r.tool_choice).collect();
    let refused = requests
        .iter()
        .map(|r| {
            r.hints
                .get::<cortex_model::RefusedCalls>()
                .map(|c| c.0.clone())
                .unwrap_or_default()
        })
        .collect();
    Ran {
        outcome,
        results,
        reminders,
        kinds,
        unverified,
        choices,
        refused,
        repo,
    }
}

pub fn read(path: &str) -> Value {
    json!({"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]})
}

pub fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"tool_calls": [{"name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": new}}]})
}

pub fn bash(command: &str) -> Value {
    json!({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]})
}

pub fn text(text: &str) -> Value {
    json!({ "text": text })
}

pub fn file(ran: &Ran, path: &str) -> String {
    std::fs::read_to_string(ran.repo.path().join(path)).expect("read")
}

pub const CALC: &str = "def add(a, b):\n    return a - b\n";
pub const TEST: &str = "from calc import add\nassert add(2, 3) == 5\nprint('ok')\n";
pub const FIX: &str = "python3 test_calc.py fails. Fix the bug in calc.py.";

/// The turn of [`FIX`] over calc.py and its test.
pub async fn run_fix(small: bool, script: Value) -> Ran {
    run(
        small,
        &[("calc.py", CALC), ("test_calc.py", TEST)],
        FIX,
        script,
    )
    .await
}
