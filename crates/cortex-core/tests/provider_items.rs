//! Opaque provider items (reasoning to replay) stay with the assistant
//! message and reach the model again in the next round.

mod common;

use cortex_core::{Session, SessionConfig};
use cortex_model::{FinishReason, ModelEvent, ModelProvider, ModelRequest, ModelStream};
use cortex_protocol::{Mode, ProviderItem, Role, StopRule};
use cortex_runtime::InProcessProvider;
use cortex_store::SqliteStore;
use serde_json::json;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Round 1: a reasoning item and a `glob` call; round 2: an answer. Keeps
/// every request.
#[derive(Default)]
struct Reasoner {
    requests: Mutex<Vec<ModelRequest>>,
}

fn item() -> ProviderItem {
    ProviderItem {
        provider: "test".into(),
        item: json!({"type": "reasoning", "encrypted_content": "opaque"}),
    }
}

impl ModelProvider for Reasoner {
    fn describe(&self) -> String {
        "test:reasoner".into()
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let mut requests = self.requests.lock().expect("lock");
        requests.push(request);
        let events = if requests.len() == 1 {
            vec![
                ModelEvent::ProviderItem(item()),
                ModelEvent::ToolCallStart {
                    index: 0,
                    id: "call_1".into(),
                    name: "glob".into(),
                },
                ModelEvent::ToolCallDelta {
                    index: 0,
                    arguments: "{\"pattern\":\"*.txt\"}".into(),
                },
                ModelEvent::ToolCallEnd { index: 0 },
                ModelEvent::Finish(FinishReason::ToolCalls),
            ]
        } else {
            vec![
                ModelEvent::TextDelta("Found it.".into()),
                ModelEvent::Finish(FinishReason::Stop),
            ]
        };
        Box::pin(futures::stream::iter(events.into_iter().map(Ok)))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_items_are_replayed_with_their_message() {
    let repo = tempfile::tempdir().expect("tempdir");
    common::write(repo.path(), "a.txt", "x\n");
    let model = Arc::new(Reasoner::default());
    let config = SessionConfig {
        repository: repo.path().to_path_buf(),
        mode: Mode::Agent,
        stop_rule: StopRule::Code,
        store: Arc::new(SqliteStore::in_memory().expect("store")),
        model: model.clone(),
        guests: Arc::new(InProcessProvider),
        guest_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
        sandbox: Default::default(),
        workspaces: None,
        compaction: Default::default(),
        harness_dirs: Default::default(),
        checkpoints: None,
        checkpoint_quota: None,
        checkpoint_total_quota: None,
        hooks: Vec::new(),
        hook_trust: None,
        subagents: Default::default(),
    };
    let mut session = Session::create(config).await.expect("session");
    session
        .run_turn("find the text files", CancellationToken::new())
        .await
        .expect("turn");
    let requests = model.requests.lock().expect("lock");
    assert_eq!(requests.len(), 2);
    let assistant = requests[1]
        .messages
        .iter()
        .find(|m| m.role == Role::Assistant)
        .expect("the first round's answer is in the history");
    assert_eq!(assistant.tool_calls.len(), 1);
    assert_eq!(assistant.provider_items, [item()]);
}
