//! Images over the API (issue 41, item 6): `attachments` on
//! `POST …/turns` reach the turn (`turn.images`), within a body larger than
//! the server's limit for text; bytes that are not base64 or not an image,
//! and images for a model that takes none, are a 422 before any turn.

mod common;

use common::{ALICE, start};
use cortex_protocol::EventKind;
use reqwest::Method;
use serde_json::json;

/// A PNG signature and a header: enough for the server to call it a PNG.
fn png(size: usize) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.resize(size, 0);
    bytes
}

fn base64(bytes: &[u8]) -> String {
    cortex_api::TurnAttachment::of_bytes(bytes).data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_takes_images_and_refuses_what_is_not_one() {
    let server = start().await;
    let id = server
        .session_in("ask", json!({"responses": [{"text": "A picture."}]}))
        .await;
    let turns = format!("/v1/sessions/{id}/turns");
    let mut events = server.events(&id, ALICE, None).await;

    let refused = [
        (json!([{"data": "not base64!"}]), "invalid_image"),
        (json!([{"data": base64(b"GIF? no")}]), "invalid_image"),
    ];
    for (attachments, code) in refused {
        let body = json!({"message": "Look.", "attachments": attachments});
        let (status, answer) = server
            .send(Method::POST, &turns, Some(ALICE), Some(body))
            .await;
        assert_eq!(status, 422, "{answer}");
        assert_eq!(answer["error"]["code"], code);
    }

    // Two MiB of image: past the server's 1 MiB limit for text, taken.
    let image = png(2 * 1024 * 1024);
    let body = json!({"message": "Look.", "attachments": [{"mime_type": "image/png", "data": base64(&image)}]});
    let (status, answer) = server
        .send(Method::POST, &turns, Some(ALICE), Some(body))
        .await;
    assert_eq!(status, 202, "{answer}");
    let kinds: Vec<EventKind> = events
        .until_turn_end()
        .await
        .into_iter()
        .map(|m| m.event.kind)
        .collect();
    let images = kinds
        .iter()
        .find_map(|k| match k {
            EventKind::TurnImages { images } => Some(images.clone()),
            _ => None,
        })
        .expect("turn.images");
    assert_eq!(images[0].mime_type, "image/png");
    assert_eq!(images[0].bytes, image.len() as u64);
    assert!(
        matches!(kinds.last(), Some(EventKind::TurnCompleted { .. })),
        "{kinds:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_takes_no_images_is_refused_before_the_turn() {
    let server = start().await;
    let id = server
        .session_in(
            "ask",
            json!({"images": false, "responses": [{"text": "never"}]}),
        )
        .await;
    let body = json!({"message": "Look.", "attachments": [{"data": base64(&png(64))}]});
    let (status, answer) = server
        .send(
            Method::POST,
            &format!("/v1/sessions/{id}/turns"),
            Some(ALICE),
            Some(body),
        )
        .await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["error"]["code"], "model_takes_no_images");
    // No turn started: the session takes a text turn at once.
    let (status, answer) = server.turn(&id, "Just text.").await;
    assert_eq!(status, 202, "{answer}");
}
