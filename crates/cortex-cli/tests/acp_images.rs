//! Images in an ACP prompt (issue 41, item 6): an image block is attached
//! to the turn (`turn.images` on the timeline, the bytes in the store), and
//! an image with no text is invalid params. The real `cortex acp` on stdio,
//! driven by the protocol crate's client side.

mod acp_support;
mod common;

use acp_support::with_agent;
use agent_client_protocol::v1::schema::{
    ContentBlock, ImageContent, NewSessionRequest, PromptRequest, StopReason,
};
use common::{Env, json_lines, run_ok};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A 1×1 PNG, base64.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==";

#[tokio::test]
async fn an_image_block_is_attached_to_the_turn() {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let repo = env.repo.path().canonicalize().expect("repo");
    let script = json!({"responses": [{"text": "A pixel."}]});
    let (ids, mut ids_rx) = mpsc::unbounded_channel();
    with_agent(&env, script, async move |cx, _updates| {
        let session = cx
            .send_request(NewSessionRequest::new(repo.clone()))
            .block_task()
            .await?
            .session_id;
        let image = ContentBlock::Image(ImageContent::new(PNG, "image/png"));
        let alone = cx
            .send_request(PromptRequest::new(session.clone(), vec![image.clone()]))
            .block_task()
            .await;
        assert!(alone.is_err(), "an image without text is invalid params");
        let answer = cx
            .send_request(PromptRequest::new(
                session.clone(),
                vec![ContentBlock::from("What is this?"), image],
            ))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        let _ = ids.send(session.0.to_string());
        Ok(())
    })
    .await;
    let id = ids_rx.try_recv().expect("the session's id");
    let mut cmd = env.command();
    cmd.args(["sessions", "show", &id, "--json"]);
    let events = json_lines(&run_ok(cmd).stdout);
    let images: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "turn.images")
        .collect();
    assert_eq!(images.len(), 1, "{events:?}");
    assert_eq!(images[0]["payload"]["images"][0]["mime_type"], "image/png");
    assert_eq!(images[0]["payload"]["images"][0]["bytes"], 67);
}
