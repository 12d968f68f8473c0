//! Usage, thinking and prompt progress reach the timeline: cached tokens and
//! the estimated cost in `usage`, the model's thinking as `thinking.delta`,
//! apart from its answer, and the provider's progress through a long prompt
//! as `model.progress`.

mod common;

use cortex_core::Session;
use cortex_model::meter::{Meter, Metered};
use cortex_model::{FinishReason, ModelEvent, ModelInfo, ModelProvider, ModelRequest, ModelStream};
use cortex_protocol::{EventKind, Mode, StopRule};
use cortex_store::{SqliteStore, Store};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

struct Thinker;

impl ModelProvider for Thinker {
    fn describe(&self) -> String {
        "test:claude-sonnet-4".into()
    }

    fn stream(&self, _request: ModelRequest) -> ModelStream {
        let events = vec![
            ModelEvent::PromptProgress {
                done: 512,
                total: 1_000,
            },
            ModelEvent::PromptProgress {
                done: 1_000,
                total: 1_000,
            },
            ModelEvent::ThinkingDelta("The user greets me.".into()),
            ModelEvent::TextDelta("Hello.".into()),
            ModelEvent::Usage {
                input_tokens: 10_000,
                output_tokens: 100,
            },
            ModelEvent::CacheUsage {
                read_tokens: 8_000,
                write_tokens: 0,
            },
            ModelEvent::Finish(FinishReason::Stop),
        ];
        Box::pin(futures::stream::iter(events.into_iter().map(Ok)))
    }
}

#[tokio::test]
async fn usage_carries_cache_and_cost_and_thinking_is_its_own_event() {
    let repo = tempfile::tempdir().expect("repo");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let info = ModelInfo::built_in("claude-sonnet-4").expect("a known model");
    let model = Arc::new(Metered::new(
        Arc::new(Thinker),
        Some(info),
        Meter::default(),
    ));
    let mut config = common::config(
        repo.path(),
        store.clone(),
        Arc::new(
            cortex_model::scripted::ScriptedProvider::from_json("{\"responses\":[]}")
                .expect("script"),
        ),
        Mode::Ask,
        StopRule::Code,
    );
    config.model = model;
    let mut session = Session::create(config).await.expect("session");
    session
        .run_turn("hi", CancellationToken::new())
        .await
        .expect("turn");
    let events = store.events(session.id(), 0).await.expect("events");
    let thinking: String = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ThinkingDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "The user greets me.");
    let progress: Vec<(u32, u64, u64)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelProgress { round, done, total } => Some((*round, *done, *total)),
            _ => None,
        })
        .collect();
    assert_eq!(progress, [(1, 512, 1_000), (1, 1_000, 1_000)]);
    let usage = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Usage {
                cache_read_tokens,
                cost_usd,
                ..
            } => Some((*cache_read_tokens, *cost_usd)),
            _ => None,
        })
        .expect("a usage event");
    assert_eq!(usage.0, 8_000);
    let expected = info
        .cost(&cortex_model::TokenCounts {
            input: 10_000,
            output: 100,
            cache_read: 8_000,
            cache_write: 0,
        })
        .expect("priced");
    assert_eq!(usage.1, Some(expected));
    assert!(expected > 0.0);
    // The answer's text has no thinking in it.
    assert_eq!(
        session.history().last().map(|m| m.content.as_str()),
        Some("Hello.")
    );
}
