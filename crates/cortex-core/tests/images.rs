//! Images in a turn's message (issue 41, item 6): the image reaches the
//! request as an image, the timeline names it (`turn.images`) while its
//! bytes are stored once in the store, a resumed session (a new process)
//! still sends it, and a model that takes no images, or bytes that are not
//! an image, are refused before any request.

mod common;

use common::{config, parts};
use cortex_core::{ImageError, Session, TurnOutcome, UserTurn};
use cortex_model::scripted::ScriptedProvider;
use cortex_model::{ModelProvider, ModelRequest, ModelStream};
use cortex_protocol::{Attachment, EventKind, Mode, StopRule};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The smallest PNG there is: a 1×1 transparent pixel.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];
/// [`PNG`] in base64.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==";

/// A repository, the store, the scripted model and an Ask session on them.
struct Parts {
    repo: tempfile::TempDir,
    store: Arc<dyn cortex_store::Store>,
    model: Arc<ScriptedProvider>,
}

async fn session(script: serde_json::Value) -> (Parts, Session) {
    let (repo, store, model) = parts(&[("a.txt", "a\n")], &script);
    let config = config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Ask,
        StopRule::Code,
    );
    let session = Session::create(config).await.expect("session");
    (Parts { repo, store, model }, session)
}

fn turn_with_image(message: &str, image: &[u8]) -> UserTurn {
    UserTurn {
        message: message.to_owned(),
        images: vec![image.to_vec()],
        includes: Vec::new(),
    }
}

/// The last user message of a request.
fn last_user(request: &ModelRequest) -> cortex_protocol::Message {
    request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == cortex_protocol::Role::User)
        .cloned()
        .expect("a user message")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_image_is_sent_stored_once_and_sent_again_after_a_resume() {
    let script = json!({"responses": [{"text": "A pixel."}, {"text": "Still a pixel."}]});
    let (h, mut session) = session(script).await;
    let outcome = session
        .run_user_turn_as(
            Session::new_turn_id(),
            turn_with_image("What is this?", PNG),
            CancellationToken::new(),
        )
        .await
        .expect("turn");
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let image = Attachment::Image {
        mime_type: "image/png".into(),
        data: PNG_BASE64.into(),
    };
    let first = h.model.requests();
    assert_eq!(last_user(&first[0]).attachments, vec![image.clone()]);

    // The timeline names it; the bytes are in the store, not the event.
    let events = h.store.events(session.id(), 0).await.expect("events");
    let named: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TurnImages { images } => Some(images.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(named.len(), 1);
    assert_eq!(named[0][0].mime_type, "image/png");
    assert_eq!(named[0][0].bytes, PNG.len() as u64);
    let stored = h.store.blob(&named[0][0].sha256).await.expect("blob");
    assert_eq!(stored.map(|b| b.data), Some(PNG_BASE64.to_owned()));
    let encoded = serde_json::to_string(&events).expect("json");
    assert!(!encoded.contains(PNG_BASE64), "no event carries the bytes");

    // A new process: the history's image is read back from the store.
    session.close().await;
    let id = session.id().clone();
    let config = config(
        h.repo.path(),
        h.store.clone(),
        h.model.clone(),
        Mode::Ask,
        StopRule::Code,
    );
    let mut resumed = Session::resume(&id, config).await.expect("resume");
    resumed
        .run_turn("And now?", CancellationToken::new())
        .await
        .expect("turn");
    let second = &h.model.requests()[1];
    let with_image = second
        .messages
        .iter()
        .find(|m| !m.attachments.is_empty())
        .expect("the first message keeps its image");
    assert!(with_image.content.contains("What is this?"));
    assert_eq!(with_image.attachments, vec![image]);
    assert!(last_user(second).attachments.is_empty());
}

/// The scripted model behind a provider that takes no images (as the
/// embedded model's does not).
struct NoImages(Arc<ScriptedProvider>);

impl ModelProvider for NoImages {
    fn describe(&self) -> String {
        "local:text-only".into()
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.0.stream(request)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_a_model_cannot_take_or_that_are_not_images_fail_before_any_request() {
    let script = json!({"responses": [{"text": "never"}]});
    let (repo, store, scripted) = parts(&[("a.txt", "a\n")], &script);
    let text_only: Arc<dyn ModelProvider> = Arc::new(NoImages(scripted.clone()));
    let config = config(
        repo.path(),
        store.clone(),
        text_only,
        Mode::Ask,
        StopRule::Code,
    );
    let mut session = Session::create(config).await.expect("session");
    assert_eq!(
        session.check_images(&[PNG.to_vec()]),
        Err(ImageError::ModelTakesNone {
            model: "local:text-only".into()
        })
    );
    assert_eq!(session.check_images(&[]), Ok(()));
    let outcome = session
        .run_user_turn_as(
            Session::new_turn_id(),
            turn_with_image("What is this?", PNG),
            CancellationToken::new(),
        )
        .await
        .expect("turn");
    match outcome {
        TurnOutcome::Failed { error } => assert!(error.contains("takes no images"), "{error}"),
        other => panic!("{other:?}"),
    }
    assert!(scripted.requests().is_empty());

    // Bytes that are not an image, for a model that takes images.
    let (h, mut session) = self::session(json!({"responses": [{"text": "never"}]})).await;
    let outcome = session
        .run_user_turn_as(
            Session::new_turn_id(),
            turn_with_image("What is this?", b"<svg onload=alert(1)>"),
            CancellationToken::new(),
        )
        .await
        .expect("turn");
    assert!(matches!(outcome, TurnOutcome::Failed { .. }), "{outcome:?}");
    assert!(h.model.requests().is_empty());
    let events = h.store.events(session.id(), 0).await.expect("events");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::TurnImages { .. }))
    );
}
